//! The history test (docs/cluster.md#testing-a-cluster): concurrent clients
//! doing If-Match read-modify-writes and create-only puts on a few blobs;
//! every request's invocation and answer is recorded, and the history is
//! checked by the linearizability checker of `stowage_tests::linearizability`.
//!
//! [`record`] takes one client per node: one node, or each node of a cluster
//! when the suite runs on one (`STOWAGE_TEST_CLUSTER=3`, clients talking to
//! the nodes directly, not through the proxy). A deliberately broken store
//! (conditions evaluated outside the commit's transaction) shows that the
//! checker catches what this test is for.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use stowage_tests::linearizability::{self, Op, Operation, Outcome};
use stowage_tests::{Client, TestServer, unique};
use tokio::sync::Barrier;

const CLIENTS: usize = 8;
const OPS_PER_CLIENT: usize = 150;
const KEYS: usize = 3;

/// The instants of a history: one counter every client reads.
#[derive(Default)]
struct Instants(AtomicU64);

impl Instants {
    fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::SeqCst)
    }
}

/// A small deterministic generator (xorshift), one per client.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Runs [`CLIENTS`] clients over `nodes` (client `i` talks to node
/// `i % nodes.len()`), each doing [`OPS_PER_CLIENT`] operations on
/// [`KEYS`] blobs of `container`, and returns what they recorded.
async fn record(nodes: &[Client], container: &str) -> Vec<Operation> {
    let instants = Arc::new(Instants::default());
    let values = Arc::new(AtomicU64::new(1));
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let mut tasks = Vec::new();
    for i in 0..CLIENTS {
        let c = nodes[i % nodes.len()].clone();
        let (instants, values, barrier) = (instants.clone(), values.clone(), barrier.clone());
        let container = container.to_owned();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            client(c, container, i as u64 + 1, instants, values).await
        }));
    }
    let mut history = Vec::new();
    for t in tasks {
        history.extend(t.await.expect("client task"));
    }
    history
}

/// One client's operations: reads, If-Match writes from its last read of
/// the blob, and create-only puts, in an order its seed decides.
async fn client(
    c: Client,
    container: String,
    seed: u64,
    instants: Arc<Instants>,
    values: Arc<AtomicU64>,
) -> Vec<Operation> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // The value and ETag this client last read, per key.
    let mut last: Vec<Option<(u64, String)>> = vec![None; KEYS];
    let mut out = Vec::with_capacity(OPS_PER_CLIENT);
    for _ in 0..OPS_PER_CLIENT {
        let k = rng.below(KEYS as u64) as usize;
        let key = format!("k{k}");
        let path = format!("/{container}/{key}");
        let choice = rng.below(10);
        let invoke;
        let (op, outcome) = match (&last[k], choice) {
            (Some((expect, etag)), 0..=4) => {
                let (expect, etag) = (*expect, etag.clone());
                let new = values.fetch_add(1, Ordering::SeqCst);
                invoke = instants.next();
                let r = c
                    .put(&path)
                    .header("x-ms-blob-type", "BlockBlob")
                    .header("if-match", &etag)
                    .body(new.to_string())
                    .send()
                    .await;
                let outcome = match r.status {
                    201 => Outcome::Ok,
                    412 => Outcome::Failed,
                    other => panic!("If-Match put answered {other}: {}", r.text()),
                };
                (Op::Cas { expect, new }, outcome)
            }
            (_, 5..=6) => {
                let new = values.fetch_add(1, Ordering::SeqCst);
                invoke = instants.next();
                let r = c
                    .put(&path)
                    .header("x-ms-blob-type", "BlockBlob")
                    .header("if-none-match", "*")
                    .body(new.to_string())
                    .send()
                    .await;
                let outcome = match r.status {
                    201 => Outcome::Ok,
                    409 => Outcome::Failed,
                    other => panic!("create-only put answered {other}: {}", r.text()),
                };
                (Op::Create(new), outcome)
            }
            _ => {
                invoke = instants.next();
                let r = c.get(&path).send().await;
                let seen = match r.status {
                    200 => {
                        let v: u64 = r.text().parse().expect("a value");
                        last[k] = Some((v, r.etag()));
                        Some(v)
                    }
                    404 => None,
                    other => panic!("read answered {other}: {}", r.text()),
                };
                (Op::Read, Outcome::Read(seen))
            }
        };
        let ret = instants.next();
        out.push(Operation {
            key,
            op,
            outcome,
            invoke,
            ret: Some(ret),
        });
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_writes_on_every_node_are_linearizable() {
    let server = TestServer::start().await;
    let container = unique("history");
    server.client().create_container(&container).await;
    let history = record(&server.node_clients(), &container).await;
    assert_eq!(history.len(), CLIENTS * OPS_PER_CLIENT);
    let wins = history
        .iter()
        .filter(|o| matches!(o.op, Op::Cas { .. }) && o.outcome == Outcome::Ok)
        .count();
    assert!(wins > 0, "some If-Match writes won");
    if let Err(v) = linearizability::check(&history) {
        panic!("{v}");
    }
}

/// The same workload on a store that checks Put Blob's conditions before
/// its transaction: two writers pass one `If-Match`, and the checker says
/// so. Several rounds, since a round without an overlapping pair passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checker_catches_conditions_checked_outside_the_transaction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server =
        TestServer::start_in(dir, |c| c.with_fault_conditions_outside_transaction(), None).await;
    for round in 1..=10 {
        let container = unique("broken");
        server.client().create_container(&container).await;
        let history = record(&[server.client()], &container).await;
        if let Err(v) = linearizability::check(&history) {
            println!("caught in round {round}: {v}");
            return;
        }
    }
    panic!("ten histories of a broken store all passed the checker");
}
