//! SQL for List Blobs: one keyset-paged query, O(page) whatever the
//! container size.

use rusqlite::{Connection, Row, ToSql};

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

/// One row met by [`scan_blob_rows`]: its name is read at once, the rest
/// only when asked (a delimited listing skips most rows by name alone).
pub(crate) struct ListedRow<'r>(&'r Row<'r>);

impl ListedRow<'_> {
    pub(crate) fn name(&self) -> Result<&str> {
        // Column 1 of BLOB_COLUMNS.
        Ok(self.0.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?)
    }

    pub(crate) fn read(&self) -> Result<BlobRow> {
        read_blob_row(self.0)
    }
}

/// Whether [`scan_blob_rows`] goes on to the next row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    Next,
    Stop,
}

/// Calls `visit` with each row of the query in listing order until it says
/// stop; returns how many rows it saw.
pub(crate) fn scan_blob_rows(
    conn: &Connection,
    q: &BlobListQuery<'_>,
    mut visit: impl FnMut(ListedRow<'_>) -> Result<Scan>,
) -> Result<usize> {
    let (sql, params) = blob_rows_query(q);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(params.as_slice())?;
    let mut seen = 0;
    while let Some(row) = rows.next()? {
        seen += 1;
        if visit(ListedRow(row))? == Scan::Stop {
            break;
        }
    }
    Ok(seen)
}

pub(crate) fn list_blob_rows(conn: &Connection, q: &BlobListQuery<'_>) -> Result<Vec<BlobRow>> {
    let mut out = Vec::new();
    scan_blob_rows(conn, q, |row| {
        out.push(row.read()?);
        Ok(Scan::Next)
    })?;
    Ok(out)
}

/// The query of one listing step. It has exactly one lower bound on
/// `name` (the cursor, or the prefix when the cursor is before it) and the
/// prefix's end as its upper bound, so SQLite walks the
/// `(container_id, name, is_base, snapshot)` index from the cursor and stops
/// at the prefix's end: with two lower bounds it may pick the lower one and
/// walk the container from the start on every step.
///
/// Only values are bound; which filters apply is written into the SQL (one
/// cached statement per variant). A parameter the planner could fold, like
/// `(?6 OR is_base = 1)`, makes SQLite re-prepare the statement every time
/// it is bound, which a delimited listing does once per group.
fn blob_rows_query<'q>(q: &'q BlobListQuery<'_>) -> (String, Vec<(&'static str, &'q dyn ToSql)>) {
    let before_prefix = match q.cursor {
        BlobCursor::From(n) => n.as_str() < q.prefix,
        BlobCursor::After { name, .. } => name.as_str() < q.prefix,
    };
    let mut params: Vec<(&'static str, &'q dyn ToSql)> =
        vec![(":container", &q.container_id), (":limit", &q.limit)];
    let mut sql = format!("SELECT {BLOB_COLUMNS} FROM blobs WHERE container_id = :container");
    match q.cursor {
        _ if before_prefix => {
            sql.push_str(" AND name >= :name");
            params.push((":name", &q.prefix));
        }
        BlobCursor::From(n) => {
            sql.push_str(" AND name >= :name");
            params.push((":name", n));
        }
        BlobCursor::After {
            name,
            is_base,
            snapshot,
        } => {
            sql.push_str(" AND (name, is_base, snapshot) > (:name, :is_base, :snapshot)");
            params.extend([
                (":name", name as &dyn ToSql),
                (":is_base", is_base),
                (":snapshot", snapshot),
            ]);
        }
    }
    if let Some(end) = &q.prefix_end {
        sql.push_str(" AND name < :end");
        params.push((":end", end));
    }
    if !q.include_uncommitted {
        sql.push_str(" AND committed = 1");
    }
    // Base blobs only: one row per name, so `name` orders them. Spelling out
    // `is_base, snapshot` beside `is_base = 1` makes SQLite sort each name's
    // rows in a temporary b-tree (EXPLAIN QUERY PLAN: "USE TEMP B-TREE FOR
    // RIGHT PART OF ORDER BY") instead of just walking the index.
    if q.include_snapshots {
        sql.push_str(" ORDER BY name, is_base, snapshot LIMIT :limit");
    } else {
        sql.push_str(" AND is_base = 1 ORDER BY name LIMIT :limit");
    }
    (sql, params)
}
