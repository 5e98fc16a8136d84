//! Blob versioning and blob soft delete (docs/wire/versions.md): what a
//! write or delete keeps of the content it replaces, Undelete Blob, and the
//! purge of soft-deleted rows when their retention ends.
//!
//! Every kept row shares the extents of the row it was kept from (rows of
//! `blob_extents`, no bytes), so the garbage rule stays the one of
//! snapshots: an extent is garbage once no row of any kind names it.

use crate::meta::sql::Sql;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use super::Store;
use crate::meta::{self, BlobRow, DeleteRetention, Hidden, NewBlob, Restore};
use crate::{BlobName, ContainerName, Error, Result, iso8601_7};

/// One day, the unit of retention.
const DAY: Duration = Duration::from_secs(86_400);

/// Which accounts keep previous versions of their blobs: the service turns
/// versioning on per account in its management plane; Stowage takes a
/// server-wide default and per-account exceptions from its flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Versioning {
    /// Versioning for every account not named in `accounts`.
    pub all: bool,
    /// Accounts whose setting differs from `all`.
    pub accounts: HashMap<String, bool>,
}

impl Versioning {
    /// Whether `account` keeps previous versions.
    pub fn enabled(&self, account: &str) -> bool {
        self.accounts.get(account).copied().unwrap_or(self.all)
    }
}

/// What an account keeps of replaced and deleted content, read inside the
/// transaction that replaces or deletes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keeping {
    pub versioning: bool,
    pub retention: Option<DeleteRetention>,
}

impl Keeping {
    /// The deletion and purge times of something soft-deleted at `now`,
    /// when soft delete is on.
    pub(crate) fn deleted(&self, now: SystemTime) -> Option<(SystemTime, SystemTime)> {
        self.retention.map(|r| (now, now + DAY * r.days))
    }
}

/// Whole days left until `purge`, rounded up (`RemainingRetentionDays`).
/// (The rule of soft-deleted containers: one count for both.)
pub(crate) fn remaining_days(purge: SystemTime, now: SystemTime) -> u32 {
    crate::DeletedContainer::remaining_days(purge, now) as u32
}

/// Input of Undelete Blob.
#[derive(Clone, Debug)]
pub struct UndeleteBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
}

impl Store {
    /// What `account` keeps, read in transaction `tx`.
    pub(crate) fn keeping(&self, tx: &dyn Sql, account: &str) -> Result<Keeping> {
        Ok(Keeping {
            versioning: self.inner.config.versioning.enabled(account),
            retention: meta::delete_retention(tx, account)?,
        })
    }

    /// Records the blob soft delete policy of `account` (the
    /// `DeleteRetentionPolicy` of Set Blob Service Properties): `None`
    /// turns soft delete off; what is already soft-deleted keeps its purge
    /// time.
    ///
    /// # Errors
    /// Database failures.
    pub async fn set_delete_retention(
        &self,
        account: &str,
        policy: Option<DeleteRetention>,
    ) -> Result<()> {
        let account = account.to_owned();
        self.inner
            .db
            .write_again(move |tx| meta::set_delete_retention(tx, &account, policy))
            .await
    }

    /// Undelete Blob: brings back the soft-deleted snapshots and versions of
    /// a blob, and the blob itself when it was soft-deleted without
    /// versioning and no blob of its name exists.
    ///
    /// # Errors
    /// `ContainerNotFound`; `BlobNotFound` when the name has neither a blob
    /// nor anything soft-deleted.
    pub async fn undelete_blob(&self, input: UndeleteBlobInput) -> Result<()> {
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
            let name = input.blob.as_str();
            let base = meta::get_blob(tx, cid, name, None)?.filter(|r| r.committed);
            let hidden = meta::hidden_rows(tx, cid, name)?;
            if base.is_none() && hidden.is_empty() {
                return Err(Error::BlobNotFound);
            }
            undelete_rows(tx, cid, name, base.is_some(), hidden)
        })
        .await
    }

    /// Purges up to `limit` soft-deleted rows whose retention has ended,
    /// recording the extents nothing else names as garbage. Returns how many
    /// rows it purged.
    pub(crate) async fn purge_expired(&self, limit: usize) -> Result<usize> {
        let now = self.now();
        self.inner
            .db
            .write_again_reserved(move |tx| {
                let ids = meta::due_for_purge(tx, now, limit)?;
                for &id in &ids {
                    let old = meta::delete_blob_row(tx, id)?;
                    meta::collect_unreferenced(tx, &old, now)?;
                }
                Ok(ids.len())
            })
            .await
    }
}

/// Restores the soft-deleted rows among `hidden`. A soft-deleted base blob
/// comes back as the base blob when there is none (the newest, if several),
/// any other as a snapshot named by its deletion stamp; soft-deleted
/// snapshots come back as snapshots, soft-deleted versions as versions.
fn undelete_rows(
    tx: &dyn Sql,
    cid: i64,
    name: &str,
    mut has_base: bool,
    hidden: Vec<BlobRow>,
) -> Result<()> {
    // Newest soft-deleted base first: it is the one that becomes the blob.
    let mut rows: Vec<BlobRow> = hidden.into_iter().filter(|r| r.deleted.is_some()).collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.deleted.map(|d| d.0)));
    for row in rows {
        match row.hidden {
            Some(Hidden::Base) if !has_base => {
                meta::restore(tx, row.id, Restore::Base)?;
                has_base = true;
            }
            Some(Hidden::Base) => {
                let at = row.deleted.map_or(row.version.last_modified, |d| d.0);
                let id = unique_snapshot_id(tx, cid, name, at)?;
                meta::restore(tx, row.id, Restore::Snapshot(&id))?;
            }
            Some(Hidden::Snapshot) => {
                let id = row.snapshot.clone().unwrap_or_default();
                meta::restore(tx, row.id, Restore::Snapshot(&id))?;
            }
            Some(Hidden::Version) => {
                let v = row.version_id.clone().unwrap_or_default();
                meta::restore(tx, row.id, Restore::Version(&v))?;
            }
            None => {}
        }
    }
    Ok(())
}

/// A snapshot id for `name` from `at`, moved on by 100 ns ticks past any
/// live or soft-deleted snapshot that has it.
pub(crate) fn unique_snapshot_id(
    tx: &dyn Sql,
    cid: i64,
    name: &str,
    mut at: SystemTime,
) -> Result<String> {
    loop {
        let id = iso8601_7(at);
        if meta::get_blob(tx, cid, name, Some(&id))?.is_none()
            && !meta::hidden_key_taken(tx, cid, name, &Hidden::Snapshot.key(&id))?
        {
            return Ok(id);
        }
        at += Duration::from_nanos(100);
    }
}

/// A version id for `name` from `at` (the service forms version ids like
/// snapshot ids), moved on past any version that has it.
pub(crate) fn unique_version_id(
    tx: &dyn Sql,
    cid: i64,
    name: &str,
    current: Option<&str>,
    mut at: SystemTime,
) -> Result<String> {
    loop {
        let id = iso8601_7(at);
        if current != Some(id.as_str())
            && !meta::hidden_key_taken(tx, cid, name, &Hidden::Version.key(&id))?
        {
            return Ok(id);
        }
        at += Duration::from_nanos(100);
    }
}

/// Keeps the committed base blob `old` before a write replaces its content:
/// as a previous version with versioning on, else as a soft-deleted
/// snapshot with soft delete on (what the service keeps of an overwrite),
/// else not at all.
pub(crate) fn keep_replaced(
    tx: &dyn Sql,
    cid: i64,
    old: &BlobRow,
    keeping: Keeping,
    now: SystemTime,
) -> Result<()> {
    if keeping.versioning {
        let vid = match &old.version_id {
            Some(v) => v.clone(),
            // Written before versioning was on: it gets an id when it
            // becomes a previous version.
            None => unique_version_id(tx, cid, &old.name, None, old.version.last_modified)?,
        };
        meta::preserve(tx, old.id, &Hidden::Version.key(&vid), Some(&vid), None)?;
    } else if let Some(deleted) = keeping.deleted(now) {
        let id = unique_snapshot_id(tx, cid, &old.name, now)?;
        meta::preserve(tx, old.id, &Hidden::Snapshot.key(&id), None, Some(deleted))?;
    }
    Ok(())
}

/// Writes `new` as the base blob, over `existing` when there is one: gives
/// it a version id when versioning is on, keeps the replaced content as
/// [`keep_replaced`] says, and records what the old row alone referenced as
/// garbage. Returns the base row's id. The one path by which every write
/// that creates content (Put Blob, Put Block List, Copy Blob) stores it.
pub(crate) fn write_base(
    tx: &dyn Sql,
    cid: i64,
    existing: Option<&BlobRow>,
    new: &mut NewBlob,
    keeping: Keeping,
    now: SystemTime,
) -> Result<i64> {
    write_base_as(tx, cid, existing, new, keeping, now, None)
}

/// [`write_base`], giving a new row the id `reserved` when there is one
/// (`meta::put_target`).
pub(crate) fn write_base_as(
    tx: &dyn Sql,
    cid: i64,
    existing: Option<&BlobRow>,
    new: &mut NewBlob,
    keeping: Keeping,
    now: SystemTime,
    reserved: Option<i64>,
) -> Result<i64> {
    next_version(tx, cid, existing, new, keeping, now)?;
    match existing {
        Some(r) => {
            let old = meta::replace_blob(tx, r.id, new)?;
            meta::collect_unreferenced(tx, &old, now)?;
            Ok(r.id)
        }
        None => meta::insert_blob_as(tx, cid, new, reserved),
    }
}

/// Keeps the content `existing` has as the account asks (a previous
/// version, a soft-deleted snapshot, or nothing) and gives `new` its
/// version id: the first half of [`write_base`], for writers that replace
/// the row themselves.
pub(crate) fn next_version(
    tx: &dyn Sql,
    cid: i64,
    existing: Option<&BlobRow>,
    new: &mut NewBlob,
    keeping: Keeping,
    now: SystemTime,
) -> Result<()> {
    let committed = existing.filter(|r| r.committed);
    // The replaced version is kept first: when it gets its id only now
    // (written before versioning was on), the new id must differ from it.
    if let Some(c) = committed {
        keep_replaced(tx, cid, c, keeping, now)?;
    }
    new.version_id = match keeping.versioning {
        true => Some(unique_version_id(
            tx,
            cid,
            &new.name,
            committed.and_then(|r| r.version_id.as_deref()),
            now,
        )?),
        false => None,
    };
    Ok(())
}

/// Deletes the base blob `row` (its snapshots already dealt with): it
/// becomes a previous version with versioning on, a soft-deleted blob with
/// soft delete on, or is gone. Returns whether the deletion was permanent.
pub(crate) fn delete_base(
    tx: &dyn Sql,
    cid: i64,
    row: &BlobRow,
    keeping: Keeping,
    now: SystemTime,
) -> Result<bool> {
    if keeping.versioning && row.committed {
        let vid = match &row.version_id {
            Some(v) => v.clone(),
            None => unique_version_id(tx, cid, &row.name, None, row.version.last_modified)?,
        };
        let blocks = meta::hide(tx, row.id, &Hidden::Version.key(&vid), Some(&vid), None)?;
        meta::collect_unreferenced(tx, &blocks, now)?;
        return Ok(false);
    }
    if let Some(deleted) = keeping.deleted(now).filter(|_| row.committed) {
        // Unique among the soft-deleted base blobs of the name: the row id
        // is unique in the database.
        let key = Hidden::Base.key(&format!("{}.{}", iso8601_7(now), row.id));
        let blocks = meta::hide(tx, row.id, &key, None, Some(deleted))?;
        meta::collect_unreferenced(tx, &blocks, now)?;
        return Ok(false);
    }
    let old = meta::delete_blob_row(tx, row.id)?;
    meta::collect_unreferenced(tx, &old, now)?;
    Ok(true)
}

/// Deletes one snapshot or previous version: soft-deleted with soft delete
/// on, else gone. Returns whether the deletion was permanent.
pub(crate) fn delete_kept(
    tx: &dyn Sql,
    row: &BlobRow,
    keeping: Keeping,
    now: SystemTime,
) -> Result<bool> {
    match (keeping.deleted(now), row.hidden) {
        (Some((at, purge)), Some(_)) => {
            meta::mark_deleted(tx, row.id, at, purge)?;
            Ok(false)
        }
        (Some(deleted), None) => {
            let id = row.snapshot.clone().unwrap_or_default();
            let blocks = meta::hide(tx, row.id, &Hidden::Snapshot.key(&id), None, Some(deleted))?;
            meta::collect_unreferenced(tx, &blocks, now)?;
            Ok(false)
        }
        (None, _) => {
            let old = meta::delete_blob_row(tx, row.id)?;
            meta::collect_unreferenced(tx, &old, now)?;
            Ok(true)
        }
    }
}

/// Delete Blob with `deletetype=permanent`: deletes a soft-deleted snapshot
/// or version at once, when the account's policy allows it. A live one is
/// refused (`NotSoftDeleted`), the current version too
/// (`OperationNotAllowedOnRootBlob`).
pub(crate) fn delete_permanently(
    tx: &dyn Sql,
    cid: i64,
    input: &super::DeleteBlobInput,
    keeping: Keeping,
    now: SystemTime,
) -> Result<bool> {
    if !keeping.retention.is_some_and(|r| r.allow_permanent_delete) {
        return Err(Error::PermanentDeleteNotAllowed);
    }
    let name = input.blob.as_str();
    let row = match (&input.version_id, &input.snapshot) {
        (Some(v), _) => meta::get_version(tx, cid, name, v)?,
        (None, Some(s)) => match meta::get_blob(tx, cid, name, Some(s))? {
            Some(live) => Some(live),
            None => meta::get_deleted_snapshot(tx, cid, name, s)?,
        },
        (None, None) => return Err(Error::PermanentDeleteNotAllowed),
    }
    .ok_or(Error::BlobNotFound)?;
    if row.is_base() {
        return Err(match input.version_id {
            Some(_) => Error::OperationNotAllowedOnRootBlob,
            None => Error::PermanentDeleteNotAllowed,
        });
    }
    // Only what is soft-deleted is deleted permanently (the Delete Blob
    // reference: 409 for a snapshot or version that is not).
    if row.deleted.is_none() {
        return Err(Error::NotSoftDeleted);
    }
    let old = meta::delete_blob_row(tx, row.id)?;
    meta::collect_unreferenced(tx, &old, now)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn remaining_days_round_up_table() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let cases = [
            (DAY * 7, 7),
            (DAY * 7 - Duration::from_secs(1), 7),
            (DAY + Duration::from_secs(1), 2),
            (Duration::from_secs(1), 1),
            (Duration::ZERO, 0),
        ];
        for (left, days) in cases {
            assert_eq!(remaining_days(now + left, now), days, "{left:?}");
        }
        assert_eq!(remaining_days(now, now + DAY), 0, "past the purge time");
    }

    #[test]
    fn versioning_per_account_overrides_the_default() {
        let mut v = Versioning::default();
        assert!(!v.enabled("a"));
        v.accounts.insert("a".into(), true);
        assert!(v.enabled("a") && !v.enabled("b"));
        v.all = true;
        v.accounts.insert("b".into(), false);
        assert!(v.enabled("a") && !v.enabled("b") && v.enabled("c"));
    }
}
