//! Incremental Copy Blob (docs/wire/pages.md#incremental-copy-blob): a
//! snapshot of a page blob becomes the content of a destination page blob
//! tied to that source, and the destination is snapshotted. Like Copy Blob
//! here, it completes before the response: the destination shares the
//! source snapshot's extents (its page map rows are copied), so only the
//! differences are ever stored.

use crate::meta::sql::Sql;
use std::time::Duration;

use stowage_leases::{LeaseId, LeaseRecord};

use super::Store;
use super::blobs::lease_after_write;
use crate::conditions::{self, ConditionKind, Conditions, Current};
use crate::meta::{self, NewBlob, PageRow};
use crate::{
    BlobType, ContainerName, CopyProperties, CopySource, Error, Result, TierRecord, Versioned,
    iso8601_7,
};

/// Input of Incremental Copy Blob.
#[derive(Clone, Debug)]
pub struct IncrementalCopyBlobInput {
    /// The destination account.
    pub account: String,
    /// The destination container.
    pub container: ContainerName,
    /// The destination blob.
    pub blob: crate::BlobName,
    /// The source: a snapshot of a page blob.
    pub source: CopySource,
    /// `x-ms-copy-source` exactly as sent.
    pub source_header: String,
    /// Destination conditions.
    pub conditions: Conditions,
    /// Destination `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
}

/// Output of Incremental Copy Blob.
#[derive(Clone, Debug)]
pub struct IncrementalCopyBlobOutput {
    /// The destination's new version.
    pub version: Versioned,
    /// The new copy id.
    pub copy_id: String,
    /// The snapshot of the destination this copy made
    /// (`x-ms-copy-destination-snapshot`).
    pub destination_snapshot: String,
}

/// A snapshot id for blob `name` at `now` that no snapshot has yet (a
/// second one in the same 100 ns tick moves to the next tick).
fn free_snapshot_id(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
    now: std::time::SystemTime,
) -> Result<String> {
    let mut at = now;
    let mut id = iso8601_7(at);
    while meta::get_blob(conn, container_id, name, Some(&id))?.is_some() {
        at += Duration::from_nanos(100);
        id = iso8601_7(at);
    }
    Ok(id)
}

impl Store {
    /// Incremental Copy Blob.
    ///
    /// # Errors
    /// Source: `CannotVerifyCopySource`, `BlobNotFound`,
    /// `InvalidSourceBlobType`, `IncrementalCopySourceMustBeSnapshot`.
    /// Destination: `ContainerNotFound`, condition and lease refusals,
    /// `IncrementalCopyBlobMismatch`,
    /// `IncrementalCopyOfEarlierVersionSnapshotNotAllowed`.
    pub async fn incremental_copy_blob(
        &self,
        input: IncrementalCopyBlobInput,
    ) -> Result<IncrementalCopyBlobOutput> {
        let store = self.clone();
        let copy_id = uuid::Uuid::new_v4().to_string();
        self.inner
            .db
            .write(move |tx| {
                let now = store.now();
                let src = &input.source;
                let source = super::copy::source_row(tx, src, now)?;
                if source.blob_type != BlobType::PageBlob {
                    return Err(Error::InvalidSourceBlobType);
                }
                let Some(source_snapshot) = source.snapshot.clone() else {
                    return Err(Error::IncrementalCopySourceMustBeSnapshot);
                };
                let identity = format!("{}/{}/{}", src.account, src.container, src.blob);

                let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
                let dest = meta::get_blob(tx, cid, input.blob.as_str(), None)?;
                let committed = dest.as_ref().filter(|r| r.committed);
                let current = committed.map(|r| Current {
                    etag: r.version.etag.as_str(),
                    last_modified: r.version.last_modified,
                });
                conditions::evaluate(&input.conditions, current, ConditionKind::Create)?;
                let lease = lease_after_write(committed, input.lease_id.as_ref(), now)?;
                if let Some(r) = committed {
                    let page = meta::page_row(tx, r.id)?.unwrap_or_default();
                    if r.blob_type != BlobType::PageBlob
                        || !page.incremental_copy
                        || page.incremental_source.as_deref() != Some(identity.as_str())
                    {
                        return Err(Error::IncrementalCopyBlobMismatch);
                    }
                    // Snapshot ids are ISO 8601 times of one width: their
                    // order is their text order.
                    if page
                        .incremental_source_snapshot
                        .as_deref()
                        .is_some_and(|last| source_snapshot.as_str() <= last)
                    {
                        return Err(Error::IncrementalCopyOfEarlierVersionSnapshotNotAllowed);
                    }
                }
                let version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                let mut new = NewBlob {
                    name: input.blob.as_str().to_owned(),
                    snapshot: None,
                    committed: true,
                    blob_type: BlobType::PageBlob,
                    size: source.size,
                    version: version.clone(),
                    creation_time: committed.map_or(now, |r| r.creation_time),
                    content: source.content.clone(),
                    metadata: source.metadata.clone(),
                    committed_block_count: None,
                    sealed: false,
                    tier: TierRecord::written(None),
                    copy: Some(CopyProperties {
                        id: copy_id.clone(),
                        source: input.source_header.clone(),
                        progress: format!("{0}/{0}", source.size),
                        completion_time: now,
                        pending: false,
                        status: crate::CopyStatus::Success,
                        description: None,
                    }),
                    lease,
                    extents: Vec::new(),
                    version_id: None,
                };
                let keeping = store.keeping(tx, &input.account)?;
                let dest_id =
                    super::versions::write_base(tx, cid, dest.as_ref(), &mut new, keeping, now)?;
                meta::share_content(tx, source.id, dest_id)?;
                // The destination's own snapshot of what was copied.
                let snapshot_id = free_snapshot_id(tx, cid, input.blob.as_str(), now)?;
                let source_page = meta::page_row(tx, source.id)?.unwrap_or_default();
                let page = PageRow {
                    sequence_number: source_page.sequence_number,
                    incremental_copy: true,
                    copy_destination_snapshot: Some(snapshot_id.clone()),
                    incremental_source: Some(identity),
                    incremental_source_snapshot: Some(source_snapshot),
                };
                meta::put_page_row(tx, dest_id, &page)?;
                let snapshot = NewBlob {
                    snapshot: Some(snapshot_id.clone()),
                    lease: LeaseRecord::default(),
                    ..new
                };
                let snap_row = meta::insert_blob(tx, cid, &snapshot)?;
                meta::share_content(tx, dest_id, snap_row)?;
                Ok(IncrementalCopyBlobOutput {
                    version,
                    copy_id,
                    destination_snapshot: snapshot_id,
                })
            })
            .await
    }
}
