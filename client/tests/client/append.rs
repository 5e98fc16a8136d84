//! Append blobs.

use stowage_client::{AppendOptions, BlobType, Conditions, ErrorCode, Metadata, UploadOptions};

use super::support::Env;

#[tokio::test]
async fn appends_land_in_order_at_the_reported_offsets() {
    let env = Env::start().await;
    let container = env.container("append").await;
    let blob = container.blob("log");
    blob.create_append_blob(
        &UploadOptions::default().with_metadata(Metadata::from([("kind", "log")])),
    )
    .await
    .unwrap();

    let mut offsets = Vec::new();
    for part in ["one\n", "two\n", "three\n"] {
        let info = blob
            .append_block(part.as_bytes().to_vec(), &AppendOptions::default())
            .await
            .unwrap();
        offsets.push((info.offset, info.committed_block_count));
    }
    assert_eq!(offsets, [(0, 1), (4, 2), (8, 3)]);
    assert_eq!(
        &blob.download_bytes().await.unwrap()[..],
        b"one\ntwo\nthree\n"
    );
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.blob_type, BlobType::AppendBlob);
    assert_eq!(props.committed_block_count, Some(3));
    assert_eq!(props.metadata.get("kind"), Some("log"));
}

#[tokio::test]
async fn append_conditions_refuse_with_their_own_codes() {
    let env = Env::start().await;
    let container = env.container("appendcond").await;
    let blob = container.blob("log");
    blob.create_append_blob(&UploadOptions::default())
        .await
        .unwrap();
    blob.append_block(
        &b"12345"[..],
        &AppendOptions::default().with_append_position(0),
    )
    .await
    .unwrap();

    let err = blob
        .append_block(&b"x"[..], &AppendOptions::default().with_append_position(0))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(412));
    assert!(
        err.has_code(&ErrorCode::AppendPositionConditionNotMet),
        "{err}"
    );

    let err = blob
        .append_block(&b"678"[..], &AppendOptions::default().with_max_size(7))
        .await
        .unwrap_err();
    assert!(
        err.has_code(&ErrorCode::MaxBlobSizeConditionNotMet),
        "{err}"
    );

    blob.append_block(
        &b"67"[..],
        &AppendOptions::default()
            .with_append_position(5)
            .with_max_size(7),
    )
    .await
    .unwrap();
    assert_eq!(&blob.download_bytes().await.unwrap()[..], b"1234567");

    // Appending to a block blob.
    let block = container.blob("block");
    block
        .upload(&b"b"[..], &UploadOptions::default())
        .await
        .unwrap();
    let err = block
        .append_block(&b"x"[..], &AppendOptions::default())
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::InvalidBlobType), "{err}");

    // Create-only over an existing append blob.
    let err = blob
        .create_append_blob(
            &UploadOptions::default().with_conditions(Conditions::new().with_if_not_exists()),
        )
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::BlobAlreadyExists), "{err}");
}
