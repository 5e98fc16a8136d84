"""Blob index tags through the Python SDK: set/get, tags on upload, tag
counts, Find Blobs by Tags at account and container scope with paging,
if_tags_match_condition on upload, delete, lease and tags, and the error
codes of the tag rules (docs/wire/tags.md)."""

import pytest
from azure.core.exceptions import HttpResponseError
from azure.storage.blob import BlobLeaseClient

from helpers import raises


def test_set_and_get_tags_round_trip_without_changing_the_etag(container):
    """Set Blob Tags replaces the set, Get Blob Tags reads it back, and the
    ETag and Last-Modified stay as they were."""
    blob = container.get_blob_client("b")
    blob.upload_blob(b"hello")
    before = blob.get_blob_properties()
    assert blob.get_blob_tags() == {}
    assert before.tag_count is None
    blob.set_blob_tags({"project": "alpha", "Rank": "010", "path": "a/b c"})
    assert blob.get_blob_tags() == {"project": "alpha", "Rank": "010", "path": "a/b c"}
    after = blob.get_blob_properties()
    assert after.etag == before.etag
    assert after.last_modified == before.last_modified
    assert after.tag_count == 3
    blob.set_blob_tags({})
    assert blob.get_blob_tags() == {}


def test_upload_with_tags_and_list_blobs_include_tags(container):
    """upload_blob(tags=...) stores them; list_blobs(include=['tags']) shows them."""
    container.get_blob_client("tagged").upload_blob(b"x", tags={"k": "v", "n": "1"})
    container.get_blob_client("plain").upload_blob(b"x")
    listed = {b.name: b for b in container.list_blobs(include=["tags"])}
    assert listed["tagged"].tags == {"k": "v", "n": "1"}
    assert listed["tagged"].tag_count == 2
    assert not listed["plain"].tags
    assert container.get_blob_client("tagged").download_blob().properties.tag_count == 2


@pytest.mark.parametrize(
    "tags, code",
    [
        ({f"k{i}": "v" for i in range(11)}, "TagsTooLarge"),
        ({"k" * 129: "v"}, "TagsTooLarge"),
        ({"k": "v" * 257}, "TagsTooLarge"),
        ({"": "v"}, "EmptyTagName"),
        ({"bad!": "v"}, "InvalidTag"),
        ({"k": "v&w"}, "InvalidTag"),
    ],
    ids=["eleven", "long-key", "long-value", "empty-key", "bad-key", "bad-value"],
)
def test_tag_rules_are_400_with_the_service_codes(container, tags, code):
    """Each broken rule is a 400 with its own code; the old tags stay."""
    blob = container.get_blob_client("b")
    blob.upload_blob(b"x", tags={"keep": "me"})
    with raises(HttpResponseError, 400, code):
        blob.set_blob_tags(tags)
    assert blob.get_blob_tags() == {"keep": "me"}


def test_find_blobs_by_tags_pages_at_account_and_container_scope(service, new_container):
    """Find Blobs by Tags across containers and in one, a page at a time;
    only the tags named by the expression come back."""
    one = new_container("finda")
    two = new_container("findb")
    for i in range(5):
        one.get_blob_client(f"m{i}").upload_blob(b"x", tags={"team": "red", "n": f"0{i}"})
        two.get_blob_client(f"m{i}").upload_blob(b"x", tags={"team": "red", "n": f"1{i}"})
        one.get_blob_client(f"x{i}").upload_blob(b"x", tags={"team": "blue"})
    expr = "\"team\" = 'red'"
    pages = list(service.find_blobs_by_tags(expr, results_per_page=3).by_page())
    found = [(b.container_name, b.name) for page in pages for b in page]
    # Other tests' blobs may match "team", so count only these containers.
    mine = sorted(f for f in found if f[0] in (one.container_name, two.container_name))
    assert mine == sorted(
        [(one.container_name, f"m{i}") for i in range(5)]
        + [(two.container_name, f"m{i}") for i in range(5)]
    )
    assert len(pages) >= 4
    first = next(iter(service.find_blobs_by_tags(expr)))
    assert first.tags == {"team": "red"}

    in_two = list(two.find_blobs_by_tags("\"n\" >= '10' AND \"n\" < '13'", results_per_page=2))
    assert sorted(b.name for b in in_two) == ["m0", "m1", "m2"]
    scoped = list(
        service.find_blobs_by_tags(f"@container = '{one.container_name}' AND \"team\" = 'red'")
    )
    assert sorted(b.name for b in scoped) == [f"m{i}" for i in range(5)]


def test_bad_filter_expression_is_400_invalid_query_parameter_value(container):
    with raises(HttpResponseError, 400, "InvalidQueryParameterValue"):
        list(container.find_blobs_by_tags("\"k\" = 'v' OR \"j\" = 'w'"))


def test_if_tags_match_condition_on_upload_delete_lease_and_tags(container):
    """A false if_tags_match_condition is 412 ConditionNotMet and changes
    nothing; a true one lets the operation through."""
    blob = container.get_blob_client("b")
    blob.upload_blob(b"v1", tags={"state": "ready"})
    no = "\"state\" = 'done'"
    yes = "\"state\" = 'ready'"
    with raises(HttpResponseError, 412, "ConditionNotMet"):
        blob.upload_blob(b"v2", overwrite=True, if_tags_match_condition=no)
    assert blob.download_blob().readall() == b"v1"
    blob.upload_blob(b"v2", overwrite=True, tags={"state": "ready"}, if_tags_match_condition=yes)
    assert blob.download_blob().readall() == b"v2"

    with raises(HttpResponseError, 412, "ConditionNotMet"):
        BlobLeaseClient(blob).acquire(lease_duration=15, if_tags_match_condition=no)
    lease = BlobLeaseClient(blob)
    lease.acquire(lease_duration=15, if_tags_match_condition=yes)
    lease.release()

    with raises(HttpResponseError, 412, "ConditionNotMet"):
        blob.get_blob_tags(if_tags_match_condition=no)
    with raises(HttpResponseError, 412, "ConditionNotMet"):
        blob.set_blob_tags({"state": "x"}, if_tags_match_condition=no)
    blob.set_blob_tags({"state": "done"}, if_tags_match_condition=yes)

    with raises(HttpResponseError, 412, "ConditionNotMet"):
        blob.delete_blob(if_tags_match_condition=yes)
    blob.delete_blob(if_tags_match_condition=no)
    assert not blob.exists()


def test_copy_takes_tags_and_checks_the_destination_condition(container):
    source = container.get_blob_client("src")
    source.upload_blob(b"data", tags={"from": "source"})
    dest = container.get_blob_client("dest")
    dest.upload_blob(b"old", tags={"guard": "on"})
    with raises(HttpResponseError, 412, "ConditionNotMet"):
        dest.start_copy_from_url(
            source.url, tags={"copied": "yes"}, if_tags_match_condition="\"guard\" = 'off'"
        )
    dest.start_copy_from_url(
        source.url, tags={"copied": "yes"}, if_tags_match_condition="\"guard\" = 'on'"
    )
    assert dest.download_blob().readall() == b"data"
    assert dest.get_blob_tags() == {"copied": "yes"}
