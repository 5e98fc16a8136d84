"""Blob and container leases through BlobLeaseClient (docs/wire/leases.md).

Lease expiry and the end of a break period need a clock; they are left to the
Rust tests, which drive an injected clock. Here every transition is immediate:
infinite leases, fixed leases checked only while fresh, and breaks with
period 0 or a period that is still running.

SDK mapping: 409 answers raise ResourceExistsError; a 412 whose code is not
ConditionNotMet (all lease codes) raises plain HttpResponseError.
"""

import uuid

from azure.core.exceptions import HttpResponseError, ResourceExistsError
from azure.storage.blob import BlobLeaseClient, ContentSettings

from helpers import raises


def make_blob(container, name="leased", data=b"data"):
    blob = container.get_blob_client(name)
    blob.upload_blob(data, overwrite=True)
    return blob


def lease_state(client):
    """(status, state, duration) of a blob or container."""
    if hasattr(client, "get_blob_properties"):
        lease = client.get_blob_properties().lease
    else:
        lease = client.get_container_properties().lease
    return lease.status, lease.state, lease.duration


def test_acquire_and_release_infinite_lease(container):
    """Acquire (201) returns a lease id; the blob reports locked / leased /
    infinite; release (200) makes it unlocked / available. Neither action
    changes the ETag or Last-Modified."""
    blob = make_blob(container)
    before = blob.get_blob_properties()
    assert lease_state(blob) == ("unlocked", "available", None)
    lease = blob.acquire_lease(lease_duration=-1)
    uuid.UUID(lease.id)
    assert lease.etag == before.etag
    assert lease_state(blob) == ("locked", "leased", "infinite")
    lease.release()
    assert lease_state(blob) == ("unlocked", "available", None)
    after = blob.get_blob_properties()
    assert (after.etag, after.last_modified) == (before.etag, before.last_modified)


def test_fixed_lease_with_proposed_id(container):
    """Acquire with a duration of 15-60 s and a proposed id: the lease has that
    id and reports duration fixed."""
    blob = make_blob(container)
    proposed = str(uuid.uuid4())
    lease = blob.acquire_lease(lease_duration=15, lease_id=proposed)
    assert lease.id == proposed
    assert lease_state(blob) == ("locked", "leased", "fixed")
    lease.release()


def test_invalid_lease_duration_is_400(container):
    """A duration other than -1 or 15..60: 400 InvalidHeaderValue."""
    blob = make_blob(container)
    for duration in (10, 61):
        with raises(HttpResponseError, 400, "InvalidHeaderValue"):
            blob.acquire_lease(lease_duration=duration)
    assert lease_state(blob) == ("unlocked", "available", None)


def test_acquire_on_leased_blob(container):
    """A second acquire with another id: 409 LeaseAlreadyPresent. Acquire with
    the current id succeeds (201) and keeps the lease."""
    blob = make_blob(container)
    lease = blob.acquire_lease(lease_duration=-1)
    with raises(ResourceExistsError, 409, "LeaseAlreadyPresent"):
        blob.acquire_lease(lease_duration=-1)
    with raises(ResourceExistsError, 409, "LeaseAlreadyPresent"):
        BlobLeaseClient(blob, lease_id=str(uuid.uuid4())).acquire(lease_duration=-1)
    again = BlobLeaseClient(blob, lease_id=lease.id)
    again.acquire(lease_duration=-1)
    assert again.id == lease.id
    lease.release()


def test_renew(container):
    """Renew with the lease id: 200, same id. With another id: 409
    LeaseIdMismatchWithLeaseOperation. On an unleased blob: 409
    LeaseIdMismatchWithLeaseOperation."""
    blob = make_blob(container)
    lease = blob.acquire_lease(lease_duration=15)
    lease_id = lease.id
    lease.renew()
    assert lease.id == lease_id
    assert lease_state(blob) == ("locked", "leased", "fixed")
    with raises(ResourceExistsError, 409, "LeaseIdMismatchWithLeaseOperation"):
        BlobLeaseClient(blob, lease_id=str(uuid.uuid4())).renew()
    lease.release()
    with raises(ResourceExistsError, 409, "LeaseIdMismatchWithLeaseOperation"):
        BlobLeaseClient(blob, lease_id=lease_id).renew()


def test_change(container):
    """Change (200) swaps the id; writes then need the new id (the old one gets
    412 LeaseIdMismatchWithBlobOperation); a change presenting a wrong current
    id is 409 LeaseIdMismatchWithLeaseOperation."""
    blob = make_blob(container)
    lease = blob.acquire_lease(lease_duration=-1)
    old_id = lease.id
    new_id = str(uuid.uuid4())
    lease.change(proposed_lease_id=new_id)
    assert lease.id == new_id
    with raises(HttpResponseError, 412, "LeaseIdMismatchWithBlobOperation"):
        blob.set_blob_metadata({"a": "b"}, lease=old_id)
    blob.set_blob_metadata({"a": "b"}, lease=new_id)
    with raises(ResourceExistsError, 409, "LeaseIdMismatchWithLeaseOperation"):
        BlobLeaseClient(blob, lease_id=str(uuid.uuid4())).change(proposed_lease_id=str(uuid.uuid4()))
    lease.release()


def test_release_twice_is_409(container):
    """Release with the right id: 200; a second release finds no lease: 409
    LeaseIdMismatchWithLeaseOperation. A wrong id on a leased blob: 409 too."""
    blob = make_blob(container)
    lease = blob.acquire_lease(lease_duration=-1)
    with raises(ResourceExistsError, 409, "LeaseIdMismatchWithLeaseOperation"):
        BlobLeaseClient(blob, lease_id=str(uuid.uuid4())).release()
    lease_id = lease.id
    lease.release()
    with raises(ResourceExistsError, 409, "LeaseIdMismatchWithLeaseOperation"):
        BlobLeaseClient(blob, lease_id=lease_id).release()


def test_break_infinite_lease_immediately(container):
    """Break without a period on an infinite lease: 202 with lease time 0, state
    broken (unlocked). Renew then: 409 LeaseIsBrokenAndCannotBeRenewed. A
    write without id is allowed; a new acquire succeeds."""
    blob = make_blob(container)
    lease = blob.acquire_lease(lease_duration=-1)
    assert lease.break_lease() == 0
    assert lease_state(blob) == ("unlocked", "broken", None)
    with raises(ResourceExistsError, 409, "LeaseIsBrokenAndCannotBeRenewed"):
        lease.renew()
    blob.set_blob_metadata({"after": "break"})
    fresh = blob.acquire_lease(lease_duration=-1)
    assert lease_state(blob) == ("locked", "leased", "infinite")
    fresh.release()


def test_breaking_lease(container):
    """Break with a period of 60 s on an infinite lease: 202, lease time 60,
    state breaking (still locked). While breaking: acquire 409
    LeaseAlreadyPresent, acquire with the same id 409
    LeaseIsBreakingAndCannotBeAcquired, change 409
    LeaseIsBreakingAndCannotBeChanged, renew 409
    LeaseIsBrokenAndCannotBeRenewed, a write without id 412 LeaseIdMissing, a
    write with the id allowed. A break with period 0 then ends it: broken."""
    blob = make_blob(container)
    lease = blob.acquire_lease(lease_duration=-1)
    assert lease.break_lease(lease_break_period=60) == 60
    assert lease_state(blob)[:2] == ("locked", "breaking")
    with raises(ResourceExistsError, 409, "LeaseAlreadyPresent"):
        blob.acquire_lease(lease_duration=-1)
    with raises(ResourceExistsError, 409, "LeaseIsBreakingAndCannotBeAcquired"):
        BlobLeaseClient(blob, lease_id=lease.id).acquire(lease_duration=-1)
    with raises(ResourceExistsError, 409, "LeaseIsBreakingAndCannotBeChanged"):
        BlobLeaseClient(blob, lease_id=lease.id).change(proposed_lease_id=str(uuid.uuid4()))
    with raises(ResourceExistsError, 409, "LeaseIsBrokenAndCannotBeRenewed"):
        BlobLeaseClient(blob, lease_id=lease.id).renew()
    with raises(HttpResponseError, 412, "LeaseIdMissing"):
        blob.set_blob_metadata({"no": "lease"})
    blob.set_blob_metadata({"with": "lease"}, lease=lease.id)
    assert lease.break_lease(lease_break_period=0) == 0
    assert lease_state(blob) == ("unlocked", "broken", None)


def test_break_without_lease_is_409(container):
    """Break on a blob that has never been leased: 409
    LeaseNotPresentWithLeaseOperation."""
    blob = make_blob(container)
    with raises(ResourceExistsError, 409, "LeaseNotPresentWithLeaseOperation"):
        BlobLeaseClient(blob).break_lease()


def test_writes_on_leased_blob_need_the_lease_id(container):
    """On a leased blob every write without x-ms-lease-id is 412
    LeaseIdMissing and changes nothing; with a wrong id 412
    LeaseIdMismatchWithBlobOperation; with the right id it succeeds and the
    lease is kept (also across an overwrite)."""
    blob = make_blob(container, data=b"original")
    lease = blob.acquire_lease(lease_duration=-1)
    wrong = str(uuid.uuid4())
    writes = {
        "upload": lambda **kw: blob.upload_blob(b"new", overwrite=True, **kw),
        "metadata": lambda **kw: blob.set_blob_metadata({"m": "1"}, **kw),
        "properties": lambda **kw: blob.set_http_headers(ContentSettings(content_type="text/x"), **kw),
        "delete": lambda **kw: blob.delete_blob(**kw),
    }
    for name, write in writes.items():
        with raises(HttpResponseError, 412, "LeaseIdMissing"):
            write()
        with raises(HttpResponseError, 412, "LeaseIdMismatchWithBlobOperation"):
            write(lease=wrong)
    assert blob.download_blob().readall() == b"original"

    blob.upload_blob(b"new", overwrite=True, lease=lease)
    blob.set_blob_metadata({"m": "1"}, lease=lease)
    blob.set_http_headers(ContentSettings(content_type="text/x"), lease=lease)
    assert lease_state(blob) == ("locked", "leased", "infinite")
    assert blob.download_blob().readall() == b"new"
    blob.delete_blob(lease=lease)
    assert not blob.exists()


def test_reads_on_leased_blob(container):
    """Reads without a lease id succeed on a leased blob; a read with a wrong id
    is 412 LeaseIdMismatchWithBlobOperation; with the right id it succeeds."""
    blob = make_blob(container, data=b"readable")
    lease = blob.acquire_lease(lease_duration=-1)
    assert blob.download_blob().readall() == b"readable"
    assert blob.download_blob(lease=lease).readall() == b"readable"
    with raises(HttpResponseError, 412, "LeaseIdMismatchWithBlobOperation"):
        blob.download_blob(lease=str(uuid.uuid4()))
    with raises(HttpResponseError, 412, "LeaseIdMismatchWithBlobOperation"):
        blob.get_blob_properties(lease=str(uuid.uuid4()))
    lease.release()


def test_lease_id_on_unleased_blob_is_412(container):
    """A lease id sent to a blob without a lease: 412
    LeaseNotPresentWithBlobOperation, for writes and for reads; also for Put
    Blob creating a new blob."""
    blob = make_blob(container)
    some_id = str(uuid.uuid4())
    with raises(HttpResponseError, 412, "LeaseNotPresentWithBlobOperation"):
        blob.set_blob_metadata({"a": "b"}, lease=some_id)
    with raises(HttpResponseError, 412, "LeaseNotPresentWithBlobOperation"):
        blob.download_blob(lease=some_id)
    with raises(HttpResponseError, 412, "LeaseNotPresentWithBlobOperation"):
        container.get_blob_client("new").upload_blob(b"x", lease=some_id)
    assert blob.get_blob_properties().metadata == {}


def test_lease_state_in_listing(container):
    """List Blobs reports LeaseStatus / LeaseState / LeaseDuration per blob."""
    leased = make_blob(container, "a-leased")
    make_blob(container, "b-free")
    lease = leased.acquire_lease(lease_duration=-1)
    by_name = {b.name: b.lease for b in container.list_blobs()}
    assert (by_name["a-leased"].status, by_name["a-leased"].state, by_name["a-leased"].duration) == (
        "locked", "leased", "infinite")
    assert (by_name["b-free"].status, by_name["b-free"].state, by_name["b-free"].duration) == (
        "unlocked", "available", None)
    lease.release()


def test_container_lease_guards_delete(container, service):
    """A container lease guards only Delete Container: without the id 412
    LeaseIdMissing, with a wrong id 412 LeaseIdMismatchWithContainerOperation;
    other operations need no id; with the id the delete succeeds. The lease
    shows in Get Container Properties and List Containers, and does not change
    the container's ETag."""
    before = container.get_container_properties().etag
    lease = container.acquire_lease(lease_duration=-1)
    assert lease_state(container) == ("locked", "leased", "infinite")
    assert container.get_container_properties().etag == before
    (listed,) = list(service.list_containers(name_starts_with=container.container_name))
    assert (listed.lease.status, listed.lease.state, listed.lease.duration) == ("locked", "leased", "infinite")

    container.set_container_metadata({"still": "writable"})
    container.upload_blob("inside", b"blob writes are not guarded")
    with raises(HttpResponseError, 412, "LeaseIdMissing"):
        container.delete_container()
    with raises(HttpResponseError, 412, "LeaseIdMismatchWithContainerOperation"):
        container.delete_container(lease=str(uuid.uuid4()))
    with raises(HttpResponseError, 412, "LeaseIdMismatchWithContainerOperation"):
        container.get_container_properties(lease=str(uuid.uuid4()))
    container.delete_container(lease=lease)
    assert not container.exists()


def test_container_lease_actions(container):
    """Container leases follow the same state machine: acquire again 409
    LeaseAlreadyPresent, change, renew, break (0), release of a broken lease."""
    lease = container.acquire_lease(lease_duration=-1)
    with raises(ResourceExistsError, 409, "LeaseAlreadyPresent"):
        container.acquire_lease(lease_duration=-1)
    new_id = str(uuid.uuid4())
    lease.change(proposed_lease_id=new_id)
    assert lease.id == new_id
    lease.renew()
    assert lease.break_lease(lease_break_period=0) == 0
    assert lease_state(container) == ("unlocked", "broken", None)
    lease.release()
    assert lease_state(container) == ("unlocked", "available", None)
    with raises(HttpResponseError, 412, "LeaseNotPresentWithContainerOperation"):
        container.delete_container(lease=new_id)


def test_blob_leases_do_not_block_container_delete(container, service):
    """A container whose blobs are leased can still be deleted."""
    blob = make_blob(container)
    blob.acquire_lease(lease_duration=-1)
    container.delete_container()
    assert not container.exists()
