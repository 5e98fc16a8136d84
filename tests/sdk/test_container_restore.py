"""Container soft delete and Restore Container through the SDK:
delete_container, list_containers(include_deleted=True), undelete_container,
the refusals, purge after the retention, and a kill -9 in the middle.

The tests run on a server of their own, started with
`--containerDeleteRetentionDays 7` and on a manual clock (STOWAGE_TEST_CLOCK=1)
that a test moves with `POST /_stowage/test-clock?advance=<seconds>`, so the
retention passes without sleeping.
"""

import os
import shutil
import signal
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import (
    AccountSasPermissions,
    BlobServiceClient,
    ResourceTypes,
    generate_account_sas,
)

import conftest
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, unique_name

RETENTION_DAYS = 7
DAY_SECONDS = 24 * 3600


class RetentionServer:
    """A server with container soft delete on, over one data directory that
    survives a restart."""

    def __init__(self, tmp_path_factory):
        self.binary = Path(os.environ.get("STOWAGE_BIN", conftest.DEFAULT_BIN))
        self.data_dir = tmp_path_factory.mktemp("stowage-restore-data")
        self.log_dir = tmp_path_factory.getbasetemp()
        self.starts = 0
        self.server = None
        self.start()

    def start(self):
        self.starts += 1
        log = self.log_dir / f"stowage-restore-server-{self.starts}.log"
        self.server = conftest._Server(
            self.binary,
            self.data_dir,
            log,
            env={"STOWAGE_TEST_CLOCK": "1"},
            args=("--containerDeleteRetentionDays", str(RETENTION_DAYS)),
        )
        self.server.wait_ready()
        self.base = f"http://127.0.0.1:{self.server.port}"
        self.service = self.service_at(self.base)

    @staticmethod
    def service_at(base):
        """A client of the server (or one node of it) at `base`."""
        return BlobServiceClient(
            f"{base}/{ACCOUNT_NAME}",
            credential={"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY},
            **CLIENT_OPTIONS,
        )

    def kill_and_restart(self):
        """kill -9, then a new process on the same data directory, or on a
        cluster every node killed and started again by its launcher over the
        same database and object store (the manual clocks start at the
        system time again either way)."""
        if conftest.CLUSTER:
            conftest.restart_cluster_nodes(self.base)
            return
        self.server._signal_group(signal.SIGKILL)
        self.server.process.wait()
        self.start()

    def advance(self, seconds):
        conftest.advance_test_clock(self.base, seconds)

    def stop(self):
        self.server.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def retention(tmp_path_factory):
    server = RetentionServer(tmp_path_factory)
    try:
        yield server
    finally:
        server.stop()


def deleted_entries(service, name):
    """The deleted containers called `name`, oldest deletion first."""
    return [
        c
        for c in service.list_containers(name_starts_with=name, include_deleted=True)
        if c.name == name and c.deleted
    ]


def test_a_deleted_container_is_listed_and_undeleted_with_its_blobs(retention):
    service = retention.service
    name = unique_name("restore")
    container = service.create_container(name, metadata={"owner": "team-a"})
    container.upload_blob("a/b.txt", b"hello")
    container.upload_blob("c.bin", os.urandom(200 * 1024))
    container.delete_container()

    assert name not in [c.name for c in service.list_containers(name_starts_with=name)]
    with pytest.raises(ResourceNotFoundError):
        container.get_container_properties()
    [entry] = deleted_entries(service, name)
    assert entry.deleted is True
    assert len(entry.version) == 16

    # DeletedTime and RemainingRetentionDays (the SDK's public model drops
    # them; its generated layer reads them).
    segment = service._client.service.list_containers_segment(prefix=name, include=["deleted"])
    [item] = segment.container_items
    assert item.properties.deleted_time is not None
    assert item.properties.remaining_retention_days == RETENTION_DAYS

    restored = service.undelete_container(name, entry.version)
    assert restored.container_name == name
    props = restored.get_container_properties()
    assert props.metadata == {"owner": "team-a"}
    assert restored.download_blob("a/b.txt").readall() == b"hello"
    assert sorted(b.name for b in restored.list_blobs()) == ["a/b.txt", "c.bin"]
    assert deleted_entries(service, name) == []
    restored.delete_container()


def test_a_name_is_reused_at_once_and_restoring_over_it_is_409(retention):
    service = retention.service
    name = unique_name("reuse")
    first = service.create_container(name)
    first.upload_blob("one", b"1")
    first.delete_container()
    second = service.create_container(name)
    second.upload_blob("two", b"2")
    second.delete_container()
    live = service.create_container(name)

    versions = [c.version for c in deleted_entries(service, name)]
    assert len(versions) == 2 and versions[0] != versions[1]
    with pytest.raises(ResourceExistsError) as excinfo:
        service.undelete_container(name, versions[0])
    assert excinfo.value.error_code == "ContainerAlreadyExists"

    live.delete_container()
    restored = service.undelete_container(name, versions[1])
    assert [b.name for b in restored.list_blobs()] == ["two"]
    restored.delete_container()


def test_undelete_refusals(retention):
    service = retention.service
    name = unique_name("refuse")
    service.create_container(name).delete_container()
    with pytest.raises(ResourceNotFoundError) as excinfo:
        service.undelete_container(name, "0000000000000000")
    assert excinfo.value.error_code == "ContainerNotFound"
    with pytest.raises(ResourceNotFoundError) as excinfo:
        service.undelete_container(unique_name("never"), "0000000000000000")
    assert excinfo.value.error_code == "ContainerNotFound"
    with pytest.raises(HttpResponseError) as excinfo:
        service.get_container_client(name)._client.container.restore(
            deleted_container_name=name
        )
    assert excinfo.value.status_code == 400
    # The generated layer leaves the code in the header.
    assert excinfo.value.response.headers["x-ms-error-code"] == "MissingRequiredHeader"


def test_a_kill_9_keeps_deleted_containers_restorable(retention):
    name = unique_name("crash")
    container = retention.service.create_container(name)
    container.upload_blob("kept", b"survives")
    container.delete_container()
    [entry] = deleted_entries(retention.service, name)

    retention.kill_and_restart()
    # Through every node of a cluster (one node otherwise).
    nodes = [retention.service_at(base) for base in conftest.node_bases(retention.base)]
    for service in nodes:
        assert [c.version for c in deleted_entries(service, name)] == [entry.version]
    nodes[-1].undelete_container(name, entry.version)
    for service in nodes:
        restored = service.get_container_client(name)
        assert restored.download_blob("kept").readall() == b"survives"
    retention.service.get_container_client(name).delete_container()


# Last: it moves the clock days ahead.
def test_after_the_retention_a_deleted_container_cannot_be_restored(retention):
    service = retention.service
    name = unique_name("purge")
    container = service.create_container(name)
    container.upload_blob("x", b"bytes")
    container.delete_container()
    [entry] = deleted_entries(service, name)

    # Days later a Shared Key request's date is refused as too far from the
    # server's time, so the rest goes through an account SAS made now.
    sas = generate_account_sas(
        ACCOUNT_NAME,
        ACCOUNT_KEY,
        resource_types=ResourceTypes(service=True, container=True, object=True),
        permission=AccountSasPermissions(read=True, write=True, list=True, delete=True),
        expiry=datetime.now(timezone.utc) + timedelta(days=30),
    )
    later = BlobServiceClient(f"{retention.base}/{ACCOUNT_NAME}", credential=sas, **CLIENT_OPTIONS)
    retention.advance(RETENTION_DAYS * DAY_SECONDS - 60)
    assert [c.version for c in deleted_entries(later, name)] == [entry.version]
    retention.advance(60)
    assert deleted_entries(later, name) == []
    with pytest.raises(ResourceNotFoundError) as excinfo:
        later.undelete_container(name, entry.version)
    assert excinfo.value.error_code == "ContainerNotFound"
