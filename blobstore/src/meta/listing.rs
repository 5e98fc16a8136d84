//! SQL for List Blobs: one keyset-paged query, O(page) whatever the
//! container size.

use rusqlite::{Connection, params};

use super::blobs::{BLOB_COLUMNS, BlobRow, read_blob_row};
use crate::Result;

/// Where a page of rows starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BlobCursor {
    /// At the first row whose name is at least this (inclusive).
    From(String),
    /// Just after this row key (exclusive).
    After {
        name: String,
        is_base: bool,
        snapshot: String,
    },
}

/// One query of the listing loop.
#[derive(Clone, Debug)]
pub(crate) struct BlobListQuery<'a> {
    pub container_id: i64,
    pub prefix: &'a str,
    /// The first name past every name that starts with `prefix`, if any.
    pub prefix_end: Option<&'a str>,
    pub cursor: &'a BlobCursor,
    pub include_snapshots: bool,
    pub include_uncommitted: bool,
    pub limit: usize,
}

pub(crate) fn list_blob_rows(conn: &Connection, q: &BlobListQuery<'_>) -> Result<Vec<BlobRow>> {
    let (position, name, is_base, snapshot) = match q.cursor {
        BlobCursor::From(n) => ("name >= ?2", n.as_str(), false, ""),
        BlobCursor::After {
            name,
            is_base,
            snapshot,
        } => (
            "(name, is_base, snapshot) > (?2, ?3, ?4)",
            name.as_str(),
            *is_base,
            snapshot.as_str(),
        ),
    };
    let sql = format!(
        "SELECT {BLOB_COLUMNS} FROM blobs
         WHERE container_id = ?1 AND {position}
           AND name >= ?5 AND (?6 IS NULL OR name < ?6)
           AND (?7 OR is_base = 1)
           AND (?8 OR committed = 1)
         ORDER BY name, is_base, snapshot
         LIMIT ?9"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params![
        q.container_id,
        name,
        is_base,
        snapshot,
        q.prefix,
        q.prefix_end,
        q.include_snapshots,
        q.include_uncommitted,
        q.limit as i64,
    ])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(read_blob_row(row)?);
    }
    Ok(out)
}
