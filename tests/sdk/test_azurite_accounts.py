"""AZURITE_ACCOUNTS read by the server binary as the emulator reads it
(docs/wire/auth.md): entries `name:key1[:key2]` separated by `;`, keys
decoded leniently (missing padding, stray whitespace), empty entries
skipped; the list replaces the development account. The start-up error for
a value that cannot be read is tested in server/tests/startup.rs.
"""

import base64
import os
from pathlib import Path

from azure.core.exceptions import ClientAuthenticationError
from azure.storage.blob import BlobServiceClient
import pytest

from conftest import DEFAULT_BIN, _Server
from helpers import ACCOUNT_KEY, ACCOUNT_NAME, CLIENT_OPTIONS, raises

KEY1 = base64.b64encode(b"first account's key, 32 bytes..").decode()
KEY2 = base64.b64encode(b"second account's key, 32 bytes.").decode()


@pytest.fixture
def accounts_server(tmp_path):
    if os.environ.get("STOWAGE_BLOB_ENDPOINT"):
        pytest.skip("starts its own server with AZURITE_ACCOUNTS")
    assert KEY1.endswith("=") and KEY2.endswith("=")
    # KEY1 without its padding, KEY2 with whitespace around it, a trailing
    # empty entry: all read as the emulator reads them.
    value = f" acct1:{KEY1.rstrip('=')};acct2:{KEY2} ; "
    binary = Path(os.environ.get("STOWAGE_BIN", DEFAULT_BIN))
    server = _Server(
        binary, tmp_path / "data", tmp_path / "server.log", env={"AZURITE_ACCOUNTS": value}
    )
    server.wait_ready()
    yield f"http://127.0.0.1:{server.port}"
    server.stop()


def client(base, account, key):
    return BlobServiceClient(
        f"{base}/{account}",
        credential={"account_name": account, "account_key": key},
        **CLIENT_OPTIONS,
    )


def test_each_listed_account_signs_with_its_decoded_key(accounts_server):
    for account, key in [("acct1", KEY1), ("acct2", KEY2)]:
        service = client(accounts_server, account, key)
        container = service.create_container(f"{account}-c")
        container.upload_blob("b", account.encode())
        assert container.download_blob("b").readall() == account.encode()
        assert [c.name for c in service.list_containers()] == [f"{account}-c"]


def test_the_list_replaces_the_development_account(accounts_server):
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        client(accounts_server, ACCOUNT_NAME, ACCOUNT_KEY).get_service_properties()
    # A listed account with a key it was not given is refused the same way.
    with raises(ClientAuthenticationError, 403, "AuthenticationFailed"):
        client(accounts_server, "acct1", KEY2).get_service_properties()
