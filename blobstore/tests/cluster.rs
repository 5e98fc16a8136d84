//! Two stores on one PostgreSQL metadata database, as two nodes of a
//! cluster: writes racing across the nodes end as on one node (exactly one
//! conditional write and one lease acquire win each race).

use stowage_blobstore::*;

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn if_match_writes_on_two_nodes_one_wins() {
    let (_pg, _dir, nodes) = two_nodes().await;
    create_container(&nodes[0], "race").await;
    for round in 0..10 {
        let name = format!("b{round}");
        let base = put(&nodes[round % 2], "race", &name, b"base")
            .await
            .version
            .etag;
        let tasks: Vec<_> = (0..2)
            .map(|i| {
                let store = nodes[i].clone();
                let name = name.clone();
                let etag = base.as_str().to_owned();
                tokio::spawn(async move {
                    let conditions = Conditions {
                        if_match: Some(EtagMatch::List(vec![etag])),
                        ..Conditions::default()
                    };
                    store
                        .set_blob_metadata(SetBlobMetadataInput {
                            account: ACCOUNT.to_owned(),
                            container: container("race"),
                            blob: blob(&name),
                            metadata: metadata(&[("node", &i.to_string())]),
                            conditions,
                            lease_id: None,
                        })
                        .await
                        .map(|v| (i, v))
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
        assert_eq!(winners.len(), 1, "round {round}: exactly one node wins");
        let (i, version) = &winners[0];
        // Both nodes read the winner's write.
        for node in &nodes {
            let p = node
                .get_blob_properties(get_input("race", &name))
                .await
                .unwrap();
            assert_eq!(p.version, version.0, "round {round}");
            assert_eq!(p.metadata, metadata(&[("node", &i.to_string())]));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_acquires_on_two_nodes_one_wins() {
    let (_pg, _dir, nodes) = two_nodes().await;
    create_container(&nodes[0], "leases").await;
    for round in 0..10 {
        let name = format!("b{round}");
        put(&nodes[1], "leases", &name, b"leased").await;
        let tasks: Vec<_> = (0..2)
            .map(|i| {
                let store = nodes[i].clone();
                let name = name.clone();
                tokio::spawn(async move {
                    store
                        .lease_blob(LeaseBlobInput {
                            account: ACCOUNT.to_owned(),
                            container: container("leases"),
                            blob: blob(&name),
                            action: LeaseAction::Acquire {
                                duration: LeaseDuration::Infinite,
                                proposed_id: None,
                            },
                            conditions: Conditions::default(),
                        })
                        .await
                })
            })
            .collect();
        let mut won = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => won += 1,
                Err(Error::Lease(LeaseError::LeaseAlreadyPresent)) => {}
                Err(e) => panic!("round {round}: unexpected {e:?}"),
            }
        }
        assert_eq!(won, 1, "round {round}: exactly one node holds the lease");
    }
}

/// The service properties a read returns with its blob are those of its
/// own snapshot: a node that cached a document answers the one another
/// node set since (committed before the read started), never its cached
/// copy, and reads it once per change. A failing test here is a stale
/// cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_properties_read_with_a_blob_are_never_stale_across_nodes() {
    let (_pg, _dir, nodes) = two_nodes().await;
    create_container(&nodes[0], "props").await;
    put(&nodes[0], "props", "b", b"data").await;
    let seen_by = |node: usize| {
        let store = nodes[node].clone();
        async move {
            let (_, head) = store
                .get_blob_properties_with_service(get_input("props", "b"))
                .await
                .unwrap();
            let get = store
                .get_blob(get_input("props", "b"))
                .await
                .unwrap()
                .service_properties;
            let doc = |s: Option<ServiceSnapshot>| {
                s.expect("a read on PostgreSQL returns the properties")
                    .0
                    .map(|d| d.to_string())
            };
            let (head, get) = (doc(head), doc(get));
            assert_eq!(head, get, "Get Blob and Get Blob Properties agree");
            head
        }
    };
    assert_eq!(seen_by(1).await, None, "never set");
    for round in 0..4 {
        let doc = format!("<StorageServiceProperties>{round}</StorageServiceProperties>");
        nodes[round % 2]
            .set_service_properties(ACCOUNT, doc.clone())
            .await
            .unwrap();
        for node in [0, 1] {
            assert_eq!(seen_by(node).await, Some(doc.clone()), "round {round}");
        }
        // Unchanged: answered from the cache, in the blob's one statement.
        let before = nodes[1].metadata_round_trips().unwrap();
        nodes[1]
            .get_blob_properties_with_service(get_input("props", "b"))
            .await
            .unwrap();
        assert_eq!(nodes[1].metadata_round_trips().unwrap() - before, 1);
    }
    // The node-wide lookup (for requests that are not blob reads) agrees.
    let other = nodes[0].get_service_properties(ACCOUNT).await.unwrap();
    assert_eq!(
        other.map(|d| d.to_string()),
        Some("<StorageServiceProperties>3</StorageServiceProperties>".into())
    );
}
