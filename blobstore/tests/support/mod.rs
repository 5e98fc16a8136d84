//! Helpers shared by the engine test binaries: inputs with defaults, bodies
//! from slices, reading a body back, listing every page.

#![allow(dead_code)] // each test binary uses its own subset

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures::StreamExt;
use stowage_blobstore::*;

pub const ACCOUNT: &str = "devstoreaccount1";

/// Tue, 03 Sep 2024 10:15:07 GMT, as in the e2e tests.
pub fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_725_358_507)
}

pub fn container(name: &str) -> ContainerName {
    ContainerName::parse(name).unwrap()
}

pub fn blob(name: &str) -> BlobName {
    BlobName::parse(name).unwrap()
}

pub fn metadata(pairs: &[(&str, &str)]) -> Metadata {
    Metadata::from_pairs(
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
    )
    .unwrap()
}

pub fn body(data: &[u8]) -> impl futures::Stream<Item = std::io::Result<Bytes>> + Unpin {
    // Several chunks, as a request body arrives.
    let chunks: Vec<std::io::Result<Bytes>> = data
        .chunks(1000)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    futures::stream::iter(chunks)
}

pub async fn create_container(store: &Store, name: &str) {
    store
        .create_container(CreateContainerInput {
            account: ACCOUNT.to_owned(),
            container: container(name),
            metadata: Metadata::default(),
            public_access: None,
            default_encryption_scope: None,
            deny_encryption_scope_override: false,
        })
        .await
        .unwrap();
}

pub fn put_input(c: &str, b: &str, len: usize) -> PutBlobInput {
    PutBlobInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        blob_type: BlobType::BlockBlob,
        content: ContentProperties::default(),
        transactional_md5: None,
        transactional_crc64: None,
        metadata: Metadata::default(),
        conditions: Conditions::default(),
        lease_id: None,
        content_length: len as u64,
        access_tier: None,
        tags: Default::default(),
    }
}

pub async fn put(store: &Store, c: &str, b: &str, data: &[u8]) -> PutBlobOutput {
    store
        .put_blob(put_input(c, b, data.len()), body(data))
        .await
        .unwrap_or_else(|e| panic!("put {c}/{b}: {e}"))
}

pub fn get_input(c: &str, b: &str) -> GetBlobInput {
    GetBlobInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        snapshot: None,
        version_id: None,
        range: None,
        conditions: Conditions::default(),
        lease_id: None,
    }
}

pub async fn read_all(mut s: stowage_blobstore::BlobBody) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(chunk) = s.next().await {
        out.extend_from_slice(&chunk.unwrap());
    }
    out
}

pub async fn get(store: &Store, c: &str, b: &str) -> Vec<u8> {
    let out = store.get_blob(get_input(c, b)).await.unwrap();
    read_all(out.body).await
}

pub fn delete_input(c: &str, b: &str) -> DeleteBlobInput {
    DeleteBlobInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        snapshot: None,
        delete_snapshots: None,
        conditions: Conditions::default(),
        lease_id: None,
        version_id: None,
        permanent: false,
    }
}

pub fn list_input(c: &str) -> ListBlobsInput {
    ListBlobsInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        prefix: String::new(),
        delimiter: None,
        marker: None,
        max_results: 5000,
        include_snapshots: false,
        include_uncommitted: false,
        include_tags: false,
        include_versions: false,
        include_deleted: false,
        include_deleted_with_versions: false,
    }
}

pub fn names(items: &[BlobListItem]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            BlobListItem::Blob { properties, .. } => format!("Blob {}", properties.name),
            BlobListItem::Prefix(p) => format!("BlobPrefix {p}"),
        })
        .collect()
}

/// Every page of a listing, following the markers.
pub async fn all_pages(store: &Store, input: ListBlobsInput) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut input = input;
    loop {
        let out = store.list_blobs(input.clone()).await.unwrap();
        pages.push(names(&out.items));
        match out.next_marker {
            // Through the wire form, as a client would hand it back.
            Some(m) => input.marker = Some(ListingMarker::decode(&m.encode()).unwrap()),
            None => return pages,
        }
        assert!(pages.len() < 1000);
    }
}

pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// A block id: base64 of `block-<i:06>` (every id the same length).
pub fn block_id(i: usize) -> BlockId {
    use base64::Engine as _;
    let raw = format!("block-{i:06}");
    BlockId::parse(&base64::engine::general_purpose::STANDARD.encode(raw)).unwrap()
}

/// Put Block of `len` bytes as `block_id(i)`, no conditions.
pub fn put_block_input(c: &str, b: &str, i: usize, len: u64) -> PutBlockInput {
    PutBlockInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        block_id: block_id(i),
        transactional_md5: None,
        transactional_crc64: None,
        lease_id: None,
        content_length: len,
    }
}

/// Put Block List of `blocks`, no properties, metadata or conditions.
pub fn put_block_list_input(
    c: &str,
    b: &str,
    blocks: Vec<(BlockListKind, BlockId)>,
) -> PutBlockListInput {
    PutBlockListInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        blocks,
        content: ContentProperties::default(),
        metadata: Metadata::default(),
        conditions: Conditions::default(),
        lease_id: None,
        access_tier: None,
        tags: Default::default(),
    }
}

/// A throwaway PostgreSQL server and a new database on it (its connection
/// string), made off the async runtime (the client blocks).
pub fn postgres_database() -> (stowage_blobstore::testing::TempPostgres, String) {
    tokio::task::block_in_place(|| {
        let pg = stowage_blobstore::testing::TempPostgres::start().unwrap();
        let url = pg.new_database().unwrap();
        (pg, url)
    })
}

/// Two nodes (stores) sharing one PostgreSQL database and one manual clock,
/// each with its own data directory: two nodes of a cluster, for the tests
/// of what one node must see of the other's writes. The clock does not
/// move unless a test moves it, so their writes fall into the same tick.
pub async fn two_nodes() -> (
    stowage_blobstore::testing::TempPostgres,
    tempfile::TempDir,
    [stowage_blobstore::Store; 2],
) {
    use stowage_blobstore::{ManualClock, Store, StoreConfig};
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let clock = std::sync::Arc::new(ManualClock::new(epoch()));
    let mut nodes = Vec::new();
    for n in 0..2 {
        let config = StoreConfig::at(dir.path().join(format!("node{n}"))).with_metadata(&url);
        nodes.push(Store::open(config, clock.clone()).await.unwrap());
    }
    let nodes: [Store; 2] = nodes.try_into().unwrap();
    (pg, dir, nodes)
}
