"""pyarrow's `AzureFileSystem` (Arrow's C++ filesystem over the Azure C++
SDK, pinned in requirements.txt) against Stowage: files, directories and
Parquet datasets, each result checked through the Python SDK.

The filesystem is given the account, its key and the server's `host:port` as
`blob_storage_authority` (and `dfs_storage_authority`) with the `http`
scheme; with an IP address as the authority Arrow puts the account in the
path, as for the emulator. What it sends:

* first use of a container: `HEAD /<account>/<container>/?action=getAccessControl`
  (Data Lake's Get Access Control, to detect a hierarchical namespace); the
  blob endpoint answers `400`, which Arrow reads as a flat namespace, as it
  reads the service's `400` on an account without one;
* `create_dir("c")`: Create Container; `create_dir("c/d")`: an empty marker
  blob `d/` with `is_directory: true` metadata;
* `open_output_stream`: Put Blob (empty) when opened, then Put Block per
  10 MiB buffered and Put Block List on close, with the stream's metadata
  (`Content-Type` and the other content properties become headers);
* `open_append_stream`: Get Block List, then Put Block and Put Block List of
  the old blocks and the new one;
* `get_file_info` / `FileSelector`: List Blobs with `/` (maxresults=1 for
  one path), Get Blob Properties; reads: Get Blob with `x-ms-range`;
* `copy_file`: Copy Blob; `delete_file`: Delete Blob; `delete_dir_contents`:
  Blob Batch of Delete Blob, then a marker blob for the emptied directory;
  `delete_dir("c")`: Delete Container;
* `move`: refused by Arrow itself without a hierarchical namespace.
"""

import hashlib
from urllib.parse import urlsplit

import pytest
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from azure.core.exceptions import ResourceNotFoundError

from helpers import ACCOUNT_KEY, ACCOUNT_NAME, pattern, unique_name

MIB = 1024 * 1024


@pytest.fixture
def fs(blob_endpoint):
    authority = urlsplit(blob_endpoint).netloc
    return pafs.AzureFileSystem(
        account_name=ACCOUNT_NAME,
        account_key=ACCOUNT_KEY,
        blob_storage_authority=authority,
        blob_storage_scheme="http",
        dfs_storage_authority=authority,
        dfs_storage_scheme="http",
    )


def test_version_is_the_pinned_one():
    assert pa.__version__ == "26.0.1"


def test_write_small_file_with_properties_and_read_back(fs, container):
    """A stream's metadata becomes the blob's content properties and user
    metadata; reading the stream back returns the bytes and the properties
    (with the blob's type, lease state and tier)."""
    name = container.container_name
    with fs.open_output_stream(
        f"{name}/notes/hello.txt",
        metadata={"Content-Type": "text/plain", "Cache-Control": "no-cache", "team": "data"},
    ) as out:
        out.write(b"hello from arrow\n")

    properties = container.get_blob_client("notes/hello.txt").get_blob_properties()
    assert properties.size == 17
    assert properties.content_settings.content_type == "text/plain"
    assert properties.content_settings.cache_control == "no-cache"
    assert properties.metadata == {"team": "data"}

    with fs.open_input_stream(f"{name}/notes/hello.txt") as stream:
        assert stream.read() == b"hello from arrow\n"
        metadata = stream.metadata()
    assert metadata["Content-Type"] == b"text/plain"
    assert metadata["Blob-Type"] == b"BlockBlob"
    assert metadata["Lease-State"] == b"available"
    assert metadata["Access-Tier"] == b"Hot"
    assert metadata["team"] == b"data"

    info = fs.get_file_info(f"{name}/notes/hello.txt")
    assert info.type == pafs.FileType.File
    assert info.size == 17
    assert fs.get_file_info(f"{name}/notes").type == pafs.FileType.Directory
    assert fs.get_file_info(f"{name}/missing.txt").type == pafs.FileType.NotFound


def test_multi_block_write_ranged_reads_and_append(fs, container):
    """A 25 MB stream written in 1 MB pieces is staged as 10 MiB blocks and
    committed in order; random-access reads are ranged Get Blob; an append
    stream re-commits the old blocks with a new one."""
    name = container.container_name
    body = pattern(5, 25_000_000)
    with fs.open_output_stream(f"{name}/big.bin") as out:
        for start in range(0, len(body), 1_000_000):
            out.write(body[start : start + 1_000_000])

    blob = container.get_blob_client("big.bin")
    committed, uncommitted = blob.get_block_list("all")
    assert [block.size for block in committed] == [10 * MIB, 10 * MIB, len(body) - 20 * MIB]
    assert uncommitted == []
    assert hashlib.sha256(blob.download_blob().readall()).digest() == hashlib.sha256(body).digest()

    with fs.open_input_file(f"{name}/big.bin") as f:
        assert f.size() == len(body)
        assert f.read_at(1000, 12_345_678) == body[12_345_678 : 12_346_678]
        f.seek(len(body) - 10)
        assert f.read() == body[-10:]

    with fs.open_append_stream(f"{name}/big.bin") as out:
        out.write(b"tail")
    assert fs.get_file_info(f"{name}/big.bin").size == len(body) + 4
    assert len(blob.get_block_list("committed")[0]) == 4
    assert blob.download_blob(offset=len(body) - 2).readall() == body[-2:] + b"tail"


def test_directories_listing_copy_and_deletes(fs, service):
    """`create_dir` makes the container and a marker blob for a directory;
    `FileSelector` lists recursively; `copy_file` is a Copy Blob;
    `delete_dir_contents` deletes through Blob Batch and leaves the directory
    as a marker blob; `delete_dir` of the
    container deletes it; `move` is refused by Arrow on a flat namespace."""
    name = unique_name("pyarrow-dirs")
    fs.create_dir(name)
    client = service.get_container_client(name)
    try:
        fs.create_dir(f"{name}/empty")
        marker = client.get_blob_client("empty/").get_blob_properties()
        assert marker.size == 0
        assert marker.metadata == {"is_directory": "true"}

        for path in ("a/one.bin", "a/b/two.bin", "three.bin"):
            with fs.open_output_stream(f"{name}/{path}") as out:
                out.write(path.encode())
        listed = {
            info.path: info.type
            for info in fs.get_file_info(pafs.FileSelector(name, recursive=True))
        }
        assert listed == {
            f"{name}/a": pafs.FileType.Directory,
            f"{name}/a/b": pafs.FileType.Directory,
            f"{name}/a/b/two.bin": pafs.FileType.File,
            f"{name}/a/one.bin": pafs.FileType.File,
            f"{name}/empty": pafs.FileType.Directory,
            f"{name}/three.bin": pafs.FileType.File,
        }

        fs.copy_file(f"{name}/a/one.bin", f"{name}/copy.bin")
        copied = client.get_blob_client("copy.bin").get_blob_properties()
        assert copied.copy.status == "success"
        assert client.download_blob("copy.bin").readall() == b"a/one.bin"

        with pytest.raises(NotImplementedError):
            fs.move(f"{name}/copy.bin", f"{name}/moved.bin")

        fs.delete_file(f"{name}/copy.bin")
        with pytest.raises(ResourceNotFoundError):
            client.get_blob_client("copy.bin").get_blob_properties()

        fs.delete_dir_contents(f"{name}/a")
        # The directory stays, as an empty marker blob.
        assert sorted(b.name for b in client.list_blobs()) == ["a/", "empty/", "three.bin"]
        assert fs.get_file_info(f"{name}/a").type == pafs.FileType.Directory
    finally:
        fs.delete_dir(name)
    with pytest.raises(ResourceNotFoundError):
        client.get_container_properties()


def test_parquet_dataset_round_trip(fs, container):
    """A hive-partitioned Parquet dataset written with `write_dataset` lands
    as one file per partition; reading it back (whole, and with a filter on
    the partition column) returns the rows; a single Parquet file written
    with `write_table` reads back equal, and the SDK reads its magic bytes."""
    name = container.container_name
    table = pa.table(
        {
            "id": pa.array(range(30_000), pa.int64()),
            "name": [f"row {i}" for i in range(30_000)],
            "part": [i % 3 for i in range(30_000)],
        }
    )
    ds.write_dataset(
        table,
        f"{name}/dataset",
        filesystem=fs,
        format="parquet",
        partitioning=["part"],
        partitioning_flavor="hive",
    )
    names = sorted(blob.name for blob in container.list_blobs(name_starts_with="dataset/"))
    assert [n for n in names if n.endswith(".parquet")] == [
        "dataset/part=0/part-0.parquet",
        "dataset/part=1/part-0.parquet",
        "dataset/part=2/part-0.parquet",
    ]

    dataset = ds.dataset(f"{name}/dataset", filesystem=fs, format="parquet", partitioning="hive")
    back = dataset.to_table().sort_by("id")
    assert back.column("id").to_pylist() == list(range(30_000))
    assert back.column("name").to_pylist() == table.column("name").to_pylist()
    filtered = dataset.to_table(filter=ds.field("part") == 1)
    assert filtered.num_rows == 10_000
    assert set(filtered.column("part").to_pylist()) == {1}

    pq.write_table(table, f"{name}/single.parquet", filesystem=fs)
    assert pq.read_table(f"{name}/single.parquet", filesystem=fs).equals(table)
    data = container.download_blob("single.parquet").readall()
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
    assert pq.read_metadata(f"{name}/single.parquet", filesystem=fs).num_rows == 30_000
