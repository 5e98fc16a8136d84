//! The access log: one line per request, plain or JSON. The handler emits
//! each request as a `tracing` event (target [`ACCESS_TARGET`]); the
//! [`AccessLayer`] turns the event's fields back into an `AccessRecord`
//! and writes it in the chosen format.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Context;

/// The `tracing` target of access-log events.
pub const ACCESS_TARGET: &str = "stowage::access";

/// How access-log lines are written (`--accessLogFormat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AccessLogFormat {
    /// Space-separated fields, `-` for an empty one.
    #[default]
    Plain,
    /// One JSON object per line.
    Json,
}

/// One request, as the access log shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct AccessRecord {
    /// When the request arrived (the server's clock), ISO 8601.
    pub time: String,
    pub account: Option<String>,
    pub operation: String,
    pub status: u64,
    pub error_code: Option<String>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Until the answer's head was ready, in milliseconds.
    pub latency_ms: f64,
    pub request_id: String,
    pub client_request_id: Option<String>,
    pub method: String,
    /// The path as sent (no query string: it may hold a signature).
    pub path: String,
}

impl AccessRecord {
    /// `time account operation status error-code bytes-in bytes-out
    /// latency request-id client-request-id method path`.
    pub(crate) fn plain(&self) -> String {
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        let mut line = String::with_capacity(160);
        let _ = write!(
            line,
            "{} {} {} {} {} {} {} {:.3}ms {} {} {} {}",
            self.time,
            dash(&self.account),
            self.operation,
            self.status,
            dash(&self.error_code),
            self.bytes_in,
            self.bytes_out,
            self.latency_ms,
            self.request_id,
            // Client ids are the client's text: spaces would split the field.
            dash(&self.client_request_id).replace(' ', "%20"),
            self.method,
            self.path,
        );
        line
    }

    /// The record as one JSON object.
    pub(crate) fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub(crate) fn format(&self, format: AccessLogFormat) -> String {
        match format {
            AccessLogFormat::Plain => self.plain(),
            AccessLogFormat::Json => self.json(),
        }
    }
}

impl Visit for AccessRecord {
    fn record_str(&mut self, field: &Field, value: &str) {
        let v = value.to_owned();
        match field.name() {
            "time" => self.time = v,
            "account" => self.account = Some(v),
            "operation" => self.operation = v,
            "error_code" => self.error_code = Some(v),
            "request_id" => self.request_id = v,
            "client_request_id" => self.client_request_id = Some(v),
            "method" => self.method = v,
            "path" => self.path = v,
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "status" => self.status = value,
            "bytes_in" => self.bytes_in = value,
            "bytes_out" => self.bytes_out = value,
            _ => {}
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_u64(field, value.max(0) as u64);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if field.name() == "latency_ms" {
            self.latency_ms = value;
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

/// Writes every access-log event it sees as one line.
pub struct AccessLayer {
    format: AccessLogFormat,
    out: Mutex<Box<dyn Write + Send>>,
}

impl AccessLayer {
    /// Lines in `format` to `out` (each written with one `write` call).
    pub fn new(format: AccessLogFormat, out: Box<dyn Write + Send>) -> AccessLayer {
        AccessLayer {
            format,
            out: Mutex::new(out),
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for AccessLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != ACCESS_TARGET {
            return;
        }
        let mut record = AccessRecord::default();
        event.record(&mut record);
        let mut line = record.format(self.format);
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        // A log that cannot be written must not fail the request.
        let _ = out.write_all(line.as_bytes());
    }
}

/// How often the [`BatchedWriter`]'s thread writes out what has queued up.
const BATCH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// Queued bytes beyond which the writer that queues them writes them out
/// itself, so the queue stays small however fast requests come.
const BATCH_MAX: usize = 1024 * 1024;

struct Batches {
    /// The bytes queued since the last write.
    queued: Mutex<Vec<u8>>,
    /// The output; held while queued bytes are taken and written, so that
    /// batches are written in the order they were taken.
    out: Mutex<Box<dyn Write + Send>>,
}

impl Batches {
    fn write_out(&self) -> std::io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let batch = std::mem::take(&mut *self.queued.lock().unwrap_or_else(|e| e.into_inner()));
        if !batch.is_empty() {
            out.write_all(&batch)?;
        }
        out.flush()
    }
}

/// A writer that queues its bytes in memory, written out every 50 ms by a
/// thread of its own (one system call for all the lines of that time) or
/// by the writer that finds 1 MiB queued: a request pays for a copy under
/// an uncontended lock instead of a `write`, which was most of the access
/// log's cost, and wakes no thread. Clones share the queue;
/// [`Write::flush`] writes out everything queued before it.
#[derive(Clone)]
pub struct BatchedWriter {
    batches: Arc<Batches>,
}

impl BatchedWriter {
    /// Writes to `out` from a new thread, which ends once every clone is
    /// dropped.
    ///
    /// # Errors
    /// The thread cannot be started.
    pub fn new(out: Box<dyn Write + Send>) -> std::io::Result<BatchedWriter> {
        let batches = Arc::new(Batches {
            queued: Mutex::new(Vec::new()),
            out: Mutex::new(out),
        });
        let shared = Arc::downgrade(&batches);
        std::thread::Builder::new()
            .name("stowage-access-log".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(BATCH_INTERVAL);
                    let Some(batches) = shared.upgrade() else {
                        return;
                    };
                    // Nothing to tell: a line that cannot be written is lost.
                    let _ = batches.write_out();
                }
            })?;
        Ok(BatchedWriter { batches })
    }
}

impl Write for BatchedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let full = {
            let mut queued = self
                .batches
                .queued
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            queued.extend_from_slice(buf);
            queued.len() >= BATCH_MAX
        };
        if full {
            self.batches.write_out()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.batches.write_out()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> AccessRecord {
        AccessRecord {
            time: "2024-09-03T10:15:07.0000000Z".into(),
            account: Some("devstoreaccount1".into()),
            operation: "GetBlob".into(),
            status: 404,
            error_code: Some("BlobNotFound".into()),
            bytes_in: 0,
            bytes_out: 215,
            latency_ms: 1.25,
            request_id: "4f1c".into(),
            client_request_id: None,
            method: "GET".into(),
            path: "/devstoreaccount1/c/b".into(),
        }
    }

    #[test]
    fn plain_lines_have_one_field_each_and_dashes_for_none() {
        let table = [
            (
                record(),
                "2024-09-03T10:15:07.0000000Z devstoreaccount1 GetBlob 404 BlobNotFound 0 215 1.250ms 4f1c - GET /devstoreaccount1/c/b",
            ),
            (
                AccessRecord {
                    account: None,
                    operation: "Unknown".into(),
                    status: 400,
                    error_code: Some("InvalidUri".into()),
                    client_request_id: Some("my id".into()),
                    latency_ms: 0.0004,
                    ..record()
                },
                "2024-09-03T10:15:07.0000000Z - Unknown 400 InvalidUri 0 215 0.000ms 4f1c my%20id GET /devstoreaccount1/c/b",
            ),
            (
                AccessRecord {
                    operation: "PutBlob".into(),
                    status: 201,
                    error_code: None,
                    bytes_in: 4096,
                    bytes_out: 0,
                    method: "PUT".into(),
                    ..record()
                },
                "2024-09-03T10:15:07.0000000Z devstoreaccount1 PutBlob 201 - 4096 0 1.250ms 4f1c - PUT /devstoreaccount1/c/b",
            ),
        ];
        for (r, want) in table {
            assert_eq!(r.plain(), want);
        }
    }

    #[test]
    fn json_lines_parse_back_to_the_same_fields() {
        let line = record().format(AccessLogFormat::Json);
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["operation"], "GetBlob");
        assert_eq!(v["status"], 404);
        assert_eq!(v["error_code"], "BlobNotFound");
        assert_eq!(v["client_request_id"], serde_json::Value::Null);
        assert_eq!(v["bytes_out"], 215);
        assert_eq!(v["latency_ms"], 1.25);
        assert_eq!(v["request_id"], "4f1c");
    }

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_batched_writer_keeps_order_and_flush_writes_every_byte() {
        let sink = Sink::default();
        let mut w = BatchedWriter::new(Box::new(sink.clone())).unwrap();
        let mut other = w.clone();
        let mut want = String::new();
        // Enough to pass the 1 MiB bound a few times.
        for i in 0..200_000 {
            let line = format!("line {i}\n");
            let target = if i % 2 == 0 { &mut w } else { &mut other };
            target.write_all(line.as_bytes()).unwrap();
            want.push_str(&line);
        }
        w.flush().unwrap();
        assert_eq!(
            String::from_utf8(sink.0.lock().unwrap().clone()).unwrap(),
            want
        );
    }

    /// An event emitted the way the handler emits it comes out as the same
    /// line the record formats to.
    #[test]
    fn the_layer_rebuilds_the_record_from_the_event() {
        use tracing_subscriber::layer::SubscriberExt as _;
        let sink = Sink::default();
        let subscriber = tracing_subscriber::registry().with(AccessLayer::new(
            AccessLogFormat::Plain,
            Box::new(sink.clone()),
        ));
        let r = record();
        tracing::subscriber::with_default(subscriber, || {
            super::super::emit_access(&r);
            tracing::info!("not an access event");
        });
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, format!("{}\n", r.plain()));
    }
}
