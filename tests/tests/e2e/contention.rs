//! End-to-end tests of optimistic concurrency under contention
//! (docs/wire/conditions.md#one-transaction): many clients updating one blob through
//! conditional requests, where every update must either win or learn that it
//! lost, and nothing is silently overwritten.
//!
//! Each client is its own tokio task with its own `Client` (its own
//! connection pool). A barrier releases them together. There are no sleeps
//! and no timing assertions: only the outcome counts.

use std::sync::Arc;

use stowage_tests::{Client, Response, TestServer, unique};
use tokio::sync::Barrier;

const CLIENTS: usize = 16;
const INCREMENTS: usize = 100;

/// Starts `CLIENTS` tasks running `work(client, index)` together and returns
/// their results in index order.
async fn run_together<T, F, Fut>(server: &TestServer, work: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(Client, usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let mut tasks = Vec::with_capacity(CLIENTS);
    for i in 0..CLIENTS {
        let barrier = barrier.clone();
        let job = work(server.client(), i);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            job.await
        }));
    }
    let mut results = Vec::with_capacity(CLIENTS);
    for task in tasks {
        results.push(task.await.expect("client task"));
    }
    results
}

/// What one incrementing client saw.
struct Increments {
    /// The value each of its successful writes stored.
    written: Vec<u64>,
    /// How many of its writes were refused with 412.
    conflicts: u64,
}

/// `INCREMENTS` read-modify-write cycles: GET the counter, PUT value + 1 with
/// `If-Match` of the version read, and start the cycle again on 412.
async fn increment(c: Client, path: String) -> Increments {
    let mut written = Vec::with_capacity(INCREMENTS);
    let mut conflicts = 0;
    for _ in 0..INCREMENTS {
        loop {
            let read = c.get(&path).send().await;
            assert_eq!(read.status, 200, "read: {}", read.text());
            let value: u64 = read.text().parse().expect("the counter is an integer");
            let next = value + 1;
            let write = c
                .put(&path)
                .header("x-ms-blob-type", "BlockBlob")
                .header("if-match", &read.etag())
                .body(next.to_string())
                .send()
                .await;
            match write.status {
                201 => {
                    written.push(next);
                    break;
                }
                412 => {
                    write.assert_error(412, "ConditionNotMet");
                    conflicts += 1;
                }
                other => panic!("conditional write answered {other}: {}", write.text()),
            }
        }
    }
    Increments { written, conflicts }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_clients_incrementing_one_counter_with_if_match_lose_no_update() {
    let server = TestServer::start().await;
    let setup = server.client();
    let container = unique("contention");
    setup.create_container(&container).await;
    setup.put_blob(&container, "counter", b"0").await;
    let path = format!("/{container}/counter");

    let results = run_together(&server, |c, _| increment(c, path.clone())).await;

    let total = (CLIENTS * INCREMENTS) as u64;
    let final_value = setup.get(&path).send().await;
    assert_eq!(final_value.status, 200);
    assert_eq!(
        final_value.text(),
        total.to_string(),
        "no increment was lost"
    );
    // Each successful write stored a different value: every value 1..=1600
    // was written exactly once, so no two writers won on the same version.
    let mut written: Vec<u64> = results.iter().flat_map(|r| r.written.clone()).collect();
    written.sort_unstable();
    assert_eq!(written, (1..=total).collect::<Vec<_>>());
    let conflicts: u64 = results.iter().map(|r| r.conflicts).sum();
    println!(
        "counter: {CLIENTS} clients x {INCREMENTS} increments = {total}; \
         412 ConditionNotMet answers: {conflicts}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_create_only_puts_of_one_name_give_exactly_one_201() {
    let server = TestServer::start().await;
    let setup = server.client();
    let container = unique("contention");
    setup.create_container(&container).await;
    let path = format!("/{container}/created-once");

    let responses: Vec<Response> = run_together(&server, |c, i| {
        let path = path.clone();
        async move {
            c.put(&path)
                .header("x-ms-blob-type", "BlockBlob")
                .header("if-none-match", "*")
                .body(format!("writer {i}"))
                .send()
                .await
        }
    })
    .await;

    let winners: Vec<usize> = (0..CLIENTS)
        .filter(|&i| responses[i].status == 201)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one creator wins: {winners:?}");
    for (i, r) in responses.iter().enumerate() {
        if i != winners[0] {
            r.assert_error(409, "BlobAlreadyExists");
        }
    }
    // The blob holds the winner's content and version.
    let winner = &responses[winners[0]];
    let r = setup.get(&path).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), format!("writer {}", winners[0]));
    assert_eq!(r.etag(), winner.etag());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_with_the_same_if_match_on_set_blob_metadata_one_wins_one_gets_412() {
    const ROUNDS: usize = 20;
    let server = TestServer::start().await;
    let c = server.client();
    let container = unique("contention");
    c.create_container(&container).await;
    c.put_blob(&container, "blob", b"content").await;
    let path = format!("/{container}/blob?comp=metadata");
    let (a, b) = (server.client(), server.client());
    for round in 0..ROUNDS {
        let etag = c.head(&format!("/{container}/blob")).send().await.etag();
        let barrier = Arc::new(Barrier::new(2));
        let write = |client: Client, writer: &'static str| {
            let (path, etag, barrier) = (path.clone(), etag.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                client
                    .put(&path)
                    .header("x-ms-meta-writer", writer)
                    .header("if-match", &etag)
                    .send()
                    .await
            })
        };
        let (ta, tb) = (write(a.clone(), "a"), write(b.clone(), "b"));
        let ra = ta.await.expect("writer a");
        let rb = tb.await.expect("writer b");
        let (winner, name, loser) = match (ra.status, rb.status) {
            (200, _) => (ra, "a", rb),
            (_, 200) => (rb, "b", ra),
            _ => panic!(
                "round {round}: nobody won: {} {} / {} {}",
                ra.status,
                ra.text(),
                rb.status,
                rb.text()
            ),
        };
        assert_eq!(winner.status, 200, "round {round}");
        assert_eq!(loser.status, 412, "round {round}: both writers won");
        loser.assert_error(412, "ConditionNotMet");
        // The stored metadata and version are the winner's.
        let r = c.get(&path).send().await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-ms-meta-writer").as_deref(), Some(name));
        assert_eq!(r.etag(), winner.etag(), "round {round}");
        assert_ne!(r.etag(), etag, "round {round}: a new ETag");
    }
}
