//! The engine's one error type: the refusals of the domain, named after the
//! service's error codes, and internal failures that keep their source.

use crate::conditions::{AppendConditionFailure, ConditionFailure};
use crate::{MetadataError, NameError};

/// Everything a [`crate::Store`] operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The container does not exist.
    #[error("The specified container does not exist.")]
    ContainerNotFound,
    /// Create Container on an existing name.
    #[error("The specified container already exists.")]
    ContainerAlreadyExists,
    /// Set Blob Expiry with an expiry time that is not in the future.
    #[error("The value for one of the HTTP headers is not in the correct format.")]
    InvalidExpiryTime,
    /// The blob (or snapshot) does not exist.
    #[error("The specified blob does not exist.")]
    BlobNotFound,
    /// The operation does not apply to this blob's type.
    #[error("The blob type is invalid for this operation.")]
    InvalidBlobType,
    /// A base blob with snapshots deleted without `x-ms-delete-snapshots`.
    #[error("This operation is not permitted because the blob has snapshots.")]
    SnapshotsPresent,
    /// A Put Block List entry names a block that does not exist, or the list
    /// is malformed.
    #[error("The specified block list is invalid.")]
    InvalidBlockList,
    /// A block id whose length differs from the blob's other block ids.
    #[error("The specified blob or block content is invalid.")]
    InvalidBlobOrBlock,
    /// Too many committed (50,000) or uncommitted (100,000) blocks.
    #[error("The block count exceeds the maximum limit.")]
    BlockCountExceedsLimit {
        /// True for the uncommitted-block limit.
        uncommitted: bool,
    },
    /// A page or append write to the destination of a pending copy.
    #[error("There is currently a pending copy operation.")]
    PendingCopyOperation,
    /// Abort Copy Blob when no copy is pending.
    #[error("There is currently no pending copy operation.")]
    NoPendingCopyOperation,
    /// Abort Copy Blob with another copy id than the pending copy's.
    #[error("The specified copy ID did not match the copy ID for the pending copy operation.")]
    CopyIdMismatch,
    /// The copy source does not exist or may not be read.
    #[error("Could not verify the copy source within the specified time.")]
    CannotVerifyCopySource,
    /// A copy onto a blob holding a fixed-duration lease.
    #[error("The lease ID matched, but the specified lease must be an infinite-duration lease.")]
    InfiniteLeaseDurationRequired,
    /// A conditional header was not met.
    #[error("condition failed: {0:?}")]
    Condition(ConditionFailure),
    /// An append condition was not met.
    #[error("append condition failed: {0:?}")]
    AppendCondition(AppendConditionFailure),
    /// A lease refused the request.
    #[error(transparent)]
    Lease(#[from] stowage_leases::Error),
    /// A bad container or blob name.
    #[error(transparent)]
    Name(#[from] NameError),
    /// Bad metadata.
    #[error(transparent)]
    Metadata(#[from] MetadataError),
    /// A tag set that breaks the rules of blob index tags.
    #[error(transparent)]
    Tag(#[from] crate::TagError),
    /// The body's MD5 differs from the `Content-MD5` the client sent.
    #[error(
        "The MD5 value specified in the request did not match the MD5 value calculated by the server."
    )]
    Md5Mismatch {
        /// What the client sent.
        expected: [u8; 16],
        /// What the body hashed to.
        computed: [u8; 16],
    },
    /// The body's CRC64 differs from the `x-ms-content-crc64` the client sent.
    #[error(
        "The CRC64 value specified in the request did not match the CRC64 value calculated by the server."
    )]
    Crc64Mismatch {
        /// The CRC the client sent; `None` when the header held more than
        /// eight bytes, so that no CRC could match and the body was not read.
        expected: Option<u64>,
        /// What the body hashed to (`None` when it was not read).
        computed: Option<u64>,
    },
    /// Reading or changing the content or properties of an archived blob.
    #[error("This operation is not permitted on an archived blob.")]
    BlobArchived,
    /// The same, while a rehydration out of the archive tier is pending.
    #[error("This operation is not permitted because the blob is being rehydrated.")]
    BlobBeingRehydrated,
    /// An access tier on a blob that is not a block blob.
    #[error("The access tier is not supported for this blob type.")]
    AccessTierNotSupportedForBlobType,
    /// An append to a sealed append blob.
    #[error("This operation is not permitted as the blob is sealed.")]
    BlobIsSealed,
    /// The requested range starts at or past the end of the blob.
    #[error("The range specified is invalid for the current size of the resource.")]
    InvalidRange {
        /// The blob's size, for `Content-Range: bytes */size`.
        size: u64,
    },
    /// The body is longer than the operation allows.
    #[error("The request body is too large and exceeds the maximum permissible limit.")]
    RequestBodyTooLarge {
        /// The limit in bytes.
        max: u64,
    },
    /// The body ended before `Content-Length` bytes, or went past it.
    #[error("One of the request inputs is not valid.")]
    BodyLengthMismatch {
        /// What the request declared.
        declared: u64,
        /// What arrived (at least).
        received: u64,
    },
    /// Reading the request body failed (the client went away).
    #[error("reading the request body failed: {0}")]
    Body(#[source] std::io::Error),
    /// A page range that is not page-aligned or lies past the end of the
    /// page blob (docs/wire/pages.md).
    #[error("The page range specified is invalid.")]
    InvalidPageRange,
    /// An `x-ms-if-sequence-number-*` condition does not hold.
    #[error("The sequence number condition specified was not met.")]
    SequenceNumberConditionNotMet,
    /// `x-ms-sequence-number-action: increment` at the largest number.
    #[error(
        "The sequence number increment cannot be performed because it would result in overflow of the sequence number."
    )]
    SequenceNumberIncrementTooLarge,
    /// Get Page Ranges with `prevsnapshot` naming no snapshot of the blob.
    #[error("The previous snapshot is not found.")]
    PreviousSnapshotNotFound,
    /// Incremental Copy Blob from a base blob, not a snapshot.
    #[error("The source for incremental copy request must be a snapshot.")]
    IncrementalCopySourceMustBeSnapshot,
    /// Incremental Copy Blob from a blob that is not a page blob.
    #[error("The source blob type is invalid for this operation.")]
    InvalidSourceBlobType,
    /// Incremental Copy Blob onto a blob that is not an incremental copy of
    /// the same source.
    #[error(
        "The specified source blob is different than the copy source of the existing incremental copy blob."
    )]
    IncrementalCopyBlobMismatch,
    /// Incremental Copy Blob of a snapshot no newer than the last one copied.
    #[error(
        "The specified snapshot is earlier than the last snapshot copied into the incremental copy blob."
    )]
    IncrementalCopyOfEarlierVersionSnapshotNotAllowed,
    /// A change to the content of an incremental-copy destination.
    #[error("The specified operation is not allowed on an incremental copy blob.")]
    OperationNotAllowedOnIncrementalCopyBlob,
    /// The operation is addressed to a snapshot but only applies to base blobs.
    #[error("Invalid operation against a blob snapshot.")]
    SnapshotOperation,
    /// `deletetype=permanent` where the account's soft delete policy does
    /// not allow it, or on something that is not a snapshot or version.
    #[error(
        "Permanent delete is not allowed for this blob or its account's delete retention policy."
    )]
    PermanentDeleteNotAllowed,
    /// `deletetype=permanent` on a snapshot or previous version that is not
    /// soft-deleted: only soft-deleted ones are deleted permanently.
    #[error("The specified snapshot or version is not soft-deleted.")]
    NotSoftDeleted,
    /// Delete Blob with `versionid=` naming the current version: the
    /// current version is deleted through the blob itself.
    #[error("The specified operation is not allowed on root blob.")]
    OperationNotAllowedOnRootBlob,
    /// The metadata database failed.
    #[error("metadata database: {0}")]
    Db(#[from] rusqlite::Error),
    /// The PostgreSQL metadata database (cluster mode) failed.
    #[error("metadata database: {0}")]
    Postgres(#[from] postgres::Error),
    /// The object store failed.
    #[error("object store: {0}")]
    ObjectStore(#[from] object_store::Error),
    /// Local file system IO failed (opening the data directory).
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// A blocking task panicked or was cancelled.
    #[error("background task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The disk of the data directory is full: writes that need room are
    /// refused until space comes back (deletes and lease actions still run,
    /// on the room the store keeps in reserve for them).
    #[error("the disk of the data directory is full")]
    DiskFull,
    /// The metadata database of cluster mode did not answer in time (a
    /// database that stopped answering without closing the connection).
    #[error("metadata database unavailable: {0}")]
    Unavailable(String),
    /// A failure inside the engine (a failed group commit, a panicked write).
    #[error("internal error: {0}")]
    Internal(String),
    /// Stored data that cannot be read back (a bug or a damaged database).
    #[error("corrupt metadata: {0}")]
    Corrupt(String),
}

impl Error {
    /// True when this failure is the file system running out of room:
    /// `ENOSPC` or `EDQUOT` from a file write, or SQLite's `SQLITE_FULL`
    /// ("database or disk is full").
    /// True when this failure says "not now" rather than "wrong": the
    /// PostgreSQL metadata database unreachable, restarting, out of
    /// connections or out of time, or a transaction that lost a race. The
    /// server answers these 503 ServerBusy, which clients retry.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Error::Unavailable(_) => true,
            Error::Postgres(e) => crate::meta::pg::unavailable(e),
            _ => false,
        }
    }

    pub(crate) fn is_disk_full(&self) -> bool {
        match self {
            Error::DiskFull => true,
            Error::Db(e) => sqlite_full(e),
            Error::Io(e) => io_full(e),
            Error::ObjectStore(e) => source_chain_is_full(e),
            _ => false,
        }
    }
}

pub(crate) fn sqlite_full(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
}

fn io_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}

/// The object store wraps the `io::Error` of a failed file write in its own
/// errors; this looks for it among their sources.
fn source_chain_is_full(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(err) = next {
        if err.downcast_ref::<std::io::Error>().is_some_and(io_full) {
            return true;
        }
        next = err.source();
    }
    false
}

impl From<ConditionFailure> for Error {
    fn from(f: ConditionFailure) -> Self {
        Error::Condition(f)
    }
}

impl From<AppendConditionFailure> for Error {
    fn from(f: AppendConditionFailure) -> Self {
        Error::AppendCondition(f)
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
