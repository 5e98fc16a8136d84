//! On PostgreSQL a write that loses a race (a deadlock, which two writes
//! of blobs sharing an extent can meet, or a serialization failure) is run
//! again inside the node instead of being answered 503
//! (docs/cluster.md, "Faults"). A trigger makes the database refuse the
//! first attempt of one write with that error; a sequence, which a
//! rollback does not undo, counts the attempts.

use std::sync::Arc;

use stowage_blobstore::*;

mod support;
use support::*;

/// Makes the first `DELETE` on `table` fail with SQLSTATE `code`; later
/// ones pass. Returns a function that reads how many were attempted.
fn fail_first_delete(url: &str, table: &str, code: &str) -> impl Fn() -> i64 {
    sql(
        url,
        &format!(
            "CREATE SEQUENCE attempts_{table};
             CREATE FUNCTION lose_{table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                 IF nextval('attempts_{table}') = 1 THEN
                     RAISE EXCEPTION 'lost a race' USING ERRCODE = '{code}';
                 END IF;
                 RETURN OLD;
             END $$;
             CREATE TRIGGER lose_{table} BEFORE DELETE ON {table}
                 FOR EACH ROW EXECUTE FUNCTION lose_{table}();"
        ),
    );
    let (url, table) = (url.to_owned(), table.to_owned());
    move || {
        tokio::task::block_in_place(|| {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            c.query_one(&format!("SELECT last_value FROM attempts_{table}"), &[])
                .unwrap()
                .get(0)
        })
    }
}

/// Runs `batch` on a connection of its own (the client blocks: off the
/// runtime's workers).
fn sql(url: &str, batch: &str) {
    tokio::task::block_in_place(|| {
        let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
        c.batch_execute(batch).unwrap();
    });
}

async fn store_on(url: &str, dir: &std::path::Path) -> Store {
    let clock = Arc::new(ManualClock::new(epoch()));
    Store::open(StoreConfig::at(dir).with_metadata(url), clock)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_blob_that_lost_a_deadlock_is_run_again() {
    let (_pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let store = store_on(&url, dir.path()).await;
    create_container(&store, "retried").await;
    put(&store, "retried", "doomed", b"bytes").await;
    let attempts = fail_first_delete(&url, "blobs", "40P01");
    store
        .delete_blob(delete_input("retried", "doomed"))
        .await
        .unwrap();
    assert_eq!(attempts(), 2, "refused once, then run again");
    let e = store
        .get_blob(get_input("retried", "doomed"))
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, Error::BlobNotFound), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_container_that_lost_a_serialization_race_is_run_again() {
    let (_pg, url) = postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let store = store_on(&url, dir.path()).await;
    create_container(&store, "gone").await;
    put(&store, "gone", "inside", b"bytes").await;
    let attempts = fail_first_delete(&url, "containers", "40001");
    store
        .delete_container(DeleteContainerInput {
            account: "devstoreaccount1".into(),
            container: container("gone"),
            conditions: Conditions::default(),
            lease_id: None,
            retention: None,
        })
        .await
        .unwrap();
    assert_eq!(attempts(), 2, "refused once, then run again");
    let e = store
        .get_blob(get_input("gone", "inside"))
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, Error::ContainerNotFound), "{e:?}");
}
