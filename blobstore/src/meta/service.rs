//! SQL for the per-account Blob service properties document.

use super::sql::{Sql, vals};

use crate::Result;

/// The version of an account's service properties as one read saw it:
/// raised by every write of the document, `None` when it was never set.
/// The same version always means the same document (rows are only ever
/// updated, never deleted).
pub(crate) type ServiceVersion = Option<i64>;

pub(crate) fn get_service_properties(conn: &dyn Sql, account: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT document FROM service_properties WHERE account = ?1",
        &vals![&account],
        |r| r.get(0),
    )
}

/// The document of `account` with its version.
pub(crate) fn service_properties_at(
    conn: &dyn Sql,
    account: &str,
) -> Result<(ServiceVersion, Option<String>)> {
    Ok(conn
        .query_row(
            "SELECT version, document FROM service_properties WHERE account = ?1",
            &vals![&account],
            |r| Ok((Some(r.get(0)?), Some(r.get(1)?))),
        )?
        .unwrap_or((None, None)))
}

/// Stores the document of `account`; its new version.
pub(crate) fn set_service_properties(conn: &dyn Sql, account: &str, doc: &str) -> Result<i64> {
    conn.query_row(
        "INSERT INTO service_properties (account, document, version) VALUES (?1, ?2, 1)
         ON CONFLICT (account) DO UPDATE SET document = excluded.document,
            version = service_properties.version + 1
         RETURNING version",
        &vals![&account, &doc],
        |r| r.get(0),
    )?
    .ok_or_else(super::sql::no_rows)
}
