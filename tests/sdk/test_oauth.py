"""OAuth with `--oauth basic` (docs/wire/oauth.md): bearer tokens, Get User
Delegation Key and user delegation SAS, through the SDK's own token policy
and SAS generator.

The server of this module is its own: started with `--oauth basic` and a
self-signed certificate made here, because bearer tokens travel over HTTPS
only. The token credential is the test's own: it hands out JWTs it crafts
(alg none or HS256 with any secret), which basic mode accepts because it
checks the claims, not the signature.
"""

import datetime as dt
import ipaddress
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import jwt
import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.storage.blob import (
    BlobClient,
    BlobSasPermissions,
    BlobServiceClient,
    ContainerClient,
    ContainerSasPermissions,
    generate_blob_sas,
    generate_container_sas,
)
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import skip_in_cluster
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, raises, unique_name

pytestmark = skip_in_cluster("the server speaks HTTPS; the cluster's round-robin proxy speaks HTTP")

REPO = Path(__file__).resolve().parents[2]
READY_LINE = re.compile(r"listening at https://127\.0\.0\.1:(\d+)")
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
OID = "11059fcc-5514-4800-b5f8-49808b9cfab6"


def now():
    return dt.datetime.now(dt.timezone.utc)


def claims(**changes):
    t = int(time.time())
    c = {
        "aud": "https://storage.azure.com",
        "iss": f"https://sts.windows.net/{TENANT}/",
        "iat": t - 60,
        "nbf": t - 60,
        "exp": t + 3600,
        "oid": OID,
        "tid": TENANT,
    }
    c.update(changes)
    return c


class CraftedCredential:
    """A token credential that returns a JWT made from `claims`, signed
    with HS256 and a made-up secret (or unsigned, alg none). It records
    the tenants the SDK asks for (a 401 challenge names one)."""

    def __init__(self, token_claims, alg="HS256"):
        self.claims = token_claims
        self.alg = alg
        self.tenants = []

    def get_token(self, *scopes, **kwargs):
        self.tenants.append(kwargs.get("tenant_id"))
        key = "a made-up secret, not the issuer signing key" if self.alg == "HS256" else None
        token = jwt.encode(self.claims, key, algorithm=self.alg)
        return AccessToken(token, self.claims["exp"])


def self_signed_certificate(directory):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now() - dt.timedelta(days=1))
        .not_valid_after(now() + dt.timedelta(days=7))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / "cert.pem"
    key_path = directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory):
    """(blob endpoint, certificate path) of a server run with --oauth basic."""
    binary = Path(os.environ.get("STOWAGE_BIN", REPO / "target" / "debug" / "stowage-server"))
    directory = tmp_path_factory.mktemp("oauth")
    cert, key = self_signed_certificate(directory)
    process = subprocess.Popen(
        [str(binary), "--blobHost", "127.0.0.1", "--blobPort", "0", "--inMemoryPersistence",
         "--oauth", "basic", "--cert", str(cert), "--key", str(key)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    port = []
    ready = threading.Event()

    def read():
        for raw in process.stdout:
            match = READY_LINE.search(raw.decode("utf-8", errors="replace"))
            if match and not port:
                port.append(int(match.group(1)))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(30)
    try:
        assert port, "stowage-server --oauth basic did not start"
        yield f"https://127.0.0.1:{port[0]}/{ACCOUNT_NAME}", str(cert)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


def bearer_service(oauth_server, credential):
    endpoint, cert = oauth_server
    return BlobServiceClient(endpoint, credential=credential, connection_verify=cert,
                             **CLIENT_OPTIONS)


@pytest.fixture
def service(oauth_server):
    return bearer_service(oauth_server, CraftedCredential(claims()))


@pytest.fixture
def container(service):
    client = service.get_container_client(unique_name("oauth"))
    client.create_container()
    yield client
    client.delete_container()


def test_container_and_blob_operations_with_a_valid_token(service):
    """A token with the storage audience and a known issuer is accepted for
    container and blob operations, signed (HS256) or not (alg none)."""
    name = unique_name("bearer")
    container = service.get_container_client(name)
    container.create_container(metadata={"by": "bearer"})
    assert container.get_container_properties().metadata == {"by": "bearer"}
    container.upload_blob("a.txt", b"hello bearer")
    assert container.download_blob("a.txt").readall() == b"hello bearer"
    assert [b.name for b in container.list_blobs()] == ["a.txt"]
    assert name in [c.name for c in service.list_containers(name_starts_with=name)]
    container.delete_blob("a.txt")
    container.delete_container()


def test_unsigned_token_and_account_audience_are_accepted(oauth_server):
    """alg none with no signature, and the account's blob endpoint as the
    audience (`https://<account>.blob.core.windows.net`)."""
    cred = CraftedCredential(
        claims(aud=f"https://{ACCOUNT_NAME}.blob.core.windows.net"), alg="none"
    )
    svc = bearer_service(oauth_server, cred)
    name = unique_name("none")
    svc.create_container(name)
    svc.delete_container(name)


def test_expired_token_is_401_invalid_authentication_info_with_challenge(oauth_server):
    """Service: an expired token answers 401 InvalidAuthenticationInfo with
    `WWW-Authenticate: Bearer authorization_uri=... resource_id=...`; the
    SDK follows the challenge once (asking for the tenant it names)."""
    t = int(time.time())
    cred = CraftedCredential(claims(iat=t - 7200, nbf=t - 7200, exp=t - 3600))
    svc = bearer_service(oauth_server, cred)
    with raises(ClientAuthenticationError, 401, "InvalidAuthenticationInfo") as info:
        svc.create_container(unique_name("expired"))
    challenge = info.value.response.headers["WWW-Authenticate"]
    assert challenge == (
        f"Bearer authorization_uri=https://login.microsoftonline.com/{TENANT}/oauth2/authorize "
        "resource_id=https://storage.azure.com"
    )
    assert "Lifetime validation failed. The token is expired." in info.value.message
    assert TENANT in cred.tenants


def test_wrong_audience_and_issuer_are_401(oauth_server):
    """A token for another resource or from an unknown issuer is refused
    the same way; the detail names the claim."""
    for token_claims, detail in [
        (claims(aud="https://vault.azure.net"), "Audience validation failed"),
        (claims(aud="https://other.blob.core.windows.net"), "Audience validation failed"),
        (claims(iss="https://issuer.example/"), "Issuer validation failed"),
    ]:
        svc = bearer_service(oauth_server, CraftedCredential(token_claims))
        with raises(ClientAuthenticationError, 401, "InvalidAuthenticationInfo") as info:
            list(svc.list_containers())
        assert detail in info.value.message


def test_get_user_delegation_key_answers_the_token_identity(service):
    start, expiry = now() - dt.timedelta(minutes=5), now() + dt.timedelta(hours=2)
    key = service.get_user_delegation_key(start, expiry)
    assert key.signed_oid == OID
    assert key.signed_tid == TENANT
    assert key.signed_service == "b"
    assert key.signed_start == start.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert key.signed_expiry == expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", key.signed_version)
    assert len(key.value) == 44
    # The same request gives the same key: nothing is stored.
    assert service.get_user_delegation_key(start, expiry).value == key.value


def test_get_user_delegation_key_needs_a_bearer_token(oauth_server):
    """Service: with Shared Key the operation answers 403
    AuthenticationFailed."""
    endpoint, cert = oauth_server
    svc = BlobServiceClient(endpoint, credential=ACCOUNT_KEY, connection_verify=cert,
                            **CLIENT_OPTIONS)
    with raises(HttpResponseError, 403, "AuthenticationFailed"):
        svc.get_user_delegation_key(now(), now() + dt.timedelta(hours=1))


def test_get_user_delegation_key_expiry_over_seven_days_is_refused(service):
    with raises(HttpResponseError, 400, "InvalidXmlNodeValue"):
        service.get_user_delegation_key(now(), now() + dt.timedelta(days=8))


def sas_blob(container, key, name, permission, cert):
    token = generate_blob_sas(
        ACCOUNT_NAME, container.container_name, name, user_delegation_key=key,
        permission=permission, expiry=now() + dt.timedelta(hours=1),
    )
    return BlobClient.from_blob_url(
        f"{container.url}/{name}?{token}", connection_verify=cert, **CLIENT_OPTIONS
    )


def test_user_delegation_sas_reads_and_writes(oauth_server, service, container):
    cert = oauth_server[1]
    key = service.get_user_delegation_key(now() - dt.timedelta(minutes=5),
                                          now() + dt.timedelta(hours=2))
    container.upload_blob("r.txt", b"delegated")
    reader = sas_blob(container, key, "r.txt", BlobSasPermissions(read=True), cert)
    assert reader.download_blob().readall() == b"delegated"
    writer = sas_blob(container, key, "w.txt", BlobSasPermissions(create=True, write=True), cert)
    writer.upload_blob(b"written with a delegation SAS")
    assert container.download_blob("w.txt").readall() == b"written with a delegation SAS"
    # A container SAS lists and reads any blob of the container.
    token = generate_container_sas(
        ACCOUNT_NAME, container.container_name, user_delegation_key=key,
        permission=ContainerSasPermissions(read=True, list=True),
        expiry=now() + dt.timedelta(hours=1), correlation_id="c0ffee",
    )
    listing = ContainerClient.from_container_url(
        f"{container.url}?{token}", connection_verify=cert, **CLIENT_OPTIONS,
    )
    assert sorted(b.name for b in listing.list_blobs()) == ["r.txt", "w.txt"]


def test_user_delegation_sas_refusals(oauth_server, service, container):
    """Each refusal beside the accepted read above: a permission the SAS
    lacks (403 AuthorizationPermissionMismatch), and a key whose value or
    fields were changed (403 AuthenticationFailed)."""
    cert = oauth_server[1]
    key = service.get_user_delegation_key(now() - dt.timedelta(minutes=5),
                                          now() + dt.timedelta(hours=2))
    container.upload_blob("r.txt", b"delegated")
    assert sas_blob(container, key, "r.txt", "r", cert).download_blob().readall() == b"delegated"
    read_only = sas_blob(container, key, "r.txt", "r", cert)
    with raises(HttpResponseError, 403, "AuthorizationPermissionMismatch"):
        read_only.upload_blob(b"nope", overwrite=True)
    forged_value = service.get_user_delegation_key(now(), now() + dt.timedelta(hours=1))
    forged_value.value = key.value
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(container, forged_value, "r.txt", "r", cert).download_blob().readall()
    longer = service.get_user_delegation_key(now() - dt.timedelta(minutes=5),
                                             now() + dt.timedelta(hours=2))
    longer.signed_expiry = (now() + dt.timedelta(days=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        sas_blob(container, longer, "r.txt", "r", cert).download_blob().readall()


def test_blob_batch_with_a_bearer_token(container):
    """A batch and each of its Delete Blob parts carry the bearer token."""
    for name in ("a.txt", "b.txt"):
        container.upload_blob(name, b"x")
    results = list(container.delete_blobs("a.txt", "b.txt"))
    assert [r.status_code for r in results] == [202, 202]
    assert list(container.list_blobs()) == []
