"""Blob soft delete through the SDK (docs/wire/versions.md): the
DeleteRetentionPolicy of set_service_properties, soft-deleted blobs and
snapshots in include=["deleted"] listings, undelete_blob, the purge when
retention ends, and a kill -9 in the middle that loses nothing restorable.

The policy belongs to the account, so these tests run on a server of their
own, on a manual clock (STOWAGE_TEST_CLOCK=1) that a test moves with
`POST /_stowage/test-clock?advance=<seconds>`: nothing sleeps. Moving it by
days would put Shared Key requests out of the 15 minutes of skew the server
allows, so the clients sign with an account SAS valid for weeks.

The purge at the end of retention and the collection of its extents are
shown by the Rust e2e suite (tests/tests/e2e/versions.rs), which runs the
collector itself on the injected clock.
"""

import os
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.blob import (
    AccountSasPermissions,
    BlobServiceClient,
    ResourceTypes,
    RetentionPolicy,
    generate_account_sas,
)

import conftest
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, unique_name

DAY = 86_400


class Running:
    """One server process over a data directory, restartable."""

    def __init__(self, binary, data_dir, logs):
        self.binary, self.data_dir, self.logs = binary, data_dir, logs
        self.starts = 0
        self.start()

    def start(self):
        self.starts += 1
        log = self.logs / f"stowage-soft-delete-{self.starts}.log"
        self.server = conftest._Server(
            self.binary, self.data_dir, log, env={"STOWAGE_TEST_CLOCK": "1"}
        )
        self.server.wait_ready()
        self.base = f"http://127.0.0.1:{self.server.port}"
        self.service = self.service_at(self.base)

    def service_at(self, base):
        """A client of the server (or one node of it) at `base`."""
        now = datetime.now(timezone.utc)
        sas = generate_account_sas(
            ACCOUNT_NAME,
            ACCOUNT_KEY,
            resource_types=ResourceTypes(service=True, container=True, object=True),
            permission=AccountSasPermissions(
                read=True, write=True, delete=True, list=True, create=True
            ),
            start=now - timedelta(days=1),
            expiry=now + timedelta(days=30),
        )
        return BlobServiceClient(f"{base}/{ACCOUNT_NAME}", credential=sas, **CLIENT_OPTIONS)

    def advance(self, seconds):
        conftest.advance_test_clock(self.base, seconds)

    def kill_and_restart(self):
        """kill -9, then the server again on the same data directory: a new
        process, or on a cluster every node killed and started again by its
        launcher over the same database and object store. The manual clocks
        start at the system time again either way."""
        if conftest.CLUSTER:
            conftest.restart_cluster_nodes(self.base)
            return
        self.server._signal_group(conftest.signal.SIGKILL)
        self.server.process.wait()
        self.start()


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    binary = Path(os.environ.get("STOWAGE_BIN", conftest.DEFAULT_BIN))
    data_dir = tmp_path_factory.mktemp("stowage-soft-delete-data")
    r = Running(binary, data_dir, tmp_path_factory.getbasetemp())
    r.service.set_service_properties(
        delete_retention_policy=RetentionPolicy(enabled=True, days=2)
    )
    try:
        yield r
    finally:
        r.server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def scontainer(running):
    client = running.service.get_container_client(unique_name("soft-delete"))
    client.create_container()
    yield client
    try:
        client.delete_container()
    except HttpResponseError:
        pass


def test_the_policy_reads_back_and_bad_days_are_refused(running):
    policy = running.service.get_service_properties()["delete_retention_policy"]
    assert (policy.enabled, policy.days) == (True, 2)
    for days in (0, 366):
        with pytest.raises(HttpResponseError) as e:
            running.service.set_service_properties(
                delete_retention_policy=RetentionPolicy(enabled=True, days=days)
            )
        assert e.value.status_code == 400
        assert e.value.error_code == "InvalidXmlNodeValue"


def test_a_deleted_blob_is_listed_and_undeleted_with_its_snapshots(scontainer):
    blob = scontainer.get_blob_client("b")
    blob.upload_blob(b"data")
    snapshot = blob.create_snapshot()["snapshot"]
    blob.delete_blob(delete_snapshots="include")
    with pytest.raises(ResourceNotFoundError) as e:
        blob.get_blob_properties()
    assert e.value.error_code == "BlobNotFound"
    assert list(scontainer.list_blobs()) == []
    deleted = list(scontainer.list_blobs(include=["deleted", "snapshots"]))
    assert len(deleted) == 2
    assert all(b.deleted for b in deleted)
    assert all(b.remaining_retention_days == 2 for b in deleted)
    assert all(b.deleted_time is not None for b in deleted)
    assert {b.snapshot for b in deleted} == {None, snapshot}
    blob.undelete_blob()
    assert blob.download_blob().readall() == b"data"
    assert scontainer.get_blob_client("b", snapshot=snapshot).download_blob().readall() == b"data"
    assert not any(b.deleted for b in scontainer.list_blobs(include=["deleted", "snapshots"]))


def test_undelete_of_nothing_is_blob_not_found(scontainer):
    with pytest.raises(ResourceNotFoundError) as e:
        scontainer.get_blob_client("never").undelete_blob()
    assert e.value.error_code == "BlobNotFound"


def test_an_overwrite_keeps_a_soft_deleted_snapshot(scontainer):
    blob = scontainer.get_blob_client("b")
    blob.upload_blob(b"first")
    blob.upload_blob(b"second", overwrite=True)
    deleted = [b for b in scontainer.list_blobs(include=["deleted", "snapshots"]) if b.deleted]
    assert len(deleted) == 1 and deleted[0].snapshot
    blob.undelete_blob()
    kept = scontainer.get_blob_client("b", snapshot=deleted[0].snapshot)
    assert kept.download_blob().readall() == b"first"
    assert blob.download_blob().readall() == b"second"


def test_remaining_retention_days_count_down(running, scontainer):
    blob = scontainer.get_blob_client("b")
    blob.upload_blob(b"data")
    blob.delete_blob()
    days = lambda: [b.remaining_retention_days for b in scontainer.list_blobs(include=["deleted"])]
    assert days() == [2]
    running.advance(DAY)
    assert days() == [1]
    # Until the purge, the blob can still be brought back.
    blob.undelete_blob()
    assert blob.download_blob().readall() == b"data"


def test_a_kill_in_the_middle_loses_nothing_restorable(running):
    name = unique_name("soft-delete-crash")
    container = running.service.get_container_client(name)
    container.create_container()
    for i in range(20):
        container.upload_blob(f"b{i}", b"x%d" % i)
        container.get_blob_client(f"b{i}").delete_blob()
    running.kill_and_restart()
    # Through every node of a cluster (one node otherwise).
    nodes = [running.service_at(base).get_container_client(name)
             for base in conftest.node_bases(running.base)]
    for node in nodes:
        deleted = list(node.list_blobs(include=["deleted"]))
        assert len(deleted) == 20 and all(b.deleted for b in deleted)
    for i in range(20):
        nodes[i % len(nodes)].get_blob_client(f"b{i}").undelete_blob()
        for node in nodes:
            assert node.get_blob_client(f"b{i}").download_blob().readall() == b"x%d" % i
    running.service.get_container_client(name).delete_container()
