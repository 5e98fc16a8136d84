//! Copies from other hosts in the engine: the pending destination, progress,
//! completion, failure, abort, a copy overwritten while it runs, and a
//! restart that interrupts one.

mod support;

use std::sync::Arc;

use stowage_blobstore::*;
use support::*;

fn copy_input(c: &str, b: &str, size: u64) -> RemoteCopyInput {
    RemoteCopyInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        kind: CopiedType::Block,
        source_header: "http://elsewhere.test/data.bin".to_owned(),
        metadata: metadata(&[("kept", "1")]),
        content: ContentProperties {
            content_type: Some("text/csv".to_owned()),
            ..ContentProperties::default()
        },
        size,
        conditions: Conditions::default(),
        lease_id: None,
        access_tier: None,
        tags: Default::default(),
        expected_md5: None,
    }
}

async fn copy_of(store: &Store, c: &str, b: &str) -> (BlobProperties, CopyProperties) {
    let p = store.get_blob_properties(get_input(c, b)).await.unwrap();
    let copy = p.copy.clone().expect("copy properties");
    (p, copy)
}

async fn open(dir: &std::path::Path, clock: Arc<ManualClock>) -> Store {
    Store::open(StoreConfig::at(dir), clock).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_is_pending_with_no_bytes_then_completes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let data = vec![7u8; 100_000];
    let (out, job) = store
        .begin_remote_copy(copy_input("rcopy", "b", data.len() as u64))
        .await
        .unwrap();
    assert!(out.pending);
    let (p, copy) = copy_of(&store, "rcopy", "b").await;
    assert_eq!((p.size, copy.status_str()), (0, "pending"));
    assert_eq!(copy.progress, "0/100000");
    assert_eq!(p.metadata, metadata(&[("kept", "1")]));
    assert!(store.record_copy_progress(&job, 4000).await.unwrap());
    assert_eq!(
        copy_of(&store, "rcopy", "b").await.1.progress,
        "4000/100000"
    );

    let bytes = store
        .write_copied_bytes(body(&data), data.len() as u64, None)
        .await
        .unwrap();
    assert!(store.complete_remote_copy(&job, bytes).await.unwrap());
    let (p, copy) = copy_of(&store, "rcopy", "b").await;
    assert_eq!((p.size, copy.status_str()), (100_000, "success"));
    assert_eq!(copy.progress, "100000/100000");
    assert_eq!(copy.id, out.copy_id);
    assert_ne!(
        p.version.etag, out.version.etag,
        "the bytes are a new version"
    );
    assert_eq!(p.content.content_type.as_deref(), Some("text/csv"));
    assert_eq!(get(&store, "rcopy", "b").await, data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_keeps_the_sources_page_or_append_type() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let page = CopiedType::Page { sequence_number: 7 };
    let append = CopiedType::Append {
        committed_block_count: 3,
        sealed: false,
    };
    // (blob, type, length): small ones are inline extents, large ones files.
    let cases = [
        ("p-small", page, 4096),
        ("p-large", page, 1024 * 1024),
        ("p-empty", page, 0),
        ("a-small", append, 1000),
        ("a-large", append, 600_000),
    ];
    for (name, kind, len) in cases {
        let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8 + 1).collect();
        let input = RemoteCopyInput {
            kind,
            ..copy_input("rcopy", name, len as u64)
        };
        let (_, job) = store.begin_remote_copy(input).await.unwrap();
        let (p, _) = copy_of(&store, "rcopy", name).await;
        assert_eq!((p.blob_type, p.size), (kind.blob_type(), 0), "{name}");
        let bytes = store
            .write_copied_bytes(body(&data), len as u64, None)
            .await
            .unwrap();
        assert!(store.complete_remote_copy(&job, bytes).await.unwrap());
        let (p, copy) = copy_of(&store, "rcopy", name).await;
        assert_eq!(copy.status_str(), "success", "{name}");
        assert_eq!(
            (p.blob_type, p.size),
            (kind.blob_type(), len as u64),
            "{name}"
        );
        assert_eq!(get(&store, "rcopy", name).await, data, "{name}");
        match kind {
            CopiedType::Page { .. } => {
                assert_eq!(p.page.map(|pp| pp.sequence_number), Some(7), "{name}");
            }
            _ => assert_eq!(p.committed_block_count, Some(3), "{name}"),
        }
    }
    // An existing destination of another type is refused.
    put(&store, "rcopy", "block", b"x").await;
    let input = RemoteCopyInput {
        kind: page,
        ..copy_input("rcopy", "block", 512)
    };
    let refused = store.begin_remote_copy(input).await;
    assert!(
        matches!(refused, Err(Error::InvalidBlobType)),
        "{refused:?}"
    );
}

/// Every file under the store's extents (staging files included).
fn extent_files(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(extent_files(&e.path()));
        } else if e.path().components().any(|c| c.as_os_str() == "extents") {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_copy_takes_the_sources_md5_and_leaves_nothing_when_cut() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let len = data.len() as u64;
    // The source's Content-MD5 is taken as it is, not computed.
    let source_md5 = [9u8; 16];
    let (_, job) = store
        .begin_remote_copy(copy_input("rcopy", "b", len))
        .await
        .unwrap();
    let chunks = data
        .chunks(70_000)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)));
    let bytes = store
        .write_copied_bytes(futures::stream::iter(chunks), len, Some(source_md5))
        .await
        .unwrap();
    assert_eq!(bytes.md5(), source_md5);
    assert!(store.complete_remote_copy(&job, bytes).await.unwrap());
    let (p, copy) = copy_of(&store, "rcopy", "b").await;
    assert_eq!((p.size, copy.status_str()), (len, "success"));
    assert_eq!(p.content.content_md5.as_deref(), Some(&source_md5[..]));
    assert_eq!(get(&store, "rcopy", "b").await, data);
    let before = extent_files(dir.path());
    assert_eq!(before.len(), 1, "{before:?}");

    // A body that breaks off leaves no file, not even a staging one.
    let (_, job) = store
        .begin_remote_copy(copy_input("rcopy", "c", len))
        .await
        .unwrap();
    let cut = data[..2_000_000]
        .chunks(70_000)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .chain([Err(std::io::Error::other("reset"))]);
    let failed = store
        .write_copied_bytes(futures::stream::iter(cut), len, Some(source_md5))
        .await;
    assert!(matches!(failed, Err(Error::Body(_))), "{failed:?}");
    store
        .fail_remote_copy(&job, "cut".to_owned())
        .await
        .unwrap();
    assert_eq!(extent_files(dir.path()), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_copy_keeps_no_bytes_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let (_, job) = store
        .begin_remote_copy(copy_input("rcopy", "b", 10))
        .await
        .unwrap();
    let short = store.write_copied_bytes(body(b"12345"), 10, None).await;
    assert!(matches!(short, Err(Error::BodyLengthMismatch { .. })));
    store
        .fail_remote_copy(&job, "500 InternalError \"cut\"".to_owned())
        .await
        .unwrap();
    let (p, copy) = copy_of(&store, "rcopy", "b").await;
    assert_eq!((p.size, copy.status_str()), (0, "failed"));
    assert_eq!(
        copy.description.as_deref(),
        Some("500 InternalError \"cut\"")
    );
    assert!(!store.record_copy_progress(&job, 5).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_needs_the_pending_copys_id_and_drops_late_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let (c, b) = (container("rcopy"), blob("b"));
    let (out, job) = store
        .begin_remote_copy(copy_input("rcopy", "b", 3))
        .await
        .unwrap();
    let wrong = store
        .abort_copy_blob(ACCOUNT, &c, &b, None, "not-this-copy")
        .await;
    assert!(matches!(wrong, Err(Error::CopyIdMismatch)), "{wrong:?}");
    store
        .abort_copy_blob(ACCOUNT, &c, &b, None, &out.copy_id)
        .await
        .unwrap();
    let (p, copy) = copy_of(&store, "rcopy", "b").await;
    assert_eq!((p.size, copy.status_str()), (0, "aborted"));
    assert_eq!(p.metadata, metadata(&[("kept", "1")]));
    let again = store
        .abort_copy_blob(ACCOUNT, &c, &b, None, &out.copy_id)
        .await;
    assert!(
        matches!(again, Err(Error::NoPendingCopyOperation)),
        "{again:?}"
    );
    // Bytes that arrive after the abort are not kept.
    let bytes = store
        .write_copied_bytes(body(b"abc"), 3, None)
        .await
        .unwrap();
    assert!(!store.complete_remote_copy(&job, bytes).await.unwrap());
    assert_eq!(
        copy_of(&store, "rcopy", "b").await.1.status_str(),
        "aborted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_over_a_pending_copy_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let (_, job) = store
        .begin_remote_copy(copy_input("rcopy", "b", 3))
        .await
        .unwrap();
    put(&store, "rcopy", "b", b"mine").await;
    assert!(!store.record_copy_progress(&job, 1).await.unwrap());
    let bytes = store
        .write_copied_bytes(body(b"abc"), 3, None)
        .await
        .unwrap();
    assert!(!store.complete_remote_copy(&job, bytes).await.unwrap());
    assert_eq!(get(&store, "rcopy", "b").await, b"mine");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_ends_a_pending_copy_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = open(dir.path(), clock.clone()).await;
    create_container(&store, "rcopy").await;
    store
        .begin_remote_copy(copy_input("rcopy", "b", 3))
        .await
        .unwrap();
    drop(store);
    let store = open(dir.path(), clock).await;
    let (p, copy) = copy_of(&store, "rcopy", "b").await;
    assert_eq!((p.size, copy.status_str()), (0, "failed"));
    assert_eq!(copy.description.as_deref(), Some(INTERRUPTED_COPY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_destination_is_removed_before_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = open(dir.path(), clock.clone()).await;
    create_container(&store, "rcopy").await;
    let expiring = |b: &str| SetBlobExpiryInput {
        account: ACCOUNT.to_owned(),
        container: container("rcopy"),
        blob: blob(b),
        option: ExpiryOption::RelativeToNow(std::time::Duration::from_secs(60)),
        lease_id: None,
    };
    let new_only = |b: &str, size| {
        let mut input = copy_input("rcopy", b, size);
        input.conditions.if_none_match = Some(EtagMatch::Any);
        input
    };
    for b in ["async", "sync"] {
        put(&store, "rcopy", b, b"old").await;
        store.set_blob_expiry(expiring(b)).await.unwrap();
        // Before its time the blob is there: a copy meant for a new blob
        // is refused.
        let refused = store.begin_remote_copy(new_only(b, 3)).await;
        assert!(matches!(refused, Err(Error::Condition(_))), "{refused:?}");
    }
    clock.advance(std::time::Duration::from_secs(60));

    let (_, job) = store.begin_remote_copy(new_only("async", 3)).await.unwrap();
    let bytes = store
        .write_copied_bytes(body(b"new"), 3, None)
        .await
        .unwrap();
    assert!(store.complete_remote_copy(&job, bytes).await.unwrap());
    store
        .copy_blob_from_stream(new_only("sync", 3), body(b"new"))
        .await
        .unwrap();
    for b in ["async", "sync"] {
        let (p, copy) = copy_of(&store, "rcopy", b).await;
        assert_eq!(copy.status_str(), "success", "{b}");
        assert_eq!(p.expires_on, None, "{b}: the copy does not expire");
        assert_eq!(get(&store, "rcopy", b).await, b"new", "{b}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_blob_copied_by_ranges_keeps_its_empty_pages_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    create_container(&store, "rcopy").await;
    let page = CopiedType::Page { sequence_number: 0 };
    let size = 4 * 1024 * 1024;
    // (blob, ranges): small and large extents, no ranges at all.
    let cases: [(&str, Vec<std::ops::Range<u64>>); 3] = [
        ("small", vec![0..512, 4096..5120]),
        ("large", vec![512..1024, 1024 * 1024..3 * 1024 * 1024]),
        ("empty", vec![]),
    ];
    for (name, ranges) in cases {
        let input = RemoteCopyInput {
            kind: page,
            ..copy_input("rcopy", name, size)
        };
        let (_, job) = store.begin_remote_copy(input).await.unwrap();
        let fetched: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        let data: Vec<u8> = (0..fetched).map(|i| (i % 251) as u8 + 1).collect();
        let bytes = store
            .write_copied_bytes(body(&data), fetched, None)
            .await
            .unwrap()
            .at_page_ranges(ranges.clone())
            .unwrap();
        assert!(store.complete_remote_copy(&job, bytes).await.unwrap());
        let (p, copy) = copy_of(&store, "rcopy", name).await;
        assert_eq!((p.size, copy.status_str()), (size, "success"), "{name}");
        assert_eq!(p.content.content_md5, None, "{name}: no MD5 of the blob");
        let listed = store
            .get_page_ranges(GetPageRangesInput {
                account: ACCOUNT.to_owned(),
                container: container("rcopy"),
                blob: blob(name),
                snapshot: None,
                range: None,
                prev_snapshot: None,
                conditions: Conditions::default(),
                lease_id: None,
                max_results: None,
                marker: None,
            })
            .await
            .unwrap();
        let got: Vec<_> = listed.ranges.iter().map(|r| r.range.clone()).collect();
        assert_eq!(got, ranges, "{name}");
        // The blob reads as the ranges' bytes in place, zeros elsewhere.
        let mut want = vec![0u8; size as usize];
        let mut at = 0;
        for r in &ranges {
            let n = (r.end - r.start) as usize;
            want[r.start as usize..r.end as usize].copy_from_slice(&data[at..at + n]);
            at += n;
        }
        assert!(get(&store, "rcopy", name).await == want, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_ranges_must_be_ordered_whole_pages_adding_up_to_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), Arc::new(ManualClock::new(epoch()))).await;
    let cases: [(Vec<std::ops::Range<u64>>, bool); 6] = [
        (vec![0..512, 1024..1536], true),
        (vec![1024..1536, 0..512], false),
        (vec![0..1024, 512..1024], false),
        (vec![0..500, 1024..1560], false),
        (std::iter::once(0..512).collect(), false),
        (vec![0..512, 512..512, 1024..1536], false),
    ];
    for (ranges, ok) in cases {
        let bytes = store
            .write_copied_bytes(body(&[1u8; 1024]), 1024, None)
            .await
            .unwrap();
        let got = bytes.at_page_ranges(ranges.clone());
        assert_eq!(got.is_ok(), ok, "{ranges:?}");
    }
}
