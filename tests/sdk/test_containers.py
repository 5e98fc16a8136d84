"""Containers and service-level operations (docs/wire/listing.md#list-containers, docs/wire/containers.md; docs/wire/listing.md#list-containers)."""

import uuid

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobServiceClient, CorsRule

from helpers import CLIENT_OPTIONS, raises, unique_name


def test_create_container_and_get_properties(new_container, service):
    """Create Container answers 201; Get Container Properties returns the
    metadata as written, an ETag and Last-Modified, and no public access."""
    client = new_container("props", metadata={"owner": "ops", "purpose": "sdk"})
    props = client.get_container_properties()
    assert props.name == client.container_name
    assert props.metadata == {"owner": "ops", "purpose": "sdk"}
    assert props.etag
    assert props.last_modified is not None
    assert props.public_access is None
    assert client.exists()
    assert not service.get_container_client(unique_name("absent")).exists()


def test_create_container_returns_etag_and_last_modified(service):
    """Create Container's response carries ETag and Last-Modified, the same
    values Get Container Properties reports afterwards."""
    client = service.get_container_client(unique_name("created"))
    try:
        created = client.create_container()
        props = client.get_container_properties()
        assert created["etag"] == props.etag
        assert created["last_modified"] == props.last_modified
    finally:
        client.delete_container()


def test_create_existing_container_is_409_container_already_exists(container):
    """The service answers 409 ContainerAlreadyExists to a second Create."""
    with raises(ResourceExistsError, 409, "ContainerAlreadyExists"):
        container.create_container()


def test_delete_container(service):
    """Delete Container answers 202; afterwards the container is gone
    (404 ContainerNotFound) and its name is free again at once (Stowage frees
    the name immediately, where the service may answer ContainerBeingDeleted)."""
    name = unique_name("deleted")
    client = service.get_container_client(name)
    client.create_container()
    client.upload_blob("inside", b"data")
    client.delete_container()
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        client.get_container_properties()
    client.create_container()
    assert list(client.list_blobs()) == []
    client.delete_container()


def test_delete_missing_container_is_404_container_not_found(service):
    """Delete Container on a container that does not exist: 404 ContainerNotFound."""
    client = service.get_container_client(unique_name("missing"))
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        client.delete_container()


def test_get_properties_of_missing_container_is_404(service):
    """Get Container Properties (HEAD-able) of a missing container: 404
    ContainerNotFound, the code carried in x-ms-error-code."""
    client = service.get_container_client(unique_name("missing"))
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        client.get_container_properties()


def test_set_container_metadata_replaces_the_whole_set(container):
    """Set Container Metadata replaces all metadata; sending none clears it."""
    container.set_container_metadata({"first": "1", "second": "2"})
    assert container.get_container_properties().metadata == {"first": "1", "second": "2"}
    container.set_container_metadata({"third": "3"})
    assert container.get_container_properties().metadata == {"third": "3"}
    container.set_container_metadata({})
    assert container.get_container_properties().metadata == {}


def test_container_metadata_names_keep_their_case(new_container, service):
    """Metadata names are returned in the case they were written in (docs/wire/requests.md#metadata), by
    Get Container Properties and by List Containers with include=metadata."""
    metadata = {"CamelCase": "Value", "lower": "x"}
    client = new_container("case", metadata=metadata)
    assert client.get_container_properties().metadata == metadata
    (listed,) = list(service.list_containers(name_starts_with=client.container_name, include_metadata=True))
    assert listed.metadata == metadata
    client.set_container_metadata({"Owner": "ops"})
    assert client.get_container_properties().metadata == {"Owner": "ops"}


def test_set_container_metadata_on_missing_container_is_404(service):
    """Set Container Metadata on a missing container: 404 ContainerNotFound."""
    client = service.get_container_client(unique_name("missing"))
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        client.set_container_metadata({"a": "b"})


def test_list_containers_with_prefix_and_metadata(service, new_container):
    """List Containers with prefix returns exactly the matching containers in
    name order; include=metadata adds each container's metadata (empty when none)."""
    prefix = unique_name("listc")
    names = [f"{prefix}-b", f"{prefix}-a", f"{prefix}-c"]
    metadata = {names[0]: {"k": "b"}, names[1]: {}, names[2]: {"mixed": "C"}}
    for name in names:
        service.create_container(name, metadata=metadata[name])
    try:
        listed = list(service.list_containers(name_starts_with=prefix, include_metadata=True))
        assert [c.name for c in listed] == sorted(names)
        for item in listed:
            assert item.metadata == metadata[item.name]
            assert item.etag
            assert item.last_modified is not None
        plain = list(service.list_containers(name_starts_with=prefix))
        assert [c.name for c in plain] == sorted(names)
    finally:
        for name in names:
            service.delete_container(name)


def test_list_containers_pages_with_results_per_page(service):
    """maxresults=2 over 5 containers: pages of 2, 2 and 1 (Stowage returns full
    pages), in name order, each container once; NextMarker empty at the end."""
    prefix = unique_name("pagec")
    names = [f"{prefix}-{i}" for i in range(5)]
    for name in names:
        service.create_container(name)
    try:
        pages = service.list_containers(name_starts_with=prefix, results_per_page=2).by_page()
        sizes, seen = [], []
        for page in pages:
            items = [c.name for c in page]
            sizes.append(len(items))
            seen.extend(items)
        assert seen == names
        assert sizes == [2, 2, 1]

        # Resume from a continuation token, as a client that pages lazily does.
        first = service.list_containers(name_starts_with=prefix, results_per_page=3).by_page()
        assert [c.name for c in next(first)] == names[:3]
        token = first.continuation_token
        assert token
        rest = service.list_containers(name_starts_with=prefix, results_per_page=3).by_page(
            continuation_token=token
        )
        assert [c.name for page in rest for c in page] == names[3:]
    finally:
        for name in names:
            service.delete_container(name)


def test_list_containers_with_unmatched_prefix_is_empty(service):
    """List Containers with a prefix nothing matches: 200 with no containers."""
    assert list(service.list_containers(name_starts_with=unique_name("nothing"))) == []


@pytest.mark.parametrize(
    "name, status, code",
    [
        ("UpperCase", 400, "InvalidResourceName"),
        ("under_score", 400, "InvalidResourceName"),
        ("double--dash", 400, "InvalidResourceName"),
        ("-leading-dash", 400, "InvalidResourceName"),
        ("trailing-dash-", 400, "InvalidResourceName"),
        ("ab", 400, "OutOfRangeInput"),
        ("a" * 64, 400, "OutOfRangeInput"),
    ],
)
def test_invalid_container_names_are_refused(service, name, status, code):
    """Create Container validates names: 3-63 chars (400 OutOfRangeInput),
    only a-z 0-9 and single dashes inside (400 InvalidResourceName)."""
    with raises(HttpResponseError, status, code):
        service.create_container(name)


def test_shortest_and_longest_valid_container_names(service):
    """Names of exactly 3 and exactly 63 characters are valid (201)."""
    short = uuid.uuid4().hex[:3]
    long = unique_name("x").ljust(63, "a")
    for name in (short, long):
        client = service.get_container_client(name)
        client.create_container()
        assert client.get_container_properties().name == name
        client.delete_container()


def test_get_account_information(service):
    """Get Account Information: 200 with x-ms-sku-name Standard_RAGRS and
    x-ms-account-kind StorageV2 (docs/wire/service.md#get-account-information)."""
    info = service.get_account_information()
    assert info["sku_name"] == "Standard_RAGRS"
    assert info["account_kind"] == "StorageV2"


def test_get_and_set_service_properties(service):
    """Get Blob Service Properties returns the defaults; Set stores CORS rules
    (202), and Get returns them; absent elements keep their values."""
    props = service.get_service_properties()
    assert props["cors"] == []
    assert props["hour_metrics"].enabled is False
    assert props["delete_retention_policy"].enabled is False
    rule = CorsRule(["http://example.test"], ["GET", "PUT"], max_age_in_seconds=600)
    try:
        service.set_service_properties(cors=[rule])
        got = service.get_service_properties()["cors"]
        assert len(got) == 1
        assert got[0].allowed_origins == "http://example.test"
        assert got[0].allowed_methods == "GET,PUT"
        assert got[0].max_age_in_seconds == 600
    finally:
        service.set_service_properties(cors=[])
    assert service.get_service_properties()["cors"] == []


def test_older_api_version_is_served(connection_string):
    """An SDK pinned to an older x-ms-version (2021-08-06) works the same."""
    old = BlobServiceClient.from_connection_string(
        connection_string, api_version="2021-08-06", **CLIENT_OPTIONS
    )
    client = old.get_container_client(unique_name("oldver"))
    client.create_container(metadata={"v": "old"})
    try:
        client.upload_blob("b", b"old version")
        assert client.download_blob("b").readall() == b"old version"
        assert client.get_container_properties().metadata == {"v": "old"}
    finally:
        client.delete_container()
