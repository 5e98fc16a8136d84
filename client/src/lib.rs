//! An async client for Azure Blob Storage — and so for Stowage — with the
//! blob patterns a table engine needs.
//!
//! The client speaks the REST API as the service documents it (see
//! `docs/wire/` in the repository): Shared Key signing of its own, typed
//! conditions and lease handles, uploads from bytes or any `AsyncRead`
//! (large ones as parallel blocks), downloads as streams, and retries with
//! backoff on timeouts, connection errors and 5xx answers only. It relies on
//! nothing Stowage does differently from the real service, and it shares no
//! code with the server: it is a second, independent reading of the spec.
//!
//! ```no_run
//! use stowage_client::{BlobServiceClient, Conditions, UploadOptions};
//!
//! # async fn demo() -> stowage_client::Result<()> {
//! let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
//! let container = service.container("photos");
//! container.create_if_not_exists().await?;
//! let blob = container.blob("2024/09/cat.txt");
//! let written = blob.upload(&b"meow"[..], &UploadOptions::default()).await?;
//! // Overwrite only if nobody else wrote since.
//! let only_ours = UploadOptions::default()
//!     .with_conditions(Conditions::new().with_if_match(written.etag));
//! blob.upload(&b"purr"[..], &only_ours).await?;
//! assert_eq!(&blob.download_bytes().await?[..], b"purr");
//! # Ok(())
//! # }
//! ```
//!
//! Time is injected: requests are dated, and the patterns wait, through the
//! [`Clock`] given in [`ClientOptions`], so tests run on a [`ManualClock`].
//! The [`patterns`] module holds the table-engine patterns: large entities
//! stored as blobs behind verified pointers, time-ordered log blobs, and
//! table locks with fencing tokens.
#![warn(missing_docs)]

mod append;
mod blob;
mod clock;
mod conditions;
mod connection;
mod container;
mod copy;
mod download;
mod error;
mod error_code;
mod lease;
mod listing;
mod metadata;
mod pages;
pub mod patterns;
mod pipeline;
mod properties;
mod restore;
mod retry;
mod service;
mod signing;
mod tags;
mod tiers;
mod timestamps;
mod upload;
mod versions;
mod xml;

pub use append::{AppendInfo, AppendOptions};
pub use blob::{BlobClient, CopyInfo, CopyOptions, DeleteSnapshots, SnapshotInfo};
pub use clock::{Clock, ManualClock, Sleep, SystemClock};
pub use conditions::{Conditions, Etag, EtagCondition};
pub use connection::{
    ConnectionString, Credentials, DEVELOPMENT_ACCOUNT, DEVELOPMENT_ENDPOINT, DEVELOPMENT_KEY,
};
pub use container::{ContainerClient, WriteInfo};
pub use download::{Download, DownloadOptions};
pub use error::{Error, Result, ServiceError};
pub use error_code::ErrorCode;
pub use lease::{LeaseClient, LeaseDuration, LeaseId};
pub use listing::{
    BlobEntry, BlobItem, BlobPage, ContainerItem, ContainerPage, ListBlobsOptions,
    ListContainersOptions,
};
pub use metadata::Metadata;
pub use pages::{PAGE_SIZE, PageRange, PageWriteInfo, PageWriteOptions, SequenceNumberAction};
pub use pipeline::{ClientOptions, SERVICE_VERSION};
pub use properties::{
    BlobProperties, BlobType, ByteRange, ContainerProperties, ContentProperties, ContentRange,
    CopyProperties, CopyStatus, LeaseDurationType, LeaseInfo, LeaseState, LeaseStatus,
    PublicAccess,
};
pub use restore::{BlobExpiry, DeletedContainer};
pub use retry::{Outcome, RetryPolicy};
pub use service::BlobServiceClient;
pub use tags::{TaggedBlob, TaggedBlobPage, Tags};
pub use tiers::{AccessTier, RehydratePriority, SetTierOutcome, TierInfo};
pub use upload::{Block, BlockList, BlockListType, UploadOptions};
pub use versions::DeleteRetentionPolicy;
