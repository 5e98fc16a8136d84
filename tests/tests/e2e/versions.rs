//! Blob versioning and blob soft delete (docs/wire/versions.md; issue 21):
//! version ids on writes, reads and deletes by version, listing versions and
//! soft-deleted blobs, Undelete Blob, permanent deletes, the purge at the
//! end of retention and the collection of what it freed.

use std::time::Duration;

use futures::StreamExt as _;
use stowage_tests::{Client, Response, TestServer, unique};

use super::blocks::{blob_entries, elements, extent_files, list};

/// One day: the unit of retention.
const DAY: Duration = Duration::from_secs(86_400);
/// Past the collector's 30 s grace period.
const PAST_GRACE: Duration = Duration::from_secs(31);

async fn start(versioning: bool) -> (TestServer, Client, String) {
    // (On PostgreSQL too, with STOWAGE_TEST_POSTGRES set.)
    let server = match versioning {
        true => TestServer::start_with_versioning().await,
        false => TestServer::start().await,
    };
    let c = server.client();
    let ctr = unique("ver");
    c.create_container(&ctr).await;
    (server, c, ctr)
}

/// Turns blob soft delete on for `days`.
async fn soft_delete(c: &Client, days: u32, allow_permanent: bool) {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>\
         <DeleteRetentionPolicy><Enabled>true</Enabled><Days>{days}</Days>\
         <AllowPermanentDelete>{allow_permanent}</AllowPermanentDelete>\
         </DeleteRetentionPolicy></StorageServiceProperties>"
    );
    let r = c
        .put("/?restype=service&comp=properties")
        .body(body)
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

fn version_id(r: &Response) -> String {
    r.header("x-ms-version-id")
        .unwrap_or_else(|| panic!("no x-ms-version-id: {} {}", r.status, r.text()))
}

async fn put(c: &Client, ctr: &str, blob: &str, data: &[u8]) -> Response {
    let r = c.put_blob(ctr, blob, data).await;
    assert_eq!(r.status, 201, "{}", r.text());
    r
}

async fn collect_all(server: &TestServer) -> usize {
    let mut total = 0;
    loop {
        match server.store.collect_garbage().await.expect("collect") {
            0 => return total,
            n => total += n,
        }
    }
}

#[tokio::test]
async fn every_content_write_makes_a_version_and_old_ones_stay_readable() {
    let (server, c, ctr) = start(true).await;
    let v1 = version_id(&put(&c, &ctr, "b", b"one").await);
    let v2 = version_id(&put(&c, &ctr, "b", b"two").await);
    assert_ne!(v1, v2);
    assert!(v1.ends_with('Z') && v1.len() == 28, "{v1}");

    let old = c.get(&format!("/{ctr}/b?versionid={v1}")).send().await;
    assert_eq!(old.status, 200, "{}", old.text());
    assert_eq!(&old.body[..], b"one");
    assert_eq!(old.header("x-ms-version-id").as_deref(), Some(v1.as_str()));
    assert_eq!(
        old.header("x-ms-is-current-version").as_deref(),
        Some("false")
    );
    let cur = c.get(&format!("/{ctr}/b")).send().await;
    assert_eq!(&cur.body[..], b"two");
    assert_eq!(cur.header("x-ms-version-id").as_deref(), Some(v2.as_str()));
    assert_eq!(
        cur.header("x-ms-is-current-version").as_deref(),
        Some("true")
    );
    let head = c.head(&format!("/{ctr}/b?versionid={v1}")).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length").as_deref(), Some("3"));

    // Set Blob Metadata makes a version; Set Blob Properties does not.
    let r = c
        .put(&format!("/{ctr}/b?comp=metadata"))
        .header("x-ms-meta-k", "v")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v3 = version_id(&r);
    assert!(v3 != v2 && v3 != v1);
    let r = c
        .put(&format!("/{ctr}/b?comp=properties"))
        .header("x-ms-blob-content-type", "text/plain")
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-ms-version-id"), None);

    // Put Block List and Copy Blob make versions too.
    let block = "YmxvY2sx";
    let r = c
        .put(&format!("/{ctr}/b?comp=block&blockid={block}"))
        .body(&b"three"[..])
        .send()
        .await;
    assert_eq!(r.status, 201);
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .body(format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><Latest>{block}</Latest></BlockList>"
        ))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v4 = version_id(&r);

    // A version is a copy source: copying it over the blob promotes it.
    let r = c
        .put(&format!("/{ctr}/b"))
        .header(
            "x-ms-copy-source",
            &format!("{}/devstoreaccount1/{ctr}/b?versionid={v1}", server.base),
        )
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let v5 = version_id(&r);
    assert_eq!(&c.get(&format!("/{ctr}/b")).send().await.body[..], b"one");

    let listed = list(&c, &ctr, "&include=versions").await;
    let ids: Vec<&str> = elements(&listed, "VersionId");
    for v in [&v1, &v2, &v3, &v4, &v5] {
        assert!(ids.contains(&v.as_str()), "{v} in {listed}");
    }
    assert_eq!(elements(&listed, "IsCurrentVersion"), ["true"]);
    assert_eq!(blob_entries(&listed).len(), 5);
    // Without include=versions only the current one is listed.
    let plain = list(&c, &ctr, "").await;
    assert_eq!(blob_entries(&plain).len(), 1);
    assert!(elements(&plain, "VersionId").is_empty(), "{plain}");

    // An unknown version is not found.
    c.get(&format!("/{ctr}/b?versionid=2020-01-01T00:00:00.0000000Z"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn deleting_the_current_version_leaves_the_previous_ones() {
    let (_server, c, ctr) = start(true).await;
    let v1 = version_id(&put(&c, &ctr, "b", b"one").await);
    let v2 = version_id(&put(&c, &ctr, "b", b"two").await);
    let r = c.delete(&format!("/{ctr}/b")).send().await;
    assert_eq!(r.status, 202);
    assert_eq!(
        r.header("x-ms-delete-type-permanent").as_deref(),
        Some("false")
    );
    c.get(&format!("/{ctr}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let listed = list(&c, &ctr, "&include=versions").await;
    assert_eq!(elements(&listed, "VersionId"), [v1.as_str(), v2.as_str()]);
    assert!(elements(&listed, "IsCurrentVersion").is_empty(), "{listed}");
    let r = c.get(&format!("/{ctr}/b?versionid={v2}")).send().await;
    assert_eq!(&r.body[..], b"two");

    // Deleting a previous version by id removes it (no soft delete here).
    let r = c.delete(&format!("/{ctr}/b?versionid={v1}")).send().await;
    assert_eq!(r.status, 202);
    assert_eq!(
        r.header("x-ms-delete-type-permanent").as_deref(),
        Some("true")
    );
    c.get(&format!("/{ctr}/b?versionid={v1}"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let listed = list(&c, &ctr, "&include=versions").await;
    assert_eq!(elements(&listed, "VersionId"), [v2.as_str()]);
}

#[tokio::test]
async fn a_soft_deleted_blob_and_its_snapshots_are_listed_and_undeleted() {
    let (_server, c, ctr) = start(false).await;
    soft_delete(&c, 3, false).await;
    put(&c, &ctr, "b", b"kept").await;
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    assert_eq!(r.status, 201);
    let snapshot = r.header("x-ms-snapshot").expect("snapshot id");

    let r = c
        .delete(&format!("/{ctr}/b"))
        .header("x-ms-delete-snapshots", "include")
        .send()
        .await;
    assert_eq!(r.status, 202);
    assert_eq!(
        r.header("x-ms-delete-type-permanent").as_deref(),
        Some("false")
    );
    c.get(&format!("/{ctr}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    assert_eq!(
        blob_entries(&list(&c, &ctr, "&include=snapshots").await).len(),
        0
    );

    let listed = list(&c, &ctr, "&include=deleted,snapshots").await;
    let entries = blob_entries(&listed);
    assert_eq!(entries.len(), 2, "{listed}");
    assert_eq!(elements(&listed, "Deleted"), ["true", "true"]);
    assert_eq!(elements(&listed, "RemainingRetentionDays"), ["3", "3"]);
    assert_eq!(elements(&listed, "DeletedTime").len(), 2);
    assert!(entries.iter().any(|e| e.1.as_deref() == Some(&snapshot)));

    let r = c.put(&format!("/{ctr}/b?comp=undelete")).send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(&c.get(&format!("/{ctr}/b")).send().await.body[..], b"kept");
    let r = c.get(&format!("/{ctr}/b?snapshot={snapshot}")).send().await;
    assert_eq!(&r.body[..], b"kept");
    let listed = list(&c, &ctr, "&include=deleted,snapshots").await;
    assert!(elements(&listed, "Deleted").is_empty(), "{listed}");

    // Undelete of a name with nothing to restore.
    c.put(&format!("/{ctr}/none?comp=undelete"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn an_overwrite_under_soft_delete_keeps_a_soft_deleted_snapshot() {
    let (_server, c, ctr) = start(false).await;
    soft_delete(&c, 1, false).await;
    put(&c, &ctr, "b", b"first").await;
    put(&c, &ctr, "b", b"second").await;
    let listed = list(&c, &ctr, "&include=deleted,snapshots").await;
    let entries = blob_entries(&listed);
    assert_eq!(entries.len(), 2, "{listed}");
    let snapshot = entries
        .iter()
        .find_map(|e| e.1.clone())
        .expect("a soft-deleted snapshot");
    // Undelete brings it back as a snapshot; the blob keeps its content.
    let r = c.put(&format!("/{ctr}/b?comp=undelete")).send().await;
    assert_eq!(r.status, 200);
    let r = c.get(&format!("/{ctr}/b?snapshot={snapshot}")).send().await;
    assert_eq!(&r.body[..], b"first");
    assert_eq!(
        &c.get(&format!("/{ctr}/b")).send().await.body[..],
        b"second"
    );
}

#[tokio::test]
async fn permanent_delete_needs_the_policy_and_a_soft_deleted_snapshot() {
    let (_server, c, ctr) = start(false).await;
    soft_delete(&c, 2, false).await;
    put(&c, &ctr, "b", b"x").await;
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    let snapshot = r.header("x-ms-snapshot").expect("snapshot id");
    let r = c
        .delete(&format!("/{ctr}/b?snapshot={snapshot}"))
        .send()
        .await;
    assert_eq!(r.status, 202);
    let permanent = format!("/{ctr}/b?snapshot={snapshot}&deletetype=permanent");
    c.delete(&permanent)
        .send()
        .await
        .assert_error(409, "OperationNotAllowed");
    soft_delete(&c, 2, true).await;
    let r = c.delete(&permanent).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(
        r.header("x-ms-delete-type-permanent").as_deref(),
        Some("true")
    );
    let listed = list(&c, &ctr, "&include=deleted,snapshots").await;
    assert_eq!(blob_entries(&listed).len(), 1, "only the blob: {listed}");
    c.delete(&format!("/{ctr}/b?deletetype=never"))
        .send()
        .await
        .assert_error(400, "InvalidQueryParameterValue");
}

#[tokio::test]
async fn permanent_delete_takes_only_soft_deleted_versions_and_snapshots() {
    let (_server, c, ctr) = start(true).await;
    soft_delete(&c, 2, true).await;
    let v1 = version_id(&put(&c, &ctr, "b", b"one").await);
    let v2 = version_id(&put(&c, &ctr, "b", b"two").await);
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    let snapshot = r.header("x-ms-snapshot").expect("snapshot id");
    // Live: a previous version and a snapshot that are not soft-deleted.
    for q in [format!("versionid={v1}"), format!("snapshot={snapshot}")] {
        c.delete(&format!("/{ctr}/b?{q}&deletetype=permanent"))
            .send()
            .await
            .assert_error(409, "BlobSnapshotNotSoftDeleted");
    }
    // The current version is deleted through the blob only, permanently
    // or not.
    let current = c.head(&format!("/{ctr}/b")).send().await;
    let current = version_id(&current);
    assert_ne!(current, v2, "the snapshot made a new current version");
    for q in ["", "&deletetype=permanent"] {
        c.delete(&format!("/{ctr}/b?versionid={current}{q}"))
            .send()
            .await
            .assert_error(403, "OperationNotAllowedOnRootBlob");
    }
    // Soft-deleted first, then permanently.
    for q in [format!("versionid={v1}"), format!("snapshot={snapshot}")] {
        let r = c.delete(&format!("/{ctr}/b?{q}")).send().await;
        assert_eq!(r.status, 202, "{}", r.text());
        let r = c
            .delete(&format!("/{ctr}/b?{q}&deletetype=permanent"))
            .send()
            .await;
        assert_eq!(r.status, 202, "{q}: {}", r.text());
        assert_eq!(
            r.header("x-ms-delete-type-permanent").as_deref(),
            Some("true")
        );
    }
    let listed = list(&c, &ctr, "&include=versions,snapshots,deleted").await;
    assert_eq!(
        elements(&listed, "VersionId"),
        [v2.as_str(), current.as_str()],
        "{listed}"
    );
    assert!(elements(&listed, "Snapshot").is_empty(), "{listed}");
}

#[tokio::test]
async fn a_snapshot_of_a_versioned_blob_makes_a_new_version() {
    let (_server, c, ctr) = start(true).await;
    let v1 = version_id(&put(&c, &ctr, "b", b"one").await);
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    let snapshot = r.header("x-ms-snapshot").expect("snapshot id");
    let v2 = version_id(&r);
    assert_ne!(v1, v2);
    let r = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(version_id(&r), v2, "the new version is the current one");
    assert_eq!(r.header("x-ms-is-current-version").as_deref(), Some("true"));
    for q in [format!("versionid={v1}"), format!("snapshot={snapshot}")] {
        let r = c.get(&format!("/{ctr}/b?{q}")).send().await;
        assert_eq!(&r.body[..], b"one", "{q}");
    }
    let listed = list(&c, &ctr, "&include=versions,snapshots").await;
    assert_eq!(elements(&listed, "Snapshot"), [snapshot.as_str()]);
    assert_eq!(
        elements(&listed, "VersionId"),
        [v1.as_str(), v2.as_str()],
        "{listed}"
    );

    // Without versioning a snapshot answers no version id.
    let (_server, c, ctr) = start(false).await;
    put(&c, &ctr, "b", b"one").await;
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    assert_eq!(r.status, 201);
    assert_eq!(r.header("x-ms-version-id"), None);
}

#[tokio::test]
async fn retention_days_are_checked() {
    let (_server, c, _ctr) = start(false).await;
    for days in [0, 366] {
        let body = format!(
            "<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled>\
             <Days>{days}</Days></DeleteRetentionPolicy></StorageServiceProperties>"
        );
        c.put("/?restype=service&comp=properties")
            .body(body)
            .send()
            .await
            .assert_error(400, "InvalidXmlNodeValue");
    }
}

#[tokio::test]
async fn at_the_end_of_retention_soft_deleted_blobs_are_purged_and_collected() {
    let (server, c, ctr) = start(false).await;
    soft_delete(&c, 1, false).await;
    put(&c, &ctr, "b", &vec![7u8; 100_000]).await;
    let r = c.delete(&format!("/{ctr}/b")).send().await;
    assert_eq!(r.status, 202);
    server.clock.advance(DAY - Duration::from_secs(1));
    assert_eq!(collect_all(&server).await, 0);
    let listed = list(&c, &ctr, "&include=deleted").await;
    assert_eq!(elements(&listed, "RemainingRetentionDays"), ["1"]);
    server.clock.advance(Duration::from_secs(2));
    // The purge makes the extent garbage; it goes after the grace period.
    assert_eq!(collect_all(&server).await, 0);
    assert_eq!(
        blob_entries(&list(&c, &ctr, "&include=deleted").await).len(),
        0
    );
    c.put(&format!("/{ctr}/b?comp=undelete"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    server.clock.advance(PAST_GRACE);
    assert_eq!(collect_all(&server).await, 1);
    assert!(extent_files(&server).is_empty());
}

/// The SQLite file of the metadata; `None` in cluster mode (the metadata
/// is in PostgreSQL, whose space its autovacuum manages).
fn metadata_file(server: &TestServer) -> Option<std::path::PathBuf> {
    Some(server.data_dir().join("metadata.sqlite")).filter(|f| f.exists())
}

/// The metadata database's committed size in bytes (pages times page size).
fn database_bytes(file: &std::path::Path) -> u64 {
    let db =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("metadata database");
    let pages: i64 = db
        .pragma_query_value(None, "page_count", |r| r.get(0))
        .expect("page count");
    let size: i64 = db
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .expect("page size");
    (pages * size) as u64
}

/// Sums the sizes of the files under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("entry");
        let meta = entry.metadata().expect("metadata");
        total += match meta.is_dir() {
            true => dir_bytes(&entry.path()),
            false => meta.len(),
        };
    }
    total
}

/// The storage test of issue 21: a thousand blobs written, overwritten and
/// deleted (with their versions) under versioning and soft delete; after
/// the retention period and the grace period, nothing of them is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_versioned_soft_deleted_blobs_leave_nothing_after_retention() {
    const BLOBS: usize = 1000;
    let (server, c, ctr) = start(true).await;
    soft_delete(&c, 1, false).await;
    // Settle the first writes of the database before measuring.
    collect_all(&server).await;
    let start_extents = extent_files(&server).len();
    let start_objects = dir_bytes(&server.data_dir().join("objects"));
    let start_db = metadata_file(&server).map(|f| database_bytes(&f));
    futures::stream::iter(0..BLOBS)
        .map(|i| {
            let (c, ctr) = (c.clone(), ctr.clone());
            async move {
                let name = format!("blob-{i:04}");
                // Every tenth blob is large enough for an extent file.
                let size = if i % 10 == 0 { 80_000 } else { 100 + i };
                let v1 = version_id(&put(&c, &ctr, &name, &vec![1u8; size]).await);
                let v2 = version_id(&put(&c, &ctr, &name, &vec![2u8; size]).await);
                let r = c.delete(&format!("/{ctr}/{name}")).send().await;
                assert_eq!(r.status, 202);
                for v in [v1, v2] {
                    let r = c
                        .delete(&format!("/{ctr}/{name}?versionid={v}"))
                        .send()
                        .await;
                    assert_eq!(r.status, 202, "{}", r.text());
                }
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let listed = list(&c, &ctr, "&include=versions,deleted&maxresults=5000").await;
    assert_eq!(blob_entries(&listed).len(), 2 * BLOBS);
    assert_eq!(extent_files(&server).len(), start_extents + 2 * BLOBS);

    // Nothing goes before the retention period ends.
    server.clock.advance(PAST_GRACE);
    assert_eq!(collect_all(&server).await, 0);
    server.clock.advance(DAY);
    collect_all(&server).await;
    server.clock.advance(PAST_GRACE);
    collect_all(&server).await;
    let listed = list(&c, &ctr, "&include=versions,deleted,snapshots").await;
    assert!(listed.contains("<Blobs />"), "{listed}");
    assert_eq!(extent_files(&server).len(), start_extents);
    assert_eq!(
        dir_bytes(&server.data_dir().join("objects")),
        start_objects,
        "the object directory is back at its starting size"
    );
    // On PostgreSQL the listing above (every version, deleted blob and
    // snapshot) and the extents stand for the rows.
    if let (Some(file), Some(start_db)) = (metadata_file(&server), start_db) {
        assert_eq!(
            database_bytes(&file),
            start_db,
            "the metadata database is back at its starting size"
        );
        let rows: i64 = rusqlite::Connection::open(file)
            .expect("db")
            .query_row("SELECT COUNT(*) FROM blobs", [], |r| r.get(0))
            .expect("count");
        assert_eq!(rows, 0);
    }
}

/// Pages of one item walk every version, snapshot and soft-deleted row of
/// several names exactly once, in the order of the full listing.
#[tokio::test]
async fn paging_one_item_at_a_time_visits_every_version_once() {
    let (_server, c, ctr) = start(true).await;
    soft_delete(&c, 1, false).await;
    for name in ["a", "b", "c"] {
        for round in 0..3 {
            put(&c, &ctr, name, format!("{name}{round}").as_bytes()).await;
        }
    }
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    assert_eq!(r.status, 201);
    // A soft-deleted version of c, and a deleted current version of a.
    let listed = list(&c, &ctr, "&include=versions").await;
    let c_first = blob_entries(&listed)
        .into_iter()
        .find(|e| e.0 == "c")
        .map(|e| elements(&e.2, "VersionId")[0].to_owned())
        .expect("a version of c");
    let r = c
        .delete(&format!("/{ctr}/c?versionid={c_first}"))
        .send()
        .await;
    assert_eq!(r.status, 202);
    let r = c.delete(&format!("/{ctr}/a")).send().await;
    assert_eq!(r.status, 202);

    let query = "&include=versions,deleted,snapshots";
    let full = blob_entries(&list(&c, &ctr, query).await);
    // 9 versions, one snapshot and the version it made; the deleted
    // version of c is listed too.
    assert_eq!(full.len(), 11, "{full:?}");
    let mut paged = Vec::new();
    let mut marker = String::new();
    loop {
        let page = list(&c, &ctr, &format!("{query}&maxresults=1&marker={marker}")).await;
        paged.extend(blob_entries(&page));
        marker = elements(&page, "NextMarker")
            .first()
            .map(|m| (*m).to_owned())
            .unwrap_or_default();
        if marker.is_empty() {
            break;
        }
        assert!(paged.len() <= full.len(), "the pages do not end");
    }
    let key = |e: &(String, Option<String>, String)| {
        (
            e.0.clone(),
            e.1.clone(),
            elements(&e.2, "VersionId").first().map(|v| (*v).to_owned()),
        )
    };
    assert_eq!(
        paged.iter().map(key).collect::<Vec<_>>(),
        full.iter().map(key).collect::<Vec<_>>()
    );
}

/// Versions, soft-deleted blobs and their retention survive a restart; the
/// retention keeps counting from the deletion.
#[tokio::test]
async fn versions_and_soft_deleted_blobs_survive_a_restart() {
    let (server, c, ctr) = start(true).await;
    soft_delete(&c, 2, false).await;
    let v1 = version_id(&put(&c, &ctr, "v", b"one").await);
    put(&c, &ctr, "v", b"two").await;
    put(&c, &ctr, "gone", b"kept").await;
    let r = c.put(&format!("/{ctr}/gone?comp=snapshot")).send().await;
    let snapshot = r.header("x-ms-snapshot").expect("snapshot id");
    let r = c
        .delete(&format!("/{ctr}/gone?snapshot={snapshot}"))
        .send()
        .await;
    assert_eq!(r.status, 202);
    let before = list(&c, &ctr, "&include=versions,deleted,snapshots").await;
    server.clock.advance(DAY);
    let server = server.restart().await;
    let c = server.client();
    let after = list(&c, &ctr, "&include=versions,deleted,snapshots").await;
    assert_eq!(blob_entries(&after).len(), blob_entries(&before).len());
    assert_eq!(elements(&after, "RemainingRetentionDays"), ["1"]);
    let r = c.get(&format!("/{ctr}/v?versionid={v1}")).send().await;
    assert_eq!(&r.body[..], b"one");
    let r = c.put(&format!("/{ctr}/gone?comp=undelete")).send().await;
    assert_eq!(r.status, 200);
    let r = c
        .get(&format!("/{ctr}/gone?snapshot={snapshot}"))
        .send()
        .await;
    assert_eq!(&r.body[..], b"kept");
}

/// The garbage rule with every kind of row sharing one extent: a snapshot,
/// a copy, a previous version and soft-deleted rows. The purge frees only
/// what nothing else names; the last reference going frees the rest.
#[tokio::test]
async fn purging_frees_only_extents_nothing_else_names() {
    let (server, c, ctr) = start(true).await;
    soft_delete(&c, 1, false).await;
    let first = vec![1u8; 100_000];
    let v1 = version_id(&put(&c, &ctr, "a", &first).await);
    let r = c.put(&format!("/{ctr}/a?comp=snapshot")).send().await;
    let snapshot = r.header("x-ms-snapshot").expect("snapshot id");
    // The snapshot made a version too.
    let v_snapshot = version_id(&r);
    let r = c
        .put(&format!("/{ctr}/copy"))
        .header(
            "x-ms-copy-source",
            &format!("{}/devstoreaccount1/{ctr}/a", server.base),
        )
        .send()
        .await;
    assert_eq!(r.status, 202);
    let v2 = version_id(&put(&c, &ctr, "a", &vec![2u8; 100_000]).await);
    assert_eq!(extent_files(&server).len(), 2);

    // Everything of "a" goes: the blob (a version now), its versions and
    // its snapshot, all soft-deleted.
    let r = c
        .delete(&format!("/{ctr}/a"))
        .header("x-ms-delete-snapshots", "include")
        .send()
        .await;
    assert_eq!(r.status, 202);
    for v in [&v1, &v_snapshot, &v2] {
        let r = c.delete(&format!("/{ctr}/a?versionid={v}")).send().await;
        assert_eq!(r.status, 202);
    }
    c.get(&format!("/{ctr}/a?snapshot={snapshot}"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    server.clock.advance(DAY + PAST_GRACE);
    collect_all(&server).await;
    server.clock.advance(PAST_GRACE);
    assert_eq!(
        collect_all(&server).await,
        1,
        "only the second content goes"
    );
    assert_eq!(extent_files(&server).len(), 1);
    let r = c.get(&format!("/{ctr}/copy")).send().await;
    assert!(r.body[..] == first[..], "the copy keeps the shared extent");

    // The copy is the last reference.
    let r = c.delete(&format!("/{ctr}/copy")).send().await;
    assert_eq!(r.status, 202);
    let listed = list(&c, &ctr, "&include=versions").await;
    let v = elements(&listed, "VersionId")[0].to_owned();
    let r = c.delete(&format!("/{ctr}/copy?versionid={v}")).send().await;
    assert_eq!(r.status, 202);
    server.clock.advance(DAY + PAST_GRACE);
    collect_all(&server).await;
    server.clock.advance(PAST_GRACE);
    assert_eq!(collect_all(&server).await, 1);
    assert!(extent_files(&server).is_empty());
}

/// What identifies each `<Blob>` of a listing: its name, then `s` and the
/// snapshot id, `v` and the version id (`*` after it for the current
/// version), `d` when deleted.
fn listing_keys(xml: &str) -> Vec<String> {
    blob_entries(xml)
        .into_iter()
        .map(|(name, snapshot, entry)| {
            let mut key = name;
            if let Some(s) = snapshot {
                key.push_str(&format!(" s{s}"));
            }
            if let Some(v) = elements(&entry, "VersionId").first() {
                key.push_str(&format!(" v{v}"));
            }
            if elements(&entry, "IsCurrentVersion").first() == Some(&"true") {
                key.push('*');
            }
            if elements(&entry, "Deleted").first() == Some(&"true") {
                key.push_str(" d");
            }
            key
        })
        .collect()
}

#[tokio::test]
async fn within_a_name_snapshots_come_first_then_versions_then_the_blob() {
    let (server, c, ctr) = start(true).await;
    soft_delete(&c, 2, false).await;
    let tick = || server.clock.advance(Duration::from_secs(1));
    let v1 = version_id(&put(&c, &ctr, "b", b"1").await);
    tick();
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    let s1 = r.header("x-ms-snapshot").expect("a snapshot id");
    // A snapshot of a versioned blob makes a version.
    let vs1 = version_id(&r);
    tick();
    let v2 = version_id(&put(&c, &ctr, "b", b"2").await);
    tick();
    let r = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    let s2 = r.header("x-ms-snapshot").expect("a snapshot id");
    let vs2 = version_id(&r);
    tick();
    let v3 = version_id(&put(&c, &ctr, "b", b"3").await);
    tick();
    put(&c, &ctr, "c", b"c").await;
    // The older snapshot and the middle version soft-deleted.
    for q in [format!("snapshot={s1}"), format!("versionid={v2}")] {
        let r = c.delete(&format!("/{ctr}/b?{q}")).send().await;
        assert_eq!(r.status, 202, "{}", r.text());
    }
    let c_version = version_id(&c.head(&format!("/{ctr}/c")).send().await);

    let query = "&include=snapshots,versions,deleted";
    let listed = list(&c, &ctr, query).await;
    let expected = vec![
        format!("b s{s1} d"),
        format!("b s{s2}"),
        format!("b v{v1}"),
        format!("b v{vs1}"),
        format!("b v{v2} d"),
        format!("b v{vs2}"),
        format!("b v{v3}*"),
        format!("c v{c_version}*"),
    ];
    assert_eq!(listing_keys(&listed), expected, "{listed}");
    // Page by page, one entry each, the same order.
    let mut paged = Vec::new();
    let mut marker = String::new();
    loop {
        let page = list(&c, &ctr, &format!("{query}&maxresults=1&marker={marker}")).await;
        paged.extend(listing_keys(&page));
        marker = elements(&page, "NextMarker")
            .first()
            .map(|m| (*m).to_owned())
            .unwrap_or_default();
        if marker.is_empty() {
            break;
        }
        assert!(paged.len() <= expected.len(), "the pages do not end");
    }
    assert_eq!(paged, expected);
    // Without deleted ones, and without versions.
    assert_eq!(
        listing_keys(&list(&c, &ctr, "&include=snapshots,versions").await),
        [1, 2, 3, 5, 6, 7].map(|i| expected[i].clone())
    );
    assert_eq!(
        listing_keys(&list(&c, &ctr, "&include=snapshots").await),
        [format!("b s{s2}"), "b".to_owned(), "c".to_owned()]
    );
}

#[tokio::test]
async fn deletedwithversions_lists_a_deleted_blob_once_as_its_newest_version() {
    let (server, c, ctr) = start(true).await;
    put(&c, &ctr, "gone", b"first").await;
    server.clock.advance(Duration::from_secs(1));
    let newest = put(&c, &ctr, "gone", b"second").await;
    let newest_id = version_id(&newest);
    put(&c, &ctr, "live", b"here").await;
    let r = c.delete(&format!("/{ctr}/gone")).send().await;
    assert_eq!(r.status, 202);

    // Without the option, only the live blob.
    let listed = list(&c, &ctr, "").await;
    assert_eq!(listing_keys(&listed), ["live"]);
    // With it, the deleted name once, marked, with its newest version's
    // properties (and no VersionId without include=versions).
    let listed = list(&c, &ctr, "&include=deletedwithversions").await;
    let entries = blob_entries(&listed);
    assert_eq!(listing_keys(&listed), ["gone", "live"], "{listed}");
    assert_eq!(elements(&entries[0].2, "HasVersionsOnly"), ["true"]);
    assert_eq!(
        elements(&entries[0].2, "Etag"),
        [newest.etag().trim_matches('"')]
    );
    assert_eq!(elements(&entries[0].2, "Content-Length"), ["6"]);
    assert!(elements(&entries[1].2, "HasVersionsOnly").is_empty());
    // With versions listed, every version is, and none is marked.
    let listed = list(&c, &ctr, "&include=versions,deletedwithversions").await;
    assert_eq!(blob_entries(&listed).len(), 3, "{listed}");
    assert!(elements(&listed, "HasVersionsOnly").is_empty(), "{listed}");
    // A one-entry page each: the marked entry is one entry.
    let page = list(&c, &ctr, "&include=deletedwithversions&maxresults=1").await;
    assert_eq!(listing_keys(&page), ["gone"]);
    let marker = elements(&page, "NextMarker")[0].to_owned();
    let page = list(
        &c,
        &ctr,
        &format!("&include=deletedwithversions&maxresults=1&marker={marker}"),
    )
    .await;
    assert_eq!(listing_keys(&page), ["live"], "{page}");

    // The newest version deleted: the older one stands for the name.
    let r = c
        .delete(&format!("/{ctr}/gone?versionid={newest_id}"))
        .send()
        .await;
    assert_eq!(r.status, 202);
    let listed = list(&c, &ctr, "&include=deletedwithversions").await;
    let entries = blob_entries(&listed);
    assert_eq!(elements(&entries[0].2, "Content-Length"), ["5"], "{listed}");
    // A name whose blob is back is listed as the blob.
    put(&c, &ctr, "gone", b"again").await;
    let listed = list(&c, &ctr, "&include=deletedwithversions").await;
    assert!(elements(&listed, "HasVersionsOnly").is_empty(), "{listed}");
    assert_eq!(listing_keys(&listed), ["gone", "live"]);
}
