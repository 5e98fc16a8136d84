//! Uploads in one request and in parallel blocks.

use md5::{Digest, Md5};
use stowage_client::{BlockListType, Conditions, ContentProperties, Metadata, UploadOptions};

use super::support::{Env, pattern};

fn small_blocks() -> UploadOptions {
    UploadOptions::default()
        .with_block_size(1024)
        .with_single_put_limit(2048)
        .with_concurrency(3)
}

#[tokio::test]
async fn large_bytes_go_up_as_parallel_blocks_with_the_whole_md5() {
    let env = Env::start().await;
    let container = env.container("blocks").await;
    let blob = container.blob("big");
    let data = pattern(10 * 1024 + 17);
    let options = small_blocks()
        .with_content(ContentProperties::default().with_content_type("application/x-test"))
        .with_metadata(Metadata::from([("parts", "many")]));
    let written = blob.upload(data.clone(), &options).await.unwrap();

    let blocks = blob.block_list(BlockListType::All).await.unwrap();
    assert_eq!(blocks.committed.len(), 11);
    assert!(blocks.uncommitted.is_empty());
    assert_eq!(
        blocks.committed.iter().map(|b| b.size).sum::<u64>(),
        data.len() as u64
    );
    assert!(blocks.committed[..10].iter().all(|b| b.size == 1024));

    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.etag, written.etag);
    assert_eq!(props.content_length, data.len() as u64);
    assert_eq!(
        props.content.content_type.as_deref(),
        Some("application/x-test")
    );
    assert_eq!(props.metadata.get("parts"), Some("many"));
    assert_eq!(props.content.content_md5, Some(Md5::digest(&data).to_vec()));
    assert_eq!(blob.download_bytes().await.unwrap(), data);
}

#[tokio::test]
async fn readers_are_uploaded_whole_or_in_blocks() {
    let env = Env::start().await;
    let container = env.container("readers").await;

    let small = container.blob("small");
    small
        .upload_reader(&b"tiny"[..], &small_blocks())
        .await
        .unwrap();
    assert_eq!(&small.download_bytes().await.unwrap()[..], b"tiny");
    assert!(
        small
            .block_list(BlockListType::Committed)
            .await
            .unwrap()
            .committed
            .is_empty()
    );

    let exact = container.blob("exact");
    let data = pattern(2048);
    exact
        .upload_reader(&data[..], &small_blocks())
        .await
        .unwrap();
    assert_eq!(exact.download_bytes().await.unwrap(), data);

    let large = container.blob("large");
    let data = pattern(7 * 1024 + 1);
    large
        .upload_reader(&data[..], &small_blocks().with_concurrency(1))
        .await
        .unwrap();
    assert_eq!(large.download_bytes().await.unwrap(), data);
    assert_eq!(
        large
            .block_list(BlockListType::Committed)
            .await
            .unwrap()
            .committed
            .len(),
        8
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upload.bin");
    let data = pattern(5000);
    std::fs::write(&path, &data).unwrap();
    let from_file = container.blob("from-file");
    from_file.upload_file(&path, &small_blocks()).await.unwrap();
    assert_eq!(from_file.download_bytes().await.unwrap(), data);

    let empty = container.blob("empty");
    empty
        .upload_reader(&b""[..], &small_blocks())
        .await
        .unwrap();
    assert!(empty.download_bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn blocks_can_be_staged_and_committed_by_hand() {
    let env = Env::start().await;
    let container = env.container("manual").await;
    let blob = container.blob("assembled");
    let ids = ["YmxvY2stMQ==".to_owned(), "YmxvY2stMg==".to_owned()];
    blob.put_block(&ids[1], "world".into(), None, true)
        .await
        .unwrap();
    blob.put_block(&ids[0], "hello ".into(), None, false)
        .await
        .unwrap();
    let staged = blob.block_list(BlockListType::Uncommitted).await.unwrap();
    assert_eq!(staged.uncommitted.len(), 2);
    assert!(
        !blob.exists().await.unwrap(),
        "uncommitted blocks are not a blob"
    );

    blob.put_block_list(&ids, &UploadOptions::default())
        .await
        .unwrap();
    assert_eq!(&blob.download_bytes().await.unwrap()[..], b"hello world");
    let committed = blob.block_list(BlockListType::Committed).await.unwrap();
    let names: Vec<&str> = committed.committed.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(names, ids.iter().map(String::as_str).collect::<Vec<_>>());
}
