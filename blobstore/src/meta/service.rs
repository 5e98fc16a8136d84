//! SQL for the per-account Blob service properties document.

use super::sql::Sql;
use rusqlite::{OptionalExtension, params};

use crate::Result;

pub(crate) fn get_service_properties(conn: &dyn Sql, account: &str) -> Result<Option<String>> {
    let conn = conn.sqlite()?;
    Ok(conn
        .prepare_cached("SELECT document FROM service_properties WHERE account = ?1")?
        .query_row(params![account], |r| r.get(0))
        .optional()?)
}

pub(crate) fn set_service_properties(conn: &dyn Sql, account: &str, doc: &str) -> Result<()> {
    let conn = conn.sqlite()?;
    conn.prepare_cached(
        "INSERT INTO service_properties (account, document) VALUES (?1, ?2)
         ON CONFLICT (account) DO UPDATE SET document = excluded.document",
    )?
    .execute(params![account, doc])?;
    Ok(())
}
