//! SQL for inline extents: the bytes of small extents, kept in the database
//! (see `extents::INLINE_MAX`).

use super::sql::Sql;
use bytes::Bytes;
use rusqlite::{OptionalExtension, params};

use crate::{Error, Result};

/// Stores the bytes of a new inline extent.
pub(crate) fn put_inline(conn: &dyn Sql, extent: &str, data: &[u8]) -> Result<()> {
    let conn = conn.sqlite()?;
    conn.prepare_cached("INSERT INTO inline_extents (extent, data) VALUES (?1, ?2)")?
        .execute(params![extent, data])?;
    Ok(())
}

/// The bytes of inline extent `extent`.
///
/// # Errors
/// `Corrupt` when it is missing: a referenced or pinned extent is never
/// deleted.
pub(crate) fn inline_data(conn: &dyn Sql, extent: &str) -> Result<Bytes> {
    let conn = conn.sqlite()?;
    conn.prepare_cached("SELECT data FROM inline_extents WHERE extent = ?1")?
        .query_row(params![extent], |r| r.get::<_, Vec<u8>>(0))
        .optional()?
        .map(Bytes::from)
        .ok_or_else(|| Error::Corrupt(format!("inline extent {extent} is missing")))
}

pub(crate) fn delete_inline(conn: &dyn Sql, extent: &str) -> Result<()> {
    let conn = conn.sqlite()?;
    conn.prepare_cached("DELETE FROM inline_extents WHERE extent = ?1")?
        .execute(params![extent])?;
    Ok(())
}
