"""Fixtures of the Azure SDK conformance suite.

One Stowage server is started per session, on an ephemeral port with a fresh
data directory, and stopped at the end. Every test gets its own uniquely
named container, so tests are independent of each other and of their order.

Environment:
  STOWAGE_BIN            server binary (default <repo>/target/debug/stowage-server)
  STOWAGE_BLOB_ENDPOINT  use an already running server instead of starting one,
                         e.g. http://127.0.0.1:10000/devstoreaccount1 (to check
                         the tests themselves against another implementation)
  STOWAGE_TEST_CLUSTER   a number of nodes (3): every server the suite starts is
                         a cluster instead, started by the stowage-test-cluster
                         binary of the tests crate (a throwaway PostgreSQL, that
                         many stowage-server processes over it and one shared
                         object store, and a round-robin proxy in front); see
                         docs/cluster.md#testing-a-cluster
  STOWAGE_TEST_OBJECTS   with STOWAGE_TEST_CLUSTER, the cluster's object store
                         (an --objects URL; default a shared temporary directory)
"""

import collections
import os
import re
import shutil
import signal
import subprocess
import threading
import urllib.request
import warnings
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.storage.blob import BlobLeaseClient, BlobServiceClient

from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, unique_name

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO / "target" / "debug" / "stowage-server"

READY_LINE = re.compile(
    r"Stowage Blob service is successfully listening at http://127\.0\.0\.1:(\d+)"
)
START_TIMEOUT_SECONDS = 30

# Cluster mode: STOWAGE_BIN becomes the cluster launcher, which starts the
# real server (STOWAGE_CLUSTER_SERVER) once per node. Test modules that
# start servers of their own read STOWAGE_BIN when they do, so they start
# clusters too.
CLUSTER = int(os.environ.get("STOWAGE_TEST_CLUSTER") or 0) > 1
if CLUSTER:
    os.environ.setdefault("STOWAGE_CLUSTER_SERVER", os.environ.get("STOWAGE_BIN", str(DEFAULT_BIN)))
    os.environ["STOWAGE_BIN"] = os.environ.get(
        "STOWAGE_CLUSTER_BIN", str(REPO / "target" / "debug" / "stowage-test-cluster")
    )
    # PostgreSQL's initdb and three nodes take longer than one server.
    START_TIMEOUT_SECONDS = 120


def skip_in_cluster(reason):
    """Marks a test (or, as `pytestmark`, a module) that cannot apply to a
    cluster, with the reason."""
    return pytest.mark.skipif(CLUSTER, reason=f"not in cluster mode: {reason}")


CLUSTER_CONTROL = "/_stowage/test-cluster"


def _cluster_control(base, what):
    request = urllib.request.Request(f"{base}{CLUSTER_CONTROL}/{what}", method="POST")
    # Starting nodes again takes a few seconds (more on a loaded machine).
    with urllib.request.urlopen(request, timeout=START_TIMEOUT_SECONDS) as response:
        assert response.status == 200
        return response.read().decode()


def node_bases(base):
    """The `http://host:port` of every node behind `base`: the nodes of a
    cluster (its launcher names them), or `base` itself for one server. A
    check that must hold through every node loops over these."""
    if not CLUSTER:
        return [base]
    return _cluster_control(base, "nodes").split()


def restart_cluster_nodes(base, node=None):
    """kill -9 every node of the cluster behind `base` (or node `node`) and
    start it again, on the same port, data directory, PostgreSQL database and
    object store; returns once they listen (the launcher does it: see
    tests/src/bin/stowage-test-cluster.rs). PostgreSQL stays up."""
    _cluster_control(base, "restart" if node is None else f"restart?node={node}")
STOP_TIMEOUT_SECONDS = 10

_server_log_path = None


class _Server:
    """A running stowage-server process whose output goes to a log file."""

    def __init__(self, binary, data_dir, log_path, env=None, args=()):
        self.log_path = log_path
        self.tail = collections.deque(maxlen=200)
        self.port = None
        self._ready = threading.Event()
        self.process = subprocess.Popen(
            [
                str(binary),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                "0",
                "--location",
                str(data_dir),
                *args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group, so that stop() also ends any children
            # (STOWAGE_BIN may be a wrapper script).
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        self._reader = threading.Thread(target=self._read_output, daemon=True)
        self._reader.start()

    def _read_output(self):
        with open(self.log_path, "w", encoding="utf-8") as log:
            for raw in self.process.stdout:
                line = raw.decode("utf-8", errors="replace")
                log.write(line)
                log.flush()
                self.tail.append(line.rstrip("\n"))
                if self.port is None:
                    match = READY_LINE.search(line)
                    if match:
                        self.port = int(match.group(1))
                        self._ready.set()
        # End of output: the process has exited (or closed stdout).
        self._ready.set()

    def wait_ready(self):
        self._ready.wait(START_TIMEOUT_SECONDS)
        if self.port is not None:
            return
        if self.process.poll() is None:
            problem = f"did not print its listening line within {START_TIMEOUT_SECONDS} s"
        else:
            problem = f"exited with status {self.process.returncode} before listening"
        self.stop()
        self._reader.join(timeout=5)
        output = "\n".join(self.tail) or "(no output)"
        # Stop the whole run: without a server no result means anything (and
        # an expected failure must not be counted as one).
        pytest.exit(
            f"stowage-server {problem}.\nCommand: {' '.join(map(str, self.process.args))}\n"
            f"Server output:\n{output}",
            returncode=3,
        )

    def stop(self):
        """Terminate the server (and its process group), then kill if it lingers."""
        self._signal_group(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self._signal_group(signal.SIGKILL)
            self.process.wait()
        # Children that ignored SIGTERM must not outlive the run either.
        self._signal_group(signal.SIGKILL)

    def _signal_group(self, sig):
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass


def advance_test_clock(base, seconds):
    """Moves the manual clock of a STOWAGE_TEST_CLOCK server at `base`."""
    request = urllib.request.Request(
        f"{base}/_stowage/test-clock?advance={seconds}", method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def clock_server(tmp_path_factory, name):
    """A generator for a module fixture: a server of its own on a manual
    clock (STOWAGE_TEST_CLOCK=1), yielding (service client, advance(seconds))."""
    binary = Path(os.environ.get("STOWAGE_BIN", DEFAULT_BIN))
    data_dir = tmp_path_factory.mktemp(f"stowage-{name}-data")
    log = tmp_path_factory.getbasetemp() / f"stowage-{name}-server.log"
    server = _Server(binary, data_dir, log, env={"STOWAGE_TEST_CLOCK": "1"})
    try:
        server.wait_ready()
        base = f"http://127.0.0.1:{server.port}"
        service = BlobServiceClient(
            f"{base}/{ACCOUNT_NAME}",
            credential={"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY},
            **CLIENT_OPTIONS,
        )
        yield service, lambda seconds: advance_test_clock(base, seconds)
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def blob_endpoint(tmp_path_factory):
    """Blob endpoint URL (path style, with the account) of the server under test."""
    external = os.environ.get("STOWAGE_BLOB_ENDPOINT")
    if external:
        yield external.rstrip("/")
        return
    binary = Path(os.environ.get("STOWAGE_BIN", DEFAULT_BIN))
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.exit(
            f"no server binary at {binary}: build it (cargo build -p stowage-server) "
            "or set STOWAGE_BIN",
            returncode=3,
        )
    global _server_log_path
    data_dir = tmp_path_factory.mktemp("stowage-data")
    _server_log_path = tmp_path_factory.getbasetemp() / "stowage-server.log"
    server = _Server(binary, data_dir, _server_log_path)
    try:
        server.wait_ready()
        yield f"http://127.0.0.1:{server.port}/{ACCOUNT_NAME}"
    finally:
        server.stop()
        # The data can be hundreds of MiB; pytest keeps old temp dirs around.
        shutil.rmtree(data_dir, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    if _server_log_path is not None:
        terminalreporter.write_line(f"stowage-server output: {_server_log_path}")


@pytest.fixture(scope="session")
def account_name():
    return ACCOUNT_NAME


@pytest.fixture(scope="session")
def account_key():
    return ACCOUNT_KEY


@pytest.fixture(scope="session")
def connection_string(blob_endpoint):
    return (
        "DefaultEndpointsProtocol=http;"
        f"AccountName={ACCOUNT_NAME};"
        f"AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint={blob_endpoint};"
    )


@pytest.fixture(scope="session")
def make_service(connection_string):
    """Factory for BlobServiceClients with extra client options (chunk sizes...)."""

    def make(**options):
        return BlobServiceClient.from_connection_string(
            connection_string, **{**CLIENT_OPTIONS, **options}
        )

    return make


@pytest.fixture(scope="session")
def service(make_service):
    return make_service()


@pytest.fixture
def container(service, request):
    """A fresh, empty container for this test; deleted afterwards."""
    client = service.get_container_client(unique_name(request.node.name.replace("test_", "", 1)))
    client.create_container()
    yield client
    _delete_container_quietly(client)


def _delete_container_quietly(client):
    try:
        client.delete_container()
        return
    except ResourceNotFoundError:
        return
    except HttpResponseError:
        pass
    # A test may have left the container leased: break the lease and retry.
    try:
        BlobLeaseClient(client).break_lease(lease_break_period=0)
        client.delete_container()
    except ResourceNotFoundError:
        pass
    except HttpResponseError as error:
        warnings.warn(f"could not delete container {client.container_name}: {error}")


@pytest.fixture
def new_container(service):
    """Factory for extra containers (created and deleted with the test)."""
    created = []

    def make(hint="c", **kwargs):
        client = service.get_container_client(unique_name(hint))
        client.create_container(**kwargs)
        created.append(client)
        return client

    yield make
    for client in created:
        _delete_container_quietly(client)
