//! The large-entity pattern: verified pointers, stale vs corrupted, sweep.

use std::time::Duration;

use stowage_client::patterns::large_entity::{LargeEntityStore, Pointer};
use stowage_client::{Error, Metadata, UploadOptions};

use super::support::{Env, pattern};

#[tokio::test]
async fn a_value_is_stored_behind_a_pointer_that_survives_as_a_string() {
    let env = Env::start().await;
    let store = LargeEntityStore::new(env.container("entities").await).with_prefix("orders/");
    let value = pattern(100_000);
    let pointer = store.put("42/payload", value.clone()).await.unwrap();
    assert_eq!(pointer.length, value.len() as u64);
    assert!(pointer.blob.starts_with("orders/42/payload/"));

    let kept: String = pointer.to_string();
    let parsed: Pointer = kept.parse().unwrap();
    assert_eq!(parsed, pointer);
    assert_eq!(store.get(&parsed).await.unwrap(), value);

    // Writing the same value again (a retry) gives the same pointer.
    let again = store.put("42/payload", value.clone()).await.unwrap();
    assert_eq!(again, pointer);
}

#[tokio::test]
async fn a_pointer_whose_blob_was_overwritten_reads_as_stale() {
    let env = Env::start().await;
    let store = LargeEntityStore::new(env.container("stale").await);
    let pointer = store.put("k", &b"first value"[..]).await.unwrap();
    store
        .container()
        .blob(&pointer.blob)
        .upload(&b"first value"[..], &UploadOptions::default())
        .await
        .unwrap();
    match store.get(&pointer).await {
        Err(Error::StalePointer { container, blob }) => {
            assert_eq!(container, pointer.container);
            assert_eq!(blob, pointer.blob);
        }
        other => panic!("expected a stale pointer, got {other:?}"),
    }

    // Deleted since: also stale.
    let gone = store.put("k2", &b"x"[..]).await.unwrap();
    assert!(store.delete(&gone).await.unwrap());
    assert!(matches!(
        store.get(&gone).await,
        Err(Error::StalePointer { .. })
    ));
    assert!(!store.delete(&gone).await.unwrap());
}

#[tokio::test]
async fn a_pointer_whose_bytes_do_not_match_reads_as_corrupted() {
    let env = Env::start().await;
    let store = LargeEntityStore::new(env.container("corrupt").await);
    let pointer = store.put("k", &b"the real bytes"[..]).await.unwrap();

    let wrong_hash = Pointer {
        sha256: [0; 32],
        ..pointer.clone()
    };
    match store.get(&wrong_hash).await {
        Err(Error::CorruptedPointer { reason, .. }) => {
            assert!(reason.contains("SHA-256"), "{reason}")
        }
        other => panic!("expected a corrupted pointer, got {other:?}"),
    }
    let wrong_length = Pointer {
        length: 3,
        ..pointer.clone()
    };
    match store.get(&wrong_length).await {
        Err(Error::CorruptedPointer { reason, .. }) => {
            assert!(reason.contains("length"), "{reason}")
        }
        other => panic!("expected a corrupted pointer, got {other:?}"),
    }
    assert_eq!(&store.get(&pointer).await.unwrap()[..], b"the real bytes");
}

#[tokio::test]
async fn a_blob_replaced_under_its_name_is_rewritten_by_the_next_put() {
    let env = Env::start().await;
    let store = LargeEntityStore::new(env.container("replace").await);
    let pointer = store.put("k", &b"value"[..]).await.unwrap();
    // Someone writes other bytes under the content-addressed name.
    store
        .container()
        .blob(&pointer.blob)
        .upload(
            &b"tampered"[..],
            &UploadOptions::default().with_metadata(Metadata::from([("sha256", "00")])),
        )
        .await
        .unwrap();
    let fresh = store.put("k", &b"value"[..]).await.unwrap();
    assert_ne!(fresh.etag, pointer.etag);
    assert_eq!(&store.get(&fresh).await.unwrap()[..], b"value");
}

#[tokio::test]
async fn the_sweep_finds_blobs_no_pointer_references_once_old_enough() {
    let env = Env::start().await;
    let store = LargeEntityStore::new(env.container("sweep").await).with_prefix("t/");
    let kept_a = store.put("a", &b"a"[..]).await.unwrap();
    let kept_b = store.put("b", &b"b"[..]).await.unwrap();
    // Blob written, entity update never happened.
    let lost = store.put("c", &b"c"[..]).await.unwrap();
    // Outside the prefix: never swept.
    store
        .container()
        .blob("other/x")
        .upload(&b"x"[..], &UploadOptions::default())
        .await
        .unwrap();

    let referenced = [kept_a.clone(), kept_b.clone()];
    let grace = Duration::from_secs(3600);
    assert!(
        store
            .find_unreferenced(&referenced, grace)
            .await
            .unwrap()
            .is_empty()
    );

    env.advance(grace);
    let orphans = store.find_unreferenced(&referenced, grace).await.unwrap();
    assert_eq!(orphans.len(), 1);
    assert_eq!(orphans[0].blob, lost.blob);
    assert_eq!(orphans[0].etag, lost.etag);
    assert_eq!(orphans[0].length, 1);

    let deleted = store.delete_unreferenced(&referenced, grace).await.unwrap();
    assert_eq!(deleted, orphans);
    assert!(matches!(
        store.get(&lost).await,
        Err(Error::StalePointer { .. })
    ));
    assert_eq!(&store.get(&kept_a).await.unwrap()[..], b"a");
    assert!(
        store
            .find_unreferenced(&referenced, grace)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.container().blob("other/x").exists().await.unwrap());
}
