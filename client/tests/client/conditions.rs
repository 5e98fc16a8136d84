//! Typed conditions on reads and writes (docs/wire/conditions.md).

use std::time::Duration;

use stowage_client::{Conditions, DownloadOptions, ErrorCode, Etag, Metadata, UploadOptions};

use super::support::Env;

#[tokio::test]
async fn etag_conditions_guard_writes_and_reads() {
    let env = Env::start().await;
    let container = env.container("etags").await;
    let blob = container.blob("doc");
    let v1 = blob
        .upload(&b"v1"[..], &UploadOptions::default())
        .await
        .unwrap();
    let v2 = blob
        .upload(
            &b"v2"[..],
            &UploadOptions::default()
                .with_conditions(Conditions::new().with_if_match(v1.etag.clone())),
        )
        .await
        .unwrap();

    // A write presenting the old ETag: precondition failed.
    let err = blob
        .upload(
            &b"v3"[..],
            &UploadOptions::default()
                .with_conditions(Conditions::new().with_if_match(v1.etag.clone())),
        )
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    assert!(err.has_code(&ErrorCode::ConditionNotMet));

    // Create-only on an existing blob.
    let err = blob
        .upload(
            &b"v3"[..],
            &UploadOptions::default().with_conditions(Conditions::new().with_if_not_exists()),
        )
        .await
        .unwrap_err();
    assert!(err.is_conflict());
    assert!(err.has_code(&ErrorCode::BlobAlreadyExists), "{err}");

    // Reads: If-None-Match with the current ETag is "not modified".
    let unchanged = DownloadOptions::default()
        .with_conditions(Conditions::new().with_if_none_match(v2.etag.clone()));
    let err = blob.download(&unchanged).await.unwrap_err();
    assert!(err.is_not_modified(), "{err}");
    let changed = DownloadOptions::default()
        .with_conditions(Conditions::new().with_if_none_match(v1.etag.clone()));
    let body = blob
        .download(&changed)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(&body[..], b"v2");

    // If-Match on a read that no longer matches.
    let err = blob
        .properties(&Conditions::new().with_if_match(Etag::new("\"0x0\"")))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(412));

    // If-Match: * on a missing blob.
    let err = container
        .blob("missing")
        .upload(
            &b"x"[..],
            &UploadOptions::default().with_conditions(Conditions::new().with_if_exists()),
        )
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");

    // Metadata writes take conditions too.
    let err = blob
        .set_metadata(&Metadata::new(), &Conditions::new().with_if_match(v1.etag))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed());
}

#[tokio::test]
async fn date_conditions_compare_with_last_modified() {
    let env = Env::start().await;
    let container = env.container("dates").await;
    let blob = container.blob("doc");
    let written = blob
        .upload(&b"v1"[..], &UploadOptions::default())
        .await
        .unwrap();
    env.advance(Duration::from_secs(60));

    let since_write = DownloadOptions::default()
        .with_conditions(Conditions::new().with_if_modified_since(written.last_modified));
    assert!(
        blob.download(&since_write)
            .await
            .unwrap_err()
            .is_not_modified()
    );
    let before_write = DownloadOptions::default().with_conditions(
        Conditions::new().with_if_modified_since(written.last_modified - Duration::from_secs(5)),
    );
    assert!(blob.download(&before_write).await.is_ok());

    let err = blob
        .set_metadata(
            &Metadata::new(),
            &Conditions::new()
                .with_if_unmodified_since(written.last_modified - Duration::from_secs(5)),
        )
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err}");
    blob.set_metadata(
        &Metadata::new(),
        &Conditions::new().with_if_unmodified_since(written.last_modified),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn of_two_writers_with_the_same_etag_exactly_one_wins() {
    let env = Env::start().await;
    let container = env.container("race").await;
    let blob = container.blob("counter");
    let v1 = blob
        .upload(&b"0"[..], &UploadOptions::default())
        .await
        .unwrap();
    let guarded =
        UploadOptions::default().with_conditions(Conditions::new().with_if_match(v1.etag));
    let (a, b) = tokio::join!(
        blob.upload(&b"a"[..], &guarded),
        blob.upload(&b"b"[..], &guarded)
    );
    let results = [a, b];
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    let loser = results.into_iter().find_map(Result::err).unwrap();
    assert!(loser.has_code(&ErrorCode::ConditionNotMet), "{loser}");
}
