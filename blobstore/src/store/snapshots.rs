//! Snapshot Blob (docs/wire/blobs.md#snapshot-blob): a read-only version that
//! shares its base's extents.

use stowage_leases::{Access, LeaseId, LeaseRecord, Resource};

use super::Store;
use super::blobs::require_committed;
use crate::conditions::{self, ConditionKind, Conditions, Current};
use crate::meta::{self, NewBlob};
use crate::{BlobName, ContainerName, Metadata, Result, Versioned};

/// Input of Snapshot Blob.
#[derive(Clone, Debug)]
pub struct SnapshotBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The base blob.
    pub blob: BlobName,
    /// Metadata for the snapshot; `None` copies the base blob's.
    pub metadata: Option<Metadata>,
    /// Conditional headers (failures are always 412).
    pub conditions: Conditions,
    /// `x-ms-lease-id`, checked when sent (a leased blob may be snapshotted
    /// without it).
    pub lease_id: Option<LeaseId>,
}

/// Output of Snapshot Blob.
#[derive(Clone, Debug)]
pub struct SnapshotBlobOutput {
    /// The new snapshot id.
    pub snapshot: String,
    /// The snapshot's ETag and Last-Modified.
    pub version: Versioned,
    /// With versioning on, the id of the blob's new current version: a
    /// snapshot of a versioned blob also makes a new version.
    pub version_id: Option<String>,
}

impl Store {
    /// Snapshot Blob.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `BlobArchived` and `BlobBeingRehydrated`.
    pub async fn snapshot_blob(&self, input: SnapshotBlobInput) -> Result<SnapshotBlobOutput> {
        let now = self.now();
        let store = self.clone();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
            let now = store.judge_now(tx, now)?;
            let base = require_committed(tx, cid, &input.blob, None, now)?;
            let current = Current {
                etag: base.version.etag.as_str(),
                last_modified: base.version.last_modified,
            };
            conditions::evaluate(&input.conditions, Some(current), ConditionKind::Write)?;
            super::tags::check_if_tags(tx, &input.conditions, Some(base.id), ConditionKind::Write)?;
            stowage_leases::check(
                &base.lease,
                input.lease_id.as_ref(),
                Access::Read,
                Resource::Blob,
                now,
            )?;
            base.tier.check_online(now)?;
            // Unique per blob, soft-deleted snapshots included: a second
            // snapshot in the same 100 ns tick moves to the next tick
            // (docs/wire/requests.md#dates-and-times).
            let id = super::versions::unique_snapshot_id(tx, cid, input.blob.as_str(), now)?;
            let (metadata, version) = match input.metadata.clone() {
                Some(m) => (
                    m,
                    Versioned {
                        etag: store.inner.etags.next(now),
                        last_modified: now,
                    },
                ),
                None => (base.metadata.clone(), base.version.clone()),
            };
            let snapshot = NewBlob {
                name: base.name.clone(),
                snapshot: Some(id.clone()),
                committed: true,
                blob_type: base.blob_type,
                size: base.size,
                version: version.clone(),
                creation_time: base.creation_time,
                content: base.content.clone(),
                metadata,
                committed_block_count: base.committed_block_count,
                sealed: base.sealed,
                tier: base.tier.settled(now),
                copy: base.copy.clone(),
                lease: LeaseRecord::default(),
                extents: Vec::new(),
                version_id: None,
            };
            let snapshot_id = meta::insert_blob(tx, cid, &snapshot)?;
            meta::share_content(tx, base.id, snapshot_id)?;
            // A snapshot keeps the tags the base blob has when it is taken.
            meta::copy_tags(tx, base.id, snapshot_id)?;
            // With versioning on the service makes a new version as it
            // takes the snapshot: the current one becomes a previous
            // version and a new current one, with the same content,
            // gets a new id
            // (https://learn.microsoft.com/en-us/azure/storage/blobs/versioning-overview#snapshot-a-blob-when-versioning-is-enabled).
            let keeping = store.keeping(tx, &input.account)?;
            let version_id = if keeping.versioning {
                super::versions::keep_replaced(tx, cid, &base, keeping, now)?;
                let vid = super::versions::unique_version_id(
                    tx,
                    cid,
                    &base.name,
                    base.version_id.as_deref(),
                    now,
                )?;
                meta::set_version_id(tx, base.id, &vid)?;
                Some(vid)
            } else {
                None
            };
            Ok(SnapshotBlobOutput {
                snapshot: id,
                version,
                version_id,
            })
        })
        .await
    }
}
