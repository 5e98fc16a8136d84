//! The table-lock pattern: one holder at a time, fencing tokens that grow,
//! and a holder that learns it lost the lock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use stowage_client::patterns::table_lock::TOKEN_METADATA;
use stowage_client::patterns::table_lock::{TableLock, TableLockSettings, TableLocks};
use stowage_client::{Conditions, DeleteSnapshots, Error, Metadata, UploadOptions};
use stowage_tests::unique;

use super::support::{Env, eventually};

const RENEW: Duration = Duration::from_secs(5);

fn settings() -> TableLockSettings {
    TableLockSettings::default()
        .with_lease_duration(Duration::from_secs(15))
        .with_renew_interval(RENEW)
        .with_retry_interval(Duration::from_secs(1))
}

fn locks(env: &Env, container: &str) -> TableLocks {
    TableLocks::new(env.service.container(container), settings())
}

async fn acquired(locks: &TableLocks, table: &str) -> TableLock {
    locks
        .try_acquire(table)
        .await
        .unwrap()
        .expect("the lock is free")
}

#[tokio::test]
async fn the_first_use_creates_the_lock_and_each_holder_gets_a_greater_token() {
    let env = Env::start().await;
    let container = unique("locks");
    let locks = locks(&env, &container);
    assert_eq!(locks.current_token("orders").await.unwrap(), 0);

    let first = acquired(&locks, "orders").await;
    assert_eq!(first.token(), 1);
    assert_eq!(first.table(), "orders");
    assert!(first.is_held());
    assert_eq!(first.check().unwrap(), 1);
    assert_eq!(locks.current_token("orders").await.unwrap(), 1);
    assert!(locks.try_acquire("orders").await.unwrap().is_none());
    // Another table is independent.
    let customers = acquired(&locks, "customers").await;
    assert_eq!(customers.token(), 1);

    first.release().await.unwrap();
    let second = acquired(&locks, "orders").await;
    assert_eq!(second.token(), 2);

    // Dropping a lock releases it in the background.
    drop(second);
    let free = Arc::new(Mutex::new(None));
    eventually("the dropped lock to be released", || {
        let locks = locks.clone();
        let free = free.clone();
        async move {
            match locks.try_acquire("orders").await.unwrap() {
                Some(lock) => {
                    *free.lock().unwrap() = Some(lock);
                    true
                }
                None => false,
            }
        }
    })
    .await;
    let third = free.lock().unwrap().take().unwrap();
    assert_eq!(third.token(), 3);
}

#[tokio::test]
async fn background_renewals_keep_the_lock_past_its_lease_duration() {
    let env = Env::start().await;
    let locks = locks(&env, &unique("renew"));
    let holder = acquired(&locks, "t").await;
    for _ in 0..6 {
        env.advance(RENEW);
        let now = env.now();
        let h = &holder;
        eventually("a renewal", || async move { h.renewed_at() == now }).await;
    }
    assert!(holder.is_held());
    assert!(locks.try_acquire("t").await.unwrap().is_none());
}

#[tokio::test]
async fn a_holder_whose_lease_was_broken_learns_it_within_one_renewal_period() {
    let env = Env::start().await;
    let locks = locks(&env, &unique("broken"));
    let old = acquired(&locks, "orders").await;
    locks.break_lock("orders", None).await.unwrap();
    let new = acquired(&locks, "orders").await;
    assert!(old.token() < new.token());
    assert_eq!(locks.current_token("orders").await.unwrap(), new.token());

    env.advance(RENEW);
    tokio::time::timeout(Duration::from_secs(10), old.lost())
        .await
        .expect("the old holder learns at its next renewal");
    assert!(!old.is_held());
    match old.check() {
        Err(Error::LockLost { table }) => assert_eq!(table, "orders"),
        other => panic!("expected LockLost, got {other:?}"),
    }
    let h = &new;
    let now = env.now();
    eventually("the new holder's renewal", || async move {
        h.renewed_at() == now
    })
    .await;
    assert!(new.is_held());
    // Releasing a lost lock is harmless and does not free the new holder's.
    old.release().await.unwrap();
    assert!(locks.try_acquire("orders").await.unwrap().is_none());
}

/// Finding 8 of issue 16: deleting the lock blob used to start the tokens
/// again at 1, below a stale holder's. The counter lives in a blob of its
/// own, so the next holder's token is still greater.
#[tokio::test]
async fn tokens_keep_growing_when_the_lock_blob_is_deleted() {
    let env = Env::start().await;
    let locks = locks(&env, &unique("deleted"));
    let stale = acquired(&locks, "orders").await;
    assert_eq!(stale.token(), 1);
    // The holder pauses; someone breaks its lease and deletes the lock blob.
    locks.break_lock("orders", None).await.unwrap();
    locks
        .lock_blob("orders")
        .delete(DeleteSnapshots::Include, &Conditions::new())
        .await
        .unwrap();
    assert_eq!(locks.current_token("orders").await.unwrap(), 1);

    let next = acquired(&locks, "orders").await;
    assert_eq!(next.token(), 2);
    assert!(next.token() > stale.token());
    next.release().await.unwrap();
    locks
        .lock_blob("orders")
        .delete(DeleteSnapshots::Include, &Conditions::new())
        .await
        .unwrap();
    let third = acquired(&locks, "orders").await;
    assert_eq!(third.token(), 3);
    assert_eq!(locks.current_token("orders").await.unwrap(), 3);
    // The counter blob holds the latest token.
    let counter = locks
        .counter_blob("orders")
        .properties(&Conditions::new())
        .await
        .unwrap();
    assert_eq!(counter.metadata.get(TOKEN_METADATA), Some("3"));
}

/// A lock blob written before the counter existed carries its token in its
/// own metadata; the counter starts above it.
#[tokio::test]
async fn the_counter_starts_above_a_token_recorded_in_an_older_lock_blob() {
    let env = Env::start().await;
    let container = unique("older");
    let locks = locks(&env, &container);
    env.service
        .container(&container)
        .create_if_not_exists()
        .await
        .unwrap();
    let mut metadata = Metadata::new();
    metadata.insert(TOKEN_METADATA, "7");
    let older = UploadOptions {
        metadata,
        ..UploadOptions::default()
    };
    locks
        .lock_blob("orders")
        .upload(Bytes::new(), &older)
        .await
        .unwrap();
    assert_eq!(locks.current_token("orders").await.unwrap(), 7);
    let holder = acquired(&locks, "orders").await;
    assert_eq!(holder.token(), 8);
}

#[tokio::test]
async fn of_two_tasks_racing_for_a_new_lock_exactly_one_wins() {
    let env = Env::start().await;
    let container = unique("race");
    let (a, b) = (locks(&env, &container), locks(&env, &container));
    let (x, y) = tokio::join!(a.try_acquire("t"), b.try_acquire("t"));
    let winners: Vec<TableLock> = [x.unwrap(), y.unwrap()].into_iter().flatten().collect();
    assert_eq!(winners.len(), 1);
    assert_eq!(winners[0].token(), 1);
}

#[tokio::test]
async fn two_contending_tasks_hold_the_lock_one_at_a_time_with_increasing_tokens() {
    let env = Env::start().await;
    let container = unique("contend");
    let held = Arc::new(AtomicBool::new(false));
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let locks = TableLocks::new(
            env.service.container(&container),
            settings()
                .with_lease_duration(Duration::from_secs(60))
                .with_renew_interval(Duration::from_secs(20)),
        );
        let (held, tokens) = (held.clone(), tokens.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..3 {
                let lock = locks
                    .acquire("t", Duration::from_secs(24 * 3600))
                    .await
                    .unwrap();
                assert!(!held.swap(true, Ordering::SeqCst), "two holders at once");
                tokens.lock().unwrap().push(lock.token());
                tokio::task::yield_now().await;
                held.store(false, Ordering::SeqCst);
                lock.release().await.unwrap();
            }
        }));
    }
    // Waiting tasks retry on the client's clock: keep it moving.
    for _ in 0..3000 {
        if tasks.iter().all(|t| t.is_finished()) {
            break;
        }
        env.advance(Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for task in tasks {
        task.await.unwrap();
    }
    let tokens = tokens.lock().unwrap().clone();
    assert_eq!(tokens, [1, 2, 3, 4, 5, 6]);
}

#[tokio::test]
async fn waiting_for_a_held_lock_times_out_by_the_clock() {
    let env = Env::start().await;
    let locks = locks(&env, &unique("timeout"));
    let _holder = acquired(&locks, "t").await;
    let waiter = {
        let locks = locks.clone();
        tokio::spawn(async move { locks.acquire("t", Duration::from_secs(3)).await })
    };
    for _ in 0..500 {
        if waiter.is_finished() {
            break;
        }
        env.advance(Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    match waiter.await.unwrap() {
        Err(Error::LockTimeout { table }) => assert_eq!(table, "t"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}
