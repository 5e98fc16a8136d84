"""Page blobs through the SDK's PageBlob calls: create, Put Page (update and
clear), Get Page Ranges and its diff form, resize, sequence numbers
(docs/wire/pages.md)."""

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError
from azure.storage.blob import BlobType, SequenceNumberAction

from helpers import md5, raises, unique_name
from test_copy_remote import other_server  # noqa: F401 (a fixture: a second server)

KIB = 1024


def page(fill, n=1):
    """`n` pages of one byte value."""
    return bytes([fill]) * (512 * n)


def ranges_of(blob, **kwargs):
    """Get Page Ranges as ([(start, end)], [(start, end)]) with inclusive ends."""
    written, cleared = blob.get_page_ranges(**kwargs)
    return (
        [(r["start"], r["end"]) for r in written],
        [(r["start"], r["end"]) for r in cleared],
    )


def test_create_page_blob_reads_as_zeros(container):
    """Put Blob of a page blob: 201; the blob has the declared size, type
    PageBlob and sequence number 0, and reads as zeros."""
    blob = container.get_blob_client("disk.vhd")
    result = blob.create_page_blob(size=64 * KIB)
    assert result["etag"]
    props = blob.get_blob_properties()
    assert props.blob_type == BlobType.PageBlob
    assert props.size == 64 * KIB
    assert props.page_blob_sequence_number == 0
    assert blob.download_blob().readall() == bytes(64 * KIB)


def test_create_with_sequence_number(container):
    blob = container.get_blob_client("seq")
    blob.create_page_blob(size=1024, sequence_number=7)
    assert blob.get_blob_properties().page_blob_sequence_number == 7


def test_create_with_a_size_off_the_page_grid_is_400(container):
    blob = container.get_blob_client("odd")
    with raises(HttpResponseError, 400, "InvalidHeaderValue"):
        blob.create_page_blob(size=1000)


def test_create_past_8_tib_is_400(container):
    blob = container.get_blob_client("huge")
    with raises(HttpResponseError, 400, "InvalidHeaderValue"):
        blob.create_page_blob(size=8 * 1024**4 + 512)


def test_upload_page_and_read_back_with_zeros_between(container):
    """Pages written read back at their offsets, unwritten pages as zeros,
    whole and in ranges that cut through both."""
    blob = container.get_blob_client("pages")
    blob.create_page_blob(size=8 * 512)
    a, b = page(0xAA, 2), page(0xBB)
    result = blob.upload_page(a, offset=512, length=1024)
    assert result["etag"]
    assert result["blob_sequence_number"] == 0
    blob.upload_page(b, offset=6 * 512, length=512)
    want = bytes(512) + a + bytes(3 * 512) + b + bytes(512)
    assert blob.download_blob().readall() == want
    assert blob.download_blob(offset=1000, length=2500).readall() == want[1000:3500]


def test_later_writes_win(container):
    blob = container.get_blob_client("overwrite")
    blob.create_page_blob(size=4 * 512)
    blob.upload_page(page(1, 4), offset=0, length=2048)
    blob.upload_page(page(2), offset=512, length=512)
    assert blob.download_blob().readall() == page(1) + page(2) + page(1, 2)
    # One range per stored run: the write split the first one in three.
    assert ranges_of(blob) == ([(0, 511), (512, 1023), (1024, 2047)], [])


def test_upload_page_checks_content_md5(container):
    blob = container.get_blob_client("md5")
    blob.create_page_blob(size=1024)
    data = page(3)
    blob.upload_page(data, offset=0, length=512, validate_content=True)
    client = blob._client.page_blob
    with raises(HttpResponseError, 400, "Md5Mismatch"):
        client.upload_pages(
            body=data,
            content_length=512,
            range="bytes=512-1023",
            transactional_content_md5=md5(b"other"),
        )


def test_misaligned_range_is_416_invalid_page_range(container):
    """The SDK refuses misaligned offsets itself; its generated client sends
    them, and the server answers 416 InvalidPageRange."""
    blob = container.get_blob_client("misaligned")
    blob.create_page_blob(size=4096)
    client = blob._client.page_blob
    with raises(HttpResponseError, 416, "InvalidPageRange"):
        client.upload_pages(body=b"x" * 512, content_length=512, range="bytes=1-512")
    with raises(HttpResponseError, 416, "InvalidPageRange"):
        client.upload_pages(body=b"x" * 500, content_length=500, range="bytes=0-499")


def test_range_past_the_end_is_416_invalid_page_range(container):
    blob = container.get_blob_client("past-end")
    blob.create_page_blob(size=1024)
    with raises(HttpResponseError, 416, "InvalidPageRange"):
        blob.upload_page(page(1), offset=1024, length=512)
    with raises(HttpResponseError, 416, "InvalidPageRange"):
        blob.clear_page(offset=512, length=1024)


def test_sequence_number_conditions(container):
    """x-ms-if-sequence-number-le/lt/eq: 412 SequenceNumberConditionNotMet
    when one fails; the write goes through when all hold."""
    blob = container.get_blob_client("seq-cond")
    blob.create_page_blob(size=2048, sequence_number=5)
    for kwargs in (
        {"if_sequence_number_lte": 4},
        {"if_sequence_number_lt": 5},
        {"if_sequence_number_eq": 6},
    ):
        with raises(HttpResponseError, 412, "SequenceNumberConditionNotMet"):
            blob.upload_page(page(1), offset=0, length=512, **kwargs)
        with raises(HttpResponseError, 412, "SequenceNumberConditionNotMet"):
            blob.clear_page(offset=0, length=512, **kwargs)
    blob.upload_page(
        page(1),
        offset=0,
        length=512,
        if_sequence_number_lte=5,
        if_sequence_number_lt=6,
        if_sequence_number_eq=5,
    )
    assert ranges_of(blob) == ([(0, 511)], [])


def test_etag_condition_on_upload_page(container):
    blob = container.get_blob_client("etag-cond")
    blob.create_page_blob(size=1024)
    with pytest.raises(ResourceModifiedError) as e:
        blob.upload_page(page(1), offset=0, length=512, etag='"0x1"', match_condition=_if_match())
    assert e.value.status_code == 412


def _if_match():
    from azure.core import MatchConditions

    return MatchConditions.IfNotModified


def test_clear_page_and_page_ranges(container):
    """Each write is a range of its own, touching ones too (as the emulator
    answers); a clear splits one; Range limits the answer to a window,
    cutting ranges at its edges."""
    blob = container.get_blob_client("ranges")
    blob.create_page_blob(size=16 * 512)
    blob.upload_page(page(1, 4), offset=0, length=4 * 512)
    blob.upload_page(page(2, 2), offset=4 * 512, length=2 * 512)
    blob.upload_page(page(3), offset=10 * 512, length=512)
    assert ranges_of(blob) == ([(0, 2047), (2048, 3071), (5120, 5631)], [])
    blob.clear_page(offset=1024, length=1024)
    assert ranges_of(blob) == ([(0, 1023), (2048, 3071), (5120, 5631)], [])
    assert blob.download_blob(offset=1024, length=1024).readall() == bytes(1024)
    assert ranges_of(blob, offset=512, length=2048) == ([(512, 1023), (2048, 2559)], [])


def test_page_ranges_of_a_snapshot_and_the_diff(container):
    """A snapshot keeps its pages; the diff against it lists pages written
    since as PageRange and pages cleared since as ClearRange."""
    blob = container.get_blob_client("diff")
    blob.create_page_blob(size=16 * 512)
    blob.upload_page(page(1, 4), offset=0, length=4 * 512)
    snap = blob.create_snapshot()
    blob.upload_page(page(2), offset=512, length=512)
    blob.clear_page(offset=1536, length=512)
    blob.upload_page(page(3), offset=8 * 512, length=512)
    snap_blob = container.get_blob_client("diff", snapshot=snap["snapshot"])
    assert ranges_of(snap_blob) == ([(0, 2047)], [])
    assert snap_blob.download_blob().readall()[:2048] == page(1, 4)
    assert blob.download_blob().readall()[:2048] == page(1) + page(2) + page(1) + bytes(512)
    written, cleared = blob.get_page_ranges(previous_snapshot_diff=snap["snapshot"])
    assert [(r["start"], r["end"]) for r in written] == [(512, 1023), (4096, 4607)]
    assert [(r["start"], r["end"]) for r in cleared] == [(1536, 2047)]
    diff = list(blob.list_page_ranges(previous_snapshot=snap["snapshot"]))
    assert [(r.start, r.end, r.cleared) for r in diff] == [
        (512, 1023, False),
        (1536, 2047, True),
        (4096, 4607, False),
    ]


def test_diff_lists_pages_cleared_since_even_where_nothing_was(container):
    """The service's recorded answer (the SDK's own page blob test): pages
    written and then partly cleared after an empty snapshot list the cleared
    part as ClearRange; the diff against a later snapshot lists only the
    clear made after it."""
    blob = container.get_blob_client("cleared-diff")
    blob.create_page_blob(size=2048)
    first = blob.create_snapshot()
    blob.upload_page(page(1, 3), offset=0, length=1536)
    second = blob.create_snapshot()
    blob.clear_page(offset=512, length=512)
    written, cleared = blob.get_page_ranges(previous_snapshot_diff=first["snapshot"])
    assert [(r["start"], r["end"]) for r in written] == [(0, 511), (1024, 1535)]
    assert [(r["start"], r["end"]) for r in cleared] == [(512, 1023)]
    written, cleared = blob.get_page_ranges(previous_snapshot_diff=second["snapshot"])
    assert written == []
    assert [(r["start"], r["end"]) for r in cleared] == [(512, 1023)]
    # A snapshot taken after the clear shares it: nothing changed since.
    third = blob.create_snapshot()
    assert blob.get_page_ranges(previous_snapshot_diff=third["snapshot"]) == ([], [])
    # A cleared page is not a page range, and reads as zeros.
    assert ranges_of(blob) == ([(0, 511), (1024, 1535)], [])
    assert blob.download_blob().readall() == page(1) + bytes(512) + page(1) + bytes(512)


def test_page_ranges_from_the_end_of_the_blob_is_416(container):
    blob = container.get_blob_client("ranges-past-end")
    blob.create_page_blob(size=1024)
    blob.upload_page(page(1, 2), offset=0, length=1024)
    assert ranges_of(blob, offset=512, length=512) == ([(512, 1023)], [])
    with raises(HttpResponseError, 416, "InvalidRange"):
        blob.get_page_ranges(offset=1024, length=512)


def test_diff_against_a_missing_snapshot_is_409(container):
    blob = container.get_blob_client("nosnap")
    blob.create_page_blob(size=1024)
    with raises(HttpResponseError, 409, "PreviousSnapshotNotFound"):
        blob.get_page_ranges(previous_snapshot_diff="2020-01-01T00:00:00.0000000Z")


def test_list_page_ranges_pages_with_a_marker(container):
    blob = container.get_blob_client("paged")
    blob.create_page_blob(size=32 * 512)
    for i in range(0, 32, 2):
        blob.upload_page(page(i + 1), offset=i * 512, length=512)
    pager = blob.list_page_ranges(results_per_page=5).by_page()
    pages_seen = [[(r.start, r.end) for r in p] for p in pager]
    assert [len(p) for p in pages_seen] == [5, 5, 5, 1]
    flat = [r for p in pages_seen for r in p]
    assert flat == [(i * 512, i * 512 + 511) for i in range(0, 32, 2)]


def test_resize_grows_with_zeros_and_shrinking_drops_pages(container):
    blob = container.get_blob_client("resize")
    blob.create_page_blob(size=4 * 512)
    blob.upload_page(page(9, 4), offset=0, length=2048)
    blob.resize_blob(1024)
    assert blob.get_blob_properties().size == 1024
    assert ranges_of(blob) == ([(0, 1023)], [])
    blob.resize_blob(3072)
    assert blob.download_blob().readall() == page(9, 2) + bytes(2048)
    with raises(HttpResponseError, 400, "InvalidHeaderValue"):
        blob.resize_blob(1000)


def test_resize_keeps_content_properties(container):
    from azure.storage.blob import ContentSettings

    blob = container.get_blob_client("resize-props")
    blob.create_page_blob(size=1024, content_settings=ContentSettings(content_type="disk/raw"))
    blob.resize_blob(2048)
    assert blob.get_blob_properties().content_settings.content_type == "disk/raw"


def test_set_sequence_number_actions(container):
    blob = container.get_blob_client("seq-actions")
    blob.create_page_blob(size=512, sequence_number=3)
    assert blob.set_sequence_number(SequenceNumberAction.Increment)["blob_sequence_number"] == 4
    assert blob.set_sequence_number(SequenceNumberAction.Max, 2)["blob_sequence_number"] == 4
    assert blob.set_sequence_number(SequenceNumberAction.Max, 10)["blob_sequence_number"] == 10
    assert blob.set_sequence_number(SequenceNumberAction.Update, 1)["blob_sequence_number"] == 1
    assert blob.get_blob_properties().page_blob_sequence_number == 1


def test_listing_shows_page_blobs(container):
    blob = container.get_blob_client("listed")
    blob.create_page_blob(size=2048, sequence_number=12)
    (item,) = list(container.list_blobs())
    assert item.blob_type == BlobType.PageBlob
    assert item.size == 2048
    assert item.page_blob_sequence_number == 12


def test_other_blob_types_refuse_page_calls_and_the_reverse(container):
    block = container.get_blob_client("block")
    block.upload_blob(b"x" * 512)
    with raises(HttpResponseError, 409, "InvalidBlobType"):
        block.upload_page(page(1), offset=0, length=512)
    with raises(HttpResponseError, 409, "InvalidBlobType"):
        block.get_page_ranges()
    pageblob = container.get_blob_client("paged")
    pageblob.create_page_blob(size=1024)
    with raises(HttpResponseError, 409, "InvalidBlobType"):
        pageblob.stage_block("YQ==", b"data")
    with raises(HttpResponseError, 409, "InvalidBlobType"):
        pageblob.append_block(b"data")


def test_put_blob_of_a_block_blob_replaces_a_page_blob(container):
    blob = container.get_blob_client("replaced")
    blob.create_page_blob(size=4096)
    blob.upload_page(page(1), offset=0, length=512)
    blob.upload_blob(b"now a block blob", overwrite=True)
    props = blob.get_blob_properties()
    assert props.blob_type == BlobType.BlockBlob
    assert blob.download_blob().readall() == b"now a block blob"


def test_create_over_an_existing_blob_needs_overwrite(container):
    blob = container.get_blob_client("exists")
    blob.create_page_blob(size=512)
    with pytest.raises(ResourceExistsError):
        blob.create_page_blob(size=512, if_none_match="*")


def test_incremental_copy_of_snapshots(container):
    """start_copy_from_url(..., incremental_copy=True): the destination
    becomes an incremental-copy page blob with the snapshot's content and a
    snapshot of its own (x-ms-copy-destination-snapshot); a later snapshot
    copies again, an earlier one is refused."""
    src = container.get_blob_client("vhd")
    src.create_page_blob(size=4096, sequence_number=3)
    src.upload_page(page(1, 2), offset=0, length=1024)
    snap1 = src.create_snapshot()["snapshot"]
    src.upload_page(page(2), offset=2048, length=512)
    snap2 = src.create_snapshot()["snapshot"]
    dst = container.get_blob_client("backup")
    url1 = container.get_blob_client("vhd", snapshot=snap1).url
    url2 = container.get_blob_client("vhd", snapshot=snap2).url
    result = dst.start_copy_from_url(url1, incremental_copy=True)
    assert result["copy_status"] == "success"
    props = dst.get_blob_properties()
    assert props.blob_type == BlobType.PageBlob
    assert props.copy.incremental_copy
    assert props.page_blob_sequence_number == 3
    first = props.copy.destination_snapshot
    assert first
    copied = container.get_blob_client("backup", snapshot=first)
    assert copied.download_blob().readall() == page(1, 2) + bytes(3072)
    dst.start_copy_from_url(url2, incremental_copy=True)
    second = dst.get_blob_properties().copy.destination_snapshot
    assert second > first
    copied = container.get_blob_client("backup", snapshot=second)
    assert ranges_of(copied) == ([(0, 1023), (2048, 2559)], [])
    with raises(HttpResponseError, 409, "IncrementalCopyOfEarlierVersionSnapshotNotAllowed"):
        dst.start_copy_from_url(url1, incremental_copy=True)
    # The destination takes no page writes of its own.
    with raises(HttpResponseError, 409, "OperationNotAllowedOnIncrementalCopyBlob"):
        dst.upload_page(page(3), offset=0, length=512)


def test_incremental_copy_refusals(container):
    src = container.get_blob_client("vhd")
    src.create_page_blob(size=1024)
    block = container.get_blob_client("block")
    block.upload_blob(b"x")
    block_snap = block.create_snapshot()["snapshot"]
    dst = container.get_blob_client("dst")
    with raises(HttpResponseError, 409, "IncrementalCopySourceMustBeSnapshot"):
        dst.start_copy_from_url(src.url, incremental_copy=True)
    with raises(HttpResponseError, 409, "InvalidSourceBlobType"):
        dst.start_copy_from_url(
            container.get_blob_client("block", snapshot=block_snap).url, incremental_copy=True
        )
    # A destination that is not an incremental copy of this source.
    snap = src.create_snapshot()["snapshot"]
    with raises(HttpResponseError, 409, "IncrementalCopyBlobMismatch"):
        block.start_copy_from_url(
            container.get_blob_client("vhd", snapshot=snap).url, incremental_copy=True
        )


def test_upload_pages_from_url(container, account_key):
    """Upload Pages From URL writes x-ms-source-range of a source on this
    server (read through a SAS) into the pages named."""
    from test_from_url import source_url

    data = bytes(range(256)) * 8
    src = container.get_blob_client("src")
    src.upload_blob(data)
    url = source_url(src, account_key)
    dst = container.get_blob_client("dst")
    dst.create_page_blob(size=4096)
    result = dst.upload_pages_from_url(url, offset=1024, length=1024, source_offset=512)
    assert result["blob_sequence_number"] == 0
    assert dst.download_blob().readall() == bytes(1024) + data[512:1536] + bytes(2048)
    assert ranges_of(dst) == ([(1024, 2047)], [])
    with raises(HttpResponseError, 412, "SequenceNumberConditionNotMet"):
        dst.upload_pages_from_url(
            url, offset=0, length=512, source_offset=0, if_sequence_number_eq=5
        )


def test_upload_pages_from_url_of_another_host(container, other_server):
    """Upload Pages From URL with a source on a second server: the fetcher
    reads x-ms-source-range of it; a range past the source's end and a
    missing source are refused. Incremental Copy still needs a source on
    this server (it reads the source's page ranges)."""
    from test_copy_remote import sas_url

    source = other_server.get_container_client(unique_name("pgsrc"))
    source.create_container()
    try:
        data = bytes(range(256)) * 8
        src = source.get_blob_client("src")
        src.upload_blob(data)
        url = sas_url(src)
        dst = container.get_blob_client("dst")
        dst.create_page_blob(size=4096)
        dst.upload_pages_from_url(url, offset=2048, length=1024, source_offset=512)
        assert dst.download_blob().readall() == bytes(2048) + data[512:1536] + bytes(1024)
        assert ranges_of(dst) == ([(2048, 3071)], [])
        with raises(HttpResponseError, 400, "InvalidHeaderValue"):
            dst.upload_pages_from_url(url, offset=0, length=1024, source_offset=1536)
        missing = sas_url(source.get_blob_client("none"))
        with raises(HttpResponseError, 404, "CannotVerifyCopySource"):
            dst.upload_pages_from_url(missing, offset=0, length=512, source_offset=0)
        assert ranges_of(dst) == ([(2048, 3071)], [])

        vhd = source.get_blob_client("vhd")
        vhd.create_page_blob(size=1024)
        snap = vhd.create_snapshot()["snapshot"]
        remote_snapshot = f"{vhd.url}?snapshot={snap}"
        with raises(HttpResponseError, 404, "CannotVerifyCopySource"):
            container.get_blob_client("inc").start_copy_from_url(
                remote_snapshot, incremental_copy=True
            )
    finally:
        source.delete_container()


def test_copy_blob_of_a_page_blob_copies_pages_and_sequence_number(container):
    """Copy Blob of a page blob (and of an incremental-copy snapshot): a
    plain page blob with the same pages and sequence number."""
    src = container.get_blob_client("src")
    src.create_page_blob(size=4096, sequence_number=9)
    src.upload_page(page(4), offset=1024, length=512)
    dst = container.get_blob_client("dst")
    dst.start_copy_from_url(src.url)
    props = dst.get_blob_properties()
    assert props.blob_type == BlobType.PageBlob
    assert props.page_blob_sequence_number == 9
    assert ranges_of(dst) == ([(1024, 1535)], [])
    assert dst.download_blob().readall() == bytes(1024) + page(4) + bytes(2560)
    # A write to the copy leaves the source alone.
    dst.upload_page(page(5), offset=1024, length=512)
    assert src.download_blob(offset=1024, length=512).readall() == page(4)
    # A copy of an incremental copy's snapshot is a plain page blob.
    snap = src.create_snapshot()["snapshot"]
    inc = container.get_blob_client("inc")
    inc.start_copy_from_url(container.get_blob_client("src", snapshot=snap).url, incremental_copy=True)
    inc_snap = inc.get_blob_properties().copy.destination_snapshot
    plain = container.get_blob_client("plain")
    plain.start_copy_from_url(container.get_blob_client("inc", snapshot=inc_snap).url)
    assert not plain.get_blob_properties().copy.incremental_copy
    plain.upload_page(page(6), offset=0, length=512)
