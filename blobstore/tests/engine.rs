//! Engine tests through [`Store`] directly, no HTTP (README.md#contributing).
//!
//! Every scenario is a function of a store and its clock; [`suite`] runs
//! them all, once on a real SQLite file with a `LocalFileSystem` in a
//! temporary directory and once on the in-memory pair (as garage's
//! `src/db/test.rs` runs one suite per adapter and object_store's
//! `integration.rs` holds functions every backend calls). Time comes from a
//! [`ManualClock`]; nothing sleeps.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use stowage_blobstore::{
    BlobType, ByteRange, ConditionFailure, Conditions, ContentProperties, CreateContainerInput,
    DeleteContainerInput, Error, EtagMatch, ListBlobsInput, ListContainersInput, ListingMarker,
    ManualClock, Metadata, ObjectsLocation, SetBlobMetadataInput, SetBlobPropertiesInput, Store,
    StoreConfig,
};

mod support;
use support::*;

// ---------------------------------------------------------------------------
// The two backends

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_suite_on_sqlite_file_and_local_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::at(dir.path().join("data")), clock.clone())
        .await
        .unwrap();
    suite(&store, &clock).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_suite_in_memory() {
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::in_memory(), clock.clone())
        .await
        .unwrap();
    suite(&store, &clock).await;
}

/// Metadata in a SQLite file, extents in another directory (`--objects
/// file:///shared/dir`, a directory several nodes can share).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_suite_on_sqlite_file_and_a_shared_directory() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data"))
        .with_objects(ObjectsLocation::Shared(dir.path().join("shared")));
    let store = Store::open(config, clock.clone()).await.unwrap();
    suite(&store, &clock).await;
}

/// Metadata in a SQLite file, extents in the object store that
/// `STOWAGE_TEST_OBJECTS` names (an `s3://…?endpoint=…` URL: scripts/test
/// starts a Garage cluster for it); without it there is nothing to test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_suite_on_sqlite_file_and_the_test_object_store() {
    let Some(objects) = test_objects() else {
        eprintln!("STOWAGE_TEST_OBJECTS is not set: no object store to test against");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data")).with_objects(objects);
    let store = Store::open(config, clock.clone()).await.unwrap();
    suite(&store, &clock).await;
}

/// A restart over remote extents keeps every blob, inline or not, and
/// leaves the data directory's own `objects/` empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_over_remote_extents_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut locations = vec![ObjectsLocation::Shared(dir.path().join("shared"))];
    locations.extend(test_objects());
    for (n, objects) in locations.into_iter().enumerate() {
        let data = dir.path().join(format!("data{n}"));
        let clock = Arc::new(ManualClock::new(epoch()));
        let config = StoreConfig::at(&data).with_objects(objects.clone());
        let store = Store::open(config.clone(), clock.clone()).await.unwrap();
        create_container(&store, "eng-remote").await;
        // Inline, one put, and a multipart upload (in 256 KiB parts on a
        // directory, in S3's 5 MiB minimum parts on S3).
        let sizes = [10, 100 * 1024, 700 * 1024, 11 * 1024 * 1024];
        for size in sizes {
            put(&store, "eng-remote", &format!("b{size}"), &pattern(size)).await;
        }
        drop(store);
        let store = Store::open(config, clock.clone()).await.unwrap();
        for size in sizes {
            let got = get(&store, "eng-remote", &format!("b{size}")).await;
            assert!(got == pattern(size), "{objects}: b{size} changed");
        }
        let local = std::fs::read_dir(data.join("objects")).unwrap().count();
        assert_eq!(local, 0, "{objects}: extents written to the data directory");
        // The admin commands refuse a data directory without its extents.
        let err = stowage_blobstore::admin::check(&data, false, &stowage_blobstore::admin::Quiet)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not in the data directory"), "{err}");
    }
    let shared = walk_files(&dir.path().join("shared"));
    assert_eq!(
        shared, 3,
        "the three large blobs' extents are in the shared directory"
    );
}

fn test_objects() -> Option<ObjectsLocation> {
    let url = std::env::var("STOWAGE_TEST_OBJECTS").ok()?;
    let location: ObjectsLocation = url.parse().expect("STOWAGE_TEST_OBJECTS");
    Some(location.with_prefix(&format!("engine-{}", std::process::id())))
}

fn walk_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk_files(&e.path())
            } else {
                1
            }
        })
        .sum()
}

/// Metadata in PostgreSQL (cluster mode), extents in a local directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_suite_on_postgres() {
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data")).with_metadata(url);
    let store = Store::open(config, clock.clone()).await.unwrap();
    suite(&store, &clock).await;
    drop(store);
    drop(pg);
}

/// On disk only: reopening sweeps extents no metadata references (what a
/// crash between writing bytes and committing leaves), keeps everything
/// committed, and hands out ETags above every stored one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_sweeps_orphan_extents_and_keeps_committed_data() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::at(&data_dir), clock.clone())
        .await
        .unwrap();
    create_container(&store, "eng-reopen").await;
    let before = put(&store, "eng-reopen", "b", b"committed").await;
    drop(store);

    let stray_dir = data_dir.join("objects/extents/ab");
    std::fs::create_dir_all(&stray_dir).unwrap();
    let stray = stray_dir.join(format!("ab{}", "0".repeat(30)));
    std::fs::write(&stray, b"never committed").unwrap();

    // The clock went back while the store was closed.
    clock.set(epoch() - Duration::from_secs(3600));
    let store = Store::open(StoreConfig::at(&data_dir), clock.clone())
        .await
        .unwrap();
    assert!(!stray.exists(), "the orphan was swept");
    assert_eq!(get(&store, "eng-reopen", "b").await, b"committed");
    let p = store
        .get_blob_properties(get_input("eng-reopen", "b"))
        .await
        .unwrap();
    assert_eq!(p.version, before.version);
    let after = put(&store, "eng-reopen", "c", b"new").await;
    assert!(
        after.version.etag.as_str() > before.version.etag.as_str(),
        "{} after {}",
        after.version.etag,
        before.version.etag
    );
}

/// Every scenario, in order; each uses its own container.
async fn suite(store: &Store, clock: &ManualClock) {
    containers_are_created_listed_and_deleted(store).await;
    container_errors(store).await;
    container_listing_pages(store).await;
    put_and_get_round_trip(store).await;
    ranges_resolve_against_the_size(store).await;
    an_overwrite_replaces_everything_but_creation_time(store, clock).await;
    attributes_are_replaced_and_versions_change(store).await;
    delete_blob_and_missing_blobs(store).await;
    md5_mismatch_stores_nothing(store).await;
    a_large_body_is_checked_against_its_md5(store).await;
    listing_with_delimiter_and_markers(store).await;
    markers_survive_deletion(store).await;
    two_writers_with_one_if_match_etag_one_wins(store).await;
    two_metadata_writers_with_one_if_match_etag_one_wins(store).await;
    concurrent_create_only_puts_one_wins(store).await;
    a_pinned_reader_gets_its_whole_version(store, clock).await;
    garbage_is_collected_after_the_grace_period(store, clock).await;
    a_rehydration_completes_when_its_delay_has_passed(store, clock).await;
}

// ---------------------------------------------------------------------------
// Containers

async fn containers_are_created_listed_and_deleted(store: &Store) {
    for n in ["eng-c-b", "eng-c-a", "eng-c-c"] {
        create_container(store, n).await;
    }
    let listed = store
        .list_containers(ListContainersInput {
            account: ACCOUNT.to_owned(),
            prefix: "eng-c-".to_owned(),
            marker: None,
            max_results: 5000,
            include_deleted: false,
        })
        .await
        .unwrap();
    let got: Vec<&str> = listed.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(got, ["eng-c-a", "eng-c-b", "eng-c-c"]);
    assert!(listed.next_marker.is_none());

    let props = store
        .get_container_properties(ACCOUNT, &container("eng-c-a"), None)
        .await
        .unwrap();
    assert_eq!(props.name, "eng-c-a");
    assert_eq!(props.default_encryption_scope, "$account-encryption-key");
    assert!(props.metadata.is_empty());

    put(store, "eng-c-b", "inside", b"bytes").await;
    store
        .delete_container(DeleteContainerInput {
            account: ACCOUNT.to_owned(),
            container: container("eng-c-b"),
            conditions: Conditions::default(),
            lease_id: None,
            retention: None,
        })
        .await
        .unwrap();
    let err = store
        .get_container_properties(ACCOUNT, &container("eng-c-b"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");
    // The name is free at once, and the new container is empty.
    create_container(store, "eng-c-b").await;
    let err = store
        .get_blob(get_input("eng-c-b", "inside"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
}

async fn container_errors(store: &Store) {
    create_container(store, "eng-cerr").await;
    let err = store
        .create_container(CreateContainerInput {
            account: ACCOUNT.to_owned(),
            container: container("eng-cerr"),
            metadata: Metadata::default(),
            public_access: None,
            default_encryption_scope: None,
            deny_encryption_scope_override: false,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContainerAlreadyExists), "{err:?}");
    let err = store
        .put_blob(put_input("eng-nosuch", "b", 1), body(b"x"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");
    let err = store
        .list_blobs(list_input("eng-nosuch"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");
    // Another account does not see this one's containers.
    let err = store
        .get_container_properties("otheraccount", &container("eng-cerr"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ContainerNotFound), "{err:?}");
}

async fn container_listing_pages(store: &Store) {
    let all: Vec<String> = (0..7).map(|i| format!("eng-page-{i}")).collect();
    for n in &all {
        create_container(store, n).await;
    }
    for size in [1, 2, 3, 7, 8] {
        let mut seen = Vec::new();
        let mut marker = None;
        loop {
            let out = store
                .list_containers(ListContainersInput {
                    account: ACCOUNT.to_owned(),
                    prefix: "eng-page-".to_owned(),
                    marker: marker.clone(),
                    max_results: size,
                    include_deleted: false,
                })
                .await
                .unwrap();
            assert!(out.containers.len() <= size);
            seen.extend(out.containers.into_iter().map(|c| c.name));
            match out.next_marker {
                Some(m) => marker = Some(m),
                None => break,
            }
        }
        assert_eq!(seen, all, "max_results {size}");
    }
}

// ---------------------------------------------------------------------------
// Blobs

async fn put_and_get_round_trip(store: &Store) {
    create_container(store, "eng-rt").await;
    for (name, data) in [
        ("empty", Vec::new()),
        ("small", b"hello".to_vec()),
        ("dir/sub/large", pattern(10 * 1024 * 1024 + 3)),
    ] {
        let out = put(store, "eng-rt", name, &data).await;
        let expected_md5: [u8; 16] = {
            use md5::Digest as _;
            md5::Md5::digest(&data).into()
        };
        assert_eq!(out.body_md5, expected_md5, "{name}");
        let got = store.get_blob(get_input("eng-rt", name)).await.unwrap();
        assert_eq!(got.properties.size, data.len() as u64, "{name}");
        assert_eq!(got.properties.version, out.version, "{name}");
        assert_eq!(got.properties.blob_type, BlobType::BlockBlob);
        assert_eq!(
            got.properties.content.content_md5,
            Some(expected_md5.to_vec())
        );
        assert!(got.range.is_none());
        assert!(read_all(got.body).await == data, "{name}: bytes");
    }
}

async fn ranges_resolve_against_the_size(store: &Store) {
    create_container(store, "eng-range").await;
    let data = pattern(100);
    put(store, "eng-range", "b", &data).await;
    put(store, "eng-range", "empty", b"").await;
    let r = |start, end| ByteRange { start, end };
    // (blob, range, expected bytes or None for InvalidRange)
    let cases: &[(&str, ByteRange, Option<std::ops::Range<usize>>)] = &[
        ("b", r(0, Some(9)), Some(0..10)),
        ("b", r(90, None), Some(90..100)),
        ("b", r(95, Some(1000)), Some(95..100)),
        ("b", r(0, Some(99)), Some(0..100)),
        ("b", r(99, Some(99)), Some(99..100)),
        ("b", r(100, None), None),
        ("b", r(100, Some(200)), None),
        ("empty", r(0, None), None),
        ("empty", r(0, Some(0)), None),
    ];
    for (name, range, expected) in cases {
        let mut input = get_input("eng-range", name);
        input.range = Some(*range);
        match (store.get_blob(input).await, expected) {
            (Ok(out), Some(want)) => {
                assert_eq!(
                    out.range,
                    Some(want.start as u64..want.end as u64),
                    "{range:?}"
                );
                assert_eq!(read_all(out.body).await, &data[want.clone()], "{range:?}");
            }
            (Err(Error::InvalidRange { size }), None) => {
                let expected_size = if *name == "empty" { 0 } else { 100 };
                assert_eq!(size, expected_size, "{name} {range:?}");
            }
            (other, _) => panic!("{name} {range:?}: {:?}", other.map(|o| o.range)),
        }
    }
}

async fn an_overwrite_replaces_everything_but_creation_time(store: &Store, clock: &ManualClock) {
    create_container(store, "eng-over").await;
    let mut first = put_input("eng-over", "b", 5);
    first.content.content_type = Some("text/plain".to_owned());
    first.metadata = metadata(&[("first", "1")]);
    let v1 = store.put_blob(first, body(b"first")).await.unwrap();
    clock.advance(Duration::from_secs(10));
    let mut second = put_input("eng-over", "b", 6);
    second.metadata = metadata(&[("second", "2")]);
    let v2 = store.put_blob(second, body(b"second")).await.unwrap();
    assert_ne!(v1.version.etag, v2.version.etag);
    assert!(v2.version.last_modified > v1.version.last_modified);
    let p = store
        .get_blob_properties(get_input("eng-over", "b"))
        .await
        .unwrap();
    assert_eq!(p.size, 6);
    assert_eq!(p.content.content_type, None);
    assert_eq!(p.metadata, metadata(&[("second", "2")]));
    assert_eq!(
        p.creation_time, v1.version.last_modified,
        "creation time kept"
    );
    assert_eq!(p.version, v2.version);
    assert_eq!(get(store, "eng-over", "b").await, b"second");
}

async fn attributes_are_replaced_and_versions_change(store: &Store) {
    create_container(store, "eng-attr").await;
    let mut input = put_input("eng-attr", "b", 4);
    input.content.content_language = Some("en".to_owned());
    input.metadata = metadata(&[("keep", "1")]);
    let v0 = store.put_blob(input, body(b"data")).await.unwrap().version;
    let v1 = store
        .set_blob_properties(SetBlobPropertiesInput {
            account: ACCOUNT.to_owned(),
            container: container("eng-attr"),
            blob: blob("b"),
            content: ContentProperties {
                content_type: Some("application/json".to_owned()),
                ..ContentProperties::default()
            },
            conditions: Conditions::default(),
            lease_id: None,
        })
        .await
        .unwrap();
    let p = store
        .get_blob_properties(get_input("eng-attr", "b"))
        .await
        .unwrap();
    assert_eq!(p.content.content_type.as_deref(), Some("application/json"));
    assert_eq!(
        p.content.content_language, None,
        "absent properties cleared"
    );
    assert_eq!(p.content.content_md5, None);
    assert_eq!(p.metadata, metadata(&[("keep", "1")]), "metadata kept");
    let (v2, _) = store
        .set_blob_metadata(SetBlobMetadataInput {
            account: ACCOUNT.to_owned(),
            container: container("eng-attr"),
            blob: blob("b"),
            metadata: metadata(&[("Other", "2")]),
            conditions: Conditions::default(),
            lease_id: None,
        })
        .await
        .unwrap();
    let p = store
        .get_blob_properties(get_input("eng-attr", "b"))
        .await
        .unwrap();
    assert_eq!(p.metadata, metadata(&[("Other", "2")]));
    assert_eq!(p.content.content_type.as_deref(), Some("application/json"));
    assert_eq!(p.version, v2);
    let etags = [&v0.etag, &v1.etag, &v2.etag];
    for (i, a) in etags.iter().enumerate() {
        for b in &etags[i + 1..] {
            assert_ne!(a, b);
        }
    }
    // Reads do not change the version.
    get(store, "eng-attr", "b").await;
    store.list_blobs(list_input("eng-attr")).await.unwrap();
    let p = store
        .get_blob_properties(get_input("eng-attr", "b"))
        .await
        .unwrap();
    assert_eq!(p.version, v2);
    assert_eq!(get(store, "eng-attr", "b").await, b"data");
}

async fn delete_blob_and_missing_blobs(store: &Store) {
    create_container(store, "eng-del").await;
    put(store, "eng-del", "b", b"x").await;
    store
        .delete_blob(delete_input("eng-del", "b"))
        .await
        .unwrap();
    let err = store.get_blob(get_input("eng-del", "b")).await.unwrap_err();
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
    let err = store
        .delete_blob(delete_input("eng-del", "b"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
    let err = store
        .get_blob_properties(get_input("eng-del", "never"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
    let out = store.list_blobs(list_input("eng-del")).await.unwrap();
    assert!(out.items.is_empty());
}

async fn md5_mismatch_stores_nothing(store: &Store) {
    create_container(store, "eng-md5").await;
    let mut input = put_input("eng-md5", "b", 4);
    input.transactional_md5 = Some([0u8; 16]);
    let err = store.put_blob(input, body(b"data")).await.unwrap_err();
    assert!(matches!(err, Error::Md5Mismatch { .. }), "{err:?}");
    let err = store.get_blob(get_input("eng-md5", "b")).await.unwrap_err();
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
    // A body shorter than declared stores nothing either.
    let err = store
        .put_blob(put_input("eng-md5", "short", 10), body(b"four"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BodyLengthMismatch { .. }), "{err:?}");
    let err = store
        .get_blob(get_input("eng-md5", "short"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BlobNotFound), "{err:?}");
}

// ---------------------------------------------------------------------------
// Listing

/// A body large enough to be hashed beside the upload (17 MiB): the MD5
/// the client sent is checked and stored, and a wrong one leaves the blob
/// as it was.
async fn a_large_body_is_checked_against_its_md5(store: &Store) {
    use md5::{Digest, Md5};
    create_container(store, "eng-md5-large").await;
    let data: Vec<u8> = (0..17 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    let digest: [u8; 16] = Md5::digest(&data).into();
    let large_body = |data: &[u8]| {
        let chunks: Vec<std::io::Result<bytes::Bytes>> = data
            .chunks(64 * 1024 + 7)
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        futures::stream::iter(chunks)
    };
    let mut input = put_input("eng-md5-large", "b", data.len());
    input.transactional_md5 = Some(digest);
    let out = store.put_blob(input, large_body(&data)).await.unwrap();
    assert_eq!(out.body_md5, digest);
    let props = store
        .get_blob_properties(get_input("eng-md5-large", "b"))
        .await
        .unwrap();
    assert_eq!(props.content.content_md5, Some(digest.to_vec()));

    let mut other = data.clone();
    other[9 * 1024 * 1024] ^= 1;
    let mut input = put_input("eng-md5-large", "b", other.len());
    input.transactional_md5 = Some(digest);
    let err = store.put_blob(input, large_body(&other)).await.unwrap_err();
    assert!(matches!(err, Error::Md5Mismatch { .. }), "{err:?}");
    assert!(get(store, "eng-md5-large", "b").await == data);
}

async fn listing_with_delimiter_and_markers(store: &Store) {
    create_container(store, "eng-list").await;
    for name in [
        "notes.txt",
        "logs/2024/09/02/c.log",
        "README.md",
        "logs/2024/09/01/b.log",
        "logs/2024/09/01/a.log",
    ] {
        put(store, "eng-list", name, name.as_bytes()).await;
    }
    let with = |prefix: &str, delimiter: Option<&str>, max: usize| ListBlobsInput {
        prefix: prefix.to_owned(),
        delimiter: delimiter.map(str::to_owned),
        max_results: max,
        ..list_input("eng-list")
    };
    // docs/wire/listing.md#a-worked-example, all pages of each request.
    let cases: Vec<(ListBlobsInput, Vec<Vec<&str>>)> = vec![
        (
            with("", None, 5000),
            vec![vec![
                "Blob README.md",
                "Blob logs/2024/09/01/a.log",
                "Blob logs/2024/09/01/b.log",
                "Blob logs/2024/09/02/c.log",
                "Blob notes.txt",
            ]],
        ),
        (
            with("", None, 2),
            vec![
                vec!["Blob README.md", "Blob logs/2024/09/01/a.log"],
                vec!["Blob logs/2024/09/01/b.log", "Blob logs/2024/09/02/c.log"],
                vec!["Blob notes.txt"],
            ],
        ),
        (
            with("", Some("/"), 5000),
            vec![vec!["Blob README.md", "BlobPrefix logs/", "Blob notes.txt"]],
        ),
        (
            with("", Some("/"), 2),
            vec![
                vec!["Blob README.md", "BlobPrefix logs/"],
                vec!["Blob notes.txt"],
            ],
        ),
        (
            with("", Some("/"), 1),
            vec![
                vec!["Blob README.md"],
                vec!["BlobPrefix logs/"],
                vec!["Blob notes.txt"],
            ],
        ),
        (
            with("logs/2024/09/", Some("/"), 5000),
            vec![vec![
                "BlobPrefix logs/2024/09/01/",
                "BlobPrefix logs/2024/09/02/",
            ]],
        ),
        (
            with("logs/2024/09/01/", Some("/"), 5000),
            vec![vec![
                "Blob logs/2024/09/01/a.log",
                "Blob logs/2024/09/01/b.log",
            ]],
        ),
        (
            with("logs/2024", Some("/09/"), 5000),
            vec![vec!["BlobPrefix logs/2024/09/"]],
        ),
        (with("n", None, 5000), vec![vec!["Blob notes.txt"]]),
        (with("zzz", Some("/"), 5000), vec![vec![]]),
    ];
    for (input, expected) in cases {
        let what = format!(
            "{:?} {:?} {}",
            input.prefix, input.delimiter, input.max_results
        );
        assert_eq!(all_pages(store, input).await, expected, "{what}");
    }
}

async fn markers_survive_deletion(store: &Store) {
    create_container(store, "eng-mark").await;
    for name in ["a", "b", "c", "g/1", "g/2", "z"] {
        put(store, "eng-mark", name, b"x").await;
    }
    let first = store
        .list_blobs(ListBlobsInput {
            max_results: 2,
            ..list_input("eng-mark")
        })
        .await
        .unwrap();
    assert_eq!(names(&first.items), ["Blob a", "Blob b"]);
    let marker = first.next_marker.expect("more");
    store
        .delete_blob(delete_input("eng-mark", "b"))
        .await
        .unwrap();
    let next = store
        .list_blobs(ListBlobsInput {
            max_results: 2,
            marker: Some(marker),
            ..list_input("eng-mark")
        })
        .await
        .unwrap();
    assert_eq!(names(&next.items), ["Blob c", "Blob g/1"]);

    let grouped = ListBlobsInput {
        delimiter: Some("/".to_owned()),
        max_results: 2,
        ..list_input("eng-mark")
    };
    let page = store
        .list_blobs(ListBlobsInput {
            marker: Some(ListingMarker::After {
                name: "a".to_owned(),
                snapshot: String::new(),
            }),
            ..grouped.clone()
        })
        .await
        .unwrap();
    assert_eq!(names(&page.items), ["Blob c", "BlobPrefix g/"]);
    let marker = page.next_marker.expect("more");
    for name in ["g/1", "g/2"] {
        store
            .delete_blob(delete_input("eng-mark", name))
            .await
            .unwrap();
    }
    let rest = store
        .list_blobs(ListBlobsInput {
            marker: Some(marker),
            ..grouped
        })
        .await
        .unwrap();
    assert_eq!(names(&rest.items), ["Blob z"]);
    assert!(rest.next_marker.is_none());
}

// ---------------------------------------------------------------------------
// Races

async fn two_writers_with_one_if_match_etag_one_wins(store: &Store) {
    create_container(store, "eng-race").await;
    for round in 0..10 {
        let name = format!("b{round}");
        let base = put(store, "eng-race", &name, b"base").await.version.etag;
        let tasks: Vec<_> = (0..2)
            .map(|i| {
                let store = store.clone();
                let name = name.clone();
                let etag = base.as_str().to_owned();
                tokio::spawn(async move {
                    let data = format!("writer {i} of {name}").into_bytes();
                    let mut input = put_input("eng-race", &name, data.len());
                    input.conditions.if_match = Some(EtagMatch::List(vec![etag]));
                    store.put_blob(input, body(&data)).await.map(|o| (i, o))
                })
            })
            .collect();
        let mut winners = Vec::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(w) => winners.push(w),
                Err(Error::Condition(ConditionFailure::ConditionNotMet)) => {}
                Err(e) => panic!("round {round}: unexpected {e:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: exactly one writer wins");
        let (i, out) = &winners[0];
        assert_eq!(
            get(store, "eng-race", &name).await,
            format!("writer {i} of {name}").into_bytes()
        );
        let p = store
            .get_blob_properties(get_input("eng-race", &name))
            .await
            .unwrap();
        assert_eq!(p.version, out.version);
    }
}

async fn two_metadata_writers_with_one_if_match_etag_one_wins(store: &Store) {
    create_container(store, "eng-race-meta").await;
    for round in 0..10 {
        let name = format!("b{round}");
        let base = put(store, "eng-race-meta", &name, b"x").await.version.etag;
        let tasks: Vec<_> = (0..2)
            .map(|i| {
                let store = store.clone();
                let name = name.clone();
                let etag = base.as_str().to_owned();
                tokio::spawn(async move {
                    store
                        .set_blob_metadata(SetBlobMetadataInput {
                            account: ACCOUNT.to_owned(),
                            container: container("eng-race-meta"),
                            blob: blob(&name),
                            metadata: metadata(&[("writer", &i.to_string())]),
                            conditions: Conditions {
                                if_match: Some(EtagMatch::List(vec![etag])),
                                ..Conditions::default()
                            },
                            lease_id: None,
                        })
                        .await
                        .map(|_| i)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(i) => winners.push(i),
                Err(Error::Condition(ConditionFailure::ConditionNotMet)) => {}
                Err(e) => panic!("round {round}: unexpected {e:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}");
        let p = store
            .get_blob_properties(get_input("eng-race-meta", &name))
            .await
            .unwrap();
        assert_eq!(p.metadata, metadata(&[("writer", &winners[0].to_string())]));
    }
}

async fn concurrent_create_only_puts_one_wins(store: &Store) {
    create_container(store, "eng-create").await;
    for round in 0..10 {
        let name = format!("b{round}");
        let tasks: Vec<_> = (0..3)
            .map(|i| {
                let store = store.clone();
                let name = name.clone();
                tokio::spawn(async move {
                    let data = format!("creator {i}").into_bytes();
                    let mut input = put_input("eng-create", &name, data.len());
                    input.conditions.if_none_match = Some(EtagMatch::Any);
                    store.put_blob(input, body(&data)).await.map(|_| i)
                })
            })
            .collect();
        let mut winners = Vec::new();
        for t in tasks {
            match t.await.unwrap() {
                Ok(i) => winners.push(i),
                Err(Error::Condition(ConditionFailure::BlobAlreadyExists)) => {}
                Err(e) => panic!("round {round}: unexpected {e:?}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}");
        assert_eq!(
            get(store, "eng-create", &name).await,
            format!("creator {}", winners[0]).into_bytes()
        );
    }
}

// ---------------------------------------------------------------------------
// Pinned readers and garbage

async fn a_pinned_reader_gets_its_whole_version(store: &Store, clock: &ManualClock) {
    create_container(store, "eng-pin").await;
    let original = pattern(3 * 1024 * 1024 + 5);
    put(store, "eng-pin", "b", &original).await;
    // Leftover garbage of earlier scenarios goes first, so that the counts
    // below are this scenario's own.
    clock.advance(Duration::from_secs(31));
    store.collect_garbage().await.unwrap();

    // The reader resolves its version (and pins it) and reads one chunk.
    let out = store.get_blob(get_input("eng-pin", "b")).await.unwrap();
    let mut reader = out.body;
    let mut received = reader.next().await.expect("a chunk").unwrap().to_vec();

    put(store, "eng-pin", "b", b"replacement").await;
    store
        .delete_blob(delete_input("eng-pin", "b"))
        .await
        .unwrap();
    clock.advance(Duration::from_secs(31));
    assert_eq!(
        store.collect_garbage().await.unwrap(),
        1,
        "only the replacement's extent goes; the pinned one stays"
    );

    while let Some(chunk) = reader.next().await {
        received.extend_from_slice(&chunk.unwrap());
    }
    assert!(received == original, "the reader got its whole version");
    drop(reader);
    assert_eq!(
        store.collect_garbage().await.unwrap(),
        1,
        "unpinned: collected"
    );

    // A reader that never polls its body pins as well.
    put(store, "eng-pin", "c", &pattern(1000)).await;
    let idle = store.get_blob(get_input("eng-pin", "c")).await.unwrap();
    store
        .delete_blob(delete_input("eng-pin", "c"))
        .await
        .unwrap();
    clock.advance(Duration::from_secs(31));
    assert_eq!(store.collect_garbage().await.unwrap(), 0);
    assert_eq!(read_all(idle.body).await, pattern(1000));
    assert_eq!(store.collect_garbage().await.unwrap(), 1);
}

async fn garbage_is_collected_after_the_grace_period(store: &Store, clock: &ManualClock) {
    create_container(store, "eng-gc").await;
    clock.advance(Duration::from_secs(31));
    store.collect_garbage().await.unwrap();
    put(store, "eng-gc", "over", b"one").await;
    put(store, "eng-gc", "over", b"two").await;
    put(store, "eng-gc", "gone", b"three").await;
    put(store, "eng-gc", "empty", b"").await;
    put(store, "eng-gc", "empty", b"").await;
    store
        .delete_blob(delete_input("eng-gc", "gone"))
        .await
        .unwrap();
    clock.advance(Duration::from_secs(29));
    assert_eq!(
        store.collect_garbage().await.unwrap(),
        0,
        "inside the grace period"
    );
    clock.advance(Duration::from_secs(2));
    assert_eq!(store.collect_garbage().await.unwrap(), 2);
    assert_eq!(store.collect_garbage().await.unwrap(), 0);
    assert_eq!(get(store, "eng-gc", "over").await, b"two");
    assert_eq!(get(store, "eng-gc", "empty").await, b"");
}

/// A blob holds at most 100,000 uncommitted blocks: the next new id is
/// refused with `BlockCountExceedsLimit`, restaging an id already staged is
/// not, and committing discards them all, so staging works again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blob_stages_at_most_100000_blocks() {
    use stowage_blobstore::{BlockListKind, MAX_UNCOMMITTED_BLOCKS};
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::in_memory(), clock.clone())
        .await
        .unwrap();
    create_container(&store, "eng-limit").await;
    let limit = MAX_UNCOMMITTED_BLOCKS as usize;
    let stage = |i: usize| {
        let store = store.clone();
        async move {
            let input = put_block_input("eng-limit", "b", i, 0);
            store.put_block(input, body(b"")).await
        }
    };
    let mut next = 0;
    while next < limit {
        let batch = (next..(next + 500).min(limit)).map(stage);
        for staged in futures::future::join_all(batch).await {
            staged.unwrap();
        }
        next += 500;
    }
    assert!(matches!(
        stage(limit).await,
        Err(Error::BlockCountExceedsLimit { uncommitted: true })
    ));
    stage(7).await.unwrap();
    let list = vec![(BlockListKind::Uncommitted, block_id(7))];
    store
        .put_block_list(put_block_list_input("eng-limit", "b", list))
        .await
        .unwrap();
    stage(limit).await.unwrap();
}

// ---------------------------------------------------------------------------
// Tiers

async fn a_rehydration_completes_when_its_delay_has_passed(store: &Store, clock: &ManualClock) {
    use stowage_blobstore::{
        AccessTier, DEFAULT_REHYDRATE_DELAY, Error, RehydratePriority, SetBlobTierInput,
        SetTierOutcome,
    };
    create_container(store, "eng-tier").await;
    let out = put(store, "eng-tier", "a", b"archived").await;
    let set = |tier, priority| SetBlobTierInput {
        account: "devstoreaccount1".into(),
        container: container("eng-tier"),
        blob: blob("a"),
        snapshot: None,
        version_id: None,
        tier,
        priority,
        lease_id: None,
        if_tags: None,
    };
    let outcome = store.set_blob_tier(set(AccessTier::Archive, None)).await;
    assert_eq!(outcome.unwrap(), SetTierOutcome::Done);
    let err = store
        .get_blob(get_input("eng-tier", "a"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BlobArchived), "{err:?}");
    let outcome = store
        .set_blob_tier(set(AccessTier::Cool, Some(RehydratePriority::High)))
        .await;
    assert_eq!(outcome.unwrap(), SetTierOutcome::Pending);
    let props = store
        .get_blob_properties(get_input("eng-tier", "a"))
        .await
        .unwrap();
    assert_eq!(props.tier.tier, AccessTier::Archive);
    assert_eq!(props.tier.rehydrating_to, Some(AccessTier::Cool));
    assert_eq!(props.version, out.version, "the ETag does not move");
    clock.advance(DEFAULT_REHYDRATE_DELAY);
    let got = store.get_blob(get_input("eng-tier", "a")).await.unwrap();
    assert_eq!(got.properties.tier.tier, AccessTier::Cool);
    assert_eq!(got.properties.tier.rehydrating_to, None);
    assert_eq!(read_all(got.body).await, b"archived");
}
