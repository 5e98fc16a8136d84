//! `Store::usage` (what the metrics report the store holds) and the
//! backend timings a `StoreObserver` receives.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use stowage_blobstore::*;
use support::*;

#[derive(Debug, Default)]
struct Calls(Mutex<Vec<String>>);

impl StoreObserver for Calls {
    fn metadata(&self, call: MetadataCall, _: Duration) {
        self.0.lock().unwrap().push(format!("db:{}", call.name()));
    }
    fn object_store(&self, call: ObjectCall, _: Duration) {
        self.0
            .lock()
            .unwrap()
            .push(format!("objects:{}", call.name()));
    }
}

async fn open(dir: &std::path::Path, calls: Arc<Calls>) -> (Store, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::at(dir).with_observer(calls), clock.clone())
        .await
        .unwrap();
    (store, clock)
}

#[tokio::test]
async fn usage_counts_by_account_and_follows_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock) = open(dir.path(), Arc::default()).await;
    assert_eq!(store.usage().await.unwrap(), StoreUsage::default());

    create_container(&store, "one").await;
    create_container(&store, "two").await;
    store
        .create_container(CreateContainerInput {
            account: "other".to_owned(),
            container: container("three"),
            metadata: Metadata::default(),
            public_access: None,
            default_encryption_scope: None,
            deny_encryption_scope_override: false,
        })
        .await
        .unwrap();
    put(&store, "one", "a", &pattern(10)).await;
    put(&store, "one", "b", &pattern(100 * 1024)).await;
    put(&store, "two", "c", &pattern(5)).await;
    // Staged blocks only: not a committed blob, but their extent counts.
    store
        .put_block(put_block_input("two", "staged", 0, 3), body(&pattern(3)))
        .await
        .unwrap();

    let usage = store.usage().await.unwrap();
    let want = [
        AccountUsage {
            account: ACCOUNT.to_owned(),
            containers: 2,
            blobs: 3,
            bytes: 10 + 100 * 1024 + 5,
        },
        AccountUsage {
            account: "other".to_owned(),
            containers: 1,
            blobs: 0,
            bytes: 0,
        },
    ];
    assert_eq!(usage.accounts, want);
    assert_eq!(usage.extents, 4);
    assert_eq!(usage.garbage, 0);
    assert_eq!((usage.leased_containers, usage.leased_blobs), (0, 0));

    // A fixed lease on a blob and an infinite one on a container; the
    // fixed one stops counting once it has expired.
    let acquire = |seconds: Option<u32>| LeaseAction::Acquire {
        duration: seconds.map_or(LeaseDuration::Infinite, LeaseDuration::Fixed),
        proposed_id: None,
    };
    store
        .lease_blob(LeaseBlobInput {
            account: ACCOUNT.to_owned(),
            container: container("one"),
            blob: blob("a"),
            action: acquire(Some(15)),
            conditions: Conditions::default(),
        })
        .await
        .unwrap();
    store
        .lease_container(LeaseContainerInput {
            account: ACCOUNT.to_owned(),
            container: container("two"),
            action: acquire(None),
            conditions: Conditions::default(),
        })
        .await
        .unwrap();
    let usage = store.usage().await.unwrap();
    assert_eq!((usage.leased_containers, usage.leased_blobs), (1, 1));
    clock.advance(Duration::from_secs(15));
    let usage = store.usage().await.unwrap();
    assert_eq!((usage.leased_containers, usage.leased_blobs), (1, 0));

    store.delete_blob(delete_input("one", "b")).await.unwrap();
    let usage = store.usage().await.unwrap();
    assert_eq!(usage.accounts[0].blobs, 2);
    assert_eq!(usage.accounts[0].bytes, 15);
    assert_eq!(usage.extents, 3);
    assert_eq!(
        usage.garbage, 1,
        "the deleted blob's extent awaits the collector"
    );
}

#[tokio::test]
async fn the_observer_hears_of_database_and_object_store_calls() {
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(Calls::default());
    let (store, _clock) = open(dir.path(), calls.clone()).await;
    create_container(&store, "one").await;
    calls.0.lock().unwrap().clear();
    // Above the inline limit: the bytes go to the object store.
    put(&store, "one", "big", &pattern(100 * 1024)).await;
    assert_eq!(get(&store, "one", "big").await.len(), 100 * 1024);
    let seen = calls.0.lock().unwrap().clone();
    for call in ["db:write", "db:read", "objects:put", "objects:get"] {
        assert!(seen.iter().any(|c| c == call), "{call} not in {seen:?}");
    }
    // A small body stays in the database: no object-store call.
    calls.0.lock().unwrap().clear();
    put(&store, "one", "small", &pattern(10)).await;
    let seen = calls.0.lock().unwrap().clone();
    assert!(seen.iter().all(|c| c.starts_with("db:")), "{seen:?}");
}
