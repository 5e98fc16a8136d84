//! Append blobs (docs/wire/blobs.md#put-blob with `AppendBlob`, B15).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest, Md5};
use reqwest::Method;

use crate::container::WriteInfo;
use crate::properties::{header_date, header_etag, header_u64};
use crate::{BlobClient, Conditions, Error, Etag, Result, UploadOptions};

/// Conditions of one Append Block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppendOptions {
    /// ETag/date conditions and the lease id.
    pub conditions: Conditions,
    /// Append only if the blob's length is exactly this
    /// (`x-ms-blob-condition-appendpos`): how a writer retrying a block
    /// whose answer was lost learns that it was already appended
    /// (`412 AppendPositionConditionNotMet`).
    pub append_position: Option<u64>,
    /// Append only if the blob stays at most this long
    /// (`x-ms-blob-condition-maxsize`).
    pub max_size: Option<u64>,
}

impl AppendOptions {
    /// Conditions and lease id.
    pub fn with_conditions(mut self, conditions: Conditions) -> AppendOptions {
        self.conditions = conditions;
        self
    }

    /// Require the blob's length to be `position`.
    pub fn with_append_position(mut self, position: u64) -> AppendOptions {
        self.append_position = Some(position);
        self
    }

    /// Require the result to be at most `max` bytes.
    pub fn with_max_size(mut self, max: u64) -> AppendOptions {
        self.max_size = Some(max);
        self
    }
}

/// The answer to Append Block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendInfo {
    /// Where the block starts (the length before the append).
    pub offset: u64,
    /// Blocks appended so far, this one included.
    pub committed_block_count: u64,
    /// The new ETag.
    pub etag: Etag,
    /// The new Last-Modified.
    pub last_modified: std::time::SystemTime,
}

impl BlobClient {
    /// Creates an empty append blob (emptying one that exists), with the
    /// content properties, metadata and conditions of `options`.
    ///
    /// # Errors
    /// `409 BlobAlreadyExists` with [`Conditions::with_if_not_exists`];
    /// `409 InvalidBlobType` over a blob of another type; `412`; lease
    /// errors.
    ///
    /// ```no_run
    /// use stowage_client::{AppendOptions, BlobServiceClient, UploadOptions};
    ///
    /// # async fn demo() -> stowage_client::Result<()> {
    /// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
    /// let container = service.container("logs");
    /// container.create_if_not_exists().await?;
    /// let blob = container.blob("app.log");
    /// blob.create_append_blob(&UploadOptions::default()).await?;
    /// let first = blob.append_block(&b"started\n"[..], &AppendOptions::default()).await?;
    /// // Append only where this writer expects the end to be: a retry after
    /// // a lost answer fails with 412 instead of writing the line twice.
    /// let next = AppendOptions::default().with_append_position(first.offset + 8);
    /// blob.append_block(&b"stopped\n"[..], &next).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn create_append_blob(&self, options: &UploadOptions) -> Result<WriteInfo> {
        let request = self
            .base_request(Method::PUT)
            .header("x-ms-blob-type", "AppendBlob");
        let request = options
            .metadata
            .apply(options.content.apply(options.conditions.apply(request)));
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Appends `data` (1 byte to the service's Append Block limit) atomically.
    ///
    /// # Errors
    /// `404 BlobNotFound`; `409 InvalidBlobType`;
    /// `412 AppendPositionConditionNotMet` / `MaxBlobSizeConditionNotMet` /
    /// `ConditionNotMet`; lease errors.
    pub async fn append_block(
        &self,
        data: impl Into<Bytes>,
        options: &AppendOptions,
    ) -> Result<AppendInfo> {
        let data = data.into();
        let request = options
            .conditions
            .apply(self.base_request(Method::PUT).query("comp", "appendblock"))
            .header("content-md5", STANDARD.encode(Md5::digest(&data)))
            .header_opt(
                "x-ms-blob-condition-appendpos",
                options.append_position.map(|p| p.to_string()),
            )
            .header_opt(
                "x-ms-blob-condition-maxsize",
                options.max_size.map(|m| m.to_string()),
            )
            .body(data);
        let response = self.pipeline.send(request).await?;
        let headers = response.headers();
        Ok(AppendInfo {
            offset: header_u64(headers, "x-ms-blob-append-offset")
                .ok_or_else(|| Error::InvalidResponse("no x-ms-blob-append-offset".into()))?,
            committed_block_count: header_u64(headers, "x-ms-blob-committed-block-count")
                .unwrap_or(0),
            etag: header_etag(headers)?,
            last_modified: header_date(headers, "last-modified")
                .ok_or_else(|| Error::InvalidResponse("no Last-Modified header".into()))?,
        })
    }
}
