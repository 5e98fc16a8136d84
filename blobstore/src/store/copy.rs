//! Copy Blob within this server (docs/wire/blobs.md#copy-blob, docs/wire/blobs.md#abort-copy-blob). Every
//! copy within the server completes before its response: the destination
//! shares the source's extents, so no bytes are copied. Copies from other
//! hosts are in `remote_copy`; Abort Copy Blob stops those.

use stowage_leases::{LeaseDuration, LeaseId};

use super::Store;
use super::blobs::lease_after_write;
use crate::conditions::{self, ConditionKind, Conditions, Current};
use crate::meta::{self, NewBlob};
use crate::{AccessTier, RehydratePriority, Rehydration, TierRecord};
use crate::{
    BlobName, ContainerName, CopyProperties, Error, Metadata, PublicAccess, Result, Versioned,
};

/// The blob a copy reads, as named by `x-ms-copy-source`.
#[derive(Clone, Debug)]
pub struct CopySource {
    /// The source's account.
    pub account: String,
    /// The source's container.
    pub container: ContainerName,
    /// The source blob.
    pub blob: BlobName,
    /// A snapshot of it.
    pub snapshot: Option<String>,
    /// A version of it (`versionid=` on the source URL).
    pub version_id: Option<String>,
    /// Why the request may read the source.
    pub access: SourceAccess,
}

/// How a copy is allowed to read its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceAccess {
    /// A source in the destination's account, read with the request's own
    /// credentials (Copy Blob): a missing source is `ContainerNotFound` or
    /// `BlobNotFound`, as for a read of it.
    Account,
    /// A shared access signature on the source that the server verified:
    /// a missing source is `CannotVerifyCopySource`.
    Granted,
    /// No credentials for the source: its container must allow anonymous
    /// reads; anything else is `CannotVerifyCopySource`.
    Public,
}

/// Input of Copy Blob.
#[derive(Clone, Debug)]
pub struct CopyBlobInput {
    /// The destination account.
    pub account: String,
    /// The destination container.
    pub container: ContainerName,
    /// The destination blob.
    pub blob: BlobName,
    /// The source.
    pub source: CopySource,
    /// `x-ms-copy-source` exactly as sent (recorded on the destination).
    pub source_header: String,
    /// Destination metadata; `None` takes the source's.
    pub metadata: Option<Metadata>,
    /// Destination conditions.
    pub conditions: Conditions,
    /// Source conditions (`x-ms-source-if-*`).
    pub source_conditions: Conditions,
    /// Destination `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// `x-ms-access-tier`.
    pub access_tier: Option<AccessTier>,
    /// `x-ms-source-content-md5` of Copy Blob From URL: must match the
    /// source's MD5 when the source has one.
    pub expected_md5: Option<[u8; 16]>,
    /// `x-ms-seal-blob` of a copy of an append blob: `Some(true)` seals
    /// the copy, `Some(false)` leaves it open, `None` keeps the source's
    /// seal, as the service does (its SDKs' live tests copy a sealed blob
    /// without the header and find the copy sealed). Other blob types
    /// ignore it.
    pub seal: Option<bool>,
    /// `Some` for the asynchronous Copy Blob (with `x-ms-rehydrate-priority`,
    /// Standard when absent): an archived source may then be copied to an
    /// online `access_tier`, the destination rehydrating. `None` (Copy Blob
    /// From URL): an archived source is `409 BlobArchived`.
    pub rehydrate: Option<RehydratePriority>,
    /// `x-ms-tags`: the new version's tags (empty: none, whatever it had).
    pub tags: crate::Tags,
}

/// Output of Copy Blob.
#[derive(Clone, Debug)]
pub struct CopyBlobOutput {
    /// The destination's new version.
    pub version: Versioned,
    /// The new copy id.
    pub copy_id: String,
    /// The content MD5 of the copied content, when the source has one.
    pub content_md5: Option<Vec<u8>>,
    /// The copy waits for its destination's rehydration (an archived
    /// source): `x-ms-copy-status: pending`.
    pub pending: bool,
    /// The destination's new version id, when versioning is on.
    pub version_id: Option<String>,
}

impl Store {
    /// Copy Blob (and Copy Blob From URL, which completes the same way).
    ///
    /// # Errors
    /// `CannotVerifyCopySource`, `BlobNotFound` (a missing source of the
    /// same account), `SourceConditionNotMet`, `ContainerNotFound`,
    /// destination condition and lease refusals, `InvalidBlobType`.
    pub async fn copy_blob(&self, input: CopyBlobInput) -> Result<CopyBlobOutput> {
        let now = self.now();
        let store = self.clone();
        let copy_id = uuid::Uuid::new_v4().to_string();
        // The source's lock too: the copy refers to its extents, which an
        // overwrite of the source would otherwise record as garbage while
        // this commits (docs/cluster.md, "Consistency").
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
                let src = &input.source;
                let source = source_row(tx, src, now)?;
                let now = store.judge_now(tx, now)?;
                let source_current = Current {
                    etag: source.version.etag.as_str(),
                    last_modified: source.version.last_modified,
                };
                conditions::evaluate(
                    &input.source_conditions,
                    Some(source_current),
                    ConditionKind::Source,
                )?;
                super::tags::check_if_tags(
                    tx,
                    &input.source_conditions,
                    Some(source.id),
                    ConditionKind::Source,
                )?;
                // An archived source is copied to the online tier asked
                // for, and the destination is rehydrated from the archive:
                // the copy is pending until then (docs/wire/tiers.md).
                let rehydration = match (input.rehydrate, source.tier.check_online(now)) {
                    (_, Ok(())) => None,
                    (Some(priority), Err(Error::BlobArchived)) => match input.access_tier {
                        Some(to) if to != AccessTier::Archive => Some(Rehydration {
                            to,
                            priority,
                            done_at: now + store.inner.config.rehydrate_delay,
                        }),
                        _ => return Err(Error::BlobArchived),
                    },
                    (_, Err(e)) => return Err(e),
                };
                if input.access_tier.is_some() && source.blob_type != crate::BlobType::BlockBlob {
                    return Err(Error::AccessTierNotSupportedForBlobType);
                }
                if let (Some(expected), Some(computed)) =
                    (input.expected_md5, source.content.content_md5.as_deref())
                    && expected[..] != *computed
                {
                    // A stored MD5 may have any length (Set Blob Properties
                    // keeps what it was given); the error shows 16 bytes.
                    let computed = <[u8; 16]>::try_from(computed).unwrap_or_default();
                    return Err(Error::Md5Mismatch { expected, computed });
                }

                let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
                let (dest, lease) = super::blobs::check_replace(
                    tx,
                    cid,
                    input.blob.as_str(),
                    &input.conditions,
                    input.lease_id.as_ref(),
                    now,
                )?;
                let committed = dest.as_ref().filter(|r| r.committed);
                if input.lease_id.is_some()
                    && lease.duration.is_some_and(|d| d != LeaseDuration::Infinite)
                {
                    return Err(Error::InfiniteLeaseDurationRequired);
                }
                if let Some(r) = committed
                    && r.blob_type != source.blob_type
                {
                    return Err(Error::InvalidBlobType);
                }
                let version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                let mut new = NewBlob {
                    name: input.blob.as_str().to_owned(),
                    snapshot: None,
                    committed: true,
                    blob_type: source.blob_type,
                    size: source.size,
                    version: version.clone(),
                    creation_time: committed.map_or(now, |r| r.creation_time),
                    content: source.content.clone(),
                    metadata: input.metadata.clone().unwrap_or(source.metadata.clone()),
                    committed_block_count: source.committed_block_count,
                    sealed: source.blob_type == crate::BlobType::AppendBlob
                        && input.seal.unwrap_or(source.sealed),
                    tier: match rehydration {
                        Some(r) => TierRecord {
                            tier: Some(AccessTier::Archive),
                            changed_at: None,
                            rehydration: Some(r),
                        },
                        None => TierRecord::written(input.access_tier),
                    },
                    copy: Some(CopyProperties {
                        id: copy_id.clone(),
                        source: input.source_header.clone(),
                        progress: format!("{0}/{0}", source.size),
                        completion_time: rehydration.map_or(now, |r| r.done_at),
                        pending: false,
                        status: crate::CopyStatus::Success,
                        description: None,
                    }),
                    lease,
                    extents: Vec::new(),
                    version_id: None,
                };
                let keeping = store.keeping(tx, &input.account)?;
                let id = match dest.as_ref() {
                    // A blob copied onto itself keeps its content (and
                    // its page map): only its properties are replaced.
                    Some(r) if r.id == source.id => {
                        super::versions::next_version(tx, cid, Some(r), &mut new, keeping, now)?;
                        let old = meta::replace_keeping_content(tx, r.id, &new)?;
                        meta::collect_unreferenced(tx, &old, now)?;
                        r.id
                    }
                    _ => {
                        let id = super::versions::write_base(
                            tx,
                            cid,
                            dest.as_ref(),
                            &mut new,
                            keeping,
                            now,
                        )?;
                        meta::share_content(tx, source.id, id)?;
                        meta::clear_incremental_copy(tx, id)?;
                        id
                    }
                };
                if dest.is_some() || !input.tags.is_empty() {
                    meta::set_tags(tx, id, &input.tags)?;
                }
                Ok(CopyBlobOutput {
                    version,
                    copy_id: copy_id.clone(),
                    content_md5: source.content.content_md5,
                    pending: rehydration.is_some(),
                    version_id: new.version_id,
                })
            })
            .await
    }

    /// Abort Copy Blob: a copy from another host that is still pending
    /// with the id `copy_id` ends `aborted`, its destination left with no
    /// bytes and the metadata the copy gave it (docs/wire/copy.md).
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, a lease refusal,
    /// `NoPendingCopyOperation` (no copy pending: none ever was, it ended,
    /// or it waits only for a rehydration), `CopyIdMismatch`.
    pub async fn abort_copy_blob(
        &self,
        account: &str,
        container: &ContainerName,
        blob: &BlobName,
        lease_id: Option<LeaseId>,
        copy_id: &str,
    ) -> Result<()> {
        let now = self.now();
        let (account, container, blob) = (account.to_owned(), container.clone(), blob.clone());
        let copy_id = copy_id.to_owned();
        let store = self.clone();
        self.blob_db(&account, container.as_str(), blob.as_str())
            .write_again(move |tx| {
                let cid = meta::container_id(tx, &account, container.as_str())?;
                let now = store.judge_now(tx, now)?;
                let row = super::blobs::require_committed(tx, cid, &blob, None, now)?;
                lease_after_write(Some(&row), lease_id.as_ref(), now)?;
                let copy = row
                    .copy
                    .filter(|c| c.status == crate::CopyStatus::Pending)
                    .ok_or(Error::NoPendingCopyOperation)?;
                if copy.id != copy_id {
                    return Err(Error::CopyIdMismatch);
                }
                meta::end_copy(tx, row.id, crate::CopyStatus::Aborted, None, now)
            })
            .await
    }
}

/// The source row of a copy within this server: a version, a snapshot or
/// the base blob. Read with the account's own credentials, a missing source
/// is answered as a read of it would be; otherwise missing, uncommitted and
/// unreadable all look alike (`CannotVerifyCopySource`).
pub(super) fn source_row(
    conn: &dyn crate::meta::sql::Sql,
    src: &CopySource,
    now: std::time::SystemTime,
) -> Result<meta::BlobRow> {
    let missing = |e: Error| match src.access {
        SourceAccess::Account => e,
        SourceAccess::Granted | SourceAccess::Public => Error::CannotVerifyCopySource,
    };
    let container = meta::get_container(conn, &src.account, src.container.as_str())?
        .ok_or_else(|| missing(Error::ContainerNotFound))?;
    // Either public level lets anyone read a blob they can name.
    if src.access == SourceAccess::Public
        && !matches!(
            container.public_access,
            Some(PublicAccess::Blob | PublicAccess::Container)
        )
    {
        return Err(Error::CannotVerifyCopySource);
    }
    match &src.version_id {
        Some(v) => meta::get_version(conn, container.id, src.blob.as_str(), v)?
            .filter(|r| r.deleted.is_none()),
        None => meta::get_blob(
            conn,
            container.id,
            src.blob.as_str(),
            src.snapshot.as_deref(),
        )?,
    }
    .filter(|r| r.committed && !crate::expiry::is_expired(r.expires_at, now))
    .ok_or_else(|| missing(Error::BlobNotFound))
}
