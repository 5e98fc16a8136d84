//! Blob operations other than upload, download and append: properties,
//! metadata, delete, snapshot, copy (docs/wire/blobs.md).

use std::sync::Arc;
use std::time::SystemTime;

use reqwest::Method;

use crate::container::WriteInfo;
use crate::pipeline::{Pipeline, Request, encode_path};
use crate::properties::{header, header_date, header_etag};
use crate::{
    BlobProperties, Conditions, ContentProperties, CopyStatus, Error, Etag, LeaseClient, LeaseId,
    Metadata, Result,
};

/// A client for one blob (or one snapshot or version of it).
#[derive(Debug, Clone)]
pub struct BlobClient {
    pub(crate) pipeline: Arc<Pipeline>,
    container: String,
    name: String,
    snapshot: Option<String>,
    version: Option<String>,
}

/// What Delete Blob does with snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteSnapshots {
    /// Delete only the addressed blob; a base blob with snapshots is
    /// refused with `409 SnapshotsPresent`.
    #[default]
    None,
    /// Delete the base blob and all its snapshots.
    Include,
    /// Delete the snapshots, keep the base blob.
    Only,
}

/// A new snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The snapshot id (`?snapshot=` value).
    pub snapshot: String,
    /// The snapshot's ETag.
    pub etag: Etag,
    /// The snapshot's Last-Modified.
    pub last_modified: SystemTime,
    /// With versioning on, the version the snapshot made of the blob
    /// (`x-ms-version-id`): Snapshot Blob creates a new version.
    pub version_id: Option<String>,
}

/// Settings of a Copy Blob.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyOptions {
    /// Metadata for the destination; `None` copies the source's.
    pub metadata: Option<Metadata>,
    /// Conditions on the destination (and its lease id).
    pub conditions: Conditions,
    /// Conditions on the source (sent as `x-ms-source-if-*`).
    pub source_conditions: Conditions,
}

impl CopyOptions {
    /// Gives the destination exactly this metadata.
    pub fn with_metadata(mut self, metadata: Metadata) -> CopyOptions {
        self.metadata = Some(metadata);
        self
    }

    /// Conditions on the destination.
    pub fn with_conditions(mut self, conditions: Conditions) -> CopyOptions {
        self.conditions = conditions;
        self
    }

    /// Conditions on the source.
    pub fn with_source_conditions(mut self, conditions: Conditions) -> CopyOptions {
        self.source_conditions = conditions;
        self
    }
}

/// The answer to Copy Blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyInfo {
    /// `x-ms-copy-id`.
    pub copy_id: String,
    /// `success`, or `pending` when the service copies in the background
    /// (poll [`BlobClient::properties`] until `copy` reports success).
    pub status: CopyStatus,
    /// The destination's new ETag.
    pub etag: Etag,
    /// The version the copy made (`x-ms-version-id`), when versioning is on.
    pub version_id: Option<String>,
}

impl BlobClient {
    pub(crate) fn new(pipeline: Arc<Pipeline>, container: &str, name: &str) -> BlobClient {
        BlobClient {
            pipeline,
            container: container.to_owned(),
            name: name.to_owned(),
            snapshot: None,
            version: None,
        }
    }

    /// The blob's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The container's name.
    pub fn container_name(&self) -> &str {
        &self.container
    }

    /// The snapshot this client addresses, if any.
    pub fn snapshot_id(&self) -> Option<&str> {
        self.snapshot.as_deref()
    }

    /// The version this client addresses, if any.
    pub fn version_id(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The same blob's snapshot `id` (reads and delete only).
    pub fn with_snapshot(&self, id: &str) -> BlobClient {
        BlobClient {
            snapshot: Some(id.to_owned()),
            version: None,
            ..self.clone()
        }
    }

    /// The same blob's version `id` (`versionid=`): reads, delete, tags and
    /// tier, and a copy source. The current version's id names the blob
    /// itself.
    pub fn with_version(&self, id: &str) -> BlobClient {
        BlobClient {
            snapshot: None,
            version: Some(id.to_owned()),
            ..self.clone()
        }
    }

    /// The base blob, without a snapshot or version.
    pub fn base(&self) -> BlobClient {
        BlobClient {
            snapshot: None,
            version: None,
            ..self.clone()
        }
    }

    /// The blob's URL (with `?snapshot=` for a snapshot, `?versionid=` for
    /// a version), percent-encoded as it goes on the wire; usable as a Copy
    /// Blob source.
    pub fn url(&self) -> String {
        let mut url = format!("{}{}", self.pipeline.endpoint(), self.path());
        if let Some(s) = &self.snapshot {
            url.push_str("?snapshot=");
            url.push_str(&encode_path(s).replace('/', "%2F"));
        } else if let Some(v) = &self.version {
            url.push_str("?versionid=");
            url.push_str(&encode_path(v).replace('/', "%2F"));
        }
        url
    }

    pub(crate) fn path(&self) -> String {
        format!(
            "/{}/{}",
            encode_path(&self.container),
            encode_path(&self.name)
        )
    }

    /// A request to this blob, addressing the snapshot or version if there
    /// is one.
    pub(crate) fn request(&self, method: Method) -> Request {
        Request::new(method, self.path())
            .query_opt("snapshot", self.snapshot.clone())
            .query_opt("versionid", self.version.clone())
    }

    /// A request to the base blob (writes never address a snapshot).
    pub(crate) fn base_request(&self, method: Method) -> Request {
        Request::new(method, self.path())
    }

    /// A lease handle on this blob; `id` defaults to a random one.
    pub fn lease(&self, id: Option<LeaseId>) -> LeaseClient {
        LeaseClient::new(self.pipeline.clone(), self.path(), false, id)
    }

    /// Get Blob Properties (HEAD): properties, metadata, lease, copy state.
    ///
    /// # Errors
    /// `404 BlobNotFound`; `412`/`304` for unmet conditions; lease errors.
    pub async fn properties(&self, conditions: &Conditions) -> Result<BlobProperties> {
        let request = conditions.apply(self.request(Method::HEAD));
        let response = self.pipeline.send(request).await?;
        BlobProperties::from_headers(response.headers())
    }

    /// Whether the blob (or snapshot) exists.
    ///
    /// # Errors
    /// Anything but `404`.
    pub async fn exists(&self) -> Result<bool> {
        match self.properties(&Conditions::new()).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Set Blob Properties: stores the six content properties (any not
    /// given is cleared).
    ///
    /// # Errors
    /// `404 BlobNotFound`, `412`, lease errors.
    pub async fn set_properties(
        &self,
        content: &ContentProperties,
        conditions: &Conditions,
    ) -> Result<WriteInfo> {
        let request = self.base_request(Method::PUT).query("comp", "properties");
        let request = content.apply(conditions.apply(request));
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Get Blob Metadata.
    ///
    /// # Errors
    /// `404 BlobNotFound`, `412`/`304`, lease errors.
    pub async fn metadata(&self, conditions: &Conditions) -> Result<Metadata> {
        let request = conditions.apply(self.request(Method::GET).query("comp", "metadata"));
        let response = self.pipeline.send(request).await?;
        Ok(Metadata::from_headers(response.headers()))
    }

    /// Set Blob Metadata: replaces the whole set (an empty one clears it).
    ///
    /// # Errors
    /// `404 BlobNotFound`, `412`, lease errors.
    pub async fn set_metadata(
        &self,
        metadata: &Metadata,
        conditions: &Conditions,
    ) -> Result<WriteInfo> {
        let request = self.base_request(Method::PUT).query("comp", "metadata");
        let request = metadata.apply(conditions.apply(request));
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Delete Blob (or, on a snapshot or version client, that snapshot or
    /// version).
    ///
    /// # Errors
    /// `404 BlobNotFound`, `409 SnapshotsPresent`, `412`, lease errors.
    pub async fn delete(&self, snapshots: DeleteSnapshots, conditions: &Conditions) -> Result<()> {
        let value = match snapshots {
            DeleteSnapshots::None => None,
            DeleteSnapshots::Include => Some("include"),
            DeleteSnapshots::Only => Some("only"),
        };
        let request = conditions
            .apply(self.request(Method::DELETE))
            .header_opt("x-ms-delete-snapshots", value);
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// Deletes the blob if it exists; returns whether it did.
    ///
    /// # Errors
    /// As [`BlobClient::delete`], except `404`.
    pub async fn delete_if_exists(&self, snapshots: DeleteSnapshots) -> Result<bool> {
        match self.delete(snapshots, &Conditions::new()).await {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Snapshot Blob: a read-only copy of the current version. With
    /// `metadata` the snapshot gets exactly that, else the blob's.
    ///
    /// # Errors
    /// `404 BlobNotFound`, `412`, lease errors.
    pub async fn snapshot(
        &self,
        metadata: Option<&Metadata>,
        conditions: &Conditions,
    ) -> Result<SnapshotInfo> {
        let mut request =
            conditions.apply(self.base_request(Method::PUT).query("comp", "snapshot"));
        if let Some(m) = metadata {
            request = m.apply(request);
        }
        let response = self.pipeline.send(request).await?;
        let headers = response.headers();
        Ok(SnapshotInfo {
            snapshot: header(headers, "x-ms-snapshot")
                .ok_or_else(|| Error::InvalidResponse("no x-ms-snapshot header".into()))?
                .to_owned(),
            etag: header_etag(headers)?,
            last_modified: header_date(headers, "last-modified")
                .ok_or_else(|| Error::InvalidResponse("no Last-Modified header".into()))?,
            version_id: header(headers, "x-ms-version-id").map(str::to_owned),
        })
    }

    /// Copy Blob from `source_url` (a blob URL, possibly with `?snapshot=`,
    /// `?versionid=` or a SAS) onto this blob; the same as
    /// [`BlobClient::start_copy_from_url`].
    ///
    /// # Errors
    /// `404 CannotVerifyCopySource` (or `BlobNotFound`) for a missing
    /// source, `409 BlobAlreadyExists` with
    /// [`Conditions::with_if_not_exists`], `412` for failed conditions.
    pub async fn copy_from_url(&self, source_url: &str, options: &CopyOptions) -> Result<CopyInfo> {
        self.start_copy_from_url(source_url, options).await
    }

    /// Copy Blob from another blob (or snapshot, or version) of the same
    /// account.
    ///
    /// ```no_run
    /// use stowage_client::{BlobServiceClient, Conditions, CopyOptions};
    ///
    /// # async fn demo() -> stowage_client::Result<()> {
    /// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
    /// let container = service.container("reports");
    /// # container.create_if_not_exists().await?;
    /// let draft = container.blob("q3-draft.pdf");
    /// # draft.upload(&b"%PDF"[..], &stowage_client::UploadOptions::default()).await?;
    /// let snapshot = draft.snapshot(None, &Conditions::new()).await?;
    /// // Publish the draft as it was when the snapshot was taken.
    /// let source = draft.with_snapshot(&snapshot.snapshot);
    /// container.blob("q3.pdf").copy_from(&source, &CopyOptions::default()).await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`BlobClient::copy_from_url`].
    pub async fn copy_from(&self, source: &BlobClient, options: &CopyOptions) -> Result<CopyInfo> {
        self.copy_from_url(&source.url(), options).await
    }
}
