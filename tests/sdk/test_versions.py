"""Blob versioning through the SDK (docs/wire/versions.md): version ids on
writes, reads, tags, tiers and deletes by version_id, include=["versions"]
listings, promoting a version by copying it over the blob, and a kill -9 in
the middle that loses no version.

Versioning is switched on per account, so these tests run on a server of
their own started with STOWAGE_BLOB_VERSIONING_ACCOUNTS (the environment
form of --blobVersioningAccounts).
"""

import os
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.blob import (
    BlobClient,
    BlobSasPermissions,
    BlobServiceClient,
    StandardBlobTier,
    generate_blob_sas,
)

import conftest
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, raises, unique_name

VERSIONING_ENV = {"STOWAGE_BLOB_VERSIONING_ACCOUNTS": f"{ACCOUNT_NAME}=on"}


def start(binary, data_dir, log):
    server = conftest._Server(binary, data_dir, log, env=VERSIONING_ENV)
    server.wait_ready()
    return server, service_at(f"http://127.0.0.1:{server.port}")


def service_at(base):
    """A client of the server (or one node of it) at `base`."""
    return BlobServiceClient(
        f"{base}/{ACCOUNT_NAME}",
        credential={"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY},
        **CLIENT_OPTIONS,
    )


@pytest.fixture(scope="module")
def versioned_server(tmp_path_factory):
    """A server with versioning on: (binary, data dir, log dir, service)."""
    binary = Path(os.environ.get("STOWAGE_BIN", conftest.DEFAULT_BIN))
    data_dir = tmp_path_factory.mktemp("stowage-versions-data")
    logs = tmp_path_factory.getbasetemp()
    server, service = start(binary, data_dir, logs / "stowage-versions.log")
    state = {"server": server, "service": service}
    try:
        yield binary, data_dir, logs, state
    finally:
        state["server"].stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def vcontainer(versioned_server):
    service = versioned_server[3]["service"]
    client = service.get_container_client(unique_name("versions"))
    client.create_container()
    yield client
    client.delete_container()


def test_each_upload_returns_a_new_version_id(vcontainer):
    blob = vcontainer.get_blob_client("b")
    v1 = blob.upload_blob(b"one")["version_id"]
    v2 = blob.upload_blob(b"two", overwrite=True)["version_id"]
    assert v1 and v2 and v1 != v2
    props = blob.get_blob_properties()
    assert (props.version_id, props.is_current_version) == (v2, True)
    old = blob.get_blob_properties(version_id=v1)
    assert (old.version_id, old.is_current_version) == (v1, False)
    assert blob.download_blob(version_id=v1).readall() == b"one"
    assert blob.download_blob().readall() == b"two"
    v3 = blob.set_blob_metadata({"k": "v"})["version_id"]
    assert v3 not in (v1, v2)
    assert blob.get_blob_properties(version_id=v2).metadata == {}


def test_list_blobs_with_versions(vcontainer):
    blob = vcontainer.get_blob_client("b")
    ids = [blob.upload_blob(bytes([i]), overwrite=True)["version_id"] for i in range(3)]
    vcontainer.upload_blob("other", b"x")
    listed = [b for b in vcontainer.list_blobs(include=["versions"]) if b.name == "b"]
    assert [b.version_id for b in listed] == ids
    assert [bool(b.is_current_version) for b in listed] == [False, False, True]
    assert len(list(vcontainer.list_blobs())) == 2


def test_a_name_lists_snapshots_then_versions_then_the_current_one(vcontainer):
    blob = vcontainer.get_blob_client("b")
    v1 = blob.upload_blob(b"one")["version_id"]
    taken = blob.create_snapshot()
    snapshot, v_snapshot = taken["snapshot"], taken["version_id"]
    v2 = blob.upload_blob(b"two", overwrite=True)["version_id"]
    listed = list(vcontainer.list_blobs(include=["snapshots", "versions"]))
    assert [(b.snapshot, b.version_id, bool(b.is_current_version)) for b in listed] == [
        (snapshot, None, False),
        (None, v1, False),
        (None, v_snapshot, False),
        (None, v2, True),
    ]


def test_a_snapshot_makes_a_new_current_version(vcontainer):
    blob = vcontainer.get_blob_client("b")
    v1 = blob.upload_blob(b"one")["version_id"]
    taken = blob.create_snapshot()
    v2 = taken["version_id"]
    assert v2 and v2 != v1
    props = blob.get_blob_properties()
    assert (props.version_id, props.is_current_version) == (v2, True)
    assert not blob.get_blob_properties(version_id=v1).is_current_version
    snapshot = vcontainer.get_blob_client("b", snapshot=taken["snapshot"])
    assert snapshot.download_blob().readall() == b"one"
    assert blob.download_blob(version_id=v1).readall() == b"one"


def test_the_current_version_is_not_deleted_by_its_id(vcontainer):
    blob = vcontainer.get_blob_client("b")
    blob.upload_blob(b"one")
    current = blob.upload_blob(b"two", overwrite=True)["version_id"]
    with raises(HttpResponseError, 403, "OperationNotAllowedOnRootBlob"):
        blob.delete_blob(version_id=current)
    assert blob.download_blob().readall() == b"two"


def test_a_sas_deletes_a_version_with_x_not_d(vcontainer):
    blob = vcontainer.get_blob_client("b")
    v1 = blob.upload_blob(b"one")["version_id"]
    blob.upload_blob(b"two", overwrite=True)
    expiry = datetime.now(timezone.utc) + timedelta(hours=1)

    def with_sas(permission):
        sas = generate_blob_sas(
            ACCOUNT_NAME, vcontainer.container_name, "b",
            account_key=ACCOUNT_KEY, permission=permission, expiry=expiry,
        )
        return BlobClient.from_blob_url(blob.url, credential=sas, **CLIENT_OPTIONS)

    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        with_sas(BlobSasPermissions(delete=True)).delete_blob(version_id=v1)
    with_sas(BlobSasPermissions(delete_previous_version=True)).delete_blob(version_id=v1)
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.download_blob(version_id=v1)
    # The blob itself is still deleted with d, not with x.
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        with_sas(BlobSasPermissions(delete_previous_version=True)).delete_blob()
    with_sas(BlobSasPermissions(delete=True)).delete_blob()


def test_deleted_with_versions_lists_the_name_once(vcontainer):
    blob = vcontainer.get_blob_client("gone")
    blob.upload_blob(b"one")
    blob.upload_blob(b"second", overwrite=True)
    blob.delete_blob()
    vcontainer.upload_blob("live", b"x")
    assert [b.name for b in vcontainer.list_blobs()] == ["live"]
    listed = list(vcontainer.list_blobs(include=["deletedwithversions"]))
    assert [(b.name, bool(b.has_versions_only)) for b in listed] == [
        ("gone", True),
        ("live", False),
    ]
    assert listed[0].size == len(b"second")


def test_deleting_the_current_version_keeps_the_previous_ones(vcontainer):
    blob = vcontainer.get_blob_client("b")
    v1 = blob.upload_blob(b"one")["version_id"]
    v2 = blob.upload_blob(b"two", overwrite=True)["version_id"]
    blob.delete_blob()
    with pytest.raises(ResourceNotFoundError) as e:
        blob.get_blob_properties()
    assert e.value.error_code == "BlobNotFound"
    listed = list(vcontainer.list_blobs(include=["versions"]))
    assert [b.version_id for b in listed] == [v1, v2]
    assert not any(b.is_current_version for b in listed)
    # Promote v1: copy it over the blob.
    copy = blob.start_copy_from_url(f"{blob.url}?versionid={v1}")
    assert copy["copy_status"] == "success"
    assert blob.download_blob().readall() == b"one"
    assert blob.get_blob_properties().version_id == copy["version_id"]


def test_delete_tags_and_tier_by_version_id(vcontainer):
    blob = vcontainer.get_blob_client("b")
    v1 = blob.upload_blob(b"one", tags={"gen": "1"})["version_id"]
    blob.upload_blob(b"two", overwrite=True, tags={"gen": "2"})
    assert blob.get_blob_tags(version_id=v1) == {"gen": "1"}
    assert blob.get_blob_tags() == {"gen": "2"}
    blob.set_blob_tags({"gen": "old"}, version_id=v1)
    assert blob.get_blob_tags(version_id=v1) == {"gen": "old"}
    assert blob.get_blob_tags() == {"gen": "2"}
    blob.set_standard_blob_tier(StandardBlobTier.COOL, version_id=v1)
    assert blob.get_blob_properties(version_id=v1).blob_tier == "Cool"
    assert blob.get_blob_properties().blob_tier == "Hot"
    blob.delete_blob(version_id=v1)
    with pytest.raises(ResourceNotFoundError) as e:
        blob.download_blob(version_id=v1)
    assert e.value.error_code == "BlobNotFound"
    assert blob.download_blob().readall() == b"two"


def test_a_kill_in_the_middle_loses_no_version(versioned_server):
    binary, data_dir, logs, state = versioned_server
    name = unique_name("versions-crash")
    container = state["service"].get_container_client(name)
    container.create_container()
    blob = container.get_blob_client("b")
    ids = [blob.upload_blob(b"v%d" % i, overwrite=True)["version_id"] for i in range(5)]
    blob.delete_blob()
    base = f"http://127.0.0.1:{state['server'].port}"
    if conftest.CLUSTER:
        # Every node killed and started again by the cluster's launcher,
        # over the same database and object store.
        conftest.restart_cluster_nodes(base)
    else:
        # kill -9: no shutdown of any kind.
        state["server"]._signal_group(conftest.signal.SIGKILL)
        state["server"].process.wait()
        server, service = start(binary, data_dir, logs / "stowage-versions-restarted.log")
        state["server"], state["service"] = server, service
        base = f"http://127.0.0.1:{server.port}"
    # Through every node of a cluster (one node otherwise).
    for node in conftest.node_bases(base):
        container = service_at(node).get_container_client(name)
        listed = list(container.list_blobs(include=["versions"]))
        assert [b.version_id for b in listed] == ids
        for i, v in enumerate(ids):
            blob = container.get_blob_client("b")
            assert blob.download_blob(version_id=v).readall() == b"v%d" % i
    state["service"].get_container_client(name).delete_container()
