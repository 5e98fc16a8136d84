//! The legacy Azure SDK for Rust (`azure_storage_blobs` 0.21, the last
//! release of its `legacy` line, still widely used) against Stowage.
//!
//! Its emulator location (`CloudLocation::Emulator`) takes any address and
//! port and puts the development account in the path, so the tests point it
//! at an in-process server. Two habits of this SDK that a server has to
//! meet, both checked here:
//!
//! - every ranged read shorter than 4 MiB carries
//!   `x-ms-range-get-content-crc64: true`, so reading a blob in small chunks
//!   needs each range answered with its CRC64 (`x-ms-content-crc64`);
//! - a Delete Blob answer without `x-ms-delete-type-permanent` is an error
//!   to it (the header is parsed as required), although the delete happened.
//!
//! It signs with the wall clock (`x-ms-date`), so each test sets the
//! server's manual clock to the current time first.

use std::time::SystemTime;

use azure_core::request_options::Metadata;
use azure_storage::{CloudLocation, StorageCredentials};
use azure_storage_blobs::blob::CopyStatus;
use azure_storage_blobs::prelude::*;
use bytes::Bytes;
use futures::StreamExt;
use stowage_tests::{TestServer, unique};

/// A server on the current time and a service client of the emulator
/// location on its port.
async fn start() -> (TestServer, BlobServiceClient) {
    let server = TestServer::start().await;
    server.clock.set(SystemTime::now());
    let location = CloudLocation::Emulator {
        address: server.addr().ip().to_string(),
        port: server.addr().port(),
    };
    let service = ClientBuilder::with_location(location, StorageCredentials::emulator())
        .blob_service_client();
    (server, service)
}

async fn new_container(service: &BlobServiceClient, hint: &str) -> ContainerClient {
    let container = service.container_client(unique(hint));
    container.create().await.expect("create the container");
    container
}

/// `n` bytes of a pattern that differs with `seed`.
fn data(n: usize, seed: u8) -> Bytes {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect::<Vec<u8>>()
        .into()
}

/// CRC-64/NVME (the polynomial of Azure Storage), bit by bit, as the 8 bytes
/// `x-ms-content-crc64` carries (least significant first). Written out here
/// rather than taken from the server's crate, so that both have to agree.
fn crc64(bytes: &[u8]) -> [u8; 8] {
    const POLY: u64 = 0x9A6C_9329_AC4B_C9B5;
    let mut crc = !0u64;
    for &byte in bytes {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    (!crc).to_le_bytes()
}

#[tokio::test]
async fn put_read_properties_and_metadata() {
    let (_server, service) = start().await;
    let container = new_container(&service, "legacy-put").await;
    let blob = container.blob_client("notes/hello.txt");
    let mut metadata = Metadata::new();
    metadata.insert("owner", "legacy-sdk");
    blob.put_block_blob(Bytes::from_static(b"hello from the legacy SDK"))
        .content_type("text/plain")
        .metadata(metadata)
        .await
        .expect("put block blob");

    assert_eq!(
        blob.get_content().await.expect("get content"),
        b"hello from the legacy SDK"
    );
    let properties = blob
        .get_properties()
        .await
        .expect("get properties")
        .blob
        .properties;
    assert_eq!(properties.content_length, 25);
    assert_eq!(properties.content_type, "text/plain");
    let stored = blob.get_metadata().await.expect("get metadata").metadata;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored.get("owner").as_deref(), Some(&b"legacy-sdk"[..]));
    assert!(blob.exists().await.expect("exists"));
}

/// A read in 1000-byte chunks is five ranged Get Blobs, each with
/// `x-ms-range-get-content-crc64: true`; each answer carries the CRC64 of its
/// range and the chunks put together are the blob.
#[tokio::test]
async fn chunked_read_asks_for_the_crc64_of_every_range() {
    let (_server, service) = start().await;
    let container = new_container(&service, "legacy-crc").await;
    let blob = container.blob_client("chunks.bin");
    let body = data(4_500, 3);
    blob.put_block_blob(body.clone()).await.expect("put");

    let mut stream = blob.get().chunk_size(1_000u64).into_stream();
    let mut read = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.expect("ranged get");
        let range = chunk.content_range.clone().expect("a Content-Range");
        let bytes = chunk.data.collect().await.expect("chunk body");
        let expected = &body[read.len()..read.len() + bytes.len()];
        assert_eq!(&bytes[..], expected, "chunk at {range:?}");
        let crc = chunk
            .blob
            .properties
            .content_crc64
            .expect("x-ms-content-crc64");
        assert_eq!(crc.as_slice(), &crc64(expected), "CRC64 of {range:?}");
        read.extend_from_slice(&bytes);
        chunks += 1;
    }
    assert_eq!(chunks, 5);
    assert_eq!(read, body);

    // One explicit range shorter than 4 MiB.
    let mut ranged = blob.get().range(100u64..350).into_stream();
    let chunk = ranged.next().await.expect("one chunk").expect("ranged get");
    let bytes = chunk.data.collect().await.expect("body");
    assert_eq!(&bytes[..], &body[100..350]);
    let crc = chunk
        .blob
        .properties
        .content_crc64
        .expect("x-ms-content-crc64");
    assert_eq!(crc.as_slice(), &crc64(&body[100..350]));
}

#[tokio::test]
async fn blocks_list_copy_and_delete() {
    let (_server, service) = start().await;
    let container = new_container(&service, "legacy-blocks").await;
    let blob = container.blob_client("dir/blocks.bin");
    let parts = [data(3_000, 1), data(2_000, 2), data(1_000, 3)];
    let mut list = BlockList::default();
    for (i, part) in parts.iter().enumerate() {
        let id = BlockId::new(format!("block-{i:04}"));
        blob.put_block(id.clone(), part.clone())
            .await
            .expect("put block");
        list.blocks.push(BlobBlockType::new_uncommitted(id));
    }
    blob.put_block_list(list).await.expect("put block list");
    let committed = blob
        .get_block_list()
        .block_list_type(BlockListType::Committed)
        .await
        .expect("get block list")
        .block_with_size_list
        .blocks;
    assert_eq!(
        committed
            .iter()
            .map(|b| b.size_in_bytes)
            .collect::<Vec<_>>(),
        [3_000, 2_000, 1_000]
    );
    let whole: Vec<u8> = parts.iter().flat_map(|p| p.iter().copied()).collect();
    assert_eq!(blob.get_content().await.expect("get"), whole);

    container
        .blob_client("top.txt")
        .put_block_blob(Bytes::from_static(b"top"))
        .await
        .expect("put");
    let page = container
        .list_blobs()
        .delimiter("/")
        .into_stream()
        .next()
        .await
        .expect("one page")
        .expect("list blobs");
    let names: Vec<&str> = page.blobs.blobs().map(|b| b.name.as_str()).collect();
    let prefixes: Vec<&str> = page.blobs.prefixes().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["top.txt"]);
    assert_eq!(prefixes, ["dir/"]);

    let copy = container.blob_client("copy.bin");
    let started = copy
        .copy(blob.url().expect("source URL"))
        .await
        .expect("copy");
    assert_eq!(started.copy_status, CopyStatus::Success);
    assert_eq!(copy.get_content().await.expect("get copy"), whole);

    // The answer must carry x-ms-delete-type-permanent, or the SDK fails it.
    let deleted = copy.delete().await.expect("delete blob");
    assert!(deleted.delete_type_permanent);
    assert!(!copy.exists().await.expect("exists"));

    container.delete().await.expect("delete container");
    assert!(!container.exists().await.expect("container exists"));
}

/// The check value of CRC-64/NVME, so that the CRC64 above is the one the
/// service uses.
#[test]
fn crc64_is_the_nvme_polynomial() {
    assert_eq!(crc64(b"123456789"), 0xAE8B_1486_0A79_9888u64.to_le_bytes());
}
