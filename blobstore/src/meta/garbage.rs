//! SQL for garbage extents: extents no blob version references any more.

use super::sql::{Sql, vals};

use crate::Result;
use crate::timestamps::to_nanos;

/// Records an extent (?1) as garbage since ?2 unless something still
/// refers to it, on SQLite.
const COLLECT: &str = "INSERT INTO garbage (extent, since) SELECT ?1, ?2
             WHERE NOT EXISTS (SELECT 1 FROM blob_extents WHERE extent = ?1)
             AND NOT EXISTS (SELECT 1 FROM blocks WHERE extent = ?1)
             AND NOT EXISTS (SELECT 1 FROM page_ranges WHERE extent = ?1)
             ON CONFLICT DO NOTHING";

/// The same on PostgreSQL, where two transactions holding the locks of two
/// different blobs may drop their references to one extent (shared since a
/// copy) at the same time: each would still see the other's reference,
/// uncommitted, and neither would record the extent as garbage. `FOR
/// UPDATE` waits for a transaction that deleted a referencing row and then
/// skips the row if that transaction committed. Two such transactions
/// waiting for each other are a deadlock, which the database detects and
/// ends by rolling one back (a write that can run again does).
const COLLECT_LOCKING: &str = "INSERT INTO garbage (extent, since) SELECT ?1, ?2
             WHERE NOT EXISTS (SELECT 1 FROM blob_extents WHERE extent = ?1 FOR UPDATE)
             AND NOT EXISTS (SELECT 1 FROM blocks WHERE extent = ?1 FOR UPDATE)
             AND NOT EXISTS (SELECT 1 FROM page_ranges WHERE extent = ?1 FOR UPDATE)
             ON CONFLICT DO NOTHING";

/// Of `candidates`, records as garbage (since `now`) those that no blob
/// version references any more. Called in the transaction that dropped the
/// references, so an extent can never be garbage and referenced at once:
/// in cluster mode a reference to another blob's extent is only added
/// while that blob's lock is held (a copy locks its source).
pub(crate) fn collect_unreferenced(
    conn: &dyn Sql,
    candidates: &[String],
    now: std::time::SystemTime,
) -> Result<()> {
    // One statement per candidate that decides and records: nothing
    // waits for it (on PostgreSQL it travels with the next statement or
    // the COMMIT, docs/cluster.md, "Round trips").
    let collect = conn.dialect().pick(COLLECT, COLLECT_LOCKING);
    for extent in candidates.iter().filter(|e| !e.is_empty()) {
        conn.execute_deferred(collect, &vals![&extent, to_nanos(now)])?;
    }
    Ok(())
}

/// Where a walk over the garbage by age stands: the last `(since, extent)`
/// seen, so the next batch starts after it (and after extents it skipped
/// because a reader pins them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GarbageCursor {
    since: i64,
    extent: String,
}

impl GarbageCursor {
    pub(crate) fn start() -> GarbageCursor {
        GarbageCursor {
            since: i64::MIN,
            extent: String::new(),
        }
    }
}

/// Up to `limit` garbage extents that became garbage at or before `cutoff`,
/// oldest first, after `cursor`; moves `cursor` past them. An index range
/// scan: the cost is the batch, not the table.
pub(crate) fn garbage_before(
    conn: &dyn Sql,
    cutoff: std::time::SystemTime,
    cursor: &mut GarbageCursor,
    limit: usize,
) -> Result<Vec<String>> {
    let rows = conn.query_map(
        "SELECT since, extent FROM garbage
         WHERE since <= ?1 AND (since, extent) > (?2, ?3)
         ORDER BY since, extent LIMIT ?4",
        &vals![
            to_nanos(cutoff),
            &cursor.since,
            &cursor.extent,
            limit as i64
        ],
        |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
    )?;
    let mut out = Vec::new();
    for (since, extent) in rows {
        cursor.since = since;
        cursor.extent.clone_from(&extent);
        out.push(extent);
    }
    Ok(out)
}

/// When the oldest garbage extent became garbage, if there is any.
pub(crate) fn oldest_garbage(conn: &dyn Sql) -> Result<Option<std::time::SystemTime>> {
    let since: Option<i64> = conn
        .query_value::<Option<i64>>("SELECT min(since) FROM garbage", &[])?
        .flatten();
    Ok(since.map(crate::timestamps::from_nanos))
}

/// Gives the file's free pages back to the file system (the database uses
/// `auto_vacuum = INCREMENTAL`): moves them to the end and truncates at the
/// commit. The work is proportional to the pages freed since the last call.
pub(crate) fn reclaim_free_pages(conn: &dyn Sql) -> Result<()> {
    // Each step of the statement frees one page: step it to the end.
    if conn.dialect() == super::sql::Dialect::Postgres {
        // PostgreSQL's autovacuum reclaims space itself.
        return Ok(());
    }
    conn.each("PRAGMA incremental_vacuum", &[], &mut |_| Ok(true))
}

pub(crate) fn forget_garbage(conn: &dyn Sql, extent: &str) -> Result<()> {
    conn.execute("DELETE FROM garbage WHERE extent = ?1", &vals![&extent])?;
    Ok(())
}

/// True when some blob version references `extent` or it is recorded as
/// garbage (so the start-up sweep leaves it to the collector).
pub(crate) fn extent_known(conn: &dyn Sql, extent: &str) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM blob_extents WHERE extent = ?1)
                 OR EXISTS (SELECT 1 FROM blocks WHERE extent = ?1)
                 OR EXISTS (SELECT 1 FROM page_ranges WHERE extent = ?1)
                 OR EXISTS (SELECT 1 FROM garbage WHERE extent = ?1)",
        &vals![&extent],
        |r| r.get(0),
    )?
    .ok_or_else(super::sql::no_rows)
}
