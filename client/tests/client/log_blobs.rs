//! The log-blobs pattern: batched appends named by hour, read back by range.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use stowage_client::patterns::log_blobs::{
    FIRST_METADATA, LAST_METADATA, LogBlobName, LogReader, LogWriter, LogWriterSettings,
};
use stowage_client::{BlobType, Conditions};

use super::support::{Env, eventually};

/// Moves both clocks to `seconds_before` the next full hour.
fn to_before_next_hour(env: &Env, seconds_before: u64) -> SystemTime {
    let now = env.now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let target = UNIX_EPOCH + Duration::from_secs((now / 3600 + 1) * 3600 - seconds_before);
    env.advance(target.duration_since(env.now()).unwrap());
    target
}

fn manual() -> LogWriterSettings {
    LogWriterSettings::default()
        .with_batch_size(1000)
        .with_flush_interval(None)
}

fn bodies(range: &stowage_client::patterns::log_blobs::LogRange) -> Vec<&str> {
    range.records.iter().map(|r| r.body.as_str()).collect()
}

#[tokio::test]
async fn a_range_query_across_an_hour_boundary_returns_records_in_order() {
    let env = Env::start().await;
    let container = env.container("logs").await;
    let writer = LogWriter::new(container.clone(), "orders", manual());
    let t0 = to_before_next_hour(&env, 10);
    for (step, body) in [
        (0, "a"),
        (5, "b\twith tab"),
        (10, "c\nsecond line"),
        (5, "d"),
    ] {
        env.advance(Duration::from_secs(step));
        writer.write(body).await.unwrap();
    }
    assert_eq!(writer.buffered().await, 4);
    writer.flush().await.unwrap();
    assert_eq!(writer.buffered().await, 0);
    let stats = writer.stats().await;
    assert_eq!(
        (stats.records_written, stats.blobs_created, stats.appends),
        (4, 2, 2)
    );

    // One blob per hour, named by the minute of its first record.
    let before = LogBlobName::new("orders", t0, 0);
    let after = LogBlobName::new("orders", t0 + Duration::from_secs(15), 0);
    assert_ne!(before.hour(), after.hour());
    let first_blob = container.blob(&before.to_string());
    let props = first_blob.properties(&Conditions::new()).await.unwrap();
    assert_eq!(props.blob_type, BlobType::AppendBlob);
    let text = String::from_utf8(first_blob.download_bytes().await.unwrap().to_vec()).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(
        props
            .metadata
            .get(FIRST_METADATA)
            .unwrap()
            .ends_with(":50.0000000Z")
    );
    assert!(
        props
            .metadata
            .get(LAST_METADATA)
            .unwrap()
            .ends_with(":55.0000000Z")
    );
    assert!(container.blob(&after.to_string()).exists().await.unwrap());

    let reader = LogReader::new(container.clone(), "orders");
    let range = reader
        .read(t0 + Duration::from_secs(2), t0 + Duration::from_secs(18))
        .await
        .unwrap();
    assert_eq!(bodies(&range), ["b\twith tab", "c\nsecond line"]);
    assert_eq!(range.stats.prefixes_listed, 2);
    assert_eq!(range.stats.blobs_read, 2);
    assert_eq!(range.records[0].timestamp, t0 + Duration::from_secs(5));

    let everything = reader
        .read(
            t0 - Duration::from_secs(3600),
            t0 + Duration::from_secs(3600),
        )
        .await
        .unwrap();
    assert_eq!(
        bodies(&everything),
        ["a", "b\twith tab", "c\nsecond line", "d"]
    );
    assert_eq!(everything.stats.prefixes_listed, 3);

    // Another service's log is not read.
    let other = LogReader::new(container, "payments");
    assert!(
        other
            .read(t0, t0 + Duration::from_secs(60))
            .await
            .unwrap()
            .records
            .is_empty()
    );
}

#[tokio::test]
async fn blobs_roll_past_the_size_limit_and_the_reader_skips_them_by_metadata() {
    let env = Env::start().await;
    let container = env.container("rolling").await;
    let settings = LogWriterSettings::default()
        .with_batch_size(1)
        .with_flush_interval(None)
        .with_max_blob_size(60);
    let writer = LogWriter::new(container.clone(), "svc", settings);
    let t0 = to_before_next_hour(&env, 30 * 60);
    let mut times = Vec::new();
    for i in 0..4 {
        times.push(env.now());
        writer.write(format!("record {i}")).await.unwrap();
        env.advance(Duration::from_secs(60));
    }
    assert_eq!(writer.stats().await.blobs_created, 4);
    let last = writer.current_blob().await.unwrap();
    assert_eq!(
        last,
        LogBlobName::new("svc", t0 + Duration::from_secs(180), 3)
    );

    let reader = LogReader::new(container, "svc");
    let range = reader
        .read(times[2], times[3] + Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(bodies(&range), ["record 2", "record 3"]);
    assert_eq!(range.stats.prefixes_listed, 1);
    assert_eq!(range.stats.blobs_listed, 4);
    assert_eq!(range.stats.blobs_skipped, 2);
    assert_eq!(range.stats.blobs_read, 2);
}

#[tokio::test]
async fn the_flush_interval_writes_a_partial_batch_when_the_clock_passes_it() {
    let env = Env::start().await;
    let container = env.container("interval").await;
    let settings = LogWriterSettings::default()
        .with_batch_size(1000)
        .with_flush_interval(Some(Duration::from_secs(5)));
    let writer = LogWriter::new(container.clone(), "svc", settings);
    let start = env.now();
    writer.write("one").await.unwrap();
    writer.write("two").await.unwrap();
    assert_eq!(writer.stats().await.records_written, 0);

    env.advance(Duration::from_secs(5));
    let w = &writer;
    eventually("the background flush", || async move {
        w.stats().await.records_written == 2
    })
    .await;
    let range = LogReader::new(container, "svc")
        .read(start, start + Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(bodies(&range), ["one", "two"]);
    writer.close().await.unwrap();
}

#[tokio::test]
async fn a_new_writer_continues_the_hour_with_the_next_sequence_number() {
    let env = Env::start().await;
    let container = env.container("restart").await;
    let first = LogWriter::new(container.clone(), "svc", manual());
    first.write("from the first life").await.unwrap();
    first.close().await.unwrap();
    env.advance(Duration::from_secs(1));

    let second = LogWriter::new(container.clone(), "svc", manual());
    second.write("from the second life").await.unwrap();
    second.flush().await.unwrap();
    assert_eq!(second.current_blob().await.unwrap().sequence, 1);

    let now = env.now();
    let range = LogReader::new(container, "svc")
        .read(now - Duration::from_secs(60), now + Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(
        bodies(&range),
        ["from the first life", "from the second life"]
    );
}
