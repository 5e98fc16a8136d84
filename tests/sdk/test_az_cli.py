"""The Azure CLI (`az storage ...`, pinned in requirements-azcli.txt)
against Stowage: the commands a user runs with a connection string, each
result checked through the Python SDK.

The CLI pins its own azure-core and a beta azure-storage-blob, so it lives
in a venv of its own, which this module installs on first use (about 730 MB
and four to six minutes) under `~/.cache/stowage-azcli/` (or `$STOWAGE_AZCLI_VENV`),
outside the work tree so that every clone and CI run on the machine reuses
it; again only when requirements-azcli.txt changes.
Every command runs with `AZURE_STORAGE_CONNECTION_STRING` set to the suite's
connection string (`BlobEndpoint=http://127.0.0.1:<port>/devstoreaccount1`),
a configuration directory of its own and no telemetry; the SAS commands use
`--blob-endpoint` with `--sas-token`, or `--blob-url` with a full SAS URL.

What the CLI sends (through azure-storage-blob 12.29):

* `container create` (`{"created": false}` on 409 ContainerAlreadyExists),
  `list`, `show`, `metadata update`, `set-permission`, `delete`;
* `blob upload`: Put Blob up to 256 MiB, above it 8 MiB Put Blocks and Put
  Block List; `--type append`: Put Blob, then 8 MiB Append Blocks (a file of
  8 MiB or more); `upload-batch`: one upload per file; `download`: ranged Get
  Blob; `list`: List Blobs; `show` / `exists`: Get Blob Properties;
  `metadata update`, `update` (Get Blob Properties, then Set Blob
  Properties with every content header); `delete`, `delete-batch`;
* `blob copy start --source-container A --source-blob b`: Copy Blob with
  `x-ms-copy-source: https://<account>.blob.core.windows.net/A/b` (the CLI
  builds the source URL from the account name, not from the endpoint);
* `generate-sas`: computed locally from the account key.
"""

import hashlib
import json
import os
import subprocess
import sys
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from azure.core.exceptions import ResourceNotFoundError

from helpers import ACCOUNT_NAME, pattern, unique_name

HERE = Path(__file__).resolve().parent
VENV = Path(
    os.environ.get("STOWAGE_AZCLI_VENV") or Path.home() / ".cache" / "stowage-azcli" / "venv"
)
REQUIREMENTS = HERE / "requirements-azcli.txt"
MIB = 1024 * 1024
EXPIRY = (datetime.now(timezone.utc) + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%MZ")


def ensure_azure_cli():
    """Creates the CLI's venv with the pinned requirements unless it is
    there with them (a hash stamped in the venv); returns `az`."""
    az = VENV / "bin" / "az"
    stamp = VENV / ".requirements.sha256"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if az.is_file() and stamp.is_file() and stamp.read_text().strip() == wanted:
        return az
    if not (VENV / "bin" / "python").is_file():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run(
        [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet",
         "--disable-pip-version-check", "--no-input", "-r", str(REQUIREMENTS)],
        check=True,
    )
    stamp.write_text(wanted + "\n")
    return az


@pytest.fixture(scope="module")
def az_env(connection_string, tmp_path_factory):
    return {
        **os.environ,
        "AZURE_CONFIG_DIR": str(tmp_path_factory.mktemp("azure-cli-config")),
        "AZURE_CORE_COLLECT_TELEMETRY": "false",
        "AZURE_CORE_ONLY_SHOW_ERRORS": "true",
        "AZURE_CORE_NO_COLOR": "true",
        "AZURE_STORAGE_CONNECTION_STRING": connection_string,
    }


@pytest.fixture(scope="module")
def az(az_env):
    """Runs `az ARGS... -o json` and returns its parsed output (None when it
    prints nothing); a non-zero exit fails the test unless `check=False`,
    which returns the completed process instead."""
    binary = str(ensure_azure_cli())

    def run(*args, check=True, env=None):
        result = subprocess.run(
            [binary, *args, "-o", "json"],
            env=env or az_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if not check:
            return result
        if result.returncode != 0:
            pytest.fail(
                f"az {' '.join(args)} exited {result.returncode}\n"
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
            )
        return json.loads(result.stdout) if result.stdout.strip() else None

    return run


def test_containers(az, service):
    """`container create` creates (`created: true`) and reports an existing
    one (`created: false`); `list` and `show` see it; `metadata update` and
    `set-permission` change it (the SDK reads the same); `delete` deletes it."""
    name = unique_name("az-container")
    assert az("storage", "container", "create", "-n", name) == {"created": True}
    try:
        assert az("storage", "container", "create", "-n", name) == {"created": False}
        assert name in az("storage", "container", "list", "--query", "[].name")
        shown = az("storage", "container", "show", "-n", name)
        assert shown["name"] == name
        assert shown["properties"]["lease"] == {
            "duration": None, "state": "available", "status": "unlocked",
        }

        az("storage", "container", "metadata", "update", "-n", name, "--metadata", "team=data")
        az("storage", "container", "set-permission", "-n", name, "--public-access", "blob")
        client = service.get_container_client(name)
        assert client.get_container_properties().metadata == {"team": "data"}
        assert client.get_container_access_policy()["public_access"] == "blob"
        assert az("storage", "container", "show-permission", "-n", name) == {"publicAccess": "blob"}
    finally:
        assert az("storage", "container", "delete", "-n", name) == {"deleted": True}
    with pytest.raises(ResourceNotFoundError):
        service.get_container_client(name).get_container_properties()


def test_upload_list_download_properties_delete(az, container, tmp_path):
    """`blob upload` of a small file (with metadata and a content type) and
    of a 20 MiB append blob (8 MiB Append Blocks: the CLI puts a block blob
    of up to 256 MiB in one request); `upload-batch` of a tree; `list` with
    sizes; `download` returns the bytes; `show`, `metadata update` and
    `update` read and change properties; `delete` and `delete-batch`
    remove blobs (`exists` then says so)."""
    name = container.container_name
    small = tmp_path / "small.txt"
    small.write_bytes(b"hello from the azure cli\n")
    big = tmp_path / "big.log"
    big_body = pattern(9, 20 * MIB + 1)
    big.write_bytes(big_body)
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "a.txt").write_bytes(b"a")
    (tree / "sub" / "b.txt").write_bytes(b"bb")

    az("storage", "blob", "upload", "-c", name, "-n", "small.txt", "-f", str(small),
       "--metadata", "owner=cli", "kind=note", "--content-type", "text/plain")
    az("storage", "blob", "upload", "-c", name, "-n", "big.log", "-f", str(big),
       "--type", "append")
    uploaded = az("storage", "blob", "upload-batch", "-d", name, "-s", str(tree),
                  "--destination-path", "batch")
    assert sorted(entry["Blob"].rsplit(f"/{name}/", 1)[1] for entry in uploaded) == [
        "batch/a.txt", "batch/sub/b.txt",
    ]

    appended = container.get_blob_client("big.log").get_blob_properties()
    assert appended.blob_type == "AppendBlob"
    assert appended.append_blob_committed_block_count == 3

    listed = az("storage", "blob", "list", "-c", name,
                "--query", "[].{name:name, size:properties.contentLength}")
    assert sorted((e["name"], e["size"]) for e in listed) == [
        ("batch/a.txt", 1), ("batch/sub/b.txt", 2), ("big.log", len(big_body)),
        ("small.txt", small.stat().st_size),
    ]

    downloaded = tmp_path / "big.out"
    az("storage", "blob", "download", "-c", name, "-n", "big.log", "-f", str(downloaded))
    assert downloaded.read_bytes() == big_body
    big.unlink()
    downloaded.unlink()

    shown = az("storage", "blob", "show", "-c", name, "-n", "small.txt")
    assert shown["metadata"] == {"owner": "cli", "kind": "note"}
    assert shown["properties"]["blobType"] == "BlockBlob"
    assert shown["properties"]["contentSettings"]["contentType"] == "text/plain"
    assert shown["properties"]["contentSettings"]["contentMd5"] is not None

    az("storage", "blob", "metadata", "update", "-c", name, "-n", "small.txt",
       "--metadata", "owner=someone-else")
    az("storage", "blob", "update", "-c", name, "-n", "small.txt",
       "--content-type", "application/json", "--content-cache-control", "no-cache")
    properties = container.get_blob_client("small.txt").get_blob_properties()
    assert properties.metadata == {"owner": "someone-else"}
    assert properties.content_settings.content_type == "application/json"
    assert properties.content_settings.cache_control == "no-cache"
    # `update` sends the other content headers as they were: the MD5 stays.
    assert properties.content_settings.content_md5 == hashlib.md5(small.read_bytes()).digest()

    az("storage", "blob", "delete", "-c", name, "-n", "small.txt")
    assert az("storage", "blob", "exists", "-c", name, "-n", "small.txt") == {"exists": False}
    az("storage", "blob", "delete-batch", "-s", name, "--pattern", "batch/*")
    assert [b.name for b in container.list_blobs()] == ["big.log"]


def test_copy_start_from_a_source_container(az, container, new_container):
    """`blob copy start --source-container` sends the source as
    `https://devstoreaccount1.blob.core.windows.net/<container>/<blob>`:
    Stowage takes that host as its own account, so the copy completes
    (`success`) with the source's bytes and metadata."""
    body = pattern(4, 3 * MIB)
    container.upload_blob("dir/source.bin", body, metadata={"origin": "sdk"})
    destination = new_container("az-copy-dest")

    started = az("storage", "blob", "copy", "start",
                 "--source-container", container.container_name, "--source-blob", "dir/source.bin",
                 "-c", destination.container_name, "-b", "copied.bin")
    assert started["copy_status"] == "success"

    properties = destination.get_blob_client("copied.bin").get_blob_properties()
    assert properties.copy.status == "success"
    assert properties.copy.source == (
        f"https://{ACCOUNT_NAME}.blob.core.windows.net/{container.container_name}/dir/source.bin"
    )
    assert properties.copy.progress == f"{len(body)}/{len(body)}"
    assert properties.metadata == {"origin": "sdk"}
    assert destination.download_blob("copied.bin").readall() == body


def test_generated_sas_tokens(az, az_env, container, blob_endpoint, tmp_path):
    """SAS tokens from `generate-sas` (computed by the CLI from the key)
    verify on Stowage: a container SAS lists and uploads with
    `--blob-endpoint --sas-token`; a blob SAS URL (`--full-uri`) downloads
    with `--blob-url` and with a plain GET; an account SAS lists containers;
    a SAS without `d` cannot delete (403: the CLI reports missing
    permissions) and the blob stays."""
    name = container.container_name
    local = tmp_path / "note.txt"
    local.write_bytes(b"written with a container SAS\n")
    without_credentials = {
        key: value for key, value in az_env.items() if key != "AZURE_STORAGE_CONNECTION_STRING"
    }

    token = az("storage", "container", "generate-sas", "-n", name,
               "--permissions", "rlw", "--expiry", EXPIRY)
    with_sas = ("--blob-endpoint", blob_endpoint, "--sas-token", token)
    az("storage", "blob", "upload", "-c", name, "-n", "note.txt", "-f", str(local), *with_sas,
       env=without_credentials)
    assert az("storage", "blob", "list", "-c", name, "--query", "[].name", *with_sas,
              env=without_credentials) == ["note.txt"]

    refused = az("storage", "blob", "delete", "-c", name, "-n", "note.txt", *with_sas,
                 check=False, env=without_credentials)
    assert refused.returncode == 1
    assert "You do not have the required permissions" in refused.stderr
    assert container.download_blob("note.txt").readall() == local.read_bytes()

    url = az("storage", "blob", "generate-sas", "-c", name, "-n", "note.txt",
             "--permissions", "r", "--expiry", EXPIRY, "--full-uri")
    assert url.startswith(f"{blob_endpoint}/{name}/note.txt?")
    downloaded = tmp_path / "note.out"
    az("storage", "blob", "download", "--blob-url", url, "-f", str(downloaded),
       env=without_credentials)
    assert downloaded.read_bytes() == local.read_bytes()
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert response.read() == local.read_bytes()

    account_token = az("storage", "account", "generate-sas", "--services", "b",
                       "--resource-types", "sco", "--permissions", "rl", "--expiry", EXPIRY)
    names = az("storage", "container", "list", "--query", "[].name",
               "--blob-endpoint", blob_endpoint, "--sas-token", account_token,
               env=without_credentials)
    assert name in names
