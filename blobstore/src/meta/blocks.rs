//! SQL for staged (uncommitted) blocks and committed block lists.

use super::sql::{Sql, SqlRow, vals};

use crate::Result;
use crate::timestamps::to_nanos;

// The statements of Put Block and Put Block List, each a lookup by key:
// none reads a row of another blob or another block; and the collector's
// search for blobs whose blocks expired, which reads only those blobs (the
// test below checks their plans).
const STAGED_BLOCK: &str =
    "SELECT block_id, extent, len FROM blocks WHERE blob_id = ?1 AND block_id = ?2";
const COMMITTED_BLOCK: &str = "SELECT block_id, extent, len FROM blob_extents
     WHERE blob_id = ?1 AND block_id = ?2 LIMIT 1";
const ANY_STAGED_ID: &str = "SELECT block_id FROM blocks WHERE blob_id = ?1 LIMIT 1";
const COUNT_STAGED: &str = "SELECT n FROM staged_counts WHERE blob_id = ?1";
const STAGE: &str =
    "INSERT INTO blocks (blob_id, block_id, extent, len, staged_at) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT (blob_id, block_id) DO UPDATE SET
        extent = excluded.extent, len = excluded.len, staged_at = excluded.staged_at";
/// The larger of two values is `MAX(a, b)` on SQLite, `GREATEST(a, b)` on
/// PostgreSQL.
const COUNT_STAGING: &str = "INSERT INTO staged_counts (blob_id, n, newest) VALUES (?1, ?2, ?3)
     ON CONFLICT (blob_id) DO UPDATE SET n = n + excluded.n, newest = MAX(newest, excluded.newest)";
const COUNT_STAGING_POSTGRES: &str = "INSERT INTO staged_counts (blob_id, n, newest)
     VALUES (?1, ?2, ?3)
     ON CONFLICT (blob_id) DO UPDATE SET n = staged_counts.n + excluded.n,
        newest = GREATEST(staged_counts.newest, excluded.newest)";
const STALE_BLOBS: &str = "SELECT blob_id FROM staged_counts WHERE newest < ?1 LIMIT ?2";

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
/// the extent of the replaced block, if any. Keeps the blob's count of
/// staged blocks, so that counting them reads one row.
pub(crate) fn stage_block(
    conn: &dyn Sql,
    blob_id: i64,
    block: &BlockRow,
    now: std::time::SystemTime,
) -> Result<Option<String>> {
    let old = staged_block(conn, blob_id, &block.block_id)?.map(|b| b.extent);
    conn.execute(
        STAGE,
        &vals![
            &blob_id,
            &block.block_id,
            &block.extent,
            block.len as i64,
            to_nanos(now)
        ],
    )?;
    conn.execute(
        conn.dialect().pick(COUNT_STAGING, COUNT_STAGING_POSTGRES),
        &vals![&blob_id, i64::from(old.is_none()), to_nanos(now)],
    )?;
    Ok(old)
}

fn block_row(r: &dyn SqlRow) -> Result<BlockRow> {
    Ok(BlockRow {
        block_id: r.get(0)?,
        extent: r.get(1)?,
        len: r.get::<i64>(2)? as u64,
    })
}

/// The uncommitted block `block_id` of a blob, if staged.
pub(crate) fn staged_block(
    conn: &dyn Sql,
    blob_id: i64,
    block_id: &str,
) -> Result<Option<BlockRow>> {
    conn.query_row(STAGED_BLOCK, &vals![&blob_id, &block_id], block_row)
}

/// The block `block_id` of a blob version's committed list, if there.
pub(crate) fn committed_block(
    conn: &dyn Sql,
    blob_id: i64,
    block_id: &str,
) -> Result<Option<BlockRow>> {
    conn.query_row(COMMITTED_BLOCK, &vals![&blob_id, &block_id], block_row)
}

/// The id of some uncommitted block of the blob (all of them decode to the
/// same length, so any one tells that length).
pub(crate) fn any_staged_block_id(conn: &dyn Sql, blob_id: i64) -> Result<Option<String>> {
    conn.query_row(ANY_STAGED_ID, &vals![&blob_id], |r| r.get(0))
}

/// The uncommitted blocks of a blob, sorted by id.
pub(crate) fn uncommitted_blocks(conn: &dyn Sql, blob_id: i64) -> Result<Vec<BlockRow>> {
    let rows = conn.query_map(
        "SELECT block_id, extent, len FROM blocks WHERE blob_id = ?1 ORDER BY block_id",
        &vals![&blob_id],
        block_row,
    )?;
    Ok(rows)
}

/// How many uncommitted blocks the blob has (one row read).
pub(crate) fn count_uncommitted(conn: &dyn Sql, blob_id: i64) -> Result<u64> {
    let n: Option<i64> = conn.query_row(COUNT_STAGED, &vals![&blob_id], |r| r.get(0))?;
    Ok(n.unwrap_or(0) as u64)
}

/// Deletes every uncommitted block of the blob; returns their extents.
pub(crate) fn take_blocks(conn: &dyn Sql, blob_id: i64) -> Result<Vec<String>> {
    let extents: Vec<String> = conn.query_map(
        "SELECT extent FROM blocks WHERE blob_id = ?1",
        &vals![&blob_id],
        |r| r.get(0),
    )?;
    conn.execute_deferred("DELETE FROM blocks WHERE blob_id = ?1", &vals![&blob_id])?;
    conn.execute_deferred(
        "DELETE FROM staged_counts WHERE blob_id = ?1",
        &vals![&blob_id],
    )?;
    Ok(extents)
}

/// The committed block list of a blob version, in order.
pub(crate) fn committed_blocks(conn: &dyn Sql, blob_id: i64) -> Result<Vec<BlockRow>> {
    let rows = conn.query_map(
        "SELECT block_id, extent, len FROM blob_extents
         WHERE blob_id = ?1 AND block_id IS NOT NULL ORDER BY seq",
        &vals![&blob_id],
        block_row,
    )?;
    Ok(rows)
}

/// Base blobs whose newest staged block is older than `cutoff`: their
/// uncommitted blocks have outlived the service's lifetime for them. Found
/// through the index of each blob's newest block, without reading blocks.
pub(crate) fn blobs_with_stale_blocks(
    conn: &dyn Sql,
    cutoff: std::time::SystemTime,
    limit: usize,
) -> Result<Vec<i64>> {
    let rows = conn.query_map(STALE_BLOBS, &vals![to_nanos(cutoff), limit as i64], |r| {
        r.get(0)
    })?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database() -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        super::super::schema::migrate(&conn).unwrap();
        super::super::schema::tests::insert_two_blobs(&conn);
        conn
    }

    fn row(id: &str) -> BlockRow {
        BlockRow {
            block_id: id.into(),
            extent: format!("x-{id}"),
            len: 1,
        }
    }

    /// Every statement Put Block and Put Block List run per block is a
    /// search by the blob's key (and the block's, where there is one); the
    /// two `LIMIT 1` reads stop at the first row of that blob. A scan, or a
    /// search by `blob_id` alone that reads every row (a count, a whole
    /// list), would make their cost grow with the blocks staged.
    #[test]
    fn the_block_statements_search_by_key() {
        let conn = database();
        let cases: [(&str, &[&str]); 7] = [
            (
                STAGED_BLOCK,
                &["SEARCH blocks USING INDEX sqlite_autoindex_blocks_1 (blob_id=? AND block_id=?)"],
            ),
            (
                COMMITTED_BLOCK,
                &[
                    "SEARCH blob_extents USING INDEX blob_extents_by_block (blob_id=? AND block_id=?)",
                ],
            ),
            (
                ANY_STAGED_ID,
                &["SEARCH blocks USING COVERING INDEX sqlite_autoindex_blocks_1 (blob_id=?)"],
            ),
            (
                COUNT_STAGED,
                &["SEARCH staged_counts USING INTEGER PRIMARY KEY (rowid=?)"],
            ),
            (STAGE, &[]),
            (COUNT_STAGING, &[]),
            (
                STALE_BLOBS,
                &["SEARCH staged_counts USING COVERING INDEX staged_counts_by_newest (newest<?)"],
            ),
        ];
        for (sql, expected) in cases {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let values = std::iter::repeat_n(1, stmt.parameter_count());
            let steps: Vec<String> = stmt
                .query_map(rusqlite::params_from_iter(values), |r| {
                    r.get::<_, String>(3)
                })
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(steps, expected, "{sql}");
        }
    }

    /// The kept count follows staging, replacing and discarding, per blob.
    #[test]
    fn the_staged_count_follows_the_blocks() {
        let conn = database();
        let now = std::time::UNIX_EPOCH;
        assert_eq!(count_uncommitted(&conn, 1).unwrap(), 0);
        assert_eq!(stage_block(&conn, 1, &row("QQ=="), now).unwrap(), None);
        assert_eq!(stage_block(&conn, 1, &row("Qg=="), now).unwrap(), None);
        assert_eq!(stage_block(&conn, 2, &row("QQ=="), now).unwrap(), None);
        // Replacing a staged block keeps the count.
        assert_eq!(
            stage_block(&conn, 1, &row("QQ=="), now).unwrap(),
            Some("x-QQ==".into())
        );
        assert_eq!(count_uncommitted(&conn, 1).unwrap(), 2);
        assert_eq!(count_uncommitted(&conn, 2).unwrap(), 1);
        assert_eq!(staged_block(&conn, 1, "Qg==").unwrap(), Some(row("Qg==")));
        assert_eq!(staged_block(&conn, 1, "Qw==").unwrap(), None);
        assert!(any_staged_block_id(&conn, 1).unwrap().is_some());
        let mut taken = take_blocks(&conn, 1).unwrap();
        taken.sort();
        assert_eq!(taken, vec!["x-QQ==".to_owned(), "x-Qg==".to_owned()]);
        assert_eq!(count_uncommitted(&conn, 1).unwrap(), 0);
        assert_eq!(any_staged_block_id(&conn, 1).unwrap(), None);
        assert_eq!(count_uncommitted(&conn, 2).unwrap(), 1);
        // Deleting the blob deletes its count.
        conn.execute("DELETE FROM blocks WHERE blob_id = 2", [])
            .unwrap();
        conn.execute("DELETE FROM blobs WHERE id = 2", []).unwrap();
        let left: i64 = conn
            .query_row("SELECT COUNT(*) FROM staged_counts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0);
    }

    /// A committed block is found by its id; extents without one are not
    /// blocks.
    #[test]
    fn committed_blocks_are_found_by_id() {
        let conn = database();
        conn.execute_batch(
            "INSERT INTO blob_extents (blob_id, seq, extent, len, block_id)
             VALUES (1, 0, 'e0', 3, 'QQ=='), (1, 1, 'e1', 4, 'Qg=='), (2, 0, 'whole', 9, NULL);",
        )
        .unwrap();
        assert_eq!(
            committed_block(&conn, 1, "Qg==").unwrap(),
            Some(BlockRow {
                block_id: "Qg==".into(),
                extent: "e1".into(),
                len: 4
            })
        );
        assert_eq!(committed_block(&conn, 2, "Qg==").unwrap(), None);
        // Committed blocks do not set the length of the next staged id.
        assert_eq!(any_staged_block_id(&conn, 1).unwrap(), None);
    }
}
