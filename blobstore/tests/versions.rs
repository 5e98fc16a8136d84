//! Versions and soft-deleted rows in the engine, on both backends: what
//! each write keeps, reads by version id, Undelete Blob, and the garbage
//! rule with rows that share extents (docs/wire/versions.md).

use std::sync::Arc;
use std::time::Duration;

use stowage_blobstore::{
    DeleteRetention, DeleteSnapshots, Error, ManualClock, SnapshotBlobInput, Store, StoreConfig,
    UndeleteBlobInput, Versioning,
};

mod support;
use support::*;

fn versioning() -> Versioning {
    Versioning {
        all: true,
        ..Versioning::default()
    }
}

#[tokio::test]
async fn versions_on_sqlite_file_and_local_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data")).with_versioning(versioning());
    let store = Store::open(config, clock.clone()).await.unwrap();
    suite(&store, &clock).await;
}

#[tokio::test]
async fn versions_in_memory() {
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::in_memory().with_versioning(versioning());
    let store = Store::open(config, clock.clone()).await.unwrap();
    suite(&store, &clock).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_on_postgres() {
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data"))
        .with_versioning(versioning())
        .with_metadata(url);
    let store = Store::open(config, clock.clone()).await.unwrap();
    suite(&store, &clock).await;
    drop(store);
    drop(pg);
}

async fn suite(store: &Store, clock: &ManualClock) {
    overwrites_keep_versions_readable_by_id(store).await;
    soft_deleted_snapshots_come_back_with_undelete(store).await;
    purged_versions_free_only_what_nothing_else_shares(store, clock).await;
}

async fn overwrites_keep_versions_readable_by_id(store: &Store) {
    create_container(store, "v-read").await;
    let v1 = put(store, "v-read", "b", b"one").await.version_id.unwrap();
    let v2 = put(store, "v-read", "b", b"two").await.version_id.unwrap();
    assert_ne!(v1, v2);
    let mut input = get_input("v-read", "b");
    input.version_id = Some(v1.clone());
    let out = store.get_blob(input).await.unwrap();
    assert_eq!(out.properties.is_current_version, Some(false));
    assert_eq!(read_all(out.body).await, b"one");
    let p = store
        .get_blob_properties(get_input("v-read", "b"))
        .await
        .unwrap();
    assert_eq!(p.version_id.as_deref(), Some(v2.as_str()));
    assert_eq!(p.is_current_version, Some(true));
}

async fn soft_deleted_snapshots_come_back_with_undelete(store: &Store) {
    create_container(store, "v-undel").await;
    store
        .set_delete_retention(
            ACCOUNT,
            Some(DeleteRetention {
                days: 2,
                allow_permanent_delete: false,
            }),
        )
        .await
        .unwrap();
    put(store, "v-undel", "b", b"base").await;
    let snap = store
        .snapshot_blob(SnapshotBlobInput {
            account: ACCOUNT.to_owned(),
            container: container("v-undel"),
            blob: blob("b"),
            metadata: None,
            conditions: Default::default(),
            lease_id: None,
        })
        .await
        .unwrap()
        .snapshot;
    let mut del = delete_input("v-undel", "b");
    del.delete_snapshots = Some(DeleteSnapshots::Only);
    let permanent = store.delete_blob(del).await.unwrap();
    assert!(!permanent, "soft-deleted");
    let mut read = get_input("v-undel", "b");
    read.snapshot = Some(snap.clone());
    assert!(matches!(
        store.get_blob_properties(read.clone()).await,
        Err(Error::BlobNotFound)
    ));
    store
        .undelete_blob(UndeleteBlobInput {
            account: ACCOUNT.to_owned(),
            container: container("v-undel"),
            blob: blob("b"),
        })
        .await
        .unwrap();
    let out = store.get_blob(read).await.unwrap();
    assert_eq!(read_all(out.body).await, b"base");
    store.set_delete_retention(ACCOUNT, None).await.unwrap();
}

/// A version shares its extent with a copy made from it; purging the
/// version leaves the copy's bytes alone, and deleting the copy then frees
/// them.
async fn purged_versions_free_only_what_nothing_else_shares(store: &Store, clock: &ManualClock) {
    create_container(store, "v-gc").await;
    let big = vec![5u8; 200_000];
    let v1 = put(store, "v-gc", "b", &big).await.version_id.unwrap();
    put(store, "v-gc", "b", b"small").await;
    let copy = stowage_blobstore::CopyBlobInput {
        account: ACCOUNT.to_owned(),
        container: container("v-gc"),
        blob: blob("copy"),
        source: stowage_blobstore::CopySource {
            account: ACCOUNT.to_owned(),
            container: container("v-gc"),
            blob: blob("b"),
            snapshot: None,
            version_id: Some(v1.clone()),
            access: stowage_blobstore::SourceAccess::Account,
        },
        source_header: "x".into(),
        metadata: None,
        conditions: Default::default(),
        source_conditions: Default::default(),
        lease_id: None,
        access_tier: None,
        expected_md5: None,
        seal: None,
        rehydrate: None,
        tags: Default::default(),
    };
    store.copy_blob(copy).await.unwrap();
    // The version goes for good (no soft delete now).
    let mut del = delete_input("v-gc", "b");
    del.version_id = Some(v1);
    assert!(store.delete_blob(del).await.unwrap());
    clock.advance(Duration::from_secs(60));
    assert_eq!(
        store.collect_garbage().await.unwrap(),
        0,
        "the copy holds it"
    );
    assert_eq!(get(store, "v-gc", "copy").await, big);
    // Deleting the copy (versioning keeps it as a version) frees nothing
    // either; deleting that version does.
    let gone = store
        .delete_blob(delete_input("v-gc", "copy"))
        .await
        .unwrap();
    assert!(!gone);
    clock.advance(Duration::from_secs(60));
    assert_eq!(store.collect_garbage().await.unwrap(), 0);
}

/// A blob written before versioning was switched on gets a version id when
/// an overwrite makes it a previous version, different from the new one's
/// even in the same clock tick.
#[tokio::test]
async fn a_blob_from_before_versioning_becomes_a_version_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let plain = StoreConfig::at(dir.path().join("data"));
    {
        let store = Store::open(plain.clone(), clock.clone()).await.unwrap();
        create_container(&store, "v-old").await;
        let out = put(&store, "v-old", "b", b"old").await;
        assert_eq!(out.version_id, None);
    }
    let store = Store::open(plain.with_versioning(versioning()), clock)
        .await
        .unwrap();
    let v2 = put(&store, "v-old", "b", b"new").await.version_id.unwrap();
    let listed = store
        .list_blobs(stowage_blobstore::ListBlobsInput {
            include_versions: true,
            ..list_input("v-old")
        })
        .await
        .unwrap();
    let ids: Vec<String> = listed
        .items
        .iter()
        .filter_map(|i| match i {
            stowage_blobstore::BlobListItem::Blob { properties, .. } => {
                properties.version_id.clone()
            }
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(ids.contains(&v2));
    let old = ids.iter().find(|v| **v != v2).unwrap().clone();
    let mut input = get_input("v-old", "b");
    input.version_id = Some(old);
    assert_eq!(
        read_all(store.get_blob(input).await.unwrap().body).await,
        b"old"
    );
}
