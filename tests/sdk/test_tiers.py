"""Access tiers through the SDK: set_standard_blob_tier, uploads with a tier,
the tier in properties and listings, what an archived blob refuses, and
rehydration.

Rehydration runs on a second server started with STOWAGE_TEST_CLOCK=1: its
clock is a manual one that a test moves with the test-only request
`POST /_stowage/test-clock?advance=<seconds>`, so nothing sleeps.

The batch calls are ContainerClient.set_standard_blob_tier_blobs and
delete_blobs (container scope); the Python SDK's BlobServiceClient has no
batch call, so the account scope is covered by the Rust e2e suite.
"""

from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (
    BlobClient,
    BlobSasPermissions,
    BlobServiceClient,
    PartialBatchErrorException,
    RehydratePriority,
    StandardBlobTier,
    generate_blob_sas,
)

import conftest
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, unique_name

# The server's default --rehydrateDelay, in seconds.
REHYDRATE_SECONDS = 5


def error_code(excinfo):
    return excinfo.value.error_code


@pytest.fixture(scope="module")
def clock_server(tmp_path_factory):
    """A server on a manual clock: (service client, advance(seconds))."""
    yield from conftest.clock_server(tmp_path_factory, "clock")


@pytest.fixture
def clock_container(clock_server):
    service, _ = clock_server
    client = service.get_container_client(unique_name("tiers-clock"))
    client.create_container()
    yield client
    client.delete_container()


def test_set_standard_blob_tier_changes_the_reported_tier(container):
    blob = container.upload_blob("b", b"data")
    props = blob.get_blob_properties()
    assert (props.blob_tier, props.blob_tier_inferred) == ("Hot", True)
    assert props.blob_tier_change_time is None
    etag = props.etag
    for tier in (StandardBlobTier.COOL, StandardBlobTier.COLD, StandardBlobTier.HOT):
        blob.set_standard_blob_tier(tier)
        props = blob.get_blob_properties()
        assert props.blob_tier == tier
        assert not props.blob_tier_inferred
        assert props.blob_tier_change_time is not None
        assert props.etag == etag
    listed = {b.name: b for b in container.list_blobs()}
    assert listed["b"].blob_tier == "Hot"
    assert listed["b"].blob_tier_change_time is not None


def test_upload_with_a_tier(container):
    for tier in ("Hot", "Cool", "Cold", "Archive"):
        container.upload_blob(tier, b"x", standard_blob_tier=StandardBlobTier(tier))
    listed = {b.name: b for b in container.list_blobs()}
    for tier in ("Hot", "Cool", "Cold", "Archive"):
        assert listed[tier].blob_tier == tier
        assert not listed[tier].blob_tier_inferred
        assert container.get_blob_client(tier).get_blob_properties().blob_tier == tier
    # Staged blocks committed with a tier.
    blob = container.get_blob_client("staged")
    blob.stage_block("AAAA", b"abc")
    blob.commit_block_list(["AAAA"], standard_blob_tier=StandardBlobTier.COOL)
    assert blob.get_blob_properties().blob_tier == "Cool"


def test_append_blobs_refuse_a_tier(container):
    blob = container.get_blob_client("log")
    blob.create_append_blob()
    with pytest.raises(HttpResponseError) as e:
        blob.set_standard_blob_tier("Cool")
    assert e.value.status_code == 400
    assert error_code(e) == "AccessTierNotSupportedForBlobType"


def test_an_archived_blob_refuses_reads_and_changes(container):
    blob = container.upload_blob("a", b"cold data", standard_blob_tier=StandardBlobTier.ARCHIVE)
    props = blob.get_blob_properties()
    assert props.blob_tier == "Archive"
    assert props.archive_status is None
    for action in (
        lambda: blob.download_blob().readall(),
        lambda: blob.set_blob_metadata({"k": "v"}),
        lambda: blob.set_http_headers(),
        lambda: blob.create_snapshot(),
        lambda: container.get_blob_client("copy").start_copy_from_url(blob.url),
    ):
        with pytest.raises(HttpResponseError) as e:
            action()
        assert (e.value.status_code, error_code(e)) == (409, "BlobArchived")
    # Metadata stays readable, and the blob can be deleted.
    assert blob.get_blob_properties().metadata == {}
    blob.delete_blob()


def test_a_snapshot_takes_its_own_tier(container):
    blob = container.upload_blob("b", b"data")
    snapshot = blob.create_snapshot()
    snap = container.get_blob_client("b", snapshot=snapshot["snapshot"])
    snap.set_standard_blob_tier("Cool")
    assert snap.get_blob_properties().blob_tier == "Cool"
    assert blob.get_blob_properties().blob_tier_inferred


def test_set_standard_blob_tier_blobs_is_a_container_batch(container):
    names = ["a", "b", "dir/c"]
    for name in names:
        container.upload_blob(name, b"x")
    responses = list(container.set_standard_blob_tier_blobs("Cool", *names))
    assert [r.status_code for r in responses] == [200, 200, 200]
    for name in names:
        assert container.get_blob_client(name).get_blob_properties().blob_tier == "Cool"
    # Archive, then back: each part answers 202 (a rehydration).
    list(container.set_standard_blob_tier_blobs("Archive", *names))
    responses = list(
        container.set_standard_blob_tier_blobs(
            "Hot", *names, rehydrate_priority=RehydratePriority.HIGH
        )
    )
    assert [r.status_code for r in responses] == [202, 202, 202]
    props = container.get_blob_client("a").get_blob_properties()
    assert props.archive_status == "rehydrate-pending-to-hot"
    assert props.rehydrate_priority == "High"
    # A missing blob fails alone.
    with pytest.raises(PartialBatchErrorException) as e:
        container.set_standard_blob_tier_blobs("Cool", "missing")
    assert [p.status_code for p in e.value.parts] == [404]
    # And delete_blobs clears them (deletes are allowed while rehydrating).
    responses = list(container.delete_blobs(*names))
    assert [r.status_code for r in responses] == [202, 202, 202]
    assert list(container.list_blobs()) == []


def test_rehydration_completes_when_the_clock_has_moved(clock_server, clock_container):
    _, advance = clock_server
    blob = clock_container.upload_blob("a", b"archived", standard_blob_tier=StandardBlobTier.ARCHIVE)
    blob.set_standard_blob_tier("Cool", rehydrate_priority="Standard")
    props = blob.get_blob_properties()
    assert props.blob_tier == "Archive"
    assert props.archive_status == "rehydrate-pending-to-cool"
    assert props.rehydrate_priority == "Standard"
    listed = list(clock_container.list_blobs())[0]
    assert listed.archive_status == "rehydrate-pending-to-cool"
    with pytest.raises(HttpResponseError) as e:
        blob.download_blob().readall()
    assert (e.value.status_code, error_code(e)) == (409, "BlobBeingRehydrated")
    with pytest.raises(HttpResponseError) as e:
        blob.set_standard_blob_tier("Hot")
    assert error_code(e) == "BlobBeingRehydrated"

    advance(REHYDRATE_SECONDS - 1)
    assert blob.get_blob_properties().archive_status == "rehydrate-pending-to-cool"
    advance(1)
    props = blob.get_blob_properties()
    assert (props.blob_tier, props.archive_status) == ("Cool", None)
    assert props.rehydrate_priority is None
    assert blob.download_blob().readall() == b"archived"


def test_a_batch_rehydration_completes_too(clock_server, clock_container):
    _, advance = clock_server
    names = ["x", "y"]
    for name in names:
        clock_container.upload_blob(name, name.encode(), standard_blob_tier=StandardBlobTier.ARCHIVE)
    responses = list(clock_container.set_standard_blob_tier_blobs("Cold", *names))
    assert [r.status_code for r in responses] == [202, 202]
    advance(REHYDRATE_SECONDS)
    for name in names:
        blob = clock_container.get_blob_client(name)
        assert blob.get_blob_properties().blob_tier == "Cold"
        assert blob.download_blob().readall() == name.encode()


def test_a_version_id_names_no_version(container):
    """Versioning is off: a Set Blob Tier naming a version finds nothing."""
    container.upload_blob("b", b"data")
    version = container.get_blob_client("b", version_id="2024-09-03T10:15:07.0000000Z")
    with pytest.raises(HttpResponseError) as e:
        version.set_standard_blob_tier("Cool")
    assert (e.value.status_code, error_code(e)) == (404, "BlobNotFound")


def test_a_sas_needs_write_permission(container):
    container.upload_blob("b", b"data")
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)

    def client_with(permission):
        sas = generate_blob_sas(
            ACCOUNT_NAME,
            container.container_name,
            "b",
            account_key=ACCOUNT_KEY,
            permission=permission,
            expiry=expiry,
        )
        return BlobClient.from_blob_url(
            container.get_blob_client("b").url, credential=sas, **CLIENT_OPTIONS
        )

    client_with(BlobSasPermissions(write=True)).set_standard_blob_tier("Cool")
    assert container.get_blob_client("b").get_blob_properties().blob_tier == "Cool"
    with pytest.raises(HttpResponseError) as e:
        client_with(BlobSasPermissions(read=True)).set_standard_blob_tier("Hot")
    assert (e.value.status_code, error_code(e)) == (403, "AuthorizationPermissionMismatch")


def test_a_copy_of_an_archived_blob_rehydrates(clock_server, clock_container):
    _, advance = clock_server
    source = clock_container.upload_blob("src", b"archived", standard_blob_tier=StandardBlobTier.ARCHIVE)
    copy = clock_container.get_blob_client("copy")
    with pytest.raises(HttpResponseError) as e:
        copy.start_copy_from_url(source.url)
    assert (e.value.status_code, error_code(e)) == (409, "BlobArchived")
    started = copy.start_copy_from_url(source.url, standard_blob_tier=StandardBlobTier.HOT)
    assert started["copy_status"] == "pending"
    props = copy.get_blob_properties()
    assert (props.copy.status, props.copy.progress) == ("pending", "0/8")
    assert props.archive_status == "rehydrate-pending-to-hot"
    advance(REHYDRATE_SECONDS)
    props = copy.get_blob_properties()
    assert (props.copy.status, props.blob_tier, props.archive_status) == ("success", "Hot", None)
    assert copy.download_blob().readall() == b"archived"
    assert source.get_blob_properties().blob_tier == "Archive"
