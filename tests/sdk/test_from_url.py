"""The From-URL writes through the SDK: stage_block_from_url,
append_block_from_url and upload_blob_from_url, with a source on the same
server read through a SAS."""

from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobBlock, BlobSasPermissions, ContentSettings, generate_blob_sas


def source_url(blob, account_key, permission=None):
    token = generate_blob_sas(
        blob.account_name,
        blob.container_name,
        blob.blob_name,
        account_key=account_key,
        permission=permission or BlobSasPermissions(read=True),
        expiry=datetime.now(timezone.utc) + timedelta(hours=1),
    )
    return f"{blob.url}?{token}"


def test_stage_block_from_url_with_ranges(container, account_key):
    data = bytes(range(256)) * 1024
    src = container.get_blob_client("src")
    src.upload_blob(data)
    url = source_url(src, account_key)
    dst = container.get_blob_client("dst")
    dst.stage_block_from_url("b1", url, source_offset=0, source_length=100_000)
    dst.stage_block_from_url("b2", url, source_offset=100_000, source_length=len(data) - 100_000)
    dst.stage_block_from_url("b3", url)
    _, uncommitted = dst.get_block_list("uncommitted")
    assert [(b.id, b.size) for b in uncommitted] == [
        ("b1", 100_000),
        ("b2", len(data) - 100_000),
        ("b3", len(data)),
    ]
    dst.commit_block_list([BlobBlock("b1"), BlobBlock("b2"), BlobBlock("b3")])
    assert dst.download_blob().readall() == data + data


def test_stage_block_from_url_refusals(container, account_key):
    src = container.get_blob_client("src")
    src.upload_blob(b"0123456789")
    dst = container.get_blob_client("dst")
    # The source's own answer, reported as CannotVerifyCopySource.
    with pytest.raises(HttpResponseError) as e:
        dst.stage_block_from_url("b1", src.url)
    assert e.value.status_code == 401
    assert e.value.error_code == "CannotVerifyCopySource"
    write_only = source_url(src, account_key, BlobSasPermissions(write=True))
    with pytest.raises(HttpResponseError) as e:
        dst.stage_block_from_url("b1", write_only)
    assert e.value.status_code == 403
    assert e.value.error_code == "CannotVerifyCopySource"
    # A wrong source MD5.
    with pytest.raises(HttpResponseError) as e:
        dst.stage_block_from_url(
            "b1", source_url(src, account_key), source_content_md5=b"\x00" * 16
        )
    assert e.value.status_code == 400
    assert e.value.error_code == "Md5Mismatch"


def test_append_block_from_url(container, account_key):
    src = container.get_blob_client("src")
    src.upload_blob(b"0123456789")
    url = source_url(src, account_key)
    log = container.get_blob_client("log")
    log.create_append_blob()
    first = log.append_block_from_url(url, source_offset=0, source_length=4)
    assert first["blob_append_offset"] == "0"
    second = log.append_block_from_url(url, source_offset=8, source_length=2, appendpos_condition=4)
    assert second["blob_append_offset"] == "4"
    assert second["blob_committed_block_count"] == 2
    with pytest.raises(HttpResponseError) as e:
        log.append_block_from_url(url, source_offset=0, source_length=1, appendpos_condition=3)
    assert e.value.status_code == 412
    assert e.value.error_code == "AppendPositionConditionNotMet"
    assert log.download_blob().readall() == b"012389"


def test_upload_blob_from_url(container, account_key):
    src = container.get_blob_client("src")
    src.upload_blob(
        b"a,b\n1,2\n",
        content_settings=ContentSettings(content_type="text/csv", content_language="de"),
        metadata={"origin": "source"},
    )
    url = source_url(src, account_key)
    dst = container.get_blob_client("copy")
    dst.upload_blob_from_url(url, metadata={"mine": "yes"})
    props = dst.get_blob_properties()
    assert dst.download_blob().readall() == b"a,b\n1,2\n"
    assert props.content_settings.content_type == "text/csv"
    assert props.content_settings.content_language == "de"
    assert props.metadata == {"mine": "yes"}
    # overwrite=False sends If-None-Match: *.
    with pytest.raises(HttpResponseError) as e:
        dst.upload_blob_from_url(url, overwrite=False)
    assert e.value.status_code == 409
    assert e.value.error_code == "BlobAlreadyExists"
    plain = container.get_blob_client("plain")
    plain.upload_blob_from_url(url, include_source_blob_properties=False)
    assert plain.get_blob_properties().content_settings.content_type == "application/octet-stream"
