"""Snapshots and same-account Copy Blob (docs/wire/blobs.md; docs/wire/listing.md#snapshots-in-a-listing)."""

import re
from datetime import timedelta

import pytest
from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError

from helpers import error_code, raises

SNAPSHOT_ID = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$")


def make_blob(container, name="base", data=b"version 1", **kwargs):
    blob = container.get_blob_client(name)
    blob.upload_blob(data, overwrite=True, **kwargs)
    return blob


def test_snapshot_keeps_the_old_content(container):
    """Snapshot Blob (201) returns an id of the form 2024-09-03T10:15:07.1234567Z
    and the base's ETag; the snapshot reads the content of that moment after
    the base is overwritten; the base's ETag does not change."""
    blob = make_blob(container, metadata={"v": "1"})
    before = blob.get_blob_properties()
    snap = blob.create_snapshot()
    assert SNAPSHOT_ID.match(snap["snapshot"])
    assert snap["etag"] == before.etag
    assert blob.get_blob_properties().etag == before.etag

    blob.upload_blob(b"version 2", overwrite=True)
    old = container.get_blob_client("base", snapshot=snap["snapshot"])
    assert old.download_blob().readall() == b"version 1"
    props = old.get_blob_properties()
    assert props.metadata == {"v": "1"}
    assert props.snapshot == snap["snapshot"]
    assert blob.download_blob().readall() == b"version 2"


def test_snapshot_with_metadata(container):
    """Snapshot Blob with x-ms-meta-*: the snapshot gets exactly that metadata;
    the base keeps its own."""
    blob = make_blob(container, metadata={"base": "yes"})
    snap = blob.create_snapshot(metadata={"snap": "yes"})
    shot = container.get_blob_client("base", snapshot=snap["snapshot"])
    assert shot.get_blob_properties().metadata == {"snap": "yes"}
    assert blob.get_blob_properties().metadata == {"base": "yes"}


def test_snapshot_ids_are_unique(container):
    """Snapshots taken in quick succession get distinct, increasing ids."""
    blob = make_blob(container)
    ids = [blob.create_snapshot()["snapshot"] for _ in range(3)]
    assert len(set(ids)) == 3
    assert ids == sorted(ids)


def test_delete_blob_with_snapshots(container):
    """Delete Blob on a base with snapshots: 409 SnapshotsPresent. With
    x-ms-delete-snapshots: only, the snapshots go and the base stays; with
    include, both go."""
    blob = make_blob(container)
    blob.create_snapshot()
    blob.create_snapshot()
    with raises(ResourceExistsError, 409, "SnapshotsPresent"):
        blob.delete_blob()
    blob.delete_blob(delete_snapshots="only")
    assert blob.exists()
    assert [b.snapshot for b in container.list_blobs(include=["snapshots"])] == [None]

    blob.create_snapshot()
    blob.delete_blob(delete_snapshots="include")
    assert list(container.list_blobs(include=["snapshots"])) == []


def test_delete_one_snapshot(container):
    """Delete Blob with ?snapshot= removes only that snapshot (202); reading it
    afterwards is 404 BlobNotFound."""
    blob = make_blob(container)
    first = blob.create_snapshot()["snapshot"]
    second = blob.create_snapshot()["snapshot"]
    container.get_blob_client("base", snapshot=first).delete_blob()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        container.get_blob_client("base", snapshot=first).download_blob()
    assert container.get_blob_client("base", snapshot=second).download_blob().readall() == b"version 1"


def test_unknown_snapshot_is_404(container):
    """Get Blob with a well-formed snapshot id that the blob does not have: 404
    BlobNotFound, while its real snapshot and the base stay readable."""
    blob = make_blob(container)
    real = blob.create_snapshot()["snapshot"]
    ghost = container.get_blob_client("base", snapshot="2001-01-01T00:00:00.0000000Z")
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        ghost.download_blob()
    assert ghost.exists() is False
    assert container.get_blob_client("base", snapshot=real).download_blob().readall() == b"version 1"
    assert blob.exists()


def test_list_with_snapshots(container):
    """include=snapshots lists, per name, the snapshots oldest first and then the
    base blob; without it only base blobs are listed."""
    a = make_blob(container, "a")
    make_blob(container, "b")
    s1 = a.create_snapshot()["snapshot"]
    s2 = a.create_snapshot()["snapshot"]
    listed = [(b.name, b.snapshot) for b in container.list_blobs(include=["snapshots"])]
    assert listed == [("a", s1), ("a", s2), ("a", None), ("b", None)]
    assert [(b.name, b.snapshot) for b in container.list_blobs()] == [("a", None), ("b", None)]
    paged = [[(b.name, b.snapshot) for b in page]
             for page in container.list_blobs(include=["snapshots"], results_per_page=2).by_page()]
    assert paged == [[("a", s1), ("a", s2)], [("a", None), ("b", None)]]


def test_copy_within_account(container, new_container):
    """Copy Blob from a blob of the same account completes at once: 202 with
    x-ms-copy-status success and a copy id; the destination has the source's
    content, content properties and metadata, and copy properties."""
    source = make_blob(container, "src", b"copy me", metadata={"from": "source"})
    other = new_container("copy-dest")
    dest = other.get_blob_client("dst")
    result = dest.start_copy_from_url(source.url)
    assert result["copy_status"] == "success"
    assert result["copy_id"]
    assert dest.download_blob().readall() == b"copy me"
    props = dest.get_blob_properties()
    assert props.metadata == {"from": "source"}
    assert props.copy.status == "success"
    assert props.copy.id == result["copy_id"]
    assert props.copy.source
    assert props.copy.progress == "7/7"
    assert props.etag == result["etag"]
    # The source is unchanged.
    assert source.download_blob().readall() == b"copy me"


def test_copy_with_new_metadata_and_overwrite(container):
    """Copy Blob with x-ms-meta-* gives the destination exactly that metadata;
    copying over an existing blob replaces it."""
    source = make_blob(container, "src", b"new", metadata={"from": "source"})
    dest = make_blob(container, "dst", b"old content", metadata={"old": "yes"})
    dest.start_copy_from_url(source.url, metadata={"mine": "1"})
    assert dest.download_blob().readall() == b"new"
    assert dest.get_blob_properties().metadata == {"mine": "1"}


def test_copy_from_snapshot(container):
    """A snapshot URL as copy source copies that snapshot's content; copying it
    over its base restores the old version."""
    blob = make_blob(container)
    snap = blob.create_snapshot()["snapshot"]
    blob.upload_blob(b"version 2", overwrite=True)
    source = container.get_blob_client("base", snapshot=snap)
    blob.start_copy_from_url(source.url)
    assert blob.download_blob().readall() == b"version 1"


def test_copy_from_missing_source_is_404(container):
    """A source blob of the same account that does not exist: 404
    BlobNotFound, as a read of it (the service's recorded answer); no
    destination is created."""
    dest = container.get_blob_client("dst")
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        dest.start_copy_from_url(container.get_blob_client("no-such-source").url)
    assert not dest.exists()


def test_copy_from_an_unreachable_host_is_refused(container):
    """A source on another host that cannot be reached (here: a closed port
    of 127.0.0.1): 404 CannotVerifyCopySource, and no destination."""
    dest = container.get_blob_client("dst")
    with raises(ResourceNotFoundError, 404, "CannotVerifyCopySource"):
        dest.start_copy_from_url("http://127.0.0.1:1/devstoreaccount1/c/b")
    assert not dest.exists()


def test_copy_source_conditions(container):
    """A failed x-ms-source-if-* condition: 412 SourceConditionNotMet
    (unverified; emulators answer ConditionNotMet, either is accepted), and the
    destination is not written; a holding condition copies."""
    source = make_blob(container, "src", b"data")
    props = source.get_blob_properties()
    dest = container.get_blob_client("dst")
    with pytest.raises(HttpResponseError) as info:
        dest.start_copy_from_url(source.url, source_etag='"0x8D0000000000000"',
                                 source_match_condition=MatchConditions.IfNotModified)
    assert info.value.status_code == 412
    assert error_code(info.value) in ("SourceConditionNotMet", "ConditionNotMet")
    with pytest.raises(HttpResponseError) as info:
        dest.start_copy_from_url(source.url, source_if_modified_since=props.last_modified + timedelta(hours=1))
    assert info.value.status_code == 412
    assert not dest.exists()
    dest.start_copy_from_url(source.url, source_etag=props.etag,
                             source_match_condition=MatchConditions.IfNotModified)
    assert dest.download_blob().readall() == b"data"


def test_abort_finished_copy_is_409(container):
    """Abort Copy Blob on a copy that has completed: 409 NoPendingCopyOperation."""
    source = make_blob(container, "src")
    dest = container.get_blob_client("dst")
    copy_id = dest.start_copy_from_url(source.url)["copy_id"]
    with raises(ResourceExistsError, 409, "NoPendingCopyOperation"):
        dest.abort_copy(copy_id)
    assert dest.download_blob().readall() == b"version 1"


def test_copy_appears_in_listing_with_include_copy(container):
    """include=copy adds CopyId / CopyStatus / CopySource to copied blobs."""
    source = make_blob(container, "a-src")
    dest = container.get_blob_client("b-dst")
    copy_id = dest.start_copy_from_url(source.url)["copy_id"]
    listed = {b.name: b for b in container.list_blobs(include=["copy"])}
    assert listed["b-dst"].copy.id == copy_id
    assert listed["b-dst"].copy.status == "success"
    assert listed["a-src"].copy.id is None
