//! Delimited listings over groups of every size, against a model: a group
//! is stepped through row by row when small and skipped with a seek when
//! large, and the pages must not show which.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use stowage_blobstore::{ManualClock, Store, StoreConfig};
use support::*;

/// What a listing of `names` with `prefix` and delimiter `/` shows.
fn model(names: &BTreeSet<String>, prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names.iter().filter(|n| n.starts_with(prefix)) {
        let entry = match name[prefix.len()..].find('/') {
            Some(i) => format!("BlobPrefix {}", &name[..prefix.len() + i + 1]),
            None => format!("Blob {name}"),
        };
        if out.last() != Some(&entry) {
            out.push(entry);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_of_every_size_list_as_the_model_says() {
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::in_memory(), clock).await.unwrap();
    groups_list_as_the_model_says(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_of_every_size_list_as_the_model_says_on_postgres() {
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data")).with_metadata(url);
    let store = Store::open(config, clock).await.unwrap();
    groups_list_as_the_model_says(&store).await;
    drop(store);
    drop(pg);
}

async fn groups_list_as_the_model_says(store: &Store) {
    let store = store.clone();
    create_container(&store, "groups").await;
    let mut names = BTreeSet::new();
    // Group sizes around the step limit (8) and the batch (256), with plain
    // blobs between them and a nested level under one group.
    for (g, size) in [1usize, 7, 8, 9, 20, 300, 2, 600].into_iter().enumerate() {
        for i in 0..size {
            names.insert(format!("g{g}/b{i:04}"));
        }
        names.insert(format!("plain{g}"));
    }
    for i in 0..30 {
        names.insert(format!("g1/sub/n{i:02}"));
    }
    for name in &names {
        put(&store, "groups", name, b"").await;
    }
    for prefix in ["", "g1/", "g5/", "g"] {
        let expected = model(&names, prefix);
        for page in [1, 2, 3, 7, 5000] {
            let mut input = list_input("groups");
            input.prefix = prefix.to_owned();
            input.delimiter = Some("/".to_owned());
            input.max_results = page;
            let pages = all_pages(&store, input).await;
            assert!(
                pages.iter().all(|p| p.len() <= page),
                "prefix {prefix:?}, pages of {page}"
            );
            let listed: Vec<String> = pages.into_iter().flatten().collect();
            assert_eq!(listed, expected, "prefix {prefix:?}, pages of {page}");
        }
    }
}
