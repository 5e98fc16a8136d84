//! List Blobs: flat, hierarchical, paged, with snapshots, metadata and
//! uncommitted blobs (docs/wire/listing.md).

use futures::TryStreamExt;
use stowage_client::{BlobEntry, BlobItem, Conditions, ListBlobsOptions, Metadata, UploadOptions};

use super::support::Env;

fn names(entries: &[BlobEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e {
            BlobEntry::Blob(b) => b.name.clone(),
            BlobEntry::Prefix(p) => format!("{p}*"),
        })
        .collect()
}

#[tokio::test]
async fn flat_hierarchical_and_paged_listings_agree_with_the_spec_example() {
    let env = Env::start().await;
    let container = env.container("data").await;
    for name in [
        "README.md",
        "logs/2024/09/01/a.log",
        "logs/2024/09/01/b.log",
        "logs/2024/09/02/c.log",
        "notes.txt",
    ] {
        container
            .blob(name)
            .upload(name.as_bytes().to_vec(), &UploadOptions::default())
            .await
            .unwrap();
    }
    let list = |options: ListBlobsOptions| {
        let container = container.clone();
        async move {
            let entries: Vec<BlobEntry> =
                container.list_blobs(options).try_collect().await.unwrap();
            names(&entries)
        }
    };
    assert_eq!(
        list(ListBlobsOptions::default()).await,
        [
            "README.md",
            "logs/2024/09/01/a.log",
            "logs/2024/09/01/b.log",
            "logs/2024/09/02/c.log",
            "notes.txt"
        ]
    );
    assert_eq!(
        list(ListBlobsOptions::default().with_delimiter("/")).await,
        ["README.md", "logs/*", "notes.txt"]
    );
    assert_eq!(
        list(
            ListBlobsOptions::default()
                .with_delimiter("/")
                .with_max_results(2)
        )
        .await,
        ["README.md", "logs/*", "notes.txt"]
    );
    assert_eq!(
        list(
            ListBlobsOptions::default()
                .with_prefix("logs/2024/09/")
                .with_delimiter("/")
        )
        .await,
        ["logs/2024/09/01/*", "logs/2024/09/02/*"]
    );
    assert_eq!(
        list(ListBlobsOptions::default().with_max_results(1))
            .await
            .len(),
        5
    );

    let page = container
        .list_blobs_page(&ListBlobsOptions::default().with_max_results(2), None)
        .await
        .unwrap();
    assert_eq!(names(&page.entries), ["README.md", "logs/2024/09/01/a.log"]);
    let next = container
        .list_blobs_page(
            &ListBlobsOptions::default().with_max_results(2),
            page.next_marker.as_deref(),
        )
        .await
        .unwrap();
    assert_eq!(
        names(&next.entries),
        ["logs/2024/09/01/b.log", "logs/2024/09/02/c.log"]
    );
}

#[tokio::test]
async fn listings_include_metadata_snapshots_and_uncommitted_blobs_on_request() {
    let env = Env::start().await;
    let container = env.container("include").await;
    let blob = container.blob("doc");
    let written = blob
        .upload(
            &b"12345"[..],
            &UploadOptions::default().with_metadata(Metadata::from([("k", "v")])),
        )
        .await
        .unwrap();
    let snapshot = blob.snapshot(None, &Conditions::new()).await.unwrap();
    container
        .blob("staged")
        .put_block("YQ==", "a".into(), None, true)
        .await
        .unwrap();

    let blobs = |entries: Vec<BlobEntry>| -> Vec<BlobItem> {
        entries
            .into_iter()
            .filter_map(|e| match e {
                BlobEntry::Blob(b) => Some(*b),
                BlobEntry::Prefix(_) => None,
            })
            .collect()
    };

    let plain = blobs(
        container
            .list_blobs(ListBlobsOptions::default())
            .try_collect()
            .await
            .unwrap(),
    );
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].properties.etag, written.etag);
    assert_eq!(plain[0].properties.content_length, 5);
    assert!(plain[0].properties.metadata.is_empty());

    let options = ListBlobsOptions::default()
        .with_metadata()
        .with_snapshots()
        .with_uncommitted();
    let all = blobs(container.list_blobs(options).try_collect().await.unwrap());
    let described: Vec<(&str, Option<&str>)> = all
        .iter()
        .map(|b| (b.name.as_str(), b.snapshot.as_deref()))
        .collect();
    assert_eq!(
        described,
        [
            ("doc", Some(snapshot.snapshot.as_str())),
            ("doc", None),
            ("staged", None)
        ]
    );
    assert_eq!(all[1].properties.metadata.get("k"), Some("v"));
    assert_eq!(all[2].properties.content_length, 0);
}
