//! Blob operations (docs/wire/blobs.md).

use crate::meta::sql::Sql;
use std::ops::Range;

use bytes::Bytes;
use futures::Stream;
use stowage_leases::{Access, CheckOutcome, LeaseId, LeaseRecord, Resource};

use super::body;
use super::body::BlobBody;
use super::{ServiceSnapshot, Store, blob_properties};
use crate::conditions::{self, ConditionKind, Conditions, Current};
use crate::extents::WrittenExtent;
use crate::meta::{self, BlobRow, ExtentRef, NewBlob};
use crate::{AccessTier, TierRecord};
use crate::{
    BlobName, BlobProperties, BlobType, ByteRange, ContainerName, ContentProperties, Error,
    Metadata, Result, Versioned,
};

/// Input of Put Blob.
#[derive(Clone, Debug)]
pub struct PutBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// Block, append or page blob.
    pub blob_type: BlobType,
    /// Content properties as stored; a `None` MD5 on a block blob is filled
    /// with the MD5 computed over the body.
    pub content: ContentProperties,
    /// The transactional `Content-MD5` of the body, verified while streaming.
    pub transactional_md5: Option<[u8; 16]>,
    /// The transactional `x-ms-content-crc64` of the body, verified while
    /// streaming.
    pub transactional_crc64: Option<u64>,
    /// Metadata (replaces the old set).
    pub metadata: Metadata,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// `Content-Length`, already checked against the size limit.
    pub content_length: u64,
    /// `x-ms-access-tier`, if set.
    pub access_tier: Option<AccessTier>,
    /// `x-ms-tags`: the new version's tags (empty: none, whatever it had).
    pub tags: crate::Tags,
}

/// Output of Put Blob.
#[derive(Clone, Debug)]
pub struct PutBlobOutput {
    /// The new version.
    pub version: Versioned,
    /// MD5 of the body as received.
    pub body_md5: [u8; 16],
    /// CRC64 of the body as received.
    pub body_crc64: u64,
    /// The new version's id, when versioning is on.
    pub version_id: Option<String>,
}

/// Input of Get Blob and Get Blob Properties.
#[derive(Clone, Debug)]
pub struct GetBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot id, to read that snapshot.
    pub snapshot: Option<String>,
    /// A version id, to read that version.
    pub version_id: Option<String>,
    /// A byte range (Get Blob only).
    pub range: Option<ByteRange>,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`, checked when sent.
    pub lease_id: Option<LeaseId>,
}

/// Output of Get Blob.
#[derive(Debug)]
pub struct GetBlobOutput {
    /// The properties of the version read.
    pub properties: BlobProperties,
    /// The byte range returned, when a range was requested (a 206).
    pub range: Option<Range<u64>>,
    /// The bytes.
    pub body: BlobBody,
    /// The account's service properties as the same read saw them, when
    /// that cost no extra round trip ([`ServiceSnapshot`]).
    pub service_properties: Option<ServiceSnapshot>,
}

/// Input of Set Blob Properties.
#[derive(Clone, Debug)]
pub struct SetBlobPropertiesInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// The new content properties; absent ones are cleared.
    pub content: ContentProperties,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
}

/// Input of Set Blob Metadata.
#[derive(Clone, Debug)]
pub struct SetBlobMetadataInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// The new metadata (replaces the old set).
    pub metadata: Metadata,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
}

/// What Delete Blob does with the snapshots of a base blob
/// (`x-ms-delete-snapshots`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteSnapshots {
    /// Delete the base blob and all its snapshots.
    Include,
    /// Delete only the snapshots; the base blob is untouched.
    Only,
}

/// Input of Delete Blob.
#[derive(Clone, Debug)]
pub struct DeleteBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot id, to delete only that snapshot.
    pub snapshot: Option<String>,
    /// `x-ms-delete-snapshots` (base blob only).
    pub delete_snapshots: Option<DeleteSnapshots>,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// A version id, to delete only that version.
    pub version_id: Option<String>,
    /// `deletetype=permanent`: delete a soft-deleted snapshot or version
    /// now.
    pub permanent: bool,
}

pub(super) fn current(row: &BlobRow) -> Current<'_> {
    Current {
        etag: row.version.etag.as_str(),
        last_modified: row.version.last_modified,
    }
}

/// A committed blob version, or `BlobNotFound` (an uncommitted-only block
/// blob does not exist for reads and most writes, docs/wire/blobs.md#blob-types;
/// nor does a blob past its expiry time at `now`, docs/wire/expiry.md).
pub(super) fn require_committed(
    conn: &dyn Sql,
    container_id: i64,
    blob: &BlobName,
    snapshot: Option<&str>,
    now: std::time::SystemTime,
) -> Result<BlobRow> {
    match meta::get_blob(conn, container_id, blob.as_str(), snapshot)? {
        Some(row) if row.committed && !crate::expiry::is_expired(row.expires_at, now) => Ok(row),
        _ => Err(Error::BlobNotFound),
    }
}

/// The committed row a request names: a version (`versionid=`), a snapshot
/// or the base blob; `BlobNotFound` for anything else, soft-deleted rows
/// included.
pub(super) fn require_version(
    conn: &dyn Sql,
    container_id: i64,
    blob: &BlobName,
    snapshot: Option<&str>,
    version_id: Option<&str>,
    now: std::time::SystemTime,
) -> Result<BlobRow> {
    match version_id {
        Some(v) => match meta::get_version(conn, container_id, blob.as_str(), v)? {
            Some(row) if row.committed && row.deleted.is_none() => Ok(row),
            _ => Err(Error::BlobNotFound),
        },
        None => require_committed(conn, container_id, blob, snapshot, now),
    }
}

/// The checks of a write that replaces the blob `name` with a new one (Put
/// Block List, copies): an expired blob is removed first, then the
/// conditions (as for a create), `x-ms-if-tags` and the lease's write rule
/// are checked against the committed blob. Returns its current row
/// (committed or only staged) and the lease record the new blob keeps.
pub(super) fn check_replace(
    tx: &dyn Sql,
    container_id: i64,
    name: &str,
    conditions: &Conditions,
    lease_id: Option<&LeaseId>,
    now: std::time::SystemTime,
) -> Result<(Option<BlobRow>, LeaseRecord)> {
    super::expiry::purge_if_expired(tx, container_id, name, now)?;
    let row = meta::get_blob(tx, container_id, name, None)?;
    let committed = row.as_ref().filter(|r| r.committed);
    let current = committed.map(|r| Current {
        etag: r.version.etag.as_str(),
        last_modified: r.version.last_modified,
    });
    conditions::evaluate(conditions, current, ConditionKind::Create)?;
    super::tags::check_if_tags(
        tx,
        conditions,
        committed.map(|r| r.id),
        ConditionKind::Write,
    )?;
    let lease = lease_after_write(row.as_ref(), lease_id, now)?;
    Ok((row, lease))
}

/// Applies the write rule of a lease: the record to keep after the write.
pub(super) fn lease_after_write(
    row: Option<&BlobRow>,
    presented: Option<&LeaseId>,
    now: std::time::SystemTime,
) -> Result<LeaseRecord> {
    let record = row.map(|r| r.lease.clone()).unwrap_or_default();
    match stowage_leases::check(&record, presented, Access::Write, Resource::Blob, now)? {
        CheckOutcome::Keep => Ok(record),
        CheckOutcome::Clear => Ok(LeaseRecord::default()),
    }
}

impl Store {
    /// Put Blob: streams the body into a new extent, then swaps the new
    /// version in with one transaction that checks conditions and the lease.
    ///
    /// # Errors
    /// `ContainerNotFound`, condition and lease refusals, `Md5Mismatch`
    /// (`Content-MD5`, or a block blob's `x-ms-blob-content-md5`),
    /// `Crc64Mismatch`, body length mismatch, storage failures.
    pub async fn put_blob<S>(&self, input: PutBlobInput, body: S) -> Result<PutBlobOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.put_blob_with(input, body, crate::extents::Writer::Body)
            .await
    }

    /// Put Blob From URL: [`Store::put_blob`] with the source's bytes,
    /// written by the writer of copies (docs/wire/copy.md#speed).
    ///
    /// # Errors
    /// As [`Store::put_blob`].
    pub async fn put_blob_from_url<S>(&self, input: PutBlobInput, body: S) -> Result<PutBlobOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.put_blob_with(input, body, crate::extents::Writer::Copy)
            .await
    }

    async fn put_blob_with<S>(
        &self,
        input: PutBlobInput,
        body: S,
        how: crate::extents::Writer,
    ) -> Result<PutBlobOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        // Fail before reading the body when the answer is already known
        // (docs/wire/errors.md#which-check-answers-first: checks 3–7 come before body checks).
        // A small body is read first: the commit makes the same checks in
        // the same order, and one database call fewer is a third of a small
        // write's cost.
        let mut input = input;
        if self.inner.config.fault_conditions_outside_transaction {
            self.precheck_put(&input).await?;
            tokio::task::yield_now().await;
            input.conditions = crate::Conditions::default();
        } else if crate::extents::worth_a_precheck(input.content_length) {
            self.precheck_put(&input).await?;
        }
        let written = self
            .inner
            .extents
            .write_with(body, input.content_length, how)
            .await?;
        let result = self.commit_put(input, &written).await;
        if result.is_err()
            && let Some(id) = &written.id
        {
            // Not referenced by anything: drop it now (or the sweep will).
            self.inner.extents.discard(id).await;
        }
        result
    }

    async fn precheck_put(&self, input: &PutBlobInput) -> Result<()> {
        let now = self.now();
        let input = input.clone();
        self.inner
            .db
            .call(move |conn| {
                let container_id =
                    meta::container_id(conn, &input.account, input.container.as_str())?;
                check_put(conn, container_id, &input, now).map(|_| ())
            })
            .await
    }

    async fn commit_put(
        &self,
        input: PutBlobInput,
        written: &WrittenExtent,
    ) -> Result<PutBlobOutput> {
        let now = self.now();
        let store = self.clone();
        let body_md5 = written.md5;
        let body_crc64 = written.crc64;
        let extents: Vec<ExtentRef> = written
            .id
            .iter()
            .map(|id| ExtentRef {
                extent: id.clone(),
                len: written.len,
                block_id: None,
            })
            .collect();
        let size = written.len;
        let (id, inline) = (written.id.clone(), written.inline.clone());
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            // The container, the current row and the account's soft
            // delete policy in one statement on PostgreSQL, and the
            // writes below sent without waiting, with the COMMIT: two
            // round trips (docs/cluster.md, "Round trips").
            let target = meta::put_target(
                tx,
                &input.account,
                input.container.as_str(),
                input.blob.as_str(),
            )?;
            let (container_id, current) = (target.container_id, target.current);
            let now = store.judge_now(tx, now)?;
            let current = super::expiry::purge_read_if_expired(
                tx,
                container_id,
                input.blob.as_str(),
                current,
                now,
            )?;
            let (existing, lease) = check_put_row(tx, current, &input, now)?;
            crate::extents::check_md5(input.transactional_md5, body_md5)?;
            crate::extents::check_crc64(input.transactional_crc64, body_crc64)?;
            if input.blob_type == BlobType::BlockBlob {
                check_stated_md5(input.content.content_md5.as_deref(), body_md5)?;
            }
            WrittenExtent::store_inline(id.as_deref(), inline.as_ref(), tx)?;
            let version = Versioned {
                etag: store.inner.etags.next(now),
                last_modified: now,
            };
            let mut content = input.content.clone();
            if content.content_md5.is_none() && input.blob_type == BlobType::BlockBlob {
                content.content_md5 = Some(body_md5.to_vec());
            }
            let mut new = NewBlob {
                name: input.blob.as_str().to_owned(),
                snapshot: None,
                committed: true,
                blob_type: input.blob_type,
                size,
                version: version.clone(),
                creation_time: existing
                    .as_ref()
                    .filter(|r| r.committed)
                    .map_or(now, |r| r.creation_time),
                content,
                metadata: input.metadata.clone(),
                committed_block_count: (input.blob_type == BlobType::AppendBlob).then_some(0),
                sealed: false,
                tier: TierRecord::written(input.access_tier),
                copy: None,
                lease,
                extents: extents.clone(),
                version_id: None,
            };
            let keeping = super::versions::Keeping {
                versioning: store.inner.config.versioning.enabled(&input.account),
                retention: target.retention,
            };
            let id = super::versions::write_base_as(
                tx,
                container_id,
                existing.as_ref(),
                &mut new,
                keeping,
                now,
                target.reserved_id,
            )?;
            if existing.is_some() || !input.tags.is_empty() {
                meta::set_tags(tx, id, &input.tags)?;
            }
            Ok(PutBlobOutput {
                version,
                body_md5,
                body_crc64,
                version_id: new.version_id,
            })
        })
        .await
    }

    /// Get Blob: resolves the version and range and pins its extents in one
    /// critical section, then streams.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `InvalidRange`, `BlobArchived`, `BlobBeingRehydrated`, database
    /// failures.
    pub async fn get_blob(&self, input: GetBlobInput) -> Result<GetBlobOutput> {
        let now = self.now();
        let pins = self.inner.pins.clone();
        let store = self.clone();
        let (row, tag_count, page, pieces, range, guard, service) = self
            .inner
            .db
            .read_now(move |conn| {
                let (row, tag_count, seen) = read_checked_with_tags(conn, &input, now)?;
                let service = store.service_snapshot(conn, &input.account, seen)?;
                row.tier.check_online(now)?;
                let page = super::page_properties(conn, &row)?;
                let range = match input.range {
                    Some(r) => Some(
                        r.resolve(row.size)
                            .ok_or(Error::InvalidRange { size: row.size })?,
                    ),
                    None => None,
                };
                let span = range.clone().unwrap_or(0..row.size);
                if span.is_empty() {
                    return Ok((row, tag_count, page, None, range, None, service));
                }
                if row.blob_type == BlobType::PageBlob {
                    // Only the map inside the span is read; unwritten
                    // pages stream as zeros.
                    let runs = meta::runs_in(conn, row.id, &span)?;
                    let guard = pins.pin(runs.iter().map(|r| r.extent.clone()).collect());
                    let stretches = crate::pages::map::layout(&runs, &span);
                    let pieces = body::page_pieces(conn, stretches)?;
                    return Ok((
                        row,
                        tag_count,
                        page,
                        Some(pieces),
                        range,
                        Some(guard),
                        service,
                    ));
                }
                let (parts, preloaded) =
                    meta::blob_extents_preloaded(conn, row.id, body::PRELOAD_INLINE)?;
                let guard = pins.pin(parts.iter().map(|p| p.extent.clone()).collect());
                let pieces = body::pieces(conn, &parts, &preloaded, &span)?;
                Ok((
                    row,
                    tag_count,
                    page,
                    Some(pieces),
                    range,
                    Some(guard),
                    service,
                ))
            })
            .await?;
        let body = match (pieces, guard) {
            (Some(pieces), Some(guard)) => {
                BlobBody::opened(
                    self.inner.extents.clone(),
                    self.inner.db.clone(),
                    pieces,
                    guard,
                )
                .await?
            }
            _ => BlobBody::empty(),
        };
        let mut properties = blob_properties(row, now);
        properties.tag_count = tag_count;
        properties.page = page;
        Ok(GetBlobOutput {
            properties,
            range,
            body,
            service_properties: service,
        })
    }

    /// Get Blob Properties (and Get Blob Metadata).
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals.
    pub async fn get_blob_properties(&self, input: GetBlobInput) -> Result<BlobProperties> {
        Ok(self.get_blob_properties_with_service(input).await?.0)
    }

    /// [`Store::get_blob_properties`], with the account's service
    /// properties as the same read saw them, when that cost no extra round
    /// trip ([`ServiceSnapshot`]).
    ///
    /// # Errors
    /// As [`Store::get_blob_properties`].
    pub async fn get_blob_properties_with_service(
        &self,
        input: GetBlobInput,
    ) -> Result<(BlobProperties, Option<ServiceSnapshot>)> {
        let now = self.now();
        let store = self.clone();
        let (row, tag_count, page, service) = self
            .inner
            .db
            .read_now(move |conn| {
                let (row, n, seen) = read_checked_with_tags(conn, &input, now)?;
                let service = store.service_snapshot(conn, &input.account, seen)?;
                let page = super::page_properties(conn, &row)?;
                Ok((row, n, page, service))
            })
            .await?;
        let mut properties = blob_properties(row, now);
        properties.tag_count = tag_count;
        properties.page = page;
        Ok((properties, service))
    }

    /// Set Blob Properties: replaces the six content properties.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals.
    pub async fn set_blob_properties(&self, input: SetBlobPropertiesInput) -> Result<Versioned> {
        let content = input.content.clone();
        let (version, _) = self
            .update_attributes(
                (input.account, input.container, input.blob),
                input.conditions,
                input.lease_id,
                false,
                move |row| {
                    row.content = content.clone();
                    // Set Blob Properties removes the copy properties (B4).
                    row.copy = None;
                },
            )
            .await?;
        Ok(version)
    }

    /// Set Blob Metadata: replaces the metadata; with versioning on, the
    /// blob gets a new version (returned beside the ETag).
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals.
    pub async fn set_blob_metadata(
        &self,
        input: SetBlobMetadataInput,
    ) -> Result<(Versioned, Option<String>)> {
        let metadata = input.metadata.clone();
        self.update_attributes(
            (input.account, input.container, input.blob),
            input.conditions,
            input.lease_id,
            true,
            move |row| row.metadata = metadata.clone(),
        )
        .await
    }

    /// The shared shape of the writes that change attributes but not content.
    async fn update_attributes<F>(
        &self,
        (account, container, blob): (String, ContainerName, BlobName),
        conditions: Conditions,
        lease_id: Option<LeaseId>,
        new_version: bool,
        change: F,
    ) -> Result<(Versioned, Option<String>)>
    where
        F: Fn(&mut BlobRow) + Send + 'static,
    {
        let now = self.now();
        let store = self.clone();
        self.blob_db(&account, container.as_str(), blob.as_str())
            .write_again(move |tx| {
                let container_id = meta::container_id(tx, &account, container.as_str())?;
                let now = store.judge_now(tx, now)?;
                let mut row = require_committed(tx, container_id, &blob, None, now)?;
                conditions::evaluate(&conditions, Some(current(&row)), ConditionKind::Write)?;
                super::tags::check_if_tags(tx, &conditions, Some(row.id), ConditionKind::Write)?;
                row.lease = lease_after_write(Some(&row), lease_id.as_ref(), now)?;
                row.tier.check_online(now)?;
                if new_version {
                    let keeping = store.keeping(tx, &account)?;
                    super::versions::keep_replaced(tx, container_id, &row, keeping, now)?;
                    row.version_id = match keeping.versioning {
                        true => Some(super::versions::unique_version_id(
                            tx,
                            container_id,
                            &row.name,
                            row.version_id.as_deref(),
                            now,
                        )?),
                        false => None,
                    };
                }
                change(&mut row);
                row.version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                meta::update_blob_attributes(tx, &row)?;
                Ok((row.version, row.version_id))
            })
            .await
    }

    /// Delete Blob: the base blob (with its snapshots, or only them), one
    /// snapshot, or one version. With versioning on, the base blob becomes
    /// a previous version; with soft delete on, what is deleted is kept
    /// until its retention ends (docs/wire/versions.md). Returns whether
    /// the deletion was permanent.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, `SnapshotsPresent`, condition and
    /// lease refusals, `PermanentDeleteNotAllowed`.
    pub async fn delete_blob(&self, input: DeleteBlobInput) -> Result<bool> {
        let now = self.now();
        let store = self.clone();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again_reserved(move |tx| {
            let container_id = meta::container_id(tx, &input.account, input.container.as_str())?;
            let now = store.judge_now(tx, now)?;
            let keeping = store.keeping(tx, &input.account)?;
            let name = input.blob.as_str();
            if input.permanent {
                return super::versions::delete_permanently(tx, container_id, &input, keeping, now);
            }
            let row = match &input.version_id {
                Some(v) => {
                    meta::get_version(tx, container_id, name, v)?.filter(|r| r.deleted.is_none())
                }
                None => meta::get_blob(tx, container_id, name, input.snapshot.as_deref())?,
            }
            .ok_or(Error::BlobNotFound)?;
            if input.version_id.is_some() && row.is_base() {
                // The service deletes the current version only through
                // the blob itself.
                return Err(Error::OperationNotAllowedOnRootBlob);
            }
            if row.committed {
                conditions::evaluate(&input.conditions, Some(current(&row)), ConditionKind::Write)?;
                super::tags::check_if_tags(
                    tx,
                    &input.conditions,
                    Some(row.id),
                    ConditionKind::Write,
                )?;
            }
            if !row.is_base() {
                // Deleting a snapshot or version by id needs no lease id (B7).
                return super::versions::delete_kept(tx, &row, keeping, now);
            }
            lease_after_write(Some(&row), input.lease_id.as_ref(), now)?;
            let snapshots = meta::count_snapshots(tx, container_id, name)?;
            match input.delete_snapshots {
                None if snapshots > 0 => return Err(Error::SnapshotsPresent),
                None => {}
                Some(mode) => {
                    match keeping.deleted(now) {
                        Some((at, purge)) => {
                            meta::hide_snapshots(tx, container_id, name, at, purge)?;
                        }
                        None => {
                            let old = meta::delete_snapshots(tx, container_id, name)?;
                            meta::collect_unreferenced(tx, &old, now)?;
                        }
                    }
                    if mode == DeleteSnapshots::Only {
                        return Ok(keeping.retention.is_none());
                    }
                }
            }
            super::versions::delete_base(tx, container_id, &row, keeping, now)
        })
        .await
    }
}

/// The stored MD5 a Put Blob of a block blob states (`x-ms-blob-content-md5`)
/// describes the body that request carries, so the service checks it like
/// `Content-MD5`: a blob never carries an MD5 its bytes do not have.
fn check_stated_md5(stated: Option<&[u8]>, computed: [u8; 16]) -> Result<()> {
    match stated {
        Some(s) if s != computed => Err(Error::Md5Mismatch {
            expected: <[u8; 16]>::try_from(s).unwrap_or_default(),
            computed,
        }),
        _ => Ok(()),
    }
}

/// The checks of Put Blob against the current state, run before the body is
/// read and again in the commit transaction: conditions and lease. The blob
/// type is not checked: Put Blob replaces a blob of any type, and the new
/// type wins (an append blob over a block blob and the other way round).
/// Returns the existing base row and the lease record the new version keeps.
pub(super) fn check_put(
    conn: &dyn Sql,
    container_id: i64,
    input: &PutBlobInput,
    now: std::time::SystemTime,
) -> Result<(Option<BlobRow>, LeaseRecord)> {
    let row = meta::get_blob(conn, container_id, input.blob.as_str(), None)?;
    check_put_row(conn, row, input, now)
}

/// [`check_put`] on the base blob's row as read (`None`: no blob).
pub(super) fn check_put_row(
    conn: &dyn Sql,
    row: Option<BlobRow>,
    input: &PutBlobInput,
    now: std::time::SystemTime,
) -> Result<(Option<BlobRow>, LeaseRecord)> {
    // An expired blob is absent; the commit transaction removes it first
    // (`purge_read_if_expired`), so the new version starts afresh.
    let existing = row.filter(|r| !crate::expiry::is_expired(r.expires_at, now));
    let committed = existing.as_ref().filter(|r| r.committed);
    conditions::evaluate(
        &input.conditions,
        committed.map(current),
        ConditionKind::Create,
    )?;
    super::tags::check_if_tags(
        conn,
        &input.conditions,
        committed.map(|r| r.id),
        ConditionKind::Write,
    )?;
    let lease = lease_after_write(committed, input.lease_id.as_ref(), now)?;
    Ok((existing, lease))
}

/// The read path shared by Get Blob and Get Blob Properties: the committed
/// version, its conditions (304/412) and the read rule of its lease.
pub(super) fn read_checked(
    conn: &dyn Sql,
    input: &GetBlobInput,
    now: std::time::SystemTime,
) -> Result<BlobRow> {
    let container_id = meta::container_id(conn, &input.account, input.container.as_str())?;
    let row = require_version(
        conn,
        container_id,
        &input.blob,
        input.snapshot.as_deref(),
        input.version_id.as_deref(),
        now,
    )?;
    check_read(conn, input, row, now)
}

/// [`read_checked`] and the blob's tag count. Without a version id the
/// container, the row and the count are one statement on PostgreSQL
/// (`meta::blob_by_name`), which also answers the version of the account's
/// service properties; SQLite runs the same statements as before.
pub(super) fn read_checked_with_tags(
    conn: &dyn Sql,
    input: &GetBlobInput,
    now: std::time::SystemTime,
) -> Result<(BlobRow, u64, Option<meta::ServiceVersion>)> {
    if input.version_id.is_some() || conn.dialect() == meta::sql::Dialect::Sqlite {
        let row = read_checked(conn, input, now)?;
        let tags = meta::tag_count(conn, row.id)?;
        return Ok((row, tags, None));
    }
    let (found, service) = meta::blob_by_name(
        conn,
        &input.account,
        input.container.as_str(),
        input.blob.as_str(),
        input.snapshot.as_deref(),
    )?;
    match found {
        Some((row, tags)) if row.committed && !crate::expiry::is_expired(row.expires_at, now) => {
            Ok((check_read(conn, input, row, now)?, tags, service))
        }
        _ => Err(Error::BlobNotFound),
    }
}

/// The read conditions, `x-ms-if-tags` and the lease of a read of `row`.
fn check_read(
    conn: &dyn Sql,
    input: &GetBlobInput,
    row: BlobRow,
    now: std::time::SystemTime,
) -> Result<BlobRow> {
    conditions::evaluate(&input.conditions, Some(current(&row)), ConditionKind::Read)?;
    super::tags::check_if_tags(conn, &input.conditions, Some(row.id), ConditionKind::Read)?;
    if row.is_base() {
        stowage_leases::check(
            &row.lease,
            input.lease_id.as_ref(),
            Access::Read,
            Resource::Blob,
            now,
        )?;
    }
    Ok(row)
}
