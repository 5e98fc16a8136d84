//! Two workers take turns on one table's lock; each turn gets a greater
//! fencing token, which a table engine would check on every write.
//!
//! Needs a server with the development account: `cargo run -p
//! stowage-server`, then `cargo run -p stowage-client --example table_lock`.
//! Another port or server: pass its endpoint
//! (`... --example table_lock -- http://127.0.0.1:10010/devstoreaccount1`) or a
//! connection string, or set `STOWAGE_BLOB_ENDPOINT` or
//! `AZURE_STORAGE_CONNECTION_STRING`.

mod common;

use std::time::Duration;

use stowage_client::Error;
use stowage_client::patterns::table_lock::{TableLockSettings, TableLocks};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let service = common::service()?;
    let locks = TableLocks::new(
        service.container("example-locks"),
        TableLockSettings::default().with_retry_interval(Duration::from_millis(100)),
    );

    let mut workers = Vec::new();
    for worker in ["alpha", "beta"] {
        let locks = locks.clone();
        workers.push(tokio::spawn(async move {
            for _ in 0..3 {
                let lock = locks.acquire("orders", Duration::from_secs(60)).await?;
                println!("{worker} holds orders with token {}", lock.token());
                // A table engine would take each write only with a token at
                // least as high as the highest it has seen.
                let _token = lock.check()?;
                lock.release().await?;
            }
            Ok::<(), Error>(())
        }));
    }
    for worker in workers {
        worker.await.expect("worker task")?;
    }
    println!("latest token: {}", locks.current_token("orders").await?);
    Ok(())
}
