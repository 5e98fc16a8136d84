//! What one node of a cluster must not keep to itself: two stores on one
//! PostgreSQL metadata database, as two nodes, each seeing at once what the
//! other wrote (docs/cluster.md#what-a-node-keeps-in-memory).

use std::sync::Arc;

use stowage_blobstore::*;

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_properties_set_on_one_node_are_read_on_the_other() {
    let (_pg, _dir, [a, b]) = two_nodes().await;
    // Node b reads the document first (a cache would keep this answer).
    assert_eq!(b.get_service_properties(ACCOUNT).await.unwrap(), None);
    a.set_service_properties(ACCOUNT, "<first/>".into())
        .await
        .unwrap();
    assert_eq!(
        b.get_service_properties(ACCOUNT).await.unwrap().as_deref(),
        Some("<first/>")
    );
    a.set_service_properties(ACCOUNT, "<second/>".into())
        .await
        .unwrap();
    assert_eq!(
        b.get_service_properties(ACCOUNT).await.unwrap().as_deref(),
        Some("<second/>")
    );
}

/// With the clock stopped, both nodes write in one tick: each version of
/// the blob still gets an ETag of its own, so an If-Match naming the first
/// write's ETag fails after the second write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_on_two_nodes_in_one_tick_get_different_etags() {
    let (_pg, _dir, nodes) = two_nodes().await;
    create_container(&nodes[0], "tick").await;
    let mut seen = std::collections::HashSet::new();
    for round in 0..5 {
        for node in &nodes {
            let etag = put(node, "tick", "b", format!("{round}").as_bytes())
                .await
                .version
                .etag;
            assert!(seen.insert(etag.clone()), "round {round}: {etag} twice");
        }
    }
    let first = put(&nodes[0], "tick", "b", b"x").await.version.etag;
    put(&nodes[1], "tick", "b", b"y").await;
    let conditions = Conditions {
        if_match: Some(EtagMatch::List(vec![first.as_str().to_owned()])),
        ..Conditions::default()
    };
    let r = nodes[0]
        .put_blob(
            PutBlobInput {
                conditions,
                ..put_input("tick", "b", 1)
            },
            body(b"z"),
        )
        .await;
    assert!(
        matches!(r, Err(Error::Condition(ConditionFailure::ConditionNotMet))),
        "{r:?}"
    );
}

/// A node starting while another node copies from another host leaves
/// that copy pending: it is not the starting node's to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_starting_leaves_the_copies_of_the_others_running() {
    let (_pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(epoch()));
    let config =
        |n: usize| StoreConfig::at(dir.path().join(format!("node{n}"))).with_metadata(&url);
    let a = Store::open(config(0), clock.clone()).await.unwrap();
    create_container(&a, "copies").await;
    let input = RemoteCopyInput {
        account: ACCOUNT.to_owned(),
        container: container("copies"),
        blob: blob("b"),
        kind: CopiedType::Block,
        source_header: "http://elsewhere.test/data.bin".to_owned(),
        metadata: Metadata::default(),
        content: ContentProperties::default(),
        size: 3,
        conditions: Conditions::default(),
        lease_id: None,
        access_tier: None,
        tags: Default::default(),
        expected_md5: None,
    };
    let (_, job) = a.begin_remote_copy(input).await.unwrap();
    let b = Store::open(config(1), clock.clone()).await.unwrap();
    let status = |store: Store| async move {
        let p = store
            .get_blob_properties(get_input("copies", "b"))
            .await
            .unwrap();
        p.copy.expect("copy properties").status_str().to_owned()
    };
    assert_eq!(status(b.clone()).await, "pending");
    // The copying node still completes it.
    let bytes = a.write_copied_bytes(body(b"abc"), 3, None).await.unwrap();
    assert!(a.complete_remote_copy(&job, bytes).await.unwrap());
    assert_eq!(status(b).await, "success");
}

/// The node listing a blob another node soft-deleted a moment ago may read
/// a clock a moment behind the deleting node's: the blob still has exactly
/// its retention days left, not one more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_a_moment_behind_counts_the_retention_days_from_the_deletion() {
    let (_pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let config =
        |n: usize| StoreConfig::at(dir.path().join(format!("node{n}"))).with_metadata(&url);
    let ahead = Arc::new(ManualClock::new(
        epoch() + std::time::Duration::from_millis(5),
    ));
    let behind = Arc::new(ManualClock::new(epoch()));
    let a = Store::open(config(0), ahead).await.unwrap();
    let b = Store::open(config(1), behind).await.unwrap();
    a.set_delete_retention(
        ACCOUNT,
        Some(DeleteRetention {
            days: 7,
            allow_permanent_delete: false,
        }),
    )
    .await
    .unwrap();
    create_container(&a, "soft").await;
    put(&a, "soft", "b", b"x").await;
    a.delete_blob(delete_input("soft", "b")).await.unwrap();
    let listed = b
        .list_blobs(ListBlobsInput {
            include_deleted: true,
            ..list_input("soft")
        })
        .await
        .unwrap();
    let [BlobListItem::Blob { properties, .. }] = listed.items.as_slice() else {
        panic!("one blob: {:?}", listed.items);
    };
    let deleted = properties.deleted.as_ref().expect("soft-deleted");
    assert_eq!(deleted.remaining_retention_days, 7);
}
