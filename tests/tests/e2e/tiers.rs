//! Access tiers: Set Blob Tier, the tier headers and listing elements,
//! what an archived blob refuses, and rehydration on the manual clock
//! (docs/wire/tiers.md).

use std::time::Duration;

use stowage_blobstore::Clock;
use stowage_tests::{ACCOUNT, Client, KEY, Response, TestServer, blob_sas, unique};

use super::blocks::{LEASE_A, acquire_lease};
use super::listing::texts;

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("tiers");
    c.create_container(&name).await;
    (c, name)
}

/// Set Blob Tier with extra headers; the response unchecked.
async fn set_tier_with(c: &Client, path: &str, tier: &str, headers: &[(&str, &str)]) -> Response {
    let sep = if path.contains('?') { '&' } else { '?' };
    let mut r = c
        .put(&format!("{path}{sep}comp=tier"))
        .header("x-ms-access-tier", tier);
    for (n, v) in headers {
        r = r.header(n, v);
    }
    r.send().await
}

async fn set_tier(c: &Client, path: &str, tier: &str) -> Response {
    set_tier_with(c, path, tier, &[]).await
}

async fn put_with_tier(c: &Client, path: &str, tier: &str) -> Response {
    c.put(path)
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-access-tier", tier)
        .body(&b"archived bytes"[..])
        .send()
        .await
}

fn now_http(server: &TestServer) -> String {
    httpdate::fmt_http_date(server.clock.now())
}

#[tokio::test]
async fn set_blob_tier_changes_the_tier_and_keeps_etag_and_last_modified() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/b");
    let put = c.put_blob(&ctr, "b", b"data").await;
    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Hot"));
    assert_eq!(
        head.header("x-ms-access-tier-inferred").as_deref(),
        Some("true")
    );
    assert_eq!(head.header("x-ms-access-tier-change-time"), None);

    server.clock.advance(Duration::from_secs(7));
    for tier in ["Cool", "Cold", "Hot"] {
        let r = set_tier(&c, &path, tier).await;
        assert_eq!(r.status, 200, "{tier}: {}", r.text());
        assert!(r.header("x-ms-request-id").is_some());
        let head = c.head(&path).send().await;
        assert_eq!(head.header("x-ms-access-tier").as_deref(), Some(tier));
        assert_eq!(head.header("x-ms-access-tier-inferred"), None);
        assert_eq!(
            head.header("x-ms-access-tier-change-time"),
            Some(now_http(&server))
        );
        assert_eq!(head.header("x-ms-archive-status"), None);
        assert_eq!(head.etag(), put.etag());
        assert_eq!(head.header("last-modified"), put.header("last-modified"));
    }
    // The listing says the same.
    let xml = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert_eq!(texts(&xml, "AccessTier"), ["Hot"]);
    assert!(texts(&xml, "AccessTierInferred").is_empty());
    assert_eq!(texts(&xml, "AccessTierChangeTime"), [now_http(&server)]);
}

#[tokio::test]
async fn bad_set_blob_tier_requests_get_the_service_errors() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/b");
    c.put_blob(&ctr, "b", b"data").await;
    c.put(&format!("/{ctr}/b?comp=tier"))
        .send()
        .await
        .assert_error(400, "MissingRequiredHeader");
    set_tier(&c, &path, "Frozen")
        .await
        .assert_error(400, "InvalidHeaderValue");
    set_tier_with(&c, &path, "Hot", &[("x-ms-rehydrate-priority", "Urgent")])
        .await
        .assert_error(400, "InvalidHeaderValue");
    set_tier(&c, &format!("/{ctr}/missing"), "Cool")
        .await
        .assert_error(404, "BlobNotFound");
    set_tier(&c, "/nosuchcontainer/b", "Cool")
        .await
        .assert_error(404, "ContainerNotFound");
    // Versioning is off: no version id names anything.
    set_tier(
        &c,
        &format!("{path}?versionid=2024-09-03T10:15:07.0000000Z"),
        "Cool",
    )
    .await
    .assert_error(404, "BlobNotFound");
    // A GET of comp=tier is no operation.
    c.get(&format!("{path}?comp=tier"))
        .send()
        .await
        .assert_error(405, "UnsupportedHttpVerb");
}

#[tokio::test]
async fn append_blobs_take_no_tier() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    set_tier(&c, &format!("/{ctr}/log"), "Cool")
        .await
        .assert_error(400, "AccessTierNotSupportedForBlobType");
    c.put(&format!("/{ctr}/log2"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("x-ms-access-tier", "Cool")
        .send()
        .await
        .assert_error(400, "AccessTierNotSupportedForBlobType");
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(head.header("x-ms-access-tier"), None);
}

#[tokio::test]
async fn a_leased_blob_needs_its_lease_id() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/b");
    c.put_blob(&ctr, "b", b"data").await;
    acquire_lease(&c, &path, LEASE_A, -1).await;
    set_tier(&c, &path, "Cool")
        .await
        .assert_error(412, "LeaseIdMissing");
    let r = set_tier_with(&c, &path, "Cool", &[("x-ms-lease-id", LEASE_A)]).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn an_archived_blob_refuses_reads_and_changes_of_its_content() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/a");
    let r = put_with_tier(&c, &path, "Archive").await;
    assert_eq!(r.status, 201, "{}", r.text());
    let head = c.head(&path).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Archive"));
    assert_eq!(head.header("x-ms-archive-status"), None);

    c.get(&path).send().await.assert_error(409, "BlobArchived");
    c.put(&format!("{path}?comp=properties"))
        .header("x-ms-blob-content-type", "text/plain")
        .send()
        .await
        .assert_error(409, "BlobArchived");
    c.put(&format!("{path}?comp=metadata"))
        .header("x-ms-meta-a", "1")
        .send()
        .await
        .assert_error(409, "BlobArchived");
    c.put(&format!("{path}?comp=snapshot"))
        .send()
        .await
        .assert_error(409, "BlobArchived");
    let source = format!("{}/{ACCOUNT}{path}", server.base);
    c.put(&format!("/{ctr}/copy"))
        .header("x-ms-copy-source", &source)
        .send()
        .await
        .assert_error(409, "BlobArchived");
    // What the service allows on an archived blob.
    assert_eq!(
        c.get(&format!("{path}?comp=metadata")).send().await.status,
        200
    );
    acquire_lease(&c, &path, LEASE_A, -1).await;
    let r = set_tier_with(&c, &path, "Archive", &[("x-ms-lease-id", LEASE_A)]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // A new upload replaces it, with the tier it names (or none).
    let r = c
        .put(&path)
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-lease-id", LEASE_A)
        .body(&b"fresh"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let got = c.get(&path).send().await;
    assert_eq!((got.status, got.text().as_str()), (200, "fresh"));
    assert_eq!(
        got.header("x-ms-access-tier"),
        None,
        "Get Blob has no tier headers"
    );
    let head = c.head(&path).send().await;
    assert_eq!(
        head.header("x-ms-access-tier-inferred").as_deref(),
        Some("true")
    );
}

#[tokio::test]
async fn rehydration_is_accepted_pending_and_completes_on_the_clock() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/a");
    put_with_tier(&c, &path, "Archive").await;
    server.clock.advance(Duration::from_secs(60));
    let r = set_tier_with(
        &c,
        &path,
        "Cool",
        &[("x-ms-rehydrate-priority", "Standard")],
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let started = server.clock.now();

    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Archive"));
    assert_eq!(
        head.header("x-ms-archive-status").as_deref(),
        Some("rehydrate-pending-to-cool")
    );
    assert_eq!(
        head.header("x-ms-rehydrate-priority").as_deref(),
        Some("Standard")
    );
    let xml = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert_eq!(texts(&xml, "ArchiveStatus"), ["rehydrate-pending-to-cool"]);
    assert_eq!(texts(&xml, "RehydratePriority"), ["Standard"]);

    // While pending: reads and other targets are refused; the same target
    // again is accepted and may raise the priority.
    c.get(&path)
        .send()
        .await
        .assert_error(409, "BlobBeingRehydrated");
    set_tier(&c, &path, "Hot")
        .await
        .assert_error(409, "BlobBeingRehydrated");
    set_tier(&c, &path, "Archive")
        .await
        .assert_error(409, "BlobBeingRehydrated");
    let r = set_tier_with(&c, &path, "Cool", &[("x-ms-rehydrate-priority", "High")]).await;
    assert_eq!(r.status, 202, "{}", r.text());
    let head = c.head(&path).send().await;
    assert_eq!(
        head.header("x-ms-rehydrate-priority").as_deref(),
        Some("High")
    );

    // One second short of the delay: still pending.
    server.clock.advance(Duration::from_secs(4));
    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Archive"));
    // The delay has passed: online in the new tier since then.
    server.clock.advance(Duration::from_secs(1));
    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Cool"));
    assert_eq!(head.header("x-ms-archive-status"), None);
    assert_eq!(head.header("x-ms-rehydrate-priority"), None);
    assert_eq!(
        head.header("x-ms-access-tier-change-time"),
        Some(httpdate::fmt_http_date(started + Duration::from_secs(5)))
    );
    let got = c.get(&path).send().await;
    assert_eq!((got.status, got.text().as_str()), (200, "archived bytes"));
}

#[tokio::test]
async fn a_pending_rehydration_survives_a_restart() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/a");
    put_with_tier(&c, &path, "Archive").await;
    assert_eq!(set_tier(&c, &path, "Hot").await.status, 202);
    let server = server.restart().await;
    let c = server.client();
    let head = c.head(&path).send().await;
    assert_eq!(
        head.header("x-ms-archive-status").as_deref(),
        Some("rehydrate-pending-to-hot")
    );
    server.clock.advance(Duration::from_secs(5));
    assert_eq!(c.get(&path).send().await.status, 200);
}

#[tokio::test]
async fn snapshots_take_a_tier_of_their_own() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/b");
    c.put_blob(&ctr, "b", b"data").await;
    let snap = c.put(&format!("{path}?comp=snapshot")).send().await;
    let id = snap.header("x-ms-snapshot").expect("a snapshot id");
    let snap_path = format!("{path}?snapshot={id}");
    assert_eq!(set_tier(&c, &snap_path, "Cool").await.status, 200);
    let head = c.head(&snap_path).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Cool"));
    let base = c.head(&path).send().await;
    assert_eq!(
        base.header("x-ms-access-tier-inferred").as_deref(),
        Some("true")
    );
    // An archived snapshot cannot be rehydrated in place.
    assert_eq!(set_tier(&c, &snap_path, "Archive").await.status, 200);
    c.get(&snap_path)
        .send()
        .await
        .assert_error(409, "BlobArchived");
    set_tier(&c, &snap_path, "Hot")
        .await
        .assert_error(409, "BlobArchived");
    // A snapshot of a tiered base blob starts in the base's tier.
    assert_eq!(set_tier(&c, &path, "Cold").await.status, 200);
    let snap = c.put(&format!("{path}?comp=snapshot")).send().await;
    let id = snap.header("x-ms-snapshot").expect("a snapshot id");
    let head = c.head(&format!("{path}?snapshot={id}")).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Cold"));
}

#[tokio::test]
async fn block_lists_and_copies_take_the_tier_they_name() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/listed?comp=blocklist"))
        .header("x-ms-access-tier", "Cold")
        .body("<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList></BlockList>")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let head = c.head(&format!("/{ctr}/listed")).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Cold"));

    c.put_blob(&ctr, "src", b"data").await;
    let source = format!("{}/{ACCOUNT}/{ctr}/src", server.base);
    let r = c
        .put(&format!("/{ctr}/dst"))
        .header("x-ms-copy-source", &source)
        .header("x-ms-access-tier", "Archive")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let head = c.head(&format!("/{ctr}/dst")).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Archive"));
    c.get(&format!("/{ctr}/dst"))
        .send()
        .await
        .assert_error(409, "BlobArchived");
    // A copy of an append blob takes no tier.
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    c.put(&format!("/{ctr}/log-copy"))
        .header(
            "x-ms-copy-source",
            &format!("{}/{ACCOUNT}/{ctr}/log", server.base),
        )
        .header("x-ms-access-tier", "Cool")
        .send()
        .await
        .assert_error(400, "AccessTierNotSupportedForBlobType");
}

#[tokio::test]
async fn an_archived_blob_is_copied_to_an_online_tier_by_rehydrating_the_copy() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/a");
    c.put(&path)
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-access-tier", "Archive")
        .body(&b"cold bytes"[..])
        .send()
        .await;
    let source = format!("{}/{ACCOUNT}{path}", server.base);
    let copy = |to: &str, tier: Option<&str>| {
        let mut r = c
            .put(&format!("/{ctr}/{to}"))
            .header("x-ms-copy-source", &source);
        if let Some(t) = tier {
            r = r.header("x-ms-access-tier", t);
        }
        r.send()
    };
    // Without an online tier for the copy: refused.
    copy("none", None).await.assert_error(409, "BlobArchived");
    copy("archived", Some("Archive"))
        .await
        .assert_error(409, "BlobArchived");
    // Copy Blob From URL (its source read through a SAS) does not rehydrate.
    let sas = blob_sas(ACCOUNT, KEY, &ctr, "a", "r", "2030-01-01T00:00:00Z");
    c.put(&format!("/{ctr}/sync"))
        .header("x-ms-copy-source", &format!("{source}?{sas}"))
        .header("x-ms-requires-sync", "true")
        .header("x-ms-access-tier", "Hot")
        .send()
        .await
        .assert_error(409, "BlobArchived");
    // With one: accepted, pending until the copy is rehydrated.
    let r = copy("hot", Some("Hot")).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.header("x-ms-copy-status").as_deref(), Some("pending"));
    let head = c.head(&format!("/{ctr}/hot")).send().await;
    assert_eq!(head.header("x-ms-copy-status").as_deref(), Some("pending"));
    assert_eq!(head.header("x-ms-copy-progress").as_deref(), Some("0/10"));
    assert_eq!(head.header("x-ms-copy-completion-time"), None);
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Archive"));
    assert_eq!(
        head.header("x-ms-archive-status").as_deref(),
        Some("rehydrate-pending-to-hot")
    );
    c.get(&format!("/{ctr}/hot"))
        .send()
        .await
        .assert_error(409, "BlobBeingRehydrated");
    let xml = c
        .get(&format!("/{ctr}?restype=container&comp=list&include=copy"))
        .send()
        .await
        .text();
    assert_eq!(texts(&xml, "CopyStatus"), ["pending"], "{xml}");
    // Once the rehydration has run its course on the clock: done.
    server.clock.advance(Duration::from_secs(3600));
    let head = c.head(&format!("/{ctr}/hot")).send().await;
    assert_eq!(head.header("x-ms-copy-status").as_deref(), Some("success"));
    assert_eq!(head.header("x-ms-copy-progress").as_deref(), Some("10/10"));
    assert!(head.header("x-ms-copy-completion-time").is_some());
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Hot"));
    assert_eq!(head.header("x-ms-archive-status"), None);
    let got = c.get(&format!("/{ctr}/hot")).send().await;
    assert_eq!((got.status, got.text().as_str()), (200, "cold bytes"));
    // The source stays archived.
    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-access-tier").as_deref(), Some("Archive"));
}
