//! Put Block, Put Block List and Get Block List (docs/wire/blobs.md). Blocks are extents; committing a list only rearranges
//! references, so committing a blob of any size copies no bytes.

use crate::meta::sql::Sql;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures::Stream;
use stowage_leases::{LeaseId, LeaseRecord};

use super::Store;
use super::blobs::lease_after_write;
use crate::conditions::{ConditionKind, Conditions};
use crate::extents::WrittenExtent;
use crate::meta::{self, BlobRow, BlockRow, ExtentRef, NewBlob};
use crate::{AccessTier, TierRecord};
use crate::{
    BlobName, BlobType, ContainerName, ContentProperties, Error, Metadata, Result, Versioned,
};

/// The most committed blocks of a block blob.
pub const MAX_COMMITTED_BLOCKS: usize = 50_000;
/// The most uncommitted blocks of a blob.
pub const MAX_UNCOMMITTED_BLOCKS: u64 = 100_000;
/// Uncommitted blocks are discarded after this long without Put Block or
/// Put Block List on their blob.
pub const UNCOMMITTED_BLOCK_LIFETIME: std::time::Duration =
    std::time::Duration::from_secs(7 * 24 * 3600);

/// A block id: base64 of 1–64 bytes, kept exactly as the client wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockId {
    text: String,
    decoded_len: usize,
}

impl BlockId {
    /// Parses a block id; `None` when it is not base64 of 1–64 bytes.
    pub fn parse(text: &str) -> Option<BlockId> {
        let decoded = STANDARD.decode(text).ok()?;
        (1..=64).contains(&decoded.len()).then(|| BlockId {
            text: text.to_owned(),
            decoded_len: decoded.len(),
        })
    }

    /// The id as the client wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn decoded_len(text: &str) -> Option<usize> {
    STANDARD.decode(text).ok().map(|d| d.len())
}

/// Which list a Put Block List entry takes its block from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockListKind {
    /// The current committed list.
    Committed,
    /// The uncommitted blocks.
    Uncommitted,
    /// The uncommitted block if there is one, else the committed one.
    Latest,
}

/// Which lists Get Block List returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockListType {
    /// Only committed blocks (the default).
    Committed,
    /// Only uncommitted blocks.
    Uncommitted,
    /// Both.
    All,
}

/// Input of Put Block.
#[derive(Clone, Debug)]
pub struct PutBlockInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// The block's id.
    pub block_id: BlockId,
    /// The transactional `Content-MD5`, verified while streaming.
    pub transactional_md5: Option<[u8; 16]>,
    /// The transactional `x-ms-content-crc64`, verified while streaming.
    pub transactional_crc64: Option<u64>,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// `Content-Length`, already checked against the size limit.
    pub content_length: u64,
}

/// Output of Put Block: the checksums of the block as received.
#[derive(Clone, Copy, Debug)]
pub struct PutBlockOutput {
    /// MD5 of the block.
    pub body_md5: [u8; 16],
    /// CRC64 of the block.
    pub body_crc64: u64,
}

/// Input of Put Block List.
#[derive(Clone, Debug)]
pub struct PutBlockListInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// The new block list, in order.
    pub blocks: Vec<(BlockListKind, BlockId)>,
    /// The six content properties (absent ones cleared).
    pub content: ContentProperties,
    /// Metadata (replaces the old set).
    pub metadata: Metadata,
    /// Conditional headers.
    pub conditions: Conditions,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// `x-ms-access-tier`.
    pub access_tier: Option<AccessTier>,
    /// `x-ms-tags`: the new version's tags (empty: none, whatever it had).
    pub tags: crate::Tags,
}

/// Input of Get Block List.
#[derive(Clone, Debug)]
pub struct GetBlockListInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot id.
    pub snapshot: Option<String>,
    /// Which lists.
    pub list_type: BlockListType,
    /// `x-ms-lease-id`, checked when sent.
    pub lease_id: Option<LeaseId>,
    /// `x-ms-if-tags`, the one condition Get Block List takes.
    pub if_tags: Option<crate::TagCondition>,
}

/// Output of Get Block List.
#[derive(Clone, Debug)]
pub struct GetBlockListOutput {
    /// Committed blocks (id, size) in order, when asked for.
    pub committed: Option<Vec<(String, u64)>>,
    /// Uncommitted blocks (id, size) sorted by id, when asked for.
    pub uncommitted: Option<Vec<(String, u64)>>,
    /// ETag and Last-Modified, when the blob has been committed.
    pub version: Option<Versioned>,
    /// The committed size in bytes.
    pub size: u64,
}

/// The check of Put Block against the current state: type and lease.
fn check_put_block(
    row: Option<&BlobRow>,
    lease_id: Option<&LeaseId>,
    now: std::time::SystemTime,
) -> Result<LeaseRecord> {
    if let Some(r) = row.filter(|r| r.committed)
        && r.blob_type != BlobType::BlockBlob
    {
        return Err(Error::InvalidBlobType);
    }
    lease_after_write(row, lease_id, now)
}

impl Store {
    /// Put Block: stages one block as an extent.
    ///
    /// # Errors
    /// `ContainerNotFound`, `InvalidBlobType`, lease refusals,
    /// `InvalidBlobOrBlock`, `BlockCountExceedsLimit`, `Md5Mismatch`,
    /// `Crc64Mismatch`.
    pub async fn put_block<S>(&self, input: PutBlockInput, body: S) -> Result<PutBlockOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.put_block_with(input, body, crate::extents::Writer::Body)
            .await
    }

    /// Put Block From URL: [`Store::put_block`] with the source's bytes,
    /// written by the writer of copies (docs/wire/copy.md#speed).
    ///
    /// # Errors
    /// As [`Store::put_block`].
    pub async fn put_block_from_url<S>(
        &self,
        input: PutBlockInput,
        body: S,
    ) -> Result<PutBlockOutput>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.put_block_with(input, body, crate::extents::Writer::Copy)
            .await
    }

    async fn put_block_with<S>(
        &self,
        input: PutBlockInput,
        body: S,
        how: crate::extents::Writer,
    ) -> Result<PutBlockOutput>
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
                    let row = meta::get_blob(conn, cid, pre.blob.as_str(), None)?;
                    check_put_block(row.as_ref(), pre.lease_id.as_ref(), now).map(|_| ())
                })
                .await?;
        }
        let written = self
            .inner
            .extents
            .write_with(body, input.content_length, how)
            .await?;
        let md5 = written.md5;
        let crc64 = written.crc64;
        let extent = written.id.clone().unwrap_or_default();
        let inline = written.inline.clone();
        let store = self.clone();
        let result = self
            .blob_db(
                &input.account,
                input.container.as_str(),
                input.blob.as_str(),
            )
            .write_again(move |tx| {
                let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
                let now = store.judge_now(tx, now)?;
                super::expiry::purge_if_expired(tx, cid, input.blob.as_str(), now)?;
                let row = meta::get_blob(tx, cid, input.blob.as_str(), None)?;
                let lease = check_put_block(row.as_ref(), input.lease_id.as_ref(), now)?;
                crate::extents::check_md5(input.transactional_md5, md5)?;
                crate::extents::check_crc64(input.transactional_crc64, crc64)?;
                let blob_id = match row {
                    Some(mut r) => {
                        check_block_id_length(tx, r.id, &input.block_id)?;
                        // Replacing a staged block does not add one.
                        if meta::count_uncommitted(tx, r.id)? >= MAX_UNCOMMITTED_BLOCKS
                            && meta::staged_block(tx, r.id, input.block_id.as_str())?.is_none()
                        {
                            return Err(Error::BlockCountExceedsLimit { uncommitted: true });
                        }
                        if r.lease != lease {
                            r.lease = lease;
                            meta::update_blob_attributes(tx, &r)?;
                        }
                        r.id
                    }
                    // The first block brings an uncommitted blob into being,
                    // invisible to reads (docs/wire/blobs.md#blob-types).
                    None => meta::insert_blob(
                        tx,
                        cid,
                        &NewBlob {
                            name: input.blob.as_str().to_owned(),
                            snapshot: None,
                            committed: false,
                            blob_type: BlobType::BlockBlob,
                            size: 0,
                            version: Versioned {
                                etag: store.inner.etags.next(now),
                                last_modified: now,
                            },
                            creation_time: now,
                            content: ContentProperties::default(),
                            metadata: Metadata::default(),
                            committed_block_count: None,
                            sealed: false,
                            tier: TierRecord::default(),
                            copy: None,
                            lease,
                            extents: Vec::new(),
                            version_id: None,
                        },
                    )?,
                };
                WrittenExtent::store_inline(Some(&extent), inline.as_ref(), tx)?;
                let block = BlockRow {
                    block_id: input.block_id.as_str().to_owned(),
                    extent: extent.clone(),
                    len: written.len,
                };
                if let Some(old) = meta::stage_block(tx, blob_id, &block, now)? {
                    meta::collect_unreferenced(tx, &[old], now)?;
                }
                Ok(PutBlockOutput {
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

    /// Put Block List: commits a list of staged and committed blocks as the
    /// blob's new content and discards every uncommitted block.
    ///
    /// # Errors
    /// `ContainerNotFound`, condition and lease refusals, `InvalidBlobType`,
    /// `InvalidBlockList`, `BlockCountExceedsLimit`.
    pub async fn put_block_list(
        &self,
        input: PutBlockListInput,
    ) -> Result<(Versioned, Option<String>)> {
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
            let (row, lease) = super::blobs::check_replace(
                tx,
                cid,
                input.blob.as_str(),
                &input.conditions,
                input.lease_id.as_ref(),
                now,
            )?;
            let committed_row = row.as_ref().filter(|r| r.committed);
            if let Some(r) = committed_row
                && r.blob_type != BlobType::BlockBlob
            {
                return Err(Error::InvalidBlobType);
            }
            if input.blocks.len() > MAX_COMMITTED_BLOCKS {
                return Err(Error::BlockCountExceedsLimit { uncommitted: false });
            }
            // Each listed block is looked up by its id: the cost is the
            // list's, whatever else the blob has staged or committed.
            let (committed_id, staged_id) = match &row {
                Some(r) => (r.committed.then_some(r.id), Some(r.id)),
                None => (None, None),
            };
            let extents = resolve_block_list(
                &input.blocks,
                |id| match committed_id {
                    Some(blob) => meta::committed_block(tx, blob, id),
                    None => Ok(None),
                },
                |id| match staged_id {
                    Some(blob) => meta::staged_block(tx, blob, id),
                    None => Ok(None),
                },
            )?;
            let size = extents.iter().map(|e| e.len).sum();
            let mut new = NewBlob {
                name: input.blob.as_str().to_owned(),
                snapshot: None,
                committed: true,
                blob_type: BlobType::BlockBlob,
                size,
                version: Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                },
                creation_time: committed_row.map_or(now, |r| r.creation_time),
                content: input.content.clone(),
                metadata: input.metadata.clone(),
                committed_block_count: None,
                sealed: false,
                tier: TierRecord::written(input.access_tier),
                copy: None,
                lease,
                extents,
                version_id: None,
            };
            let keeping = store.keeping(tx, &input.account)?;
            let id = super::versions::write_base(tx, cid, row.as_ref(), &mut new, keeping, now)?;
            if row.is_some() || !input.tags.is_empty() {
                meta::set_tags(tx, id, &input.tags)?;
            }
            Ok((new.version, new.version_id))
        })
        .await
    }

    /// Get Block List.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, `InvalidBlobType`, lease refusals.
    pub async fn get_block_list(&self, input: GetBlockListInput) -> Result<GetBlockListOutput> {
        let now = self.now();
        self.inner
            .db
            .call(move |conn| {
                let cid = meta::container_id(conn, &input.account, input.container.as_str())?;
                let row =
                    meta::get_blob(conn, cid, input.blob.as_str(), input.snapshot.as_deref())?
                        .ok_or(Error::BlobNotFound)?;
                if row.blob_type != BlobType::BlockBlob {
                    return Err(Error::InvalidBlobType);
                }
                let only_tags = Conditions {
                    if_tags: input.if_tags.clone(),
                    ..Conditions::default()
                };
                super::tags::check_if_tags(conn, &only_tags, Some(row.id), ConditionKind::Read)?;
                if row.snapshot.is_none() {
                    stowage_leases::check(
                        &row.lease,
                        input.lease_id.as_ref(),
                        stowage_leases::Access::Read,
                        stowage_leases::Resource::Blob,
                        now,
                    )?;
                }
                let pairs = |v: Vec<BlockRow>| v.into_iter().map(|b| (b.block_id, b.len)).collect();
                let want_committed = input.list_type != BlockListType::Uncommitted;
                let want_uncommitted = input.list_type != BlockListType::Committed;
                let committed = if want_committed {
                    Some(if row.committed {
                        pairs(meta::committed_blocks(conn, row.id)?)
                    } else {
                        Vec::new()
                    })
                } else {
                    None
                };
                let uncommitted = if want_uncommitted {
                    Some(if row.snapshot.is_none() {
                        pairs(meta::uncommitted_blocks(conn, row.id)?)
                    } else {
                        Vec::new()
                    })
                } else {
                    None
                };
                Ok(GetBlockListOutput {
                    committed,
                    uncommitted,
                    version: row.committed.then_some(row.version),
                    size: if row.committed { row.size } else { 0 },
                })
            })
            .await
    }
}

/// The uncommitted block ids of one blob all decode to the same length
/// (B12). The committed list does not set it: once Put Block List has
/// committed (and so cleared) the staged blocks, the next Put Block may use
/// ids of another length, as the service accepts. One staged block is
/// enough to compare with.
fn check_block_id_length(conn: &dyn Sql, blob_id: i64, id: &BlockId) -> Result<()> {
    match meta::any_staged_block_id(conn, blob_id)?.and_then(|b| decoded_len(&b)) {
        Some(n) if n != id.decoded_len => Err(Error::InvalidBlobOrBlock),
        _ => Ok(()),
    }
}

/// The extents of a new committed list (docs/wire/blobs.md#put-block-list): each
/// entry names a block of the committed or the uncommitted list, found with
/// `committed(id)` or `uncommitted(id)`; an id that is missing, or listed
/// twice, makes the list invalid.
fn resolve_block_list(
    entries: &[(BlockListKind, BlockId)],
    mut committed: impl FnMut(&str) -> Result<Option<BlockRow>>,
    mut uncommitted: impl FnMut(&str) -> Result<Option<BlockRow>>,
) -> Result<Vec<ExtentRef>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(entries.len());
    for (kind, id) in entries {
        if !seen.insert(id.as_str()) {
            return Err(Error::InvalidBlockList);
        }
        let block = match kind {
            BlockListKind::Committed => committed(id.as_str())?,
            BlockListKind::Uncommitted => uncommitted(id.as_str())?,
            BlockListKind::Latest => match uncommitted(id.as_str())? {
                Some(b) => Some(b),
                None => committed(id.as_str())?,
            },
        }
        .ok_or(Error::InvalidBlockList)?;
        out.push(ExtentRef {
            extent: block.extent,
            len: block.len,
            block_id: Some(block.block_id),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(id: &str, extent: &str, len: u64) -> BlockRow {
        BlockRow {
            block_id: id.into(),
            extent: extent.into(),
            len,
        }
    }

    #[test]
    fn block_id_rules() {
        assert!(BlockId::parse("QUFBQUE=").is_some());
        assert!(BlockId::parse(&STANDARD.encode([7u8; 64])).is_some());
        assert!(BlockId::parse(&STANDARD.encode([7u8; 65])).is_none());
        assert!(BlockId::parse("").is_none());
        assert!(BlockId::parse("not base64!").is_none());
    }

    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    #[test]
    fn block_list_resolution_table() {
        let committed = [block("QQ==", "c-a", 1), block("Qg==", "c-b", 2)];
        let uncommitted = [block("Qg==", "u-b", 20), block("Qw==", "u-c", 3)];
        let id = |s: &str| BlockId::parse(s).unwrap();
        use BlockListKind::*;
        let cases: Vec<(Vec<(BlockListKind, BlockId)>, Result<Vec<&str>, ()>)> = vec![
            (vec![], Ok(vec![])),
            (vec![(Committed, id("QQ=="))], Ok(vec!["c-a"])),
            (vec![(Uncommitted, id("Qw=="))], Ok(vec!["u-c"])),
            (vec![(Latest, id("Qg=="))], Ok(vec!["u-b"])),
            (vec![(Latest, id("QQ=="))], Ok(vec!["c-a"])),
            (
                vec![(Committed, id("Qg==")), (Latest, id("Qw=="))],
                Ok(vec!["c-b", "u-c"]),
            ),
            (vec![(Committed, id("Qw=="))], Err(())),
            (vec![(Uncommitted, id("QQ=="))], Err(())),
            (vec![(Latest, id("RA=="))], Err(())),
            (vec![(Latest, id("QQ==")), (Committed, id("QQ=="))], Err(())),
        ];
        for (entries, expected) in cases {
            let find = |list: &[BlockRow], id: &str| -> Result<Option<BlockRow>> {
                Ok(list.iter().find(|b| b.block_id == id).cloned())
            };
            let got = resolve_block_list(
                &entries,
                |id| find(&committed, id),
                |id| find(&uncommitted, id),
            )
            .map(|v| v.into_iter().map(|e| e.extent).collect::<Vec<_>>())
            .map_err(|_| ());
            let expected = expected.map(|v| v.into_iter().map(String::from).collect());
            assert_eq!(got, expected, "{entries:?}");
        }
    }
}
