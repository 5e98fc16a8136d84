//! Containers: create, properties, metadata, delete, list, lease.

use std::time::Duration;

use futures::TryStreamExt;
use stowage_client::{
    Conditions, ErrorCode, LeaseDuration, LeaseState, ListContainersOptions, Metadata, PublicAccess,
};
use stowage_tests::unique;

use super::support::Env;

#[tokio::test]
async fn create_describe_change_and_delete_a_container() {
    let env = Env::start().await;
    let container = env.service.container(&unique("props"));
    assert!(!container.exists().await.unwrap());

    let created = container
        .create(
            &Metadata::from([("owner", "alice")]),
            Some(PublicAccess::Blob),
        )
        .await
        .unwrap();
    let props = container.properties().await.unwrap();
    assert_eq!(props.etag, created.etag);
    assert_eq!(props.metadata.get("owner"), Some("alice"));
    assert_eq!(props.public_access, Some(PublicAccess::Blob));
    assert_eq!(props.lease.state, Some(LeaseState::Available));

    env.advance(Duration::from_secs(2));
    let changed = container
        .set_metadata(&Metadata::from([("team", "storage")]), &Conditions::new())
        .await
        .unwrap();
    assert_ne!(changed.etag, created.etag);
    let props = container.properties().await.unwrap();
    assert_eq!(props.metadata.get("team"), Some("storage"));
    assert_eq!(props.metadata.get("owner"), None);

    // Not modified since the change: the condition fails.
    let later = Conditions::new().with_if_modified_since(env.now());
    let err = container
        .set_metadata(&Metadata::new(), &later)
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    assert!(err.has_code(&ErrorCode::ConditionNotMet));

    container.delete(&Conditions::new()).await.unwrap();
    assert!(!container.exists().await.unwrap());
    let err = container.delete(&Conditions::new()).await.unwrap_err();
    assert!(err.is_not_found());
    assert!(err.has_code(&ErrorCode::ContainerNotFound), "{err}");
}

#[tokio::test]
async fn creating_twice_is_container_already_exists() {
    let env = Env::start().await;
    let container = env.service.container(&unique("twice"));
    assert!(container.create_if_not_exists().await.unwrap());
    assert!(!container.create_if_not_exists().await.unwrap());
    let err = container.create(&Metadata::new(), None).await.unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert!(err.has_code(&ErrorCode::ContainerAlreadyExists));
}

#[tokio::test]
async fn bad_names_are_refused_by_the_service() {
    let env = Env::start().await;
    let err = env
        .service
        .container("Bad_Name")
        .create(&Metadata::new(), None)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert!(err.has_code(&ErrorCode::InvalidResourceName), "{err}");
}

#[tokio::test]
async fn listing_containers_follows_markers_to_the_end() {
    let env = Env::start().await;
    let prefix = unique("list");
    let mut names: Vec<String> = (0..5).map(|i| format!("{prefix}-{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        let metadata = Metadata::from([("index", i.to_string())]);
        env.service
            .container(name)
            .create(&metadata, None)
            .await
            .unwrap();
    }
    names.sort();

    let options = ListContainersOptions::default()
        .with_prefix(prefix.clone())
        .with_max_results(2)
        .with_metadata();
    let first = env
        .service
        .list_containers_page(&options, None)
        .await
        .unwrap();
    assert_eq!(first.items.len(), 2);
    assert!(first.next_marker.is_some());

    let all: Vec<_> = env
        .service
        .list_containers(options)
        .try_collect()
        .await
        .unwrap();
    let listed: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(listed, names.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        all.iter()
            .all(|c| c.properties.metadata.get("index").is_some())
    );
    assert!(all.iter().all(|c| !c.properties.etag.as_str().is_empty()));
}

#[tokio::test]
async fn a_leased_container_is_deleted_only_with_its_lease_id() {
    let env = Env::start().await;
    let container = env.container("leased").await;
    let lease = container.lease(None);
    lease.acquire(LeaseDuration::Infinite).await.unwrap();
    let props = container.properties().await.unwrap();
    assert_eq!(props.lease.state, Some(LeaseState::Leased));

    let err = container.delete(&Conditions::new()).await.unwrap_err();
    assert_eq!(err.status(), Some(412));
    assert!(err.has_code(&ErrorCode::LeaseIdMissing), "{err}");

    container
        .delete(&Conditions::new().with_lease(lease.id()))
        .await
        .unwrap();
    assert!(!container.exists().await.unwrap());
}

#[tokio::test]
async fn a_public_container_is_readable_without_credentials() {
    let env = Env::start().await;
    let container = env.service.container(&unique("public"));
    container
        .create(&Metadata::new(), Some(PublicAccess::Container))
        .await
        .unwrap();
    container
        .blob("hello.txt")
        .upload(&b"hello"[..], &stowage_client::UploadOptions::default())
        .await
        .unwrap();

    let anonymous = stowage_client::BlobServiceClient::new(
        &stowage_client::ConnectionString::new(
            &format!("{}/devstoreaccount1", env.server.base),
            stowage_client::Credentials::Anonymous,
        ),
        stowage_client::ClientOptions::default(),
    )
    .unwrap();
    let public = anonymous.container(container.name());
    let blob = public.blob("hello.txt");
    assert_eq!(&blob.download_bytes().await.unwrap()[..], b"hello");
    let listed: Vec<_> = public
        .list_blobs(Default::default())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    // Writes are not public.
    let err = blob
        .upload(&b"nope"[..], &stowage_client::UploadOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
