"""The SAS checks of docs/wire/auth.md#sas-validity-checks that need a particular token field,
each refused with the service's code, through the SDK's own SAS generators.

As in test_auth_sas.py, each refusal sits beside an accepted twin that
differs only in the field under test, so a server that refuses every SAS
cannot pass.
"""

from datetime import datetime, timedelta, timezone

from azure.core.exceptions import HttpResponseError
from azure.storage.blob import (
    AccountSasPermissions,
    BlobClient,
    BlobSasPermissions,
    BlobServiceClient,
    ResourceTypes,
    generate_account_sas,
    generate_blob_sas,
)
from azure.storage.blob._shared.models import Services

from helpers import ACCOUNT_NAME, CLIENT_OPTIONS, raises


def hours(n):
    return datetime.now(timezone.utc) + timedelta(hours=n)


def read_with(blob, **sas_fields):
    token = generate_blob_sas(
        ACCOUNT_NAME, blob.container_name, blob.blob_name,
        account_key=sas_fields.pop("account_key"), expiry=hours(1), **sas_fields,
    )
    return BlobClient.from_blob_url(f"{blob.url}?{token}", **CLIENT_OPTIONS)


def test_sip_outside_the_client_address_is_403_source_ip_mismatch(container, account_key):
    """Service: a sip range without the client's address answers 403
    AuthorizationSourceIPMismatch; a range with it is accepted."""
    blob = container.upload_blob("ip.txt", b"ip")
    ok = read_with(blob, account_key=account_key, permission=BlobSasPermissions(read=True),
                   ip="127.0.0.0-127.255.255.255")
    assert ok.download_blob().readall() == b"ip"
    refused = read_with(blob, account_key=account_key, permission=BlobSasPermissions(read=True),
                        ip="10.1.2.3")
    with raises(HttpResponseError, 403, "AuthorizationSourceIPMismatch"):
        refused.download_blob().readall()


def test_https_only_sas_over_http_is_403_protocol_mismatch(container, account_key):
    """Service: spr=https on a plain HTTP request answers 403
    AuthorizationProtocolMismatch; spr=https,http is accepted."""
    blob = container.upload_blob("proto.txt", b"proto")
    ok = read_with(blob, account_key=account_key, permission=BlobSasPermissions(read=True),
                   protocol="https,http")
    assert ok.download_blob().readall() == b"proto"
    refused = read_with(blob, account_key=account_key, permission=BlobSasPermissions(read=True),
                        protocol="https")
    with raises(HttpResponseError, 403, "AuthorizationProtocolMismatch"):
        refused.download_blob().readall()


def test_a_permission_the_token_lacks_is_403_permission_mismatch(container, account_key):
    """Service: a read-only blob SAS may read but not write: 403
    AuthorizationPermissionMismatch."""
    blob = container.upload_blob("perm.txt", b"perm")
    client = read_with(blob, account_key=account_key, permission=BlobSasPermissions(read=True))
    assert client.download_blob().readall() == b"perm"
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        client.upload_blob(b"overwrite", overwrite=True)
    assert blob.download_blob().readall() == b"perm"


def test_account_sas_without_the_blob_service_is_403_service_mismatch(blob_endpoint, account_key):
    """Account SAS: ss without b answers 403 AuthorizationServiceMismatch; the
    same token with b is accepted."""
    def service_with(services):
        token = generate_account_sas(
            ACCOUNT_NAME, account_key, ResourceTypes(service=True, container=True, object=True),
            AccountSasPermissions(read=True, list=True), hours(1), services=services,
        )
        return BlobServiceClient(f"{blob_endpoint}?{token}", **CLIENT_OPTIONS)

    list(service_with(Services(blob=True)).list_containers())
    with raises(HttpResponseError, 403, "AuthorizationServiceMismatch"):
        list(service_with(Services(queue=True)).list_containers())
