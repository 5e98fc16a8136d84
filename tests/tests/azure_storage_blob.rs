//! The Azure SDK for Rust (`azure_storage_blob` 1.1, on `azure_core` 1.1;
//! the successor of the legacy `azure_storage_blobs`) against Stowage.
//!
//! This SDK authenticates with Microsoft Entra ID tokens (over HTTPS only) or
//! with a SAS in the client's URL; it has no Shared Key. The tests give it
//! the in-process server's plain-HTTP URL with an account SAS in the query,
//! which every derived client (container, blob) keeps. The SAS is valid at
//! the test clock's epoch, where the server's manual clock stays.

use std::collections::HashMap;

use azure_core_1::http::{RequestContent, Url};
use azure_storage_blob::models::{
    BlobClientGetPropertiesResultHeaders, BlobContainerClientGetPropertiesResultHeaders,
    BlockListType, BlockLookupList,
};
use azure_storage_blob::{BlobContainerClient, BlobServiceClient};
use futures::TryStreamExt;
use stowage_tests::{ACCOUNT, TestServer, account_sas, unique};

/// A server and a service client on its URL with an account SAS for
/// everything (`sco`, `racwdl`).
async fn start() -> (TestServer, BlobServiceClient) {
    let server = TestServer::start().await;
    let url = Url::parse(&format!(
        "{}/{ACCOUNT}?{}",
        server.base,
        account_sas("rwdlac", "sco")
    ))
    .expect("service URL");
    let service = BlobServiceClient::new(url, None, None).expect("service client");
    (server, service)
}

async fn new_container(service: &BlobServiceClient, hint: &str) -> BlobContainerClient {
    let container = service.blob_container_client(&unique(hint));
    container.create(None).await.expect("create the container");
    container
}

/// `n` bytes of a pattern that differs with `seed`.
fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[tokio::test]
async fn upload_download_properties_and_metadata() {
    let (_server, service) = start().await;
    let container = new_container(&service, "sdk1-upload").await;
    container
        .set_metadata(
            &HashMap::from([("team".to_string(), "rust".to_string())]),
            None,
        )
        .await
        .expect("set container metadata");
    let properties = container
        .get_properties(None)
        .await
        .expect("container props");
    assert_eq!(
        properties.metadata().expect("metadata"),
        HashMap::from([("team".to_string(), "rust".to_string())])
    );

    let blob = container.blob_client("notes/hello.txt");
    assert!(!blob.exists().await.expect("exists before"));
    blob.upload(
        RequestContent::from(b"hello from azure_storage_blob".to_vec()),
        None,
    )
    .await
    .expect("upload");
    assert!(blob.exists().await.expect("exists after"));
    blob.set_metadata(
        &HashMap::from([("owner".to_string(), "sdk".to_string())]),
        None,
    )
    .await
    .expect("set metadata");

    let downloaded = blob.download(None).await.expect("download");
    assert_eq!(downloaded.properties.content_length, Some(29));
    let body = downloaded.body.collect().await.expect("body");
    assert_eq!(&body[..], b"hello from azure_storage_blob");

    let properties = blob.get_properties(None).await.expect("properties");
    assert_eq!(properties.content_length().expect("length"), Some(29));
    assert_eq!(
        properties.metadata().expect("metadata"),
        HashMap::from([("owner".to_string(), "sdk".to_string())])
    );

    blob.delete(None).await.expect("delete");
    assert!(!blob.exists().await.expect("exists after delete"));
    container.delete(None).await.expect("delete container");
    assert!(!container.exists().await.expect("container exists"));
}

/// A 9 MiB upload is staged in 4 MiB blocks and committed in order; the
/// download is parallel 4 MiB ranged reads put together in order.
#[tokio::test]
async fn large_blob_uploads_in_blocks_and_downloads_in_ranges() {
    let (_server, service) = start().await;
    let container = new_container(&service, "sdk1-large").await;
    let blob = container.blob_client("large.bin");
    let body = data(9 * 1024 * 1024 + 17, 5);
    blob.upload(RequestContent::from(body.clone()), None)
        .await
        .expect("upload");
    let committed = blob
        .block_blob_client()
        .get_block_list(BlockListType::All, None)
        .await
        .expect("get block list")
        .into_model()
        .expect("block list")
        .committed_blocks
        .unwrap_or_default();
    assert_eq!(
        committed.iter().map(|b| b.size).collect::<Vec<_>>(),
        [Some(4 << 20), Some(4 << 20), Some((1 << 20) + 17)]
    );
    let downloaded = blob.download(None).await.expect("download");
    let read = downloaded.body.collect().await.expect("body");
    assert_eq!(read.len(), body.len());
    assert!(read[..] == body[..], "the bytes read back differ");
}

#[tokio::test]
async fn blocks_and_listing() {
    let (_server, service) = start().await;
    let container = new_container(&service, "sdk1-blocks").await;
    let blob = container.blob_client("dir/blocks.bin");
    let blocks = blob.block_blob_client();
    let parts = [data(3_000, 1), data(2_000, 2), data(1_000, 3)];
    let ids: Vec<Vec<u8>> = (0..parts.len())
        .map(|i| format!("block-{i:04}").into_bytes())
        .collect();
    for (id, part) in ids.iter().zip(&parts) {
        blocks
            .stage_block(
                id,
                part.len() as u64,
                RequestContent::from(part.clone()),
                None,
            )
            .await
            .expect("stage block");
    }
    let staged = blocks
        .get_block_list(BlockListType::All, None)
        .await
        .expect("get block list")
        .into_model()
        .expect("block list");
    assert!(staged.committed_blocks.is_none());
    assert_eq!(staged.uncommitted_blocks.expect("uncommitted").len(), 3);

    let lookup = BlockLookupList {
        committed: Some(Vec::new()),
        latest: Some(ids.clone()),
        uncommitted: Some(Vec::new()),
    };
    blocks
        .commit_block_list(lookup.try_into().expect("block list body"), None)
        .await
        .expect("commit block list");
    let committed = blocks
        .get_block_list(BlockListType::Committed, None)
        .await
        .expect("get block list")
        .into_model()
        .expect("block list")
        .committed_blocks
        .expect("committed");
    assert_eq!(
        committed.iter().map(|b| b.size).collect::<Vec<_>>(),
        [Some(3_000), Some(2_000), Some(1_000)]
    );
    let whole: Vec<u8> = parts.concat();
    let read = blob
        .download(None)
        .await
        .expect("download")
        .body
        .collect()
        .await
        .expect("body");
    assert!(read[..] == whole[..]);

    for name in ["b.txt", "a.txt"] {
        container
            .blob_client(name)
            .upload(RequestContent::from(name.as_bytes().to_vec()), None)
            .await
            .expect("upload");
    }
    let mut pager = container.list_blobs(None).expect("list blobs");
    let mut names = Vec::new();
    while let Some(item) = pager.try_next().await.expect("next blob") {
        names.push(item.name.expect("a name"));
    }
    assert_eq!(names, ["a.txt", "b.txt", "dir/blocks.bin"]);
}
