//! SQL for soft-deleted containers (schema version 12).
//!
//! A soft-deleted container keeps its row, and with it its blobs, metadata
//! and stored access policies. Its `name` becomes [`deleted_key`]: the name
//! it had, `!` and its deletion version. No container name holds `!`, so the
//! key never answers a lookup by name (every read and write of containers
//! goes by name) and the name is free for a new container at once; and `!`
//! sorts before every character a name may hold, so the key lists right
//! after a live container of the same name. The tags of its blobs leave the
//! account's tag index until it is restored.

use std::time::SystemTime;

use stowage_leases::LeaseRecord;

use super::lease_columns;
use super::sql::{Sql, SqlRow, vals};
use crate::Result;
use crate::timestamps::{from_nanos, to_nanos};

/// What a soft-deleted container row records about its deletion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeletedInfo {
    /// Tells this deletion apart from other deletions of the same name.
    pub version: String,
    /// When it was deleted.
    pub deleted_at: SystemTime,
    /// When it is purged for good.
    pub purge_at: SystemTime,
}

/// The stored name of a soft-deleted container.
pub(crate) fn deleted_key(name: &str, version: &str) -> String {
    format!("{name}!{version}")
}

/// Reads the deletion columns (version, deleted at, purge at) from `first` on.
pub(crate) fn read_deleted(row: &dyn SqlRow, first: usize) -> Result<Option<DeletedInfo>> {
    let version: Option<String> = row.get(first)?;
    let deleted_at: Option<i64> = row.get(first + 1)?;
    let purge_at: Option<i64> = row.get(first + 2)?;
    Ok(match (version, deleted_at, purge_at) {
        (Some(version), Some(d), Some(p)) => Some(DeletedInfo {
            version,
            deleted_at: from_nanos(d),
            purge_at: from_nanos(p),
        }),
        _ => None,
    })
}

/// Soft-deletes container `id`, called `name`: renames it to its key,
/// records the deletion, drops its lease (a deleted container has none),
/// and takes its blobs' tags out of the tag index.
pub(crate) fn soft_delete_container(
    conn: &dyn Sql,
    id: i64,
    name: &str,
    info: &DeletedInfo,
) -> Result<()> {
    let lease = lease_columns::values(&LeaseRecord::default());
    conn.execute(
        &format!(
            "UPDATE containers SET name = ?2, deleted_name = ?3, deleted_version = ?4,
            deleted_at = ?5, purge_at = ?6, ({}) = (?7, ?8, ?9, ?10, ?11)
         WHERE id = ?1",
            lease_columns::COLUMNS
        ),
        &vals![
            id,
            &deleted_key(name, &info.version),
            name,
            &info.version,
            to_nanos(info.deleted_at),
            to_nanos(info.purge_at),
            &lease.0,
            lease.1,
            lease.2,
            lease.3,
            lease.4,
        ],
    )?;
    // The account '' is no account's (account names are never empty).
    relabel_tags(conn, id, "", "")
}

/// The id and purge time of the soft-deleted container `name` of `account`
/// with deletion `version`, if there is one.
pub(crate) fn find_deleted_container(
    conn: &dyn Sql,
    account: &str,
    name: &str,
    version: &str,
) -> Result<Option<(i64, SystemTime)>> {
    conn.query_row(
        "SELECT id, purge_at FROM containers
             WHERE account = ?1 AND name = ?2 AND deleted_at IS NOT NULL",
        &vals![account, &deleted_key(name, version)],
        |r| Ok((r.get(0)?, from_nanos(r.get(1)?))),
    )
}

/// Brings soft-deleted container `id` back as `name` of `account` (the
/// caller checked that no live container has that name).
pub(crate) fn restore_container(conn: &dyn Sql, id: i64, account: &str, name: &str) -> Result<()> {
    conn.execute(
        "UPDATE containers SET name = ?2, deleted_name = NULL, deleted_version = NULL,
            deleted_at = NULL, purge_at = NULL
         WHERE id = ?1",
        &vals![id, name],
    )?;
    relabel_tags(conn, id, account, name)
}

/// Sets the account and container names that the tag rows of container
/// `id`'s blobs are found under.
fn relabel_tags(conn: &dyn Sql, id: i64, account: &str, container: &str) -> Result<()> {
    conn.execute(
        "UPDATE blob_tags SET account = ?2, container = ?3
         WHERE blob_id IN (SELECT id FROM blobs WHERE container_id = ?1)",
        &vals![id, account, container],
    )?;
    Ok(())
}

/// Up to `limit` soft-deleted containers whose purge time is at or before
/// `now`, oldest first.
pub(crate) fn containers_due_for_purge(
    conn: &dyn Sql,
    now: SystemTime,
    limit: usize,
) -> Result<Vec<i64>> {
    conn.query_map(
        "SELECT id FROM containers WHERE purge_at IS NOT NULL AND purge_at <= ?1
         ORDER BY purge_at LIMIT ?2",
        &vals![to_nanos(now), limit as i64],
        |r| r.get(0),
    )
}
