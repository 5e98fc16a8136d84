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
use crate::extents::WrittenExtent;
use crate::meta::{self, NewBlob, PageRow};
use crate::pages::map::Run;
use crate::{
    BlobType, ContainerName, ContentProperties, CopyProperties, CopySource, Error, Metadata,
    Result, TierRecord, Versioned, iso8601_7,
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

/// Incremental Copy Blob from a snapshot on another host: what the server
/// learnt of the source, with the pages it fetched (see
/// [`Store::incremental_copy_from_remote`]).
#[derive(Clone, Debug)]
pub struct RemoteIncrementalCopyInput {
    /// The destination account.
    pub account: String,
    /// The destination container.
    pub container: ContainerName,
    /// The destination blob.
    pub blob: crate::BlobName,
    /// The source blob's identity: its URL without the query.
    pub source: String,
    /// The source snapshot's id (`snapshot=` of its URL).
    pub source_snapshot: String,
    /// `x-ms-copy-source` exactly as sent.
    pub source_header: String,
    /// The source snapshot's length.
    pub size: u64,
    /// Its `x-ms-blob-sequence-number`.
    pub sequence_number: u64,
    /// Its content properties.
    pub content: ContentProperties,
    /// Its metadata.
    pub metadata: Metadata,
    /// `Some(destination snapshot)`: the pages fetched are the changes
    /// since the source snapshot the destination snapshot holds (a later
    /// copy); `None`: they are all the source's pages (a first copy).
    pub since: Option<String>,
    /// With `since`: the ranges cleared since then.
    pub cleared: Vec<std::ops::Range<u64>>,
    /// Destination conditions.
    pub conditions: Conditions,
    /// Destination `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
}

/// What the last incremental copy into a blob copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncrementalCopyState {
    /// The source snapshot it copied.
    pub source_snapshot: String,
    /// The destination's snapshot of what it copied.
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
        // The source's lock too: the copy refers to its extents.
        self.inner
            .db
            .locking(meta::Scope::blobs(
                (
                    &input.account,
                    input.container.as_str(),
                    input.blob.as_str(),
                ),
                (
                    &input.source.account,
                    input.source.container.as_str(),
                    input.source.blob.as_str(),
                ),
            ))
            .write_again(move |tx| {
                let now = store.now();
                let src = &input.source;
                let source = super::copy::source_row(tx, src, now)?;
                let now = store.judge_now(tx, now)?;
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
                    copy_destination_snapshot: Some(snapshot_id),
                    incremental_source: Some(identity),
                    incremental_source_snapshot: Some(source_snapshot),
                };
                end_incremental(tx, cid, dest_id, new, &page, version, copy_id.clone())
            })
            .await
    }

    /// The state of `blob` as an incremental copy of `source` (a source on
    /// another host, by its identity): `None` when it is not one, or its
    /// destination snapshot is gone (the next copy then copies all).
    ///
    /// # Errors
    /// `ContainerNotFound`; database failures.
    pub async fn incremental_copy_state(
        &self,
        account: &str,
        container: &ContainerName,
        blob: &crate::BlobName,
        source: &str,
    ) -> Result<Option<IncrementalCopyState>> {
        let (account, container, blob) = (
            account.to_owned(),
            container.as_str().to_owned(),
            blob.as_str().to_owned(),
        );
        let source = source.to_owned();
        self.inner
            .db
            .call(move |conn| {
                let cid = meta::container_id(conn, &account, &container)?;
                let Some(row) = meta::get_blob(conn, cid, &blob, None)?.filter(|r| r.committed)
                else {
                    return Ok(None);
                };
                let page = meta::page_row(conn, row.id)?.unwrap_or_default();
                let (Some(source_snapshot), Some(destination_snapshot)) = (
                    page.incremental_source_snapshot,
                    page.copy_destination_snapshot,
                ) else {
                    return Ok(None);
                };
                let ours = page.incremental_copy
                    && page.incremental_source.as_deref() == Some(source.as_str());
                let kept = meta::get_blob(conn, cid, &blob, Some(&destination_snapshot))?.is_some();
                Ok((ours && kept).then_some(IncrementalCopyState {
                    source_snapshot,
                    destination_snapshot,
                }))
            })
            .await
    }

    /// Incremental Copy Blob from a snapshot on another host: the pages
    /// the server fetched (`bytes`, laid out at their page ranges) become
    /// the destination's content, over its previous content when they are
    /// the changes since its last copy (`input.since`), and a snapshot of
    /// the destination is taken. Same checks as [`Store::incremental_copy_blob`].
    ///
    /// # Errors
    /// As [`Store::incremental_copy_blob`] for the destination;
    /// `IncrementalCopyBlobMismatch` also when the destination snapshot of
    /// `since` is gone.
    pub async fn incremental_copy_from_remote(
        &self,
        input: RemoteIncrementalCopyInput,
        bytes: super::CopiedBytes,
    ) -> Result<IncrementalCopyBlobOutput> {
        let store = self.clone();
        let copy_id = uuid::Uuid::new_v4().to_string();
        let (written, ranges) = bytes.into_parts();
        let written_id = written.id.clone();
        let result = self
            .inner
            .db
            .write_again(move |tx| {
                let now = store.now();
                store.write_remote_incremental(
                    tx,
                    &input,
                    &written,
                    ranges.clone(),
                    copy_id.clone(),
                    now,
                )
            })
            .await;
        if result.is_err()
            && let Some(id) = &written_id
        {
            self.inner.extents.discard(id).await;
        }
        result
    }

    fn write_remote_incremental(
        &self,
        tx: &dyn Sql,
        input: &RemoteIncrementalCopyInput,
        written: &WrittenExtent,
        ranges: Option<Vec<std::ops::Range<u64>>>,
        copy_id: String,
        now: std::time::SystemTime,
    ) -> Result<IncrementalCopyBlobOutput> {
        let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
        let name = input.blob.as_str();
        super::expiry::purge_if_expired(tx, cid, name, now)?;
        let dest = meta::get_blob(tx, cid, name, None)?;
        let committed = dest.as_ref().filter(|r| r.committed);
        let current = committed.map(|r| Current {
            etag: r.version.etag.as_str(),
            last_modified: r.version.last_modified,
        });
        conditions::evaluate(&input.conditions, current, ConditionKind::Create)?;
        let lease = lease_after_write(committed, input.lease_id.as_ref(), now)?;
        let mut previous = None;
        if let Some(r) = committed {
            let page = meta::page_row(tx, r.id)?.unwrap_or_default();
            if r.blob_type != BlobType::PageBlob
                || !page.incremental_copy
                || page.incremental_source.as_deref() != Some(input.source.as_str())
            {
                return Err(Error::IncrementalCopyBlobMismatch);
            }
            if page
                .incremental_source_snapshot
                .as_deref()
                .is_some_and(|last| input.source_snapshot.as_str() <= last)
            {
                return Err(Error::IncrementalCopyOfEarlierVersionSnapshotNotAllowed);
            }
            previous = Some(r.size);
        }
        // The changes apply over what the destination snapshot holds.
        let base = match &input.since {
            Some(s) => Some(
                meta::get_blob(tx, cid, name, Some(s))?
                    .filter(|_| previous.is_some())
                    .ok_or(Error::IncrementalCopyBlobMismatch)?,
            ),
            None => None,
        };
        WrittenExtent::store_inline(written.id.as_deref(), written.inline.as_ref(), tx)?;
        let version = Versioned {
            etag: self.inner.etags.next(now),
            last_modified: now,
        };
        let mut new = NewBlob {
            name: name.to_owned(),
            snapshot: None,
            committed: true,
            blob_type: BlobType::PageBlob,
            size: input.size,
            version: version.clone(),
            creation_time: committed.map_or(now, |r| r.creation_time),
            content: input.content.clone(),
            metadata: input.metadata.clone(),
            committed_block_count: None,
            sealed: false,
            tier: TierRecord::written(None),
            copy: Some(CopyProperties {
                id: copy_id.clone(),
                source: input.source_header.clone(),
                progress: format!("{0}/{0}", input.size),
                completion_time: now,
                pending: false,
                status: crate::CopyStatus::Success,
                description: None,
            }),
            lease,
            extents: Vec::new(),
            version_id: None,
        };
        let keeping = self.keeping(tx, &input.account)?;
        let dest_id = super::versions::write_base(tx, cid, dest.as_ref(), &mut new, keeping, now)?;
        if let Some(base) = &base {
            meta::share_content(tx, base.id, dest_id)?;
            // A smaller source: what lies past its end goes.
            if base.size > input.size {
                super::pages::rewrite(tx, dest_id, input.size..base.size, None, now)?;
            }
        }
        for r in &input.cleared {
            super::pages::rewrite(tx, dest_id, r.clone(), None, now)?;
        }
        if let Some(extent) = &written.id {
            let mut at = 0;
            for r in ranges.unwrap_or_default() {
                let run = Run {
                    start: r.start,
                    end: r.end,
                    extent: extent.clone(),
                    at,
                };
                at += r.end - r.start;
                super::pages::rewrite(tx, dest_id, r, Some(run), now)?;
            }
        }
        let snapshot_id = free_snapshot_id(tx, cid, name, now)?;
        let page = PageRow {
            sequence_number: input.sequence_number,
            incremental_copy: true,
            copy_destination_snapshot: Some(snapshot_id),
            incremental_source: Some(input.source.clone()),
            incremental_source_snapshot: Some(input.source_snapshot.clone()),
        };
        end_incremental(tx, cid, dest_id, new, &page, version, copy_id)
    }
}

/// The end of an incremental copy, local or from another host: the
/// destination's page row (`page`, naming the snapshot it takes), and that
/// snapshot of the destination `new` just written (row `dest_id`), sharing
/// its content.
fn end_incremental(
    tx: &dyn Sql,
    cid: i64,
    dest_id: i64,
    new: NewBlob,
    page: &PageRow,
    version: Versioned,
    copy_id: String,
) -> Result<IncrementalCopyBlobOutput> {
    meta::put_page_row(tx, dest_id, page)?;
    let snapshot_id = page.copy_destination_snapshot.clone().unwrap_or_default();
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
}
