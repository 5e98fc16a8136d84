"""Optimistic concurrency through the SDK's etag / match_condition and
if_modified_since / if_unmodified_since arguments (docs/wire/conditions.md).

SDK mapping: etag=E with MatchConditions.IfNotModified sends If-Match: E,
with IfModified sends If-None-Match: E; IfPresent sends If-Match: *,
IfMissing sends If-None-Match: *. A 412 with code ConditionNotMet becomes
ResourceModifiedError. A 304 carries x-ms-error-code: ConditionNotMet as well
(docs/wire/errors.md#the-error-answer), so the SDK raises ResourceModifiedError for it too, with
status_code 304 (it raises ResourceNotModifiedError only for a 304 without a
code); the tests check status and code.

Dates are derived from the resource's own Last-Modified (whole seconds), not
from the local clock, so the tests do not depend on clock agreement.
"""

from datetime import timedelta

from azure.core import MatchConditions
from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.storage.blob import ContentSettings

from helpers import raises

SECOND = timedelta(seconds=1)
HOUR = timedelta(hours=1)
STALE_ETAG = '"0x8D0000000000000"'


def make_blob(container, name="blob", data=b"v1"):
    blob = container.get_blob_client(name)
    blob.upload_blob(data, overwrite=True)
    return blob, blob.get_blob_properties()


def test_upload_with_if_match(container):
    """Put Blob with If-Match: the current ETag succeeds and yields a new ETag;
    the old (now stale) ETag then fails with 412 ConditionNotMet and nothing
    changes."""
    blob, props = make_blob(container)
    result = blob.upload_blob(b"v2", overwrite=True, etag=props.etag,
                              match_condition=MatchConditions.IfNotModified)
    assert result["etag"] != props.etag
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.upload_blob(b"v3", overwrite=True, etag=props.etag,
                         match_condition=MatchConditions.IfNotModified)
    assert blob.download_blob().readall() == b"v2"
    assert blob.get_blob_properties().etag == result["etag"]


def test_upload_with_if_none_match_etag(container):
    """Put Blob with If-None-Match: E fails (412 ConditionNotMet) when E is the
    current ETag and succeeds with any other ETag."""
    blob, props = make_blob(container)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.upload_blob(b"v2", overwrite=True, etag=props.etag,
                         match_condition=MatchConditions.IfModified)
    assert blob.download_blob().readall() == b"v1"
    blob.upload_blob(b"v2", overwrite=True, etag=STALE_ETAG, match_condition=MatchConditions.IfModified)
    assert blob.download_blob().readall() == b"v2"


def test_upload_with_if_match_star(container):
    """If-Match: * (IfPresent) holds only when the blob exists: on a missing
    blob Put Blob answers 412 ConditionNotMet and creates nothing."""
    missing = container.get_blob_client("missing")
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        missing.upload_blob(b"x", overwrite=True, match_condition=MatchConditions.IfPresent)
    assert not missing.exists()
    blob, _ = make_blob(container)
    blob.upload_blob(b"v2", overwrite=True, match_condition=MatchConditions.IfPresent)
    assert blob.download_blob().readall() == b"v2"


def test_upload_with_if_none_match_star(container):
    """If-None-Match: * (IfMissing) creates a missing blob; on an existing one
    Put Blob answers 409 BlobAlreadyExists."""
    blob = container.get_blob_client("create-only")
    blob.upload_blob(b"first", overwrite=True, match_condition=MatchConditions.IfMissing)
    with raises(ResourceExistsError, 409, "BlobAlreadyExists"):
        blob.upload_blob(b"second", overwrite=True, match_condition=MatchConditions.IfMissing)
    assert blob.download_blob().readall() == b"first"


def test_get_properties_with_etag_conditions(container):
    """HEAD with If-None-Match: <current> is 304 (code ConditionNotMet); with
    If-Match: <stale> it is 412 ConditionNotMet; the opposite pairs succeed."""
    blob, props = make_blob(container)
    with raises(ResourceModifiedError, 304, "ConditionNotMet"):
        blob.get_blob_properties(etag=props.etag, match_condition=MatchConditions.IfModified)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.get_blob_properties(etag=STALE_ETAG, match_condition=MatchConditions.IfNotModified)
    assert blob.get_blob_properties(etag=props.etag, match_condition=MatchConditions.IfNotModified).etag == props.etag
    assert blob.get_blob_properties(etag=STALE_ETAG, match_condition=MatchConditions.IfModified).etag == props.etag


def test_download_with_etag_conditions(container):
    """GET with If-None-Match: <current> is 304; with If-Match: <stale> 412."""
    blob, props = make_blob(container)
    with raises(ResourceModifiedError, 304, "ConditionNotMet"):
        blob.download_blob(etag=props.etag, match_condition=MatchConditions.IfModified)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.download_blob(etag=STALE_ETAG, match_condition=MatchConditions.IfNotModified)
    assert blob.download_blob(etag=props.etag, match_condition=MatchConditions.IfNotModified).readall() == b"v1"


def test_download_with_date_conditions(container):
    """If-Modified-Since: T (the blob's own Last-Modified) is 304, T-1s is 200;
    If-Unmodified-Since: T-1s is 412 ConditionNotMet, T is 200 (dates compare
    at whole seconds)."""
    blob, props = make_blob(container)
    modified = props.last_modified
    with raises(ResourceModifiedError, 304, "ConditionNotMet"):
        blob.download_blob(if_modified_since=modified)
    assert blob.download_blob(if_modified_since=modified - SECOND).readall() == b"v1"
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.download_blob(if_unmodified_since=modified - SECOND)
    assert blob.download_blob(if_unmodified_since=modified).readall() == b"v1"
    with raises(ResourceModifiedError, 304, "ConditionNotMet"):
        blob.get_blob_properties(if_modified_since=modified + HOUR)


def test_if_none_match_star_on_read_is_400_unsatisfiable(container):
    """If-None-Match: * on a read of an existing blob: 400 UnsatisfiableCondition."""
    blob, _ = make_blob(container)
    with raises(HttpResponseError, 400, "UnsatisfiableCondition"):
        blob.get_blob_properties(match_condition=MatchConditions.IfMissing)


def test_set_metadata_with_etag(container):
    """Set Blob Metadata with a stale If-Match: 412 and the metadata stays; with
    the current ETag it succeeds and changes the ETag, so a second writer that
    read the same ETag loses."""
    blob, props = make_blob(container)
    result = blob.set_blob_metadata({"writer": "one"}, etag=props.etag,
                                    match_condition=MatchConditions.IfNotModified)
    assert result["etag"] != props.etag
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.set_blob_metadata({"writer": "two"}, etag=props.etag,
                               match_condition=MatchConditions.IfNotModified)
    assert blob.get_blob_properties().metadata == {"writer": "one"}


def test_set_http_headers_with_conditions(container):
    """Set Blob Properties with If-Unmodified-Since before Last-Modified: 412;
    with a stale If-Match: 412; with the current ETag: 200 and a new ETag."""
    blob, props = make_blob(container)
    settings = ContentSettings(content_type="text/plain")
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.set_http_headers(settings, if_unmodified_since=props.last_modified - HOUR)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.set_http_headers(settings, etag=STALE_ETAG, match_condition=MatchConditions.IfNotModified)
    result = blob.set_http_headers(settings, etag=props.etag, match_condition=MatchConditions.IfNotModified)
    assert result["etag"] != props.etag
    assert blob.get_blob_properties().content_settings.content_type == "text/plain"


def test_delete_with_conditions(container):
    """Delete Blob with a stale If-Match or If-Modified-Since after
    Last-Modified: 412 and the blob stays; with the current ETag: deleted.
    On a missing blob the answer is 404 whatever the conditions."""
    blob, props = make_blob(container)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.delete_blob(etag=STALE_ETAG, match_condition=MatchConditions.IfNotModified)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        blob.delete_blob(if_modified_since=props.last_modified + HOUR)
    assert blob.exists()
    blob.delete_blob(etag=props.etag, match_condition=MatchConditions.IfNotModified)
    assert not blob.exists()
    with raises(ResourceNotFoundError, 404, "BlobNotFound"):
        blob.delete_blob(etag=props.etag, match_condition=MatchConditions.IfNotModified)


def test_reads_do_not_change_the_etag_and_every_write_does(container):
    """Reads leave ETag and Last-Modified alone; each write (Put Blob, Set
    Metadata, Set Properties) gives an ETag never seen before, even within one
    second; an If-Match on any earlier ETag then fails."""
    blob, props = make_blob(container)
    blob.download_blob().readall()
    blob.get_blob_properties()
    assert blob.get_blob_properties().etag == props.etag
    seen = [props.etag]
    seen.append(blob.set_blob_metadata({"a": "b"})["etag"])
    seen.append(blob.set_http_headers(ContentSettings(content_type="a/b"))["etag"])
    seen.append(blob.upload_blob(b"v2", overwrite=True)["etag"])
    seen.append(blob.upload_blob(b"v2", overwrite=True)["etag"])
    assert len(set(seen)) == len(seen)
    for old in seen[:-1]:
        with raises(ResourceModifiedError, 412, "ConditionNotMet"):
            blob.set_blob_metadata({}, etag=old, match_condition=MatchConditions.IfNotModified)


def test_container_conditions(container):
    """Container writes take only date conditions: Set Container Metadata with
    If-Modified-Since after Last-Modified is 412; Delete Container with
    If-Unmodified-Since before it is 412 and the container stays; matching
    dates succeed."""
    props = container.get_container_properties()
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        container.set_container_metadata({"a": "1"}, if_modified_since=props.last_modified + HOUR)
    container.set_container_metadata({"a": "1"}, if_modified_since=props.last_modified - HOUR)
    props = container.get_container_properties()
    assert props.metadata == {"a": "1"}
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        container.delete_container(if_unmodified_since=props.last_modified - HOUR)
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        container.delete_container(if_modified_since=props.last_modified + HOUR)
    assert container.exists()
    container.delete_container(if_unmodified_since=props.last_modified + HOUR)
    assert not container.exists()


def test_container_metadata_changes_the_container_etag_not_blob_writes(container):
    """Set Container Metadata gives the container a new ETag; blob writes in it
    do not change the container's ETag."""
    before = container.get_container_properties().etag
    container.upload_blob("x", b"data")
    assert container.get_container_properties().etag == before
    after = container.set_container_metadata({"k": "v"})["etag"]
    assert after != before
    assert container.get_container_properties().etag == after
    with raises(ResourceModifiedError, 412, "ConditionNotMet"):
        container.delete_container(if_unmodified_since=container.get_container_properties().last_modified - HOUR)
