//! Blobs: upload and download, ranges, properties, metadata, delete,
//! snapshots and copies.

use futures::StreamExt;
use stowage_client::{
    BlobType, ByteRange, Conditions, ContentProperties, CopyOptions, CopyStatus, DeleteSnapshots,
    DownloadOptions, ErrorCode, Metadata, UploadOptions,
};

use super::support::{Env, pattern};

#[tokio::test]
async fn uploaded_bytes_properties_and_metadata_come_back() {
    let env = Env::start().await;
    let container = env.container("roundtrip").await;
    let blob = container.blob("dir/hello world.txt");
    let options = UploadOptions::default()
        .with_content(
            ContentProperties::default()
                .with_content_type("text/plain")
                .with_content_language("en")
                .with_cache_control("no-cache")
                .with_content_disposition("inline"),
        )
        .with_metadata(Metadata::from([("owner", "alice")]));
    let written = blob.upload(&b"hello world"[..], &options).await.unwrap();

    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.etag, written.etag);
    assert_eq!(props.last_modified, written.last_modified);
    assert_eq!(props.content_length, 11);
    assert_eq!(props.blob_type, BlobType::BlockBlob);
    assert_eq!(props.content.content_type.as_deref(), Some("text/plain"));
    assert_eq!(props.content.content_language.as_deref(), Some("en"));
    assert_eq!(props.content.cache_control.as_deref(), Some("no-cache"));
    assert_eq!(props.content.content_disposition.as_deref(), Some("inline"));
    assert_eq!(props.content.content_md5.as_ref().map(Vec::len), Some(16));
    assert_eq!(props.metadata.get("Owner"), Some("alice"));
    assert!(props.creation_time.is_some());

    let download = blob.download(&DownloadOptions::default()).await.unwrap();
    assert_eq!(download.properties().etag, written.etag);
    assert_eq!(download.properties().metadata.get("owner"), Some("alice"));
    assert_eq!(&download.bytes().await.unwrap()[..], b"hello world");
}

#[tokio::test]
async fn names_with_spaces_unicode_and_punctuation_round_trip() {
    let env = Env::start().await;
    let container = env.container("names").await;
    for name in [
        "a b/c d.txt",
        "ünïcödé/日本語 ✓",
        "punct !$&'()*+,;=@[]%#?.txt",
        "trailing/",
        "+plus+",
    ] {
        let blob = container.blob(name);
        blob.upload(name.as_bytes().to_vec(), &UploadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            &blob.download_bytes().await.unwrap()[..],
            name.as_bytes(),
            "{name}"
        );
        assert!(blob.exists().await.unwrap());
    }
}

#[tokio::test]
async fn downloads_stream_and_write_into_files() {
    let env = Env::start().await;
    let container = env.container("stream").await;
    let blob = container.blob("big.bin");
    let data = pattern(300_000);
    blob.upload(data.clone(), &UploadOptions::default())
        .await
        .unwrap();

    let mut stream = blob
        .download(&DownloadOptions::default())
        .await
        .unwrap()
        .into_stream();
    let mut received = Vec::new();
    while let Some(chunk) = stream.next().await {
        received.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(received, data);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("copy.bin");
    let props = blob
        .download_to_file(&path, &DownloadOptions::default())
        .await
        .unwrap();
    assert_eq!(props.content_length, data.len() as u64);
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

#[tokio::test]
async fn ranges_return_the_bytes_asked_for() {
    let env = Env::start().await;
    let container = env.container("ranges").await;
    let blob = container.blob("digits");
    blob.upload(&b"0123456789"[..], &UploadOptions::default())
        .await
        .unwrap();

    let table = [
        (ByteRange::new(2, 3), &b"234"[..], (2, 4)),
        (ByteRange::from(7), &b"789"[..], (7, 9)),
        (ByteRange::new(8, 100), &b"89"[..], (8, 9)),
        (ByteRange::new(0, 10), &b"0123456789"[..], (0, 9)),
    ];
    for (range, expected, (start, end)) in table {
        let download = blob
            .download(&DownloadOptions::default().with_range(range))
            .await
            .unwrap();
        let content_range = download.content_range().expect("a 206 answer");
        assert_eq!(
            (content_range.start, content_range.end, content_range.total),
            (start, end, 10)
        );
        assert_eq!(download.properties().content_length, 10);
        assert_eq!(&download.bytes().await.unwrap()[..], expected, "{range:?}");
    }

    let err = blob
        .download(&DownloadOptions::default().with_range(ByteRange::from(10)))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(416));
    assert!(err.has_code(&ErrorCode::InvalidRange), "{err}");
}

#[tokio::test]
async fn properties_and_metadata_are_set_and_cleared() {
    let env = Env::start().await;
    let container = env.container("setprops").await;
    let blob = container.blob("doc");
    let first = blob
        .upload(
            &b"{}"[..],
            &UploadOptions::default().with_metadata(Metadata::from([("a", "1")])),
        )
        .await
        .unwrap();

    let content = ContentProperties::default()
        .with_content_type("application/json")
        .with_content_encoding("identity");
    let after_props = blob
        .set_properties(&content, &Conditions::new())
        .await
        .unwrap();
    assert_ne!(after_props.etag, first.etag);
    let props = blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(
        props.content.content_type.as_deref(),
        Some("application/json")
    );
    assert_eq!(props.content.content_encoding.as_deref(), Some("identity"));
    assert_eq!(
        props.metadata.get("a"),
        Some("1"),
        "properties keep metadata"
    );

    let after_meta = blob
        .set_metadata(
            &Metadata::from([("b", "2"), ("c", "3")]),
            &Conditions::new(),
        )
        .await
        .unwrap();
    assert_ne!(after_meta.etag, after_props.etag);
    let metadata = blob.metadata(&Conditions::new()).await.unwrap();
    assert_eq!(metadata, Metadata::from([("b", "2"), ("c", "3")]));

    blob.set_metadata(&Metadata::new(), &Conditions::new())
        .await
        .unwrap();
    assert!(blob.metadata(&Conditions::new()).await.unwrap().is_empty());

    let missing = container.blob("missing");
    let err = missing.properties(&Conditions::new()).await.unwrap_err();
    assert!(err.is_not_found());
    assert!(
        err.has_code(&ErrorCode::BlobNotFound),
        "a HEAD error carries its code: {err}"
    );
    assert!(!missing.exists().await.unwrap());
}

#[tokio::test]
async fn snapshots_keep_old_versions_and_guard_deletes() {
    let env = Env::start().await;
    let container = env.container("snaps").await;
    let blob = container.blob("report");
    blob.upload(&b"v1"[..], &UploadOptions::default())
        .await
        .unwrap();
    let plain = blob.snapshot(None, &Conditions::new()).await.unwrap();
    let tagged = blob
        .snapshot(
            Some(&Metadata::from([("label", "release")])),
            &Conditions::new(),
        )
        .await
        .unwrap();
    assert_ne!(plain.snapshot, tagged.snapshot);
    blob.upload(&b"v2"[..], &UploadOptions::default())
        .await
        .unwrap();

    let old = blob.with_snapshot(&plain.snapshot);
    assert_eq!(old.snapshot_id(), Some(plain.snapshot.as_str()));
    assert_eq!(&old.download_bytes().await.unwrap()[..], b"v1");
    assert_eq!(&blob.download_bytes().await.unwrap()[..], b"v2");
    let tagged_props = blob
        .with_snapshot(&tagged.snapshot)
        .properties(&Conditions::new())
        .await
        .unwrap();
    assert_eq!(tagged_props.metadata.get("label"), Some("release"));

    let err = blob
        .delete(DeleteSnapshots::None, &Conditions::new())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(409));
    assert!(err.has_code(&ErrorCode::SnapshotsPresent), "{err}");

    old.delete(DeleteSnapshots::None, &Conditions::new())
        .await
        .unwrap();
    assert!(!old.exists().await.unwrap());
    blob.delete(DeleteSnapshots::Only, &Conditions::new())
        .await
        .unwrap();
    assert!(blob.exists().await.unwrap());
    assert!(!blob.with_snapshot(&tagged.snapshot).exists().await.unwrap());
    blob.delete(DeleteSnapshots::Include, &Conditions::new())
        .await
        .unwrap();
    assert!(!blob.exists().await.unwrap());
    assert!(!blob.delete_if_exists(DeleteSnapshots::None).await.unwrap());
}

#[tokio::test]
async fn copies_take_content_and_metadata_from_the_source() {
    let env = Env::start().await;
    let container = env.container("copies").await;
    let source = container.blob("source");
    source
        .upload(
            &b"original"[..],
            &UploadOptions::default().with_metadata(Metadata::from([("from", "source")])),
        )
        .await
        .unwrap();
    let snapshot = source.snapshot(None, &Conditions::new()).await.unwrap();
    source
        .upload(&b"changed"[..], &UploadOptions::default())
        .await
        .unwrap();

    let copy = container.blob("copy");
    let info = copy
        .copy_from(&source, &CopyOptions::default())
        .await
        .unwrap();
    assert_eq!(info.status, CopyStatus::Success);
    assert_eq!(&copy.download_bytes().await.unwrap()[..], b"changed");
    let props = copy.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.etag, info.etag);
    let copy_props = props.copy.expect("copy properties");
    assert_eq!(copy_props.id, info.copy_id);
    assert_eq!(copy_props.status, CopyStatus::Success);

    // From a snapshot, with metadata of its own.
    let restored = container.blob("restored");
    restored
        .copy_from(
            &source.with_snapshot(&snapshot.snapshot),
            &CopyOptions::default().with_metadata(Metadata::from([("restored", "yes")])),
        )
        .await
        .unwrap();
    assert_eq!(&restored.download_bytes().await.unwrap()[..], b"original");
    let metadata = restored.metadata(&Conditions::new()).await.unwrap();
    assert_eq!(metadata, Metadata::from([("restored", "yes")]));

    // Create-only copy onto an existing blob.
    let err = copy
        .copy_from(
            &source,
            &CopyOptions::default().with_conditions(Conditions::new().with_if_not_exists()),
        )
        .await
        .unwrap_err();
    assert!(err.has_code(&ErrorCode::BlobAlreadyExists), "{err}");

    // A source condition that fails.
    let stale = Conditions::new().with_if_match(info.etag.clone());
    let err = container
        .blob("never")
        .copy_from(
            &source,
            &CopyOptions::default().with_source_conditions(stale),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(412), "{err}");

    let err = container
        .blob("orphan")
        .copy_from(&container.blob("no-such-source"), &CopyOptions::default())
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
