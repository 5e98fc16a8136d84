"""CORS through a real browser: headless Chromium loads a page from another
origin (a small http.server on another loopback port) whose script uploads,
lists and downloads a blob with fetch and a container SAS, the way a web
application does; the CORS rules of Set Blob Service Properties decide what
the browser lets it do.

Needs the Debian packages chromium and chromium-driver (scripts/test installs
them when /usr/bin/chromedriver is missing); selenium talks to that driver,
so nothing is downloaded.
"""

import functools
import http.server
import threading
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import ContainerSasPermissions, CorsRule, generate_container_sas
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from helpers import ACCOUNT_KEY, ACCOUNT_NAME

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cors</title></head>
<body><p>Stowage CORS test page</p></body></html>
"""

# Run in the page (the other origin): PUT the blob, list the container, GET
# the blob; report each status and what the script could read, or the error
# fetch raised when the browser refused.
SCRIPT = """
const [blobUrl, listUrl, done] = arguments;
(async () => {
  const out = {};
  try {
    const put = await fetch(blobUrl, {
      method: "PUT",
      headers: {"x-ms-blob-type": "BlockBlob", "x-ms-meta-color": "blue",
                "content-type": "text/plain"},
      body: "hello from the browser",
    });
    out.put = put.status;
  } catch (e) { out.put_error = String(e); }
  try {
    const list = await fetch(listUrl);
    out.list = list.status;
    out.list_body = await list.text();
  } catch (e) { out.list_error = String(e); }
  try {
    const get = await fetch(blobUrl);
    out.get = get.status;
    out.body = await get.text();
    out.color = get.headers.get("x-ms-meta-color");
  } catch (e) { out.get_error = String(e); }
  done(out);
})();
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page_origin(tmp_path_factory):
    """The origin of the test page, served on its own loopback port."""
    root = tmp_path_factory.mktemp("page")
    (root / "index.html").write_text(PAGE)
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def cors_rules(service):
    """Sets the account's CORS rules for one test, and clears them after it
    (the server is shared by the whole session)."""

    def set_rules(*rules):
        service.set_service_properties(cors=list(rules))

    yield set_rules
    service.set_service_properties(cors=[])


def _run_page(browser, page_origin, blob_endpoint, container, blob):
    sas = generate_container_sas(
        ACCOUNT_NAME,
        container.container_name,
        account_key=ACCOUNT_KEY,
        permission=ContainerSasPermissions(read=True, write=True, create=True, list=True),
        expiry=datetime.now(timezone.utc) + timedelta(hours=1),
    )
    base = f"{blob_endpoint}/{container.container_name}"
    browser.get(f"{page_origin}/index.html")
    return browser.execute_async_script(
        SCRIPT, f"{base}/{blob}?{sas}", f"{base}?restype=container&comp=list&{sas}"
    )


def test_a_page_from_an_allowed_origin_uploads_lists_and_downloads(
    browser, page_origin, blob_endpoint, container, cors_rules
):
    """A rule for the page's origin allowing PUT and GET with the x-ms-*
    headers: the preflighted PUT goes through, the listing and the download
    are readable, and the metadata header is exposed to the script."""
    cors_rules(
        CorsRule(
            ["http://elsewhere.test", page_origin],
            ["PUT", "GET"],
            allowed_headers=["x-ms-*", "content-type"],
            exposed_headers=["x-ms-meta-*"],
            max_age_in_seconds=0,
        )
    )
    out = _run_page(browser, page_origin, blob_endpoint, container, "from-browser.txt")
    assert out.get("put") == 201, out
    assert out.get("list") == 200, out
    assert "<Name>from-browser.txt</Name>" in out["list_body"], out
    assert out.get("get") == 200, out
    assert out["body"] == "hello from the browser"
    assert out["color"] == "blue", out
    props = container.get_blob_client("from-browser.txt").get_blob_properties()
    assert props.metadata == {"color": "blue"}


def test_a_page_from_another_origin_is_refused_by_the_browser(
    browser, page_origin, blob_endpoint, container, cors_rules
):
    """Rules for another origin only: the PUT's preflight is refused (403
    CorsPreflightFailure), so the browser never sends the PUT, and it hides
    the answers of the simple GETs, which carry no Access-Control-Allow-Origin."""
    cors_rules(CorsRule(["http://elsewhere.test"], ["PUT", "GET"], allowed_headers=["*"]))
    out = _run_page(browser, page_origin, blob_endpoint, container, "refused.txt")
    for step in ("put", "list", "get"):
        assert step not in out, out
        assert "Failed to fetch" in out.get(f"{step}_error", ""), out
    with pytest.raises(ResourceNotFoundError):
        container.get_blob_client("refused.txt").get_blob_properties()


def test_a_rule_without_put_lets_the_page_read_but_not_write(
    browser, page_origin, blob_endpoint, container, cors_rules
):
    """A rule for every origin that allows GET only, exposing nothing: the
    preflight of the PUT fails, while the blob uploaded beforehand can be
    listed and downloaded; its metadata header stays hidden from the script."""
    container.upload_blob("read-only.txt", b"uploaded by the SDK", metadata={"color": "red"})
    cors_rules(CorsRule(["*"], ["GET"]))
    out = _run_page(browser, page_origin, blob_endpoint, container, "read-only.txt")
    assert "Failed to fetch" in out.get("put_error", ""), out
    assert out.get("list") == 200, out
    assert out.get("get") == 200, out
    assert out["body"] == "uploaded by the SDK"
    assert out["color"] is None, out
