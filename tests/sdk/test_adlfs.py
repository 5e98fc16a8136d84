"""adlfs: fsspec's filesystem for Azure Blob Storage, the way pandas and dask
reach it (``abfs://`` URLs), driven with the suite's connection string.

adlfs sits on the SDK's asyncio client (``azure.storage.blob.aio`` over
aiohttp). What each filesystem call sends:

* ``open(path, "wb")`` ... ``close()``: Put Block per buffered chunk, then
  Put Block List (``"xb"`` adds ``If-None-Match: *`` to the Put Block List);
* ``pipe_file``: Put Blob; ``open(path, "ab")``: Put Blob of an append blob,
  then Append Block;
* ``cat_file`` / ``open(path, "rb")``: Get Blob with ``x-ms-range``;
  ``info``: Get Blob Properties;
* ``ls``: List Blobs with ``delimiter=/``; ``find``: List Blobs flat;
  ``ls("")``: List Containers;
* ``cp_file``: Copy Blob; ``rm_file``: Delete Blob;
* ``mkdir(container)`` / ``rmdir(container)``: Create / Delete Container.

Paths are ``<container>/<blob name>``. Every test uses its own filesystem
instance (no fsspec instance cache, no listing cache), so each call reaches
the server.
"""

import pytest
from adlfs import AzureBlobFileSystem
from azure.core.exceptions import ResourceNotFoundError

from helpers import pattern, unique_name


@pytest.fixture
def fs(connection_string):
    """An adlfs filesystem on the server under test."""
    return AzureBlobFileSystem(
        connection_string=connection_string,
        skip_instance_cache=True,
        use_listings_cache=False,
    )


@pytest.fixture
def root(container):
    """The test's (fresh, empty) container as an adlfs path."""
    return container.container_name


def test_write_list_read_delete(fs, root, container):
    """Writing a file commits a block blob (Put Block + Put Block List: 201);
    listing its directory shows it with its size; reading returns the bytes;
    rm deletes it (202) and the directory is empty again."""
    path = f"{root}/reports/2024/summary.csv"
    body = b"region,total\nnorth,10\nsouth,32\n"
    with fs.open(path, "wb") as f:
        f.write(body)

    assert fs.ls(f"{root}/reports/2024") == [path]
    assert fs.ls(root) == [f"{root}/reports"]
    with fs.open(path, "rb") as f:
        assert f.read() == body
    assert fs.cat_file(path) == body
    assert fs.info(path)["size"] == len(body)
    # The SDK sees the same blob.
    assert container.download_blob("reports/2024/summary.csv").readall() == body

    fs.rm_file(path)
    assert not fs.exists(path)
    assert fs.ls(root) == []
    with pytest.raises(ResourceNotFoundError):
        container.get_blob_client("reports/2024/summary.csv").get_blob_properties()


def test_multi_block_write_and_ranged_reads(fs, root):
    """A file written in 1 MiB chunks becomes several staged blocks committed
    in order; ranged reads (206 with x-ms-range) return exactly the slices."""
    path = f"{root}/big.bin"
    body = pattern(0, 3 * 1024 * 1024 + 12_345)
    with fs.open(path, "wb", block_size=1024 * 1024) as f:
        for start in range(0, len(body), 300_000):
            f.write(body[start : start + 300_000])

    assert fs.size(path) == len(body)
    assert fs.cat_file(path, start=5, end=105) == body[5:105]
    assert fs.cat_file(path, start=len(body) - 10) == body[-10:]
    with fs.open(path, "rb", block_size=64 * 1024) as f:
        f.seek(2 * 1024 * 1024 + 7)
        assert f.read(1000) == body[2 * 1024 * 1024 + 7 : 2 * 1024 * 1024 + 1007]
    assert fs.cat_file(path) == body


def test_listing_directories_and_details(fs, root):
    """ls is one level (BlobPrefix entries become directories), find is the
    flat listing; detail=True carries type and size."""
    files = {
        "a.txt": b"a",
        "dir/b.txt": b"bb",
        "dir/sub/c.txt": b"ccc",
        "dir/sub/d.txt": b"dddd",
        "other/e.txt": b"eeeee",
    }
    for name, body in files.items():
        fs.pipe_file(f"{root}/{name}", body)

    assert sorted(fs.ls(root)) == [f"{root}/a.txt", f"{root}/dir", f"{root}/other"]
    detail = {e["name"]: e for e in fs.ls(f"{root}/dir", detail=True)}
    assert set(detail) == {f"{root}/dir/b.txt", f"{root}/dir/sub"}
    assert detail[f"{root}/dir/b.txt"]["type"] == "file"
    assert detail[f"{root}/dir/b.txt"]["size"] == 2
    assert detail[f"{root}/dir/sub"]["type"] == "directory"

    assert fs.find(root) == sorted(f"{root}/{name}" for name in files)
    assert fs.find(f"{root}/dir") == [
        f"{root}/dir/b.txt",
        f"{root}/dir/sub/c.txt",
        f"{root}/dir/sub/d.txt",
    ]
    assert fs.isdir(f"{root}/dir/sub")
    assert fs.isfile(f"{root}/dir/sub/c.txt")
    assert fs.du(f"{root}/dir") == 2 + 3 + 4
    assert fs.glob(f"{root}/dir/sub/*.txt") == [
        f"{root}/dir/sub/c.txt",
        f"{root}/dir/sub/d.txt",
    ]


def test_exclusive_create_refuses_an_existing_file(fs, root):
    """Mode "xb" commits with If-None-Match: *; over an existing blob the
    service answers 409 BlobAlreadyExists, which adlfs turns into
    FileExistsError, and the blob keeps its content."""
    path = f"{root}/once.txt"
    with fs.open(path, "xb") as f:
        f.write(b"first")
    with pytest.raises(FileExistsError):
        with fs.open(path, "xb") as f:
            f.write(b"second")
    assert fs.cat_file(path) == b"first"


def test_overwrite_copy_and_remove_recursively(fs, root):
    """Writing again replaces the blob; cp_file is a Copy Blob that completes
    at once; rm(recursive=True) deletes every blob under the prefix."""
    fs.pipe_file(f"{root}/src/x.txt", b"old")
    fs.pipe_file(f"{root}/src/x.txt", b"new content")
    fs.cp_file(f"{root}/src/x.txt", f"{root}/dst/x.txt")
    assert fs.cat_file(f"{root}/dst/x.txt") == b"new content"
    assert fs.cat_file(f"{root}/src/x.txt") == b"new content"

    fs.pipe_file(f"{root}/src/y/z.txt", b"z")
    fs.rm(f"{root}/src", recursive=True)
    assert fs.find(root) == [f"{root}/dst/x.txt"]


def test_append_mode_writes_an_append_blob(fs, root, container):
    """Mode "ab" creates an append blob and appends each flushed buffer
    (Append Block); appending again adds to the end."""
    path = f"{root}/log.txt"
    with fs.open(path, "ab") as f:
        f.write(b"line 1\n")
    with fs.open(path, "ab") as f:
        f.write(b"line 2\n")
    assert fs.cat_file(path) == b"line 1\nline 2\n"
    assert container.get_blob_client("log.txt").get_blob_properties().blob_type == "AppendBlob"


def test_missing_paths(fs, root):
    """Reading a missing blob is FileNotFoundError (404 BlobNotFound); a
    missing directory lists as FileNotFoundError too."""
    with pytest.raises(FileNotFoundError):
        fs.cat_file(f"{root}/nope.txt")
    with pytest.raises(FileNotFoundError):
        fs.info(f"{root}/nope.txt")
    with pytest.raises(FileNotFoundError):
        fs.ls(f"{root}/no-such-dir")
    assert not fs.exists(f"{root}/nope.txt")


def test_containers_are_top_level_directories(fs, service, connection_string):
    """mkdir of a top-level name creates a container (201); ls("") lists it
    among the containers; rmdir deletes it (202)."""
    name = unique_name("adlfs-mkdir")
    fs.mkdir(name)
    try:
        assert service.get_container_client(name).exists()
        assert fs.isdir(name)
        # adlfs lists containers through its listings cache (with the cache
        # off, ls("") raises KeyError in adlfs itself), so use a fresh
        # instance with the cache on.
        cached = AzureBlobFileSystem(connection_string=connection_string, skip_instance_cache=True)
        assert name in [p.rstrip("/") for p in cached.ls("")]
        fs.pipe_file(f"{name}/f.txt", b"f")
        assert fs.cat_file(f"{name}/f.txt") == b"f"
        fs.rm_file(f"{name}/f.txt")
        fs.rmdir(name)
        assert not service.get_container_client(name).exists()
    finally:
        try:
            service.delete_container(name)
        except ResourceNotFoundError:
            pass
