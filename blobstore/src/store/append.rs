//! Append Block (docs/wire/blobs.md#append-block). Each append is one extent,
//! added in one transaction that also checks the append conditions, so
//! concurrent appenders are serialized and never lose or interleave a block.

use crate::meta::sql::Sql;
use bytes::Bytes;
use futures::Stream;
use stowage_leases::LeaseId;

use super::Store;
use super::blobs::{lease_after_write, require_committed};
use crate::conditions::{self, AppendConditions, ConditionKind, Conditions, Current};
use crate::extents::WrittenExtent;
use crate::meta::{self, BlobRow, ExtentRef};
use crate::{BlobName, BlobType, ContainerName, CopyStatus, Error, Result, Versioned};

/// The most blocks an append blob takes.
pub const MAX_APPENDED_BLOCKS: u64 = 50_000;

/// Input of Append Block.
#[derive(Clone, Debug)]
pub struct AppendBlockInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-blob-condition-appendpos` / `-maxsize`.
    pub append: AppendConditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// The transactional `Content-MD5`.
    pub transactional_md5: Option<[u8; 16]>,
    /// The transactional `x-ms-content-crc64`.
    pub transactional_crc64: Option<u64>,
    /// `Content-Length`, already checked against the size limit.
    pub content_length: u64,
}

/// Output of Append Block.
#[derive(Clone, Debug)]
pub struct AppendBlockOutput {
    /// The blob's new version.
    pub version: Versioned,
    /// Where this block starts (`x-ms-blob-append-offset`).
    pub offset: u64,
    /// Blocks after this one (`x-ms-blob-committed-block-count`).
    pub committed_block_count: u64,
    /// MD5 of the block.
    pub body_md5: [u8; 16],
    /// CRC64 of the block.
    pub body_crc64: u64,
}

/// Input of Append Blob Seal.
#[derive(Clone, Debug)]
pub struct SealAppendBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-blob-condition-appendpos` (the blob's current length).
    pub append: AppendConditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
}

/// Every check of Append Block in the spec's order (after existence):
/// conditions, lease, blob type, block count, append position, max size.
fn check_append(
    conn: &dyn Sql,
    row: &mut BlobRow,
    input: &AppendBlockInput,
    now: std::time::SystemTime,
) -> Result<()> {
    let current = Current {
        etag: row.version.etag.as_str(),
        last_modified: row.version.last_modified,
    };
    conditions::evaluate(&input.conditions, Some(current), ConditionKind::Write)?;
    super::tags::check_if_tags(conn, &input.conditions, Some(row.id), ConditionKind::Write)?;
    row.lease = lease_after_write(Some(row), input.lease_id.as_ref(), now)?;
    if row.blob_type != BlobType::AppendBlob {
        return Err(Error::InvalidBlobType);
    }
    if row.sealed {
        return Err(Error::BlobIsSealed);
    }
    if row
        .copy
        .as_ref()
        .is_some_and(|c| c.status == CopyStatus::Pending)
    {
        return Err(Error::PendingCopyOperation);
    }
    if row.committed_block_count.unwrap_or(0) >= MAX_APPENDED_BLOCKS {
        return Err(Error::BlockCountExceedsLimit { uncommitted: false });
    }
    input.append.check(row.size, input.content_length)?;
    Ok(())
}

impl Store {
    /// Append Blob Seal: no append is taken afterwards. Sealing gives the
    /// blob a new ETag and Last-Modified, as the service's recorded answers
    /// show (the reference says they do not change; docs/wire/blobs.md).
    /// Sealing a sealed blob succeeds again and changes nothing.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `InvalidBlobType`, append-position failures.
    pub async fn seal_append_blob(&self, input: SealAppendBlobInput) -> Result<Versioned> {
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
            let current = Current {
                etag: row.version.etag.as_str(),
                last_modified: row.version.last_modified,
            };
            conditions::evaluate(&input.conditions, Some(current), ConditionKind::Write)?;
            super::tags::check_if_tags(tx, &input.conditions, Some(row.id), ConditionKind::Write)?;
            let lease = lease_after_write(Some(&row), input.lease_id.as_ref(), now)?;
            if row.blob_type != BlobType::AppendBlob {
                return Err(Error::InvalidBlobType);
            }
            input.append.check(row.size, 0)?;
            if row.sealed {
                if lease != row.lease {
                    row.lease = lease;
                    meta::update_blob_attributes(tx, &row)?;
                }
            } else {
                row.lease = lease;
                row.version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                meta::update_after_append(tx, &row)?;
                meta::seal_blob(tx, row.id)?;
            }
            Ok(row.version)
        })
        .await
    }

    /// Append Block.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition and lease refusals,
    /// `InvalidBlobType`, `BlockCountExceedsLimit`, append-condition
    /// failures, `Md5Mismatch`, `Crc64Mismatch`.
    pub async fn append_block<S>(
        &self,
        input: AppendBlockInput,
        body: S,
    ) -> Result<AppendBlockOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.append_block_with(input, body, crate::extents::Writer::Body)
            .await
    }

    /// Append Block From URL: [`Store::append_block`] with the source's
    /// bytes, written by the writer of copies (docs/wire/copy.md#speed).
    ///
    /// # Errors
    /// As [`Store::append_block`].
    pub async fn append_block_from_url<S>(
        &self,
        input: AppendBlockInput,
        body: S,
    ) -> Result<AppendBlockOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.append_block_with(input, body, crate::extents::Writer::Copy)
            .await
    }

    async fn append_block_with<S>(
        &self,
        input: AppendBlockInput,
        body: S,
        how: crate::extents::Writer,
    ) -> Result<AppendBlockOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let now = self.now();
        if crate::extents::worth_a_precheck(input.content_length) {
            let pre = input.clone();
            self.inner
                .db
                .call(move |conn| {
                    let cid = meta::container_id(conn, &pre.account, pre.container.as_str())?;
                    let mut row = require_committed(conn, cid, &pre.blob, None, now)?;
                    check_append(conn, &mut row, &pre, now)
                })
                .await?;
        }
        let written = self
            .inner
            .extents
            .write_with(body, input.content_length, how)
            .await?;
        let store = self.clone();
        let id = written.id.clone();
        let inline = written.inline.clone();
        let md5 = written.md5;
        let crc64 = written.crc64;
        let result = self
            .blob_db(
                &input.account,
                input.container.as_str(),
                input.blob.as_str(),
            )
            .write_again(move |tx| {
                let now = store.now();
                // The container and the row in one statement on
                // PostgreSQL, and the writes below sent with the COMMIT
                // (docs/cluster.md, "Round trips").
                let (_, row) = meta::container_and_blob(
                    tx,
                    &input.account,
                    input.container.as_str(),
                    input.blob.as_str(),
                )?;
                let now = store.judge_now(tx, now)?;
                let mut row = match row {
                    Some(r) if r.committed && !crate::expiry::is_expired(r.expires_at, now) => r,
                    _ => return Err(Error::BlobNotFound),
                };
                check_append(tx, &mut row, &input, now)?;
                crate::extents::check_md5(input.transactional_md5, md5)?;
                crate::extents::check_crc64(input.transactional_crc64, crc64)?;
                WrittenExtent::store_inline(id.as_deref(), inline.as_ref(), tx)?;
                let offset = row.size;
                meta::append_extent(
                    tx,
                    row.id,
                    &ExtentRef {
                        extent: id.clone().unwrap_or_default(),
                        len: written.len,
                        block_id: None,
                    },
                )?;
                row.size += written.len;
                let count = row.committed_block_count.unwrap_or(0) + 1;
                row.committed_block_count = Some(count);
                row.version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                meta::update_after_append(tx, &row)?;
                Ok(AppendBlockOutput {
                    version: row.version,
                    offset,
                    committed_block_count: count,
                    body_md5: md5,
                    body_crc64: crc64,
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
}
