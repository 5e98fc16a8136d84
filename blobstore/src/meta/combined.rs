//! Reads that answer in one statement what the store otherwise asks in
//! several, for PostgreSQL, where every statement is a round trip to the
//! database (`docs/cluster.md`, "Round trips"). On SQLite each function
//! runs the separate statements as before: there a statement costs
//! microseconds and the plans of the simple ones are known.

use bytes::Bytes;

use super::blobs::{BLOB_COLUMNS, BlobRow, ExtentRef, read_blob_row};
use super::sql::{Dialect, Sql, vals};
use crate::Result;
use crate::meta::{DeleteRetention, ServiceVersion};

/// A blob's row and its tag count.
pub(crate) type BlobAndTags = (BlobRow, u64);

/// The container `account`/`container` and its blob `name` (the base blob,
/// or `snapshot`), with the blob's tag count; `ContainerNotFound` when the
/// container does not exist, `None` when the blob does not. On PostgreSQL
/// also the version of the account's service properties in the same
/// snapshot (the server's CORS answer depends on them), `None` on SQLite.
pub(crate) fn blob_by_name(
    conn: &dyn Sql,
    account: &str,
    container: &str,
    name: &str,
    snapshot: Option<&str>,
) -> Result<(Option<BlobAndTags>, Option<ServiceVersion>)> {
    if conn.dialect() == Dialect::Sqlite {
        let container_id = super::container_id(conn, account, container)?;
        let found = match super::get_blob(conn, container_id, name, snapshot)? {
            Some(row) => {
                let tags = super::tag_count(conn, row.id)?;
                Some((row, tags))
            }
            None => None,
        };
        return Ok((found, None));
    }
    let columns = BLOB_COLUMNS.matches(',').count() + 1;
    conn.query_row(
        &format!(
            "SELECT {BLOB_COLUMNS}, c.cid,
                (SELECT COUNT(*) FROM blob_tags WHERE blob_tags.blob_id = blobs.id),
                (SELECT version FROM service_properties WHERE account = ?1)
             FROM (SELECT id AS cid FROM containers WHERE account = ?1 AND name = ?2) AS c
             LEFT JOIN blobs ON blobs.container_id = c.cid AND blobs.name = ?3
                AND blobs.is_base = ?4 AND blobs.snapshot = ?5"
        ),
        &vals![
            account,
            container,
            name,
            snapshot.is_none(),
            snapshot.unwrap_or("")
        ],
        // The container's id (column `columns`) is there whenever the
        // container is; the blob's columns are NULL when it is not.
        |r| {
            let found = match r.get::<Option<i64>>(0)? {
                Some(_) => Some((read_blob_row(r)?, r.get::<i64>(columns + 1)? as u64)),
                None => None,
            };
            Ok((found, Some(r.get(columns + 2)?)))
        },
    )?
    .ok_or(crate::Error::ContainerNotFound)
}

/// The id of container `account`/`container` and its base blob `name`'s
/// row, if there is one; `ContainerNotFound` when the container does not
/// exist. One statement on PostgreSQL.
pub(crate) fn container_and_blob(
    conn: &dyn Sql,
    account: &str,
    container: &str,
    name: &str,
) -> Result<(i64, Option<BlobRow>)> {
    if conn.dialect() == Dialect::Sqlite {
        let container_id = super::container_id(conn, account, container)?;
        return Ok((
            container_id,
            super::get_blob(conn, container_id, name, None)?,
        ));
    }
    let columns = BLOB_COLUMNS.matches(',').count() + 1;
    conn.query_row(
        &format!(
            "SELECT {BLOB_COLUMNS}, c.cid
             FROM (SELECT id AS cid FROM containers WHERE account = ?1 AND name = ?2) AS c
             LEFT JOIN blobs ON blobs.container_id = c.cid AND blobs.name = ?3
                AND blobs.is_base = 1 AND blobs.snapshot = ''"
        ),
        &vals![account, container, name],
        |r| {
            let row = match r.get::<Option<i64>>(0)? {
                Some(_) => Some(read_blob_row(r)?),
                None => None,
            };
            Ok((r.get::<i64>(columns)?, row))
        },
    )?
    .ok_or(crate::Error::ContainerNotFound)
}

/// The extents of blob `id` in order, each inline one with its bytes while
/// their running total stays within `preload` bytes (`None` past it, and
/// for extents in the object store). On SQLite no bytes are read here.
pub(crate) fn blob_extents_preloaded(
    conn: &dyn Sql,
    id: i64,
    preload: u64,
) -> Result<(Vec<ExtentRef>, Vec<Option<Bytes>>)> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok((super::blob_extents(conn, id)?, Vec::new()));
    }
    let rows = conn.query_map(
        "SELECT e.extent, e.len, e.block_id,
            CASE WHEN SUM(e.len) OVER (ORDER BY e.seq) <= ?2 THEN i.data END
         FROM blob_extents e LEFT JOIN inline_extents i ON i.extent = e.extent
         WHERE e.blob_id = ?1 ORDER BY e.seq",
        &vals![id, preload as i64],
        |r| {
            Ok((
                ExtentRef {
                    extent: r.get(0)?,
                    len: r.get::<i64>(1)? as u64,
                    block_id: r.get(2)?,
                },
                r.get::<Option<Vec<u8>>>(3)?.map(Bytes::from),
            ))
        },
    )?;
    Ok(rows.into_iter().unzip())
}

/// What Put Blob reads before it writes: [`PutTarget`]. One statement on
/// PostgreSQL, which also reserves the id of the new row when the blob has
/// none, so that the statements that refer to it need not wait for the
/// insert's answer (they are sent without waiting, with the COMMIT).
pub(crate) fn put_target(
    conn: &dyn Sql,
    account: &str,
    container: &str,
    name: &str,
) -> Result<PutTarget> {
    if conn.dialect() == Dialect::Sqlite {
        let (container_id, current) = container_and_blob(conn, account, container, name)?;
        return Ok(PutTarget {
            container_id,
            current,
            retention: super::delete_retention(conn, account)?,
            reserved_id: None,
        });
    }
    let columns = BLOB_COLUMNS.matches(',').count() + 1;
    conn.query_row(
        &format!(
            "SELECT {BLOB_COLUMNS}, c.cid, r.days, r.allow_permanent_delete,
                CASE WHEN blobs.id IS NULL
                    THEN nextval(pg_get_serial_sequence('blobs', 'id')) END
             FROM (SELECT id AS cid FROM containers WHERE account = ?1 AND name = ?2) AS c
             LEFT JOIN blobs ON blobs.container_id = c.cid AND blobs.name = ?3
                AND blobs.is_base = 1 AND blobs.snapshot = ''
             LEFT JOIN blob_delete_retention r ON r.account = ?1"
        ),
        &vals![account, container, name],
        |r| {
            let current = match r.get::<Option<i64>>(0)? {
                Some(_) => Some(read_blob_row(r)?),
                None => None,
            };
            let retention = match r.get::<Option<i64>>(columns + 1)? {
                Some(days) => Some(DeleteRetention {
                    days: days as u32,
                    allow_permanent_delete: r.get(columns + 2)?,
                }),
                None => None,
            };
            Ok(PutTarget {
                container_id: r.get(columns)?,
                current,
                retention,
                reserved_id: r.get(columns + 3)?,
            })
        },
    )?
    .ok_or(crate::Error::ContainerNotFound)
}

/// The rows a Put Blob decides on.
pub(crate) struct PutTarget {
    pub(crate) container_id: i64,
    /// The base blob's current row.
    pub(crate) current: Option<BlobRow>,
    /// The account's soft delete policy.
    pub(crate) retention: Option<DeleteRetention>,
    /// An id no row has, for the new row when there is no current one
    /// (PostgreSQL only).
    pub(crate) reserved_id: Option<i64>,
}
