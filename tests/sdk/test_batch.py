"""Blob Batch through the SDK: ContainerClient.delete_blobs, which sends a
container-scoped batch (`POST /<account>/<container>?restype=container&comp=batch`)
whose parts carry their own credentials: a Shared Key signature made without
an x-ms-version of their own, or the SAS of the client's URL.

The Python SDK has no account-scoped batch call; the JS suite (tests/js) covers
that scope.
"""

import asyncio
from datetime import datetime, timedelta, timezone

from azure.storage.blob import (
    AccountSasPermissions,
    BlobServiceClient,
    ContainerClient,
    ContainerSasPermissions,
    PartialBatchErrorException,
    ResourceTypes,
    generate_account_sas,
    generate_container_sas,
)
from azure.storage.blob.aio import BlobServiceClient as AsyncBlobServiceClient
import pytest

from helpers import ACCOUNT_NAME, CLIENT_OPTIONS

NAMES = ["a.txt", "dir/b.txt", "name with spaces", "ünïcödé"]


def hours(n):
    return datetime.now(timezone.utc) + timedelta(hours=n)


def fill(container, names=NAMES):
    for name in names:
        container.upload_blob(name, name.encode())


def remaining(container):
    return sorted(b.name for b in container.list_blobs())


def assert_all_accepted(parts, count):
    parts = list(parts)
    assert [p.status_code for p in parts] == [202] * count
    assert all(p.headers["x-ms-delete-type-permanent"] == "true" for p in parts)


def test_delete_blobs_with_shared_key(container):
    fill(container)
    assert_all_accepted(container.delete_blobs(*NAMES), len(NAMES))
    assert remaining(container) == []


def test_delete_blobs_with_snapshots_and_a_missing_blob(container):
    fill(container, ["keep", "gone"])
    container.get_blob_client("gone").create_snapshot()
    with pytest.raises(PartialBatchErrorException) as info:
        container.delete_blobs("gone", "missing", delete_snapshots="include")
    parts = info.value.parts
    assert [p.status_code for p in parts] == [202, 404]
    assert parts[1].headers["x-ms-error-code"] == "BlobNotFound"
    assert remaining(container) == ["keep"]

    parts = list(container.delete_blobs("missing", raise_on_any_failure=False))
    assert [(p.status_code, p.headers["x-ms-error-code"]) for p in parts] == [(404, "BlobNotFound")]


def test_delete_blobs_with_a_container_sas(container, account_key):
    fill(container)
    token = generate_container_sas(
        ACCOUNT_NAME, container.container_name, account_key=account_key,
        permission=ContainerSasPermissions(read=True, delete=True, list=True), expiry=hours(1),
    )
    client = ContainerClient.from_container_url(f"{container.url}?{token}", **CLIENT_OPTIONS)
    assert_all_accepted(client.delete_blobs(*NAMES), len(NAMES))
    assert remaining(container) == []


def test_container_sas_without_delete_refuses_each_part(container, account_key):
    fill(container, ["a"])
    token = generate_container_sas(
        ACCOUNT_NAME, container.container_name, account_key=account_key,
        permission=ContainerSasPermissions(read=True, list=True), expiry=hours(1),
    )
    client = ContainerClient.from_container_url(f"{container.url}?{token}", **CLIENT_OPTIONS)
    parts = list(client.delete_blobs("a", raise_on_any_failure=False))
    assert [(p.status_code, p.headers["x-ms-error-code"]) for p in parts] == [
        (403, "AuthorizationPermissionMismatch")
    ]
    assert remaining(container) == ["a"]


def test_delete_blobs_with_an_account_sas(container, account_key, blob_endpoint):
    fill(container)
    token = generate_account_sas(
        ACCOUNT_NAME, account_key,
        resource_types=ResourceTypes(container=True, object=True),
        permission=AccountSasPermissions(read=True, delete=True, list=True),
        expiry=hours(1),
    )
    service = BlobServiceClient(blob_endpoint, credential=token, **CLIENT_OPTIONS)
    client = service.get_container_client(container.container_name)
    assert_all_accepted(client.delete_blobs(*NAMES), len(NAMES))
    assert remaining(container) == []


def test_delete_blobs_through_the_asyncio_client(container, connection_string):
    """The asyncio client signs the parts' paths through yarl (aiohttp)."""
    fill(container)

    async def delete_all():
        async with AsyncBlobServiceClient.from_connection_string(
            connection_string, **CLIENT_OPTIONS
        ) as service:
            client = service.get_container_client(container.container_name)
            parts = await client.delete_blobs(*NAMES)
            return [p.status_code async for p in parts]

    assert asyncio.run(delete_all()) == [202] * len(NAMES)
    assert remaining(container) == []
