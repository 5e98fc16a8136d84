//! Small extents kept in the metadata database, and writes committed in
//! groups: what a client must not be able to tell apart from the rest.

mod support;

use std::sync::Arc;
use std::time::Duration;

use stowage_blobstore::{
    BlockId, BlockListKind, ByteRange, Conditions, ContentProperties, ManualClock, Metadata,
    PutBlockInput, PutBlockListInput, Store, StoreConfig,
};
use support::*;

/// The largest body kept inline (`extents::INLINE_MAX`).
const INLINE_MAX: usize = 64 * 1024;

fn extent_files(data: &std::path::Path) -> usize {
    let root = data.join("objects/extents");
    let Ok(fanout) = std::fs::read_dir(root) else {
        return 0;
    };
    fanout
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .sum()
}

async fn open(data: &std::path::Path, clock: &Arc<ManualClock>) -> Store {
    Store::open(StoreConfig::at(data), clock.clone())
        .await
        .unwrap()
}

/// Up to the limit a body goes into the database, one byte more into a
/// file; both read back whole and in ranges, before and after reopening.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_bodies_live_in_the_database_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = open(&data, &clock).await;
    create_container(&store, "inl").await;
    let small = pattern(INLINE_MAX);
    let large = pattern(INLINE_MAX + 1);
    put(&store, "inl", "small", &small).await;
    assert_eq!(extent_files(&data), 0, "the small body is not a file");
    put(&store, "inl", "large", &large).await;
    assert_eq!(extent_files(&data), 1, "the larger body is");
    drop(store);

    let store = open(&data, &clock).await;
    assert_eq!(get(&store, "inl", "small").await, small);
    assert_eq!(get(&store, "inl", "large").await, large);
    let mut input = get_input("inl", "small");
    input.range = Some(ByteRange {
        start: 100,
        end: Some(65_000),
    });
    let out = store.get_blob(input).await.unwrap();
    assert_eq!(read_all(out.body).await, small[100..=65_000]);
}

fn block_id(i: usize) -> BlockId {
    use base64::Engine as _;
    let raw = format!("block-{i:05}");
    BlockId::parse(&base64::engine::general_purpose::STANDARD.encode(raw)).unwrap()
}

/// A blob committed from many small blocks is larger than what a read
/// loads up front; it streams block by block, every range is right, and a
/// reader that holds it keeps its blocks through an overwrite and a
/// collection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_small_blocks_stream_piece_by_piece_and_stay_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = open(&data, &clock).await;
    create_container(&store, "inl-blocks").await;
    // 40 blocks of 40,000 bytes: 1.6 MB, past the 1 MiB read up front.
    let whole = pattern(40 * 40_000);
    for (i, chunk) in whole.chunks(40_000).enumerate() {
        store
            .put_block(
                PutBlockInput {
                    account: ACCOUNT.to_owned(),
                    container: container("inl-blocks"),
                    blob: blob("b"),
                    block_id: block_id(i),
                    transactional_md5: None,
                    transactional_crc64: None,
                    lease_id: None,
                    content_length: chunk.len() as u64,
                },
                body(chunk),
            )
            .await
            .unwrap();
    }
    store
        .put_block_list(PutBlockListInput {
            account: ACCOUNT.to_owned(),
            container: container("inl-blocks"),
            blob: blob("b"),
            blocks: (0..40)
                .map(|i| (BlockListKind::Latest, block_id(i)))
                .collect(),
            content: ContentProperties::default(),
            metadata: Metadata::default(),
            conditions: Conditions::default(),
            lease_id: None,
            access_tier: None,
        })
        .await
        .unwrap();
    assert_eq!(extent_files(&data), 0);
    for (start, end) in [
        (0, 39_999),
        (39_999, 40_000),
        (1_000_000, 1_599_999),
        (5, 1_500_000),
    ] {
        let mut input = get_input("inl-blocks", "b");
        input.range = Some(ByteRange {
            start,
            end: Some(end),
        });
        let out = store.get_blob(input).await.unwrap();
        assert!(
            read_all(out.body).await == whole[start as usize..=end as usize],
            "range {start}-{end}"
        );
    }

    // A reader resolves the blob; then it is overwritten and collected.
    let held = store.get_blob(get_input("inl-blocks", "b")).await.unwrap();
    put(&store, "inl-blocks", "b", b"replacement").await;
    clock.advance(Duration::from_secs(31));
    store.collect_garbage().await.unwrap();
    assert!(
        read_all(held.body).await == whole,
        "the held version is whole"
    );
    assert_eq!(
        store.collect_garbage().await.unwrap(),
        40,
        "released: its 40 blocks are collected"
    );
    assert_eq!(get(&store, "inl-blocks", "b").await, b"replacement");
}

/// Many writers at once: each gets its own answer, the failing ones change
/// nothing, and the rest are all there after reopening.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_commit_together_and_fail_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = open(&data, &clock).await;
    create_container(&store, "inl-group").await;
    put(&store, "inl-group", "taken", b"first").await;
    let mut tasks = Vec::new();
    for i in 0..64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            // Every fourth writer asks for a name only if it does not exist,
            // and names one that does.
            let (name, mut input) = if i % 4 == 0 {
                ("taken".to_owned(), put_input("inl-group", "taken", 3))
            } else {
                let name = format!("b{i:02}");
                let input = put_input("inl-group", &name, 3);
                (name, input)
            };
            if i % 4 == 0 {
                input.conditions.if_none_match = Some(stowage_blobstore::EtagMatch::Any);
            }
            let data = format!("{i:03}");
            (
                name,
                store.put_blob(input, body(data.as_bytes())).await.is_ok(),
            )
        }));
    }
    let mut succeeded = 0;
    for task in tasks {
        let (name, ok) = task.await.unwrap();
        assert_eq!(ok, name != "taken", "{name}");
        succeeded += usize::from(ok);
    }
    assert_eq!(succeeded, 48);
    drop(store);
    let store = open(&data, &clock).await;
    assert_eq!(get(&store, "inl-group", "taken").await, b"first");
    for i in (0..64).filter(|i| i % 4 != 0) {
        let name = format!("b{i:02}");
        assert_eq!(
            get(&store, "inl-group", &name).await,
            format!("{i:03}").as_bytes()
        );
    }
}

/// A small body is read before its conditions are checked, yet the answer
/// keeps the order of the checks: a failed condition wins over a wrong
/// MD5, and a refused write stores nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditions_are_answered_before_a_small_body_md5() {
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::in_memory(), clock).await.unwrap();
    create_container(&store, "inl-order").await;
    put(&store, "inl-order", "b", b"original").await;
    let mut input = put_input("inl-order", "b", 4);
    input.transactional_md5 = Some([0; 16]);
    input.conditions.if_none_match = Some(stowage_blobstore::EtagMatch::Any);
    let err = store
        .put_blob(input.clone(), body(b"next"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, stowage_blobstore::Error::Condition(_)),
        "{err:?}"
    );
    input.conditions = stowage_blobstore::Conditions::default();
    let err = store.put_blob(input, body(b"next")).await.unwrap_err();
    assert!(
        matches!(err, stowage_blobstore::Error::Md5Mismatch { .. }),
        "{err:?}"
    );
    assert_eq!(get(&store, "inl-order", "b").await, b"original");
}
