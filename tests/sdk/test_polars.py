"""polars (pinned in requirements.txt) reading and writing `az://` paths on
Stowage, configured the way its documentation shows: `storage_options` with
the account, its key (or a SAS token), the endpoint and `allow_http`.

polars reaches Azure through the Rust `object_store` crate of its own
build. What it sends:

* `write_parquet` / `write_csv`: one Put Blob of the whole file;
  `partition_by`: one Put Blob per partition (`<path>/<col>=<v>/00000000.parquet`);
* `sink_parquet` / `sink_csv` / `sink_ndjson` (streaming): Put Block per
  part and Put Block List, or one Put Blob when the output is small;
* reads: Get Blob Properties, then ranged Get Blob (footer first for
  Parquet, only the needed row groups and columns);
* a glob (`**/*.parquet`): List Blobs (flat, with a prefix).
"""

from datetime import datetime, timedelta, timezone

import polars as pl
import pytest
from azure.storage.blob import ContainerSasPermissions, generate_container_sas

from helpers import ACCOUNT_KEY, ACCOUNT_NAME

MIB = 1024 * 1024


@pytest.fixture
def storage_options(blob_endpoint):
    return {
        "account_name": ACCOUNT_NAME,
        "account_key": ACCOUNT_KEY,
        "endpoint": blob_endpoint,
        "allow_http": "true",
    }


def frame(rows, seed=1):
    """A deterministic frame of `rows` rows (integers, strings, a partition
    column)."""
    ids = pl.int_range(rows, dtype=pl.Int64)
    return pl.select(
        id=ids,
        value=(ids.hash(seed) // 4).cast(pl.Int64),
        label=pl.format("label {}", ids % 97),
        part=ids % 3,
    )


def test_version_is_the_pinned_one():
    assert pl.__version__ == "2.1.0"


def test_parquet_write_read_and_scan(storage_options, container):
    """`write_parquet` stores one blob (the SDK reads a Parquet file: `PAR1`
    at both ends); `read_parquet` returns the same frame; `scan_parquet` with
    a filter and a projection reads only what it needs and returns exactly
    the matching rows."""
    df = frame(50_000)
    path = f"az://{container.container_name}/tables/data.parquet"
    df.write_parquet(path, storage_options=storage_options)

    blob = container.get_blob_client("tables/data.parquet")
    data = blob.download_blob().readall()
    assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"
    assert blob.get_blob_properties().size == len(data)

    assert pl.read_parquet(path, storage_options=storage_options).equals(df)
    picked = (
        pl.scan_parquet(path, storage_options=storage_options)
        .filter(pl.col("id") % 1000 == 7)
        .select("id", "label")
        .collect()
    )
    assert picked["id"].to_list() == list(range(7, 50_000, 1000))
    assert picked.columns == ["id", "label"]


def test_partitioned_dataset_and_glob_scan(storage_options, container):
    """`partition_by` writes one Parquet blob per value under hive-style
    names; a `**` glob lists and reads them back with the partition column,
    and a filter on it returns only that partition's rows."""
    df = frame(9_000)
    root = f"az://{container.container_name}/dataset"
    df.write_parquet(root, storage_options=storage_options, partition_by="part")

    names = sorted(b.name for b in container.list_blobs(name_starts_with="dataset/"))
    assert names == [
        "dataset/part=0/00000000.parquet",
        "dataset/part=1/00000000.parquet",
        "dataset/part=2/00000000.parquet",
    ]
    scan = pl.scan_parquet(
        f"{root}/**/*.parquet", storage_options=storage_options, hive_partitioning=True
    )
    back = scan.collect().sort("id")
    assert back.select(df.columns).equals(df)
    only_two = scan.filter(pl.col("part") == 2).collect()
    assert only_two.height == 3_000
    assert set(only_two["part"].to_list()) == {2}


def test_streaming_sinks_upload_in_blocks(storage_options, container):
    """A streaming sink larger than polars' 32 MiB part is uploaded as staged
    blocks committed with Put Block List; the CSV and NDJSON written that way
    read back equal."""
    df = frame(1_000_000, seed=2)
    name = container.container_name
    df.lazy().sink_csv(f"az://{name}/stream/data.csv", storage_options=storage_options)
    df.lazy().sink_ndjson(f"az://{name}/stream/data.ndjson", storage_options=storage_options)

    for blob_name in ("stream/data.csv", "stream/data.ndjson"):
        blob = container.get_blob_client(blob_name)
        committed, uncommitted = blob.get_block_list("all")
        size = blob.get_blob_properties().size
        full, last = divmod(size, 32 * MIB)
        assert full >= 1, blob_name
        assert [block.size for block in committed] == [32 * MIB] * full + [last], blob_name
        assert uncommitted == []

    csv = pl.scan_csv(f"az://{name}/stream/data.csv", storage_options=storage_options)
    assert csv.collect().equals(df)
    ndjson = pl.scan_ndjson(f"az://{name}/stream/data.ndjson", storage_options=storage_options)
    assert ndjson.collect().equals(df)


def test_container_sas_token(storage_options, container, blob_endpoint):
    """With a read and list container SAS in `storage_options` (`sas_token`)
    polars lists and reads; a write with it is refused by the server with
    403 AuthorizationPermissionMismatch, which polars raises as
    PermissionError."""
    df = frame(1_000)
    name = container.container_name
    df.write_parquet(f"az://{name}/in/a.parquet", storage_options=storage_options)
    df.write_parquet(f"az://{name}/in/b.parquet", storage_options=storage_options)

    token = generate_container_sas(
        ACCOUNT_NAME,
        name,
        account_key=ACCOUNT_KEY,
        permission=ContainerSasPermissions(read=True, list=True),
        expiry=datetime.now(timezone.utc) + timedelta(hours=1),
    )
    with_sas = {
        "account_name": ACCOUNT_NAME,
        "sas_token": token,
        "endpoint": blob_endpoint,
        "allow_http": "true",
    }
    both = pl.scan_parquet(f"az://{name}/in/*.parquet", storage_options=with_sas).collect()
    assert both.height == 2_000
    with pytest.raises(PermissionError, match="403.*AuthorizationPermissionMismatch"):
        df.write_parquet(f"az://{name}/denied.parquet", storage_options=with_sas)
    assert [b.name for b in container.list_blobs()] == ["in/a.parquet", "in/b.parquet"]
