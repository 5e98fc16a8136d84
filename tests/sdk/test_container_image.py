"""The container image (Dockerfile; docs/operations.md#container-image).
No container runtime here: the Dockerfile is linted with the pinned
hadolint (tests/sdk/requirements.txt), and the command lines the image and
the Azurite image's users run are run against the binary as the image
lays it out (`azurite` and `azurite-blob` links to it, the volume as the
working directory); its HEALTHCHECK command tells a serving server from a
stopped one.
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient

from conftest import DEFAULT_BIN, REPO, skip_in_cluster
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS

pytestmark = skip_in_cluster("it runs the single-node image and reads its SQLite file")

DOCKERFILE = REPO / "Dockerfile"
READY = re.compile(r"successfully listening at http://[0-9.]+:(\d+)")


def binary():
    return Path(os.environ.get("STOWAGE_BIN", DEFAULT_BIN))


def instruction(name):
    """The JSON argument list of the Dockerfile's last `name` instruction
    (continuation lines joined)."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    lines = [line for line in text.splitlines() if line.startswith(name + " ")]
    assert lines, f"no {name} in the Dockerfile"
    return json.loads(lines[-1][lines[-1].index("[") :])


def image_bin(tmp_path):
    """/usr/local/bin of the image: the binary and its links."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "stowage-server").symlink_to(binary())
    links = re.findall(r"ln -s stowage-server /out/bin/([a-z-]+)", DOCKERFILE.read_text())
    assert sorted(links) == ["azurite", "azurite-blob"]
    for name in links:
        (bin_dir / name).symlink_to("stowage-server")
    return bin_dir


def with_port(args, port):
    """`args` with its --blobPort value replaced (a free port here)."""
    out = list(args)
    if "--blobPort" in out:
        out[out.index("--blobPort") + 1] = str(port)
    else:
        out += ["--blobPort", str(port)]
    return out


class Running:
    """A server started from a command line as the image runs it."""

    def __init__(self, args, bin_dir, workdir):
        self.port = None
        self.output = []
        ready = threading.Event()
        self.process = subprocess.Popen(
            [str(bin_dir / args[0]), *args[1:]],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def read():
            for raw in self.process.stdout:
                line = raw.decode("utf-8", errors="replace")
                self.output.append(line)
                match = READY.search(line)
                if match and self.port is None:
                    self.port = int(match.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        ready.wait(30)
        if self.port is None:
            self.stop()
            pytest.fail(f"{args} did not start:\n" + "".join(self.output))

    def stop(self):
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        self.process.wait(timeout=10)


def test_the_dockerfile_passes_hadolint():
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), str(DOCKERFILE)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_command_serves_in_the_volume_and_its_healthcheck_sees_it(tmp_path):
    bin_dir = image_bin(tmp_path)
    volume = tmp_path / "data"
    volume.mkdir()
    health = instruction("HEALTHCHECK")
    server = Running(with_port(instruction("CMD"), 0), bin_dir, volume)
    try:
        probe = with_port(health, server.port)
        ok = subprocess.run([str(bin_dir / probe[0]), *probe[1:]], capture_output=True)
        assert ok.returncode == 0, ok.stderr
        service = BlobServiceClient.from_connection_string(
            "DefaultEndpointsProtocol=http;"
            f"AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{server.port}/{ACCOUNT_NAME};",
            **CLIENT_OPTIONS,
        )
        service.create_container("image").upload_blob("b", b"kept in the volume")
    finally:
        server.stop()
    # The data is in the volume, under the default location.
    assert (volume / "stowage-data" / "metadata.sqlite").is_file()
    down = subprocess.run([str(bin_dir / probe[0]), *probe[1:]], capture_output=True)
    assert down.returncode == 1


# What the Azurite image is run with: docker-compose files and
# testcontainers' Java and Node modules (their commands, port made free).
AZURITE_COMMAND_LINES = [
    ["azurite-blob", "--blobHost", "0.0.0.0", "--blobPort", "10000"],
    ["azurite-blob", "--blobHost", "0.0.0.0", "--blobPort", "10000", "--loose",
     "--skipApiVersionCheck", "--disableProductStyleUrl"],
    ["azurite", "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0", "--tableHost", "0.0.0.0"],
    ["azurite", "-l", "/data", "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0",
     "--tableHost", "0.0.0.0", "--inMemoryPersistence", "--extentMemoryLimit", "64",
     "--skipApiVersionCheck"],
]


@pytest.mark.parametrize("line", AZURITE_COMMAND_LINES, ids=lambda l: " ".join(l[:2]))
def test_the_azurite_images_command_lines_start_the_server(tmp_path, line):
    bin_dir = image_bin(tmp_path)
    volume = tmp_path / "data"
    volume.mkdir()
    line = [volume.as_posix() if a == "/data" else a for a in line]
    server = Running(with_port(line, 0), bin_dir, volume)
    try:
        service = BlobServiceClient.from_connection_string(
            "DefaultEndpointsProtocol=http;"
            f"AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{server.port}/{ACCOUNT_NAME};",
            **CLIENT_OPTIONS,
        )
        service.create_container("compose")
        assert [c.name for c in service.list_containers()] == ["compose"]
    finally:
        server.stop()
