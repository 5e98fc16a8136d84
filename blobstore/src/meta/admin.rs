//! SQL of the admin commands (check, backup): which extents the database
//! refers to, and the inline extents nothing refers to.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::sql::{Sql, SqlRow, vals};

use crate::Result;

/// One reference to an extent: its id, the length the row expects, and a
/// readable name of the referrer (`account/container/blob`, with
/// `?snapshot=…` or ` (uncommitted block …)`).
#[derive(Clone, Debug)]
pub(crate) struct ExtentUse {
    pub extent: String,
    pub len: u64,
    pub referrer: String,
    /// False for a page blob's extent: its page map reads parts of it, so
    /// `len` is the least the extent must hold (an overwritten tail may be
    /// read by nothing), not its length.
    pub exact: bool,
}

/// The extents of `uses` that are files or objects (inline extents live in
/// the database), each once, sorted, with a length that refers to it.
pub(crate) fn stored_extents(uses: Vec<ExtentUse>) -> Vec<(String, u64)> {
    let mut stored: Vec<(String, u64)> = uses
        .into_iter()
        .filter(|u| !crate::extents::is_inline(&u.extent))
        .map(|u| (u.extent, u.len))
        .collect();
    stored.sort();
    stored.dedup_by(|a, b| a.0 == b.0);
    stored
}

/// Per extent of `uses`: the length a blob row expects exactly, or else the
/// most any page map reads of it (a floor), whether it is exact, and one
/// referrer to name.
pub(crate) fn wanted_extents(uses: &[ExtentUse]) -> HashMap<&str, (u64, bool, &str)> {
    let mut wanted: HashMap<&str, (u64, bool, &str)> = HashMap::with_capacity(uses.len());
    for u in uses {
        let entry = wanted
            .entry(&u.extent)
            .or_insert((u.len, u.exact, &u.referrer));
        if !entry.1 && (u.exact || u.len > entry.0) {
            *entry = (u.len, u.exact, &u.referrer);
        }
    }
    wanted
}

/// Every extent a blob version, an uncommitted block or a page map refers
/// to (empty committed blocks have no extent and are left out).
pub(crate) fn extent_uses(conn: &dyn Sql) -> Result<Vec<ExtentUse>> {
    conn.query_map(
        "SELECT e.extent, e.len, c.account, c.name, b.name, b.snapshot, NULL, 1
           FROM blob_extents e JOIN blobs b ON b.id = e.blob_id
           JOIN containers c ON c.id = b.container_id
          WHERE e.extent <> ''
         UNION ALL
         SELECT k.extent, k.len, c.account, c.name, b.name, b.snapshot, k.block_id, 1
           FROM blocks k JOIN blobs b ON b.id = k.blob_id
           JOIN containers c ON c.id = b.container_id
          WHERE k.extent <> ''
         UNION ALL
         SELECT p.extent, MAX(p.extent_at + p.end_at - p.start_at),
                c.account, c.name, b.name, b.snapshot, NULL, 0
           FROM page_ranges p JOIN blobs b ON b.id = p.blob_id
           JOIN containers c ON c.id = b.container_id
          WHERE p.extent <> ''
          GROUP BY p.extent, b.id, c.account, c.name, b.name, b.snapshot",
        &[],
        |r| {
            let mut referrer = referrer(r, 2)?;
            if let Some(block) = r.get::<Option<String>>(6)? {
                referrer.push_str(&format!(" (uncommitted block {block})"));
            }
            Ok(ExtentUse {
                extent: r.get(0)?,
                len: r.get::<i64>(1)? as u64,
                referrer,
                exact: r.get(7)?,
            })
        },
    )
}

/// `account/container/blob` (with `?snapshot=…`) from the four columns
/// from `first`.
fn referrer(r: &dyn SqlRow, first: usize) -> Result<String> {
    let snapshot: String = r.get(first + 3)?;
    let mut referrer = format!(
        "{}/{}/{}",
        r.get::<String>(first)?,
        r.get::<String>(first + 1)?,
        r.get::<String>(first + 2)?
    );
    if !snapshot.is_empty() {
        referrer.push_str(&format!("?snapshot={snapshot}"));
    }
    Ok(referrer)
}

/// Every extent waiting in the garbage table for the collector.
pub(crate) fn garbage_extents(conn: &dyn Sql) -> Result<Vec<String>> {
    conn.query_map("SELECT extent FROM garbage", &[], |r| r.get(0))
}

/// The stored length of inline extent `extent`, if it exists.
pub(crate) fn inline_len(conn: &dyn Sql, extent: &str) -> Result<Option<u64>> {
    Ok(conn
        .query_row(
            "SELECT length(data) FROM inline_extents WHERE extent = ?1",
            &vals![extent],
            |r| r.get::<i64>(0),
        )?
        .map(|n| n as u64))
}

/// The condition that inline extent `i.extent` is referred to by nothing.
const INLINE_UNUSED: &str = "NOT EXISTS (SELECT 1 FROM blob_extents e WHERE e.extent = i.extent)
            AND NOT EXISTS (SELECT 1 FROM blocks k WHERE k.extent = i.extent)
            AND NOT EXISTS (SELECT 1 FROM page_ranges p WHERE p.extent = i.extent)
            AND NOT EXISTS (SELECT 1 FROM garbage g WHERE g.extent = i.extent)";

/// Inline extents that no blob version, uncommitted block, page map or
/// garbage row refers to.
pub(crate) fn orphan_inline_extents(conn: &dyn Sql) -> Result<Vec<String>> {
    conn.query_map(
        &format!("SELECT i.extent FROM inline_extents i WHERE {INLINE_UNUSED}"),
        &[],
        |r| r.get(0),
    )
}

/// A committed block blob written whole (by Put Blob or a copy of one), so
/// that its stored Content-MD5 is the MD5 of its bytes: its id, name, MD5
/// and extents in order.
#[derive(Clone, Debug)]
pub(crate) struct HashedBlob {
    pub referrer: String,
    pub md5: Vec<u8>,
    pub extents: Vec<(String, u64)>,
}

/// The blob versions whose Content-MD5 Stowage computed or verified itself:
/// block blobs not built from a block list. (Put Block List and Set Blob
/// Properties store whatever MD5 the client states, which need not be the
/// MD5 of the bytes.)
pub(crate) fn hashed_blobs(conn: &dyn Sql) -> Result<Vec<HashedBlob>> {
    let blobs = conn.query_map(
        "SELECT b.id, c.account, c.name, b.name, b.snapshot, b.content_md5
           FROM blobs b JOIN containers c ON c.id = b.container_id
          WHERE b.committed = 1 AND b.blob_type = 'BlockBlob' AND b.content_md5 IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM blob_extents e
                             WHERE e.blob_id = b.id AND e.block_id IS NOT NULL)
          ORDER BY b.id",
        &[],
        |r| Ok((r.get::<i64>(0)?, referrer(r, 1)?, r.get::<Vec<u8>>(5)?)),
    )?;
    let mut out = Vec::with_capacity(blobs.len());
    for (id, referrer, md5) in blobs {
        let extents = conn.query_map(
            "SELECT extent, len FROM blob_extents
              WHERE blob_id = ?1 AND extent <> '' ORDER BY seq",
            &vals![id],
            |r| Ok((r.get(0)?, r.get::<i64>(1)? as u64)),
        )?;
        out.push(HashedBlob {
            referrer,
            md5,
            extents,
        });
    }
    Ok(out)
}

/// Deletes inline extents found orphaned by [`orphan_inline_extents`], each
/// only if still nothing refers to it (a write may have come since).
pub(crate) fn delete_inline_extents(conn: &dyn Sql, extents: &[String]) -> Result<u64> {
    let mut n = 0;
    for e in extents {
        n += conn.execute(
            &format!("DELETE FROM inline_extents AS i WHERE i.extent = ?1 AND {INLINE_UNUSED}"),
            &vals![e],
        )? as u64;
    }
    Ok(n)
}

/// Writes a consistent copy of the database to `dest` (a file that must
/// not exist yet), in one read transaction, while writers go on.
pub(crate) fn copy_database(conn: &Connection, dest: &std::path::Path) -> Result<()> {
    let dest = dest
        .to_str()
        .ok_or_else(|| crate::Error::Internal("the backup path is not UTF-8".into()))?;
    conn.execute("VACUUM INTO ?1", params![dest])?;
    Ok(())
}
