//! Set Blob Expiry, and the removal of expired blobs (docs/wire/expiry.md).

use crate::meta::sql::Sql;
use std::time::SystemTime;

use stowage_leases::{Access, LeaseId, Resource};

use super::Store;
use super::blobs::require_committed;
use crate::meta;
use crate::{BlobName, ContainerName, Error, ExpiryOption, Result, Versioned};

/// Input of Set Blob Expiry.
#[derive(Clone, Debug)]
pub struct SetBlobExpiryInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// `x-ms-expiry-option` with its `x-ms-expiry-time`.
    pub option: ExpiryOption,
    /// `x-ms-lease-id`, required while the blob is leased.
    pub lease_id: Option<LeaseId>,
}

/// Removes base blob `name` with its snapshots when its expiry time has
/// passed at `now`, and records the extents it leaves unreferenced as
/// garbage: a write transaction calls this before it reads the blob, so an
/// expired blob is absent for writes as it is for reads, whether or not the
/// collector has come by.
pub(super) fn purge_if_expired(
    tx: &dyn Sql,
    container_id: i64,
    name: &str,
    now: SystemTime,
) -> Result<()> {
    match meta::get_blob(tx, container_id, name, None)? {
        Some(row) if crate::expiry::is_expired(row.expires_at, now) => {
            let extents = meta::remove_expired_blob(tx, row.id, container_id, name)?;
            meta::collect_unreferenced(tx, &extents, now)
        }
        _ => Ok(()),
    }
}

/// [`purge_if_expired`] for a row already read (the base blob `name`):
/// the row, or `None` when it was expired and is now removed.
pub(super) fn purge_read_if_expired(
    tx: &dyn Sql,
    container_id: i64,
    name: &str,
    row: Option<meta::BlobRow>,
    now: SystemTime,
) -> Result<Option<meta::BlobRow>> {
    match row {
        Some(row) if crate::expiry::is_expired(row.expires_at, now) => {
            let extents = meta::remove_expired_blob(tx, row.id, container_id, name)?;
            meta::collect_unreferenced(tx, &extents, now)?;
            Ok(None)
        }
        other => Ok(other),
    }
}

impl Store {
    /// Set Blob Expiry: sets or clears the time the blob is deleted at. The
    /// ETag and Last-Modified stay as they are and are returned.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, lease refusals,
    /// `InvalidExpiryTime` for a time that is not after `now`.
    pub async fn set_blob_expiry(&self, input: SetBlobExpiryInput) -> Result<Versioned> {
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
            let row = require_committed(tx, cid, &input.blob, None, now)?;
            stowage_leases::check(
                &row.lease,
                input.lease_id.as_ref(),
                Access::Write,
                Resource::Blob,
                now,
            )?;
            let at = input.option.expires_at(row.creation_time, now);
            if at.is_some_and(|t| t <= now) {
                return Err(Error::InvalidExpiryTime);
            }
            meta::set_expiry(tx, row.id, at)?;
            Ok(row.version)
        })
        .await
    }

    /// Removes up to `limit` blobs whose expiry time has passed at `now`,
    /// with their snapshots; returns how many.
    pub(crate) async fn purge_expired_blobs(&self, now: SystemTime, limit: usize) -> Result<usize> {
        self.inner
            .db
            .write_again_reserved(move |tx| {
                let due = meta::blobs_due_to_expire(tx, now, limit)?;
                for (id, container_id, name) in &due {
                    let extents = meta::remove_expired_blob(tx, *id, *container_id, name)?;
                    meta::collect_unreferenced(tx, &extents, now)?;
                }
                Ok(due.len())
            })
            .await
    }
}
