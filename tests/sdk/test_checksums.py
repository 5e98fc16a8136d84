"""CRC64 (x-ms-content-crc64, CRC-64/NVME) through azure-storage-blob: the
checksums uploads answer with, a wrong CRC refused, and a ranged read's
CRC64 (x-ms-range-get-content-crc64)."""

from azure.core.exceptions import HttpResponseError

from helpers import crc64, crc64_b64, md5, md5_b64, raises


def test_upload_blob_answers_with_md5_and_crc64(container):
    """Put Blob of a block blob: 201 with the MD5 and the CRC64 of the body."""
    data = b"checksum me" * 1000
    result = container.get_blob_client("b").upload_blob(data)
    assert result["content_md5"] == md5(data)
    assert result["content_crc64"] == crc64(data)


def test_stage_block_and_append_block_answer_with_crc64(container):
    """Put Block and Append Block without Content-MD5: the CRC64 comes back,
    the MD5 does not; with Content-MD5 (the SDK's version answers with
    both), the MD5 and the CRC64."""
    blob = container.get_blob_client("blocks")
    plain = blob.stage_block("b1", b"block one")
    assert plain["content_crc64"] == crc64(b"block one")
    assert plain.get("content_md5") is None
    checked = blob.stage_block("b2", b"block two", validate_content=True)
    assert checked["content_md5"] == md5(b"block two")
    assert checked["content_crc64"] == crc64(b"block two")
    log = container.get_blob_client("log")
    log.create_append_blob()
    appended = log.append_block(b"line\n")
    assert appended["content_crc64"] == crc64(b"line\n")


def test_a_wrong_crc64_is_refused_and_stores_nothing(container):
    """x-ms-content-crc64 that does not match the body: 400 Crc64Mismatch;
    a right one is taken; with Content-MD5 as well: 400
    BothCrc64AndMd5HeaderPresent."""
    blob = container.get_blob_client("b")
    wrong = {"x-ms-content-crc64": crc64_b64(b"other")}
    with raises(HttpResponseError, 400, "Crc64Mismatch"):
        blob.upload_blob(b"data", headers=wrong)
    assert not blob.exists()
    with raises(HttpResponseError, 400, "Crc64Mismatch"):
        blob.stage_block("b1", b"data", headers=wrong)
    blob.upload_blob(b"data", headers={"x-ms-content-crc64": crc64_b64(b"data")})
    assert blob.download_blob().readall() == b"data"
    both = {"x-ms-content-crc64": crc64_b64(b"data"), "Content-MD5": md5_b64(b"data")}
    with raises(HttpResponseError, 400, "BothCrc64AndMd5HeaderPresent"):
        blob.stage_block("b2", b"data", headers=both)


def test_ranged_download_with_crc64(container):
    """x-ms-range-get-content-crc64: true on a range: 206 with the range's CRC64."""
    data = bytes(range(256)) * 40
    blob = container.get_blob_client("ranged")
    blob.upload_blob(data)
    seen = {}

    def hook(response):
        seen.update(response.http_response.headers)

    got = blob.download_blob(
        offset=100,
        length=1000,
        headers={"x-ms-range-get-content-crc64": "true"},
        raw_response_hook=hook,
    ).readall()
    assert got == data[100:1100]
    assert seen["x-ms-content-crc64"] == crc64_b64(data[100:1100])
