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

/// The history test across processes (docs/cluster.md#the-history-test):
/// clients on three nodes doing If-Match read-modify-writes, create-only
/// puts and lease actions on a few blobs, while one node is killed and
/// restarted and PostgreSQL is restarted; the history must be linearizable.
mod history {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use stowage_blobstore::testing::Shutdown;
    use stowage_tests::linearizability::{self, Op, Operation, Outcome};
    use stowage_tests::procs::{Cluster, NodeOptions};
    use stowage_tests::{Client, Response, unique};

    const CLIENTS: usize = 6;
    const OPS_PER_CLIENT: usize = 60;
    const KEYS: usize = 3;
    /// A request whose answer has not come by then is "unknown".
    const ANSWER_LIMIT: Duration = Duration::from_secs(40);

    /// What the clients share: the instants of the history, the values
    /// written (each once), and the progress the disruptions wait for.
    #[derive(Default)]
    struct Shared {
        instants: AtomicU64,
        values: AtomicU64,
        answered: AtomicUsize,
        disrupted: AtomicBool,
    }

    impl Shared {
        fn instant(&self) -> u64 {
            self.instants.fetch_add(1, Ordering::SeqCst)
        }
        fn value(&self) -> u64 {
            self.values.fetch_add(1, Ordering::SeqCst) + 1
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

    fn lease_id(n: u64) -> String {
        format!("00000000-0000-4000-8000-{n:012x}")
    }

    /// What a request came to: an answer, nothing sent (the node is down:
    /// the operation did not happen), or no answer (it may have happened).
    enum Reply {
        Answer(Response),
        Unsent,
        Lost,
    }

    async fn send(req: stowage_tests::Request) -> Reply {
        match req.timeout(ANSWER_LIMIT).try_send().await {
            Ok(r) if r.status == 500 || r.status == 503 => Reply::Lost,
            Ok(r) => Reply::Answer(r),
            Err(e) if e.is_connect() => Reply::Unsent,
            Err(_) => Reply::Lost,
        }
    }

    /// One client: reads, If-Match writes from its last read, create-only
    /// puts, and lease actions with ids it proposed, until it has done
    /// [`OPS_PER_CLIENT`] operations and the disruptions are over.
    async fn client(
        c: Client,
        container: String,
        seed: u64,
        shared: Arc<Shared>,
    ) -> Vec<Operation> {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut last: Vec<Option<(u64, String)>> = vec![None; KEYS];
        let mut leases: Vec<Option<u64>> = vec![None; KEYS];
        let mut out = Vec::new();
        let mut done = 0;
        while done < OPS_PER_CLIENT || !shared.disrupted.load(Ordering::SeqCst) {
            if done > OPS_PER_CLIENT * 20 {
                break;
            }
            let k = rng.below(KEYS as u64) as usize;
            let key = format!("k{k}");
            let path = format!("/{container}/{key}");
            let lease_path = format!("{path}?comp=lease");
            let put = || c.put(&path).header("x-ms-blob-type", "BlockBlob");
            let choice = rng.below(20);
            let (op, req) = match (choice, &last[k], leases[k]) {
                (0..=6, Some((expect, etag)), _) => {
                    let new = shared.value();
                    let req = put().header("if-match", etag).body(new.to_string());
                    (
                        Op::Cas {
                            expect: *expect,
                            new,
                        },
                        req,
                    )
                }
                (7..=8, _, _) => {
                    let new = shared.value();
                    let req = put().header("if-none-match", "*").body(new.to_string());
                    (Op::Create(new), req)
                }
                (9..=10, _, _) => {
                    let id = shared.value();
                    let req = c
                        .put(&lease_path)
                        .header("x-ms-lease-action", "acquire")
                        .header("x-ms-lease-duration", "-1")
                        .header("x-ms-proposed-lease-id", &lease_id(id));
                    (Op::Acquire(id), req)
                }
                (11, _, Some(id)) => {
                    let req = c
                        .put(&lease_path)
                        .header("x-ms-lease-action", "renew")
                        .header("x-ms-lease-id", &lease_id(id));
                    (Op::Renew(id), req)
                }
                (12..=13, _, Some(id)) => {
                    let req = c
                        .put(&lease_path)
                        .header("x-ms-lease-action", "release")
                        .header("x-ms-lease-id", &lease_id(id));
                    (Op::Release(id), req)
                }
                (14, _, _) => {
                    let req = c
                        .put(&lease_path)
                        .header("x-ms-lease-action", "break")
                        .header("x-ms-lease-break-period", "0");
                    (Op::Break, req)
                }
                _ => (Op::Read, c.get(&path)),
            };
            let invoke = shared.instant();
            let sent = send(req).await;
            let ret = shared.instant();
            let r = match sent {
                Reply::Unsent => {
                    // The node is down: nothing happened. Wait for it
                    // (a pause between attempts, not time the test needs).
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                Reply::Lost => {
                    done += 1;
                    if op != Op::Read {
                        out.push(Operation {
                            key,
                            op,
                            outcome: Outcome::Unknown,
                            invoke,
                            ret: None,
                        });
                    }
                    continue;
                }
                Reply::Answer(r) => r,
            };
            let outcome = match (op, r.status) {
                (Op::Read, 200) => {
                    let v: u64 = r.text().parse().expect("a value");
                    last[k] = Some((v, r.etag()));
                    Outcome::Read(Some(v))
                }
                (Op::Read, 404) => Outcome::Read(None),
                (Op::Cas { .. } | Op::Create(_), 201) => Outcome::Ok,
                (Op::Acquire(id), 201) => {
                    leases[k] = Some(id);
                    Outcome::Ok
                }
                (Op::Renew(_) | Op::Release(_), 200) | (Op::Break, 202) => Outcome::Ok,
                (Op::Read, _) => panic!("a read answered {}: {}", r.text(), r.status),
                (_, 404 | 409 | 412) => Outcome::Failed,
                (op, status) => panic!("{op:?} answered {status}: {}", r.text()),
            };
            done += 1;
            shared.answered.fetch_add(1, Ordering::SeqCst);
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

    /// Runs the clients over the nodes of `cluster` (client `i` on node
    /// `i % nodes`); `disrupt` runs beside them and sets `disrupted` when
    /// it is done.
    async fn record<D>(clients: Vec<Client>, container: &str, disrupt: D) -> Vec<Operation>
    where
        D: FnOnce(Arc<Shared>) -> tokio::task::JoinHandle<()>,
    {
        let shared = Arc::new(Shared::default());
        let disruption = disrupt(shared.clone());
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let c = clients[i % clients.len()].clone();
                let (container, shared) = (container.to_owned(), shared.clone());
                tokio::spawn(client(c, container, i as u64 + 1, shared))
            })
            .collect();
        let mut history = Vec::new();
        for t in tasks {
            history.extend(t.await.expect("client task"));
        }
        disruption.await.expect("disruptions");
        history
    }

    /// Waits until the clients have had `n` answers (progress, not time).
    async fn answered(shared: &Shared, n: usize) {
        while shared.answered.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        super::runtime()
    }

    #[test]
    fn a_history_across_three_nodes_with_a_node_killed_and_postgres_restarted_is_linearizable() {
        let rt = runtime();
        let cluster = Arc::new(Mutex::new(Cluster::start(3)));
        let clients: Vec<Client> = {
            let c = cluster.lock().unwrap();
            c.nodes.iter().map(|n| n.client()).collect()
        };
        let container = unique("history");
        let history = rt.block_on(async {
            clients[0].create_container(&container).await;
            let cluster = cluster.clone();
            record(clients.clone(), &container, move |shared| {
                tokio::spawn(async move {
                    let total = CLIENTS * OPS_PER_CLIENT;
                    answered(&shared, total / 4).await;
                    let c = cluster.clone();
                    tokio::task::spawn_blocking(move || {
                        let mut c = c.lock().unwrap();
                        c.nodes[1].kill();
                        c.nodes[1].start();
                    })
                    .await
                    .expect("kill and restart node 1");
                    answered(&shared, total / 2).await;
                    let c = cluster.clone();
                    tokio::task::spawn_blocking(move || {
                        let c = c.lock().unwrap();
                        c.stop_postgres(Shutdown::Immediate);
                        c.start_postgres();
                    })
                    .await
                    .expect("restart PostgreSQL");
                    shared.disrupted.store(true, Ordering::SeqCst);
                })
            })
            .await
        });
        let count = |f: &dyn Fn(&Operation) -> bool| history.iter().filter(|o| f(o)).count();
        let unknown = count(&|o| o.outcome == Outcome::Unknown);
        let wins = count(&|o| matches!(o.op, Op::Cas { .. }) && o.outcome == Outcome::Ok);
        let leases = count(&|o| matches!(o.op, Op::Acquire(_)) && o.outcome == Outcome::Ok);
        println!(
            "{} operations, {unknown} unknown, {wins} If-Match wins, {leases} acquires",
            history.len()
        );
        assert!(wins > 0 && leases > 0, "the workload did something");
        if let Err(v) = linearizability::check(&history) {
            panic!("{v}");
        }
    }

    /// The same workload on nodes that check Put Blob's conditions before
    /// its transaction (a test-only switch of the server): the checker
    /// rejects one of its histories.
    #[test]
    fn the_history_catches_conditions_checked_outside_the_transaction() {
        let rt = runtime();
        let options = NodeOptions {
            env: vec![(
                "STOWAGE_TEST_FAULT_CONDITIONS_OUTSIDE_TRANSACTION".into(),
                "1".into(),
            )],
        };
        let cluster = Cluster::start_with(3, &options);
        let clients: Vec<Client> = cluster.nodes.iter().map(|n| n.client()).collect();
        rt.block_on(async {
            for round in 1..=5 {
                let container = unique("broken");
                clients[0].create_container(&container).await;
                let history = record(clients.clone(), &container, |shared| {
                    shared.disrupted.store(true, Ordering::SeqCst);
                    tokio::spawn(async {})
                })
                .await;
                if let Err(v) = linearizability::check(&history) {
                    println!("caught in round {round}: {v}");
                    return;
                }
            }
            panic!("five histories of a broken build all passed the checker");
        });
    }
}

/// kill -9 of one node during 1,000 concurrent mixed writes through the
/// other two (and some through the killed node itself): afterwards every
/// acknowledged write is readable through every node with exactly its
/// bytes, and no blob is torn (its bytes and its MD5 agree).
mod kill_during_writes {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use base64::Engine as _;
    use md5::{Digest, Md5};
    use stowage_tests::procs::Cluster;
    use stowage_tests::{Client, Request, Response, unique};

    /// Writes through the two nodes that stay up.
    const WRITES: usize = 1000;
    const WRITERS: usize = 12;
    /// Writers on the node that is killed (their writes until it dies).
    const DOOMED_WRITERS: usize = 3;

    /// What a blob must hold: its bytes, and its metadata value if set.
    #[derive(Clone, Debug, Default)]
    struct Expected {
        bytes: Vec<u8>,
        meta: Option<String>,
    }

    type Book = Arc<Mutex<BTreeMap<String, Expected>>>;

    fn body(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    /// Sizes that land inline, in one object, and in a multipart object.
    fn size(n: u64) -> usize {
        [1_000, 3_000, 90_000, 300_000][(n % 4) as usize]
    }

    fn b64(b: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(b)
    }

    /// `Some(answer)`, or `None` when the node could not be reached or the
    /// answer never came (the write's fate is unknown: not checked).
    async fn send(req: Request) -> Option<Response> {
        req.timeout(Duration::from_secs(40)).try_send().await.ok()
    }

    /// One writer: `count` writes, each a Put Blob, a Put Block + Put Block
    /// List (the blocks through `nodes[0]`, the list through the last
    /// node), an Append Block, or a Set Blob Metadata on a blob this writer
    /// made; what was acknowledged goes in `book`.
    async fn writer(
        nodes: Vec<Client>,
        container: String,
        id: usize,
        count: usize,
        book: Book,
        acknowledged: Arc<AtomicUsize>,
    ) {
        let c = &nodes[0];
        let list_node = &nodes[nodes.len() - 1];
        let append = format!("append-{id}");
        let mut appended: Option<Vec<u8>> = None;
        let mut mine: Vec<String> = Vec::new();
        for i in 0..count {
            let seed = (id * 100_000 + i) as u64;
            let name = format!("w{id}-{i}");
            let path = format!("/{container}/{name}");
            let ok = match i % 4 {
                0 => {
                    let data = body(seed, size(seed / 7));
                    let r = send(
                        c.put(&path)
                            .header("x-ms-blob-type", "BlockBlob")
                            .body(data.clone()),
                    )
                    .await;
                    let ok = r.is_some_and(|r| r.status == 201);
                    if ok {
                        book.lock().unwrap().insert(
                            name.clone(),
                            Expected {
                                bytes: data,
                                meta: None,
                            },
                        );
                        mine.push(name);
                    }
                    ok
                }
                1 => {
                    let parts = [body(seed, size(seed / 7)), body(seed + 1, 2_000)];
                    let mut ids = Vec::new();
                    let mut staged = true;
                    for (j, part) in parts.iter().enumerate() {
                        let block = b64(format!("block-{j:04}").as_bytes());
                        let r = send(
                            c.put(&format!(
                                "{path}?comp=block&blockid={}",
                                block.replace('=', "%3D")
                            ))
                            .body(part.clone()),
                        )
                        .await;
                        staged &= r.is_some_and(|r| r.status == 201);
                        ids.push(block);
                    }
                    let whole = parts.concat();
                    let list: String = ids
                        .iter()
                        .map(|b| format!("<Latest>{b}</Latest>"))
                        .collect();
                    let ok = staged
                        && {
                            let r = send(
                            list_node
                                .put(&format!("{path}?comp=blocklist"))
                                .header("x-ms-blob-content-md5", &b64(&Md5::digest(&whole)))
                                .body(format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>{list}</BlockList>")),
                        )
                        .await;
                            r.is_some_and(|r| r.status == 201)
                        };
                    if ok {
                        book.lock().unwrap().insert(
                            name.clone(),
                            Expected {
                                bytes: whole,
                                meta: None,
                            },
                        );
                        mine.push(name);
                    }
                    ok
                }
                2 => {
                    let apath = format!("/{container}/{append}");
                    if appended.is_none() {
                        let r = send(c.put(&apath).header("x-ms-blob-type", "AppendBlob")).await;
                        if r.is_some_and(|r| r.status == 201) {
                            appended = Some(Vec::new());
                        }
                    }
                    match appended.as_mut() {
                        Some(sofar) => {
                            let data = body(seed, [500, 80_000][i % 2]);
                            // The position condition makes a lost append
                            // that did happen refuse the next one, instead
                            // of leaving the book behind the blob.
                            let r = send(
                                c.put(&format!("{apath}?comp=appendblock"))
                                    .header(
                                        "x-ms-blob-condition-appendpos",
                                        &sofar.len().to_string(),
                                    )
                                    .body(data.clone()),
                            )
                            .await;
                            let ok = r.is_some_and(|r| r.status == 201);
                            if ok {
                                sofar.extend_from_slice(&data);
                                book.lock().unwrap().insert(
                                    append.clone(),
                                    Expected {
                                        bytes: sofar.clone(),
                                        meta: None,
                                    },
                                );
                            } else {
                                // Unknown from here on: stop appending.
                                book.lock().unwrap().remove(&append);
                                appended = None;
                            }
                            ok
                        }
                        None => false,
                    }
                }
                _ => match mine.pop() {
                    Some(target) => {
                        let value = format!("v{seed}");
                        let r = send(
                            c.put(&format!("/{container}/{target}?comp=metadata"))
                                .header("x-ms-meta-mark", &value),
                        )
                        .await;
                        let ok = r.is_some_and(|r| r.status == 200);
                        let mut book = book.lock().unwrap();
                        if ok {
                            if let Some(e) = book.get_mut(&target) {
                                e.meta = Some(value);
                            }
                        } else {
                            // Its metadata is unknown now: check its bytes only.
                            if let Some(e) = book.get_mut(&target) {
                                e.meta = Some("?".into());
                            }
                        }
                        ok
                    }
                    None => false,
                },
            };
            if ok {
                acknowledged.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    #[test]
    fn a_node_killed_during_concurrent_writes_loses_no_acknowledged_write_and_tears_no_blob() {
        let rt = super::runtime();
        let cluster = Arc::new(Mutex::new(Cluster::start(3)));
        let clients: Vec<Client> = {
            let c = cluster.lock().unwrap();
            c.nodes.iter().map(|n| n.client()).collect()
        };
        let container = unique("kill");
        let book: Book = Arc::default();
        let acknowledged = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            clients[1].create_container(&container).await;
            let mut tasks = Vec::new();
            for w in 0..WRITERS {
                // Blocks through one survivor, lists through the other.
                let nodes = if w % 2 == 0 {
                    vec![clients[1].clone(), clients[2].clone()]
                } else {
                    vec![clients[2].clone(), clients[1].clone()]
                };
                tasks.push(tokio::spawn(writer(
                    nodes,
                    container.clone(),
                    w,
                    WRITES / WRITERS + usize::from(w < WRITES % WRITERS),
                    book.clone(),
                    acknowledged.clone(),
                )));
            }
            for w in 0..DOOMED_WRITERS {
                tasks.push(tokio::spawn(writer(
                    vec![clients[0].clone(), clients[1].clone()],
                    container.clone(),
                    WRITERS + w,
                    WRITES,
                    book.clone(),
                    Arc::new(AtomicUsize::new(0)),
                )));
            }
            // Kill node 0 once a third of the writes are acknowledged
            // (waiting for progress, not for time).
            while acknowledged.load(Ordering::SeqCst) < WRITES / 3 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let c = cluster.clone();
            tokio::task::spawn_blocking(move || c.lock().unwrap().nodes[0].kill())
                .await
                .unwrap();
            for t in tasks {
                t.await.expect("writer");
            }
        });
        let survivors_acknowledged = acknowledged.load(Ordering::SeqCst);
        println!("{survivors_acknowledged} writes acknowledged through the two survivors");
        assert!(
            survivors_acknowledged > WRITES * 9 / 10,
            "the survivors kept working"
        );
        cluster.lock().unwrap().nodes[0].start();

        let book = book.lock().unwrap().clone();
        rt.block_on(async {
            for (name, want) in &book {
                let mut seen = Vec::new();
                for c in &clients {
                    let r = c.get(&format!("/{container}/{name}")).send().await;
                    assert_eq!(r.status, 200, "{name}: {}", r.text());
                    assert!(r.body == want.bytes, "{name}: not the acknowledged bytes");
                    if let Some(md5) = r.header("content-md5") {
                        assert_eq!(md5, b64(&Md5::digest(&r.body)), "{name}: torn");
                    }
                    match want.meta.as_deref() {
                        // A Set Metadata whose answer never came.
                        Some("?") => {}
                        want => assert_eq!(r.header("x-ms-meta-mark").as_deref(), want, "{name}"),
                    }
                    seen.push(r.etag());
                }
                assert!(
                    seen.windows(2).all(|w| w[0] == w[1]),
                    "{name}: nodes disagree"
                );
            }
        });
        println!("{} blobs checked through 3 nodes", book.len());
    }
}

/// Garbage across nodes (docs/cluster.md#garbage-across-nodes): a node
/// killed with SIGKILL in the middle of a large upload and of a copy from
/// another host, then taken for dead (its heartbeat set back in the
/// database, as one that stopped beating long ago: the test does not wait
/// for the bound to pass), has its partial object deleted and its copy
/// failed by the collector of another node, which leaves alone the upload
/// it is itself receiving at that moment; that upload then commits and
/// reads back whole.
mod liveness {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use bytes::Bytes;
    use futures::channel::mpsc;
    use stowage_tests::procs::Cluster;
    use stowage_tests::{Client, Response, unique};

    const LEN: usize = 4 * 1024 * 1024;

    type Sender = mpsc::UnboundedSender<Result<Bytes, std::io::Error>>;

    /// Starts a Put Blob of `data` whose body stops after `sent` bytes;
    /// the sender sends the rest.
    fn stalled_put(
        rt: &tokio::runtime::Runtime,
        client: &Client,
        path: &str,
        data: &[u8],
        sent: usize,
    ) -> (Sender, tokio::task::JoinHandle<Option<Response>>) {
        let (tx, rx) = mpsc::unbounded();
        tx.unbounded_send(Ok(Bytes::copy_from_slice(&data[..sent])))
            .unwrap();
        let request = client
            .put(path)
            .header("x-ms-blob-type", "BlockBlob")
            .body_stream(reqwest::Body::wrap_stream(rx), data.len() as u64)
            .timeout(Duration::from_secs(120));
        (tx, rt.spawn(async move { request.try_send().await.ok() }))
    }

    /// Every file under the shared directory's extents, staging files
    /// (`<id>#<n>`) included.
    fn files(objects: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for sub in std::fs::read_dir(objects.join("extents"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for f in std::fs::read_dir(sub.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                out.push(f.file_name().to_string_lossy().into_owned());
            }
        }
        out
    }

    /// The uploads in flight: (object, node).
    fn uploads(db: &mut postgres::Client) -> Vec<(String, i64)> {
        db.query(
            "SELECT extent, node FROM stowage_uploads ORDER BY since",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
    }

    /// Waits (at most 90 s: the collector runs every 10 s) until `ready`.
    fn until(what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(90);
        while !ready() {
            assert!(Instant::now() < deadline, "waited for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn a_killed_nodes_partial_upload_and_pending_copy_are_reclaimed_by_another_node() {
        let rt = super::runtime();
        let mut cluster = Cluster::start(2);
        let clients: Vec<Client> = cluster.nodes.iter().map(|n| n.client()).collect();
        let mut db = postgres::Client::connect(&cluster.metadata, postgres::NoTls).unwrap();
        // As if the nodes had been beating for an hour: a node judges
        // others only once it has been alive for the bound (30 s) itself.
        db.execute(
            "UPDATE stowage_node_heartbeats SET alive_since = now() - interval '1 hour'",
            &[],
        )
        .unwrap();
        let objects = cluster.objects.clone();
        let container = unique("liveness");
        rt.block_on(clients[0].create_container(&container));

        // Node 0: a large upload stalled half-way, its first parts written.
        let doomed: Vec<u8> = (0..LEN).map(|i| (i % 251) as u8).collect();
        let (_doomed_tx, doomed_put) = stalled_put(
            &rt,
            &clients[0],
            &format!("/{container}/doomed"),
            &doomed,
            LEN / 2,
        );
        until("node 0's upload in the object store", || {
            uploads(&mut db).len() == 1 && files(&objects).iter().any(|f| f.contains('#'))
        });
        let (doomed_object, dead) = uploads(&mut db)[0].clone();
        // ... and a copy from another host, pending.
        let source = rt.block_on(stowage_tests::sources::stalling_source("slow"));
        let copy = rt.block_on(
            clients[0]
                .put(&format!("/{container}/copy"))
                .header("x-ms-copy-source", &source)
                .send(),
        );
        assert_eq!(copy.status, 202, "{}", copy.text());
        until("node 0's copy writing", || uploads(&mut db).len() == 2);

        // Node 1: an upload in flight at the same time.
        let kept: Vec<u8> = (0..LEN).map(|i| (i % 241) as u8).collect();
        let (kept_tx, kept_put) = stalled_put(
            &rt,
            &clients[1],
            &format!("/{container}/kept"),
            &kept,
            LEN / 2,
        );
        until("node 1's upload in the object store", || {
            uploads(&mut db).len() == 3
                && files(&objects).iter().filter(|f| f.contains('#')).count() >= 2
        });
        let (kept_object, live) = uploads(&mut db)[2].clone();
        assert_ne!(live, dead);

        cluster.nodes[0].kill();
        db.execute(
            "UPDATE stowage_node_heartbeats SET heartbeat = now() - interval '1 hour'
              WHERE node = $1",
            &[&dead],
        )
        .unwrap();
        until("node 1's collector to reclaim node 0's uploads", || {
            uploads(&mut db).iter().all(|(_, n)| *n == live)
                && !files(&objects)
                    .iter()
                    .any(|f| f.starts_with(&doomed_object))
        });
        assert_eq!(uploads(&mut db), vec![(kept_object.clone(), live)]);
        assert!(
            files(&objects)
                .iter()
                .any(|f| f.starts_with(&format!("{kept_object}#"))),
            "node 1's upload in flight was left alone"
        );
        rt.block_on(async {
            let p = clients[1].head(&format!("/{container}/copy")).send().await;
            assert_eq!(p.header("x-ms-copy-status").as_deref(), Some("failed"));
            let why = p.header("x-ms-copy-status-description").unwrap_or_default();
            assert!(why.contains("node running it stopped"), "{why}");
            let d = clients[1]
                .head(&format!("/{container}/doomed"))
                .send()
                .await;
            assert_eq!(d.status, 404);
        });
        assert!(rt.block_on(doomed_put).unwrap().is_none(), "node 0 died");

        // Node 1's upload goes on, commits and reads back whole.
        kept_tx
            .unbounded_send(Ok(Bytes::copy_from_slice(&kept[LEN / 2..])))
            .unwrap();
        drop(kept_tx);
        let put = rt.block_on(kept_put).unwrap().expect("an answer");
        assert_eq!(put.status, 201, "{}", put.text());
        let got = rt.block_on(clients[1].get(&format!("/{container}/kept")).send());
        assert_eq!(got.status, 200);
        assert!(got.body[..] == kept[..], "the blob reads back whole");
        assert!(uploads(&mut db).is_empty());
        assert_eq!(files(&objects), vec![kept_object]);
    }
}
