"""rclone's `azureblob` backend against Stowage, run the way its users run
it: one command line per step, then the same data checked through the SDK.

rclone is Debian's package (scripts/test installs the version it pins;
`apt-get install rclone` by hand). The remote is configured through rclone's
environment variables, as a user of the emulator does: `use_emulator = true`
with the suite's endpoint, account and key. rclone 1.60's `endpoint` with an
account and key builds `https://<account>.<endpoint>`, which needs a DNS name
and TLS, so a local server is reached in emulator mode or with a SAS URL
(`sas_url`), which is how these tests reach it.

What rclone sends (1.60, the azure-storage-blob-go pipeline):

* `mkdir`: Create Container (`--azureblob-public-access` sets its access);
* `copy` / `sync` / `copyto`: Put Blob up to `upload_cutoff`, above it Put
  Block per `chunk_size` and Put Block List with `x-ms-blob-content-md5` and
  the `mtime` metadata; a remote-to-remote copy is Copy Blob (server side);
* `lsjson` / `lsl` / `check`: List Blobs (flat or with `/`), MD5 and
  metadata from the listing; `check --download` and `cat`: Get Blob;
* `deletefile` / `delete` / `purge`: Delete Blob (and Delete Container);
* `settier` / `--azureblob-access-tier`: Set Blob Tier;
* `rcat`: a stream of unknown length, always as blocks.
"""

import base64
import hashlib
import json
import os
import shutil
import subprocess
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import ContainerSasPermissions, generate_container_sas

from helpers import ACCOUNT_KEY, ACCOUNT_NAME, pattern, unique_name

# The Debian version that scripts/test installs.
PINNED_VERSION = "v1.60.1"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def rclone_bin():
    found = shutil.which("rclone")
    if found is None:
        pytest.fail("rclone is not installed: scripts/test installs it (apt-get install rclone)")
    return found


def remote_env(tmp_path, **options):
    """rclone's environment with one remote, `stow`, of the given options."""
    config = tmp_path / "rclone.conf"
    config.touch()
    env = {
        **os.environ,
        "RCLONE_CONFIG": str(config),
        "RCLONE_CONFIG_STOW_TYPE": "azureblob",
        # Fail at once: a retried request would hide the answer under test.
        "RCLONE_RETRIES": "1",
        "RCLONE_LOW_LEVEL_RETRIES": "1",
        "RCLONE_CONTIMEOUT": "10s",
        "RCLONE_TIMEOUT": "60s",
    }
    for key, value in options.items():
        env[f"RCLONE_CONFIG_STOW_{key.upper()}"] = value
    return env


@pytest.fixture
def rclone_env(rclone_bin, blob_endpoint, tmp_path):
    """The environment of the `stow` remote in emulator mode with the
    suite's endpoint, account and key."""
    return remote_env(
        tmp_path,
        use_emulator="true",
        endpoint=blob_endpoint,
        account=ACCOUNT_NAME,
        key=ACCOUNT_KEY,
    )


@pytest.fixture
def rclone(rclone_bin, rclone_env):
    """Runs `rclone ARGS...` on the `stow` remote (rclone_env); returns the
    completed process, failing the test on a non-zero exit unless
    `check=False`."""
    return lambda *args, check=True, input=None: run(rclone_bin, rclone_env, args, check, input)


def run(binary, env, args, check=True, input=None):
    result = subprocess.run(
        [binary, *args],
        env=env,
        input=input,
        capture_output=True,
        timeout=300,
    )
    result.stdout = result.stdout.decode(errors="replace")
    result.stderr = result.stderr.decode(errors="replace")
    if check and result.returncode != 0:
        pytest.fail(
            f"rclone {' '.join(args)} exited {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result


def lsjson(rclone, path):
    """`rclone lsjson -R --hash` of a remote path: {path: entry} of the files."""
    entries = json.loads(rclone("lsjson", "-R", "--hash", "--files-only", path).stdout)
    return {entry["Path"]: entry for entry in entries}


@pytest.fixture
def tree(tmp_path):
    """A local directory with a small file, a nested 9 MiB file (three 4 MiB
    blocks above a 1 MiB upload cutoff) and an empty file."""
    root = tmp_path / "tree"
    (root / "nested" / "deeper").mkdir(parents=True)
    files = {
        "small.txt": b"hello from rclone\n",
        "nested/deeper/big.bin": pattern(7, 9 * MIB + 123),
        "nested/empty.dat": b"",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root, files


UPLOAD_IN_BLOCKS = ["--azureblob-upload-cutoff", "1M", "--azureblob-chunk-size", "4M"]


def test_version_is_the_pinned_one(rclone):
    """The suite runs the rclone that scripts/test pins (COMPATIBILITY.md
    names it)."""
    assert rclone("version").stdout.split()[1].startswith(PINNED_VERSION)


def test_copy_list_check_and_read_back(rclone, tree, container):
    """`rclone copy` of a tree: the small files are Put Blob, the 9 MiB file
    three staged blocks; every blob carries the MD5 of its bytes (rclone sends
    it on the commit), so `lsjson --hash` and `check` agree with the local
    files without reading them back, and `check --download` and `cat` read
    the same bytes."""
    root, files = tree
    remote = f"stow:{container.container_name}/up"
    rclone("copy", str(root), remote, *UPLOAD_IN_BLOCKS)

    listed = lsjson(rclone, remote)
    assert sorted(listed) == sorted(files)
    for name, data in files.items():
        assert listed[name]["Size"] == len(data)
        assert listed[name]["Hashes"]["md5"] == hashlib.md5(data).hexdigest()

    big = container.get_blob_client("up/nested/deeper/big.bin")
    committed, uncommitted = big.get_block_list("all")
    assert [block.size for block in committed] == [4 * MIB, 4 * MIB, MIB + 123]
    assert uncommitted == []
    properties = big.get_blob_properties()
    assert properties.content_settings.content_md5 == hashlib.md5(
        files["nested/deeper/big.bin"]
    ).digest()
    # rclone keeps the file's modification time in the blob's metadata as
    # `x-ms-meta-mtime`, which Go's HTTP client writes `X-Ms-Meta-Mtime`: the
    # name keeps the case it was sent in, as the service keeps it.
    assert list(properties.metadata) == ["Mtime"]
    assert listed["nested/deeper/big.bin"]["ModTime"].startswith(
        properties.metadata["Mtime"][:19]
    )
    assert big.download_blob().readall() == files["nested/deeper/big.bin"]

    check = rclone("check", str(root), remote)
    assert "0 differences found" in check.stderr
    assert "3 matching files" in check.stderr
    download = rclone("check", "--download", str(root), remote)
    assert "0 differences found" in download.stderr
    assert rclone("cat", f"{remote}/small.txt").stdout == files["small.txt"].decode()


def test_sync_uploads_changes_and_deletes_extra_files(rclone, tree, container):
    """`rclone sync` twice: the second run uploads the changed and new files
    and deletes the blob whose local file is gone; `check` then finds no
    difference, and the SDK lists exactly the local tree."""
    root, files = tree
    remote = f"stow:{container.container_name}/mirror"
    rclone("sync", str(root), remote, *UPLOAD_IN_BLOCKS)

    (root / "small.txt").write_bytes(b"changed\n")
    (root / "nested" / "deeper" / "big.bin").unlink()
    (root / "nested" / "new.txt").write_bytes(b"new file\n")
    rclone("sync", str(root), remote, *UPLOAD_IN_BLOCKS)

    names = sorted(blob.name for blob in container.list_blobs(name_starts_with="mirror/"))
    assert names == ["mirror/nested/empty.dat", "mirror/nested/new.txt", "mirror/small.txt"]
    assert container.download_blob("mirror/small.txt").readall() == b"changed\n"
    assert "0 differences found" in rclone("check", str(root), remote).stderr

    # A blob changed behind rclone's back is a difference.
    container.upload_blob("mirror/nested/new.txt", b"other bytes", overwrite=True)
    differs = rclone("check", str(root), remote, check=False)
    assert differs.returncode == 1
    assert "1 differences found" in differs.stderr


def test_server_side_copy_move_and_delete(rclone, container, new_container):
    """Remote to remote, rclone copies with Copy Blob (the destination shows
    a successful copy from the source's URL), `moveto` copies then deletes,
    `deletefile` deletes one blob and `purge` the whole container."""
    body = pattern(3, 5 * MIB)
    container.upload_blob("src/data.bin", body)
    source = f"stow:{container.container_name}"
    other = new_container("rclone-dest")
    dest = f"stow:{other.container_name}"

    rclone("copyto", f"{source}/src/data.bin", f"{dest}/copied.bin")
    copied = other.get_blob_client("copied.bin").get_blob_properties()
    assert copied.copy.status == "success"
    assert copied.copy.source.endswith(f"/{container.container_name}/src/data.bin")
    assert other.download_blob("copied.bin").readall() == body

    rclone("moveto", f"{dest}/copied.bin", f"{dest}/moved/data.bin")
    assert [b.name for b in other.list_blobs()] == ["moved/data.bin"]
    assert other.download_blob("moved/data.bin").readall() == body

    rclone("deletefile", f"{dest}/moved/data.bin")
    assert list(other.list_blobs()) == []

    rclone("purge", source)
    with pytest.raises(ResourceNotFoundError):
        container.get_container_properties()


def test_mkdir_with_public_access_and_rmdir(rclone, service):
    """`rclone mkdir` creates the container (with `public_access = blob` its
    access level is `blob`); `lsd` lists it; `rmdir` deletes the empty
    container."""
    name = unique_name("rclone-mkdir")
    rclone("mkdir", f"stow:{name}", "--azureblob-public-access", "blob")
    try:
        client = service.get_container_client(name)
        assert client.get_container_access_policy()["public_access"] == "blob"
        assert name in rclone("lsd", "stow:").stdout
    finally:
        rclone("rmdir", f"stow:{name}")
    with pytest.raises(ResourceNotFoundError):
        client.get_container_properties()


def test_stream_upload_and_tiers(rclone, container):
    """`rclone rcat` streams standard input of unknown length as blocks;
    `--azureblob-access-tier Cool` sets the tier after the upload and
    `settier` changes it; `lsjson` reports the tier from the listing."""
    remote = f"stow:{container.container_name}"
    data = pattern(11, 6 * MIB + 5)
    rclone(
        "rcat", f"{remote}/streamed.bin", "--azureblob-chunk-size", "4M",
        "--azureblob-access-tier", "Cool",
        input=data,
    )
    blob = container.get_blob_client("streamed.bin")
    committed, _ = blob.get_block_list("committed")
    assert [block.size for block in committed] == [4 * MIB, 2 * MIB + 5]
    assert blob.download_blob().readall() == data
    assert blob.get_blob_properties().blob_tier == "Cool"
    assert lsjson(rclone, remote)["streamed.bin"]["Tier"] == "Cool"

    rclone("settier", "Hot", f"{remote}/streamed.bin")
    assert blob.get_blob_properties().blob_tier == "Hot"


def test_container_sas_url(rclone_bin, blob_endpoint, container, tmp_path, tree):
    """With a container SAS URL (`sas_url`), rclone works inside that one
    container: copy, list with MD5s, check and delete. A read-only SAS lists
    and reads but an upload fails with 403 AuthorizationPermissionMismatch."""
    root, files = tree
    name = container.container_name

    def sas_env(permission):
        token = generate_container_sas(
            ACCOUNT_NAME,
            name,
            account_key=ACCOUNT_KEY,
            permission=permission,
            expiry=datetime.now(timezone.utc) + timedelta(hours=1),
        )
        return remote_env(tmp_path, sas_url=f"{blob_endpoint}/{name}?{token}")

    full = sas_env(ContainerSasPermissions(read=True, add=True, create=True, write=True,
                                           delete=True, list=True))
    run(rclone_bin, full, ["copy", str(root), f"stow:{name}/viasas", *UPLOAD_IN_BLOCKS])
    listed = {
        entry["Path"]: entry
        for entry in json.loads(
            run(rclone_bin, full, ["lsjson", "-R", "--hash", "--files-only",
                                   f"stow:{name}/viasas"]).stdout
        )
    }
    assert {path: entry["Hashes"]["md5"] for path, entry in listed.items()} == {
        path: hashlib.md5(data).hexdigest() for path, data in files.items()
    }
    assert "0 differences found" in run(
        rclone_bin, full, ["check", str(root), f"stow:{name}/viasas"]
    ).stderr

    read_only = sas_env(ContainerSasPermissions(read=True, list=True))
    assert run(rclone_bin, read_only, ["cat", f"stow:{name}/viasas/small.txt"]).stdout == (
        files["small.txt"].decode()
    )
    refused = run(
        rclone_bin, read_only, ["copyto", str(root / "small.txt"), f"stow:{name}/denied.txt"],
        check=False,
    )
    assert refused.returncode != 0
    assert "AuthorizationPermissionMismatch" in refused.stderr
    assert "403" in refused.stderr

    run(rclone_bin, full, ["delete", f"stow:{name}/viasas"])
    assert list(container.list_blobs()) == []


def test_listed_md5_only_when_the_blob_has_one(container, rclone, tmp_path):
    """rclone reads the MD5 from `Content-MD5` in the listing: a blob uploaded
    through the SDK with its MD5 shows the same hex digest in `lsjson`, and
    one without an MD5 (Put Block List without `x-ms-blob-content-md5`) shows
    none, as the service answers it."""
    data = b"listed md5\n"
    container.upload_blob("with-md5.txt", data)
    blob = container.get_blob_client("no-md5.txt")
    block_id = base64.b64encode(b"block-0").decode()
    blob.stage_block(block_id, data)
    blob.commit_block_list([block_id])
    listed = lsjson(rclone, f"stow:{container.container_name}")
    assert listed["with-md5.txt"]["Hashes"]["md5"] == hashlib.md5(data).hexdigest()
    assert "md5" not in listed["no-md5.txt"].get("Hashes", {})
