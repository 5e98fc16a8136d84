//! Engine tests of container soft delete and blob expiry, on a SQLite file
//! with a local file system and on the in-memory pair: a soft-deleted
//! container frees its name, comes back whole, and is purged with its
//! blobs when its retention has passed; an expired blob is gone at its
//! time and removed by the collector.

use std::sync::Arc;
use std::time::Duration;

use stowage_blobstore::{
    Clock as _, Conditions, DeleteContainerInput, Error, ExpiryOption, ListContainersInput,
    ManualClock, RestoreContainerInput, SetBlobExpiryInput, Store, StoreConfig,
};

mod support;
use support::*;

const DAY: Duration = Duration::from_secs(24 * 3600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_and_expiry_on_sqlite_file_and_local_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::at(dir.path().join("data")), clock.clone())
        .await
        .unwrap();
    suite(&store, &clock).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_and_expiry_in_memory() {
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::in_memory(), clock.clone())
        .await
        .unwrap();
    suite(&store, &clock).await;
}

async fn suite(store: &Store, clock: &ManualClock) {
    a_soft_deleted_container_comes_back_whole(store, clock).await;
    a_soft_deleted_container_is_purged_after_its_retention(store, clock).await;
    an_expired_blob_is_gone_at_its_time(store, clock).await;
}

async fn soft_delete(store: &Store, name: &str, retention: Duration) {
    store
        .delete_container(DeleteContainerInput {
            account: ACCOUNT.to_owned(),
            container: container(name),
            conditions: Conditions::default(),
            lease_id: None,
            retention: Some(retention),
        })
        .await
        .unwrap();
}

/// The versions of the deleted containers called `name`, in listing order.
async fn deleted_versions(store: &Store, name: &str) -> Vec<String> {
    let out = store
        .list_containers(ListContainersInput {
            account: ACCOUNT.to_owned(),
            prefix: name.to_owned(),
            marker: None,
            max_results: 5000,
            include_deleted: true,
        })
        .await
        .unwrap();
    out.containers
        .into_iter()
        .filter(|c| c.name == name)
        .filter_map(|c| c.deleted.map(|d| d.version))
        .collect()
}

async fn restore(store: &Store, name: &str, version: &str) -> Result<(), Error> {
    store
        .restore_container(RestoreContainerInput {
            account: ACCOUNT.to_owned(),
            container: container(name),
            deleted_name: container(name),
            deleted_version: version.to_owned(),
        })
        .await
}

async fn a_soft_deleted_container_comes_back_whole(store: &Store, clock: &ManualClock) {
    let name = "eng-restore";
    create_container(store, name).await;
    put(store, name, "first", b"one").await;
    soft_delete(store, name, DAY).await;
    let err = get_err(store, name, "first").await;
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");

    // The name is free; a second deletion is kept beside the first.
    create_container(store, name).await;
    put(store, name, "second", b"two").await;
    clock.advance(Duration::from_secs(1));
    soft_delete(store, name, DAY).await;
    let versions = deleted_versions(store, name).await;
    assert_eq!(versions.len(), 2, "{versions:?}");

    restore(store, name, &versions[0]).await.unwrap();
    assert_eq!(get(store, name, "first").await, b"one");
    let err = restore(store, name, &versions[1]).await.unwrap_err();
    assert!(matches!(err, Error::ContainerAlreadyExists), "{err:?}");
    let err = restore(store, name, &versions[0]).await.unwrap_err();
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");
    assert_eq!(deleted_versions(store, name).await, [versions[1].clone()]);
}

async fn a_soft_deleted_container_is_purged_after_its_retention(
    store: &Store,
    clock: &ManualClock,
) {
    let name = "eng-purge";
    create_container(store, name).await;
    put(store, name, "b", &pattern(200 * 1024)).await;
    soft_delete(store, name, DAY).await;
    let [version] = <[String; 1]>::try_from(deleted_versions(store, name).await).unwrap();

    clock.advance(DAY);
    // Gone at the end of its retention, before the collector runs.
    assert!(deleted_versions(store, name).await.is_empty());
    let err = restore(store, name, &version).await.unwrap_err();
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");
    store.collect_garbage().await.unwrap();
    clock.advance(Duration::from_secs(31));
    // Its extent (and the other scenarios' garbage) is deleted now.
    assert!(store.collect_garbage().await.unwrap() >= 1);
}

async fn an_expired_blob_is_gone_at_its_time(store: &Store, clock: &ManualClock) {
    let name = "eng-expiry";
    create_container(store, name).await;
    put(store, name, "b", &pattern(200 * 1024)).await;
    let set = |option| SetBlobExpiryInput {
        account: ACCOUNT.to_owned(),
        container: container(name),
        blob: blob("b"),
        option,
        lease_id: None,
    };
    let err = store
        .set_blob_expiry(set(ExpiryOption::RelativeToNow(Duration::ZERO)))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidExpiryTime), "{err:?}");
    store
        .set_blob_expiry(set(ExpiryOption::RelativeToNow(Duration::from_secs(60))))
        .await
        .unwrap();
    let p = store
        .get_blob_properties(get_input(name, "b"))
        .await
        .unwrap();
    assert_eq!(p.expires_on, Some(clock.now() + Duration::from_secs(60)));

    clock.advance(Duration::from_secs(60));
    let err = get_err(store, name, "b").await;
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
    store.collect_garbage().await.unwrap();
    clock.advance(Duration::from_secs(31));
    assert_eq!(store.collect_garbage().await.unwrap(), 1);
}

async fn get_err(store: &Store, c: &str, b: &str) -> Error {
    store
        .get_blob_properties(get_input(c, b))
        .await
        .unwrap_err()
}
