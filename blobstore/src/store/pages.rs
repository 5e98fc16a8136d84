//! Page blob operations (docs/wire/pages.md): create, Put Page (update and
//! clear), Get Page Ranges (and its diff form), resize and sequence
//! numbers. The bytes of each write land in one new extent; the page map
//! (rows in the metadata store) says which extent each written page reads,
//! so disk use follows what was written, not the declared size.

use crate::meta::sql::Sql;
use std::ops::Range;

use bytes::Bytes;
use futures::Stream;
use stowage_leases::{Access, LeaseId, Resource};

use super::Store;
use super::blobs::{check_put, current, lease_after_write, require_committed};
use crate::conditions::SequenceNumberConditions;
use crate::conditions::{self, ConditionKind, Conditions};
use crate::extents::WrittenExtent;
use crate::meta::{self, BlobRow, NewBlob, PageRow};
use crate::pages::map::{self, Change, Run};
use crate::pages::{SequenceNumberAction, check_sequence};
use crate::{
    BlobName, BlobType, ContainerName, ContentProperties, CopyStatus, Error, PageProperties,
    PutBlobInput, Result, TierRecord, Versioned,
};

/// Input of Put Blob for a page blob.
#[derive(Clone, Debug)]
pub struct CreatePageBlobInput {
    /// What every Put Blob carries (the body is empty).
    pub put: PutBlobInput,
    /// `x-ms-blob-content-length`: the size, a multiple of 512.
    pub size: u64,
    /// `x-ms-blob-sequence-number` (0 when absent).
    pub sequence_number: u64,
}

/// Which kind of Put Page (`x-ms-page-write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageWrite {
    /// Write the body into the range.
    Update,
    /// Make the range read as zeros again (no body).
    Clear,
}

/// Input of Put Page.
#[derive(Clone, Debug)]
pub struct PutPageInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// Update or clear.
    pub write: PageWrite,
    /// The pages, page-aligned (checked by the caller).
    pub range: Range<u64>,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-if-sequence-number-*`.
    pub sequence: SequenceNumberConditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// The transactional `Content-MD5`.
    pub transactional_md5: Option<[u8; 16]>,
    /// The transactional `x-ms-content-crc64`.
    pub transactional_crc64: Option<u64>,
}

/// Output of Put Page.
#[derive(Clone, Debug)]
pub struct PutPageOutput {
    /// The blob's new version.
    pub version: Versioned,
    /// Its sequence number.
    pub sequence_number: u64,
    /// MD5 and CRC64 of the body (updates only).
    pub body_sums: Option<([u8; 16], u64)>,
}

/// Input of Get Page Ranges.
#[derive(Clone, Debug)]
pub struct GetPageRangesInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot to read.
    pub snapshot: Option<String>,
    /// The window to list (`Range` / `x-ms-range`); the whole blob when
    /// absent.
    pub range: Option<Range<u64>>,
    /// `prevsnapshot`: list what changed since this snapshot.
    pub prev_snapshot: Option<String>,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`, checked when sent.
    pub lease_id: Option<LeaseId>,
    /// `maxresults`: the most ranges in the answer.
    pub max_results: Option<usize>,
    /// Where a previous page stopped (a decoded `marker`).
    pub marker: Option<u64>,
}

/// One range of a Get Page Ranges answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRangeItem {
    /// The bytes `[start, end)`.
    pub range: Range<u64>,
    /// `<ClearRange>` (diff form only) rather than `<PageRange>`.
    pub cleared: bool,
}

/// Output of Get Page Ranges.
#[derive(Clone, Debug)]
pub struct GetPageRangesOutput {
    /// The version read.
    pub version: Versioned,
    /// Its size (`x-ms-blob-content-length`).
    pub size: u64,
    /// The ranges, in order.
    pub ranges: Vec<PageRangeItem>,
    /// Where the next page starts, when there is one.
    pub next_marker: Option<u64>,
}

/// Input of Set Blob Properties on a page blob that resizes it or changes
/// its sequence number.
#[derive(Clone, Debug)]
pub struct SetPageBlobPropertiesInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// New content properties, when the request set any; `None` leaves
    /// them as they are.
    pub content: Option<ContentProperties>,
    /// `x-ms-blob-content-length`: the new size.
    pub size: Option<u64>,
    /// `x-ms-sequence-number-action`.
    pub sequence: Option<SequenceNumberAction>,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-if-sequence-number-*`.
    pub sequence_conditions: SequenceNumberConditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
}

/// Output of Set Blob Properties on a page blob.
#[derive(Clone, Debug)]
pub struct SetPageBlobPropertiesOutput {
    /// The new version.
    pub version: Versioned,
    /// The sequence number after the change.
    pub sequence_number: u64,
}

/// The page properties of a stored version (`None` unless a page blob).
pub(crate) fn page_properties(conn: &dyn Sql, row: &BlobRow) -> Result<Option<PageProperties>> {
    if row.blob_type != BlobType::PageBlob {
        return Ok(None);
    }
    let page = meta::page_row(conn, row.id)?.unwrap_or_default();
    Ok(Some(PageProperties {
        sequence_number: page.sequence_number,
        incremental_copy: page.incremental_copy,
        copy_destination_snapshot: page.copy_destination_snapshot,
    }))
}

/// The page row of a page blob, or `InvalidBlobType`.
fn require_page_blob(conn: &dyn Sql, row: &BlobRow) -> Result<PageRow> {
    if row.blob_type != BlobType::PageBlob {
        return Err(Error::InvalidBlobType);
    }
    Ok(meta::page_row(conn, row.id)?.unwrap_or_default())
}

/// The checks of Put Page against the current state, in order:
/// conditions, lease, blob type, incremental copy, range, sequence number.
fn check_page_write(
    conn: &dyn Sql,
    row: &mut BlobRow,
    input: &PutPageInput,
    now: std::time::SystemTime,
) -> Result<PageRow> {
    conditions::evaluate(&input.conditions, Some(current(row)), ConditionKind::Write)?;
    super::tags::check_if_tags(conn, &input.conditions, Some(row.id), ConditionKind::Write)?;
    row.lease = lease_after_write(Some(row), input.lease_id.as_ref(), now)?;
    let page = require_page_blob(conn, row)?;
    if page.incremental_copy {
        return Err(Error::OperationNotAllowedOnIncrementalCopyBlob);
    }
    if row
        .copy
        .as_ref()
        .is_some_and(|c| c.status == CopyStatus::Pending)
    {
        return Err(Error::PendingCopyOperation);
    }
    if input.range.end > row.size {
        return Err(Error::InvalidPageRange);
    }
    check_sequence(&input.sequence, page.sequence_number)?;
    Ok(page)
}

/// The id of a clear whose Put Page answered `etag`: the ETag's ticks,
/// which no other write of this server shares. Kept below 2^62 so that a
/// clear run's `at` (the id plus a start below 8 TiB) fits the database's
/// signed integers.
fn clear_id(etag: &crate::Etag) -> u64 {
    let ticks = etag
        .as_str()
        .strip_prefix("0x")
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .unwrap_or(0);
    ticks & ((1 << 62) - 1)
}

/// Makes `range` of blob `blob_id` read as `new` (or zeros), and records
/// the extents nothing reads any more as garbage.
pub(super) fn rewrite(
    conn: &dyn Sql,
    blob_id: i64,
    range: Range<u64>,
    new: Option<Run>,
    now: std::time::SystemTime,
) -> Result<()> {
    let overlapping = meta::runs_in(conn, blob_id, &range)?;
    let edit = map::overwrite(&overlapping, range, new);
    meta::apply_edit(conn, blob_id, &edit)?;
    meta::collect_unreferenced(conn, &edit.released, now)
}

impl Store {
    /// Put Blob of a page blob: an empty blob of `size` bytes (all zeros)
    /// with its sequence number; replaces a blob of any type.
    ///
    /// # Errors
    /// `ContainerNotFound`, condition and lease refusals.
    pub async fn create_page_blob(
        &self,
        input: CreatePageBlobInput,
    ) -> Result<(Versioned, Option<String>)> {
        let store = self.clone();
        self.blob_db(
            &input.put.account,
            input.put.container.as_str(),
            input.put.blob.as_str(),
        )
        .write_again(move |tx| {
            let now = store.now();
            let put = &input.put;
            let cid = meta::container_id(tx, &put.account, put.container.as_str())?;
            let now = store.judge_now(tx, now)?;
            let (existing, lease) = check_put(tx, cid, put, now)?;
            let version = Versioned {
                etag: store.inner.etags.next(now),
                last_modified: now,
            };
            let mut new = NewBlob {
                name: put.blob.as_str().to_owned(),
                snapshot: None,
                committed: true,
                blob_type: BlobType::PageBlob,
                size: input.size,
                version: version.clone(),
                creation_time: existing
                    .as_ref()
                    .filter(|r| r.committed)
                    .map_or(now, |r| r.creation_time),
                content: put.content.clone(),
                metadata: put.metadata.clone(),
                committed_block_count: None,
                sealed: false,
                tier: TierRecord::written(None),
                copy: None,
                lease,
                extents: Vec::new(),
                version_id: None,
            };
            let keeping = store.keeping(tx, &put.account)?;
            let id =
                super::versions::write_base(tx, cid, existing.as_ref(), &mut new, keeping, now)?;
            if existing.is_some() || !put.tags.is_empty() {
                meta::set_tags(tx, id, &put.tags)?;
            }
            meta::put_page_row(
                tx,
                id,
                &PageRow {
                    sequence_number: input.sequence_number,
                    ..PageRow::default()
                },
            )?;
            Ok((version, new.version_id))
        })
        .await
    }

    /// Put Page: an update streams the body into a new extent, then one
    /// transaction checks conditions, lease, range and sequence number and
    /// points the range's pages at it; a clear only changes the page map.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `InvalidBlobType`, `InvalidPageRange`, `SequenceNumberConditionNotMet`,
    /// `Md5Mismatch`, `Crc64Mismatch`, body length mismatch.
    pub async fn put_page<S>(&self, input: PutPageInput, body: S) -> Result<PutPageOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let len = input.range.end - input.range.start;
        let written = match input.write {
            PageWrite::Clear => None,
            PageWrite::Update => {
                if crate::extents::worth_a_precheck(len) {
                    let pre = input.clone();
                    let now = self.now();
                    self.inner
                        .db
                        .call(move |conn| {
                            let cid =
                                meta::container_id(conn, &pre.account, pre.container.as_str())?;
                            let mut row = require_committed(conn, cid, &pre.blob, None, now)?;
                            check_page_write(conn, &mut row, &pre, now).map(|_| ())
                        })
                        .await?;
                }
                Some(self.inner.extents.write(body, len).await?)
            }
        };
        let store = self.clone();
        let sums = written.as_ref().map(|w| (w.md5, w.crc64));
        let new = written.as_ref().map(|w| {
            (
                w.id.clone().unwrap_or_default(),
                w.inline.clone(),
                w.md5,
                w.crc64,
            )
        });
        let result = self
            .blob_db(
                &input.account,
                input.container.as_str(),
                input.blob.as_str(),
            )
            .write_again(move |tx| {
                let now = store.now();
                let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
                let now = store.judge_now(tx, now)?;
                let mut row = require_committed(tx, cid, &input.blob, None, now)?;
                let page = check_page_write(tx, &mut row, &input, now)?;
                let etag = store.inner.etags.next(now);
                let run = match new.clone() {
                    Some((id, inline, md5, crc64)) => {
                        crate::extents::check_md5(input.transactional_md5, md5)?;
                        crate::extents::check_crc64(input.transactional_crc64, crc64)?;
                        WrittenExtent::store_inline(Some(&id), inline.as_ref(), tx)?;
                        Run {
                            start: input.range.start,
                            end: input.range.end,
                            extent: id,
                            at: 0,
                        }
                    }
                    // The new ETag's ticks are unique: they name the clear.
                    None => Run::cleared(input.range.clone(), clear_id(&etag)),
                };
                rewrite(tx, row.id, input.range.clone(), Some(run), now)?;
                row.version = Versioned {
                    etag,
                    last_modified: now,
                };
                meta::update_blob_attributes(tx, &row)?;
                Ok(PutPageOutput {
                    version: row.version,
                    sequence_number: page.sequence_number,
                    body_sums: sums,
                })
            })
            .await;
        if result.is_err()
            && let Some(id) = written.as_ref().and_then(|w| w.id.as_ref())
        {
            self.inner.extents.discard(id).await;
        }
        result
    }

    /// Get Page Ranges, and its diff form with `prevsnapshot`: a walk of
    /// the page map inside the window, never of the bytes.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `InvalidBlobType`, `PreviousSnapshotNotFound`.
    pub async fn get_page_ranges(&self, input: GetPageRangesInput) -> Result<GetPageRangesOutput> {
        let now = self.now();
        self.inner
            .db
            .call(move |conn| {
                let cid = meta::container_id(conn, &input.account, input.container.as_str())?;
                let row =
                    require_committed(conn, cid, &input.blob, input.snapshot.as_deref(), now)?;
                conditions::evaluate(&input.conditions, Some(current(&row)), ConditionKind::Read)?;
                super::tags::check_if_tags(
                    conn,
                    &input.conditions,
                    Some(row.id),
                    ConditionKind::Read,
                )?;
                if row.snapshot.is_none() {
                    stowage_leases::check(
                        &row.lease,
                        input.lease_id.as_ref(),
                        Access::Read,
                        Resource::Blob,
                        now,
                    )?;
                }
                require_page_blob(conn, &row)?;
                // A range starting at or past the end: 416, as for every
                // read with a range (docs/wire/pages.md#get-page-ranges).
                if input.range.as_ref().is_some_and(|r| r.start >= row.size) {
                    return Err(Error::InvalidRange { size: row.size });
                }
                let window = input.range.clone().unwrap_or(0..row.size);
                let window = window.start.max(input.marker.unwrap_or(0))..window.end.min(row.size);
                let limit = input.max_results.unwrap_or(usize::MAX);
                let (ranges, next_marker) = match &input.prev_snapshot {
                    None => list_ranges(conn, row.id, &window, limit)?,
                    Some(prev) => {
                        let prev = meta::get_blob(conn, cid, input.blob.as_str(), Some(prev))?
                            .filter(|r| r.committed)
                            .ok_or(Error::PreviousSnapshotNotFound)?;
                        require_page_blob(conn, &prev)?;
                        diff_ranges(conn, prev.id, row.id, &window, limit)?
                    }
                };
                Ok(GetPageRangesOutput {
                    version: row.version,
                    size: row.size,
                    ranges,
                    next_marker,
                })
            })
            .await
    }

    /// Set Blob Properties on a page blob with a resize or a sequence
    /// number action (and any content properties beside them). Shrinking
    /// drops the pages past the new end.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `InvalidBlobType`, `SequenceNumberConditionNotMet`,
    /// `SequenceNumberIncrementTooLarge`.
    pub async fn set_page_blob_properties(
        &self,
        input: SetPageBlobPropertiesInput,
    ) -> Result<SetPageBlobPropertiesOutput> {
        let store = self.clone();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            let now = store.now();
            let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
            let now = store.judge_now(tx, now)?;
            let mut row = require_committed(tx, cid, &input.blob, None, now)?;
            conditions::evaluate(&input.conditions, Some(current(&row)), ConditionKind::Write)?;
            super::tags::check_if_tags(tx, &input.conditions, Some(row.id), ConditionKind::Write)?;
            row.lease = lease_after_write(Some(&row), input.lease_id.as_ref(), now)?;
            let mut page = require_page_blob(tx, &row)?;
            check_sequence(&input.sequence_conditions, page.sequence_number)?;
            if let Some(size) = input.size {
                if page.incremental_copy {
                    return Err(Error::OperationNotAllowedOnIncrementalCopyBlob);
                }
                if size < row.size {
                    rewrite(tx, row.id, size..row.size, None, now)?;
                }
                row.size = size;
                meta::set_blob_size(tx, row.id, size)?;
            }
            if let Some(action) = input.sequence {
                page.sequence_number = action.apply(page.sequence_number)?;
                meta::put_page_row(tx, row.id, &page)?;
            }
            if let Some(content) = &input.content {
                row.content = content.clone();
            }
            row.copy = None;
            row.version = Versioned {
                etag: store.inner.etags.next(now),
                last_modified: now,
            };
            meta::update_blob_attributes(tx, &row)?;
            Ok(SetPageBlobPropertiesOutput {
                version: row.version,
                sequence_number: page.sequence_number,
            })
        })
        .await
    }
}

/// The written ranges of `blob_id` in `window`, one per stored run, at
/// most `limit`; and where the next page starts when more follow.
fn list_ranges(
    conn: &dyn Sql,
    blob_id: i64,
    window: &Range<u64>,
    limit: usize,
) -> Result<(Vec<PageRangeItem>, Option<u64>)> {
    let mut ranges: Vec<Range<u64>> = Vec::new();
    let mut next = None;
    meta::for_each_run(conn, blob_id, window, |run| {
        let Some(run) = run.clip(window).filter(|r| !r.is_clear()) else {
            return Ok(true);
        };
        if ranges.len() >= limit {
            next = Some(run.start);
            return Ok(false);
        }
        // One range per stored run, touching ones too: a range is what one
        // write left, as the emulator answers (docs/wire/pages.md).
        ranges.push(run.start..run.end);
        Ok(true)
    })?;
    let items = ranges
        .into_iter()
        .map(|range| PageRangeItem {
            range,
            cleared: false,
        })
        .collect();
    Ok((items, next))
}

/// What changed in `window` between blob versions `old` and `new`, at most
/// `limit` stretches, and where the next page starts.
fn diff_ranges(
    conn: &dyn Sql,
    old: i64,
    new: i64,
    window: &Range<u64>,
    limit: usize,
) -> Result<(Vec<PageRangeItem>, Option<u64>)> {
    let clip =
        |runs: Vec<Run>| -> Vec<Run> { runs.iter().filter_map(|r| r.clip(window)).collect() };
    let before = clip(meta::runs_in(conn, old, window)?);
    let after = clip(meta::runs_in(conn, new, window)?);
    let mut changes = map::diff(&before, &after);
    let next = (changes.len() > limit).then(|| changes[limit].0.start);
    changes.truncate(limit);
    let items = changes
        .into_iter()
        .map(|(range, change)| PageRangeItem {
            range,
            cleared: change == Change::Cleared,
        })
        .collect();
    Ok((items, next))
}
