//! Container operations (docs/wire/containers.md#create-container).

use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::Method;

use crate::listing::{self, BlobEntry, BlobPage, ListBlobsOptions};
use crate::pipeline::{Pipeline, Request, encode_path};
use crate::properties::{header_date, header_etag};
use crate::service::transport;
use crate::{
    BlobClient, Conditions, ContainerProperties, Error, ErrorCode, Etag, LeaseClient, LeaseId,
    Metadata, PublicAccess, Result,
};

/// ETag and Last-Modified after a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteInfo {
    /// The new ETag.
    pub etag: Etag,
    /// The new Last-Modified.
    pub last_modified: std::time::SystemTime,
    /// The version the write made (`x-ms-version-id`), when versioning is
    /// on and the write makes a version.
    pub version_id: Option<String>,
}

impl WriteInfo {
    pub(crate) fn from_headers(headers: &reqwest::header::HeaderMap) -> Result<WriteInfo> {
        Ok(WriteInfo {
            etag: header_etag(headers)?,
            last_modified: header_date(headers, "last-modified")
                .ok_or_else(|| Error::InvalidResponse("no Last-Modified header".into()))?,
            version_id: crate::properties::header(headers, "x-ms-version-id").map(str::to_owned),
        })
    }
}

/// A client for one container.
///
/// ```no_run
/// use futures::TryStreamExt;
/// use stowage_client::{BlobEntry, BlobServiceClient, ListBlobsOptions, UploadOptions};
///
/// # async fn demo() -> stowage_client::Result<()> {
/// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
/// let container = service.container("photos");
/// container.create_if_not_exists().await?;
/// for name in ["2024/09/cat.jpg", "2024/10/dog.jpg", "readme.txt"] {
///     container.blob(name).upload(&b"..."[..], &UploadOptions::default()).await?;
/// }
/// // One level of a hierarchy: blobs, and groups up to the next "/".
/// let top: Vec<BlobEntry> = container
///     .list_blobs(ListBlobsOptions::default().with_delimiter("/"))
///     .try_collect()
///     .await?;
/// assert!(matches!(&top[0], BlobEntry::Prefix(p) if p == "2024/"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ContainerClient {
    pub(crate) pipeline: Arc<Pipeline>,
    pub(crate) name: String,
}

impl ContainerClient {
    pub(crate) fn new(pipeline: Arc<Pipeline>, name: &str) -> ContainerClient {
        ContainerClient {
            pipeline,
            name: name.to_owned(),
        }
    }

    /// The container's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The container's URL.
    pub fn url(&self) -> String {
        format!("{}{}", self.pipeline.endpoint(), self.path())
    }

    pub(crate) fn path(&self) -> String {
        format!("/{}", encode_path(&self.name))
    }

    /// The clock requests are dated with.
    pub fn clock(&self) -> Arc<dyn crate::Clock> {
        self.pipeline.clock().clone()
    }

    /// Another container of the same account.
    pub(crate) fn sibling(&self, name: &str) -> ContainerClient {
        ContainerClient::new(self.pipeline.clone(), name)
    }

    /// A client for the blob `name` in this container (nothing is sent).
    pub fn blob(&self, name: &str) -> BlobClient {
        BlobClient::new(self.pipeline.clone(), &self.name, name)
    }

    /// A lease handle on this container; `id` defaults to a random one.
    pub fn lease(&self, id: Option<LeaseId>) -> LeaseClient {
        LeaseClient::new(self.pipeline.clone(), self.path(), true, id)
    }

    fn request(&self, method: Method) -> Request {
        Request::new(method, self.path()).query("restype", "container")
    }

    /// Creates the container, private unless `public_access` says otherwise.
    ///
    /// # Errors
    /// `409 ContainerAlreadyExists`; `400 InvalidResourceName` for a bad
    /// name.
    pub async fn create(
        &self,
        metadata: &Metadata,
        public_access: Option<PublicAccess>,
    ) -> Result<WriteInfo> {
        let request = metadata.apply(self.request(Method::PUT)).header_opt(
            "x-ms-blob-public-access",
            public_access.map(PublicAccess::as_str),
        );
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// Creates the container unless it exists; returns whether it was
    /// created.
    ///
    /// # Errors
    /// As [`ContainerClient::create`], except `ContainerAlreadyExists`.
    pub async fn create_if_not_exists(&self) -> Result<bool> {
        match self.create(&Metadata::new(), None).await {
            Ok(_) => Ok(true),
            Err(e) if e.has_code(&ErrorCode::ContainerAlreadyExists) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Deletes the container with all its blobs. Only the date conditions
    /// and the lease id of `conditions` apply.
    ///
    /// # Errors
    /// `404 ContainerNotFound`, `412 ConditionNotMet`, 412 lease errors.
    pub async fn delete(&self, conditions: &Conditions) -> Result<()> {
        let request = conditions.apply_dates(self.request(Method::DELETE));
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// Whether the container exists.
    ///
    /// # Errors
    /// Anything but `404`.
    pub async fn exists(&self) -> Result<bool> {
        match self.properties().await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Get Container Properties (with metadata).
    ///
    /// # Errors
    /// `404 ContainerNotFound`.
    pub async fn properties(&self) -> Result<ContainerProperties> {
        let response = self.pipeline.send(self.request(Method::HEAD)).await?;
        ContainerProperties::from_headers(response.headers())
    }

    /// Replaces the container's metadata. Only `If-Modified-Since` and the
    /// lease id of `conditions` apply (docs/wire/containers.md#set-container-metadata).
    ///
    /// # Errors
    /// `404 ContainerNotFound`, `412 ConditionNotMet`.
    pub async fn set_metadata(
        &self,
        metadata: &Metadata,
        conditions: &Conditions,
    ) -> Result<WriteInfo> {
        let conditions = Conditions {
            if_unmodified_since: None,
            ..conditions.clone()
        };
        let request = metadata
            .apply(conditions.apply_dates(self.request(Method::PUT).query("comp", "metadata")));
        let response = self.pipeline.send(request).await?;
        WriteInfo::from_headers(response.headers())
    }

    /// One page of List Blobs, starting at `marker`.
    ///
    /// # Errors
    /// `404 ContainerNotFound`; 400 for a bad option combination.
    pub async fn list_blobs_page(
        &self,
        options: &ListBlobsOptions,
        marker: Option<&str>,
    ) -> Result<BlobPage> {
        let request = self
            .request(Method::GET)
            .query("comp", "list")
            .query_opt("prefix", options.prefix.clone())
            .query_opt("delimiter", options.delimiter.clone())
            .query_opt("marker", marker)
            .query_opt("maxresults", options.max_results.map(|n| n.to_string()))
            .query_opt("include", options.include());
        let response = self.pipeline.send(request).await?;
        let text = response.text().await.map_err(transport)?;
        listing::parse_blob_page(&text)
    }

    /// Every entry, page after page.
    pub fn list_blobs(&self, options: ListBlobsOptions) -> BoxStream<'static, Result<BlobEntry>> {
        let client = self.clone();
        listing::paged(move |marker| {
            let client = client.clone();
            let options = options.clone();
            async move {
                let page = client.list_blobs_page(&options, marker.as_deref()).await?;
                Ok((page.entries, page.next_marker))
            }
        })
    }
}
