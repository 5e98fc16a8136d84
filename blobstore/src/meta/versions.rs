//! SQL for previous versions and soft-deleted rows (schema version 11).
//!
//! Such a row stays in `blobs` beside the base blob and its snapshots and
//! shares extents the same way (its `blob_extents` rows name them; nothing
//! is copied), so the garbage path needs nothing new: an extent is garbage
//! when no row of any kind refers to it. It has `is_base = -1` and a key in
//! `snapshot` that no snapshot id can be (those start with a digit): `v` and
//! the version id for a previous version, `s` and the snapshot id for a
//! soft-deleted snapshot, `b` and a unique stamp for a soft-deleted base
//! blob. Queries of base blobs (`is_base = 1`) and live snapshots
//! (`is_base = 0`) never see them.

use super::sql::{Sql, vals};
use std::time::SystemTime;

use super::blobs::{BLOB_COLUMNS, BlobRow, read_blob_row};
use crate::Result;
use crate::timestamps::to_nanos;

/// What a hidden row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hidden {
    /// A previous version (soft-deleted when `deleted` is set).
    Version,
    /// A soft-deleted snapshot.
    Snapshot,
    /// A soft-deleted base blob (versioning off when it was deleted).
    Base,
}

/// The `is_base` value of hidden rows.
const HIDDEN: i64 = -1;

impl Hidden {
    fn prefix(self) -> char {
        match self {
            Hidden::Version => 'v',
            Hidden::Snapshot => 's',
            Hidden::Base => 'b',
        }
    }

    /// The key stored in `snapshot` for a hidden row of this kind.
    pub(crate) fn key(self, id: &str) -> String {
        format!("{}{id}", self.prefix())
    }
}

/// The snapshot id and hidden kind a stored `snapshot` column stands for.
pub(crate) fn parse_key(key: String) -> (Option<String>, Option<Hidden>) {
    let kind = match key.as_bytes().first() {
        None => return (None, None),
        Some(b'v') => Hidden::Version,
        Some(b's') => Hidden::Snapshot,
        Some(b'b') => Hidden::Base,
        Some(_) => return (Some(key), None),
    };
    match kind {
        Hidden::Snapshot => (Some(key[1..].to_owned()), Some(kind)),
        _ => (None, Some(kind)),
    }
}

/// The account's blob soft delete policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeleteRetention {
    /// Days a deleted blob is kept, 1 to 365.
    pub days: u32,
    /// Whether `deletetype=permanent` may delete a soft-deleted snapshot or
    /// version at once.
    pub allow_permanent_delete: bool,
}

/// The soft delete policy of `account`, when enabled.
pub(crate) fn delete_retention(conn: &dyn Sql, account: &str) -> Result<Option<DeleteRetention>> {
    conn.query_row(
        "SELECT days, allow_permanent_delete FROM blob_delete_retention WHERE account = ?1",
        &vals![&account],
        |r| {
            Ok(DeleteRetention {
                days: r.get::<i64>(0)? as u32,
                allow_permanent_delete: r.get(1)?,
            })
        },
    )
}

/// Records (or, with `None`, clears) the soft delete policy of `account`.
pub(crate) fn set_delete_retention(
    conn: &dyn Sql,
    account: &str,
    policy: Option<DeleteRetention>,
) -> Result<()> {
    match policy {
        Some(p) => conn.execute(
            "INSERT INTO blob_delete_retention (account, days, allow_permanent_delete)
                 VALUES (?1, ?2, ?3)
                 ON CONFLICT (account) DO UPDATE SET days = ?2, allow_permanent_delete = ?3",
            &vals![&account, &p.days, &p.allow_permanent_delete],
        )?,
        None => conn.execute(
            "DELETE FROM blob_delete_retention WHERE account = ?1",
            &vals![&account],
        )?,
    };
    Ok(())
}

/// The row of version `version_id` of `name`: the base blob when it is that
/// version, else a previous version (soft-deleted ones included).
pub(crate) fn get_version(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
    version_id: &str,
) -> Result<Option<BlobRow>> {
    conn.query_row(
        &format!(
            "SELECT {BLOB_COLUMNS} FROM blobs
         WHERE container_id = ?1 AND name = ?2
           AND ((is_base = 1 AND snapshot = '' AND version_id = ?3)
                OR (is_base = -1 AND snapshot = 'v' || ?3))"
        ),
        &vals![&container_id, &name, &version_id],
        read_blob_row,
    )
}

/// A soft-deleted snapshot of `name`, by its snapshot id.
pub(crate) fn get_deleted_snapshot(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
    snapshot: &str,
) -> Result<Option<BlobRow>> {
    conn.query_row(
        &format!(
            "SELECT {BLOB_COLUMNS} FROM blobs
         WHERE container_id = ?1 AND name = ?2 AND is_base = -1 AND snapshot = 's' || ?3"
        ),
        &vals![&container_id, &name, &snapshot],
        read_blob_row,
    )
}

/// Whether `key` is taken among the hidden rows of `name`.
pub(crate) fn hidden_key_taken(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
    key: &str,
) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM blobs
             WHERE container_id = ?1 AND name = ?2 AND is_base = -1 AND snapshot = ?3)",
        &vals![&container_id, &name, &key],
        |r| r.get(0),
    )?
    .ok_or_else(super::sql::no_rows)
}

/// Keeps a copy of row `id` as the hidden row `key` (soft-deleted when
/// `deleted` gives the deletion and purge times; with `version_id` when the
/// row had none): the same properties, extents and tags, no lease. Returns
/// the new row's id.
pub(crate) fn preserve(
    conn: &dyn Sql,
    id: i64,
    key: &str,
    version_id: Option<&str>,
    deleted: Option<(SystemTime, SystemTime)>,
) -> Result<i64> {
    // Every column but the key, the lease (a kept row is never leased), the
    // deletion times and the version id.
    const KEPT: &str = "container_id, name, committed, blob_type, size, etag,
        last_modified, creation_time, content_type, content_encoding, content_language,
        content_md5, cache_control, content_disposition, metadata, committed_block_count,
        access_tier, copy_id, copy_source, copy_progress, copy_completion_time, sealed,
        access_tier_changed_at, rehydrate_to, rehydrate_priority, rehydrate_done_at,
        copy_status, copy_status_description";
    let (at, purge) = deleted.map_or((None, None), |(a, p)| {
        (Some(to_nanos(a)), Some(to_nanos(p)))
    });
    let new_id: i64 = conn
        .query_row(
            &format!(
                "INSERT INTO blobs (is_base, snapshot, deleted_at, purge_at, version_id, {KEPT})
         SELECT ?2, ?3, ?4, ?5, COALESCE(?6, version_id), {KEPT} FROM blobs WHERE id = ?1
         RETURNING id"
            ),
            &vals![&id, HIDDEN, &key, &at, &purge, &version_id],
            |r| r.get(0),
        )?
        .ok_or_else(super::sql::no_rows)?;
    super::blobs::share_content(conn, id, new_id)?;
    super::tags::copy_tags(conn, id, new_id)?;
    Ok(new_id)
}

/// Gives row `id` the version id `version_id` (its content unchanged).
pub(crate) fn set_version_id(conn: &dyn Sql, id: i64, version_id: &str) -> Result<()> {
    conn.execute(
        "UPDATE blobs SET version_id = ?2 WHERE id = ?1",
        &vals![&id, &version_id],
    )?;
    Ok(())
}

/// Turns row `id` (a base blob or a snapshot) into the hidden row `key`
/// in place, keeping its extents: its uncommitted blocks and lease go.
/// Returns the extents of the blocks, for the garbage check.
pub(crate) fn hide(
    conn: &dyn Sql,
    id: i64,
    key: &str,
    version_id: Option<&str>,
    deleted: Option<(SystemTime, SystemTime)>,
) -> Result<Vec<String>> {
    let blocks = super::blocks::take_blocks(conn, id)?;
    let (at, purge) = deleted.map_or((None, None), |(a, p)| {
        (Some(to_nanos(a)), Some(to_nanos(p)))
    });
    conn.execute(
        &format!(
            "UPDATE blobs SET is_base = ?2, snapshot = ?3, deleted_at = ?4, purge_at = ?5,
            version_id = COALESCE(?6, version_id),
            ({}) = (NULL, NULL, NULL, NULL, 0)
         WHERE id = ?1",
            super::lease_columns::COLUMNS
        ),
        &vals![&id, HIDDEN, &key, &at, &purge, &version_id],
    )?;
    conn.execute(
        "UPDATE blob_tags SET is_base = 0 WHERE blob_id = ?1",
        &vals![&id],
    )?;
    Ok(blocks)
}

/// Soft-deletes every live snapshot of `name`.
pub(crate) fn hide_snapshots(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
    at: SystemTime,
    purge: SystemTime,
) -> Result<()> {
    conn.execute(
        "UPDATE blobs SET is_base = ?4, snapshot = 's' || snapshot, deleted_at = ?5, purge_at = ?6
         WHERE container_id = ?1 AND name = ?2 AND is_base = ?3",
        &vals![
            &container_id,
            &name,
            0i64,
            HIDDEN,
            to_nanos(at),
            to_nanos(purge)
        ],
    )?;
    Ok(())
}

/// Marks hidden row `id` soft-deleted (a previous version deleted by id).
pub(crate) fn mark_deleted(
    conn: &dyn Sql,
    id: i64,
    at: SystemTime,
    purge: SystemTime,
) -> Result<()> {
    conn.execute(
        "UPDATE blobs SET deleted_at = ?2, purge_at = ?3 WHERE id = ?1",
        &vals![&id, to_nanos(at), to_nanos(purge)],
    )?;
    Ok(())
}

/// The hidden rows of `name`, oldest key first.
pub(crate) fn hidden_rows(conn: &dyn Sql, container_id: i64, name: &str) -> Result<Vec<BlobRow>> {
    conn.query_map(
        &format!(
            "SELECT {BLOB_COLUMNS} FROM blobs
         WHERE container_id = ?1 AND name = ?2 AND is_base = -1 ORDER BY snapshot"
        ),
        &vals![&container_id, &name],
        read_blob_row,
    )
}

/// Brings soft-deleted row `id` back: as the base blob (`Restore::Base`),
/// as the live snapshot `id` (`Restore::Snapshot`), or as a previous version
/// no longer deleted (`Restore::Version`).
pub(crate) fn restore(conn: &dyn Sql, id: i64, to: Restore<'_>) -> Result<()> {
    let (is_base, key) = match to {
        Restore::Base => (1, String::new()),
        Restore::Snapshot(s) => (0, s.to_owned()),
        Restore::Version(v) => (HIDDEN, Hidden::Version.key(v)),
    };
    conn.execute(
        "UPDATE blobs SET is_base = ?2, snapshot = ?3, deleted_at = NULL, purge_at = NULL
         WHERE id = ?1",
        &vals![&id, &is_base, &key],
    )?;
    conn.execute(
        "UPDATE blob_tags SET is_base = ?2 WHERE blob_id = ?1",
        &vals![&id, is_base == 1],
    )?;
    Ok(())
}

/// Where [`restore`] puts a row back.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Restore<'a> {
    Base,
    Snapshot(&'a str),
    Version(&'a str),
}

/// Up to `limit` soft-deleted rows whose retention ended at or before `now`.
pub(crate) fn due_for_purge(conn: &dyn Sql, now: SystemTime, limit: usize) -> Result<Vec<i64>> {
    let ids = conn.query_map(
        "SELECT id FROM blobs WHERE purge_at IS NOT NULL AND purge_at <= ?1 LIMIT ?2",
        &vals![to_nanos(now), limit as i64],
        |r| r.get(0),
    )?;
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_keys_table() {
        let cases = [
            ("", (None, None)),
            (
                "2024-09-03T10:15:07.0000000Z",
                (Some("2024-09-03T10:15:07.0000000Z"), None),
            ),
            (
                "v2024-09-03T10:15:07.0000000Z",
                (None, Some(Hidden::Version)),
            ),
            (
                "s2024-09-03T10:15:07.0000000Z",
                (Some("2024-09-03T10:15:07.0000000Z"), Some(Hidden::Snapshot)),
            ),
            (
                "b2024-09-03T10:15:07.0000000Z.7",
                (None, Some(Hidden::Base)),
            ),
        ];
        for (key, (snapshot, hidden)) in cases {
            let got = parse_key(key.to_owned());
            assert_eq!((got.0.as_deref(), got.1), (snapshot, hidden), "{key:?}");
        }
        for kind in [Hidden::Version, Hidden::Snapshot, Hidden::Base] {
            assert_eq!(parse_key(kind.key("x")).1, Some(kind));
        }
    }

    #[test]
    fn the_retention_policy_is_kept_per_account() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&conn).unwrap();
        assert_eq!(delete_retention(&conn, "a").unwrap(), None);
        let policy = DeleteRetention {
            days: 7,
            allow_permanent_delete: true,
        };
        set_delete_retention(&conn, "a", Some(policy)).unwrap();
        assert_eq!(delete_retention(&conn, "a").unwrap(), Some(policy));
        assert_eq!(delete_retention(&conn, "b").unwrap(), None);
        set_delete_retention(&conn, "a", None).unwrap();
        assert_eq!(delete_retention(&conn, "a").unwrap(), None);
    }
}
