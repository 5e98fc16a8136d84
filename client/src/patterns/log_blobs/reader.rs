//! Reading a time range back.

use std::time::SystemTime;

use futures::TryStreamExt;

use super::names::{LogBlobName, hour_prefixes};
use super::records::{LogRecord, decode};
use super::{FIRST_METADATA, LAST_METADATA};
use crate::timestamps::parse_iso8601;
use crate::{BlobEntry, ContainerClient, ListBlobsOptions, Result};

/// What a range query cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Hour prefixes listed.
    pub prefixes_listed: usize,
    /// Log blobs found under them.
    pub blobs_listed: usize,
    /// Blobs skipped because their metadata lies outside the range.
    pub blobs_skipped: usize,
    /// Blobs downloaded.
    pub blobs_read: usize,
}

/// The records of a range, oldest first, and what finding them cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRange {
    /// Records with `from ≤ timestamp < to`, in time order (ties in blob
    /// and write order).
    pub records: Vec<LogRecord>,
    /// Listing and reading counts.
    pub stats: ReadStats,
}

/// Reads the log of one service by time range.
#[derive(Debug, Clone)]
pub struct LogReader {
    container: ContainerClient,
    service: String,
}

impl LogReader {
    /// A reader of `service`'s log in `container`.
    pub fn new(container: ContainerClient, service: &str) -> LogReader {
        LogReader {
            container,
            service: service.to_owned(),
        }
    }

    /// The records with `from ≤ timestamp < to`.
    ///
    /// Lists only the hour prefixes the range touches, skips blobs whose
    /// `first`/`last` metadata lies outside it, and reads the rest.
    ///
    /// # Errors
    /// Service and transport errors.
    pub async fn read(&self, from: SystemTime, to: SystemTime) -> Result<LogRange> {
        let mut stats = ReadStats::default();
        let mut found: Vec<(SystemTime, LogBlobName, usize, LogRecord)> = Vec::new();
        for prefix in hour_prefixes(&self.service, from, to) {
            stats.prefixes_listed += 1;
            let options = ListBlobsOptions::default()
                .with_prefix(prefix)
                .with_metadata();
            let mut listing = self.container.list_blobs(options);
            while let Some(entry) = listing.try_next().await? {
                let BlobEntry::Blob(item) = entry else {
                    continue;
                };
                let Some(name) = LogBlobName::parse(&item.name) else {
                    continue;
                };
                if name.service != self.service {
                    continue;
                }
                stats.blobs_listed += 1;
                let metadata = &item.properties.metadata;
                let first = metadata.get(FIRST_METADATA).and_then(parse_iso8601);
                let last = metadata.get(LAST_METADATA).and_then(parse_iso8601);
                let outside = last.is_some_and(|l| l < from) || first.is_some_and(|f| f >= to);
                if outside {
                    stats.blobs_skipped += 1;
                    continue;
                }
                stats.blobs_read += 1;
                let bytes = self.container.blob(&item.name).download_bytes().await?;
                let text = String::from_utf8_lossy(&bytes);
                for (i, record) in decode(&text).into_iter().enumerate() {
                    if record.timestamp >= from && record.timestamp < to {
                        found.push((record.timestamp, name.clone(), i, record));
                    }
                }
            }
        }
        found.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
        Ok(LogRange {
            records: found.into_iter().map(|(_, _, _, r)| r).collect(),
            stats,
        })
    }
}
