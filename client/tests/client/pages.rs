//! Page blobs through the client: create, write, clear, ranges and their
//! diff, resize, sequence numbers.

use stowage_client::{
    BlobType, ByteRange, Conditions, ErrorCode, PageRange, PageWriteOptions, SequenceNumberAction,
    UploadOptions,
};

use super::support::Env;

fn range(start: u64, end: u64, cleared: bool) -> PageRange {
    PageRange {
        start,
        end,
        cleared,
    }
}

#[tokio::test]
async fn pages_written_read_back_with_zeros_around_them() {
    let env = Env::start().await;
    let container = env.container("pages").await;
    let blob = container.blob("disk");
    blob.create_page_blob(8192, Some(4), &UploadOptions::default())
        .await
        .unwrap();
    let info = blob
        .upload_pages(1024, vec![9u8; 1024], &PageWriteOptions::default())
        .await
        .unwrap();
    assert_eq!(info.sequence_number, 4);
    let bytes = blob.download_bytes().await.unwrap();
    assert_eq!(bytes.len(), 8192);
    assert!(bytes[..1024].iter().all(|b| *b == 0));
    assert!(bytes[1024..2048].iter().all(|b| *b == 9));
    assert!(bytes[2048..].iter().all(|b| *b == 0));
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.blob_type, BlobType::PageBlob);
    assert_eq!(props.sequence_number, Some(4));
    assert_eq!(
        blob.get_page_ranges(None, None).await.unwrap(),
        vec![range(1024, 2047, false)]
    );
    assert_eq!(
        blob.get_page_ranges(Some(ByteRange::new(1536, 4096)), None)
            .await
            .unwrap(),
        vec![range(1536, 2047, false)]
    );
}

#[tokio::test]
async fn clear_and_the_diff_against_a_snapshot() {
    let env = Env::start().await;
    let container = env.container("pagediff").await;
    let blob = container.blob("disk");
    blob.create_page_blob(8192, None, &UploadOptions::default())
        .await
        .unwrap();
    let none = PageWriteOptions::default();
    blob.upload_pages(0, vec![1u8; 4096], &none).await.unwrap();
    let snap = blob.snapshot(None, &Conditions::new()).await.unwrap();
    blob.clear_pages(1024, 1024, &none).await.unwrap();
    blob.upload_pages(6144, vec![2u8; 512], &none)
        .await
        .unwrap();
    assert_eq!(
        blob.get_page_ranges(None, Some(&snap.snapshot))
            .await
            .unwrap(),
        vec![range(1024, 2047, true), range(6144, 6655, false)]
    );
    let old = blob.with_snapshot(&snap.snapshot);
    assert_eq!(
        old.get_page_ranges(None, None).await.unwrap(),
        vec![range(0, 4095, false)]
    );
}

#[tokio::test]
async fn sequence_numbers_and_their_conditions() {
    let env = Env::start().await;
    let container = env.container("pageseq").await;
    let blob = container.blob("disk");
    blob.create_page_blob(1024, None, &UploadOptions::default())
        .await
        .unwrap();
    let none = Conditions::new();
    let info = blob
        .set_sequence_number(SequenceNumberAction::Update(7), &none)
        .await
        .unwrap();
    assert_eq!(info.sequence_number, 7);
    let info = blob
        .set_sequence_number(SequenceNumberAction::Increment, &none)
        .await
        .unwrap();
    assert_eq!(info.sequence_number, 8);
    let info = blob
        .set_sequence_number(SequenceNumberAction::Max(3), &none)
        .await
        .unwrap();
    assert_eq!(info.sequence_number, 8);
    let err = blob
        .upload_pages(
            0,
            vec![1u8; 512],
            &PageWriteOptions::default().with_if_sequence_number_lt(8),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(412));
    assert!(
        err.has_code(&ErrorCode::SequenceNumberConditionNotMet),
        "{err}"
    );
    blob.upload_pages(
        0,
        vec![1u8; 512],
        &PageWriteOptions::default().with_if_sequence_number_eq(8),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn resize_and_refused_ranges() {
    let env = Env::start().await;
    let container = env.container("pageresize").await;
    let blob = container.blob("disk");
    blob.create_page_blob(2048, None, &UploadOptions::default())
        .await
        .unwrap();
    let none = PageWriteOptions::default();
    blob.upload_pages(1024, vec![5u8; 1024], &none)
        .await
        .unwrap();
    blob.resize(1536, &Conditions::new()).await.unwrap();
    assert_eq!(
        blob.get_page_ranges(None, None).await.unwrap(),
        vec![range(1024, 1535, false)]
    );
    let err = blob
        .upload_pages(1536, vec![1u8; 512], &none)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(416));
    assert!(err.has_code(&ErrorCode::InvalidPageRange), "{err}");
    let err = blob
        .upload_pages(100, vec![1u8; 512], &none)
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::InvalidPageRange), "{err}");
    let err = blob.resize(1000, &Conditions::new()).await.unwrap_err();
    assert_eq!(err.status(), Some(400));
}
