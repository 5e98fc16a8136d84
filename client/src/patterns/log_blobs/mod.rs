//! Log blobs: log records buffered and written in batches to append blobs
//! named `<service>/YYYY/MM/DD/hhmm/NNNNNN.log`, found again by time range.
//!
//! - A blob holds records of one UTC hour only; the writer starts a new blob
//!   when the hour changes and when a blob would pass a size limit. `hhmm`
//!   is the minute of the blob's first record, `NNNNNN` a sequence number
//!   unique within the hour.
//! - Each blob's metadata holds its first and last record timestamps
//!   (`first`, `last`, ISO 8601), so a reader lists only the hour prefixes
//!   a range touches and skips blobs by metadata without downloading them.
//! - Records are lines (timestamp, tab, escaped text): see [`LogRecord`].
//! - [`inverted_ticks`] gives newest-first keys for tables that index logs.
//!
//! The batch size and flush interval ([`LogWriterSettings`]) trade
//! reliability (records lost if the process dies before a flush) against
//! cost (one or two requests per flush).
//!
//! ```no_run
//! use std::time::{Duration, SystemTime};
//! use stowage_client::BlobServiceClient;
//! use stowage_client::patterns::log_blobs::{LogReader, LogWriter, LogWriterSettings};
//!
//! # async fn demo() -> stowage_client::Result<()> {
//! let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
//! let container = service.container("logs");
//! container.create_if_not_exists().await?;
//!
//! let start = SystemTime::now();
//! let writer = LogWriter::new(
//!     container.clone(),
//!     "checkout",
//!     LogWriterSettings::default().with_batch_size(100),
//! );
//! writer.write("order 42 paid").await?;
//! writer.write("order 43 paid").await?;
//! writer.close().await?; // flushes what is buffered
//!
//! // The last hour of the service's log: only the hour prefixes the range
//! // touches are listed, and blobs outside it are skipped by metadata.
//! let range = LogReader::new(container, "checkout")
//!     .read(start - Duration::from_secs(3600), SystemTime::now() + Duration::from_secs(1))
//!     .await?;
//! assert!(range.records.iter().any(|r| r.body == "order 43 paid"));
//! # Ok(())
//! # }
//! ```

mod names;
mod reader;
mod records;
mod writer;

pub use names::{
    LogBlobName, hour_of, hour_prefix, hour_prefixes, inverted_ticks, parse_inverted_ticks, ticks,
};
pub use reader::{LogRange, LogReader, ReadStats};
pub use records::LogRecord;
pub use writer::{LogWriter, LogWriterSettings, WriterStats};

/// Metadata name of a blob's first record timestamp.
pub const FIRST_METADATA: &str = "first";
/// Metadata name of a blob's last record timestamp.
pub const LAST_METADATA: &str = "last";
