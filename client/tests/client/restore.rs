//! Container soft delete and blob expiry through the client:
//! list_deleted_containers, restore_container, set_expiry and expiry_time,
//! on the manual clock shared with the server.

use std::time::Duration;

use stowage_client::{BlobExpiry, Conditions, ErrorCode, UploadOptions};

use super::support::Env;

#[tokio::test]
async fn a_deleted_container_is_listed_and_restored_until_its_retention_passes() {
    let env = Env::start_with_container_retention(1).await;
    let container = env.container("restore").await;
    let name = container.name().to_owned();
    container
        .blob("b")
        .upload(&b"kept"[..], &UploadOptions::default())
        .await
        .unwrap();
    container.delete(&Conditions::new()).await.unwrap();

    let deleted = env.service.list_deleted_containers(&name).await.unwrap();
    assert_eq!(deleted.len(), 1, "{deleted:?}");
    assert_eq!(deleted[0].name, name);
    assert_eq!(deleted[0].remaining_retention_days, Some(1));
    assert!(deleted[0].deleted_time.is_some());

    let restored = env
        .service
        .restore_container(&name, &deleted[0].version)
        .await
        .unwrap();
    assert_eq!(
        &restored.blob("b").download_bytes().await.unwrap()[..],
        b"kept"
    );
    // Deleted again while a new container takes the name: restoring over
    // it is refused.
    restored.delete(&Conditions::new()).await.unwrap();
    let version = env.service.list_deleted_containers(&name).await.unwrap()[0]
        .version
        .clone();
    let live = env.service.container(&name);
    live.create(&stowage_client::Metadata::new(), None)
        .await
        .unwrap();
    let err = env
        .service
        .restore_container(&name, &version)
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Some(&ErrorCode::ContainerAlreadyExists),
        "{err:?}"
    );
    live.delete(&Conditions::new()).await.unwrap();

    env.advance(Duration::from_secs(24 * 3600));
    assert!(
        env.service
            .list_deleted_containers(&name)
            .await
            .unwrap()
            .is_empty()
    );
    let err = env
        .service
        .restore_container(&name, &version)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(&ErrorCode::ContainerNotFound), "{err:?}");
}

#[tokio::test]
async fn an_expiring_blob_reports_its_time_and_is_gone_at_it() {
    let env = Env::start().await;
    let container = env.container("expiry").await;
    let blob = container.blob("b");
    blob.upload(&b"data"[..], &UploadOptions::default())
        .await
        .unwrap();
    blob.set_expiry(
        BlobExpiry::RelativeToNow(Duration::from_secs(60)),
        &Conditions::new(),
    )
    .await
    .unwrap();
    let at = blob.expiry_time().await.unwrap().expect("an expiry time");
    let want = env.now() + Duration::from_secs(60);
    let secs =
        |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(secs(at), secs(want));

    blob.set_expiry(BlobExpiry::NeverExpire, &Conditions::new())
        .await
        .unwrap();
    assert_eq!(blob.expiry_time().await.unwrap(), None);
    blob.set_expiry(BlobExpiry::Absolute(want), &Conditions::new())
        .await
        .unwrap();
    env.advance(Duration::from_secs(60));
    let err = blob.expiry_time().await.unwrap_err();
    assert_eq!(err.code(), Some(&ErrorCode::BlobNotFound), "{err:?}");
}
