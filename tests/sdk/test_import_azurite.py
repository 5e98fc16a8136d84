"""import-azurite (docs/operations.md#moving-from-azurite): data written
through the SDK into a real Azurite (the version bench/package.json pins,
installed with `npm ci` when missing), imported into a fresh Stowage data
directory, reads back the same through the SDK from Stowage: every
container and its ACL, metadata and lease; every blob version with its
bytes, properties, metadata, lease and block list.
"""

import datetime
import json
import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (
    AccessPolicy,
    BlobLeaseClient,
    BlobServiceClient,
    BlobType,
    ContainerSasPermissions,
    ContentSettings,
    PublicAccess,
)

from conftest import DEFAULT_BIN, REPO, _Server, skip_in_cluster
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS

BENCH = REPO / "bench"
AZURITE_MAIN = BENCH / "node_modules" / "azurite" / "dist" / "src" / "blob" / "main.js"
AZURITE_READY = re.compile(r"successfully listen[a-z]* [a-z]* (http://127\.0\.0\.1:\d+)")
LEASE_ID = "11111111-2222-3333-4444-555555555555"
CONTAINER_LEASE_ID = "66666666-7777-8888-9999-000000000000"


def pinned_azurite():
    return json.loads((BENCH / "package.json").read_text())["dependencies"]["azurite"]


def ensure_azurite():
    """Installs the pinned Azurite with `npm ci` (from bench/package-lock.json)
    unless that version is there."""
    installed = BENCH / "node_modules" / "azurite" / "package.json"
    if installed.is_file() and json.loads(installed.read_text())["version"] == pinned_azurite():
        return
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=BENCH,
        check=True,
    )


class Azurite:
    """Azurite's blob service on a free port over `location`."""

    def __init__(self, location):
        self.url = None
        self._ready = threading.Event()
        self.process = subprocess.Popen(
            [
                "node",
                str(AZURITE_MAIN),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                "0",
                "--location",
                str(location),
                "--skipApiVersionCheck",
                "--loose",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.output = []
        threading.Thread(target=self._read, daemon=True).start()
        self._ready.wait(60)
        if self.url is None:
            self.stop()
            pytest.fail("Azurite did not start:\n" + "".join(self.output))

    def _read(self):
        for raw in self.process.stdout:
            line = raw.decode("utf-8", errors="replace")
            self.output.append(line)
            match = AZURITE_READY.search(line)
            if match and self.url is None:
                self.url = match.group(1)
                self._ready.set()
        self._ready.set()

    def stop(self):
        """SIGTERM: Azurite saves its databases and exits."""
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            pytest.fail("Azurite did not stop on SIGTERM")


def service_at(url):
    return BlobServiceClient.from_connection_string(
        "DefaultEndpointsProtocol=http;"
        f"AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint={url}/{ACCOUNT_NAME};",
        **CLIENT_OPTIONS,
    )


def data(seed, size):
    return bytes((i * 31 + seed) % 251 for i in range(size))


def populate(service):
    """Everything import-azurite loads, written through the SDK."""
    day = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    first = service.create_container("first", metadata={"team": "storage", "env": "test"})
    first.set_container_access_policy(
        {
            "reader": AccessPolicy(
                permission=ContainerSasPermissions(read=True, list=True),
                start=day,
                expiry=day + datetime.timedelta(days=30),
            )
        },
        public_access=PublicAccess.Blob,
    )
    second = service.create_container("second", public_access=PublicAccess.Container)
    second.acquire_lease(lease_duration=-1, lease_id=CONTAINER_LEASE_ID)
    service.create_container("empty")

    # Block blobs written whole, small and larger than one inline extent.
    small = first.get_blob_client("dir/small.txt")
    small.upload_blob(
        b"hello from azurite",
        metadata={"origin": "azurite", "n": "1"},
        content_settings=ContentSettings(
            content_type="text/plain",
            content_encoding="identity",
            content_language="en",
            cache_control="max-age=60",
            content_disposition="inline",
        ),
    )
    large = first.get_blob_client("large.bin")
    large.upload_blob(data(1, 300 * 1024))
    # Snapshots: of the first version, then of a second one.
    large.create_snapshot(metadata={"which": "first"})
    large.upload_blob(data(2, 200 * 1024), overwrite=True, metadata={"v": "2"})
    large.create_snapshot()
    large.upload_blob(data(3, 100 * 1024), overwrite=True, metadata={"v": "3"})
    # A block blob built from blocks, one block staged and not committed.
    blocks = first.get_blob_client("blocks.bin")
    blocks.stage_block("YmxvY2stMQ==", data(4, 100 * 1024))
    blocks.stage_block("YmxvY2stMg==", data(5, 70 * 1024))
    blocks.stage_block("YmxvY2stMw==", b"")
    blocks.commit_block_list(["YmxvY2stMg==", "YmxvY2stMQ==", "YmxvY2stMw=="])
    blocks.stage_block("YmxvY2stNA==", data(6, 1000))
    # An empty blob, with blob index tags.
    first.get_blob_client("empty").upload_blob(b"", tags={"project": "stowage", "stage": "gold"})
    # Append blobs: one written in three appends, one sealed.
    log = second.get_blob_client("app.log")
    log.create_append_blob(metadata={"kind": "log"})
    for i in range(3):
        log.append_block(data(7 + i, 1000 * (i + 1)))
    sealed = second.get_blob_client("sealed.log")
    sealed.create_append_blob()
    sealed.append_block(b"final words")
    sealed.seal_append_blob()
    # Leases: infinite on a blob, broken on another.
    leased = second.get_blob_client("leased.txt")
    leased.upload_blob(b"mine")
    leased.acquire_lease(lease_duration=-1, lease_id=LEASE_ID)
    broken = second.get_blob_client("broken.txt")
    broken.upload_blob(b"was mine")
    lease = broken.acquire_lease(lease_duration=-1)
    lease.break_lease(lease_break_period=0)


def etag_value(etag):
    """An ETag's number: Stowage writes Azurite's 15-digit ETags with 16
    digits (a leading zero)."""
    return int(etag.strip('"'), 16)


def instant(text):
    """An ACL time as an instant: Azurite answers the text it was given
    (`...00Z`), Stowage the service's form (`...00.0000000Z`)."""
    if text is None:
        return None
    if not isinstance(text, str):
        return text
    return datetime.datetime.fromisoformat(re.sub(r"\.(\d{6})\d*Z$", r".\1Z", text))


def lease_of(props):
    return (props.lease.status, props.lease.state, props.lease.duration)


def capture(service):
    """Everything the SDK reads back, in comparable form."""
    out = {}
    for c in service.list_containers(include_metadata=True):
        client = service.get_container_client(c.name)
        policy = client.get_container_access_policy()
        identifiers = [
            (
                s.id,
                instant(s.access_policy.start),
                instant(s.access_policy.expiry),
                s.access_policy.permission,
            )
            for s in policy["signed_identifiers"]
        ]
        blobs = {}
        for b in client.list_blobs(include=["snapshots", "metadata"]):
            bc = client.get_blob_client(b.name, snapshot=b.snapshot)
            props = bc.get_blob_properties()
            entry = {
                "blob_type": str(props.blob_type),
                "size": props.size,
                "etag": etag_value(props.etag),
                "last_modified": props.last_modified,
                "creation_time": props.creation_time,
                "content_settings": (
                    props.content_settings.content_type,
                    props.content_settings.content_encoding,
                    props.content_settings.content_language,
                    bytes(props.content_settings.content_md5 or b""),
                    props.content_settings.cache_control,
                    props.content_settings.content_disposition,
                ),
                "metadata": props.metadata,
                "listed_metadata": b.metadata or {},
                "lease": lease_of(props),
                # Azurite sends x-ms-blob-sealed: false on an open append
                # blob; the service and Stowage send no header (None).
                "sealed": bool(props.is_append_blob_sealed),
                "append_blocks": props.append_blob_committed_block_count,
                "bytes": bc.download_blob().readall(),
            }
            if b.snapshot is None:
                entry["tags"] = bc.get_blob_tags()
                entry["tag_count"] = props.tag_count
            if props.blob_type == BlobType.BLOCKBLOB and b.snapshot is None:
                committed, uncommitted = bc.get_block_list("all")
                entry["blocks"] = (
                    [(x.id, x.size) for x in committed],
                    [(x.id, x.size) for x in uncommitted],
                )
            blobs[(b.name, b.snapshot)] = entry
        out[c.name] = {
            # Azurite lists an empty <Metadata/>, Stowage none: both mean
            # no metadata.
            "metadata": c.metadata or {},
            "etag": etag_value(c.etag),
            "last_modified": c.last_modified,
            "public_access": policy["public_access"],
            "identifiers": identifiers,
            "lease": (c.lease.status, c.lease.state, c.lease.duration),
            "blobs": blobs,
        }
    return out


@skip_in_cluster("the import reads an Azurite data directory into the SQLite file of one node")
def test_an_azurite_directory_imports_with_every_blob_and_property(tmp_path):
    ensure_azurite()
    azurite_dir = tmp_path / "azurite"
    azurite = Azurite(azurite_dir)
    try:
        populate(service_at(azurite.url))
        before = capture(service_at(azurite.url))
    finally:
        azurite.stop()
    assert set(before) == {"first", "second", "empty"}
    assert len(before["first"]["blobs"]) == 6  # 4 base blobs, 2 snapshots
    # What is compared is there to compare.
    first = before["first"]["blobs"]
    assert first[("empty", None)]["tags"] == {"project": "stowage", "stage": "gold"}
    assert len(first[("blocks.bin", None)]["blocks"][0]) == 3
    assert len(first[("blocks.bin", None)]["blocks"][1]) == 1
    second = before["second"]["blobs"]
    assert second[("app.log", None)]["append_blocks"] == 3
    assert second[("sealed.log", None)]["sealed"] is True
    assert second[("leased.txt", None)]["lease"][1] == "leased"
    assert second[("broken.txt", None)]["lease"][1] == "broken"
    assert before["second"]["lease"][1] == "leased"

    binary = Path(os.environ.get("STOWAGE_BIN", DEFAULT_BIN))
    stowage_dir = tmp_path / "stowage"
    result = subprocess.run(
        [str(binary), "import-azurite", "--location", str(stowage_dir), str(azurite_dir)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "imported 3 containers" in result.stdout, result.stdout

    check = subprocess.run(
        [str(binary), "check", "--location", str(stowage_dir)],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr

    server = _Server(binary, stowage_dir, tmp_path / "stowage.log")
    try:
        server.wait_ready()
        service = service_at(f"http://127.0.0.1:{server.port}")
        after = capture(service)
        for name in before:
            for key in before[name]["blobs"]:
                assert after[name]["blobs"].get(key) == before[name]["blobs"][key], (name, key)
            assert after[name] == before[name], name
        assert after == before

        # The leases hold with their ids: the blob refuses a write without
        # its lease id and takes one with it; the container likewise.
        second = service.get_container_client("second")
        leased = second.get_blob_client("leased.txt")
        with pytest.raises(HttpResponseError) as refused:
            leased.upload_blob(b"not yours", overwrite=True)
        assert refused.value.error_code == "LeaseIdMissing"
        leased.upload_blob(b"still mine", overwrite=True, lease=LEASE_ID)
        BlobLeaseClient(second, lease_id=CONTAINER_LEASE_ID).renew()
        # The tags are found by a search.
        found = [b.name for b in service.find_blobs_by_tags("\"stage\" = 'gold'")]
        assert found == ["empty"]
        # New writes get ETags above every imported one.
        written = service.get_container_client("first").get_blob_client("new").upload_blob(b"n")
        highest = max(
            b["etag"] for c in after.values() for b in c["blobs"].values()
        )
        assert etag_value(written["etag"]) > highest
    finally:
        server.stop()
