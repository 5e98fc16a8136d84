//! The write locks of cluster mode (docs/cluster.md, "Consistency"): a
//! write locks its blob (and a copy its source too), a container write its
//! container, so writes to different blobs run side by side while writes to
//! one blob, and a blob's writes and its container's, still queue; and
//! write transactions judge time by the database's clock.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use stowage_blobstore::testing::{TempPostgres, blob_lock_keys};
use stowage_blobstore::*;

mod support;
use support::*;

/// Nodes on one fresh database, each on `clock`, with the database's URL.
async fn nodes(
    n: usize,
    clock: Arc<dyn Clock>,
) -> (TempPostgres, tempfile::TempDir, String, Vec<Store>) {
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let mut stores = Vec::new();
    for i in 0..n {
        let config = StoreConfig::at(dir.path().join(format!("node{i}")))
            .with_metadata(&url)
            .with_gc_grace(Duration::ZERO);
        stores.push(Store::open(config, clock.clone()).await.unwrap());
    }
    (pg, dir, url, stores)
}

fn manual() -> Arc<dyn Clock> {
    Arc::new(ManualClock::new(epoch()))
}

/// Holds blob `name`'s locks, as a write of it does, on a connection of
/// its own, until the returned sender is dropped or sent to.
fn hold_blob_locks(url: &str, c: &str, name: &str) -> std::sync::mpsc::Sender<()> {
    let [cluster, container, blob] = blob_lock_keys(ACCOUNT, c, name);
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (held, is_held) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = client.transaction().unwrap();
        tx.batch_execute(&format!(
            "SELECT pg_advisory_xact_lock_shared({cluster}), \
             pg_advisory_xact_lock_shared({container}), pg_advisory_xact_lock({blob})"
        ))
        .unwrap();
        held.send(()).unwrap();
        let _ = released.recv();
        tx.rollback().unwrap();
    });
    is_held.recv().unwrap();
    release
}

/// Waits until `n` sessions of the database wait for an advisory lock
/// (polling the database's own view of its sessions).
fn wait_for_lock_waiters(url: &str, n: i64) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    for _ in 0..2000 {
        let waiting: i64 = client
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
                &[],
            )
            .unwrap()
            .get(0);
        if waiting >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no session came to wait for an advisory lock");
}

/// Within a generous bound: a write that is not blocked finishes in it.
async fn soon<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("the write finished while another blob's locks were held")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_blob_stops_its_own_writes_and_its_container_delete_only() {
    let (_pg, _dir, url, nodes) = nodes(1, manual()).await;
    let store = &nodes[0];
    create_container(store, "held").await;
    create_container(store, "other").await;
    put(store, "held", "x", b"x0").await;
    put(store, "held", "y", b"y0").await;

    let release = tokio::task::block_in_place(|| hold_blob_locks(&url, "held", "x"));
    // Another blob of the same container, and another container, are
    // written while x is held.
    soon(store.put_blob(put_input("held", "y", 2), body(b"y1")))
        .await
        .unwrap();
    soon(store.set_blob_metadata(SetBlobMetadataInput {
        account: ACCOUNT.to_owned(),
        container: container("held"),
        blob: blob("y"),
        metadata: metadata(&[("k", "v")]),
        conditions: Conditions::default(),
        lease_id: None,
    }))
    .await
    .unwrap();
    create_container(store, "third").await;
    soon(store.put_blob(put_input("other", "x", 2), body(b"o1")))
        .await
        .unwrap();

    // A write of x waits, and so does Delete Container of x's container.
    let write_x = {
        let store = store.clone();
        tokio::spawn(async move { store.put_blob(put_input("held", "x", 2), body(b"x1")).await })
    };
    tokio::task::block_in_place(|| wait_for_lock_waiters(&url, 1));
    let delete = {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .delete_container(DeleteContainerInput {
                    account: ACCOUNT.to_owned(),
                    container: container("held"),
                    conditions: Conditions::default(),
                    lease_id: None,
                    retention: None,
                })
                .await
        })
    };
    tokio::task::block_in_place(|| wait_for_lock_waiters(&url, 2));
    assert!(!write_x.is_finished());
    assert!(!delete.is_finished());
    drop(release);
    soon(write_x).await.unwrap().unwrap();
    soon(delete).await.unwrap().unwrap();
}

fn copy_input(from: &str, to: &str) -> CopyBlobInput {
    CopyBlobInput {
        account: ACCOUNT.to_owned(),
        container: container("copies"),
        blob: blob(to),
        source: CopySource {
            account: ACCOUNT.to_owned(),
            container: container("copies"),
            blob: blob(from),
            snapshot: None,
            version_id: None,
            access: SourceAccess::Account,
        },
        source_header: format!("/{ACCOUNT}/copies/{from}"),
        metadata: None,
        conditions: Conditions::default(),
        source_conditions: Conditions::default(),
        lease_id: None,
        access_tier: None,
        expected_md5: None,
        seal: None,
        rehydrate: None,
        tags: Tags::default(),
    }
}

/// A -> B and B -> A at once, through two nodes: both lock both blobs, in
/// one order, so neither waits for the other forever (a deadlock would
/// fail one of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crossed_copies_do_not_deadlock() {
    let (_pg, _dir, _url, nodes) = nodes(2, manual()).await;
    create_container(&nodes[0], "copies").await;
    put(&nodes[0], "copies", "a", b"aaaa").await;
    put(&nodes[1], "copies", "b", b"bbbb").await;
    for round in 0..50 {
        let tasks: Vec<_> = [("a", "b"), ("b", "a")]
            .into_iter()
            .enumerate()
            .map(|(i, (from, to))| {
                let store = nodes[i].clone();
                tokio::spawn(async move { store.copy_blob(copy_input(from, to)).await })
            })
            .collect();
        for t in tasks {
            soon(t)
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("round {round}: {e:?}"));
        }
    }
}

/// A copy racing an overwrite of its source: the copy refers to the
/// source's extents, and the overwrite drops them. Whatever the order, the
/// copy's content survives the collector.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_keeps_its_extents_while_its_source_is_overwritten() {
    let (_pg, _dir, _url, nodes) = nodes(2, manual()).await;
    create_container(&nodes[0], "copies").await;
    let content = |i: usize, tag: u8| {
        let mut data = pattern(4096);
        data[..8].copy_from_slice(&(i as u64).to_be_bytes());
        data[8] = tag;
        data
    };
    let rounds = 200;
    for i in 0..rounds {
        put(&nodes[0], "copies", "src", &content(i, 0)).await;
        let copy = {
            let store = nodes[0].clone();
            let to = format!("dst{i}");
            tokio::spawn(async move { store.copy_blob(copy_input("src", &to)).await })
        };
        let overwrite = {
            let store = nodes[1].clone();
            let data = content(i, 1);
            tokio::spawn(async move {
                store
                    .put_blob(put_input("copies", "src", data.len()), body(&data))
                    .await
            })
        };
        soon(copy).await.unwrap().unwrap();
        soon(overwrite).await.unwrap().unwrap();
    }
    nodes[0].collect_garbage().await.unwrap();
    for i in 0..rounds {
        let got = get(&nodes[i % 2], "copies", &format!("dst{i}")).await;
        assert!(
            got == content(i, 0) || got == content(i, 1),
            "copy {i} lost or mixed its bytes"
        );
    }
}

/// Two nodes creating one container at once: one creates it, the other is
/// told it exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_creators_of_a_container_get_one_success_and_one_conflict() {
    let (_pg, _dir, _url, nodes) = nodes(2, manual()).await;
    for round in 0..20 {
        let name = format!("race{round}");
        let tasks: Vec<_> = nodes
            .iter()
            .map(|store| {
                let store = store.clone();
                let name = name.clone();
                tokio::spawn(async move {
                    store
                        .create_container(CreateContainerInput {
                            account: ACCOUNT.to_owned(),
                            container: container(&name),
                            metadata: Metadata::default(),
                            public_access: None,
                            default_encryption_scope: None,
                            deny_encryption_scope_override: false,
                        })
                        .await
                })
            })
            .collect();
        let mut created = 0;
        for t in tasks {
            match soon(t).await.unwrap() {
                Ok(_) => created += 1,
                Err(Error::ContainerAlreadyExists) => {}
                Err(e) => panic!("round {round}: {e:?}"),
            }
        }
        assert_eq!(created, 1, "round {round}");
    }
}

/// The real clock, shifted: a node whose own clock is wrong.
#[derive(Debug)]
struct Behind(Duration);

impl Clock for Behind {
    fn now(&self) -> SystemTime {
        SystemClock.now() - self.0
    }
}

/// A node whose clock is an hour behind acquires a 15-second lease: the
/// lease ends 15 seconds after the database's now, not an hour earlier, so
/// a node with a right clock still finds the blob leased.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_is_judged_by_the_database_clock_whatever_the_node_clock() {
    let (pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let open = |name: &str, clock: Arc<dyn Clock>| {
        let config = StoreConfig::at(dir.path().join(name)).with_metadata(&url);
        Store::open(config, clock)
    };
    let wrong = open("wrong", Arc::new(Behind(Duration::from_secs(3600))))
        .await
        .unwrap();
    let right = open("right", Arc::new(SystemClock)).await.unwrap();
    create_container(&right, "leases").await;
    put(&right, "leases", "b", b"leased").await;
    let lease = |action| LeaseBlobInput {
        account: ACCOUNT.to_owned(),
        container: container("leases"),
        blob: blob("b"),
        action,
        conditions: Conditions::default(),
    };
    let acquire = LeaseAction::Acquire {
        duration: LeaseDuration::Fixed(15),
        proposed_id: None,
    };
    wrong.lease_blob(lease(acquire)).await.unwrap();
    match right.lease_blob(lease(acquire)).await {
        Err(Error::Lease(LeaseError::LeaseAlreadyPresent)) => {}
        other => panic!("the other node acquired a held lease: {other:?}"),
    }
    let data = b"unleased write";
    match right
        .put_blob(put_input("leases", "b", data.len()), body(data))
        .await
    {
        Err(Error::Lease(LeaseError::LeaseIdMissing(_))) => {}
        other => panic!("a write without the lease id went through: {other:?}"),
    }
    // The write's Last-Modified is the database's time too, not an hour ago.
    let written = wrong
        .set_blob_metadata(SetBlobMetadataInput {
            account: ACCOUNT.to_owned(),
            container: container("leases"),
            blob: blob("b"),
            metadata: metadata(&[("k", "v")]),
            conditions: Conditions::default(),
            lease_id: None,
        })
        .await;
    assert!(
        matches!(written, Err(Error::Lease(LeaseError::LeaseIdMissing(_)))),
        "{written:?}"
    );
    drop(pg);
}
