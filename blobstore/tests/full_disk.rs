//! A full disk injected into the database layer (SQLite's `max_page_count`
//! makes a write that needs a new page fail with `SQLITE_FULL`, "database
//! or disk is full", as a full file system does): the store refuses writes
//! with `DiskFull`, still deletes, loses nothing, and accepts writes again
//! once there is room.

mod support;

use std::sync::Arc;
use std::time::Duration;

use stowage_blobstore::{Error, ManualClock, Store, StoreConfig};
use support::*;

/// Inline bodies (at most 64 KiB) are written by the metadata transaction.
const INLINE: usize = 60 * 1024;

fn refused(out: Result<stowage_blobstore::PutBlobOutput, Error>, what: &str) {
    match out {
        Err(Error::DiskFull) => {}
        other => panic!("{what}: expected DiskFull, got {other:?}"),
    }
}

#[tokio::test]
async fn a_full_database_refuses_writes_serves_deletes_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data")).with_disk_reserve(64 * 1024);
    let store = Store::open(config, clock.clone()).await.unwrap();
    create_container(&store, "full").await;
    let keep = pattern(INLINE);
    put(&store, "full", "keep", &keep).await;
    put(&store, "full", "other", &pattern(INLINE - 1)).await;

    // No page more than the database has now.
    let pages = store.limit_database_pages(1).await.unwrap();
    assert!(pages > 1);
    let big = pattern(INLINE - 2);
    refused(
        store
            .put_blob(put_input("full", "new", big.len()), body(&big))
            .await,
        "the write that finds the database full",
    );
    // Later writes are refused at once, even one that would fit.
    refused(
        store
            .put_blob(put_input("full", "tiny", 1), body(b"x"))
            .await,
        "a small write",
    );
    store
        .delete_blob(delete_input("full", "other"))
        .await
        .unwrap();
    assert_eq!(get(&store, "full", "keep").await, keep);

    // Room again: a second after the last refusal, writes go through.
    store
        .limit_database_pages(u64::from(u32::MAX))
        .await
        .unwrap();
    refused(
        store
            .put_blob(put_input("full", "tiny", 1), body(b"x"))
            .await,
        "within the second",
    );
    clock.advance(Duration::from_secs(1));
    put(&store, "full", "new", &big).await;
    assert_eq!(get(&store, "full", "new").await, big);
    assert_eq!(get(&store, "full", "keep").await, keep);
}
