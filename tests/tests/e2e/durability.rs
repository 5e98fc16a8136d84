//! Durability (docs/architecture.md#write-order, docs/wire/requests.md#etag-and-last-modified): data
//! survives a restart, ETags keep growing across restarts, garbage
//! collection keeps exactly the extents of live blobs and never those a
//! reader is streaming, and the start-up sweep removes orphan extents.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::blocks::extent_files;
use futures::StreamExt;
use stowage_blobstore::Clock as _;
use stowage_tests::{ACCOUNT, KEY, TestServer, shared_key_signature, string_to_sign, unique};

fn etag_value(etag: &str) -> u64 {
    let hex = etag
        .trim_matches('"')
        .strip_prefix("0x")
        .expect("0x prefix");
    assert_eq!(hex.len(), 16, "{etag}");
    u64::from_str_radix(hex, 16).expect("hex ETag")
}

/// Every header a reader could compare across a restart.
const BLOB_HEADERS: &[&str] = &[
    "content-length",
    "content-type",
    "content-encoding",
    "content-language",
    "content-disposition",
    "cache-control",
    "content-md5",
    "etag",
    "last-modified",
    "x-ms-creation-time",
    "x-ms-blob-type",
    "x-ms-blob-committed-block-count",
    "x-ms-meta-owner",
    "x-ms-meta-purpose",
    "x-ms-lease-state",
    "x-ms-access-tier",
];

const CONTAINER_HEADERS: &[&str] = &[
    "etag",
    "last-modified",
    "x-ms-meta-team",
    "x-ms-blob-public-access",
    "x-ms-lease-state",
];

fn snapshot_headers(r: &stowage_tests::Response, names: &[&str]) -> Vec<(String, Option<String>)> {
    names
        .iter()
        .map(|n| ((*n).to_owned(), r.header(n)))
        .collect()
}

#[tokio::test]
async fn blobs_and_containers_survive_a_restart_unchanged() {
    let big: Vec<u8> = (0..3 * 1024 * 1024 + 17)
        .map(|i| (i * 7 % 256) as u8)
        .collect();
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("durable");
    let r = c
        .put(&format!("/{name}?restype=container"))
        .header("x-ms-meta-team", "storage")
        .header("x-ms-blob-public-access", "blob")
        .send()
        .await;
    assert_eq!(r.status, 201);
    let r = c
        .put(&format!("/{name}/dir/big.bin"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "application/x-test")
        .header("x-ms-blob-content-encoding", "identity")
        .header("x-ms-blob-content-language", "de")
        .header("x-ms-blob-content-disposition", "attachment")
        .header("x-ms-blob-cache-control", "no-store")
        .header("x-ms-meta-owner", "alice")
        .header("x-ms-meta-purpose", "restart test")
        .body(big.clone())
        .send()
        .await;
    assert_eq!(r.status, 201);
    server.clock.advance(Duration::from_secs(3));
    c.put_blob(&name, "small.txt", b"small").await;
    c.put_blob(&name, "empty", b"").await;
    let r = c
        .put(&format!("/{name}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201);
    server.clock.advance(Duration::from_secs(3));
    // A later change of properties and metadata must survive too.
    let r = c
        .put(&format!("/{name}/small.txt?comp=metadata"))
        .header("x-ms-meta-owner", "bob")
        .send()
        .await;
    assert_eq!(r.status, 200);

    let blobs = ["dir/big.bin", "small.txt", "empty", "log"];
    let mut before = Vec::new();
    for b in blobs {
        let r = c.get(&format!("/{name}/{b}")).send().await;
        assert_eq!(r.status, 200, "{b}");
        before.push((r.body.clone(), snapshot_headers(&r, BLOB_HEADERS)));
    }
    let container_before = snapshot_headers(
        &c.get(&format!("/{name}?restype=container")).send().await,
        CONTAINER_HEADERS,
    );
    let listing_before = c
        .get(&format!(
            "/{name}?restype=container&comp=list&include=metadata"
        ))
        .send()
        .await
        .text();

    let server = server.restart().await;
    let c = server.client();

    for (b, (body, headers)) in blobs.iter().zip(&before) {
        let r = c.get(&format!("/{name}/{b}")).send().await;
        assert_eq!(r.status, 200, "{b} after restart: {}", r.text());
        assert!(r.body == body, "{b}: bytes differ after restart");
        assert_eq!(&snapshot_headers(&r, BLOB_HEADERS), headers, "{b}");
    }
    assert_eq!(&before[0].0[..], &big[..]);
    let container_after = snapshot_headers(
        &c.get(&format!("/{name}?restype=container")).send().await,
        CONTAINER_HEADERS,
    );
    assert_eq!(container_after, container_before);
    let listing_after = c
        .get(&format!(
            "/{name}?restype=container&comp=list&include=metadata"
        ))
        .send()
        .await
        .text();
    // The port is new after a restart; everything from <Blobs> on is equal.
    let blobs_part = |xml: &str| xml[xml.find("<Blobs").expect("<Blobs")..].to_owned();
    assert_eq!(blobs_part(&listing_after), blobs_part(&listing_before));
    // A range read after the restart.
    let r = c
        .get(&format!("/{name}/dir/big.bin"))
        .header("x-ms-range", "bytes=1048576-1048675")
        .send()
        .await;
    assert_eq!(r.status, 206);
    assert_eq!(&r.body[..], &big[1048576..1048676]);
}

#[tokio::test]
async fn a_deleted_blob_and_container_stay_deleted_after_a_restart() {
    let server = TestServer::start().await;
    let c = server.client();
    let keep = unique("keep");
    let gone = unique("gone");
    c.create_container(&keep).await;
    c.create_container(&gone).await;
    c.put_blob(&keep, "deleted", b"x").await;
    c.put_blob(&keep, "kept", b"y").await;
    c.put_blob(&gone, "inside", b"z").await;
    assert_eq!(
        c.delete(&format!("/{keep}/deleted")).send().await.status,
        202
    );
    assert_eq!(
        c.delete(&format!("/{gone}?restype=container"))
            .send()
            .await
            .status,
        202
    );
    let server = server.restart().await;
    let c = server.client();
    c.get(&format!("/{keep}/deleted"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    c.get(&format!("/{gone}?restype=container"))
        .send()
        .await
        .assert_error(404, "ContainerNotFound");
    assert_eq!(&c.get(&format!("/{keep}/kept")).send().await.body[..], b"y");
}

#[tokio::test]
async fn a_write_after_a_restart_gets_an_etag_greater_than_every_earlier_one() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("etags");
    let mut earlier = Vec::new();
    let r = c.put(&format!("/{name}?restype=container")).send().await;
    earlier.push(r.etag());
    for i in 0..5 {
        earlier.push(c.put_blob(&name, &format!("b{i}"), b"x").await.etag());
    }
    let max = earlier.iter().map(|e| etag_value(e)).max().unwrap();

    let server = server.restart().await;
    // Even if the host clock went back an hour while the server was down.
    let back = server.clock.now() - Duration::from_secs(3600);
    server.clock.set(back);
    let c = server.client();
    let blob = c.put_blob(&name, "b0", b"new").await.etag();
    let other = c.put_blob(&name, "fresh", b"new").await.etag();
    let meta = c
        .put(&format!("/{name}?restype=container&comp=metadata"))
        .header("x-ms-meta-a", "b")
        .send()
        .await
        .etag();
    for e in [&blob, &other, &meta] {
        assert!(!earlier.contains(e), "{e} reused");
        assert!(etag_value(e) > max, "{e} is not above {max:#X}");
    }
    assert!(etag_value(&other) > etag_value(&blob));
}

// ---------------------------------------------------------------------------
// Garbage collection

#[tokio::test]
async fn garbage_collection_keeps_exactly_the_extents_of_live_blobs() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("gc");
    c.create_container(&name).await;
    c.put_blob(&name, "overwritten", b"version one").await;
    c.put_blob(&name, "deleted", b"doomed").await;
    c.put_blob(&name, "kept", b"kept bytes").await;
    c.put_blob(&name, "empty", b"").await;
    c.put_blob(&name, "overwritten", b"version two").await;
    c.put_blob(&name, "overwritten", b"version three").await;
    assert_eq!(
        c.delete(&format!("/{name}/deleted")).send().await.status,
        202
    );
    // One extent per non-empty body written: 3 versions + deleted + kept.
    assert_eq!(extent_files(&server).len(), 5);

    // Inside the grace period nothing is deleted.
    server.clock.advance(Duration::from_secs(29));
    assert_eq!(server.store.collect_garbage().await.unwrap(), 0);
    assert_eq!(extent_files(&server).len(), 5);

    server.clock.advance(Duration::from_secs(2));
    assert_eq!(server.store.collect_garbage().await.unwrap(), 3);
    // Live: "overwritten" (version three) and "kept"; "empty" has no extent.
    assert_eq!(extent_files(&server).len(), 2);
    assert_eq!(server.store.collect_garbage().await.unwrap(), 0);

    for (blob, bytes) in [
        ("overwritten", &b"version three"[..]),
        ("kept", b"kept bytes"),
        ("empty", b""),
    ] {
        let r = c.get(&format!("/{name}/{blob}")).send().await;
        assert_eq!(r.status, 200, "{blob}");
        assert_eq!(&r.body[..], bytes, "{blob}");
    }
    c.get(&format!("/{name}/deleted"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn deleting_a_container_makes_its_extents_garbage() {
    let server = TestServer::start().await;
    let c = server.client();
    let gone = unique("gcgone");
    let kept = unique("gckept");
    c.create_container(&gone).await;
    c.create_container(&kept).await;
    for i in 0..3 {
        c.put_blob(&gone, &format!("b{i}"), b"bytes").await;
    }
    c.put_blob(&kept, "b", b"bytes").await;
    assert_eq!(extent_files(&server).len(), 4);
    let r = c.delete(&format!("/{gone}?restype=container")).send().await;
    assert_eq!(r.status, 202);
    server.clock.advance(Duration::from_secs(31));
    assert_eq!(server.store.collect_garbage().await.unwrap(), 3);
    assert_eq!(extent_files(&server).len(), 1);
    assert_eq!(
        &c.get(&format!("/{kept}/b")).send().await.body[..],
        b"bytes"
    );
}

#[tokio::test]
async fn garbage_collection_survives_a_restart_and_still_collects() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("gcrestart");
    c.create_container(&name).await;
    c.put_blob(&name, "b", b"one").await;
    c.put_blob(&name, "b", b"two").await;
    assert_eq!(extent_files(&server).len(), 2);
    let server = server.restart().await;
    server.clock.advance(Duration::from_secs(31));
    server.store.collect_garbage().await.unwrap();
    assert_eq!(extent_files(&server).len(), 1);
    let r = server.client().get(&format!("/{name}/b")).send().await;
    assert_eq!(&r.body[..], b"two");
}

/// Sends a signed GET of `path` on `http` and returns the response once its
/// head has arrived, with the body still streaming.
async fn start_get(http: &reqwest::Client, server: &TestServer, path: &str) -> reqwest::Response {
    let full = format!("/{ACCOUNT}{path}");
    let headers = vec![
        (
            "x-ms-date".to_owned(),
            httpdate::fmt_http_date(server.clock.now()),
        ),
        (
            "x-ms-version".to_owned(),
            stowage_tests::client_version().to_owned(),
        ),
    ];
    let sig = shared_key_signature(KEY, &string_to_sign("GET", &full, &headers));
    let mut rb = http.get(format!("{}{full}", server.base));
    for (n, v) in &headers {
        rb = rb.header(n, v);
    }
    rb.header("authorization", format!("SharedKey {ACCOUNT}:{sig}"))
        .send()
        .await
        .expect("request sent")
}

#[tokio::test]
async fn a_get_that_started_before_overwrite_delete_and_collection_returns_the_original_bytes() {
    // Larger than everything the socket buffers of both ends can hold, so
    // the server is still reading the extent while the client waits. Made
    // before any request, so no pooled connection idles past the server's
    // keep-alive while it is built.
    let original: Vec<u8> = (0..64 * 1024 * 1024).map(|i| (i % 253) as u8).collect();
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("pinned");
    c.create_container(&name).await;
    c.put_blob(&name, "big", &original).await;

    // One connection: the second request below is served only after the
    // server has finished (and dropped) the first response.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .http1_only()
        .build()
        .unwrap();
    let response = start_get(&http, &server, &format!("/{name}/big")).await;
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut received = body.next().await.expect("a first chunk").unwrap().to_vec();
    assert!(received.len() < original.len(), "still streaming");

    // Overwrite, then delete, then collect past the grace period.
    c.put_blob(&name, "big", b"replacement").await;
    assert_eq!(c.delete(&format!("/{name}/big")).send().await.status, 202);
    server.clock.advance(Duration::from_secs(31));
    let collected = server.store.collect_garbage().await.unwrap();
    assert_eq!(collected, 1, "the replacement's extent, not the pinned one");
    assert_eq!(extent_files(&server).len(), 1, "the pinned extent stays");

    while let Some(chunk) = body.next().await {
        received.extend_from_slice(&chunk.expect("the stream completes"));
    }
    assert_eq!(received.len(), original.len());
    assert!(received == original, "the original bytes, complete");

    // Once the reader is done, the extent goes with the next pass.
    drop(body);
    let next = start_get(&http, &server, &format!("/{name}/big")).await;
    assert_eq!(next.status(), 404);
    assert_eq!(server.store.collect_garbage().await.unwrap(), 1);
    assert!(extent_files(&server).is_empty());
}

// ---------------------------------------------------------------------------
// Orphan sweep at start-up

fn write_stray(data_dir: &Path, id: &str) -> PathBuf {
    let dir = data_dir.join("objects/extents").join(&id[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(id);
    std::fs::write(&path, b"bytes nobody references").unwrap();
    path
}

#[tokio::test]
async fn orphan_extents_are_swept_at_start_up_and_live_blobs_still_read() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("sweep");
    c.create_container(&name).await;
    c.put_blob(&name, "a", b"alpha").await;
    c.put_blob(&name, "b", b"beta").await;
    let live = extent_files(&server);
    assert_eq!(live.len(), 2);
    let strays = [
        write_stray(&server.data_dir(), &format!("ab{}", "0".repeat(30))),
        write_stray(&server.data_dir(), &format!("cd{}", "1f".repeat(15))),
    ];
    // A staging file left by an interrupted upload goes as well.
    let staging = {
        let id = format!("ef{}", "2".repeat(30));
        let dir = server.data_dir().join("objects/extents/ef");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{id}#1"));
        std::fs::write(&path, b"partial").unwrap();
        path
    };
    for s in &strays {
        assert!(s.exists());
    }

    let server = server.restart().await;
    for s in &strays {
        assert!(!s.exists(), "{} was not swept", s.display());
    }
    assert!(!staging.exists(), "{} was not swept", staging.display());
    assert_eq!(extent_files(&server), live);
    let c = server.client();
    assert_eq!(
        &c.get(&format!("/{name}/a")).send().await.body[..],
        b"alpha"
    );
    assert_eq!(&c.get(&format!("/{name}/b")).send().await.body[..], b"beta");
}

#[tokio::test]
async fn extents_waiting_for_collection_are_not_swept_as_orphans() {
    // Garbage inside its grace period is known to the metadata: a restart
    // must not treat it as an orphan and must still collect it later.
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("grace");
    c.create_container(&name).await;
    c.put_blob(&name, "b", b"old").await;
    c.put_blob(&name, "b", b"new").await;
    assert_eq!(extent_files(&server).len(), 2);
    let server = server.restart().await;
    assert_eq!(extent_files(&server).len(), 2, "garbage is not an orphan");
    assert_eq!(server.store.collect_garbage().await.unwrap(), 0);
    server.clock.advance(Duration::from_secs(31));
    assert_eq!(server.store.collect_garbage().await.unwrap(), 1);
    assert_eq!(extent_files(&server).len(), 1);
}
