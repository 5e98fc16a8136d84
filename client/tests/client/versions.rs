//! Blob versions and soft delete through the client: version ids on
//! writes, reads, copies and deletes of a version, listings with versions
//! and deleted entries, Undelete Blob and the delete retention policy.

use std::time::Duration;

use futures::TryStreamExt;
use stowage_client::{
    BlobEntry, BlobItem, Conditions, CopyOptions, CopyStatus, DeleteRetentionPolicy,
    DeleteSnapshots, ErrorCode, ListBlobsOptions, Metadata, UploadOptions,
};

use super::support::Env;

async fn items(
    container: &stowage_client::ContainerClient,
    options: ListBlobsOptions,
) -> Vec<BlobItem> {
    container
        .list_blobs(options)
        .try_collect::<Vec<_>>()
        .await
        .unwrap()
        .into_iter()
        .map(|e| match e {
            BlobEntry::Blob(b) => *b,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn writes_answer_version_ids_and_each_version_can_be_read_copied_and_deleted() {
    let env = Env::start_with_versioning().await;
    let container = env.container("vers").await;
    let blob = container.blob("doc");
    let v1 = blob
        .upload(&b"one"[..], &UploadOptions::default())
        .await
        .unwrap()
        .version_id
        .expect("a version id on Put Blob");
    env.advance(Duration::from_secs(1));
    let v2 = blob
        .upload(&b"two"[..], &UploadOptions::default())
        .await
        .unwrap()
        .version_id
        .expect("a version id on Put Blob");
    assert_ne!(v1, v2);
    env.advance(Duration::from_secs(1));
    let v3 = blob
        .set_metadata(&Metadata::new().with("k", "v"), &Conditions::new())
        .await
        .unwrap()
        .version_id
        .expect("a version id on Set Blob Metadata");

    let current = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(current.version_id.as_deref(), Some(v3.as_str()));
    assert!(current.is_current_version);
    let old = blob.with_version(&v1);
    assert_eq!(old.version_id(), Some(v1.as_str()));
    assert_eq!(&old.download_bytes().await.unwrap()[..], b"one");
    let props = old.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.version_id.as_deref(), Some(v1.as_str()));
    assert!(!props.is_current_version);
    assert!(
        old.url()
            .ends_with(&format!("?versionid={}", v1.replace(':', "%3A")))
    );

    // The listing names every version once, the current one marked.
    let listed = items(&container, ListBlobsOptions::default().with_versions()).await;
    let ids: Vec<(Option<&str>, bool)> = listed
        .iter()
        .map(|b| (b.version_id.as_deref(), b.is_current_version))
        .collect();
    assert_eq!(
        ids,
        vec![
            (Some(v1.as_str()), false),
            (Some(v2.as_str()), false),
            (Some(v3.as_str()), true)
        ]
    );
    // Without versions, only the blob.
    assert_eq!(
        items(&container, ListBlobsOptions::default()).await.len(),
        1
    );

    // Promote version 1 by copying it over the blob: a new current version.
    env.advance(Duration::from_secs(1));
    let copy = blob.copy_from(&old, &CopyOptions::default()).await.unwrap();
    assert_eq!(copy.status, CopyStatus::Success);
    let v4 = copy.version_id.expect("a version id on Copy Blob");
    assert!(v4 > v3, "{v4} after {v3}");
    assert_eq!(&blob.download_bytes().await.unwrap()[..], b"one");

    // Deleting a version removes just that one.
    old.delete(DeleteSnapshots::None, &Conditions::new())
        .await
        .unwrap();
    let err = old.download_bytes().await.unwrap_err();
    assert_eq!(err.code(), Some(&ErrorCode::BlobNotFound), "{err:?}");
    let listed = items(&container, ListBlobsOptions::default().with_versions()).await;
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().all(|b| b.version_id.as_deref() != Some(&v1)));

    // Deleting the blob keeps its versions; Get Blob is 404.
    blob.delete(DeleteSnapshots::None, &Conditions::new())
        .await
        .unwrap();
    assert!(!blob.exists().await.unwrap());
    let listed = items(&container, ListBlobsOptions::default().with_versions()).await;
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().all(|b| !b.is_current_version));
}

#[tokio::test]
async fn the_retention_policy_is_set_read_and_checked() {
    let env = Env::start().await;
    assert!(!env.service.delete_retention_policy().await.unwrap().enabled);
    let policy = DeleteRetentionPolicy::days(3).with_permanent_delete();
    env.service
        .set_delete_retention_policy(&policy)
        .await
        .unwrap();
    assert_eq!(env.service.delete_retention_policy().await.unwrap(), policy);
    // Out of range: refused, the stored policy stays.
    let err = env
        .service
        .set_delete_retention_policy(&DeleteRetentionPolicy::days(366))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.code(), Some(&ErrorCode::InvalidXmlNodeValue), "{err:?}");
    assert_eq!(env.service.delete_retention_policy().await.unwrap(), policy);
    env.service
        .set_delete_retention_policy(&DeleteRetentionPolicy::disabled())
        .await
        .unwrap();
    assert!(!env.service.delete_retention_policy().await.unwrap().enabled);
}

#[tokio::test]
async fn a_soft_deleted_blob_is_listed_then_undeleted() {
    let env = Env::start().await;
    env.service
        .set_delete_retention_policy(&DeleteRetentionPolicy::days(2))
        .await
        .unwrap();
    let container = env.container("soft").await;
    let blob = container.blob("b");
    blob.upload(&b"kept"[..], &UploadOptions::default())
        .await
        .unwrap();
    let snapshot = blob.snapshot(None, &Conditions::new()).await.unwrap();
    env.advance(Duration::from_secs(5));
    blob.delete(DeleteSnapshots::Include, &Conditions::new())
        .await
        .unwrap();
    assert!(!blob.exists().await.unwrap());
    assert!(
        items(&container, ListBlobsOptions::default())
            .await
            .is_empty()
    );

    let listed = items(
        &container,
        ListBlobsOptions::default().with_deleted().with_snapshots(),
    )
    .await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    for item in &listed {
        assert!(item.deleted, "{item:?}");
        assert_eq!(item.properties.remaining_retention_days, Some(2));
        assert_eq!(item.properties.deleted_time, Some(env.now()));
    }
    assert!(
        listed
            .iter()
            .any(|b| b.snapshot.as_deref() == Some(snapshot.snapshot.as_str()))
    );

    // Without the policy's permission, no permanent delete.
    let err = blob
        .with_snapshot(&snapshot.snapshot)
        .delete_permanently(&Conditions::new())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409), "{err:?}");

    blob.undelete().await.unwrap();
    assert_eq!(&blob.download_bytes().await.unwrap()[..], b"kept");
    assert_eq!(
        &blob
            .with_snapshot(&snapshot.snapshot)
            .download_bytes()
            .await
            .unwrap()[..],
        b"kept"
    );
    let listed = items(
        &container,
        ListBlobsOptions::default().with_deleted().with_snapshots(),
    )
    .await;
    assert!(listed.iter().all(|b| !b.deleted), "{listed:?}");

    let err = container.blob("never").undelete().await.unwrap_err();
    assert_eq!(err.code(), Some(&ErrorCode::BlobNotFound), "{err:?}");
}

#[tokio::test]
async fn a_soft_deleted_version_is_deleted_permanently_when_the_policy_allows() {
    let env = Env::start_with_versioning().await;
    env.service
        .set_delete_retention_policy(&DeleteRetentionPolicy::days(1).with_permanent_delete())
        .await
        .unwrap();
    let container = env.container("perm").await;
    let blob = container.blob("b");
    let v1 = blob
        .upload(&b"1"[..], &UploadOptions::default())
        .await
        .unwrap()
        .version_id
        .unwrap();
    env.advance(Duration::from_secs(1));
    blob.upload(&b"2"[..], &UploadOptions::default())
        .await
        .unwrap();
    let old = blob.with_version(&v1);
    old.delete(DeleteSnapshots::None, &Conditions::new())
        .await
        .unwrap();
    let deleted = ListBlobsOptions::default().with_versions().with_deleted();
    let listed = items(&container, deleted.clone()).await;
    let entry = listed
        .iter()
        .find(|b| b.version_id.as_deref() == Some(v1.as_str()))
        .expect("the soft-deleted version is listed");
    assert!(entry.deleted);
    assert_eq!(entry.properties.remaining_retention_days, Some(1));

    assert!(old.delete_permanently(&Conditions::new()).await.unwrap());
    let listed = items(&container, deleted).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].is_current_version);
    // The base blob cannot be deleted permanently.
    let err = blob
        .delete_permanently(&Conditions::new())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409), "{err:?}");
}

#[tokio::test]
async fn a_deleted_blob_with_versions_is_listed_once_after_its_snapshots_order() {
    let env = Env::start_with_versioning().await;
    let container = env.container("order").await;
    let blob = container.blob("b");
    let v1 = blob
        .upload(&b"1"[..], &UploadOptions::default())
        .await
        .unwrap()
        .version_id
        .unwrap();
    env.advance(Duration::from_secs(1));
    let snapshot = blob.snapshot(None, &Conditions::new()).await.unwrap();
    env.advance(Duration::from_secs(1));
    let v2 = blob
        .upload(&b"22"[..], &UploadOptions::default())
        .await
        .unwrap()
        .version_id
        .unwrap();
    // Snapshot Blob made a version of its own.
    let v_snapshot = snapshot.version_id.clone().expect("a version id");
    // Snapshots first, then versions oldest first, the current one last.
    let listed = items(
        &container,
        ListBlobsOptions::default().with_snapshots().with_versions(),
    )
    .await;
    let order: Vec<(Option<&str>, Option<&str>)> = listed
        .iter()
        .map(|b| (b.snapshot.as_deref(), b.version_id.as_deref()))
        .collect();
    assert_eq!(
        order,
        vec![
            (Some(snapshot.snapshot.as_str()), None),
            (None, Some(v1.as_str())),
            (None, Some(v_snapshot.as_str())),
            (None, Some(v2.as_str())),
        ]
    );
    assert!(listed[3].is_current_version);

    blob.delete(DeleteSnapshots::Include, &Conditions::new())
        .await
        .unwrap();
    assert!(
        items(&container, ListBlobsOptions::default())
            .await
            .is_empty()
    );
    let listed = items(
        &container,
        ListBlobsOptions::default().with_deleted_with_versions(),
    )
    .await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].has_versions_only);
    assert_eq!(listed[0].properties.content_length, 2);
}
