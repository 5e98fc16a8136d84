//! SQL for staged (uncommitted) blocks and committed block lists.

use rusqlite::{Connection, params};

use crate::Result;
use crate::timestamps::to_nanos;

/// A block as listed by Get Block List, with its extent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BlockRow {
    /// The base64 id exactly as staged.
    pub block_id: String,
    /// The extent holding its bytes ('' for an empty block).
    pub extent: String,
    pub len: u64,
}

/// Stages a block, replacing one staged earlier under the same id; returns
/// the extent of the replaced block, if any.
pub(crate) fn stage_block(
    conn: &Connection,
    blob_id: i64,
    block: &BlockRow,
    now: std::time::SystemTime,
) -> Result<Option<String>> {
    let old: Option<String> = conn
        .prepare_cached("SELECT extent FROM blocks WHERE blob_id = ?1 AND block_id = ?2")?
        .query_row(params![blob_id, block.block_id], |r| r.get(0))
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    conn.prepare_cached(
        "INSERT INTO blocks (blob_id, block_id, extent, len, staged_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (blob_id, block_id) DO UPDATE SET
            extent = excluded.extent, len = excluded.len, staged_at = excluded.staged_at",
    )?
    .execute(params![
        blob_id,
        block.block_id,
        block.extent,
        block.len as i64,
        to_nanos(now)
    ])?;
    Ok(old)
}

/// The uncommitted blocks of a blob, sorted by id.
pub(crate) fn uncommitted_blocks(conn: &Connection, blob_id: i64) -> Result<Vec<BlockRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT block_id, extent, len FROM blocks WHERE blob_id = ?1 ORDER BY block_id",
    )?;
    let rows = stmt.query_map(params![blob_id], |r| {
        Ok(BlockRow {
            block_id: r.get(0)?,
            extent: r.get(1)?,
            len: r.get::<_, i64>(2)? as u64,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn count_uncommitted(conn: &Connection, blob_id: i64) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM blocks WHERE blob_id = ?1")?
        .query_row(params![blob_id], |r| r.get(0))?;
    Ok(n as u64)
}

/// Deletes every uncommitted block of the blob; returns their extents.
pub(crate) fn take_blocks(conn: &Connection, blob_id: i64) -> Result<Vec<String>> {
    let extents: Vec<String> = conn
        .prepare_cached("SELECT extent FROM blocks WHERE blob_id = ?1")?
        .query_map(params![blob_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    conn.prepare_cached("DELETE FROM blocks WHERE blob_id = ?1")?
        .execute(params![blob_id])?;
    Ok(extents)
}

/// The committed block list of a blob version, in order.
pub(crate) fn committed_blocks(conn: &Connection, blob_id: i64) -> Result<Vec<BlockRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT block_id, extent, len FROM blob_extents
         WHERE blob_id = ?1 AND block_id IS NOT NULL ORDER BY seq",
    )?;
    let rows = stmt.query_map(params![blob_id], |r| {
        Ok(BlockRow {
            block_id: r.get(0)?,
            extent: r.get(1)?,
            len: r.get::<_, i64>(2)? as u64,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Base blobs whose newest staged block is older than `cutoff`: their
/// uncommitted blocks have outlived the service's lifetime for them.
pub(crate) fn blobs_with_stale_blocks(
    conn: &Connection,
    cutoff: std::time::SystemTime,
    limit: usize,
) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT blob_id FROM blocks GROUP BY blob_id HAVING MAX(staged_at) < ?1 LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![to_nanos(cutoff), limit as i64], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
