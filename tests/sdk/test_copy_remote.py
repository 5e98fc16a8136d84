"""Copies from other hosts through the SDK: start_copy_from_url (pending,
progress, success, failure, abort), Copy Blob From URL, and the From-URL
writes, with sources on a second Stowage server (read through a SAS) and on
a plain HTTP server on loopback; and a copy interrupted by kill -9 of the
destination server."""

import hashlib
import http.server
import os
import shutil
import signal
import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import formatdate
from pathlib import Path

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.blob import (
    BlobBlock,
    BlobSasPermissions,
    BlobServiceClient,
    ContentSettings,
    generate_blob_sas,
)

import conftest
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, unique_name

# The plain HTTP source: a generated file, and routes that fail.
DATA = hashlib.sha256(b"stowage").digest() * (3 * 1024 * 1024 // 32)
DATA_ETAG = '"data-v1"'
DATA_MODIFIED = formatdate(1_700_000_000, usegmt=True)
# The stalling route sends this much, then waits until released.
STALL_SENT = 64 * 1024
STALL_TOTAL = 1024 * 1024
# How long a test waits for a background copy to reach a state.
WAIT_SECONDS = 30
# The sparse page blob the plain HTTP source serves: 1 MiB, two ranges.
PAGES_SIZE = 1024 * 1024
PAGES_RANGES = [(4096, 8191), (512 * 1024, 512 * 1024 + 64 * 1024 - 1)]
PAGES = bytearray(PAGES_SIZE)
for _start, _end in PAGES_RANGES:
    PAGES[_start : _end + 1] = DATA[: _end + 1 - _start]
PAGES = bytes(PAGES)
# The snapshots of a page blob the plain HTTP source serves as /vhd.bin:
# the second adds a page at 8192 and clears the range at 4096.
VHD_SNAPSHOTS = ["2024-01-01T00:00:00.0000000Z", "2024-01-02T00:00:00.0000000Z"]
VHD_SECOND = bytearray(PAGES)
VHD_SECOND[4096:8192] = bytes(4096)
VHD_SECOND[8192:8704] = b"\x09" * 512
VHD = {
    VHD_SNAPSHOTS[0]: (PAGES, PAGES_RANGES),
    VHD_SNAPSHOTS[1]: (bytes(VHD_SECOND), [(8192, 8703), PAGES_RANGES[1]]),
}
VHD_DIFF = ([(8192, 8703)], [(4096, 8191)])


class _Source(http.server.BaseHTTPRequestHandler):
    release = threading.Event()
    # The Range headers of the reads of /pages.bin, in order.
    page_reads = []
    # The ranged reads of /vhd.bin.
    vhd_reads = []

    def log_message(self, *args):
        pass

    def _pages(self):
        if "comp=pagelist" in self.path:
            body = "".join(
                f"<PageRange><Start>{s}</Start><End>{e}</End></PageRange>" for s, e in PAGES_RANGES
            )
            body = f'<?xml version="1.0" encoding="utf-8"?><PageList>{body}</PageList>'.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        wanted = self.headers.get("Range")
        _Source.page_reads.append(wanted)
        start, end = 0, PAGES_SIZE - 1
        if wanted:
            start, end = (int(x) for x in wanted.removeprefix("bytes=").split("-"))
        self.send_response(206 if wanted else 200)
        self.send_header("Content-Length", str(end + 1 - start))
        self.send_header("x-ms-blob-type", "PageBlob")
        self.send_header("ETag", DATA_ETAG)
        self.end_headers()
        try:
            self.wfile.write(PAGES[start : end + 1])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the whole-blob answer is dropped unread

    def _vhd(self):
        from urllib.parse import parse_qs, urlparse

        query = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
        data, ranges = VHD[query["snapshot"]]
        if query.get("comp") == "pagelist":
            pages, clears = (ranges, []) if "prevsnapshot" not in query else VHD_DIFF
            body = "".join(
                f"<PageRange><Start>{s}</Start><End>{e}</End></PageRange>" for s, e in pages
            ) + "".join(
                f"<ClearRange><Start>{s}</Start><End>{e}</End></ClearRange>" for s, e in clears
            )
            body = f"<?xml version='1.0' encoding='utf-8'?><PageList>{body}</PageList>".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        wanted = self.headers.get("Range")
        if wanted:
            _Source.vhd_reads.append(wanted)
        start, end = 0, len(data) - 1
        if wanted:
            start, end = (int(x) for x in wanted.removeprefix("bytes=").split("-"))
        self.send_response(206 if wanted else 200)
        self.send_header("Content-Length", str(end + 1 - start))
        self.send_header("x-ms-blob-type", "PageBlob")
        self.send_header("x-ms-blob-sequence-number", "4")
        self.send_header("ETag", f'"{query["snapshot"]}"')
        self.end_headers()
        try:
            self.wfile.write(data[start : end + 1])
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        if self.path.startswith("/vhd.bin"):
            self._vhd()
        elif self.path.startswith("/pages.bin"):
            self._pages()
        elif self.path.startswith("/data.bin"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(DATA)))
            self.send_header("Content-Type", "application/x-test")
            self.send_header("ETag", DATA_ETAG)
            self.send_header("Last-Modified", DATA_MODIFIED)
            self.end_headers()
            self.wfile.write(DATA)
        elif self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/data.bin")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path.startswith("/stall"):
            self.send_response(200)
            self.send_header("Content-Length", str(STALL_TOTAL))
            self.end_headers()
            self.wfile.write(DATA[:STALL_SENT])
            self.wfile.flush()
            self.release.wait(120)
        elif self.path.startswith("/short"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(DATA)))
            self.end_headers()
            self.wfile.write(DATA[: len(DATA) // 2])
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()


@pytest.fixture(scope="module")
def http_source():
    """Base URL of a plain HTTP server on loopback (see `_Source`)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Source)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        _Source.release.set()
        server.shutdown()
        server.server_close()


def _start_server(tmp_path_factory, name, data_dir=None):
    binary = Path(os.environ.get("STOWAGE_BIN", conftest.DEFAULT_BIN))
    data_dir = data_dir or tmp_path_factory.mktemp(f"stowage-{name}-data")
    log = tmp_path_factory.getbasetemp() / f"stowage-{name}-{time.monotonic_ns()}.log"
    server = conftest._Server(binary, data_dir, log)
    server.wait_ready()
    return server, data_dir


def _service(server):
    return BlobServiceClient(
        f"http://127.0.0.1:{server.port}/{ACCOUNT_NAME}",
        credential={"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY},
        **CLIENT_OPTIONS,
    )


@pytest.fixture(scope="module")
def other_server(tmp_path_factory):
    """A second Stowage server: the source of the copies."""
    server, data_dir = _start_server(tmp_path_factory, "source")
    try:
        yield _service(server)
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def source_container(other_server, request):
    client = other_server.get_container_client(unique_name("src"))
    client.create_container()
    yield client
    client.delete_container()


def sas_url(blob, permission=None):
    token = generate_blob_sas(
        blob.account_name,
        blob.container_name,
        blob.blob_name,
        account_key=ACCOUNT_KEY,
        permission=permission or BlobSasPermissions(read=True),
        expiry=datetime.now(timezone.utc) + timedelta(hours=1),
    )
    return f"{blob.url}?{token}"


def wait_for(blob, done):
    """The blob's properties once `done(props)` holds (a background copy
    moves on its own; this only waits for it)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        props = blob.get_blob_properties()
        if done(props):
            return props
        assert time.monotonic() < deadline, f"copy still {props.copy.status} {props.copy.progress}"
        time.sleep(0.02)


def wait_for_end(blob):
    return wait_for(blob, lambda p: p.copy.status != "pending")


def test_copy_from_another_stowage_server_is_pending_then_success(container, source_container):
    data = os.urandom(2 * 1024 * 1024 + 7)
    src = source_container.get_blob_client("src")
    src.upload_blob(
        data,
        metadata={"origin": "other"},
        content_settings=ContentSettings(content_type="text/csv", cache_control="no-cache"),
    )
    url = sas_url(src)
    dst = container.get_blob_client("dst")
    started = dst.start_copy_from_url(url)
    assert started["copy_status"] == "pending"
    props = wait_for_end(dst)
    assert props.copy.status == "success"
    assert props.copy.id == started["copy_id"]
    assert props.copy.source == url
    assert props.copy.progress == f"{len(data)}/{len(data)}"
    assert props.copy.completion_time is not None
    assert props.size == len(data)
    assert props.metadata == {"origin": "other"}
    assert props.content_settings.content_type == "text/csv"
    assert props.content_settings.cache_control == "no-cache"
    assert bytes(props.content_settings.content_md5) == hashlib.md5(data).digest()
    assert dst.download_blob().readall() == data


def test_the_destination_carries_the_sources_content_md5(container, source_container):
    # The service copies Content-MD5 with the same value; it does not
    # compute one. A source whose stored MD5 is not its bytes' shows it.
    data = os.urandom(1024 * 1024)
    src = source_container.get_blob_client("src")
    src.upload_blob(data)
    stated = hashlib.md5(b"not the bytes").digest()
    src.set_http_headers(ContentSettings(content_type="application/x-test", content_md5=stated))
    dst = container.get_blob_client("dst")
    dst.start_copy_from_url(sas_url(src))
    props = wait_for_end(dst)
    assert props.copy.status == "success"
    assert bytes(props.content_settings.content_md5) == stated
    assert dst.download_blob().readall() == data


def test_a_page_or_append_blob_source_keeps_its_type(container, source_container):
    pages = source_container.get_blob_client("pages")
    pages.create_page_blob(size=4096, sequence_number=9)
    pages.upload_page(b"\x05" * 512, offset=1024, length=512)
    dst = container.get_blob_client("pages-copy")
    dst.start_copy_from_url(sas_url(pages))
    props = wait_for_end(dst)
    assert props.copy.status == "success"
    assert (props.blob_type, props.size, props.page_blob_sequence_number) == ("PageBlob", 4096, 9)
    want = bytearray(4096)
    want[1024:1536] = b"\x05" * 512
    assert dst.download_blob().readall() == bytes(want)
    # The copy has the source's page ranges, not one range over the blob.
    assert dst.get_page_ranges() == ([{"start": 1024, "end": 1535}], [])
    dst.upload_page(b"\x01" * 512, offset=0, length=512)

    log = source_container.get_blob_client("log")
    log.create_append_blob()
    for block in (b"one,", b"two"):
        log.append_block(block)
    dst = container.get_blob_client("log-copy")
    dst.start_copy_from_url(sas_url(log))
    props = wait_for_end(dst)
    assert props.copy.status == "success"
    assert (props.blob_type, props.append_blob_committed_block_count) == ("AppendBlob", 2)
    dst.append_block(b",three")
    assert dst.download_blob().readall() == b"one,two,three"

    # A destination of another type: 409 InvalidBlobType.
    block = container.get_blob_client("block")
    block.upload_blob(b"x")
    with pytest.raises(HttpResponseError) as e:
        block.start_copy_from_url(sas_url(pages))
    assert (e.value.status_code, e.value.error_code) == (409, "InvalidBlobType")


def test_a_sealed_append_blob_from_another_server_stays_sealed(container, source_container):
    """As within the account: the copy of a sealed append blob is sealed
    once it completes, seal_destination_blob=False opens it, and an open
    source gives an open copy."""
    source = source_container.get_blob_client("sealed-log")
    source.create_append_blob()
    source.append_block(b"abc")
    source.seal_append_blob()

    kept = container.get_blob_client("sealed-log-copy")
    kept.start_copy_from_url(sas_url(source))
    props = wait_for_end(kept)
    assert (props.copy.status, props.is_append_blob_sealed) == ("success", True)
    with pytest.raises(HttpResponseError) as e:
        kept.append_block(b"more")
    assert (e.value.status_code, e.value.error_code) == (409, "BlobIsSealed")

    opened = container.get_blob_client("opened-log-copy")
    opened.start_copy_from_url(sas_url(source), seal_destination_blob=False)
    props = wait_for_end(opened)
    assert (props.copy.status, props.is_append_blob_sealed) == ("success", None)
    opened.append_block(b"more")
    assert opened.download_blob().readall() == b"abcmore"

    open_source = source_container.get_blob_client("open-log")
    open_source.create_append_blob()
    open_source.append_block(b"xyz")
    sealed = container.get_blob_client("sealed-on-copy")
    sealed.start_copy_from_url(sas_url(open_source), seal_destination_blob=True)
    props = wait_for_end(sealed)
    assert (props.copy.status, props.is_append_blob_sealed) == ("success", True)


def test_a_sparse_page_blob_copies_its_ranges_only(container, source_container):
    pages = source_container.get_blob_client("sparse")
    pages.create_page_blob(size=8 * 1024 * 1024)
    written = {}
    for offset, length in [(0, 512), (1024 * 1024, 256 * 1024), (7 * 1024 * 1024, 4096)]:
        data = os.urandom(length)
        pages.upload_page(data, offset=offset, length=length)
        written[offset] = data
    pages.clear_page(offset=1024 * 1024 + 4096, length=4096)
    source_ranges = pages.get_page_ranges()
    dst = container.get_blob_client("sparse-copy")
    dst.start_copy_from_url(sas_url(pages))
    props = wait_for_end(dst)
    assert props.copy.status == "success", props.copy.status_description
    assert props.size == 8 * 1024 * 1024
    assert dst.get_page_ranges() == source_ranges
    assert dst.download_blob().readall() == pages.download_blob().readall()
    # A snapshot of the source is copied by its ranges too.
    snapshot = pages.create_snapshot()["snapshot"]
    pages.upload_page(b"\x07" * 512, offset=512, length=512)
    snap = source_container.get_blob_client("sparse", snapshot=snapshot)
    dst.start_copy_from_url(sas_url(pages).replace("?", f"?snapshot={snapshot}&", 1))
    props = wait_for_end(dst)
    assert props.copy.status == "success", props.copy.status_description
    assert dst.get_page_ranges() == source_ranges
    assert dst.download_blob().readall() == snap.download_blob().readall()


def test_a_page_blob_source_is_read_by_its_ranges(container, http_source):
    _Source.page_reads.clear()
    dst = container.get_blob_client("from-http")
    dst.start_copy_from_url(f"{http_source}/pages.bin")
    props = wait_for_end(dst)
    assert props.copy.status == "success", props.copy.status_description
    assert (props.blob_type, props.size) == ("PageBlob", PAGES_SIZE)
    ranges, _ = dst.get_page_ranges()
    assert [(r["start"], r["end"]) for r in ranges] == PAGES_RANGES
    assert dst.download_blob().readall() == PAGES
    # The first read learns the type; the bytes come from ranged reads.
    assert _Source.page_reads == [None] + [f"bytes={s}-{e}" for s, e in PAGES_RANGES]


def _ranges(blob):
    pages, _ = blob.get_page_ranges()
    return [(r["start"], r["end"]) for r in pages]


def test_an_incremental_copy_from_another_server(container, source_container):
    src = source_container.get_blob_client("disk")
    src.create_page_blob(size=4 * 1024 * 1024, sequence_number=6)
    src.upload_page(os.urandom(512), offset=0, length=512)
    src.upload_page(os.urandom(64 * 1024), offset=1024 * 1024, length=64 * 1024)
    first = src.create_snapshot()["snapshot"]
    token = sas_url(src).split("?", 1)[1]

    def url(snapshot):
        return f"{src.url}?snapshot={snapshot}&{token}"

    dst = container.get_blob_client("disk-backup")
    copied = dst.start_copy_from_url(url(first), incremental_copy=True)
    assert copied["copy_status"] == "success"
    props = dst.get_blob_properties()
    assert (props.blob_type, props.size, props.page_blob_sequence_number) == (
        "PageBlob", 4 * 1024 * 1024, 6,
    )
    assert props.copy.incremental_copy
    backup = container.get_blob_client("disk-backup", snapshot=props.copy.destination_snapshot)
    source = source_container.get_blob_client("disk", snapshot=first)
    assert _ranges(backup) == _ranges(source)
    assert backup.download_blob().readall() == source.download_blob().readall()

    # Changes: a new page, a cleared range; the next copy brings them.
    src.upload_page(b"\x03" * 4096, offset=2 * 1024 * 1024, length=4096)
    src.clear_page(offset=1024 * 1024, length=8192)
    second = src.create_snapshot()["snapshot"]
    dst.start_copy_from_url(url(second), incremental_copy=True)
    props = dst.get_blob_properties()
    backup = container.get_blob_client("disk-backup", snapshot=props.copy.destination_snapshot)
    source = source_container.get_blob_client("disk", snapshot=second)
    assert _ranges(backup) == _ranges(source)
    assert backup.download_blob().readall() == source.download_blob().readall()

    with pytest.raises(HttpResponseError) as e:
        dst.start_copy_from_url(url(first), incremental_copy=True)
    assert (e.value.status_code, e.value.error_code) == (
        409, "IncrementalCopyOfEarlierVersionSnapshotNotAllowed",
    )
    with pytest.raises(HttpResponseError) as e:
        dst.start_copy_from_url(sas_url(src), incremental_copy=True)
    assert (e.value.status_code, e.value.error_code) == (409, "IncrementalCopySourceMustBeSnapshot")
    block = source_container.get_blob_client("block")
    block.upload_blob(b"x")
    block_snapshot = block.create_snapshot()["snapshot"]
    block_url = sas_url(block).replace("?", f"?snapshot={block_snapshot}&", 1)
    with pytest.raises(HttpResponseError) as e:
        container.get_blob_client("other").start_copy_from_url(block_url, incremental_copy=True)
    assert (e.value.status_code, e.value.error_code) == (409, "InvalidSourceBlobType")


def test_a_later_incremental_copy_fetches_only_the_changes(container, http_source):
    _Source.vhd_reads.clear()
    dst = container.get_blob_client("vhd-backup")
    for snapshot in VHD_SNAPSHOTS:
        url = f"{http_source}/vhd.bin?snapshot={snapshot}"
        assert dst.start_copy_from_url(url, incremental_copy=True)["copy_status"] == "success"
        props = dst.get_blob_properties()
        backup = container.get_blob_client("vhd-backup", snapshot=props.copy.destination_snapshot)
        data, ranges = VHD[snapshot]
        assert _ranges(backup) == sorted(ranges)
        assert backup.download_blob().readall() == data
    first_reads = [f"bytes={s}-{e}" for s, e in PAGES_RANGES]
    assert _Source.vhd_reads == first_reads + ["bytes=8192-8703"]


def test_copy_with_metadata_keeps_the_requests(container, source_container):
    src = source_container.get_blob_client("src")
    src.upload_blob(b"abc", metadata={"origin": "other"})
    dst = container.get_blob_client("dst")
    dst.start_copy_from_url(sas_url(src), metadata={"mine": "yes"})
    props = wait_for_end(dst)
    assert (props.copy.status, props.metadata) == ("success", {"mine": "yes"})


def test_copy_from_a_plain_http_server(container, http_source):
    dst = container.get_blob_client("dst")
    started = dst.start_copy_from_url(f"{http_source}/data.bin")
    assert started["copy_status"] == "pending"
    props = wait_for_end(dst)
    assert props.copy.status == "success"
    assert props.copy.progress == f"{len(DATA)}/{len(DATA)}"
    assert props.content_settings.content_type == "application/x-test"
    assert dst.download_blob().readall() == DATA


def test_a_missing_source_is_404_cannot_verify_copy_source(container, http_source):
    dst = container.get_blob_client("dst")
    with pytest.raises(ResourceNotFoundError) as info:
        dst.start_copy_from_url(f"{http_source}/missing")
    assert info.value.status_code == 404
    assert info.value.error_code == "CannotVerifyCopySource"
    assert "<CopySourceStatusCode>404</CopySourceStatusCode>" in info.value.response.text()
    assert not dst.exists()


def test_a_missing_blob_on_another_server_carries_its_code(container, source_container):
    dst = container.get_blob_client("dst")
    missing = source_container.get_blob_client("no-such-blob")
    with pytest.raises(ResourceNotFoundError) as info:
        dst.start_copy_from_url(sas_url(missing))
    assert info.value.error_code == "CannotVerifyCopySource"
    body = info.value.response.text()
    assert "<CopySourceStatusCode>404</CopySourceStatusCode>" in body
    assert "<CopySourceErrorCode>BlobNotFound</CopySourceErrorCode>" in body
    # Without a SAS, the other server refuses the anonymous read of a
    # private container as the service does (404 ResourceNotFound), and
    # that is the answer passed on.
    src = source_container.get_blob_client("src")
    src.upload_blob(b"x")
    with pytest.raises(HttpResponseError) as info:
        dst.start_copy_from_url(src.url)
    assert (info.value.status_code, info.value.error_code) == (404, "CannotVerifyCopySource")
    assert "<CopySourceErrorCode>ResourceNotFound</CopySourceErrorCode>" in (
        info.value.response.text()
    )


def test_a_redirected_source_is_refused(container, http_source):
    dst = container.get_blob_client("dst")
    with pytest.raises(HttpResponseError) as info:
        dst.start_copy_from_url(f"{http_source}/redirect")
    assert (info.value.status_code, info.value.error_code) == (400, "CannotVerifyCopySource")
    assert "redirected response (HTTP status code 302)" in info.value.response.text()
    assert not dst.exists()


def test_a_source_that_breaks_off_ends_failed(container, http_source):
    dst = container.get_blob_client("dst")
    dst.start_copy_from_url(f"{http_source}/short")
    props = wait_for_end(dst)
    assert props.copy.status == "failed"
    assert props.copy.status_description.startswith("500 InternalError ")
    assert f"after {len(DATA) // 2} of {len(DATA)} bytes" in props.copy.status_description
    assert props.size == 0


def test_progress_moves_and_abort_stops_the_copy(container, http_source):
    dst = container.get_blob_client("dst")
    started = dst.start_copy_from_url(f"{http_source}/stall", metadata={"kept": "1"})
    copy_id = started["copy_id"]
    props = wait_for(dst, lambda p: p.copy.progress == f"{STALL_SENT}/{STALL_TOTAL}")
    assert props.copy.status == "pending"
    assert props.size == 0
    # Listing shows the same copy state.
    listed = next(iter(container.list_blobs(include=["copy"])))
    assert (listed.copy.status, listed.copy.id) == ("pending", copy_id)
    with pytest.raises(HttpResponseError) as info:
        dst.abort_copy("00000000-0000-0000-0000-000000000000")
    assert (info.value.status_code, info.value.error_code) == (409, "CopyIdMismatch")
    dst.abort_copy(copy_id)
    props = dst.get_blob_properties()
    assert props.copy.status == "aborted"
    assert props.size == 0
    assert props.metadata == {"kept": "1"}
    assert dst.download_blob().readall() == b""
    with pytest.raises(HttpResponseError) as info:
        dst.abort_copy(copy_id)
    assert (info.value.status_code, info.value.error_code) == (409, "NoPendingCopyOperation")


def test_abort_of_a_finished_copy_is_409(container, http_source):
    dst = container.get_blob_client("dst")
    started = dst.start_copy_from_url(f"{http_source}/data.bin")
    wait_for_end(dst)
    with pytest.raises(HttpResponseError) as info:
        dst.abort_copy(started["copy_id"])
    assert (info.value.status_code, info.value.error_code) == (409, "NoPendingCopyOperation")


def test_copy_blob_from_url_from_another_server_completes_at_once(container, source_container):
    data = os.urandom(300_000)
    src = source_container.get_blob_client("src")
    src.upload_blob(data)
    dst = container.get_blob_client("dst")
    out = dst.start_copy_from_url(sas_url(src), requires_sync=True)
    assert out["copy_status"] == "success"
    props = dst.get_blob_properties()
    assert (props.copy.status, props.copy.progress) == ("success", f"{len(data)}/{len(data)}")
    assert dst.download_blob().readall() == data


def test_source_conditions_are_checked_against_the_sources_answer(container, http_source):
    dst = container.get_blob_client("dst")
    with pytest.raises(HttpResponseError) as info:
        dst.start_copy_from_url(
            f"{http_source}/data.bin",
            source_etag='"other"',
            source_match_condition=MatchConditions.IfNotModified,
        )
    assert (info.value.status_code, info.value.error_code) == (412, "SourceConditionNotMet")
    assert not dst.exists()
    dst.start_copy_from_url(
        f"{http_source}/data.bin",
        requires_sync=True,
        source_etag=DATA_ETAG,
        source_match_condition=MatchConditions.IfNotModified,
    )
    assert dst.download_blob().readall() == DATA


def test_upload_blob_from_url_from_another_server(container, source_container):
    data = os.urandom(500_000)
    src = source_container.get_blob_client("src")
    src.upload_blob(data, content_settings=ContentSettings(content_type="image/png"))
    dst = container.get_blob_client("dst")
    dst.upload_blob_from_url(sas_url(src))
    props = dst.get_blob_properties()
    assert props.content_settings.content_type == "image/png"
    assert dst.download_blob().readall() == data
    with pytest.raises(HttpResponseError) as info:
        dst.upload_blob_from_url(sas_url(source_container.get_blob_client("nope")), overwrite=True)
    assert (info.value.status_code, info.value.error_code) == (404, "CannotVerifyCopySource")


def test_stage_block_from_url_from_another_server_with_ranges(container, source_container):
    data = bytes(range(256)) * 1024
    src = source_container.get_blob_client("src")
    src.upload_blob(data)
    url = sas_url(src)
    dst = container.get_blob_client("dst")
    dst.stage_block_from_url("b1", url, source_offset=0, source_length=100_000)
    dst.stage_block_from_url("b2", url, source_offset=100_000, source_length=len(data) - 100_000)
    dst.commit_block_list([BlobBlock("b2"), BlobBlock("b1")])
    assert dst.download_blob().readall() == data[100_000:] + data[:100_000]


def test_append_block_from_url_from_another_server(container, source_container):
    data = os.urandom(70_000)
    src = source_container.get_blob_client("src")
    src.upload_blob(data)
    url = sas_url(src)
    dst = container.get_blob_client("dst")
    dst.create_append_blob()
    dst.append_block_from_url(url)
    dst.append_block_from_url(url, source_offset=10, source_length=5)
    assert dst.download_blob().readall() == data + data[10:15]


def test_large_from_url_writes_are_hashed_as_they_are_written(container, source_container):
    """Sources past 256 KiB go through the copy writer, which computes the
    MD5 and CRC64 while it writes: the answers carry them, and a wrong
    x-ms-source-content-md5 is refused with nothing kept."""
    data = os.urandom(3 * 1024 * 1024 + 100)
    src = source_container.get_blob_client("big")
    src.upload_blob(data)
    url = sas_url(src)
    md5 = hashlib.md5(data).digest()

    dst = container.get_blob_client("put")
    result = dst.upload_blob_from_url(url, source_content_md5=md5)
    assert bytes(result["content_md5"]) == md5
    assert dst.download_blob().readall() == data
    with pytest.raises(HttpResponseError) as info:
        container.get_blob_client("wrong").upload_blob_from_url(
            url, source_content_md5=hashlib.md5(b"other").digest()
        )
    assert (info.value.status_code, info.value.error_code) == (400, "Md5Mismatch")
    with pytest.raises(ResourceNotFoundError):
        container.get_blob_client("wrong").get_blob_properties()

    block = container.get_blob_client("block")
    part = data[1000 : 1000 + 2 * 1024 * 1024]
    staged = block.stage_block_from_url(
        "b1", url, source_offset=1000, source_length=len(part),
        source_content_md5=hashlib.md5(part).digest(),
    )
    assert bytes(staged["content_md5"]) == hashlib.md5(part).digest()
    block.commit_block_list([BlobBlock("b1")])
    assert block.download_blob().readall() == part

    log = container.get_blob_client("log")
    log.create_append_blob()
    chunk = data[: 1024 * 1024]
    appended = log.append_block_from_url(
        url, source_offset=0, source_length=len(chunk),
        source_content_md5=hashlib.md5(chunk).digest(),
    )
    assert bytes(appended["content_md5"]) == hashlib.md5(chunk).digest()
    assert log.download_blob().readall() == chunk

    copied = container.get_blob_client("copied")
    copy = copied.start_copy_from_url(url, requires_sync=True)
    assert copy["copy_status"] == "success"
    assert bytes(copied.get_blob_properties().content_settings.content_md5) == md5
    assert copied.download_blob().readall() == data


@conftest.skip_in_cluster(
    "a starting node of a cluster leaves pending copies alone (another node may be running "
    "them), so a copy whose node was killed stays pending there; the restart itself works "
    "on a cluster (test_soft_delete, test_versions, test_container_restore)"
)
def test_a_copy_interrupted_by_kill_ends_failed_after_restart(tmp_path_factory, http_source):
    server, data_dir = _start_server(tmp_path_factory, "killed")
    try:
        container = _service(server).get_container_client(unique_name("killed"))
        container.create_container()
        dst = container.get_blob_client("dst")
        dst.start_copy_from_url(f"{http_source}/stall")
        wait_for(dst, lambda p: p.copy.progress == f"{STALL_SENT}/{STALL_TOTAL}")
        server._signal_group(signal.SIGKILL)
        server.process.wait()
        server, _ = _start_server(tmp_path_factory, "restarted", data_dir)
        dst = _service(server).get_container_client(container.container_name).get_blob_client("dst")
        props = dst.get_blob_properties()
        assert props.copy.status == "failed"
        assert "server restarted" in props.copy.status_description
        assert props.size == 0
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
