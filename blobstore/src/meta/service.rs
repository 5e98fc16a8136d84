//! SQL for the per-account Blob service properties document.

use super::sql::{Sql, vals};

use crate::Result;

pub(crate) fn get_service_properties(conn: &dyn Sql, account: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT document FROM service_properties WHERE account = ?1",
        &vals![&account],
        |r| r.get(0),
    )
}

pub(crate) fn set_service_properties(conn: &dyn Sql, account: &str, doc: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO service_properties (account, document) VALUES (?1, ?2)
         ON CONFLICT (account) DO UPDATE SET document = excluded.document",
        &vals![&account, &doc],
    )?;
    Ok(())
}
