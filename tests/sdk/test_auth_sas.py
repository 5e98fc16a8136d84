"""Who gets in: Shared Key, service and account SAS, stored access policies,
public access (docs/wire/auth.md).

Every SAS refusal test first shows that a valid token for the same request is
accepted, so that a server which refuses all SAS requests does not pass it.
Token lifetimes are hours around now, never seconds, so nothing depends on
timing.
"""

import base64
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError
from azure.storage.blob import (
    AccessPolicy,
    AccountSasPermissions,
    BlobClient,
    BlobSasPermissions,
    BlobServiceClient,
    ContainerClient,
    ContainerSasPermissions,
    ResourceTypes,
    generate_account_sas,
    generate_blob_sas,
    generate_container_sas,
)

from helpers import ACCOUNT_NAME, CLIENT_OPTIONS, raises, unique_name

WRONG_KEY = base64.b64encode(b"not the development key, 64 bytes long......................").decode()


def hours(n):
    return datetime.now(timezone.utc) + timedelta(hours=n)


def sas_blob(url, token):
    return BlobClient.from_blob_url(f"{url}?{token}", **CLIENT_OPTIONS)


def sas_container(url, token):
    return ContainerClient.from_container_url(f"{url}?{token}", **CLIENT_OPTIONS)


def blob_sas(account_key, blob, permission, expiry=None, **kwargs):
    return generate_blob_sas(
        ACCOUNT_NAME, blob.container_name, blob.blob_name,
        account_key=account_key, permission=permission, expiry=expiry or hours(1), **kwargs,
    )


def container_sas(account_key, container, permission=None, expiry=None, **kwargs):
    return generate_container_sas(
        ACCOUNT_NAME, container.container_name,
        account_key=account_key, permission=permission, expiry=expiry, **kwargs,
    )


# --- Shared Key (issue 2) -----------------------------------------------------


def test_wrong_account_key_is_403_authentication_failed(blob_endpoint, container):
    """A Shared Key signature made with another key: 403 AuthenticationFailed
    (the SDK raises ClientAuthenticationError), for reads and writes alike."""
    bad = BlobServiceClient(
        blob_endpoint, credential={"account_name": ACCOUNT_NAME, "account_key": WRONG_KEY}, **CLIENT_OPTIONS
    )
    client = bad.get_container_client(container.container_name)
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        client.get_container_properties()
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        client.upload_blob("x", b"x")
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        list(bad.list_containers())
    assert list(container.list_blobs()) == []


def test_authentication_runs_before_existence(blob_endpoint):
    """A badly signed request on a container that does not exist learns nothing:
    403 AuthenticationFailed, not 404."""
    bad = BlobServiceClient(
        blob_endpoint, credential={"account_name": ACCOUNT_NAME, "account_key": WRONG_KEY}, **CLIENT_OPTIONS
    )
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        bad.get_container_client(unique_name("missing")).get_container_properties()


# --- Service SAS (issue 8) ------------------------------------------------------


def test_blob_sas_read(container, account_key):
    """A blob SAS with sp=r reads the blob (200) and its properties; a write
    with it is 403 AuthorizationPermissionMismatch."""
    blob = container.get_blob_client("shared.txt")
    blob.upload_blob(b"shared content")
    token = blob_sas(account_key, blob, BlobSasPermissions(read=True))
    reader = sas_blob(blob.url, token)
    assert reader.download_blob().readall() == b"shared content"
    assert reader.get_blob_properties().size == len(b"shared content")
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        reader.upload_blob(b"overwrite", overwrite=True)
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        reader.delete_blob()
    assert blob.download_blob().readall() == b"shared content"


def test_blob_sas_write_create_delete(container, account_key):
    """sp=cw creates and overwrites the named blob; sp=d deletes it."""
    blob = container.get_blob_client("written")
    writer = sas_blob(blob.url, blob_sas(account_key, blob, BlobSasPermissions(create=True, write=True)))
    writer.upload_blob(b"one")
    writer.upload_blob(b"two", overwrite=True)
    assert blob.download_blob().readall() == b"two"
    deleter = sas_blob(blob.url, blob_sas(account_key, blob, BlobSasPermissions(delete=True)))
    deleter.delete_blob()
    assert not blob.exists()


def test_blob_sas_is_for_one_blob_only(container, account_key):
    """A blob SAS used on another blob: the canonicalized resource differs, so
    the signature does not match: 403 AuthenticationFailed."""
    mine = container.get_blob_client("mine")
    other = container.get_blob_client("other")
    mine.upload_blob(b"mine")
    other.upload_blob(b"other")
    token = blob_sas(account_key, mine, BlobSasPermissions(read=True))
    assert sas_blob(mine.url, token).download_blob().readall() == b"mine"
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(other.url, token).download_blob()


def test_expired_and_not_yet_valid_sas_are_refused(container, account_key):
    """A SAS whose expiry has passed, or whose start is in the future: 403
    AuthenticationFailed."""
    blob = container.get_blob_client("timed")
    blob.upload_blob(b"x")
    valid = blob_sas(account_key, blob, BlobSasPermissions(read=True), start=hours(-2), expiry=hours(2))
    assert sas_blob(blob.url, valid).download_blob().readall() == b"x"
    expired = blob_sas(account_key, blob, BlobSasPermissions(read=True), start=hours(-2), expiry=hours(-1))
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(blob.url, expired).download_blob()
    future = blob_sas(account_key, blob, BlobSasPermissions(read=True), start=hours(1), expiry=hours(2))
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(blob.url, future).download_blob()


def test_tampered_and_foreign_key_sas_are_refused(container, account_key):
    """A SAS whose permissions were edited after signing, or signed with another
    key: 403 AuthenticationFailed."""
    blob = container.get_blob_client("tamper")
    blob.upload_blob(b"x")
    token = blob_sas(account_key, blob, BlobSasPermissions(read=True))
    assert sas_blob(blob.url, token).download_blob().readall() == b"x"
    tampered = token.replace("sp=r", "sp=rwd")
    assert tampered != token
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(blob.url, tampered).delete_blob()
    foreign = blob_sas(WRONG_KEY, blob, BlobSasPermissions(read=True))
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(blob.url, foreign).download_blob()
    assert blob.exists()


def test_container_sas_list_and_read(container, account_key):
    """A container SAS with sp=rl lists the container and reads any blob in it;
    sp=r alone cannot list (403 AuthorizationPermissionMismatch) and a
    container SAS cannot touch container properties."""
    container.upload_blob("a", b"A")
    container.upload_blob("b", b"B")
    listing = sas_container(container.url, container_sas(
        account_key, container, ContainerSasPermissions(read=True, list=True), hours(1)))
    assert [b.name for b in listing.list_blobs()] == ["a", "b"]
    assert listing.download_blob("b").readall() == b"B"
    read_only = sas_container(container.url, container_sas(
        account_key, container, ContainerSasPermissions(read=True), hours(1)))
    assert read_only.download_blob("a").readall() == b"A"
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        list(read_only.list_blobs())
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        listing.set_container_metadata({"no": "way"})


def test_sas_response_header_overrides(container, account_key):
    """rsct / rscd / rscc on a service SAS replace Content-Type,
    Content-Disposition and Cache-Control of the response only."""
    blob = container.get_blob_client("report.bin")
    blob.upload_blob(b"%PDF-")
    token = blob_sas(
        account_key, blob, BlobSasPermissions(read=True),
        content_type="application/pdf",
        content_disposition='attachment; filename="report.pdf"',
        cache_control="no-cache",
    )
    props = sas_blob(blob.url, token).get_blob_properties()
    assert props.content_settings.content_type == "application/pdf"
    assert props.content_settings.content_disposition == 'attachment; filename="report.pdf"'
    assert props.content_settings.cache_control == "no-cache"
    stored = blob.get_blob_properties().content_settings
    assert stored.content_type == "application/octet-stream"
    assert stored.content_disposition is None


def test_stored_access_policy(container, account_key):
    """A container SAS naming a stored access policy (si) takes permissions and
    expiry from it; removing the policy revokes the token (403
    AuthenticationFailed); a field both in the policy and the token is 400."""
    container.upload_blob("doc", b"policy data")
    policy = AccessPolicy(permission=ContainerSasPermissions(read=True, list=True), expiry=hours(1))
    container.set_container_access_policy({"readers": policy})
    acl = container.get_container_access_policy()
    assert [i.id for i in acl["signed_identifiers"]] == ["readers"]
    assert acl["signed_identifiers"][0].access_policy.permission == "rl"

    token = container_sas(account_key, container, policy_id="readers")
    client = sas_container(container.url, token)
    assert client.download_blob("doc").readall() == b"policy data"
    assert [b.name for b in client.list_blobs()] == ["doc"]

    doubled = container_sas(account_key, container, permission="r", policy_id="readers")
    with pytest.raises(HttpResponseError) as info:
        sas_container(container.url, doubled).download_blob("doc")
    assert info.value.status_code == 400

    container.set_container_access_policy({})
    assert container.get_container_access_policy()["signed_identifiers"] == []
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        client.download_blob("doc")


# --- Account SAS (issue 8) ------------------------------------------------------


def test_account_sas(blob_endpoint, account_key, container):
    """An account SAS (ss=b, srt=sco, sp=rl) lists containers and blobs and
    reads blobs; creating a container with it is 403
    AuthorizationPermissionMismatch."""
    container.upload_blob("blob", b"via account sas")
    token = generate_account_sas(
        ACCOUNT_NAME, account_key,
        resource_types=ResourceTypes(service=True, container=True, object=True),
        permission=AccountSasPermissions(read=True, list=True),
        expiry=hours(1),
    )
    client = BlobServiceClient(blob_endpoint, credential=token, **CLIENT_OPTIONS)
    names = [c.name for c in client.list_containers(name_starts_with=container.container_name)]
    assert names == [container.container_name]
    sub = client.get_container_client(container.container_name)
    assert [b.name for b in sub.list_blobs()] == ["blob"]
    assert sub.download_blob("blob").readall() == b"via account sas"
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        client.create_container(unique_name("refused"))


def test_account_sas_resource_type_mismatch(blob_endpoint, account_key, container):
    """An account SAS with srt=o reads objects but cannot list containers (a
    service-level operation): 403 AuthorizationResourceTypeMismatch."""
    container.upload_blob("blob", b"objects only")
    token = generate_account_sas(
        ACCOUNT_NAME, account_key,
        resource_types=ResourceTypes(object=True),
        permission=AccountSasPermissions(read=True, list=True),
        expiry=hours(1),
    )
    client = BlobServiceClient(blob_endpoint, credential=token, **CLIENT_OPTIONS)
    assert client.get_blob_client(container.container_name, "blob").download_blob().readall() == b"objects only"
    with raises(HttpResponseError, 403, "AuthorizationResourceTypeMismatch"):
        list(client.list_containers())


def test_account_sas_write_and_delete(blob_endpoint, account_key):
    """An account SAS with srt=co and sp=cwd creates a container, writes a blob
    and deletes both."""
    token = generate_account_sas(
        ACCOUNT_NAME, account_key,
        resource_types=ResourceTypes(container=True, object=True),
        permission=AccountSasPermissions(create=True, write=True, delete=True, read=True),
        expiry=hours(1),
    )
    client = BlobServiceClient(blob_endpoint, credential=token, **CLIENT_OPTIONS)
    sub = client.get_container_client(unique_name("acct-sas"))
    sub.create_container()
    sub.upload_blob("b", b"x")
    assert sub.download_blob("b").readall() == b"x"
    sub.delete_blob("b")
    sub.delete_container()


# --- Public access and ACL (issue 8) ------------------------------------------


def test_public_blob_access(blob_endpoint, new_container, service):
    """Public access level blob: anonymous reads of blobs succeed, anonymous
    listing and writes do not (404 ResourceNotFound: the service hides what
    anonymous callers may not see); a private container's blobs are 404
    ResourceNotFound too. The level is reported by Get Container Properties
    and List Containers."""
    public = new_container("public-blob", public_access="blob")
    public.upload_blob("open", b"anyone can read")
    assert public.get_container_properties().public_access == "blob"
    (listed,) = list(service.list_containers(name_starts_with=public.container_name))
    assert listed.public_access == "blob"
    anonymous = ContainerClient(blob_endpoint, public.container_name, **CLIENT_OPTIONS)
    assert anonymous.download_blob("open").readall() == b"anyone can read"
    with raises(ResourceNotFoundError, 404, "ResourceNotFound"):
        list(anonymous.list_blobs())
    with raises(ResourceNotFoundError, 404, "ResourceNotFound"):
        anonymous.upload_blob("nope", b"x")
    private = new_container("private")
    private.upload_blob("secret", b"private data")
    with raises(ResourceNotFoundError, 404, "ResourceNotFound"):
        ContainerClient(blob_endpoint, private.container_name, **CLIENT_OPTIONS).download_blob("secret")


def test_public_container_access_and_acl_change(blob_endpoint, new_container):
    """Public access level container: anonymous listing works too. Set Container
    ACL back to private: anonymous reads are refused again (404)."""
    public = new_container("public-container", public_access="container")
    public.upload_blob("open", b"listed")
    anonymous = ContainerClient(blob_endpoint, public.container_name, **CLIENT_OPTIONS)
    assert [b.name for b in anonymous.list_blobs()] == ["open"]
    public.set_container_access_policy({}, public_access=None)
    assert public.get_container_properties().public_access is None
    with raises(ResourceNotFoundError, 404, "ResourceNotFound"):
        anonymous.download_blob("open")


# --- Get Account Information on every scope (issue 15) ------------------------


def test_get_account_information_on_account_container_and_blob_scopes(service, container, account_key):
    """Get Account Information answers at the account, a container and a blob
    URL, with Shared Key and with a service SAS of that container or blob
    (any permission); the blob need not exist."""
    blob = container.get_blob_client("absent-blob")
    expected = {"sku_name": "Standard_RAGRS", "account_kind": "StorageV2", "is_hns_enabled": False}

    def check(info):
        assert {k: info[k] for k in expected} == expected

    check(service.get_account_information())
    check(container.get_account_information())
    check(blob.get_account_information())
    token = container_sas(account_key, container, permission=ContainerSasPermissions(list=True), expiry=hours(1))
    check(sas_container(container.url, token).get_account_information())
    check(sas_blob(blob.url, token).get_account_information())
    token = blob_sas(account_key, blob, BlobSasPermissions(read=True))
    check(sas_blob(blob.url, token).get_account_information())
    token = generate_account_sas(
        ACCOUNT_NAME, account_key, ResourceTypes(service=True), AccountSasPermissions(read=True), hours(1),
    )
    check(BlobServiceClient(service.url, credential=token, **CLIENT_OPTIONS).get_account_information())
