"""Append blobs: Put Blob (AppendBlob) and Append Block with its conditions
(docs/wire/blobs.md#put-blob, docs/wire/blobs.md#append-block; docs/wire/conditions.md#append-conditions)."""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobType

from helpers import crc64, raises


def test_create_and_append(container):
    """Put Blob with x-ms-blob-type AppendBlob creates an empty append blob;
    each Append Block (201) returns the offset it was written at and the
    committed block count; Get Blob returns the blocks in order."""
    blob = container.get_blob_client("log")
    blob.create_append_blob()
    props = blob.get_blob_properties()
    assert props.blob_type == BlobType.AppendBlob
    assert props.size == 0
    assert props.append_blob_committed_block_count == 0

    offsets = []
    for i, chunk in enumerate([b"first\n", b"second line\n", b"3\n"]):
        result = blob.append_block(chunk)
        offsets.append(int(result["blob_append_offset"]))
        assert result["blob_committed_block_count"] == i + 1
        # No Content-MD5 sent: the service answers with the CRC64.
        assert result["content_crc64"] == crc64(chunk)
    assert offsets == [0, 6, 18]
    assert blob.download_blob().readall() == b"first\nsecond line\n3\n"
    props = blob.get_blob_properties()
    assert props.append_blob_committed_block_count == 3
    assert props.size == 20


def test_append_changes_etag(container):
    """Append Block (201) gives the blob a new ETag, which Get Blob Properties reports."""
    blob = container.get_blob_client("etags")
    created = blob.create_append_blob()
    appended = blob.append_block(b"x")
    assert appended["etag"] != created["etag"]
    assert blob.get_blob_properties().etag == appended["etag"]


def test_append_position_condition(container):
    """x-ms-blob-condition-appendpos: the append happens only when the blob's
    length equals it; otherwise 412 AppendPositionConditionNotMet and nothing
    is appended."""
    blob = container.get_blob_client("pos")
    blob.create_append_blob()
    blob.append_block(b"12345", appendpos_condition=0)
    with raises(HttpResponseError, 412, "AppendPositionConditionNotMet"):
        blob.append_block(b"again", appendpos_condition=0)
    blob.append_block(b"678", appendpos_condition=5)
    assert blob.download_blob().readall() == b"12345678"


def test_max_size_condition(container):
    """x-ms-blob-condition-maxsize: the append happens only if length + block
    <= maxsize; otherwise 412 MaxBlobSizeConditionNotMet."""
    blob = container.get_blob_client("max")
    blob.create_append_blob()
    blob.append_block(b"1234", maxsize_condition=4)
    with raises(HttpResponseError, 412, "MaxBlobSizeConditionNotMet"):
        blob.append_block(b"5", maxsize_condition=4)
    blob.append_block(b"5", maxsize_condition=5)
    assert blob.download_blob().readall() == b"12345"


def test_append_to_block_blob_is_409_invalid_blob_type(container):
    """Append Block on a block blob: 409 InvalidBlobType; the blob is unchanged."""
    blob = container.get_blob_client("block")
    blob.upload_blob(b"block blob")
    with raises(ResourceExistsError, 409, "InvalidBlobType"):
        blob.append_block(b"more")
    assert blob.download_blob().readall() == b"block blob"


def test_append_to_missing_blob_is_404(container):
    """Append Block on a blob that does not exist: 404 BlobNotFound."""
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        container.get_blob_client("nothing").append_block(b"x")


def test_put_blob_of_other_type_replaces_the_blob(container):
    """Put Blob replaces a blob of another type: a block blob over an append
    blob, and an append blob over a block blob (the new type wins)."""
    blob = container.get_blob_client("typed")
    blob.create_append_blob()
    blob.append_block(b"old")
    blob.upload_blob(b"block", overwrite=True)
    assert blob.get_blob_properties().blob_type == "BlockBlob"
    assert blob.download_blob().readall() == b"block"
    blob.create_append_blob()
    props = blob.get_blob_properties()
    assert props.blob_type == "AppendBlob"
    assert props.size == 0


def test_recreate_append_blob_empties_it(container):
    """Put Blob AppendBlob over an existing append blob empties it."""
    blob = container.get_blob_client("reset")
    blob.create_append_blob()
    blob.append_block(b"old")
    blob.create_append_blob()
    props = blob.get_blob_properties()
    assert props.size == 0
    assert props.append_blob_committed_block_count == 0


def test_upload_blob_as_append_blob(make_service, container):
    """upload_blob(blob_type=AppendBlob) creates the blob, then appends the data
    in blocks of max_block_size."""
    client = make_service(max_block_size=4096)
    blob = client.get_blob_client(container.container_name, "uploaded")
    data = bytes(range(256)) * 50
    blob.upload_blob(data, blob_type=BlobType.AppendBlob)
    props = blob.get_blob_properties()
    assert props.blob_type == BlobType.AppendBlob
    assert props.append_blob_committed_block_count == -(-len(data) // 4096)
    assert blob.download_blob().readall() == data
    (listed,) = list(container.list_blobs())
    assert listed.blob_type == BlobType.AppendBlob


def test_seal_append_blob(container):
    """Append Blob Seal: 200 with x-ms-blob-sealed true and a new ETag (as
    the service's recorded answers show); the properties and the listing
    say sealed; an append then answers 409 BlobIsSealed."""
    blob = container.get_blob_client("sealed")
    blob.create_append_blob()
    appended = blob.append_block(b"final\n")
    sealed = blob.seal_append_blob()
    assert sealed["blob_sealed"] is True
    assert sealed["etag"] != appended["etag"]
    assert blob.get_blob_properties().etag == sealed["etag"]
    assert blob.get_blob_properties().is_append_blob_sealed is True
    with raises(HttpResponseError, 409, "BlobIsSealed"):
        blob.append_block(b"more\n")
    assert blob.download_blob().readall() == b"final\n"
    listed = {b.name: b for b in container.list_blobs()}
    assert listed["sealed"].is_append_blob_sealed is True
    # Sealing again succeeds.
    blob.seal_append_blob()
    # A block blob cannot be sealed.
    block = container.get_blob_client("block")
    block.upload_blob(b"x")
    with raises(HttpResponseError, 409, "InvalidBlobType"):
        block.seal_append_blob()


def test_create_stores_a_stated_blob_md5_of_any_length(container):
    """With no body to check it against, x-ms-blob-content-md5 of an append
    (or page) blob's Put Blob is stored as given, as Set Blob Properties
    stores it; over an existing page blob too."""
    from azure.storage.blob import ContentSettings

    stated = bytes([1, 2, 3, 4, 5])
    settings = ContentSettings(content_type="text/x-log", content_md5=bytearray(stated))
    blob = container.get_blob_client("stated-md5")
    blob.create_page_blob(size=512)
    blob.create_append_blob(content_settings=settings)
    props = blob.get_blob_properties()
    assert props.blob_type == BlobType.APPENDBLOB
    assert bytes(props.content_settings.content_md5) == stated
    page = container.get_blob_client("stated-md5-page")
    page.create_page_blob(size=512, content_settings=settings)
    assert bytes(page.get_blob_properties().content_settings.content_md5) == stated


def test_copies_keep_the_seal_unless_told_otherwise(container):
    """As the service's SDK live tests find it: a copy of a sealed append
    blob is sealed, with seal_destination_blob=False it is open (no
    x-ms-blob-sealed, so None) and takes appends; an open blob says
    nothing of sealing."""
    source = container.get_blob_client("sealed-source")
    source.create_append_blob()
    source.append_block(b"abc")
    assert source.get_blob_properties().is_append_blob_sealed is None
    source.seal_append_blob()

    kept = container.get_blob_client("kept")
    kept.start_copy_from_url(source.url)
    assert kept.get_blob_properties().is_append_blob_sealed is True
    with raises(HttpResponseError, 409, "BlobIsSealed"):
        kept.append_block(b"more")

    opened = container.get_blob_client("opened")
    opened.start_copy_from_url(source.url, seal_destination_blob=False)
    assert opened.get_blob_properties().is_append_blob_sealed is None
    opened.append_block(b"more")
    assert opened.download_blob().readall() == b"abcmore"

    sealed = container.get_blob_client("sealed")
    sealed.start_copy_from_url(source.url, seal_destination_blob=True)
    assert sealed.get_blob_properties().is_append_blob_sealed is True
