"""Error answers: status, x-ms-error-code and the SDK exception for each
(docs/wire/errors.md#the-error-answer, docs/wire/requests.md#names, docs/wire/requests.md#metadata, docs/wire/requests.md#content-properties; docs/wire/errors.md#which-check-answers-first)."""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from helpers import error_code, md5_b64, raises, unique_name


def test_missing_blob_is_404_blob_not_found(container):
    """Get Blob, Get Blob Properties (HEAD: code in the header only), Get/Set
    Blob Metadata, Set Blob Properties and Delete Blob on a missing blob: 404
    BlobNotFound."""
    blob = container.get_blob_client("missing")
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.download_blob()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.get_blob_properties()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.set_blob_metadata({"a": "b"})
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.set_http_headers()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.delete_blob()
    assert blob.exists() is False


def test_missing_container_is_404_container_not_found(service):
    """Blob operations in a container that does not exist: 404 ContainerNotFound
    (also for Put Blob, which must not create the container)."""
    client = service.get_container_client(unique_name("missing"))
    blob = client.get_blob_client("b")
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        blob.upload_blob(b"data")
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        blob.download_blob()
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        blob.get_blob_properties()
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        blob.delete_blob()
    assert not client.exists()


def test_range_past_the_end_is_416_invalid_range(container):
    """A range starting at or after the blob's size: 416 InvalidRange."""
    blob = container.get_blob_client("short")
    blob.upload_blob(b"0123456789")
    for offset in (10, 11, 1000):
        with raises(HttpResponseError, 416, "InvalidRange"):
            blob.download_blob(offset=offset, length=5)
    assert blob.download_blob(offset=9, length=5).readall() == b"9"


def test_range_on_empty_blob_is_416(container):
    """Any range on an empty blob: 416 InvalidRange (the SDK's whole-blob
    download relies on it and retries without a range)."""
    blob = container.get_blob_client("empty")
    blob.upload_blob(b"")
    with raises(HttpResponseError, 416, "InvalidRange"):
        blob.download_blob(offset=0, length=1)


def test_wrong_content_md5_is_400_md5_mismatch(container):
    """Put Blob whose Content-MD5 does not match the body: 400 Md5Mismatch and
    nothing is stored (the blob does not appear, an old one is unchanged)."""
    blob = container.get_blob_client("checked")
    wrong = {"Content-MD5": md5_b64(b"something else")}
    with raises(HttpResponseError, 400, "Md5Mismatch"):
        blob.upload_blob(b"the real body", headers=wrong)
    assert not blob.exists()
    blob.upload_blob(b"first")
    with raises(HttpResponseError, 400, "Md5Mismatch"):
        blob.upload_blob(b"the real body", overwrite=True, headers=wrong)
    assert blob.download_blob().readall() == b"first"


def test_malformed_content_md5_is_400(container):
    """A Content-MD5 that is not 16 bytes of base64: 400 InvalidMd5 (the
    service's code for a malformed MD5; unverified for this header)."""
    blob = container.get_blob_client("malformed")
    with pytest.raises(HttpResponseError) as info:
        blob.upload_blob(b"body", headers={"Content-MD5": "bm90IGFuIG1kNQ=="})
    assert info.value.status_code == 400
    assert error_code(info.value) in ("InvalidMd5", "Md5Mismatch")
    assert not blob.exists()


@pytest.mark.parametrize(
    "metadata, code",
    [
        ({"1starts_with_digit": "x"}, "InvalidMetadata"),
        ({"has-dash": "x"}, "InvalidMetadata"),
        ({"big": "v" * 8200}, "MetadataTooLarge"),
        ({f"k{i}": "v" * 500 for i in range(17)}, "MetadataTooLarge"),
    ],
    ids=["digit-first", "dash", "one-large-value", "total-over-8kib"],
)
def test_invalid_blob_metadata_is_400(container, metadata, code):
    """Metadata names must be C# identifiers (400 InvalidMetadata); names plus
    values at most 8 KiB (400 MetadataTooLarge). Nothing is stored."""
    blob = container.get_blob_client("meta")
    with raises(HttpResponseError, 400, code):
        blob.upload_blob(b"x", metadata=metadata)
    assert not blob.exists()
    blob.upload_blob(b"x")
    with raises(HttpResponseError, 400, code):
        blob.set_blob_metadata(metadata)
    assert blob.get_blob_properties().metadata == {}


def test_metadata_at_the_size_limit_is_accepted(container):
    """Exactly 8 KiB of names plus values is allowed."""
    metadata = {"k": "v" * (8192 - 1)}
    blob = container.get_blob_client("limit")
    blob.upload_blob(b"x", metadata=metadata)
    assert blob.get_blob_properties().metadata == metadata


def test_invalid_container_metadata_is_400(service):
    """Create Container with an invalid metadata name: 400 InvalidMetadata, no container."""
    client = service.get_container_client(unique_name("badmeta"))
    with raises(HttpResponseError, 400, "InvalidMetadata"):
        client.create_container(metadata={"bad-name": "x"})
    assert not client.exists()


def test_blob_name_too_long_is_400(container):
    """A blob name over 1024 characters: 400 OutOfRangeInput (code unverified;
    the status is checked first); 1024 characters are fine."""
    ok = container.get_blob_client("n" * 1024)
    ok.upload_blob(b"x")
    assert ok.download_blob().readall() == b"x"
    too_long = container.get_blob_client("n" * 1025)
    with pytest.raises(HttpResponseError) as info:
        too_long.upload_blob(b"x")
    assert info.value.status_code == 400
    assert error_code(info.value) == "OutOfRangeInput"


@pytest.mark.parametrize(
    "call",
    [
        lambda blob: blob.delete_immutability_policy(),
        lambda blob: blob.set_legal_hold(True),
    ],
    ids=["immutability-policy", "legal-hold"],
)
def test_unimplemented_operations_are_501(container, call):
    """Operations of the service that Stowage does not implement
    (immutability policies, legal hold, ...): 501 NotImplemented, never a 500 or a hang."""
    blob = container.get_blob_client("present")
    blob.upload_blob(b"x")
    with raises(HttpResponseError, 501, "NotImplemented"):
        call(blob)
    assert blob.download_blob().readall() == b"x"


def test_server_keeps_serving_after_errors(container):
    """After a run of failing requests the server still answers normally."""
    blob = container.get_blob_client("survivor")
    for _ in range(5):
        with pytest.raises(HttpResponseError):
            blob.download_blob()
    blob.upload_blob(b"alive")
    assert blob.download_blob().readall() == b"alive"
