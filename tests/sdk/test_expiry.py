"""Set Blob Expiry through the SDK's generated layer (azure-storage-blob has
no public call for it; azure-storage-file-datalake's set_file_expiry sends
the same request): the options, x-ms-expiry-time on Get Blob Properties,
Expiry-Time in List Blobs, the blob gone at its time, and the refusals.

The clock tests run on a server on a manual clock (STOWAGE_TEST_CLOCK=1),
moved with `POST /_stowage/test-clock?advance=<seconds>`.
"""

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

import conftest
from helpers import unique_name


def set_expiry(blob, option, time=None):
    """Set Blob Expiry; returns the response headers."""
    return blob._client.blob.set_expiry(option, expires_on=time, cls=lambda r, o, h: h)


def expiry_time(blob):
    """x-ms-expiry-time of Get Blob Properties, as a datetime (or None)."""
    headers = blob._client.blob.get_properties(cls=lambda r, o, h: h)
    return headers.get("x-ms-expiry-time")


def error_code(excinfo):
    """The service's error code (the generated layer leaves it in the header)."""
    return excinfo.value.response.headers["x-ms-error-code"]


def rfc1123(t):
    return format_datetime(t.astimezone(timezone.utc), usegmt=True)


@pytest.fixture(scope="module")
def clock_server(tmp_path_factory):
    """A server on a manual clock: (service client, advance(seconds))."""
    yield from conftest.clock_server(tmp_path_factory, "expiry")


@pytest.fixture
def clock_container(clock_server):
    service, _ = clock_server
    client = service.get_container_client(unique_name("expiry-clock"))
    client.create_container()
    yield client
    client.delete_container()


def test_each_option_sets_or_clears_the_expiry_time(container):
    blob = container.upload_blob("b", b"data")
    created = blob.get_blob_properties().creation_time
    etag = blob.get_blob_properties().etag

    headers = set_expiry(blob, "RelativeToCreation", "3600000")
    assert headers["ETag"] == etag
    assert expiry_time(blob) == created + timedelta(hours=1)

    at = (datetime.now(timezone.utc) + timedelta(days=2)).replace(microsecond=0)
    set_expiry(blob, "Absolute", rfc1123(at))
    assert expiry_time(blob) == at
    listed = container._client.container.list_blob_flat_segment()
    [item] = listed.segment.blob_items
    assert item.properties.expires_on == at

    set_expiry(blob, "RelativeToNow", "600000")
    assert expiry_time(blob) > datetime.now(timezone.utc)
    set_expiry(blob, "NeverExpire")
    assert expiry_time(blob) is None
    assert blob.get_blob_properties().etag == etag


def test_refusals(container):
    blob = container.upload_blob("b", b"data")
    cases = [
        ("RelativeToNow", None, "MissingRequiredHeader"),
        ("RelativeToNow", "soon", "InvalidHeaderValue"),
        ("NeverExpire", "5", "InvalidHeaderValue"),
        ("Absolute", rfc1123(datetime.now(timezone.utc) - timedelta(hours=1)), "InvalidHeaderValue"),
    ]
    for option, time, code in cases:
        with pytest.raises(HttpResponseError) as excinfo:
            set_expiry(blob, option, time)
        assert excinfo.value.status_code == 400, (option, time)
        assert error_code(excinfo) == code, (option, time)
    with pytest.raises(ResourceNotFoundError) as excinfo:
        set_expiry(container.get_blob_client("missing"), "NeverExpire")
    assert error_code(excinfo) == "BlobNotFound"


def test_an_expired_blob_is_gone_and_a_rewrite_clears_the_expiry(clock_server, clock_container):
    _, advance = clock_server
    doomed = clock_container.upload_blob("doomed", b"bytes")
    rewritten = clock_container.upload_blob("rewritten", b"old")
    for blob in (doomed, rewritten):
        set_expiry(blob, "RelativeToNow", "60000")
    rewritten.upload_blob(b"new", overwrite=True)
    assert expiry_time(rewritten) is None

    advance(59)
    assert doomed.download_blob().readall() == b"bytes"
    advance(1)
    with pytest.raises(ResourceNotFoundError) as excinfo:
        doomed.download_blob()
    assert excinfo.value.error_code == "BlobNotFound"
    assert not doomed.exists()
    assert [b.name for b in clock_container.list_blobs()] == ["rewritten"]
    assert rewritten.download_blob().readall() == b"new"

    # The name is free: a new blob, which does not expire.
    doomed.upload_blob(b"again", overwrite=False)
    assert expiry_time(doomed) is None
