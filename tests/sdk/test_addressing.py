"""Product-style URLs, the secondary endpoint, Get Blob Service Stats, and
copy sources that carry a SAS, through the Python SDK."""

from datetime import datetime, timedelta, timezone
from urllib.parse import urlparse

import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.storage.blob import (
    BlobSasPermissions,
    BlobServiceClient,
    PublicAccess,
    generate_blob_sas,
)

from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, raises, unique_name

CREDENTIAL = {"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY}


@pytest.fixture
def netloc(blob_endpoint):
    """host:port of the server under test."""
    return urlparse(blob_endpoint).netloc


def read_sas(blob, permission):
    return generate_blob_sas(
        ACCOUNT_NAME,
        blob.container_name,
        blob.blob_name,
        account_key=ACCOUNT_KEY,
        permission=permission,
        expiry=datetime.now(timezone.utc) + timedelta(hours=1),
    )


def test_product_style_account_url(netloc):
    """An account URL with the account in the host name
    (http://devstoreaccount1.blob.localhost:PORT): the SDK sends paths without
    the account and signs /devstoreaccount1/<path>. *.localhost does not
    resolve on every machine, so the request goes to the server as to an
    HTTP proxy, which keeps the product-style Host."""
    port = urlparse(f"http://{netloc}").port
    service = BlobServiceClient(
        f"http://{ACCOUNT_NAME}.blob.localhost:{port}",
        credential=CREDENTIAL,
        proxies={"http": f"http://{netloc}"},
        **CLIENT_OPTIONS,
    )
    container = service.create_container(unique_name("product-style"))
    try:
        container.upload_blob("dir/b.txt", b"product style")
        assert container.download_blob("dir/b.txt").readall() == b"product style"
        assert [b.name for b in container.list_blobs()] == ["dir/b.txt"]
        assert container.container_name in [c.name for c in service.list_containers()]
    finally:
        container.delete_container()


def secondary_service(netloc):
    """A client of the path-style secondary endpoint: its hosts map the
    secondary location to the server itself, as emulator users set it up."""
    return BlobServiceClient(
        f"http://{netloc}/{ACCOUNT_NAME}-secondary",
        credential=CREDENTIAL,
        secondary_hostname=netloc,
        **CLIENT_OPTIONS,
    )


def test_get_service_stats_on_the_secondary(netloc):
    """get_service_stats() reads the secondary location: replication live,
    last synchronized now."""
    stats = secondary_service(netloc).get_service_stats()
    geo = stats["geo_replication"]
    assert geo["status"] == "live"
    assert abs(geo["last_sync_time"] - datetime.now(timezone.utc)) < timedelta(minutes=5)


def test_get_service_stats_on_the_primary_is_refused(netloc):
    """On the primary endpoint (a client whose secondary location is the
    primary path): 400 InvalidQueryParameterValue."""
    primary = BlobServiceClient(
        f"http://{netloc}/{ACCOUNT_NAME}",
        credential=CREDENTIAL,
        secondary_hostname=netloc,
        **CLIENT_OPTIONS,
    )
    with raises(HttpResponseError, 400, "InvalidQueryParameterValue"):
        primary.get_service_stats()


def test_the_secondary_serves_reads_and_refuses_writes(container, netloc):
    """The secondary reads what the primary wrote; a write there is
    403 InsufficientAccountPermissions and changes nothing."""
    container.upload_blob("b", b"replicated")
    secondary = secondary_service(netloc).get_container_client(container.container_name)
    assert secondary.download_blob("b").readall() == b"replicated"
    with raises(HttpResponseError, 403, "InsufficientAccountPermissions"):
        secondary.upload_blob("b", b"changed", overwrite=True)
    assert container.download_blob("b").readall() == b"replicated"


def test_start_copy_from_url_checks_the_source_sas(container):
    """A read SAS on the source copies; a SAS without read permission is
    403 CannotVerifyCopySource, and no destination is created."""
    source = container.upload_blob("src", b"source bytes")
    dest = container.get_blob_client("dst")
    copy = dest.start_copy_from_url(f"{source.url}?{read_sas(source, 'r')}")
    assert copy["copy_status"] == "success"
    assert dest.download_blob().readall() == b"source bytes"
    other = container.get_blob_client("dst2")
    write_only = BlobSasPermissions(write=True)
    with raises(HttpResponseError, 403, "CannotVerifyCopySource"):
        other.start_copy_from_url(f"{source.url}?{read_sas(source, write_only)}")
    assert not other.exists()


def test_copy_from_url_needs_source_authorization_in_the_same_account(container):
    """Copy Blob From URL (requires_sync): a private source of the same
    account without a SAS is 401 CannotVerifyCopySource; with a read SAS, or
    from a public container, it copies."""
    source = container.upload_blob("src", b"sync source")
    dest = container.get_blob_client("dst")
    with raises(ClientAuthenticationError, 401, "CannotVerifyCopySource"):
        dest.start_copy_from_url(source.url, requires_sync=True)
    assert not dest.exists()
    copy = dest.start_copy_from_url(
        f"{source.url}?{read_sas(source, 'r')}", requires_sync=True
    )
    assert copy["copy_status"] == "success"
    assert dest.download_blob().readall() == b"sync source"
    container.set_container_access_policy({}, public_access=PublicAccess.Blob)
    copy = container.get_blob_client("dst3").start_copy_from_url(source.url, requires_sync=True)
    assert copy["copy_status"] == "success"
