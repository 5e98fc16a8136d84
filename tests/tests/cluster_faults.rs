//! Faults across a cluster of real processes (docs/cluster.md#faults):
//! nodes of `stowage-server` on one PostgreSQL database and one shared
//! directory of objects, with the database stopped and started under them,
//! the objects failing, and nodes killed with SIGKILL.
//!
//! The tests start the processes themselves (`stowage_tests::procs`); they
//! never wait for time to pass, only for processes to start or stop.

use std::time::{Duration, Instant};

use stowage_blobstore::testing::Shutdown;
use stowage_tests::procs::Cluster;
use stowage_tests::{Client, Response, unique};

/// The longest a request may take to be answered while the database is
/// down: its connect attempts fail at once on a local socket, and the node
/// tries a bounded number of times (about 1.3 s of pauses).
const DOWN_ANSWER_LIMIT: Duration = Duration::from_secs(10);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A body above the inline limit (64 KiB), so its bytes go to the object
/// store, made from `seed`.
fn large(seed: u8) -> Vec<u8> {
    (0..100_000u32)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

async fn put(c: &Client, container: &str, blob: &str, data: &[u8]) -> Response {
    c.put(&format!("/{container}/{blob}"))
        .header("x-ms-blob-type", "BlockBlob")
        .body(data.to_vec())
        .send()
        .await
}

/// The answer is the service's busy answer: 503, `ServerBusy` in the
/// header and the XML body.
fn assert_busy(r: &Response, what: &str) {
    assert_eq!(r.status, 503, "{what}: {}", r.text());
    r.assert_error(503, "ServerBusy");
    assert!(r.text().starts_with("<?xml"), "{what}: {}", r.text());
}

/// While PostgreSQL is down (stopped cleanly, then crashed), every node
/// answers reads and writes 503 ServerBusy with the code and the XML body,
/// within a bound; once it is back the same processes serve again at the
/// first request, and every acknowledged write is there with its bytes.
#[test]
fn requests_while_postgres_is_down_get_server_busy_and_succeed_once_it_is_back() {
    let rt = runtime();
    let cluster = Cluster::start(2);
    let clients: Vec<Client> = cluster.nodes.iter().map(|n| n.client()).collect();
    let container = unique("faults");
    let mut acknowledged: Vec<(String, Vec<u8>)> = Vec::new();
    rt.block_on(async {
        clients[0].create_container(&container).await;
        for (i, c) in clients.iter().enumerate() {
            for (name, data) in [
                (format!("small-{i}"), vec![i as u8; 10]),
                (format!("large-{i}"), large(i as u8)),
            ] {
                assert_eq!(put(c, &container, &name, &data).await.status, 201);
                acknowledged.push((name, data));
            }
        }
    });

    for (round, how) in [Shutdown::Fast, Shutdown::Immediate]
        .into_iter()
        .enumerate()
    {
        cluster.stop_postgres(how);
        rt.block_on(async {
            for (i, c) in clients.iter().enumerate() {
                let started = Instant::now();
                let w = put(c, &container, &format!("down-{round}-{i}"), b"lost").await;
                assert_busy(&w, "a put while the database is down");
                let r = c.get(&format!("/{container}/small-{i}")).send().await;
                assert_busy(&r, "a get while the database is down");
                let l = c.get("/?comp=list").send().await;
                assert_busy(&l, "a listing while the database is down");
                assert!(
                    started.elapsed() < DOWN_ANSWER_LIMIT * 3,
                    "three answers took {:?}",
                    started.elapsed()
                );
            }
        });
        cluster.start_postgres();
        rt.block_on(async {
            for (i, c) in clients.iter().enumerate() {
                // The nodes were not restarted: their first request after
                // the database's restart succeeds.
                let name = format!("after-{round}-{i}");
                let data = large(round as u8 * 10 + i as u8);
                let w = put(c, &container, &name, &data).await;
                assert_eq!(w.status, 201, "{}", w.text());
                acknowledged.push((name, data));
            }
        });
    }

    rt.block_on(async {
        for c in &clients {
            for (name, data) in &acknowledged {
                let r = c.get(&format!("/{container}/{name}")).send().await;
                assert_eq!(r.status, 200, "{name}: {}", r.text());
                assert_eq!(&r.body[..], &data[..], "{name}");
            }
            // A put refused while the database was down left nothing.
            for round in 0..2 {
                for i in 0..clients.len() {
                    let r = c
                        .head(&format!("/{container}/down-{round}-{i}"))
                        .send()
                        .await;
                    assert_eq!(r.status, 404);
                }
            }
        }
    });
}

/// A shared directory of objects that fails (here: replaced by a file, so
/// no object can be written or read) is answered 500 InternalError with the
/// code and the XML body; a put that failed leaves no blob behind; once the
/// directory is back the nodes serve again.
#[test]
fn a_failing_object_store_is_answered_internal_error() {
    let rt = runtime();
    let cluster = Cluster::start(2);
    let clients: Vec<Client> = cluster.nodes.iter().map(|n| n.client()).collect();
    let container = unique("objects");
    let before = large(1);
    rt.block_on(async {
        clients[0].create_container(&container).await;
        assert_eq!(
            put(&clients[0], &container, "before", &before).await.status,
            201
        );
    });

    let aside = cluster.dir().join("objects-aside");
    std::fs::rename(&cluster.objects, &aside).expect("move the objects aside");
    std::fs::write(&cluster.objects, b"not a directory").expect("a file in its place");
    rt.block_on(async {
        for c in &clients {
            let w = put(c, &container, "during", &large(2)).await;
            w.assert_error(500, "InternalError");
            assert!(w.text().starts_with("<?xml"), "{}", w.text());
            let r = c.get(&format!("/{container}/before")).send().await;
            r.assert_error(500, "InternalError");
            // Small bodies live in the database: they still work.
            assert_eq!(put(c, &container, "small", b"inline").await.status, 201);
        }
    });
    std::fs::remove_file(&cluster.objects).expect("remove the file");
    std::fs::rename(&aside, &cluster.objects).expect("put the objects back");

    rt.block_on(async {
        for c in &clients {
            let r = c.head(&format!("/{container}/during")).send().await;
            assert_eq!(r.status, 404, "a failed put left a blob");
            let r = c.get(&format!("/{container}/before")).send().await;
            assert_eq!(r.status, 200);
            assert_eq!(&r.body[..], &before[..]);
        }
        let after = large(3);
        assert_eq!(
            put(&clients[1], &container, "after", &after).await.status,
            201
        );
        let r = clients[0].get(&format!("/{container}/after")).send().await;
        assert_eq!(&r.body[..], &after[..]);
    });
}
