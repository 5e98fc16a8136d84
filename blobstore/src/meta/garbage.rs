//! SQL for garbage extents: extents no blob version references any more.

use rusqlite::{Connection, params};

use crate::Result;
use crate::timestamps::to_nanos;

/// Of `candidates`, records as garbage (since `now`) those that no blob
/// version references any more. Called in the transaction that dropped the
/// references, so an extent can never be garbage and referenced at once.
pub(crate) fn collect_unreferenced(
    conn: &Connection,
    candidates: &[String],
    now: std::time::SystemTime,
) -> Result<()> {
    let mut still_used = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM blob_extents WHERE extent = ?1)
             OR EXISTS (SELECT 1 FROM blocks WHERE extent = ?1)",
    )?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO garbage (extent, since) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
    )?;
    for extent in candidates.iter().filter(|e| !e.is_empty()) {
        let used: bool = still_used.query_row(params![extent], |r| r.get(0))?;
        if !used {
            insert.execute(params![extent, to_nanos(now)])?;
        }
    }
    Ok(())
}

/// Garbage extents that became garbage at or before `cutoff`.
pub(crate) fn garbage_before(
    conn: &Connection,
    cutoff: std::time::SystemTime,
    limit: usize,
) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare_cached("SELECT extent FROM garbage WHERE since <= ?1 ORDER BY since LIMIT ?2")?;
    let rows = stmt.query_map(params![to_nanos(cutoff), limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn forget_garbage(conn: &Connection, extent: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM garbage WHERE extent = ?1")?
        .execute(params![extent])?;
    Ok(())
}

/// True when some blob version references `extent` or it is recorded as
/// garbage (so the start-up sweep leaves it to the collector).
pub(crate) fn extent_known(conn: &Connection, extent: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM blob_extents WHERE extent = ?1)
                 OR EXISTS (SELECT 1 FROM blocks WHERE extent = ?1)
                 OR EXISTS (SELECT 1 FROM garbage WHERE extent = ?1)",
        )?
        .query_row(params![extent], |r| r.get(0))?)
}
