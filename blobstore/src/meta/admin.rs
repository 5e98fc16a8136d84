//! SQL of the admin commands (check, backup): which extents the database
//! refers to, and the inline extents nothing refers to.

use rusqlite::{Connection, params};

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

/// Every extent a blob version, an uncommitted block or a page map refers
/// to (empty committed blocks have no extent and are left out).
pub(crate) fn extent_uses(conn: &Connection) -> Result<Vec<ExtentUse>> {
    let mut stmt = conn.prepare(
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
          GROUP BY p.extent, b.id",
    )?;
    let rows = stmt.query_map([], |r| {
        let snapshot: String = r.get(5)?;
        let block: Option<String> = r.get(6)?;
        let mut referrer = format!(
            "{}/{}/{}",
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?
        );
        if !snapshot.is_empty() {
            referrer.push_str(&format!("?snapshot={snapshot}"));
        }
        if let Some(block) = block {
            referrer.push_str(&format!(" (uncommitted block {block})"));
        }
        Ok(ExtentUse {
            extent: r.get(0)?,
            len: r.get::<_, i64>(1)? as u64,
            referrer,
            exact: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every extent waiting in the garbage table for the collector.
pub(crate) fn garbage_extents(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT extent FROM garbage")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The stored length of inline extent `extent`, if it exists.
pub(crate) fn inline_len(conn: &Connection, extent: &str) -> Result<Option<u64>> {
    use rusqlite::OptionalExtension as _;
    Ok(conn
        .prepare_cached("SELECT length(data) FROM inline_extents WHERE extent = ?1")?
        .query_row(params![extent], |r| r.get::<_, i64>(0))
        .optional()?
        .map(|n| n as u64))
}

/// Inline extents that no blob version, uncommitted block, page map or
/// garbage row refers to.
pub(crate) fn orphan_inline_extents(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT i.extent FROM inline_extents i
          WHERE NOT EXISTS (SELECT 1 FROM blob_extents e WHERE e.extent = i.extent)
            AND NOT EXISTS (SELECT 1 FROM blocks k WHERE k.extent = i.extent)
            AND NOT EXISTS (SELECT 1 FROM page_ranges p WHERE p.extent = i.extent)
            AND NOT EXISTS (SELECT 1 FROM garbage g WHERE g.extent = i.extent)",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
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
pub(crate) fn hashed_blobs(conn: &Connection) -> Result<Vec<HashedBlob>> {
    let mut stmt = conn.prepare(
        "SELECT b.id, c.account, c.name, b.name, b.snapshot, b.content_md5
           FROM blobs b JOIN containers c ON c.id = b.container_id
          WHERE b.committed = 1 AND b.blob_type = 'BlockBlob' AND b.content_md5 IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM blob_extents e
                             WHERE e.blob_id = b.id AND e.block_id IS NOT NULL)
          ORDER BY b.id",
    )?;
    let rows = stmt.query_map([], |r| {
        let snapshot: String = r.get(4)?;
        let mut referrer = format!(
            "{}/{}/{}",
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?
        );
        if !snapshot.is_empty() {
            referrer.push_str(&format!("?snapshot={snapshot}"));
        }
        Ok((r.get::<_, i64>(0)?, referrer, r.get::<_, Vec<u8>>(5)?))
    })?;
    let mut out = Vec::new();
    let mut extents = conn.prepare(
        "SELECT extent, len FROM blob_extents WHERE blob_id = ?1 AND extent <> '' ORDER BY seq",
    )?;
    for row in rows {
        let (id, referrer, md5) = row?;
        let list = extents
            .query_map(params![id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            .collect::<rusqlite::Result<_>>()?;
        out.push(HashedBlob {
            referrer,
            md5,
            extents: list,
        });
    }
    Ok(out)
}

/// Deletes inline extents (found orphaned by [`orphan_inline_extents`]).
pub(crate) fn delete_inline_extents(conn: &Connection, extents: &[String]) -> Result<()> {
    let mut stmt = conn.prepare("DELETE FROM inline_extents WHERE extent = ?1")?;
    for e in extents {
        stmt.execute(params![e])?;
    }
    Ok(())
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
