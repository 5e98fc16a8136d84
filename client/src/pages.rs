//! Page blobs (docs/wire/pages.md): create, write and clear pages, list
//! page ranges (and what changed since a snapshot), resize, sequence
//! numbers.

use std::time::SystemTime;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest, Md5};
use reqwest::Method;

use crate::container::WriteInfo;
use crate::pipeline::Request;
use crate::properties::{header_date, header_etag, header_u64};
use crate::service::transport;
use crate::{BlobClient, ByteRange, Conditions, Error, Etag, Result, UploadOptions, xml};

/// Pages are 512 bytes: offsets and lengths of page writes are multiples.
pub const PAGE_SIZE: u64 = 512;

/// Conditions of a page write: the usual ones, and the sequence-number
/// conditions (`412 SequenceNumberConditionNotMet` when one fails).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageWriteOptions {
    /// ETag/date conditions and the lease id.
    pub conditions: Conditions,
    /// Write only if the blob's sequence number is at most this.
    pub if_sequence_number_le: Option<u64>,
    /// Write only if it is below this.
    pub if_sequence_number_lt: Option<u64>,
    /// Write only if it is exactly this.
    pub if_sequence_number_eq: Option<u64>,
}

impl PageWriteOptions {
    /// Conditions and lease id.
    pub fn with_conditions(mut self, conditions: Conditions) -> PageWriteOptions {
        self.conditions = conditions;
        self
    }

    /// Require the sequence number to be at most `n`.
    pub fn with_if_sequence_number_le(mut self, n: u64) -> PageWriteOptions {
        self.if_sequence_number_le = Some(n);
        self
    }

    /// Require the sequence number to be below `n`.
    pub fn with_if_sequence_number_lt(mut self, n: u64) -> PageWriteOptions {
        self.if_sequence_number_lt = Some(n);
        self
    }

    /// Require the sequence number to be `n`.
    pub fn with_if_sequence_number_eq(mut self, n: u64) -> PageWriteOptions {
        self.if_sequence_number_eq = Some(n);
        self
    }

    fn apply(&self, request: Request) -> Request {
        let n = |v: Option<u64>| v.map(|n| n.to_string());
        self.conditions
            .apply(request)
            .header_opt("x-ms-if-sequence-number-le", n(self.if_sequence_number_le))
            .header_opt("x-ms-if-sequence-number-lt", n(self.if_sequence_number_lt))
            .header_opt("x-ms-if-sequence-number-eq", n(self.if_sequence_number_eq))
    }
}

/// The answer to a page write, a resize or a sequence-number change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageWriteInfo {
    /// The new ETag.
    pub etag: Etag,
    /// The new Last-Modified.
    pub last_modified: SystemTime,
    /// The blob's sequence number.
    pub sequence_number: u64,
}

impl PageWriteInfo {
    fn from_headers(headers: &reqwest::header::HeaderMap) -> Result<PageWriteInfo> {
        Ok(PageWriteInfo {
            etag: header_etag(headers)?,
            last_modified: header_date(headers, "last-modified")
                .ok_or_else(|| Error::InvalidResponse("no Last-Modified header".into()))?,
            sequence_number: header_u64(headers, "x-ms-blob-sequence-number").ok_or_else(|| {
                Error::InvalidResponse("no x-ms-blob-sequence-number header".into())
            })?,
        })
    }
}

/// One range of a Get Page Ranges answer: bytes `start..=end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    /// First byte.
    pub start: u64,
    /// Last byte (inclusive).
    pub end: u64,
    /// A `ClearRange` of a diff: written in the earlier snapshot, cleared
    /// since.
    pub cleared: bool,
}

/// How Set Blob Properties changes a sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceNumberAction {
    /// The larger of the current number and this one.
    Max(u64),
    /// Exactly this number.
    Update(u64),
    /// One more than the current number.
    Increment,
}

impl BlobClient {
    /// Creates a page blob of `size` bytes (a multiple of 512; all zeros),
    /// replacing any blob of that name, with the content properties,
    /// metadata and conditions of `options`.
    ///
    /// ```no_run
    /// use stowage_client::{BlobServiceClient, PageWriteOptions, UploadOptions};
    ///
    /// # async fn demo() -> stowage_client::Result<()> {
    /// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
    /// let container = service.container("disks");
    /// container.create_if_not_exists().await?;
    /// let disk = container.blob("data.vhd");
    /// disk.create_page_blob(1 << 30, None, &UploadOptions::default()).await?;
    /// disk.upload_pages(4096, vec![7u8; 4096], &PageWriteOptions::default()).await?;
    /// let written = disk.get_page_ranges(None, None).await?;
    /// assert_eq!((written[0].start, written[0].end), (4096, 8191));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// `400 InvalidHeaderValue` for a size off the page grid or past 8 TiB;
    /// `409 BlobAlreadyExists` with [`Conditions::with_if_not_exists`];
    /// `412`; lease errors.
    pub async fn create_page_blob(
        &self,
        size: u64,
        sequence_number: Option<u64>,
        options: &UploadOptions,
    ) -> Result<WriteInfo> {
        let request = self
            .base_request(Method::PUT)
            .header("x-ms-blob-type", "PageBlob")
            .header("x-ms-blob-content-length", size.to_string())
            .header_opt(
                "x-ms-blob-sequence-number",
                sequence_number.map(|n| n.to_string()),
            );
        let request = options
            .metadata
            .apply(options.content.apply(options.conditions.apply(request)));
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Writes `data` (a multiple of 512 bytes, at most 4 MiB) at `offset` (a
    /// multiple of 512), with its Content-MD5.
    ///
    /// # Errors
    /// `416 InvalidPageRange` for a misaligned range or one past the end;
    /// `412 SequenceNumberConditionNotMet`; `409 InvalidBlobType` on a blob
    /// of another type; `404`; `412`; lease errors.
    pub async fn upload_pages(
        &self,
        offset: u64,
        data: impl Into<Bytes>,
        options: &PageWriteOptions,
    ) -> Result<PageWriteInfo> {
        let data = data.into();
        let end = (offset + data.len() as u64).saturating_sub(1);
        let request = options
            .apply(self.base_request(Method::PUT).query("comp", "page"))
            .header("x-ms-page-write", "update")
            .header("x-ms-range", format!("bytes={offset}-{end}"))
            .header("content-md5", STANDARD.encode(Md5::digest(&data)))
            .body(data);
        let response = self.pipeline.send(request).await?;
        PageWriteInfo::from_headers(response.headers())
    }

    /// Clears `len` bytes of pages at `offset`: they read as zeros again
    /// and leave the page ranges.
    ///
    /// # Errors
    /// As [`BlobClient::upload_pages`].
    pub async fn clear_pages(
        &self,
        offset: u64,
        len: u64,
        options: &PageWriteOptions,
    ) -> Result<PageWriteInfo> {
        let end = (offset + len).saturating_sub(1);
        let request = options
            .apply(self.base_request(Method::PUT).query("comp", "page"))
            .header("x-ms-page-write", "clear")
            .header("x-ms-range", format!("bytes={offset}-{end}"));
        let response = self.pipeline.send(request).await?;
        PageWriteInfo::from_headers(response.headers())
    }

    /// Get Page Ranges of this blob (or snapshot), within `range` when
    /// given, following every page of the answer. With `previous_snapshot`
    /// the answer is what changed since that snapshot: written ranges, and
    /// cleared ones with [`PageRange::cleared`].
    ///
    /// # Errors
    /// `404`; `409 InvalidBlobType` on a blob of another type;
    /// `409 PreviousSnapshotNotFound`.
    pub async fn get_page_ranges(
        &self,
        range: Option<ByteRange>,
        previous_snapshot: Option<&str>,
    ) -> Result<Vec<PageRange>> {
        let mut out = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let request = self
                .request(Method::GET)
                .query("comp", "pagelist")
                .query_opt("prevsnapshot", previous_snapshot.map(str::to_owned))
                .query_opt("marker", marker.clone())
                .header_opt("x-ms-range", range.map(|r| r.header_value()));
            let response = self.pipeline.send(request).await?;
            let text = response.text().await.map_err(transport)?;
            let root = xml::parse(&text)?;
            for child in &root.children {
                let cleared = match child.name.as_str() {
                    "PageRange" => false,
                    "ClearRange" => true,
                    _ => continue,
                };
                let number = |name: &str| {
                    child
                        .text_of(name)
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .ok_or_else(|| Error::InvalidResponse(format!("no {name} in a range")))
                };
                out.push(PageRange {
                    start: number("Start")?,
                    end: number("End")?,
                    cleared,
                });
            }
            marker = root.non_empty("NextMarker");
            if marker.is_none() {
                return Ok(out);
            }
        }
    }

    /// Resizes the page blob to `size` bytes (a multiple of 512): growing
    /// adds zeros, shrinking drops the pages past the new end.
    ///
    /// # Errors
    /// `400 InvalidHeaderValue` for a size off the page grid; `404`;
    /// `409 InvalidBlobType`; `412`; lease errors.
    pub async fn resize(&self, size: u64, conditions: &Conditions) -> Result<PageWriteInfo> {
        let request = conditions
            .apply(self.base_request(Method::PUT).query("comp", "properties"))
            .header("x-ms-blob-content-length", size.to_string());
        let response = self.pipeline.send(request).await?;
        PageWriteInfo::from_headers(response.headers())
    }

    /// Changes the page blob's sequence number.
    ///
    /// # Errors
    /// `404`; `409 InvalidBlobType`; `412`; lease errors.
    pub async fn set_sequence_number(
        &self,
        action: SequenceNumberAction,
        conditions: &Conditions,
    ) -> Result<PageWriteInfo> {
        let (name, number) = match action {
            SequenceNumberAction::Max(n) => ("max", Some(n)),
            SequenceNumberAction::Update(n) => ("update", Some(n)),
            SequenceNumberAction::Increment => ("increment", None),
        };
        let request = conditions
            .apply(self.base_request(Method::PUT).query("comp", "properties"))
            .header("x-ms-sequence-number-action", name)
            .header_opt("x-ms-blob-sequence-number", number.map(|n| n.to_string()));
        let response = self.pipeline.send(request).await?;
        PageWriteInfo::from_headers(response.headers())
    }
}
