//! The storage engine of Stowage: containers and blobs with their metadata in
//! SQLite and their bytes as immutable extents in an [`object_store`].
//!
//! This crate knows nothing about HTTP: no headers, no status codes, no XML.
//! The server turns requests into the typed inputs of [`Store`]'s methods and
//! renders their outputs. All SQL lives in `meta/`, all object-store paths in
//! `extents`.
//!
//! Write order (the crash-safety argument, see docs/architecture.md#write-order): a body is streamed
//! into a new extent first; then one metadata transaction checks conditions
//! and the lease against the current row and swaps the new version in; then
//! the caller replies. A crash before the transaction leaves an unreferenced
//! extent that the start-up sweep removes. Bodies up to 64 KiB skip the
//! object store: their bytes are written by that same transaction (inline
//! extents), so they are committed or absent with it. Transactions are
//! committed in groups by one writer thread (one fsync per group); no caller
//! hears of success before its group is on disk.
//!
//! ```no_run
//! # async fn demo() -> stowage_blobstore::Result<()> {
//! use std::sync::Arc;
//! use stowage_blobstore::{Store, StoreConfig, SystemClock};
//! let store = Store::open(StoreConfig::in_memory(), Arc::new(SystemClock)).await?;
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod admin;
pub mod conditions;
mod db_clock;
mod error;
mod etag;
mod expiry;
mod extents;
mod file_writer;
mod gc;
mod hashing;
mod listing;
mod liveness;
mod meta;
mod metadata;
mod model;
mod names;
pub mod objects;
mod observe;
pub mod pages;
mod pins;
mod ranges;
mod space;
mod store;
pub mod tags;
#[doc(hidden)]
pub mod testing;
mod tiers;
mod timestamps;

pub use conditions::{AppendConditions, ConditionFailure, ConditionKind, Conditions, EtagMatch};
pub use db_clock::{DatabaseClock, REMEASURE_EVERY};
pub use error::{Error, Result};
pub use etag::Etag;
pub use expiry::ExpiryOption;
pub use hashing::Crc64;
pub use listing::{
    BlobListItem, ListBlobsInput, ListBlobsOutput, ListContainersInput, ListContainersOutput,
    ListingMarker,
};
pub use liveness::{DEAD_AFTER, HEARTBEAT_EVERY, LivenessConfig, ORPHANED_COPY};
pub use meta::versions::DeleteRetention;
pub use meta::{AccountUsage, StoreUsage};
pub use metadata::{Metadata, MetadataError};
pub use model::{
    AccessPolicy, BlobProperties, BlobType, ContainerAcl, ContainerProperties, ContentProperties,
    CopyProperties, CopyStatus, DeletedContainer, DeletedState, PageProperties, PublicAccess,
    Versioned,
};
pub use names::{BlobName, ContainerName, NameError};
pub use objects::{ObjectsLocation, ObjectsUrlError};
pub use observe::{MetadataCall, ObjectCall, StoreObserver};
pub use ranges::ByteRange;
pub use store::{
    AppendBlockInput, AppendBlockOutput, BlobBody, BlockId, BlockListKind, BlockListType,
    CopiedBytes, CopyBlobInput, CopyBlobOutput, CopyJob, CopySource, CreateContainerInput,
    CreatePageBlobInput, DEFAULT_REHYDRATE_DELAY, DeleteBlobInput, DeleteContainerInput,
    DeleteSnapshots, FindBlobsByTagsInput, FindBlobsByTagsOutput, GetBlobInput, GetBlobOutput,
    GetBlobTagsInput, GetBlockListInput, GetBlockListOutput, GetPageRangesInput,
    GetPageRangesOutput, INTERRUPTED_COPY, ImportBlobInput, ImportContainerInput, ImportPart,
    IncrementalCopyBlobInput, IncrementalCopyBlobOutput, IncrementalCopyState, LeaseBlobInput,
    LeaseContainerInput, LeaseOutput, MAX_APPENDED_BLOCKS, MAX_COMMITTED_BLOCKS,
    MAX_UNCOMMITTED_BLOCKS, PageRangeItem, PageWrite, PutBlobInput, PutBlobOutput, PutBlockInput,
    PutBlockListInput, PutBlockOutput, PutPageInput, PutPageOutput, RemoteCopyInput,
    RemoteIncrementalCopyInput, RestoreContainerInput, SealAppendBlobInput, SetBlobExpiryInput,
    SetBlobMetadataInput, SetBlobPropertiesInput, SetBlobTagsInput, SetBlobTierInput,
    SetContainerAclInput, SetContainerMetadataInput, SetPageBlobPropertiesInput,
    SetPageBlobPropertiesOutput, SnapshotBlobInput, SnapshotBlobOutput, SourceAccess, Store,
    StoreConfig, TaggedBlob, UNCOMMITTED_BLOCK_LIFETIME, UndeleteBlobInput, Versioning,
    copy_progress, is_find_marker,
};
pub use store::{CopiedType, ServiceSnapshot};
pub use tags::expr::{ExprError, Filter, TagCondition};
pub use tags::{TagError, Tags};
pub use tiers::{
    AccessTier, RehydratePriority, Rehydration, SetTier, SetTierOutcome, TierProperties, TierRecord,
};
pub use timestamps::{from_nanos, iso8601_7, to_nanos};

/// The lease crate's error type, re-exported so the server needs no direct dependency.
pub use stowage_leases::Error as LeaseError;
pub use stowage_leases::{
    Access as LeaseAccess, ActionOutcome as LeaseActionOutcome, BreakPeriod, Clock, LeaseAction,
    LeaseDuration, LeaseDurationKind, LeaseId, LeaseProperties, LeaseRecord, LeaseState,
    LeaseStatus, ManualClock, Resource as LeaseResource, SystemClock,
};
