//! Copies whose bytes come from another host (docs/wire/copy.md). The
//! engine does not fetch: the server streams the source's bytes in, and
//! the engine checks the destination, writes the bytes to an extent and
//! keeps the copy's state in the destination's copy columns.
//!
//! The asynchronous copy is three steps: [`Store::begin_remote_copy`]
//! makes the destination a pending copy with no bytes (what the service
//! shows during a copy), [`Store::write_copied_bytes`] streams the bytes
//! into an extent that nothing references yet (with
//! [`Store::record_copy_progress`] beside it), and
//! [`Store::complete_remote_copy`] or [`Store::fail_remote_copy`] ends it.
//! A copy that was aborted or overwritten meanwhile is left as it is: the
//! extent is dropped. A restart ends every pending copy as failed (the
//! fetch is gone), so no copy stays pending for ever; in a cluster, the
//! copies of a node that died are ended so by another node
//! (`crate::liveness`).

use crate::meta::sql::Sql;
use bytes::Bytes;
use futures::Stream;
use stowage_leases::{LeaseDuration, LeaseId, LeaseRecord};

use super::Store;
use crate::conditions::Conditions;
use crate::extents::WrittenExtent;
use crate::meta::{self, BlobRow, ExtentRef, NewBlob, PageRow};
use crate::pages::map::Run;
use crate::{
    AccessTier, BlobName, BlobType, ContainerName, ContentProperties, CopyBlobOutput,
    CopyProperties, CopyStatus, Error, Metadata, Result, TierRecord, Versioned,
};

/// What the server says when a restart interrupted a copy.
pub const INTERRUPTED_COPY: &str = "500 InternalError \"The copy was interrupted: the server restarted before it completed. Start the copy again.\"";

/// A copy into this server from another host.
#[derive(Clone, Debug)]
pub struct RemoteCopyInput {
    /// The destination account.
    pub account: String,
    /// The destination container.
    pub container: ContainerName,
    /// The destination blob.
    pub blob: BlobName,
    /// The destination's type: the source's (an asynchronous copy), else
    /// a block blob.
    pub kind: CopiedType,
    /// `x-ms-copy-source` exactly as sent (recorded on the destination).
    pub source_header: String,
    /// The destination's metadata (the request's, else the source's).
    pub metadata: Metadata,
    /// The destination's content properties (the source's); the MD5 is
    /// the source's when it sent one, else the one computed over the bytes.
    pub content: ContentProperties,
    /// The source's length, as its answer declared it.
    pub size: u64,
    /// Destination conditions.
    pub conditions: Conditions,
    /// Destination `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// `x-ms-access-tier`.
    pub access_tier: Option<AccessTier>,
    /// `x-ms-tags`.
    pub tags: crate::Tags,
    /// `x-ms-source-content-md5` (Copy Blob From URL): checked against the
    /// bytes copied.
    pub expected_md5: Option<[u8; 16]>,
}

/// The type of a copy's destination, with what that type carries over
/// from the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CopiedType {
    /// A block blob (every copy whose source is not a page or append blob).
    #[default]
    Block,
    /// A page blob with the source's sequence number.
    Page {
        /// `x-ms-blob-sequence-number` of the source.
        sequence_number: u64,
    },
    /// An append blob with the source's committed block count.
    Append {
        /// `x-ms-blob-committed-block-count` of the source.
        committed_block_count: u64,
        /// Whether the copy ends sealed: the source's `x-ms-blob-sealed`,
        /// unless the request's `x-ms-seal-blob` says otherwise.
        sealed: bool,
    },
}

impl CopiedType {
    /// The destination's blob type.
    pub fn blob_type(self) -> BlobType {
        match self {
            CopiedType::Block => BlobType::BlockBlob,
            CopiedType::Page { .. } => BlobType::PageBlob,
            CopiedType::Append { .. } => BlobType::AppendBlob,
        }
    }
}

/// A pending copy from another host, as [`Store::begin_remote_copy`]
/// started it.
#[derive(Clone, Debug)]
pub struct CopyJob {
    blob_id: i64,
    kind: CopiedType,
    /// The copy id (`x-ms-copy-id`).
    pub copy_id: String,
    /// The number of bytes the copy expects.
    pub size: u64,
}

/// Bytes of a copy, written to an extent nothing references yet.
#[derive(Debug)]
pub struct CopiedBytes {
    written: WrittenExtent,
    /// Whether the MD5 is the source's (else computed over the bytes).
    md5_of_source: bool,
    /// For a page blob copied range by range: where the bytes go, in the
    /// order they were written (see [`CopiedBytes::at_page_ranges`]).
    page_ranges: Option<Vec<std::ops::Range<u64>>>,
}

impl CopiedBytes {
    /// The extent and, for bytes laid out by page ranges, the ranges.
    pub(super) fn into_parts(self) -> (WrittenExtent, Option<Vec<std::ops::Range<u64>>>) {
        (self.written, self.page_ranges)
    }

    /// MD5 of the bytes.
    pub fn md5(&self) -> [u8; 16] {
        self.written.md5
    }

    /// Says that the bytes are the source's page ranges `ranges` one after
    /// the other (a page blob copied without its empty pages): the
    /// destination's page map gets one run per range, the rest of the
    /// blob reads as zeros. Without a source MD5, the destination has
    /// none (the MD5 of the bytes written is not that of the blob).
    ///
    /// # Errors
    /// `InvalidPageRange` when the ranges are not in order, overlap, are
    /// not whole pages, or do not add up to the bytes written.
    pub fn at_page_ranges(mut self, ranges: Vec<std::ops::Range<u64>>) -> Result<CopiedBytes> {
        let mut end = 0;
        let mut total = 0;
        for r in &ranges {
            if r.start < end || r.end <= r.start || r.start % 512 != 0 || r.end % 512 != 0 {
                return Err(Error::InvalidPageRange);
            }
            end = r.end;
            total += r.end - r.start;
        }
        if total != self.written.len {
            return Err(Error::InvalidPageRange);
        }
        self.page_ranges = Some(ranges);
        Ok(self)
    }
}

/// The copy progress header value: `<copied>/<total>`.
pub fn copy_progress(copied: u64, total: u64) -> String {
    format!("{copied}/{total}")
}

impl Store {
    /// Starts an asynchronous copy from another host: checks the
    /// destination (conditions, lease, type) and makes it a pending copy
    /// with no bytes, the request's metadata and the source's properties.
    ///
    /// # Errors
    /// `ContainerNotFound`, destination condition and lease refusals,
    /// `InfiniteLeaseDurationRequired`, `InvalidBlobType`.
    pub async fn begin_remote_copy(
        &self,
        input: RemoteCopyInput,
    ) -> Result<(CopyBlobOutput, CopyJob)> {
        let now = self.now();
        let store = self.clone();
        let copy_id = uuid::Uuid::new_v4().to_string();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            let (cid, dest, lease, now) = check_destination(&store, tx, &input, now)?;
            let version = Versioned {
                etag: store.inner.etags.next(now),
                last_modified: now,
            };
            let mut content = input.content.clone();
            content.content_md5 = None;
            let copy = CopyProperties {
                id: copy_id.clone(),
                source: input.source_header.clone(),
                progress: copy_progress(0, input.size),
                completion_time: now,
                pending: true,
                status: CopyStatus::Pending,
                description: None,
            };
            let mut new = new_blob(&input, dest.as_ref(), lease, version.clone(), content, copy);
            let keeping = store.keeping(tx, &input.account)?;
            let blob_id = write_row(tx, cid, dest, &mut new, &input.tags, keeping, now)?;
            if let Some(node) = &store.inner.node {
                // Who runs it: if this node dies, another ends it.
                meta::own_copy(tx, &copy_id, blob_id, node.number)?;
            }
            if let CopiedType::Page { sequence_number } = input.kind {
                let page = PageRow {
                    sequence_number,
                    ..PageRow::default()
                };
                meta::put_page_row(tx, blob_id, &page)?;
            }
            Ok((
                CopyBlobOutput {
                    version,
                    version_id: new.version_id.clone(),
                    copy_id: copy_id.clone(),
                    content_md5: None,
                    pending: true,
                },
                CopyJob {
                    blob_id,
                    kind: input.kind,
                    copy_id: copy_id.clone(),
                    size: input.size,
                },
            ))
        })
        .await
    }

    /// Streams a copy's bytes (exactly `size` of them) into a new extent.
    /// With `source_md5` (the `Content-MD5` of the source's answer) the
    /// destination takes that MD5, as the service's copies do, and the
    /// bytes are not hashed; without it their MD5 is computed.
    ///
    /// # Errors
    /// The body failed or had another length (`BodyLengthMismatch`); IO.
    pub async fn write_copied_bytes<S>(
        &self,
        body: S,
        size: u64,
        source_md5: Option<[u8; 16]>,
    ) -> Result<CopiedBytes>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let written = self
            .inner
            .extents
            .write_copy(body, size, source_md5)
            .await?;
        Ok(CopiedBytes {
            written,
            md5_of_source: source_md5.is_some(),
            page_ranges: None,
        })
    }

    /// Records how many bytes of `job` are fetched. Returns false when the
    /// copy is no longer pending (aborted, or its blob written over).
    ///
    /// # Errors
    /// Database failures.
    pub async fn record_copy_progress(&self, job: &CopyJob, copied: u64) -> Result<bool> {
        let (id, copy_id) = (job.blob_id, job.copy_id.clone());
        let progress = copy_progress(copied, job.size);
        self.inner
            .db
            .write_again(move |tx| {
                let pending = meta::record_copy_progress(tx, id, &copy_id, &progress)?;
                if !pending {
                    meta::disown_copy(tx, &copy_id)?;
                }
                Ok(pending)
            })
            .await
    }

    /// Ends `job` with its bytes: the destination gets them, a new ETag
    /// and `x-ms-copy-status: success`. Returns false (and drops the
    /// bytes) when the copy is no longer pending.
    ///
    /// # Errors
    /// Database failures.
    pub async fn complete_remote_copy(&self, job: &CopyJob, bytes: CopiedBytes) -> Result<bool> {
        let now = self.now();
        let store = self.clone();
        let (id, copy_id, kind) = (job.blob_id, job.copy_id.clone(), job.kind);
        let CopiedBytes {
            written,
            md5_of_source,
            page_ranges,
        } = bytes;
        let (extent, inline) = (written.id.clone(), written.inline.clone());
        let md5 = written.md5;
        // A page blob copied range by range is as long as its source; any
        // other copy as long as its bytes.
        let len = match page_ranges {
            Some(_) => job.size,
            None => written.len,
        };
        let md5 = (md5_of_source || page_ranges.is_none()).then_some(md5);
        let done = self
            .inner
            .db
            .write_again(move |tx| {
                meta::disown_copy(tx, &copy_id)?;
                let Some(row) = meta::get_blob_by_id(tx, id)? else {
                    return Ok(false);
                };
                let Some(copy) = row
                    .copy
                    .clone()
                    .filter(|c| c.id == copy_id && c.status == CopyStatus::Pending)
                else {
                    return Ok(false);
                };
                WrittenExtent::store_inline(extent.as_deref(), inline.as_ref(), tx)?;
                let mut content = row.content.clone();
                content.content_md5 = md5.map(|m| m.to_vec());
                let (extents, committed_block_count, sealed) = match kind {
                    // A page blob's bytes are in its page map (below).
                    CopiedType::Page { .. } => (Vec::new(), None, false),
                    CopiedType::Append {
                        committed_block_count,
                        sealed,
                    } => (
                        extent_refs(extent.as_deref(), len),
                        Some(committed_block_count),
                        sealed,
                    ),
                    CopiedType::Block => (extent_refs(extent.as_deref(), len), None, false),
                };
                let new = NewBlob {
                    name: row.name.clone(),
                    snapshot: None,
                    committed: true,
                    blob_type: row.blob_type,
                    size: len,
                    version: Versioned {
                        etag: store.inner.etags.next(now),
                        last_modified: now,
                    },
                    creation_time: row.creation_time,
                    content,
                    metadata: row.metadata.clone(),
                    committed_block_count,
                    // The seal arrives with the bytes: a pending copy is
                    // open.
                    sealed,
                    tier: row.tier,
                    copy: Some(CopyProperties {
                        progress: copy_progress(len, len),
                        completion_time: now,
                        pending: false,
                        status: CopyStatus::Success,
                        description: None,
                        ..copy
                    }),
                    lease: row.lease.clone(),
                    extents,
                    // The version the copy's start made gets its bytes.
                    version_id: row.version_id.clone(),
                };
                // The page row goes with the replaced content: kept.
                let page = meta::page_row(tx, row.id)?;
                let old = meta::replace_blob(tx, row.id, &new)?;
                meta::collect_unreferenced(tx, &old, now)?;
                if let Some(page) = page {
                    meta::put_page_row(tx, row.id, &page)?;
                }
                if let (CopiedType::Page { .. }, Some(extent)) = (kind, &extent) {
                    let whole = std::iter::once(0..len).collect::<Vec<_>>();
                    let ranges = page_ranges.clone().unwrap_or(whole);
                    let mut at = 0;
                    for r in ranges {
                        let run = Run {
                            start: r.start,
                            end: r.end,
                            extent: extent.clone(),
                            at,
                        };
                        at += r.end - r.start;
                        super::pages::rewrite(tx, row.id, r, Some(run), now)?;
                    }
                }
                Ok(true)
            })
            .await;
        if !matches!(done, Ok(true))
            && let Some(id) = &written.id
        {
            // Not referenced by anything: drop it now (or the sweep will).
            self.inner.extents.discard(id).await;
        }
        done
    }

    /// Ends `job` as failed with `description` (the destination keeps no
    /// bytes). Nothing happens when the copy is no longer pending.
    ///
    /// # Errors
    /// Database failures.
    pub async fn fail_remote_copy(&self, job: &CopyJob, description: String) -> Result<()> {
        let now = self.now();
        let (id, copy_id) = (job.blob_id, job.copy_id.clone());
        self.inner
            .db
            .write_again(move |tx| {
                meta::disown_copy(tx, &copy_id)?;
                let pending = meta::get_blob_by_id(tx, id)?
                    .and_then(|r| r.copy)
                    .is_some_and(|c| c.id == copy_id && c.status == CopyStatus::Pending);
                if pending {
                    meta::end_copy(tx, id, CopyStatus::Failed, Some(&description), now)?;
                }
                Ok(())
            })
            .await
    }

    /// Copy Blob From URL from another host: the bytes first, then, in one
    /// transaction, the destination checks and the new version, a
    /// completed copy.
    ///
    /// # Errors
    /// As [`Store::begin_remote_copy`]; `Md5Mismatch` when
    /// `expected_md5` is not the bytes'; the body's errors.
    pub async fn copy_blob_from_stream<S>(
        &self,
        input: RemoteCopyInput,
        body: S,
    ) -> Result<CopyBlobOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let written = self
            .inner
            .extents
            .write_copy(body, input.size, None)
            .await?;
        let now = self.now();
        let store = self.clone();
        let (extent, inline) = (written.id.clone(), written.inline.clone());
        let (len, md5) = (written.len, written.md5);
        let result = self
            .blob_db(
                &input.account,
                input.container.as_str(),
                input.blob.as_str(),
            )
            .write_again(move |tx| {
                let (cid, dest, lease, now) = check_destination(&store, tx, &input, now)?;
                crate::extents::check_md5(input.expected_md5, md5)?;
                WrittenExtent::store_inline(extent.as_deref(), inline.as_ref(), tx)?;
                let version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                let copy_id = uuid::Uuid::new_v4().to_string();
                let mut content = input.content.clone();
                content.content_md5 = Some(md5.to_vec());
                let copy = CopyProperties {
                    id: copy_id.clone(),
                    source: input.source_header.clone(),
                    progress: copy_progress(len, len),
                    completion_time: now,
                    pending: false,
                    status: CopyStatus::Success,
                    description: None,
                };
                let mut new =
                    new_blob(&input, dest.as_ref(), lease, version.clone(), content, copy);
                new.size = len;
                new.extents = extent_refs(extent.as_deref(), len);
                let keeping = store.keeping(tx, &input.account)?;
                write_row(tx, cid, dest, &mut new, &input.tags, keeping, now)?;
                Ok(CopyBlobOutput {
                    version,
                    version_id: new.version_id.clone(),
                    copy_id,
                    content_md5: Some(md5.to_vec()),
                    pending: false,
                })
            })
            .await;
        if result.is_err()
            && let Some(id) = &written.id
        {
            self.inner.extents.discard(id).await;
        }
        result
    }

    /// Ends the copies a restart interrupted (see [`INTERRUPTED_COPY`]).
    ///
    /// Only writes when there is something to end, so that a server starts
    /// on a full disk; if the disk is full and copies are pending, they
    /// stay pending (with a warning) until a start that has room.
    pub(crate) async fn fail_interrupted_copies(&self) -> Result<usize> {
        // In cluster mode a pending copy may be another node's, running:
        // a node starting ends only those of dead nodes (docs/cluster.md,
        // "Garbage across nodes").
        if self.inner.db.is_shared() {
            return self.fail_orphaned_copies().await;
        }
        let now = self.now();
        if !self.inner.db.call(meta::any_pending_copy).await? {
            return Ok(0);
        }
        let n = match self
            .inner
            .db
            .write_again(move |tx| meta::fail_pending_copies(tx, INTERRUPTED_COPY, now))
            .await
        {
            Err(Error::DiskFull) => {
                tracing::warn!(
                    "copies from other hosts were interrupted by a restart, but the disk is \
                     full: they stay pending until the server starts with room"
                );
                return Ok(0);
            }
            r => r?,
        };
        tracing::warn!("{n} copies from other hosts were interrupted by a restart: failed");
        Ok(n)
    }
}

/// The destination checks of a copy: its container, the conditions, the
/// lease (infinite only, as for every copy) and its type (the source's).
/// An expired destination is removed first, as every write does, so it is
/// absent for the checks. Returns the time the write judges by: in
/// cluster mode the database's, read with the write's locks
/// (docs/cluster.md, "Time").
fn check_destination(
    store: &Store,
    tx: &dyn Sql,
    input: &RemoteCopyInput,
    now: std::time::SystemTime,
) -> Result<(i64, Option<BlobRow>, LeaseRecord, std::time::SystemTime)> {
    let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
    let now = store.judge_now(tx, now)?;
    let (dest, lease) = super::blobs::check_replace(
        tx,
        cid,
        input.blob.as_str(),
        &input.conditions,
        input.lease_id.as_ref(),
        now,
    )?;
    let committed = dest.as_ref().filter(|r| r.committed);
    if input.lease_id.is_some() && lease.duration.is_some_and(|d| d != LeaseDuration::Infinite) {
        return Err(Error::InfiniteLeaseDurationRequired);
    }
    // An existing destination must have the source's type.
    if committed.is_some_and(|r| r.blob_type != input.kind.blob_type()) {
        return Err(Error::InvalidBlobType);
    }
    Ok((cid, dest, lease, now))
}

fn new_blob(
    input: &RemoteCopyInput,
    dest: Option<&BlobRow>,
    lease: LeaseRecord,
    version: Versioned,
    content: ContentProperties,
    copy: CopyProperties,
) -> NewBlob {
    NewBlob {
        name: input.blob.as_str().to_owned(),
        snapshot: None,
        committed: true,
        blob_type: input.kind.blob_type(),
        size: 0,
        creation_time: dest
            .filter(|r| r.committed)
            .map_or(version.last_modified, |r| r.creation_time),
        version,
        content,
        metadata: input.metadata.clone(),
        committed_block_count: match input.kind {
            CopiedType::Append { .. } => Some(0),
            _ => None,
        },
        sealed: false,
        tier: TierRecord::written(input.access_tier),
        copy: Some(copy),
        lease,
        extents: Vec::new(),
        version_id: None,
    }
}

/// Inserts or replaces the destination row; returns its id.
/// Writes the destination's new content (keeping the replaced one as a
/// version or soft-deleted snapshot as the account asks) and its tags.
fn write_row(
    tx: &dyn Sql,
    cid: i64,
    dest: Option<BlobRow>,
    new: &mut NewBlob,
    tags: &crate::Tags,
    keeping: super::versions::Keeping,
    now: std::time::SystemTime,
) -> Result<i64> {
    let replaced = dest.is_some();
    let id = super::versions::write_base(tx, cid, dest.as_ref(), new, keeping, now)?;
    if replaced || !tags.is_empty() {
        meta::set_tags(tx, id, tags)?;
    }
    Ok(id)
}

fn extent_refs(extent: Option<&str>, len: u64) -> Vec<ExtentRef> {
    extent
        .map(|id| ExtentRef {
            extent: id.to_owned(),
            len,
            block_id: None,
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_copied_over_total() {
        for (copied, total, want) in [(0, 0, "0/0"), (0, 10, "0/10"), (7, 10, "7/10")] {
            assert_eq!(copy_progress(copied, total), want);
        }
    }
}
