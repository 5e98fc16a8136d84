//! The buffered log writer.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::TryStreamExt;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use super::names::{LogBlobName, hour_of, hour_prefix};
use super::records::{LogRecord, encode};
use super::{FIRST_METADATA, LAST_METADATA};
use crate::timestamps::iso8601;
use crate::{
    AppendOptions, BlobClient, BlobEntry, Clock, Conditions, ContainerClient, ContentProperties,
    Error, ErrorCode, ListBlobsOptions, Metadata, Result, UploadOptions,
};

/// How the writer trades reliability against cost.
///
/// Fewer, larger batches mean fewer requests (cheaper) but more records
/// lost if the process dies before a flush; a short flush interval bounds
/// that loss in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogWriterSettings {
    /// Flush as soon as this many records are buffered.
    pub batch_size: usize,
    /// Flush whatever is buffered this often (by the client's clock);
    /// `None` flushes only on size and on request.
    pub flush_interval: Option<Duration>,
    /// Start a new blob when the current one would grow past this.
    pub max_blob_size: u64,
    /// The most bytes sent in one Append Block (the service's limit is
    /// 4 MiB before version 2022-11-02, 100 MiB after).
    pub max_append_size: usize,
}

impl Default for LogWriterSettings {
    fn default() -> LogWriterSettings {
        LogWriterSettings {
            batch_size: 500,
            flush_interval: Some(Duration::from_secs(5)),
            max_blob_size: 64 * 1024 * 1024,
            max_append_size: 4 * 1024 * 1024,
        }
    }
}

impl LogWriterSettings {
    /// Records per batch (at least 1).
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// Time between flushes, or `None`.
    pub fn with_flush_interval(mut self, d: Option<Duration>) -> Self {
        self.flush_interval = d;
        self
    }

    /// Size at which a new blob is started.
    pub fn with_max_blob_size(mut self, n: u64) -> Self {
        self.max_blob_size = n;
        self
    }

    /// Largest single append (at least 1).
    pub fn with_max_append_size(mut self, n: usize) -> Self {
        self.max_append_size = n.max(1);
        self
    }
}

/// What a writer has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Records stored in blobs.
    pub records_written: u64,
    /// Append Block calls that succeeded.
    pub appends: u64,
    /// Blobs created.
    pub blobs_created: u64,
    /// Flushes that failed (their records stay buffered).
    pub failed_flushes: u64,
}

/// Buffers records and writes them in batches to append blobs named by
/// hour (see the [module docs](super)).
///
/// Each blob's metadata is widened to cover a batch **before** the batch is
/// appended, so a blob's `first`/`last` always cover its records and a
/// reader that skips blobs by metadata never misses one. Every append names
/// the position it expects, so a retried append whose first attempt did land
/// is recognised instead of written twice.
///
/// Call [`LogWriter::close`] before dropping the writer: dropping it stops
/// the background flusher, and records still buffered are lost.
#[derive(Debug)]
pub struct LogWriter {
    state: Arc<Mutex<State>>,
    clock: Arc<dyn Clock>,
    flusher: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct State {
    container: ContainerClient,
    service: String,
    settings: LogWriterSettings,
    buffer: Vec<LogRecord>,
    current: Option<OpenBlob>,
    stats: WriterStats,
}

#[derive(Debug)]
struct OpenBlob {
    name: LogBlobName,
    blob: BlobClient,
    length: u64,
    first: SystemTime,
    last: SystemTime,
}

impl LogWriter {
    /// A writer for `service` into `container` (which must exist). With a
    /// flush interval, a background task flushes on the container client's
    /// clock; it must be called inside a tokio runtime.
    pub fn new(
        container: ContainerClient,
        service: &str,
        settings: LogWriterSettings,
    ) -> LogWriter {
        let clock = container.clock();
        let interval = settings.flush_interval;
        let state = Arc::new(Mutex::new(State {
            container,
            service: service.to_owned(),
            settings,
            buffer: Vec::new(),
            current: None,
            stats: WriterStats::default(),
        }));
        let flusher = interval.map(|every| {
            let state = Arc::downgrade(&state);
            let clock = clock.clone();
            // Absolute deadlines from now: a clock moved before the task
            // first runs still triggers the flush that is due.
            let mut next = clock.now() + every;
            tokio::spawn(async move {
                loop {
                    clock
                        .sleep(next.duration_since(clock.now()).unwrap_or_default())
                        .await;
                    next = clock.now() + every;
                    let Some(state) = state.upgrade() else { return };
                    let mut state = state.lock().await;
                    if let Err(error) = state.flush().await {
                        tracing::warn!(%error, "log flush failed; records stay buffered");
                    }
                }
            })
        });
        LogWriter {
            state,
            clock,
            flusher,
        }
    }

    /// Buffers `body` stamped with the clock's current time; flushes when
    /// the batch is full.
    ///
    /// # Errors
    /// The flush's errors; the records stay buffered for the next flush.
    pub async fn write(&self, body: impl Into<String>) -> Result<()> {
        self.write_record(LogRecord::new(self.clock.now(), body))
            .await
    }

    /// Buffers a record with its own timestamp; flushes when the batch is
    /// full.
    ///
    /// # Errors
    /// As [`LogWriter::write`].
    pub async fn write_record(&self, record: LogRecord) -> Result<()> {
        let mut state = self.state.lock().await;
        state.buffer.push(record);
        if state.buffer.len() >= state.settings.batch_size {
            state.flush().await?;
        }
        Ok(())
    }

    /// Writes every buffered record now.
    ///
    /// # Errors
    /// Service and transport errors; unwritten records stay buffered.
    pub async fn flush(&self) -> Result<()> {
        self.state.lock().await.flush().await
    }

    /// Records buffered and not yet written.
    pub async fn buffered(&self) -> usize {
        self.state.lock().await.buffer.len()
    }

    /// Counters of what was written.
    pub async fn stats(&self) -> WriterStats {
        self.state.lock().await.stats
    }

    /// The blob currently appended to, if any.
    pub async fn current_blob(&self) -> Option<LogBlobName> {
        self.state
            .lock()
            .await
            .current
            .as_ref()
            .map(|c| c.name.clone())
    }

    /// Flushes and stops the background flusher.
    ///
    /// # Errors
    /// As [`LogWriter::flush`].
    pub async fn close(mut self) -> Result<()> {
        if let Some(flusher) = self.flusher.take() {
            flusher.abort();
        }
        self.flush().await
    }
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        if let Some(flusher) = self.flusher.take() {
            flusher.abort();
        }
    }
}

impl State {
    async fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let mut records = std::mem::take(&mut self.buffer);
        // Within a batch, time order: each hour's records then go to that
        // hour's blob in one pass.
        records.sort_by_key(|r| r.timestamp);
        let mut start = 0;
        while start < records.len() {
            let hour = hour_of(records[start].timestamp);
            let mut end = start;
            let mut chunk = String::new();
            while end < records.len() && hour_of(records[end].timestamp) == hour {
                let line = encode(&records[end]);
                if !chunk.is_empty() && chunk.len() + line.len() > self.settings.max_append_size {
                    break;
                }
                chunk.push_str(&line);
                end += 1;
            }
            if let Err(e) = self.append(hour, &records[start..end], chunk).await {
                self.stats.failed_flushes += 1;
                let mut unwritten = records.split_off(start);
                unwritten.append(&mut self.buffer);
                self.buffer = unwritten;
                return Err(e);
            }
            start = end;
        }
        Ok(())
    }

    /// Appends one chunk of records of one hour, opening or rolling the blob
    /// as needed.
    async fn append(
        &mut self,
        hour: SystemTime,
        records: &[LogRecord],
        chunk: String,
    ) -> Result<()> {
        let first = records.first().map(|r| r.timestamp).unwrap_or(hour);
        let last = records.last().map(|r| r.timestamp).unwrap_or(hour);
        let size = chunk.len() as u64;
        let roll = match &self.current {
            None => true,
            Some(c) => {
                c.name.hour() != hour
                    || (c.length > 0 && c.length + size > self.settings.max_blob_size)
            }
        };
        if roll {
            self.open(hour, first, last).await?;
        }
        let current = self.current.as_mut().expect("opened above");
        if first < current.first || last > current.last {
            // Metadata first: it must cover the records before they exist.
            let first = first.min(current.first);
            let last = last.max(current.last);
            current
                .blob
                .set_metadata(&range_metadata(first, last), &Conditions::new())
                .await?;
            current.first = first;
            current.last = last;
        }
        let options = AppendOptions::default().with_append_position(current.length);
        match current.blob.append_block(chunk, &options).await {
            Ok(_) => {}
            Err(e) if e.has_code(&ErrorCode::AppendPositionConditionNotMet) => {
                // Either an earlier attempt of this very append landed (its
                // answer was lost and the request retried), or someone else
                // wrote here: then start a fresh blob next time.
                let now = current.blob.properties(&Conditions::new()).await?;
                if now.content_length != current.length + size {
                    self.current = None;
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
        current.length += size;
        self.stats.appends += 1;
        self.stats.records_written += records.len() as u64;
        Ok(())
    }

    /// Creates the next blob of `hour`: the sequence follows the current
    /// blob's, or the highest one listed under the hour's prefix.
    async fn open(&mut self, hour: SystemTime, first: SystemTime, last: SystemTime) -> Result<()> {
        let mut sequence = match &self.current {
            Some(c) if c.name.hour() == hour => c.name.sequence + 1,
            _ => self.next_listed_sequence(hour).await?,
        };
        loop {
            if sequence > 999_999 {
                return Err(Error::InvalidInput(format!(
                    "more than a million log blobs in the hour of {}",
                    iso8601(hour)
                )));
            }
            let name = LogBlobName::new(&self.service, first, sequence);
            let blob = self.container.blob(&name.to_string());
            let options = UploadOptions::default()
                .with_content(
                    ContentProperties::default().with_content_type("text/plain; charset=utf-8"),
                )
                .with_metadata(range_metadata(first, last))
                .with_conditions(Conditions::new().with_if_not_exists());
            match blob.create_append_blob(&options).await {
                Ok(_) => {
                    self.stats.blobs_created += 1;
                    self.current = Some(OpenBlob {
                        name,
                        blob,
                        length: 0,
                        first,
                        last,
                    });
                    return Ok(());
                }
                // Another writer (or an earlier life of this one) has it.
                Err(e) if e.has_code(&ErrorCode::BlobAlreadyExists) => sequence += 1,
                Err(e) => return Err(e),
            }
        }
    }

    async fn next_listed_sequence(&self, hour: SystemTime) -> Result<u32> {
        let options = ListBlobsOptions::default().with_prefix(hour_prefix(&self.service, hour));
        let mut listing = self.container.list_blobs(options);
        let mut next = 0;
        while let Some(entry) = listing.try_next().await? {
            let name = match entry {
                BlobEntry::Blob(item) => LogBlobName::parse(&item.name),
                BlobEntry::Prefix(_) => None,
            };
            if let Some(name) = name.filter(|n| n.service == self.service) {
                next = next.max(name.sequence + 1);
            }
        }
        Ok(next)
    }
}

fn range_metadata(first: SystemTime, last: SystemTime) -> Metadata {
    Metadata::from([
        (FIRST_METADATA, iso8601(first)),
        (LAST_METADATA, iso8601(last)),
    ])
}
