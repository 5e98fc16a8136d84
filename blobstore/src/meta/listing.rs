//! SQL for List Blobs: one keyset-paged query, O(page) whatever the
//! container size.

use super::sql::{Sql, SqlRow, Value, vals};
use std::sync::OnceLock;

use rusqlite::{CachedStatement, Connection, Statement};

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
        /// 1 base blob, 0 snapshot, -1 previous version or soft-deleted.
        is_base: i64,
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
    /// Previous versions (`include=versions`).
    pub include_versions: bool,
    /// Soft-deleted rows (`include=deleted`).
    pub include_deleted: bool,
    /// The newest previous version of each name that has no current
    /// version (`include=deletedwithversions`).
    pub include_deleted_with_versions: bool,
    pub limit: usize,
}

/// One row met by [`scan_blob_rows`]: its name is read at once, the rest
/// only when asked (a delimited listing skips most rows by name alone).
pub(crate) struct ListedRow<'r>(&'r dyn SqlRow);

impl<'r> ListedRow<'r> {
    pub(crate) fn name(&self) -> Result<&'r str> {
        // Column 1 of BLOB_COLUMNS.
        match self.0.value(1)? {
            Value::Text(std::borrow::Cow::Borrowed(name)) => Ok(name),
            other => Err(crate::Error::Corrupt(format!("blob name {other:?}"))),
        }
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

/// The statements of one listing, each prepared (or taken from the
/// connection's cache) once: a delimited listing runs one query per group,
/// and finding the statement by its text in the cache every time (hashing
/// and comparing a long SELECT) cost more than a quarter of a group.
///
/// On PostgreSQL the statements are the connection's prepared statements,
/// found by their text.
pub(crate) struct ListingStatements<'c> {
    conn: &'c dyn Sql,
    sqlite: Option<&'c Connection>,
    prepared: [Option<CachedStatement<'c>>; VARIANTS],
}

impl<'c> ListingStatements<'c> {
    pub(crate) fn new(conn: &'c dyn Sql) -> ListingStatements<'c> {
        ListingStatements {
            conn,
            sqlite: match conn.dialect() {
                super::sql::Dialect::Sqlite => conn.sqlite().ok(),
                super::sql::Dialect::Postgres => None,
            },
            prepared: std::array::from_fn(|_| None),
        }
    }

    /// The SQLite statement of variant `v`; `None` on PostgreSQL.
    fn get(&mut self, v: usize) -> Result<Option<&mut CachedStatement<'c>>> {
        let Some(conn) = self.sqlite else {
            return Ok(None);
        };
        let slot = &mut self.prepared[v];
        if slot.is_none() {
            *slot = Some(conn.prepare_cached(variant_sql(v))?);
        }
        Ok(slot.as_mut())
    }
}

/// The parameters of `q` by position, for PostgreSQL (see [`variant_sql`]);
/// those its variant does not use are bound too, typed.
fn blob_row_values<'q>(q: &'q BlobListQuery<'_>) -> [Value<'q>; 6] {
    let (name, is_base, snapshot) = match q.cursor {
        BlobCursor::After {
            name,
            is_base,
            snapshot,
        } if after_row(q) => (name.as_str(), *is_base, snapshot.as_str()),
        BlobCursor::From(name) if name.as_str() >= q.prefix => (name.as_str(), 0, ""),
        _ => (q.prefix, 0, ""),
    };
    vals![
        q.container_id,
        q.limit as i64,
        name,
        is_base,
        snapshot,
        q.prefix_end.unwrap_or("")
    ]
}

/// Calls `visit` with each row of the query in listing order until it says
/// stop; returns how many rows it saw.
pub(crate) fn scan_blob_rows(
    statements: &mut ListingStatements<'_>,
    q: &BlobListQuery<'_>,
    mut visit: impl FnMut(ListedRow<'_>) -> Result<Scan>,
) -> Result<usize> {
    let v = variant(q);
    let conn = statements.conn;
    let Some(stmt) = statements.get(v)? else {
        let mut seen = 0;
        let mut failed = None;
        conn.each(variant_sql(v), &blob_row_values(q), &mut |row| {
            seen += 1;
            match visit(ListedRow(row)) {
                Ok(scan) => Ok(scan == Scan::Next),
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            }
        })?;
        return failed.map_or(Ok(seen), Err);
    };
    bind_blob_rows(stmt, q)?;
    let mut rows = stmt.raw_query();
    let mut seen = 0;
    while let Some(row) = rows.next()? {
        seen += 1;
        if visit(ListedRow(row))? == Scan::Stop {
            break;
        }
    }
    Ok(seen)
}

/// The name of the first row of the query (its limit aside), reading
/// nothing else: a delimited listing asks this after each group, and most
/// answers are the next group, for which the name is all it needs (a step of
/// the full query decodes every column of the row).
pub(crate) fn first_name(
    statements: &mut ListingStatements<'_>,
    q: &BlobListQuery<'_>,
) -> Result<Option<String>> {
    let v = variant(q) | NAMES_ONLY;
    let conn = statements.conn;
    let Some(stmt) = statements.get(v)? else {
        let mut values = blob_row_values(q);
        values[1] = Value::Int(1);
        return conn.query_value(variant_sql(v), &values);
    };
    bind_blob_rows(stmt, q)?;
    stmt.raw_bind_parameter(2, 1)?;
    let mut rows = stmt.raw_query();
    match rows.next()? {
        Some(row) => Ok(Some(row.get(0)?)),
        None => Ok(None),
    }
}

/// Whether the container holds a blob with only uncommitted blocks.
pub(crate) fn has_uncommitted(conn: &dyn Sql, container_id: i64) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM blobs WHERE container_id = ?1 AND committed = 0)",
            &vals![container_id],
            |row| row.get(0),
        )?
        .unwrap_or(false))
}

pub(crate) fn list_blob_rows(
    statements: &mut ListingStatements<'_>,
    q: &BlobListQuery<'_>,
) -> Result<Vec<BlobRow>> {
    let mut out = Vec::new();
    scan_blob_rows(statements, q, |row| {
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
/// it is bound, which a delimited listing does once per group. The text of
/// each variant is built once, and a listing prepares each variant once
/// ([`ListingStatements`]): a delimited listing runs one query per group.
fn variant(q: &BlobListQuery<'_>) -> usize {
    usize::from(after_row(q))
        | usize::from(q.prefix_end.is_some()) << 1
        | usize::from(q.include_uncommitted) << 2
        | usize::from(q.include_snapshots) << 3
        | usize::from(q.include_versions) << 4
        | usize::from(q.include_deleted) << 5
        | usize::from(q.include_deleted_with_versions) << 6
}

/// The variant bit of a query that selects only `name` ([`first_name`]).
const NAMES_ONLY: usize = 128;

/// How many variants [`variant`] and [`NAMES_ONLY`] tell apart.
const VARIANTS: usize = 256;

/// The rank of a row among the rows of its name, in the service's listing
/// order: snapshots (live or soft-deleted) first, then previous versions,
/// then soft-deleted base blobs, then the blob.
/// <https://learn.microsoft.com/en-us/rest/api/storageservices/list-blobs>
/// lists snapshots and versions oldest first; `docs/wire/versions.md`.
fn rank(is_base: &str, snapshot: &str) -> String {
    format!(
        "(CASE WHEN {is_base} = 1 THEN 3 WHEN {is_base} = 0 OR substr({snapshot}, 1, 1) = 's' \
         THEN 0 WHEN substr({snapshot}, 1, 1) = 'v' THEN 1 ELSE 2 END)"
    )
}

/// The id a row is ordered by within its rank: the snapshot or version id
/// (a hidden row's key without its kind letter).
fn order_id(is_base: &str, snapshot: &str) -> String {
    format!("(CASE WHEN {is_base} = -1 THEN substr({snapshot}, 2) ELSE {snapshot} END)")
}

/// Whether the query starts just after a row (else at a name, inclusive).
fn after_row(q: &BlobListQuery<'_>) -> bool {
    match q.cursor {
        BlobCursor::From(_) => false,
        // A cursor before the prefix starts at the prefix instead.
        BlobCursor::After { name, .. } => name.as_str() >= q.prefix,
    }
}

/// The SQL of variant `v` (see [`variant`] and [`NAMES_ONLY`]), built once.
/// Parameters by position: 1 container, 2 limit, 3 name, 4 is_base,
/// 5 snapshot, 6 end.
fn variant_sql(v: usize) -> &'static str {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    &TEXTS.get_or_init(|| (0..VARIANTS).map(build_sql).collect())[v]
}

fn build_sql(v: usize) -> String {
    let columns = if v & NAMES_ONLY == 0 {
        BLOB_COLUMNS
    } else {
        "name"
    };
    let base_only = v & (8 | 16 | 32 | 64) == 0;
    let mut sql = format!("SELECT {columns} FROM blobs WHERE container_id = ?1");
    if v & 1 == 0 {
        sql.push_str(" AND name >= ?3");
    } else if base_only {
        sql.push_str(" AND (name, is_base, snapshot) > (?3, ?4, ?5)");
    } else {
        // Past the cursor's row in listing order (the order below); the
        // plain bound on `name` keeps the index walk starting there.
        sql.push_str(&format!(
            " AND name >= ?3 AND (name > ?3 OR ({}, {}, is_base) > ({}, {}, ?4))",
            rank("is_base", "snapshot"),
            order_id("is_base", "snapshot"),
            rank("?4", "?5"),
            order_id("?4", "?5"),
        ));
    }
    if v & 2 != 0 {
        sql.push_str(" AND name < ?6");
    }
    if v & 4 == 0 {
        sql.push_str(" AND committed = 1");
    }
    // Base blobs only: one row per name, so `name` orders them. Spelling out
    // `is_base, snapshot` beside `is_base = 1` makes SQLite sort each name's
    // rows in a temporary b-tree (EXPLAIN QUERY PLAN: "USE TEMP B-TREE FOR
    // RIGHT PART OF ORDER BY") instead of just walking the index.
    // Which rows besides base blobs: live snapshots (`is_base = 0`),
    // previous versions (hidden rows not deleted) and soft-deleted rows
    // (a soft-deleted version only when versions are listed too).
    let mut kinds = Vec::new();
    if v & 8 != 0 {
        kinds.push("is_base = 0");
    }
    if v & 16 != 0 {
        kinds.push("(is_base = -1 AND deleted_at IS NULL)");
    }
    match (v & 32 != 0, v & 16 != 0) {
        (true, true) => kinds.push("(is_base = -1 AND deleted_at IS NOT NULL)"),
        (true, false) => kinds
            .push("(is_base = -1 AND deleted_at IS NOT NULL AND substr(snapshot, 1, 1) <> 'v')"),
        _ => {}
    }
    // The newest live previous version of a name without a blob, once.
    if v & 64 != 0 && v & 16 == 0 {
        kinds.push(
            "(is_base = -1 AND deleted_at IS NULL AND substr(snapshot, 1, 1) = 'v' \
             AND NOT EXISTS (SELECT 1 FROM blobs AS o WHERE o.container_id = blobs.container_id \
             AND o.name = blobs.name AND (o.is_base = 1 OR (o.is_base = -1 \
             AND o.deleted_at IS NULL AND substr(o.snapshot, 1, 1) = 'v' \
             AND o.snapshot > blobs.snapshot))))",
        );
    }
    // Every bit of `base_only` adds a kind of row.
    debug_assert_eq!(base_only, kinds.is_empty());
    if kinds.is_empty() {
        sql.push_str(" AND is_base = 1 ORDER BY name LIMIT ?2");
    } else {
        sql.push_str(&format!(
            " AND (is_base = 1 OR {}) ORDER BY name, {}, {}, is_base LIMIT ?2",
            kinds.join(" OR "),
            rank("is_base", "snapshot"),
            order_id("is_base", "snapshot"),
        ));
    }
    sql
}

/// Binds the values of `q` to the statement of its variant.
fn bind_blob_rows(stmt: &mut Statement<'_>, q: &BlobListQuery<'_>) -> Result<()> {
    stmt.raw_bind_parameter(1, q.container_id)?;
    stmt.raw_bind_parameter(2, q.limit as i64)?;
    match q.cursor {
        BlobCursor::After {
            name,
            is_base,
            snapshot,
        } if after_row(q) => {
            stmt.raw_bind_parameter(3, name)?;
            stmt.raw_bind_parameter(4, is_base)?;
            stmt.raw_bind_parameter(5, snapshot)?;
        }
        BlobCursor::From(name) if name.as_str() >= q.prefix => {
            stmt.raw_bind_parameter(3, name)?;
        }
        _ => stmt.raw_bind_parameter(3, q.prefix)?,
    }
    if let Some(end) = q.prefix_end {
        stmt.raw_bind_parameter(6, end)?;
    }
    Ok(())
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    fn database() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&conn).unwrap();
        conn
    }

    fn plan(conn: &Connection, v: usize) -> Vec<String> {
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", variant_sql(v)))
            .unwrap();
        let count = stmt.parameter_count();
        let values = (1..=count).map(|i| match i {
            3 | 5 | 6 => rusqlite::types::Value::Text("b".into()),
            _ => rusqlite::types::Value::Integer(1),
        });
        stmt.query_map(rusqlite::params_from_iter(values), |r| {
            r.get::<_, String>(3)
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    /// Every variant walks the listing index from the cursor's name (a
    /// search bounded on `name`, never a scan of the container); the ones
    /// that list more than base blobs order each name's few rows in a
    /// temporary b-tree (the service's order is not the index's).
    #[test]
    fn every_variant_searches_from_the_cursor_name() {
        let conn = database();
        for v in 0..VARIANTS {
            let steps = plan(&conn, v);
            assert!(
                steps[0].starts_with("SEARCH blobs USING")
                    && (steps[0].contains("name>")
                        || steps[0].contains("(name,is_base,snapshot)>")),
                "variant {v}: {steps:?}"
            );
            assert!(
                steps
                    .iter()
                    .all(|s| !s.starts_with("USE TEMP B-TREE") || s.contains("LAST 3 TERMS")),
                "variant {v} sorts the whole result: {steps:?}"
            );
        }
    }
}
