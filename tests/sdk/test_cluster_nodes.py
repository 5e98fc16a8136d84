"""One node of a cluster killed and started again while the others serve
(docs/cluster.md#the-suites-on-a-three-node-cluster): what was acknowledged
before reads the same through every node afterwards, and a lease taken
before still binds on the restarted node.

Only a cluster has nodes to restart one at a time: on a single server
(without STOWAGE_TEST_CLUSTER) these tests are skipped; the single-node
restarts are the kill -9 tests of test_soft_delete, test_versions and
test_container_restore.
"""

import urllib.error

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobServiceClient

import conftest
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, raises

pytestmark = pytest.mark.skipif(
    not conftest.CLUSTER, reason="only a cluster has nodes to restart one at a time"
)


def base_of(blob_endpoint):
    return blob_endpoint.rsplit("/", 1)[0]


def services(blob_endpoint):
    return [
        BlobServiceClient(
            f"{node}/{ACCOUNT_NAME}",
            credential={"account_name": ACCOUNT_NAME, "account_key": ACCOUNT_KEY},
            **CLIENT_OPTIONS,
        )
        for node in conftest.node_bases(base_of(blob_endpoint))
    ]


def test_a_node_restarted_alone_serves_what_the_others_wrote(blob_endpoint, container):
    nodes = services(blob_endpoint)
    assert len(nodes) > 1
    big = bytes(range(256)) * 1024  # 256 KiB: in the object store, not inline
    etags = {}
    for i, node in enumerate(nodes):
        blob = node.get_container_client(container.container_name).get_blob_client(f"b{i}")
        etags[f"b{i}"] = blob.upload_blob(big + b"%d" % i)["etag"]
    leased = container.get_blob_client("b0")
    lease = leased.acquire_lease(lease_duration=-1)

    conftest.restart_cluster_nodes(base_of(blob_endpoint), node=1)

    for node in services(blob_endpoint):
        c = node.get_container_client(container.container_name)
        for name, etag in etags.items():
            props = c.get_blob_client(name).get_blob_properties()
            assert props.etag == etag
            assert c.get_blob_client(name).download_blob().readall() == big + name[1:].encode()
        assert c.get_blob_client("b0").get_blob_properties().lease.state == "leased"
        with raises(HttpResponseError, 412, "LeaseIdMissing"):
            c.get_blob_client("b0").upload_blob(b"no lease", overwrite=True)
    lease.release()


def test_the_launcher_refuses_a_node_it_does_not_have(blob_endpoint):
    count = len(conftest.node_bases(base_of(blob_endpoint)))
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        conftest.restart_cluster_nodes(base_of(blob_endpoint), node=count)
    assert excinfo.value.code == 500
    assert f"no node {count}" in excinfo.value.read().decode()
