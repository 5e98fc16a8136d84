//! The data model: what a container and a blob version are made of.

use std::time::SystemTime;

use stowage_leases::LeaseProperties;

use crate::{Etag, Metadata};

/// The three kinds of blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlobType {
    /// Content written whole or as committed blocks.
    BlockBlob,
    /// Content that only grows, one appended block at a time.
    AppendBlob,
    /// Random-access 512-byte pages.
    PageBlob,
}

impl BlobType {
    /// The service's spelling (`x-ms-blob-type`, `<BlobType>`).
    pub fn as_str(self) -> &'static str {
        match self {
            BlobType::BlockBlob => "BlockBlob",
            BlobType::AppendBlob => "AppendBlob",
            BlobType::PageBlob => "PageBlob",
        }
    }

    /// Parses the service's spelling (case-sensitive).
    pub fn parse(s: &str) -> Option<BlobType> {
        match s {
            "BlockBlob" => Some(BlobType::BlockBlob),
            "AppendBlob" => Some(BlobType::AppendBlob),
            "PageBlob" => Some(BlobType::PageBlob),
            _ => None,
        }
    }
}

/// The six content properties of a blob (docs/wire/requests.md#content-properties).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentProperties {
    /// `Content-Type`; `None` (cleared by Set Blob Properties) reads back
    /// with no `Content-Type` at all, as the service answers.
    pub content_type: Option<String>,
    /// `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// `Content-Language`.
    pub content_language: Option<String>,
    /// The stored whole-blob MD5: sixteen bytes when computed or checked,
    /// any length when set by Set Blob Properties or Put Block List (the
    /// service stores those as given).
    pub content_md5: Option<Vec<u8>>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// `Content-Disposition`.
    pub content_disposition: Option<String>,
}

/// A container's public access level (docs/wire/auth.md#anonymous-access).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublicAccess {
    /// Anonymous clients may list and read the container's blobs.
    Container,
    /// Anonymous clients may read blobs they can name.
    Blob,
}

impl PublicAccess {
    /// The service's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PublicAccess::Container => "container",
            PublicAccess::Blob => "blob",
        }
    }

    /// Parses the service's spelling.
    pub fn parse(s: &str) -> Option<PublicAccess> {
        match s {
            "container" => Some(PublicAccess::Container),
            "blob" => Some(PublicAccess::Blob),
            _ => None,
        }
    }
}

/// A stored access policy of a container's ACL (docs/wire/containers.md#get-container-acl,
/// docs/wire/containers.md#set-container-acl): what a SAS naming it by `si` may do, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessPolicy {
    /// The policy's name (1–64 characters).
    pub id: String,
    /// Start of validity.
    pub start: Option<SystemTime>,
    /// End of validity.
    pub expiry: Option<SystemTime>,
    /// Permission letters.
    pub permission: Option<String>,
}

/// A container's ACL: public access level and stored access policies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerAcl {
    /// The public access level.
    pub public_access: Option<PublicAccess>,
    /// Up to five stored access policies.
    pub policies: Vec<AccessPolicy>,
    /// The container's ETag and Last-Modified.
    pub version: Versioned,
}

/// The identity of one version of a resource: what every write returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    /// The new (or current) ETag.
    pub etag: Etag,
    /// The new (or current) Last-Modified, full precision.
    pub last_modified: SystemTime,
}

/// Everything Get Container Properties reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerProperties {
    /// The container name.
    pub name: String,
    /// ETag and Last-Modified.
    pub version: Versioned,
    /// User metadata.
    pub metadata: Metadata,
    /// Lease state at the time of the request.
    pub lease: LeaseProperties,
    /// Public access level, `None` when private.
    pub public_access: Option<PublicAccess>,
    /// `x-ms-default-encryption-scope` as given at creation.
    pub default_encryption_scope: String,
    /// `x-ms-deny-encryption-scope-override` as given at creation.
    pub deny_encryption_scope_override: bool,
    /// Set for a soft-deleted container (List Containers `include=deleted`).
    pub deleted: Option<DeletedContainer>,
}

/// What List Containers shows of a soft-deleted container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeletedContainer {
    /// `Version`: names this deletion for Restore Container.
    pub version: String,
    /// `DeletedTime`.
    pub deleted_time: SystemTime,
    /// `RemainingRetentionDays`.
    pub remaining_retention_days: u64,
}

impl DeletedContainer {
    /// Whole days left before `purge_at`, counting a part of a day as one
    /// (a container deleted a moment ago with 7 days of retention has 7).
    pub fn remaining_days(purge_at: SystemTime, now: SystemTime) -> u64 {
        const DAY: u64 = 24 * 3600;
        let left = purge_at.duration_since(now).unwrap_or_default();
        let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        secs.div_ceil(DAY)
    }
}

/// Where a copy into a blob stands (`x-ms-copy-status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyStatus {
    /// The bytes are all there.
    Success,
    /// Still copying (from another host, or waiting for a rehydration).
    Pending,
    /// Ended without the bytes; the description says why.
    Failed,
    /// Stopped by Abort Copy Blob.
    Aborted,
}

impl CopyStatus {
    /// The header value.
    pub fn as_str(self) -> &'static str {
        match self {
            CopyStatus::Success => "success",
            CopyStatus::Pending => "pending",
            CopyStatus::Failed => "failed",
            CopyStatus::Aborted => "aborted",
        }
    }

    /// Parses a stored value (`None` for anything else).
    pub fn parse(s: &str) -> Option<CopyStatus> {
        Some(match s {
            "success" => CopyStatus::Success,
            "pending" => CopyStatus::Pending,
            "failed" => CopyStatus::Failed,
            "aborted" => CopyStatus::Aborted,
            _ => return None,
        })
    }
}

/// The copy properties of a Copy Blob destination. A copy within the
/// server completes before its response; a copy from another host is
/// pending while the server fetches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyProperties {
    /// `x-ms-copy-id`.
    pub id: String,
    /// `x-ms-copy-source`, as the request sent it.
    pub source: String,
    /// `x-ms-copy-progress`: `<copied>/<total>`.
    pub progress: String,
    /// `x-ms-copy-completion-time`; for a copy of an archived blob, when
    /// the destination's rehydration ends.
    pub completion_time: SystemTime,
    /// The copy is still pending (`x-ms-copy-status: pending`): a copy of
    /// an archived blob waits for its destination's rehydration. Worked out
    /// from `completion_time` and the time of the request, never stored.
    pub pending: bool,
    /// The stored status; `Success` for a copy that waits only for a
    /// rehydration (`pending` says whether it is still waiting).
    pub status: CopyStatus,
    /// `x-ms-copy-status-description` of a failed or pending copy.
    pub description: Option<String>,
}

impl CopyProperties {
    /// `x-ms-copy-status` as seen now.
    pub fn status_str(&self) -> &'static str {
        if self.pending {
            CopyStatus::Pending.as_str()
        } else {
            self.status.as_str()
        }
    }

    /// The copy as seen at `now`: pending, with nothing copied yet, until
    /// its completion time.
    pub(crate) fn at(mut self, now: SystemTime) -> CopyProperties {
        if self.status != CopyStatus::Success {
            // A copy from another host: its progress is what was fetched.
            self.pending = self.status == CopyStatus::Pending;
            return self;
        }
        self.pending = self.completion_time > now;
        if self.pending
            && let Some((_, total)) = self.progress.split_once('/')
        {
            self.progress = format!("0/{total}");
        }
        self
    }
}

/// Everything Get Blob Properties reports about one blob version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobProperties {
    /// The blob name.
    pub name: String,
    /// The snapshot id, for a snapshot.
    pub snapshot: Option<String>,
    /// Block, append or page blob.
    pub blob_type: BlobType,
    /// Content length in bytes.
    pub size: u64,
    /// ETag and Last-Modified.
    pub version: Versioned,
    /// When the blob was first created.
    pub creation_time: SystemTime,
    /// The six content properties.
    pub content: ContentProperties,
    /// User metadata.
    pub metadata: Metadata,
    /// Lease state at the time of the request (snapshots: always available).
    pub lease: LeaseProperties,
    /// Number of committed blocks (append blobs).
    pub committed_block_count: Option<u64>,
    /// The access tier at the time of the request (block blobs).
    pub tier: crate::TierProperties,
    /// Copy properties, when the blob is a Copy Blob destination not
    /// modified since.
    pub copy: Option<CopyProperties>,
    /// True for a sealed append blob.
    pub sealed: bool,
    /// How many blob index tags the version has (`x-ms-tag-count`; in a
    /// listing only filled with `include=tags`).
    pub tag_count: u64,
    /// The tags themselves, in a listing with `include=tags`.
    pub tags: Option<crate::Tags>,
    /// When the blob expires (Set Blob Expiry), if it does.
    pub expires_on: Option<SystemTime>,
    /// The version id, when versioning gave this content one.
    pub version_id: Option<String>,
    /// Whether this is the current version: `Some` only for a blob that has
    /// a version id (`x-ms-is-current-version`, `IsCurrentVersion`).
    pub is_current_version: Option<bool>,
    /// When it was soft-deleted and how many days of retention remain.
    pub deleted: Option<DeletedState>,
    /// What only a page blob has (`None` for other types).
    pub page: Option<PageProperties>,
}

/// The properties only a page blob has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageProperties {
    /// `x-ms-blob-sequence-number`.
    pub sequence_number: u64,
    /// True for the destination of an Incremental Copy Blob.
    pub incremental_copy: bool,
    /// `x-ms-copy-destination-snapshot`: the snapshot the last incremental
    /// copy made of the destination.
    pub copy_destination_snapshot: Option<String>,
}

/// The state of a soft-deleted blob, snapshot or version (List Blobs with
/// `include=deleted`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeletedState {
    /// When it was deleted.
    pub deleted_time: SystemTime,
    /// Whole days until it is purged, rounded up.
    pub remaining_retention_days: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn remaining_retention_days_count_a_started_day_as_one() {
        let day = Duration::from_secs(24 * 3600);
        let purge = UNIX_EPOCH + day * 100;
        let cases = [
            (purge - day * 7, 7),
            (purge - day * 7 + Duration::from_nanos(1), 7),
            (purge - day * 6 - Duration::from_nanos(1), 7),
            (purge - day * 6, 6),
            (purge - Duration::from_secs(1), 1),
            (purge, 0),
            (purge + day, 0),
        ];
        for (now, want) in cases {
            assert_eq!(
                DeletedContainer::remaining_days(purge, now),
                want,
                "{now:?}"
            );
        }
    }
}
