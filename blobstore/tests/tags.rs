//! Engine tests of blob index tags, on a SQLite file with a local file
//! system and on the in-memory pair: a tag condition is decided inside the
//! write's transaction (of two writers with the same condition exactly one
//! wins), and Find Blobs by Tags pages through exactly the matching base
//! blobs as they are written, overwritten and deleted.

use std::sync::Arc;

use stowage_blobstore::{
    ConditionFailure, DeleteBlobInput, Error, Filter, FindBlobsByTagsInput, ManualClock,
    SetBlobTagsInput, Store, StoreConfig, TagCondition, Tags,
};

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_on_sqlite_file_and_local_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::at(dir.path().join("data")), clock)
        .await
        .unwrap();
    suite(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_in_memory() {
    let clock = Arc::new(ManualClock::new(epoch()));
    let store = Store::open(StoreConfig::in_memory(), clock).await.unwrap();
    suite(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_on_postgres() {
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config = StoreConfig::at(dir.path().join("data")).with_metadata(url);
    let store = Store::open(config, clock).await.unwrap();
    suite(&store).await;
    drop(store);
    drop(pg);
}

async fn suite(store: &Store) {
    one_of_two_conditional_tag_writers_wins(store).await;
    find_pages_through_matching_base_blobs(store).await;
}

fn tags(pairs: &[(&str, &str)]) -> Tags {
    Tags::new(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
    .unwrap()
}

fn set_input(c: &str, b: &str, t: Tags, if_tags: Option<&str>) -> SetBlobTagsInput {
    SetBlobTagsInput {
        account: ACCOUNT.to_owned(),
        container: container(c),
        blob: blob(b),
        snapshot: None,
        version_id: None,
        tags: t,
        if_tags: if_tags.map(|e| TagCondition::parse(e).unwrap()),
        lease_id: None,
    }
}

async fn put_tagged(store: &Store, c: &str, b: &str, t: Tags) {
    let mut input = put_input(c, b, 1);
    input.tags = t;
    store.put_blob(input, body(b"x")).await.unwrap();
}

async fn one_of_two_conditional_tag_writers_wins(store: &Store) {
    create_container(store, "tag-race").await;
    for round in 0..10 {
        let name = format!("b{round}");
        put_tagged(store, "tag-race", &name, tags(&[("v", "1")])).await;
        let tasks: Vec<_> = ["2", "3"]
            .into_iter()
            .map(|v| {
                let store = store.clone();
                let name = name.clone();
                tokio::spawn(async move {
                    store
                        .set_blob_tags(set_input(
                            "tag-race",
                            &name,
                            tags(&[("v", v)]),
                            Some("\"v\" = '1'"),
                        ))
                        .await
                })
            })
            .collect();
        let mut wins = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(()) => wins += 1,
                Err(Error::Condition(ConditionFailure::ConditionNotMet)) => {}
                Err(e) => panic!("round {round}: {e:?}"),
            }
        }
        assert_eq!(wins, 1, "round {round}");
    }
}

async fn find_all(store: &Store, container: Option<&str>, expr: &str, page: usize) -> Vec<String> {
    let mut names = Vec::new();
    let mut marker = None;
    loop {
        let out = store
            .find_blobs_by_tags(FindBlobsByTagsInput {
                account: ACCOUNT.to_owned(),
                container: container.map(support::container),
                filter: Filter::parse(expr).unwrap(),
                marker: marker.take(),
                max_results: page,
            })
            .await
            .unwrap();
        assert!(out.blobs.len() <= page);
        names.extend(
            out.blobs
                .into_iter()
                .map(|b| format!("{}/{}", b.container, b.name)),
        );
        match out.next_marker {
            Some(m) => marker = Some(m),
            None => return names,
        }
    }
}

async fn find_pages_through_matching_base_blobs(store: &Store) {
    create_container(store, "tag-find-a").await;
    create_container(store, "tag-find-b").await;
    for i in 0..30 {
        let c = if i % 2 == 0 {
            "tag-find-a"
        } else {
            "tag-find-b"
        };
        let class = if i % 3 == 0 { "hit" } else { "miss" };
        let rank = format!("{i:02}");
        put_tagged(
            store,
            c,
            &format!("n{i:02}"),
            tags(&[("class", class), ("rank", &rank)]),
        )
        .await;
    }
    let mut hits = find_all(store, None, "\"class\" = 'hit'", 3).await;
    hits.sort();
    let mut want: Vec<String> = (0..30)
        .filter(|i| i % 3 == 0)
        .map(|i| {
            let c = if i % 2 == 0 {
                "tag-find-a"
            } else {
                "tag-find-b"
            };
            format!("{c}/n{i:02}")
        })
        .collect();
    want.sort();
    assert_eq!(hits, want);

    // A range drives the index; the second comparison filters.
    let got = find_all(
        store,
        None,
        "\"rank\" >= '10' AND \"rank\" < '20' AND \"class\" = 'miss'",
        4,
    )
    .await;
    // 10 to 19 less 12, 15 and 18.
    assert_eq!(got.len(), 7, "{got:?}");
    let got = find_all(store, Some("tag-find-a"), "\"class\" = 'hit'", 2).await;
    assert_eq!(got.len(), 5, "{got:?}");
    let got = find_all(
        store,
        None,
        "@container = 'tag-find-b' AND \"class\" = 'hit'",
        100,
    )
    .await;
    assert_eq!(got.len(), 5, "{got:?}");

    // Overwritten without tags, deleted, retagged: the index follows.
    put_tagged(store, "tag-find-a", "n00", Tags::default()).await;
    store
        .delete_blob(DeleteBlobInput {
            account: ACCOUNT.to_owned(),
            container: container("tag-find-b"),
            blob: blob("n03"),
            snapshot: None,
            delete_snapshots: None,
            conditions: Default::default(),
            lease_id: None,
            version_id: None,
            permanent: false,
        })
        .await
        .unwrap();
    store
        .set_blob_tags(set_input(
            "tag-find-a",
            "n02",
            tags(&[("class", "hit")]),
            None,
        ))
        .await
        .unwrap();
    let got = find_all(store, None, "\"class\" = 'hit'", 3).await;
    assert_eq!(got.len(), 10 - 2 + 1, "{got:?}");
    assert!(!got.contains(&"tag-find-a/n00".to_owned()));
    assert!(!got.contains(&"tag-find-b/n03".to_owned()));
    assert!(got.contains(&"tag-find-a/n02".to_owned()));
}
