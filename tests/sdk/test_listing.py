"""List Blobs: flat and hierarchical listings, prefix, paging, include
(docs/wire/listing.md#paging and docs/wire/listing.md#list-blobs; the worked example of docs/wire/listing.md#a-worked-example)."""

from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import BlobPrefix, BlobType, ContentSettings

from helpers import raises, unique_name

# The container of docs/wire/listing.md#a-worked-example, in byte order.
EXAMPLE = [
    "README.md",
    "logs/2024/09/01/a.log",
    "logs/2024/09/01/b.log",
    "logs/2024/09/02/c.log",
    "notes.txt",
]


def fill(container, names, metadata=None):
    for name in names:
        container.upload_blob(name, name.encode(), metadata=(metadata or {}).get(name))


def entries(items):
    """(kind, name) for walk_blobs items: BlobPrefix or Blob.

    The SDK parses <Blob> and <BlobPrefix> of one page into two lists and yields
    the page's prefixes first, then its blobs; so the service's interleaved
    order is not visible here, but page boundaries and order within each kind
    are."""
    return [("prefix" if isinstance(item, BlobPrefix) else "blob", item.name) for item in items]


def test_empty_container_lists_nothing(container):
    """List Blobs of an empty container: 200, no entries, empty NextMarker."""
    assert list(container.list_blobs()) == []
    assert list(container.walk_blobs()) == []


def test_flat_listing_is_in_byte_order(container):
    """Names come back in ascending order of their UTF-8 bytes: uppercase before
    lowercase, '-' and '/' before letters."""
    names = ["b", "B", "a-b", "a/b", "a", "Z", "ä", "a0", "A"]
    fill(container, names)
    listed = [b.name for b in container.list_blobs()]
    assert listed == sorted(names, key=lambda n: n.encode("utf-8"))
    assert [n for n in container.list_blob_names()] == listed


def test_flat_listing_of_worked_example(container):
    """The flat listing of the container of docs/wire/listing.md#a-worked-example, whatever the upload order."""
    fill(container, reversed(EXAMPLE))
    assert [b.name for b in container.list_blobs()] == EXAMPLE


def test_walk_blobs_with_delimiter(container):
    """delimiter=/ groups names under BlobPrefix entries: README.md, logs/,
    notes.txt at the top; recursing into a prefix lists with prefix=<it>."""
    fill(container, EXAMPLE)
    top = list(container.walk_blobs(delimiter="/"))
    assert entries(top) == [("prefix", "logs/"), ("blob", "README.md"), ("blob", "notes.txt")]

    def tree(items):
        out = []
        for item in items:
            if isinstance(item, BlobPrefix):
                out.append((item.name, tree(item)))
            else:
                out.append(item.name)
        return out

    assert tree(container.walk_blobs(delimiter="/")) == [
        ("logs/", [
            ("logs/2024/", [
                ("logs/2024/09/", [
                    ("logs/2024/09/01/", ["logs/2024/09/01/a.log", "logs/2024/09/01/b.log"]),
                    ("logs/2024/09/02/", ["logs/2024/09/02/c.log"]),
                ]),
            ]),
        ]),
        "README.md",
        "notes.txt",
    ]


def test_walk_blobs_with_prefix(container):
    """prefix=logs/2024/09/&delimiter=/ gives two BlobPrefix entries;
    prefix=logs/2024/09/01/ gives the two blobs in it; prefix=n gives notes.txt."""
    fill(container, EXAMPLE)
    assert entries(container.walk_blobs(name_starts_with="logs/2024/09/", delimiter="/")) == [
        ("prefix", "logs/2024/09/01/"),
        ("prefix", "logs/2024/09/02/"),
    ]
    assert entries(container.walk_blobs(name_starts_with="logs/2024/09/01/", delimiter="/")) == [
        ("blob", "logs/2024/09/01/a.log"),
        ("blob", "logs/2024/09/01/b.log"),
    ]
    assert [b.name for b in container.list_blobs(name_starts_with="n")] == ["notes.txt"]
    assert list(container.list_blobs(name_starts_with="nothing-starts-so")) == []


def test_multi_character_delimiter(container):
    """prefix=logs/2024&delimiter=/09/: the delimiter is searched from the end of
    the prefix and the group includes it: BlobPrefix logs/2024/09/."""
    fill(container, EXAMPLE)
    assert entries(container.walk_blobs(name_starts_with="logs/2024", delimiter="/09/")) == [
        ("prefix", "logs/2024/09/")
    ]


def test_blob_named_like_its_prefix(container):
    """With prefix=logs/ and delimiter=/ a blob named exactly logs/ is a Blob
    entry (no delimiter after the prefix); at the top it falls in the logs/ group."""
    fill(container, ["logs/", "logs/x", "logs/y/z"])
    assert entries(container.walk_blobs(name_starts_with="logs/", delimiter="/")) == [
        ("prefix", "logs/y/"),
        ("blob", "logs/"),
        ("blob", "logs/x"),
    ]
    assert entries(container.walk_blobs(delimiter="/")) == [("prefix", "logs/")]


def test_list_with_prefix_and_metadata(container):
    """include=metadata adds each blob's metadata (empty when it has none).
    (Case preservation: test_block_blobs.test_blob_metadata_names_keep_their_case.)"""
    metadata = {
        "logs/2024/09/01/a.log": {"first": "2024-09-01T00:00:00Z", "last": "2024-09-01T23:59:59Z"},
        "logs/2024/09/02/c.log": {"only": "one"},
    }
    fill(container, EXAMPLE, metadata)
    listed = list(container.list_blobs(name_starts_with="logs/", include=["metadata"]))
    assert [b.name for b in listed] == [n for n in EXAMPLE if n.startswith("logs/")]
    for blob in listed:
        # The service sends <Metadata /> for a blob without metadata, which the
        # SDK reports as None.
        assert (blob.metadata or {}) == metadata.get(blob.name, {})


def test_listing_properties_match_blob_properties(container):
    """Each <Blob>'s <Properties> describe the blob as Get Blob Properties does
    (the listing's Etag is unquoted, the header's quoted)."""
    settings = ContentSettings(content_type="text/csv", content_language="en", cache_control="no-store")
    blob = container.get_blob_client("props.csv")
    blob.upload_blob(b"a,b\n1,2\n", content_settings=settings)
    (item,) = list(container.list_blobs())
    head = blob.get_blob_properties()
    assert item.name == "props.csv"
    assert item.size == head.size == 8
    assert item.etag.strip('"') == head.etag.strip('"')
    assert item.last_modified == head.last_modified
    assert item.creation_time == head.creation_time
    assert item.blob_type == BlobType.BlockBlob
    assert item.content_settings.content_type == "text/csv"
    assert item.content_settings.content_language == "en"
    assert item.content_settings.cache_control == "no-store"
    assert item.content_settings.content_md5 == head.content_settings.content_md5
    assert item.server_encrypted is True


def test_paging_with_results_per_page(container):
    """maxresults=3 over 7 blobs: full pages of 3, 3, 1 in order, then an empty
    NextMarker; a continuation token resumes after the last name returned."""
    names = [f"blob-{i:02d}" for i in range(7)]
    fill(container, names)
    pages = [[b.name for b in page] for page in container.list_blobs(results_per_page=3).by_page()]
    assert pages == [names[0:3], names[3:6], names[6:7]]

    first = container.list_blobs(results_per_page=3).by_page()
    next(first)
    token = first.continuation_token
    assert token
    resumed = container.list_blobs(results_per_page=3).by_page(continuation_token=token)
    assert [b.name for page in resumed for b in page] == names[3:]


def test_paging_with_prefix_and_metadata(container):
    """Paging keeps the prefix and the include options on every page."""
    names = [f"p/{i}" for i in range(5)]
    fill(container, names + ["q/other"], {n: {"index": n[-1]} for n in names})
    pages = [
        list(page)
        for page in container.list_blobs(
            name_starts_with="p/", include=["metadata"], results_per_page=2
        ).by_page()
    ]
    assert [len(page) for page in pages] == [2, 2, 1]
    items = [b for page in pages for b in page]
    assert [b.name for b in items] == names
    assert [b.metadata for b in items] == [{"index": n[-1]} for n in names]


def test_marker_stays_valid_when_its_blob_is_deleted(container):
    """The marker encodes a position, not an item: after the last blob of a page
    is deleted the next page still starts right after it."""
    names = [f"m{i}" for i in range(4)]
    fill(container, names)
    first = container.list_blobs(results_per_page=2).by_page()
    assert [b.name for b in next(first)] == ["m0", "m1"]
    token = first.continuation_token
    container.delete_blob("m1")
    resumed = container.list_blobs(results_per_page=2).by_page(continuation_token=token)
    assert [b.name for page in resumed for b in page] == ["m2", "m3"]


def test_hierarchical_paging(container):
    """delimiter=/&maxresults=2: README.md and logs/ on the first page (a
    BlobPrefix counts as one item), notes.txt on the second; the prefix is
    never repeated."""
    fill(container, EXAMPLE)
    pages = [entries(page) for page in container.walk_blobs(delimiter="/", results_per_page=2).by_page()]
    assert pages == [[("prefix", "logs/"), ("blob", "README.md")], [("blob", "notes.txt")]]


def test_listing_a_missing_container_is_404(service):
    """List Blobs of a missing container: 404 ContainerNotFound."""
    client = service.get_container_client(unique_name("missing"))
    with raises(ResourceNotFoundError, 404, "ContainerNotFound"):
        list(client.list_blobs())


def test_listing_sees_overwrites_and_deletes(container):
    """A listing reflects deletes and overwrites made before it (sizes included)."""
    fill(container, ["a", "b", "c"])
    container.delete_blob("b")
    container.upload_blob("c", b"longer content", overwrite=True)
    listed = {b.name: b.size for b in container.list_blobs()}
    assert listed == {"a": 1, "c": len(b"longer content")}
