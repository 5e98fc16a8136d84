//! Snapshot Blob, reading and deleting snapshots, and snapshots in List
//! Blobs (docs/wire/blobs.md#delete-blob, docs/wire/blobs.md#snapshot-blob; docs/wire/requests.md#dates-and-times;
//! docs/wire/listing.md#snapshots-in-a-listing).

use std::time::Duration;

use stowage_tests::{Client, Response, TestServer, unique};

use super::blocks::{
    LEASE_A, LEASE_B, acquire_lease, blob_entries, block_id, commit, data, elements, enc,
    extent_bytes, extent_files, list, stage,
};

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("snapshots");
    c.create_container(&name).await;
    (c, name)
}

/// Snapshot Blob with extra headers; the response unchecked.
async fn snapshot_with(
    c: &Client,
    container: &str,
    blob: &str,
    headers: &[(&str, &str)],
) -> Response {
    let mut request = c.put(&format!("/{container}/{blob}?comp=snapshot"));
    for (n, v) in headers {
        request = request.header(n, v);
    }
    request.send().await
}

/// Snapshot Blob; asserts 201 and returns the response.
async fn snapshot(c: &Client, container: &str, blob: &str) -> Response {
    let r = snapshot_with(c, container, blob, &[]).await;
    assert_eq!(r.status, 201, "snapshot: {}", r.text());
    r
}

fn snapshot_id(r: &Response) -> String {
    r.header("x-ms-snapshot").expect("x-ms-snapshot")
}

/// `path?snapshot=<id>` (or `path&snapshot=` when `path` has a query).
fn at(path: &str, id: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}snapshot={}", enc(id))
}

/// `YYYY-MM-DDThh:mm:ss.fffffffZ`.
fn is_snapshot_id(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 28
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..27)
        && b[27] == b'Z'
}

#[tokio::test]
async fn snapshot_blob_returns_an_iso_id_with_seven_fraction_digits() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c.put_blob(&ctr, "b", b"content").await;
    let r = snapshot(&c, &ctr, "b").await;
    let id = snapshot_id(&r);
    assert!(is_snapshot_id(&id), "{id}");
    // The test clock starts at Tue, 03 Sep 2024 10:15:07 GMT exactly.
    assert_eq!(id, "2024-09-03T10:15:07.0000000Z");
    assert!(r.body.is_empty());
    assert_eq!(
        r.header("x-ms-request-server-encrypted").as_deref(),
        Some("true")
    );
    // Without metadata the snapshot has the base's ETag and Last-Modified,
    // and the base does not change.
    assert_eq!(r.etag(), put.etag());
    assert_eq!(r.header("last-modified"), put.header("last-modified"));
    let base = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(base.etag(), put.etag());

    server.clock.advance(Duration::from_millis(1234));
    let later = snapshot_id(&snapshot(&c, &ctr, "b").await);
    assert_eq!(later, "2024-09-03T10:15:08.2340000Z");
}

#[tokio::test]
async fn a_snapshot_with_metadata_gets_a_new_etag_and_exactly_that_metadata() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c
        .put(&format!("/{ctr}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-meta-origin", "base")
        .body(&b"content"[..])
        .send()
        .await;
    assert_eq!(put.status, 201);

    let plain = snapshot(&c, &ctr, "b").await;
    let head = c
        .head(&at(&format!("/{ctr}/b"), &snapshot_id(&plain)))
        .send()
        .await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("x-ms-meta-origin").as_deref(), Some("base"));
    assert_eq!(head.etag(), put.etag());

    server.clock.advance(Duration::from_secs(1));
    let with = snapshot_with(&c, &ctr, "b", &[("x-ms-meta-label", "v1")]).await;
    assert_eq!(with.status, 201, "{}", with.text());
    assert_ne!(with.etag(), put.etag());
    let head = c
        .head(&at(&format!("/{ctr}/b"), &snapshot_id(&with)))
        .send()
        .await;
    assert_eq!(head.etag(), with.etag());
    assert_eq!(head.header("x-ms-meta-label").as_deref(), Some("v1"));
    assert_eq!(head.header("x-ms-meta-origin"), None);
    // The base keeps its ETag and metadata.
    let base = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(base.etag(), put.etag());
    assert_eq!(base.header("x-ms-meta-origin").as_deref(), Some("base"));
    assert_eq!(base.header("x-ms-meta-label"), None);
}

#[tokio::test]
async fn a_snapshot_keeps_the_old_bytes_after_the_base_is_overwritten() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let v1 = c
        .put(&format!("/{ctr}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/plain")
        .body(&b"version one"[..])
        .send()
        .await;
    assert_eq!(v1.status, 201);
    let id = snapshot_id(&snapshot(&c, &ctr, "b").await);
    server.clock.advance(Duration::from_secs(1));
    c.put_blob(&ctr, "b", b"version two, longer").await;

    let old = c.get(&at(&format!("/{ctr}/b"), &id)).send().await;
    assert_eq!(old.status, 200, "{}", old.text());
    assert_eq!(&old.body[..], b"version one");
    assert_eq!(old.etag(), v1.etag());
    assert_eq!(old.header("last-modified"), v1.header("last-modified"));
    assert_eq!(old.header("content-type").as_deref(), Some("text/plain"));
    assert_eq!(old.header("content-length").as_deref(), Some("11"));
    let new = c.get(&format!("/{ctr}/b")).send().await;
    assert_eq!(&new.body[..], b"version two, longer");

    // Range reads and HEAD of the snapshot.
    let range = c
        .get(&at(&format!("/{ctr}/b"), &id))
        .header("x-ms-range", "bytes=8-10")
        .send()
        .await;
    assert_eq!(range.status, 206);
    assert_eq!(&range.body[..], b"one");
    let head = c.head(&at(&format!("/{ctr}/b"), &id)).send().await;
    assert_eq!(head.header("content-length").as_deref(), Some("11"));
    assert_eq!(head.header("x-ms-blob-type").as_deref(), Some("BlockBlob"));
}

#[tokio::test]
async fn a_snapshot_keeps_its_committed_block_list_and_no_uncommitted_blocks() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "b", &block_id(1), b"aaa").await;
    commit(&c, &ctr, "b", &[("Latest", &block_id(1))]).await;
    stage(&c, &ctr, "b", &block_id(2), b"bb").await;
    let id = snapshot_id(&snapshot(&c, &ctr, "b").await);
    let r = c
        .get(&at(
            &format!("/{ctr}/b?comp=blocklist&blocklisttype=all"),
            &id,
        ))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(elements(&r.text(), "Name"), [block_id(1)]);
    assert!(r.text().contains("<UncommittedBlocks />"), "{}", r.text());
    assert_eq!(r.header("x-ms-blob-content-length").as_deref(), Some("3"));
}

#[tokio::test]
async fn an_unknown_snapshot_is_404_blob_not_found() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"content").await;
    snapshot(&c, &ctr, "b").await;
    let other = "2024-09-03T10:15:07.0000001Z";
    c.get(&at(&format!("/{ctr}/b"), other))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    c.head(&at(&format!("/{ctr}/b"), other))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    c.delete(&at(&format!("/{ctr}/b"), other))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn snapshot_blob_addressed_to_a_snapshot_is_400_invalid_operation() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"content").await;
    let id = snapshot_id(&snapshot(&c, &ctr, "b").await);
    let r = c
        .put(&at(&format!("/{ctr}/b?comp=snapshot"), &id))
        .send()
        .await;
    r.assert_error(400, "InvalidOperation");
}

#[tokio::test]
async fn snapshot_of_a_missing_or_uncommitted_only_blob_is_404_blob_not_found() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    snapshot_with(&c, &ctr, "missing", &[])
        .await
        .assert_error(404, "BlobNotFound");
    stage(&c, &ctr, "pending", &block_id(1), b"x").await;
    snapshot_with(&c, &ctr, "pending", &[])
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn snapshot_blob_evaluates_conditions_with_412() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c.put_blob(&ctr, "b", b"content").await;
    snapshot_with(&c, &ctr, "b", &[("if-match", "\"0x0000000000000001\"")])
        .await
        .assert_error(412, "ConditionNotMet");
    // A failed If-None-Match is 412 as well, never 304.
    snapshot_with(&c, &ctr, "b", &[("if-none-match", &put.etag())])
        .await
        .assert_error(412, "ConditionNotMet");
    let r = snapshot_with(&c, &ctr, "b", &[("if-match", &put.etag())]).await;
    assert_eq!(r.status, 201, "{}", r.text());
}

#[tokio::test]
async fn a_leased_blob_can_be_snapshotted_without_its_lease_id() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"content").await;
    acquire_lease(&c, &format!("/{ctr}/b"), LEASE_A, -1).await;
    let id = snapshot_id(&snapshot(&c, &ctr, "b").await);
    snapshot_with(&c, &ctr, "b", &[("x-ms-lease-id", LEASE_B)])
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    let r = snapshot_with(&c, &ctr, "b", &[("x-ms-lease-id", LEASE_A)]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    // The snapshot has no lease; the base keeps its own.
    let snap = c.head(&at(&format!("/{ctr}/b"), &id)).send().await;
    assert_eq!(
        snap.header("x-ms-lease-state").as_deref(),
        Some("available")
    );
    let base = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(base.header("x-ms-lease-state").as_deref(), Some("leased"));
}

// ---------------------------------------------------------------------------
// Delete Blob and snapshots

#[tokio::test]
async fn deleting_a_blob_that_has_snapshots_without_the_header_is_409_snapshots_present() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"content").await;
    snapshot(&c, &ctr, "b").await;
    c.delete(&format!("/{ctr}/b"))
        .send()
        .await
        .assert_error(409, "SnapshotsPresent");
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.status, 200);
}

#[tokio::test]
async fn delete_snapshots_include_deletes_the_blob_and_every_snapshot() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"content").await;
    let first = snapshot_id(&snapshot(&c, &ctr, "b").await);
    server.clock.advance(Duration::from_secs(1));
    let second = snapshot_id(&snapshot(&c, &ctr, "b").await);
    let r = c
        .delete(&format!("/{ctr}/b"))
        .header("x-ms-delete-snapshots", "include")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    for path in [
        format!("/{ctr}/b"),
        at(&format!("/{ctr}/b"), &first),
        at(&format!("/{ctr}/b"), &second),
    ] {
        c.get(&path).send().await.assert_error(404, "BlobNotFound");
    }
    let listing = blob_entries(&list(&c, &ctr, "&include=snapshots").await);
    assert!(listing.is_empty(), "{listing:?}");
}

#[tokio::test]
async fn delete_snapshots_only_keeps_the_base_blob_unchanged() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c.put_blob(&ctr, "b", b"content").await;
    acquire_lease(&c, &format!("/{ctr}/b"), LEASE_A, -1).await;
    let first = snapshot_id(&snapshot(&c, &ctr, "b").await);
    server.clock.advance(Duration::from_secs(1));
    let second = snapshot_id(&snapshot(&c, &ctr, "b").await);
    server.clock.advance(Duration::from_secs(1));
    // A leased base needs its lease id even to delete only the snapshots.
    c.delete(&format!("/{ctr}/b"))
        .header("x-ms-delete-snapshots", "only")
        .send()
        .await
        .assert_error(412, "LeaseIdMissing");
    let r = c
        .delete(&format!("/{ctr}/b"))
        .header("x-ms-delete-snapshots", "only")
        .header("x-ms-lease-id", LEASE_A)
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    for id in [&first, &second] {
        c.head(&at(&format!("/{ctr}/b"), id))
            .send()
            .await
            .assert_error(404, "BlobNotFound");
    }
    let base = c.get(&format!("/{ctr}/b")).send().await;
    assert_eq!(base.status, 200);
    assert_eq!(&base.body[..], b"content");
    assert_eq!(base.etag(), put.etag());
    assert_eq!(base.header("last-modified"), put.header("last-modified"));
    assert_eq!(base.header("x-ms-lease-state").as_deref(), Some("leased"));
    // No snapshots remain, so a plain delete now works.
    let r = c
        .delete(&format!("/{ctr}/b"))
        .header("x-ms-lease-id", LEASE_A)
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn deleting_one_snapshot_by_id_leaves_the_others() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"one").await;
    let first = snapshot_id(&snapshot(&c, &ctr, "b").await);
    server.clock.advance(Duration::from_secs(1));
    c.put_blob(&ctr, "b", b"two").await;
    let second = snapshot_id(&snapshot(&c, &ctr, "b").await);
    // Deleting a snapshot needs no lease id even when the base is leased.
    acquire_lease(&c, &format!("/{ctr}/b"), LEASE_A, -1).await;
    let r = c.delete(&at(&format!("/{ctr}/b"), &first)).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    c.get(&at(&format!("/{ctr}/b"), &first))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let kept = c.get(&at(&format!("/{ctr}/b"), &second)).send().await;
    assert_eq!(&kept.body[..], b"two");
    let base = c.get(&format!("/{ctr}/b")).send().await;
    assert_eq!(&base.body[..], b"two");
    let snapshots: Vec<Option<String>> = blob_entries(&list(&c, &ctr, "&include=snapshots").await)
        .into_iter()
        .map(|(_, s, _)| s)
        .collect();
    assert_eq!(snapshots, [Some(second), None]);
}

#[tokio::test]
async fn delete_snapshot_with_x_ms_delete_snapshots_is_400_invalid_operation() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"one").await;
    let id = snapshot_id(&snapshot(&c, &ctr, "b").await);
    c.delete(&at(&format!("/{ctr}/b"), &id))
        .header("x-ms-delete-snapshots", "include")
        .send()
        .await
        .assert_error(400, "InvalidOperation");
    c.delete(&format!("/{ctr}/b"))
        .header("x-ms-delete-snapshots", "all")
        .send()
        .await
        .assert_error(400, "InvalidHeaderValue");
}

// ---------------------------------------------------------------------------
// Listing

#[tokio::test]
async fn list_blobs_include_snapshots_lists_snapshots_oldest_first_then_the_base() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "a", b"a0").await;
    let a1 = snapshot_id(&snapshot(&c, &ctr, "a").await);
    c.put_blob(&ctr, "b", b"b0").await;
    server.clock.advance(Duration::from_secs(1));
    let b1 = snapshot_id(&snapshot(&c, &ctr, "b").await);
    server.clock.advance(Duration::from_secs(1));
    c.put_blob(&ctr, "a", b"a-two").await;
    let a2 = snapshot_id(&snapshot(&c, &ctr, "a").await);
    c.put_blob(&ctr, "c", b"c0").await;

    let xml = list(&c, &ctr, "&include=snapshots").await;
    let entries = blob_entries(&xml);
    let got: Vec<(&str, Option<&str>)> = entries
        .iter()
        .map(|(n, s, _)| (n.as_str(), s.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", Some(a1.as_str())),
            ("a", Some(a2.as_str())),
            ("a", None),
            ("b", Some(b1.as_str())),
            ("b", None),
            ("c", None),
        ]
    );
    // Snapshot entries carry their own content and no lease elements.
    let (_, _, a1_entry) = &entries[0];
    assert_eq!(elements(a1_entry, "Content-Length"), ["2"]);
    assert!(!a1_entry.contains("<LeaseStatus>"), "{a1_entry}");
    let (_, _, a_base) = &entries[2];
    assert_eq!(elements(a_base, "Content-Length"), ["5"]);
    assert_eq!(elements(a_base, "LeaseStatus"), ["unlocked"]);

    let plain: Vec<(String, Option<String>)> = blob_entries(&list(&c, &ctr, "").await)
        .into_iter()
        .map(|(n, s, _)| (n, s))
        .collect();
    assert_eq!(
        plain,
        [("a".into(), None), ("b".into(), None), ("c".into(), None)]
    );
}

#[tokio::test]
async fn list_blobs_pages_between_snapshots_of_one_name() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "x", b"x").await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(snapshot_id(&snapshot(&c, &ctr, "x").await));
        server.clock.advance(Duration::from_secs(1));
    }
    c.put_blob(&ctr, "y", b"y").await;
    let mut expected: Vec<(String, Option<String>)> = ids
        .iter()
        .map(|id| ("x".to_owned(), Some(id.clone())))
        .collect();
    expected.push(("x".into(), None));
    expected.push(("y".into(), None));

    for page_size in [1usize, 2, 4] {
        let mut got = Vec::new();
        let mut marker = String::new();
        let mut pages = 0;
        loop {
            let query = if marker.is_empty() {
                format!("&include=snapshots&maxresults={page_size}")
            } else {
                format!(
                    "&include=snapshots&maxresults={page_size}&marker={}",
                    enc(&marker)
                )
            };
            let xml = list(&c, &ctr, &query).await;
            let entries = blob_entries(&xml);
            assert!(entries.len() <= page_size, "{xml}");
            got.extend(entries.into_iter().map(|(n, s, _)| (n, s)));
            pages += 1;
            marker = elements(&xml, "NextMarker")
                .first()
                .map(|m| (*m).to_owned())
                .unwrap_or_default();
            if marker.is_empty() {
                assert!(xml.contains("<NextMarker />"), "{xml}");
                break;
            }
            assert!(pages <= expected.len(), "too many pages");
        }
        assert_eq!(got, expected, "maxresults={page_size}");
        assert_eq!(
            pages,
            expected.len().div_ceil(page_size),
            "maxresults={page_size}"
        );
    }
}

#[tokio::test]
async fn two_snapshots_in_the_same_clock_tick_get_distinct_ids() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"one").await;
    let first = snapshot_id(&snapshot(&c, &ctr, "b").await);
    c.put_blob(&ctr, "b", b"two").await;
    let second = snapshot_id(&snapshot(&c, &ctr, "b").await);
    let third = snapshot_id(&snapshot(&c, &ctr, "b").await);
    assert_eq!(first, "2024-09-03T10:15:07.0000000Z");
    assert_eq!(second, "2024-09-03T10:15:07.0000001Z");
    assert_eq!(third, "2024-09-03T10:15:07.0000002Z");
    let a = c.get(&at(&format!("/{ctr}/b"), &first)).send().await;
    assert_eq!(&a.body[..], b"one");
    let b = c.get(&at(&format!("/{ctr}/b"), &second)).send().await;
    assert_eq!(&b.body[..], b"two");
    let listed: Vec<Option<String>> = blob_entries(&list(&c, &ctr, "&include=snapshots").await)
        .into_iter()
        .map(|(_, s, _)| s)
        .collect();
    assert_eq!(listed, [Some(first), Some(second), Some(third), None]);
}

#[tokio::test]
async fn snapshots_share_extents_with_their_base() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let content = data(512 * 1024, 7);
    c.put_blob(&ctr, "b", &content).await;
    let files = extent_files(&server);
    let bytes = extent_bytes(&server);
    assert_eq!(files.len(), 1);
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(snapshot_id(&snapshot(&c, &ctr, "b").await));
        server.clock.advance(Duration::from_secs(1));
    }
    assert_eq!(extent_files(&server), files, "snapshots wrote no extent");
    assert_eq!(extent_bytes(&server), bytes);
    // Overwriting the base writes one new extent; the snapshots keep theirs.
    c.put_blob(&ctr, "b", b"new").await;
    assert_eq!(extent_files(&server).len(), 2);
    for id in &ids {
        let r = c.get(&at(&format!("/{ctr}/b"), id)).send().await;
        assert!(r.body[..] == content[..], "snapshot {id}");
    }
}
