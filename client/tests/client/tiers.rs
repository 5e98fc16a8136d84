//! Access tiers: set_tier, the tier in properties and listings, and a
//! rehydration driven by the shared manual clock.

use std::time::Duration;

use futures::TryStreamExt;
use stowage_client::{
    AccessTier, BlobEntry, Conditions, DownloadOptions, ErrorCode, ListBlobsOptions,
    RehydratePriority, SetTierOutcome, UploadOptions,
};

use super::support::Env;

#[tokio::test]
async fn set_tier_is_reported_by_properties_and_listings() {
    let env = Env::start().await;
    let container = env.container("tiers").await;
    let blob = container.blob("b");
    blob.upload(&b"data"[..], &UploadOptions::default())
        .await
        .unwrap();
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.access_tier.as_deref(), Some("Hot"));
    assert!(props.tier_info.inferred);
    assert_eq!(props.tier_info.change_time, None);

    let outcome = blob
        .set_tier(AccessTier::Cool, None, &Conditions::new())
        .await
        .unwrap();
    assert_eq!(outcome, SetTierOutcome::Done);
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.access_tier.as_deref(), Some("Cool"));
    assert!(!props.tier_info.inferred);
    assert!(props.tier_info.change_time.is_some());

    let entries: Vec<BlobEntry> = container
        .list_blobs(ListBlobsOptions::default())
        .try_collect()
        .await
        .unwrap();
    let BlobEntry::Blob(item) = &entries[0] else {
        panic!("a blob entry: {entries:?}");
    };
    assert_eq!(item.properties.access_tier.as_deref(), Some("Cool"));
    assert_eq!(item.properties.tier_info, props.tier_info);
}

#[tokio::test]
async fn an_archived_blob_rehydrates_after_the_delay() {
    let env = Env::start().await;
    let container = env.container("rehydrate").await;
    let blob = container.blob("a");
    blob.upload(&b"archived"[..], &UploadOptions::default())
        .await
        .unwrap();
    let none = Conditions::new();
    blob.set_tier(AccessTier::Archive, None, &none)
        .await
        .unwrap();
    let err = blob
        .download(&DownloadOptions::default())
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::BlobArchived), "{err}");

    let outcome = blob
        .set_tier(AccessTier::Hot, Some(RehydratePriority::High), &none)
        .await
        .unwrap();
    assert_eq!(outcome, SetTierOutcome::Pending);
    let props = blob.properties(&none).await.unwrap();
    assert_eq!(props.access_tier.as_deref(), Some("Archive"));
    assert_eq!(
        props.tier_info.archive_status.as_deref(),
        Some("rehydrate-pending-to-hot")
    );
    assert_eq!(props.tier_info.rehydrate_priority.as_deref(), Some("High"));

    env.advance(Duration::from_secs(5));
    let props = blob.properties(&none).await.unwrap();
    assert_eq!(props.access_tier.as_deref(), Some("Hot"));
    assert_eq!(props.tier_info.archive_status, None);
    let download = blob.download(&DownloadOptions::default()).await.unwrap();
    assert_eq!(download.bytes().await.unwrap().as_ref(), b"archived");
}

#[tokio::test]
async fn append_blobs_refuse_a_tier() {
    let env = Env::start().await;
    let container = env.container("append-tier").await;
    let blob = container.blob("log");
    blob.create_append_blob(&UploadOptions::default())
        .await
        .unwrap();
    let err = blob
        .set_tier(AccessTier::Cool, None, &Conditions::new())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(
        err.code().map(|c| c.as_str().to_owned()).as_deref(),
        Some("AccessTierNotSupportedForBlobType")
    );
}
