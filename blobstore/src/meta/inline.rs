//! SQL for inline extents: the bytes of small extents, kept in the database
//! (see `extents::INLINE_MAX`).

use super::sql::{Sql, vals};
use bytes::Bytes;

use crate::{Error, Result};

/// Stores the bytes of a new inline extent.
pub(crate) fn put_inline(conn: &dyn Sql, extent: &str, data: &[u8]) -> Result<()> {
    conn.execute_deferred(
        "INSERT INTO inline_extents (extent, data) VALUES (?1, ?2)",
        &vals![&extent, &data],
    )
}

/// The bytes of inline extent `extent`.
///
/// # Errors
/// `Corrupt` when it is missing: a referenced or pinned extent is never
/// deleted.
pub(crate) fn inline_data(conn: &dyn Sql, extent: &str) -> Result<Bytes> {
    conn.query_row(
        "SELECT data FROM inline_extents WHERE extent = ?1",
        &vals![&extent],
        |r| r.get::<Vec<u8>>(0),
    )?
    .map(Bytes::from)
    .ok_or_else(|| Error::Corrupt(format!("inline extent {extent} is missing")))
}

pub(crate) fn delete_inline(conn: &dyn Sql, extent: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM inline_extents WHERE extent = ?1",
        &vals![&extent],
    )?;
    Ok(())
}
