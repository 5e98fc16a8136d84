"""Block blobs: Put Blob, Get Blob (whole and ranged), properties, metadata,
delete (docs/wire/blobs.md), and staged blocks (docs/wire/blobs.md)."""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobBlock, BlobType, ContentSettings

from helpers import PatternReader, VerifyingSink, md5, pattern, raises


def test_upload_and_download_round_trip(container):
    """Put Blob answers 201 with ETag and Last-Modified; Get Blob returns the
    same bytes; Get Blob Properties reports a BlockBlob of that size."""
    data = b"hello, stowage\n" * 100
    blob = container.get_blob_client("hello.txt")
    result = blob.upload_blob(data)
    assert result["etag"]
    assert result["last_modified"] is not None

    assert blob.download_blob().readall() == data
    props = blob.get_blob_properties()
    assert props.size == len(data)
    assert props.blob_type == BlobType.BlockBlob
    assert props.etag == result["etag"]
    assert props.last_modified == result["last_modified"]
    assert props.creation_time is not None
    assert props.server_encrypted is True


def test_download_properties_match_blob_properties(container):
    """The headers of Get Blob describe the blob as Get Blob Properties does."""
    data = bytes(range(256)) * 4
    blob = container.get_blob_client("props.bin")
    blob.upload_blob(data, metadata={"kind": "bytes"})
    downloader = blob.download_blob()
    head = blob.get_blob_properties()
    assert downloader.properties.etag == head.etag
    assert downloader.properties.size == head.size == len(data)
    assert downloader.properties.metadata == {"kind": "bytes"}
    assert downloader.properties.blob_type == BlobType.BlockBlob
    assert downloader.readall() == data


def test_empty_blob(container):
    """A zero-length blob: its ranged first read answers 416 InvalidRange and
    the SDK re-reads without a range, so the download is empty."""
    blob = container.get_blob_client("empty")
    blob.upload_blob(b"")
    assert blob.download_blob().readall() == b""
    assert blob.get_blob_properties().size == 0
    assert blob.get_blob_properties().content_settings.content_md5 == md5(b"")


def test_ranged_download(container):
    """Get Blob with x-ms-range bytes=S-E answers 206 with those bytes; an end
    past the blob is clipped to the last byte."""
    data = bytes(i % 251 for i in range(1000))
    blob = container.get_blob_client("ranged")
    blob.upload_blob(data)
    assert blob.download_blob(offset=100, length=50).readall() == data[100:150]
    assert blob.download_blob(offset=0, length=1).readall() == data[:1]
    assert blob.download_blob(offset=999, length=1).readall() == data[999:]
    assert blob.download_blob(offset=990, length=100).readall() == data[990:]
    assert blob.download_blob(offset=500).readall() == data[500:]


def test_chunked_download_uses_content_range(make_service, container):
    """A download in 64 KiB chunks (several 206 answers, each with a
    Content-Range the SDK parses) reassembles the blob exactly."""
    chunky = make_service(max_single_get_size=64 * 1024, max_chunk_get_size=64 * 1024)
    data = pattern(0, 1024 * 1024 + 12345)
    container.upload_blob("chunked", data)
    blob = chunky.get_blob_client(container.container_name, "chunked")
    assert blob.download_blob().readall() == data
    assert blob.download_blob(max_concurrency=4).readall() == data
    assert blob.download_blob(offset=70000, length=200000).readall() == data[70000:270000]


def test_overwrite_replaces_content_and_metadata(container):
    """Put Blob over an existing blob replaces content, content properties and
    metadata (none sent = none stored), and gives a new ETag."""
    blob = container.get_blob_client("over")
    first = blob.upload_blob(
        b"first", metadata={"a": "1"}, content_settings=ContentSettings(content_language="fr")
    )
    second = blob.upload_blob(b"second version", overwrite=True)
    assert second["etag"] != first["etag"]
    props = blob.get_blob_properties()
    assert props.size == len(b"second version")
    assert props.metadata == {}
    assert props.content_settings.content_language is None
    assert blob.download_blob().readall() == b"second version"


def test_upload_without_overwrite_is_409_blob_already_exists(container):
    """upload_blob(overwrite=False) sends If-None-Match: *; on an existing blob
    the service answers 409 BlobAlreadyExists and keeps the old content."""
    blob = container.get_blob_client("once")
    blob.upload_blob(b"original", overwrite=False)
    with raises(ResourceExistsError, 409, "BlobAlreadyExists"):
        blob.upload_blob(b"replacement", overwrite=False)
    assert blob.download_blob().readall() == b"original"


def test_content_settings_round_trip(container):
    """The six content properties sent on Put Blob come back on Get Blob
    Properties and on Get Blob."""
    settings = ContentSettings(
        content_type="text/plain; charset=utf-8",
        content_encoding="identity",
        content_language="en-GB",
        content_disposition='attachment; filename="report.txt"',
        cache_control="max-age=60",
    )
    blob = container.get_blob_client("settings.txt")
    blob.upload_blob(b"content", content_settings=settings)
    for got in (blob.get_blob_properties().content_settings,
                blob.download_blob().properties.content_settings):
        assert got.content_type == settings.content_type
        assert got.content_encoding == settings.content_encoding
        assert got.content_language == settings.content_language
        assert got.content_disposition == settings.content_disposition
        assert got.cache_control == settings.cache_control


def test_default_content_type_is_octet_stream(container):
    """Put Blob without a content type stores application/octet-stream."""
    blob = container.get_blob_client("plain")
    blob.upload_blob(b"x")
    assert blob.get_blob_properties().content_settings.content_type == "application/octet-stream"


def test_set_http_headers_replaces_all_six_properties(container):
    """Set Blob Properties sets each content property from its header and
    clears those not sent; content and metadata stay; the ETag changes."""
    blob = container.get_blob_client("headers")
    first = blob.upload_blob(
        b"body",
        metadata={"keep": "me"},
        content_settings=ContentSettings(content_type="text/plain", content_language="de"),
    )
    result = blob.set_http_headers(ContentSettings(content_type="application/json", cache_control="no-cache"))
    assert result["etag"] != first["etag"]
    props = blob.get_blob_properties()
    assert props.content_settings.content_type == "application/json"
    assert props.content_settings.cache_control == "no-cache"
    assert props.content_settings.content_language is None
    assert props.content_settings.content_md5 is None
    assert props.metadata == {"keep": "me"}
    assert blob.download_blob().readall() == b"body"


def test_server_computes_content_md5_on_put_blob(container):
    """Put Blob without any MD5: the service computes the content MD5, returns
    it in the response and stores it as the blob's Content-MD5."""
    data = b"checksum me" * 1000
    blob = container.get_blob_client("md5-computed")
    result = blob.upload_blob(data)
    assert result["content_md5"] == md5(data)
    assert blob.get_blob_properties().content_settings.content_md5 == md5(data)
    assert blob.download_blob().properties.content_settings.content_md5 == md5(data)


def test_content_md5_round_trip(container):
    """An MD5 sent as a content property on Put Blob (x-ms-blob-content-md5) is
    stored and returned as the blob's Content-MD5 by Get Blob Properties, Get
    Blob and List Blobs."""
    data = b"data with a declared md5"
    blob = container.get_blob_client("md5-declared")
    blob.upload_blob(data, content_settings=ContentSettings(content_md5=md5(data)))
    assert blob.get_blob_properties().content_settings.content_md5 == md5(data)
    assert blob.download_blob().properties.content_settings.content_md5 == md5(data)
    (listed,) = list(container.list_blobs())
    assert listed.content_settings.content_md5 == md5(data)


def test_transactional_md5_accepted_and_validated_on_read(container):
    """validate_content=True sends Content-MD5 of the body on upload (checked by
    the service) and, on download, x-ms-range-get-content-md5: true, so each
    range (<= 4 MiB) comes back with the MD5 of its bytes, which the SDK checks."""
    data = pattern(7, 300_000)
    blob = container.get_blob_client("validated")
    blob.upload_blob(data, validate_content=True)
    assert blob.download_blob(validate_content=True).readall() == data
    assert blob.download_blob(offset=1000, length=5000, validate_content=True).readall() == data[1000:6000]


def test_blob_metadata(container):
    """Metadata from Put Blob comes back on Get Blob Properties and Get Blob;
    Set Blob Metadata replaces the whole set (new ETag); none clears it."""
    blob = container.get_blob_client("meta")
    first = blob.upload_blob(b"x", metadata={"author": "alice", "n": "1"})
    assert blob.get_blob_properties().metadata == {"author": "alice", "n": "1"}
    assert blob.download_blob().properties.metadata == {"author": "alice", "n": "1"}
    result = blob.set_blob_metadata({"other": "value with spaces"})
    assert result["etag"] != first["etag"]
    assert blob.get_blob_properties().metadata == {"other": "value with spaces"}
    blob.set_blob_metadata()
    assert blob.get_blob_properties().metadata == {}
    assert blob.download_blob().readall() == b"x"


def test_blob_metadata_names_keep_their_case(container):
    """Metadata names are case-insensitive for uniqueness but returned in the
    case they were written in (docs/wire/requests.md#metadata), on Get Blob Properties, Get Blob and
    List Blobs."""
    metadata = {"CamelCase": "Value", "UPPER": "u", "lower": "l", "_Under_score1": "x"}
    blob = container.get_blob_client("case")
    blob.upload_blob(b"x", metadata=metadata)
    assert blob.get_blob_properties().metadata == metadata
    assert blob.download_blob().properties.metadata == metadata
    (listed,) = list(container.list_blobs(include=["metadata"]))
    assert listed.metadata == metadata
    blob.set_blob_metadata({"MixedCase": "again"})
    assert blob.get_blob_properties().metadata == {"MixedCase": "again"}


def test_delete_blob(container):
    """Delete Blob answers 202; the blob is then 404 BlobNotFound, and a second
    delete is 404 BlobNotFound too."""
    blob = container.get_blob_client("doomed")
    blob.upload_blob(b"bye")
    blob.delete_blob()
    assert not blob.exists()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.download_blob()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.delete_blob()


@pytest.mark.parametrize(
    "name",
    [
        "dir/sub dir/file name.txt",
        "plus+and%percent&amp=eq?q#hash",
        "unicode/ünïcödé/日本語.bin",
        "quotes'and(parens)!*~",
        "trailing.",
        "a/b/c/d/e/f/g/h/i/j",
    ],
)
def test_names_that_need_encoding(container, name):
    """Blob names are case-sensitive strings that may hold spaces, '+', '%',
    non-ASCII and punctuation; each round-trips through URL encoding and the
    Shared Key signature, and lists under its exact name."""
    blob = container.get_blob_client(name)
    blob.upload_blob(name.encode())
    assert blob.download_blob().readall() == name.encode()
    assert blob.get_blob_properties().name == name
    assert [b.name for b in container.list_blobs()] == [name]
    blob.delete_blob()


def test_names_are_case_sensitive(container):
    """Blob names are case-sensitive: Name and name are two blobs."""
    container.upload_blob("Name", b"upper")
    container.upload_blob("name", b"lower")
    assert container.download_blob("Name").readall() == b"upper"
    assert container.download_blob("name").readall() == b"lower"


def test_stage_and_commit_blocks(container):
    """Put Block stages uncommitted blocks (201, blob still invisible to reads);
    Get Block List shows them with their sizes; Put Block List commits a
    reordered subset; the unlisted block is discarded."""
    blob = container.get_blob_client("staged")
    blocks = {"block-a": b"A" * 10, "block-b": b"B" * 20, "block-c": b"C" * 30}
    for block_id, data in blocks.items():
        blob.stage_block(block_id, data)
    assert not blob.exists()
    committed, uncommitted = blob.get_block_list("all")
    assert committed == []
    assert sorted((b.id, b.size) for b in uncommitted) == [
        ("block-a", 10), ("block-b", 20), ("block-c", 30)
    ]

    blob.commit_block_list([BlobBlock("block-c"), BlobBlock("block-a")])
    assert blob.download_blob().readall() == b"C" * 30 + b"A" * 10
    committed, uncommitted = blob.get_block_list("all")
    assert [(b.id, b.size) for b in committed] == [("block-c", 30), ("block-a", 10)]
    assert uncommitted == []

    # Recommit from the committed list, adding a newly staged block.
    blob.stage_block("block-d", b"D" * 5)
    blob.commit_block_list([BlobBlock("block-a"), BlobBlock("block-d")])
    assert blob.download_blob().readall() == b"A" * 10 + b"D" * 5
    assert [b.id for b in blob.get_block_list("committed")[0]] == ["block-a", "block-d"]


def test_commit_unknown_block_is_400_invalid_block_list(container):
    """Put Block List naming a block that was never staged: 400 InvalidBlockList."""
    blob = container.get_blob_client("bad-list")
    blob.stage_block("real", b"data")
    with raises(HttpResponseError, 400, "InvalidBlockList"):
        blob.commit_block_list([BlobBlock("real"), BlobBlock("never-staged")])
    assert not blob.exists()


def test_staged_block_with_content_md5(container):
    """Put Block with validate_content=True sends Content-MD5; the service
    checks it and answers with the MD5 of the block."""
    blob = container.get_blob_client("md5-block")
    result = blob.stage_block("b1", b"block data", validate_content=True)
    assert result["content_md5"] == md5(b"block data")
    blob.commit_block_list(["b1"])
    assert blob.download_blob().readall() == b"block data"


BIG = 200 * 1024 * 1024
BIG_BLOCK = 8 * 1024 * 1024


def test_200_mib_upload_in_blocks_and_parallel_download(make_service, container):
    """With max_single_put_size and max_block_size lowered to 8 MiB the SDK
    uploads 200 MiB as 25 staged blocks and one Put Block List; a download with
    max_concurrency=8 returns it byte-identical. The data is generated on the
    fly and checked as it arrives, so no copy of it is held in memory."""
    client = make_service(
        max_single_put_size=BIG_BLOCK, max_block_size=BIG_BLOCK, max_chunk_get_size=BIG_BLOCK
    )
    blob = client.get_blob_client(container.container_name, "big.bin")
    blob.upload_blob(PatternReader(BIG), length=BIG, max_concurrency=4)

    committed, _ = blob.get_block_list("committed")
    assert len(committed) == BIG // BIG_BLOCK
    assert all(b.size == BIG_BLOCK for b in committed)
    assert blob.get_blob_properties().size == BIG

    sink = VerifyingSink(BIG)
    assert blob.download_blob(max_concurrency=8).readinto(sink) == BIG
    sink.check_complete()


def test_set_http_headers_with_nothing_clears_the_content_type(container):
    """Set Blob Properties without content headers clears all six, the
    content type included: the SDK then reads no content type at all."""
    blob = container.get_blob_client("cleared")
    blob.upload_blob(b"x", content_settings=ContentSettings(content_type="text/plain", cache_control="no-cache"))
    blob.set_http_headers()
    got = blob.get_blob_properties().content_settings
    assert got.content_type is None
    assert got.cache_control is None
    assert got.content_md5 is None
    assert blob.download_blob().readall() == b"x"


def test_set_http_headers_stores_an_md5_of_any_length(container):
    """x-ms-blob-content-md5 on Set Blob Properties is stored as given."""
    blob = container.get_blob_client("md5")
    blob.upload_blob(b"x")
    blob.set_http_headers(ContentSettings(content_md5=bytearray(b"short")))
    assert bytes(blob.get_blob_properties().content_settings.content_md5) == b"short"


def test_upload_with_a_wrong_stated_md5_is_400_md5_mismatch(container):
    """Put Blob checks x-ms-blob-content-md5 against the body."""
    blob = container.get_blob_client("stated")
    with raises(HttpResponseError, 400, "Md5Mismatch"):
        blob.upload_blob(b"payload", content_settings=ContentSettings(content_md5=bytearray(md5(b"other"))))
    assert not blob.exists()


def test_delete_answers_x_ms_delete_type_permanent(container):
    """Delete Blob answers x-ms-delete-type-permanent: true."""
    blob = container.get_blob_client("gone")
    blob.upload_blob(b"x")
    seen = {}
    blob.delete_blob(raw_response_hook=lambda r: seen.update(r.http_response.headers))
    assert seen.get("x-ms-delete-type-permanent") == "true"
