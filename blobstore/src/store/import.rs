//! Loading data from another emulator (`import-azurite`): containers and
//! blob versions written as they were, with their own ETags, times,
//! snapshot ids and leases, instead of as new writes
//! (docs/operations.md#moving-from-azurite).

use std::time::SystemTime;

use bytes::Bytes;
use futures::stream::BoxStream;
use stowage_leases::LeaseRecord;

use crate::extents::WrittenExtent;
use crate::meta::{self, BlockRow, ExtentRef, NewBlob, NewContainer};
use crate::{
    AccessPolicy, AccessTier, BlobName, BlobType, ContainerName, ContentProperties, Error, Etag,
    Metadata, PublicAccess, Result, Store, Tags, TierRecord, Versioned,
};

/// The encryption scope Create Container stores by default.
const ACCOUNT_ENCRYPTION_KEY: &str = "$account-encryption-key";

/// A container as another emulator stored it.
#[derive(Clone, Debug)]
pub struct ImportContainerInput {
    /// Its account.
    pub account: String,
    /// Its name.
    pub container: ContainerName,
    /// Its ETag as stored there (`0x` and hex digits, quoted or not); a
    /// new one when it cannot be read.
    pub etag: Option<String>,
    /// Its Last-Modified.
    pub last_modified: SystemTime,
    /// Its metadata.
    pub metadata: Metadata,
    /// Its public access level.
    pub public_access: Option<PublicAccess>,
    /// Its stored access policies.
    pub policies: Vec<AccessPolicy>,
    /// Its lease.
    pub lease: LeaseRecord,
}

/// A piece of a blob version's content: a committed block, an appended
/// block, the whole body of a blob written at once, or an uncommitted
/// block.
pub struct ImportPart {
    /// The block id (base64, as the client wrote it); `None` for content
    /// not written as a named block.
    pub block_id: Option<String>,
    /// Its length in bytes.
    pub len: u64,
    /// Its bytes.
    pub body: BoxStream<'static, std::io::Result<Bytes>>,
}

impl std::fmt::Debug for ImportPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportPart")
            .field("block_id", &self.block_id)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// A blob version (the base blob or a snapshot) as another emulator
/// stored it.
#[derive(Debug)]
pub struct ImportBlobInput {
    /// Its account.
    pub account: String,
    /// Its container (imported first).
    pub container: ContainerName,
    /// Its name.
    pub name: BlobName,
    /// The snapshot id, for a snapshot.
    pub snapshot: Option<String>,
    /// Block or append blob (page blobs are refused).
    pub blob_type: BlobType,
    /// False for a block blob that has only uncommitted blocks.
    pub committed: bool,
    /// Its ETag as stored there; a new one when it cannot be read.
    pub etag: Option<String>,
    /// Its Last-Modified.
    pub last_modified: SystemTime,
    /// Its creation time.
    pub creation_time: SystemTime,
    /// Its content properties.
    pub content: ContentProperties,
    /// Its metadata.
    pub metadata: Metadata,
    /// The tier set explicitly, if any.
    pub tier: Option<AccessTier>,
    /// Its lease (snapshots have none).
    pub lease: LeaseRecord,
    /// A sealed append blob.
    pub sealed: bool,
    /// Its blob index tags.
    pub tags: Tags,
    /// Its content, in order.
    pub parts: Vec<ImportPart>,
    /// Uncommitted blocks (base blobs only).
    pub uncommitted: Vec<ImportPart>,
}

/// An ETag of another emulator in Stowage's form (`0x` and 16 hex
/// digits), so that ETags written later compare above it.
fn normalized_etag(raw: Option<&str>) -> Option<(Etag, u64)> {
    let hex = raw?.trim_matches('"').strip_prefix("0x")?;
    let value = u64::from_str_radix(hex, 16).ok()?;
    Some((Etag::from_stored(format!("0x{value:016X}")), value))
}

impl Store {
    fn imported_version(&self, etag: Option<&str>, last_modified: SystemTime) -> Versioned {
        let etag = match normalized_etag(etag) {
            Some((etag, value)) => {
                self.inner.etags.observe(value);
                etag
            }
            None => self.inner.etags.next(self.now()),
        };
        Versioned {
            etag,
            last_modified,
        }
    }

    /// Stores a container exactly as `input` describes it.
    ///
    /// # Errors
    /// `ContainerAlreadyExists`; database failures.
    pub async fn import_container(&self, input: ImportContainerInput) -> Result<()> {
        let version = self.imported_version(input.etag.as_deref(), input.last_modified);
        let new = NewContainer {
            account: input.account,
            name: input.container.as_str().to_owned(),
            version: version.clone(),
            metadata: input.metadata,
            public_access: input.public_access,
            default_encryption_scope: ACCOUNT_ENCRYPTION_KEY.to_owned(),
            deny_encryption_scope_override: false,
        };
        let (policies, lease) = (input.policies, input.lease);
        self.inner
            .db
            .write_again(move |tx| {
                meta::insert_container(tx, &new)?;
                let id = meta::container_id(tx, &new.account, &new.name)?;
                meta::set_container_acl(tx, id, &version, new.public_access, &policies)?;
                meta::update_container_lease(tx, id, &lease)?;
                Ok(())
            })
            .await
    }

    /// Stores a blob version exactly as `input` describes it: its parts
    /// become extents, then one transaction adds the version (and its
    /// uncommitted blocks).
    ///
    /// # Errors
    /// `ContainerNotFound`; `InvalidBlobType` for a page blob;
    /// `BlobAlreadyExists` when that version is there already; IO and
    /// database failures.
    pub async fn import_blob(&self, input: ImportBlobInput) -> Result<()> {
        if input.blob_type == BlobType::PageBlob {
            return Err(Error::InvalidBlobType);
        }
        let mut written: Vec<WrittenExtent> = Vec::new();
        let outcome = self.import_blob_written(input, &mut written).await;
        if outcome.is_err() {
            for w in &written {
                if let Some(id) = &w.id {
                    self.inner.extents.discard(id).await;
                }
            }
        }
        outcome
    }

    async fn import_blob_written(
        &self,
        input: ImportBlobInput,
        written: &mut Vec<WrittenExtent>,
    ) -> Result<()> {
        let mut extents = Vec::with_capacity(input.parts.len());
        let mut size = 0;
        let part_count = input.parts.len() as u64;
        for part in input.parts {
            let w = self.inner.extents.write(part.body, part.len).await?;
            size += w.len;
            extents.push(ExtentRef {
                extent: w.id.clone().unwrap_or_default(),
                len: w.len,
                block_id: part.block_id,
            });
            written.push(w);
        }
        let mut blocks = Vec::with_capacity(input.uncommitted.len());
        for part in input.uncommitted {
            let block_id = part
                .block_id
                .clone()
                .ok_or_else(|| Error::Internal("an uncommitted block without an id".into()))?;
            let w = self.inner.extents.write(part.body, part.len).await?;
            blocks.push(BlockRow {
                block_id,
                extent: w.id.clone().unwrap_or_default(),
                len: w.len,
            });
            written.push(w);
        }
        let version = self.imported_version(input.etag.as_deref(), input.last_modified);
        let new = NewBlob {
            name: input.name.as_str().to_owned(),
            snapshot: input.snapshot,
            committed: input.committed,
            blob_type: input.blob_type,
            size,
            version,
            creation_time: input.creation_time,
            content: input.content,
            metadata: input.metadata,
            committed_block_count: (input.blob_type == BlobType::AppendBlob).then_some(part_count),
            tier: TierRecord::written(input.tier),
            copy: None,
            lease: input.lease,
            extents,
            sealed: input.sealed,
            version_id: None,
        };
        let inline: Vec<(String, Bytes)> = written
            .iter()
            .filter_map(|w| Some((w.id.clone()?, w.inline.clone()?)))
            .collect();
        let objects: Vec<String> = written
            .iter()
            .filter(|w| w.inline.is_none())
            .filter_map(|w| w.id.clone())
            .collect();
        let (account, container, tags) = (input.account, input.container, input.tags);
        let now = self.now();
        self.inner
            .db
            .write_again(move |tx| {
                let cid = meta::container_id(tx, &account, container.as_str())?;
                if meta::get_blob(tx, cid, &new.name, new.snapshot.as_deref())?.is_some() {
                    return Err(Error::Internal(format!(
                        "{}/{} is there already",
                        container.as_str(),
                        new.name
                    )));
                }
                for (id, data) in &inline {
                    meta::put_inline(tx, id, data)?;
                }
                for id in &objects {
                    meta::finish_upload(tx, id)?;
                }
                let blob_id = meta::insert_blob(tx, cid, &new)?;
                meta::set_tags(tx, blob_id, &tags)?;
                for block in &blocks {
                    meta::stage_block(tx, blob_id, block, now)?;
                }
                Ok(())
            })
            .await
    }
}
