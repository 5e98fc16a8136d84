//! Copy Blob as an operation that may outlive its request
//! (docs/wire/copy.md): start a copy, poll its status, abort it. A copy
//! from the same account ends before the answer (`success`); a copy from
//! another host may answer `pending` and go on in the background.

use std::time::Duration;

use reqwest::Method;

use crate::properties::{header, header_etag};
use crate::{
    BlobClient, Conditions, CopyInfo, CopyOptions, CopyProperties, CopyStatus, Error, Result,
};

impl BlobClient {
    /// Copy Blob: starts copying `source_url` (a blob URL of this or another
    /// account or host, with `?snapshot=`, `?versionid=` or a SAS as
    /// needed) onto this blob. The answer's status is `success` when the
    /// copy is done, `pending` when it goes on; follow it with
    /// [`BlobClient::copy_status`] or [`BlobClient::wait_for_copy`], and stop
    /// it with [`BlobClient::abort_copy`].
    ///
    /// # Errors
    /// `404 CannotVerifyCopySource` (or `BlobNotFound`) for a missing
    /// source, `409 BlobAlreadyExists` with
    /// [`Conditions::with_if_not_exists`], `412` for failed conditions.
    pub async fn start_copy_from_url(
        &self,
        source_url: &str,
        options: &CopyOptions,
    ) -> Result<CopyInfo> {
        let mut request = options
            .conditions
            .apply(self.base_request(Method::PUT))
            .header("x-ms-copy-source", source_url);
        request = options.source_conditions.apply_source(request);
        if let Some(m) = &options.metadata {
            request = m.apply(request);
        }
        let response = self.pipeline.send(request).await?;
        let headers = response.headers();
        Ok(CopyInfo {
            copy_id: header(headers, "x-ms-copy-id")
                .unwrap_or_default()
                .to_owned(),
            status: CopyStatus::parse(header(headers, "x-ms-copy-status").unwrap_or("")),
            etag: header_etag(headers)?,
            version_id: header(headers, "x-ms-version-id").map(str::to_owned),
        })
    }

    /// The state of the last copy onto this blob (Get Blob Properties'
    /// `x-ms-copy-*`), `None` when the blob was never a copy destination.
    ///
    /// # Errors
    /// `404 BlobNotFound`.
    pub async fn copy_status(&self) -> Result<Option<CopyProperties>> {
        Ok(self.properties(&Conditions::new()).await?.copy)
    }

    /// Polls the copy `copy_id` every `interval` (of the client's clock)
    /// until it is no longer pending; returns its final state (`success`,
    /// `aborted` or `failed`).
    ///
    /// # Errors
    /// [`Error::InvalidResponse`] when the blob's last copy is another one
    /// (a later copy replaced it) or there is none; `404 BlobNotFound`.
    pub async fn wait_for_copy(&self, copy_id: &str, interval: Duration) -> Result<CopyProperties> {
        loop {
            let copy = self.copy_status().await?.ok_or_else(|| {
                Error::InvalidResponse(format!("{} is not a copy destination", self.name()))
            })?;
            if copy.id != copy_id {
                return Err(Error::InvalidResponse(format!(
                    "copy {copy_id} was replaced by copy {}",
                    copy.id
                )));
            }
            if copy.status != CopyStatus::Pending {
                return Ok(copy);
            }
            self.pipeline.clock().sleep(interval).await;
        }
    }

    /// Abort Copy Blob: stops the pending copy `copy_id`; the destination
    /// is left empty, with copy status `aborted`. A leased destination needs
    /// the lease in `conditions`.
    ///
    /// # Errors
    /// `409 NoPendingCopyOperation` when the copy already ended, `409
    /// CopyIdMismatch` when `copy_id` is not the blob's pending copy, `404
    /// BlobNotFound`.
    pub async fn abort_copy(&self, copy_id: &str, conditions: &Conditions) -> Result<()> {
        let request = conditions
            .apply(self.base_request(Method::PUT))
            .query("comp", "copy")
            .query("copyid", copy_id)
            .header("x-ms-copy-action", "abort");
        self.pipeline.send(request).await?;
        Ok(())
    }
}
