//! Writes log records in batches to hourly append blobs and reads the last
//! minute back by time range.
//!
//! Needs a server with the development account: `cargo run -p
//! stowage-server`, then `cargo run -p stowage-client --example log_blobs`.
//! Another port or server: pass its endpoint
//! (`... --example log_blobs -- http://127.0.0.1:10010/devstoreaccount1`) or a
//! connection string, or set `STOWAGE_BLOB_ENDPOINT` or
//! `AZURE_STORAGE_CONNECTION_STRING`.

mod common;

use std::time::Duration;

use stowage_client::Error;
use stowage_client::patterns::log_blobs::{
    LogReader, LogWriter, LogWriterSettings, inverted_ticks,
};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let service = common::service()?;
    let container = service.container("example-logs");
    container.create_if_not_exists().await?;
    let clock = service.clock();
    let start = clock.now();

    // Small batches and a short interval: little is lost on a crash, at the
    // cost of more requests.
    let settings = LogWriterSettings::default()
        .with_batch_size(10)
        .with_flush_interval(Some(Duration::from_secs(1)));
    let writer = LogWriter::new(container.clone(), "checkout", settings);
    for i in 0..25 {
        writer.write(format!("order {i} paid")).await?;
    }
    writer.close().await?;

    let reader = LogReader::new(container, "checkout");
    let range = reader
        .read(start, clock.now() + Duration::from_secs(1))
        .await?;
    for record in range.records.iter().take(3) {
        let when = httpdate::fmt_http_date(record.timestamp);
        println!(
            "{} {when} {}",
            inverted_ticks(record.timestamp),
            record.body
        );
    }
    println!(
        "{} records from {} blob(s) under {} hour prefix(es)",
        range.records.len(),
        range.stats.blobs_read,
        range.stats.prefixes_listed
    );
    Ok(())
}
