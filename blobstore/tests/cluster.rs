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
