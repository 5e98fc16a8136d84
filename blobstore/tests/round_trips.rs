//! Database round trips per operation on the PostgreSQL metadata backend,
//! counted two ways: by the store (`Store::metadata_round_trips`, the
//! exchanges it waited for) and by the server (`pg_stat_statements`, every
//! statement including BEGIN and COMMIT). Each count is held exactly, so
//! that a change that adds a round trip to an operation is seen here
//! (docs/cluster.md, "Round trips").

use std::sync::Arc;

use stowage_blobstore::*;

mod support;
use support::*;

/// What one operation cost, in a steady state (every statement prepared).
#[derive(Debug, PartialEq, Eq)]
struct Cost {
    round_trips: u64,
    statements: i64,
}

/// The statements the server ran in this database since the last reset,
/// with their calls.
fn statements(client: &mut postgres::Client) -> Vec<(String, i64)> {
    client
        .query(
            "SELECT query, calls FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             AND query NOT LIKE '%pg_stat_%' ORDER BY query",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

/// Waits until no other session of this database is running a statement
/// or inside a transaction: a read's COMMIT is sent without waiting for
/// its answer, so the server may still be finishing it when the store has
/// answered.
fn quiesce(client: &mut postgres::Client) {
    loop {
        let busy: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND state <> 'idle'",
                &[],
            )
            .unwrap()
            .get(0);
        if busy == 0 {
            return;
        }
        std::thread::yield_now();
    }
}

/// Runs `op` and counts what it cost.
async fn cost<T, E: std::fmt::Debug>(
    store: &Store,
    client: &mut postgres::Client,
    (name, steady): (&str, bool),
    op: impl std::future::Future<Output = std::result::Result<T, E>>,
) -> Cost {
    tokio::task::block_in_place(|| {
        quiesce(client);
        client
            .batch_execute("SELECT pg_stat_statements_reset()")
            .unwrap();
    });
    let before = store.metadata_round_trips().unwrap();
    op.await.unwrap();
    let round_trips = store.metadata_round_trips().unwrap() - before;
    let ran = tokio::task::block_in_place(|| {
        quiesce(client);
        statements(client)
    });
    let statements = ran.iter().map(|s| s.1).sum();
    eprintln!("{name}: {round_trips} round trips, {statements} statements");
    // bench/run's reading of the same counts (bench/src/stats.rs,
    // `DbCounts::round_trips`) agrees with the store's.
    let calls = |prefix: &str| -> i64 {
        ran.iter()
            .filter(|(q, _)| q.to_ascii_uppercase().starts_with(prefix))
            .map(|s| s.1)
            .sum()
    };
    let derived = statements
        - calls("BEGIN")
        - calls("COMMIT")
        - 2 * calls("ROLLBACK")
        - calls("/* DEFERRED */");
    // In a steady state only: `pg_stat_statements` does not see the
    // exchanges that prepare a statement the first time.
    if steady {
        assert_eq!(derived, round_trips as i64, "{name}: as bench/run counts");
    }
    for (query, calls) in &ran {
        let query: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
        eprintln!(
            "  {calls} x {}",
            query.chars().take(110).collect::<String>()
        );
    }
    Cost {
        round_trips,
        statements,
    }
}

fn lease(name: &str, action: LeaseAction) -> LeaseBlobInput {
    LeaseBlobInput {
        account: ACCOUNT.to_owned(),
        container: container("trips"),
        blob: blob(name),
        action,
        conditions: Conditions::default(),
    }
}

fn acquire() -> LeaseAction {
    LeaseAction::Acquire {
        duration: LeaseDuration::Fixed(15),
        proposed_id: None,
    }
}

/// The operations of the benchmarks, one at a time (so on one connection
/// of the pool), each run once before it is counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operations_take_the_round_trips_they_are_known_to_take() {
    let (_pg, url) = postgres_database();
    let clock = Arc::new(ManualClock::new(epoch()));
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig::at(dir.path()).with_metadata(&url), clock)
        .await
        .unwrap();
    let mut client = tokio::task::block_in_place(|| {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .unwrap();
        c
    });
    create_container(&store, "trips").await;
    let data = pattern(4096);
    let c = &mut client;
    let mut costs = Vec::new();
    for round in ["warm", "counted"] {
        let steady = round == "counted";
        let b = format!("{round}-blob");
        let s = &store;
        let staged = format!("{round}-staged");
        let leased = format!("{round}-leased");
        put(s, "trips", &leased, b"x").await;
        let put_4k = cost(s, c, ("put-4k", steady), async {
            Ok::<_, ()>(put(s, "trips", &b, &data).await)
        })
        .await;
        let overwrite_4k = cost(s, c, ("overwrite-4k", steady), async {
            Ok::<_, ()>(put(s, "trips", &b, &data).await)
        })
        .await;
        let get_4k = cost(s, c, ("get-4k", steady), async {
            Ok::<_, ()>(get(s, "trips", &b).await)
        })
        .await;
        let head = cost(
            s,
            c,
            ("head", steady),
            s.get_blob_properties(get_input("trips", &b)),
        )
        .await;
        let put_block = cost(
            s,
            c,
            ("put-block", steady),
            s.put_block(put_block_input("trips", &staged, 0, 4096), body(&data)),
        )
        .await;
        let put_block_list = cost(
            s,
            c,
            ("put-block-list", steady),
            s.put_block_list(put_block_list_input(
                "trips",
                &staged,
                vec![(BlockListKind::Latest, block_id(0))],
            )),
        )
        .await;
        let lease_id = s.lease_blob(lease(&leased, acquire())).await.unwrap();
        let release = LeaseAction::Release {
            id: lease_id.outcome.lease_id.unwrap(),
        };
        let lease_release = cost(
            s,
            c,
            ("lease-release", steady),
            s.lease_blob(lease(&leased, release)),
        )
        .await;
        let lease_acquire = cost(
            s,
            c,
            ("lease-acquire", steady),
            s.lease_blob(lease(&leased, acquire())),
        )
        .await;
        let appended = format!("{round}-appended");
        s.put_blob(
            PutBlobInput {
                blob_type: BlobType::AppendBlob,
                ..put_input("trips", &appended, 0)
            },
            body(b""),
        )
        .await
        .unwrap();
        let append_4k = cost(
            s,
            c,
            ("append-4k", steady),
            s.append_block(
                AppendBlockInput {
                    account: ACCOUNT.to_owned(),
                    container: container("trips"),
                    blob: blob(&appended),
                    conditions: Conditions::default(),
                    append: AppendConditions::default(),
                    lease_id: None,
                    transactional_md5: None,
                    transactional_crc64: None,
                    content_length: 4096,
                },
                body(&data),
            ),
        )
        .await;
        costs = vec![
            ("put-4k", put_4k),
            ("overwrite-4k", overwrite_4k),
            ("get-4k", get_4k),
            ("head", head),
            ("put-block", put_block),
            ("put-block-list", put_block_list),
            ("lease-acquire", lease_acquire),
            ("lease-release", lease_release),
            ("append-4k", append_4k),
        ];
    }
    tokio::task::block_in_place(|| drop(client));
    let cost = |round_trips, statements| Cost {
        round_trips,
        statements,
    };
    assert_eq!(
        costs,
        vec![
            ("put-4k", cost(2, 7)),
            ("overwrite-4k", cost(3, 15)),
            ("get-4k", cost(2, 4)),
            ("head", cost(1, 3)),
            ("put-block", cost(8, 11)),
            ("put-block-list", cost(7, 18)),
            ("lease-acquire", cost(2, 5)),
            ("lease-release", cost(2, 5)),
            ("append-4k", cost(2, 7)),
        ]
    );
}

/// Put Blob's writes are sent without waiting for their answers; when one
/// of them fails (here the new row, refused by a trigger as a constraint
/// would refuse it), the Put Blob fails with that error (an internal error
/// on the wire, not a 503 to retry) and nothing of it is committed: no
/// row, no inline bytes. The connection serves the next write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_deferred_statement_fails_the_put_and_rolls_it_back() {
    let (_pg, url) = postgres_database();
    let clock = Arc::new(ManualClock::new(epoch()));
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(StoreConfig::at(dir.path()).with_metadata(&url), clock)
        .await
        .unwrap();
    create_container(&store, "refusing").await;
    let mut client = tokio::task::block_in_place(|| {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                 IF NEW.name = 'refused' THEN
                     RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation';
                 END IF;
                 RETURN NEW;
             END $$;
             CREATE TRIGGER refuse BEFORE INSERT ON blobs FOR EACH ROW EXECUTE FUNCTION refuse();",
        )
        .unwrap();
        c
    });
    let mut inline = || -> i64 {
        tokio::task::block_in_place(|| {
            client
                .query_one("SELECT COUNT(*) FROM inline_extents", &[])
                .unwrap()
                .get(0)
        })
    };
    put(&store, "refusing", "accepted", b"first").await;
    let before = inline();
    let data = pattern(4096);
    let e = store
        .put_blob(put_input("refusing", "refused", data.len()), body(&data))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::Postgres(p) if p.code() == Some(&postgres::error::SqlState::CHECK_VIOLATION)),
        "{e:?}"
    );
    assert!(!e.is_unavailable(), "{e:?}");
    assert_eq!(inline(), before, "the inline bytes sent before it are gone");
    let missing = store
        .get_blob_properties(get_input("refusing", "refused"))
        .await
        .unwrap_err();
    assert!(matches!(missing, Error::BlobNotFound), "{missing:?}");
    put(&store, "refusing", "accepted", &data).await;
    assert_eq!(get(&store, "refusing", "accepted").await, data);
    tokio::task::block_in_place(|| drop(client));
}
