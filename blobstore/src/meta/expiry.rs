//! SQL for blob expiry times (column `blobs.expires_at`, schema version 12).

use super::sql::{Sql, vals};
use std::time::SystemTime;

use crate::Result;
use crate::timestamps::to_nanos;

/// Sets (or with `None` clears) the expiry time of base blob `id`; its
/// ETag and Last-Modified stay as they are.
pub(crate) fn set_expiry(conn: &dyn Sql, id: i64, at: Option<SystemTime>) -> Result<()> {
    conn.execute(
        "UPDATE blobs SET expires_at = ?2 WHERE id = ?1",
        &vals![&id, at.map(to_nanos)],
    )?;
    Ok(())
}

/// Up to `limit` base blobs whose expiry time is at or before `now`, as
/// (row id, container id, name), soonest first.
pub(crate) fn blobs_due_to_expire(
    conn: &dyn Sql,
    now: SystemTime,
    limit: usize,
) -> Result<Vec<(i64, i64, String)>> {
    let rows = conn.query_map(
        "SELECT id, container_id, name FROM blobs
         WHERE expires_at IS NOT NULL AND expires_at <= ?1
         ORDER BY expires_at LIMIT ?2",
        &vals![to_nanos(now), limit as i64],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(rows)
}

/// Removes the expired base blob `id` (named `name` in container
/// `container_id`) with its snapshots and uncommitted blocks; returns the
/// extents they referenced.
pub(crate) fn remove_expired_blob(
    conn: &dyn Sql,
    id: i64,
    container_id: i64,
    name: &str,
) -> Result<Vec<String>> {
    let mut extents = super::delete_snapshots(conn, container_id, name)?;
    extents.extend(super::delete_blob_row(conn, id)?);
    Ok(extents)
}
