//! What the store holds, counted for metrics: a few aggregate queries run
//! now and then (the server caches the answer), never per request.

use super::sql::{Sql, vals};
use std::time::SystemTime;

use crate::Result;
use crate::timestamps::to_nanos;

/// What one account holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountUsage {
    /// The account's name.
    pub account: String,
    /// Its containers.
    pub containers: u64,
    /// Its committed base blobs (snapshots excluded).
    pub blobs: u64,
    /// The sizes of its committed blobs and snapshots added up (a snapshot
    /// that shares its extents with its blob counts in full).
    pub bytes: u64,
}

/// What the whole store holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreUsage {
    /// By account, sorted by name; an account with no container is absent.
    pub accounts: Vec<AccountUsage>,
    /// Extents that a blob, snapshot or staged block refers to (one that
    /// both a blob and a staged block refer to counts twice).
    pub extents: u64,
    /// Unreferenced extents waiting for the garbage collector.
    pub garbage: u64,
    /// Containers whose lease is held or breaking at `now`.
    pub leased_containers: u64,
    /// Committed blobs whose lease is held or breaking at `now`.
    pub leased_blobs: u64,
}

/// A held or breaking lease of the row `t`: an id that has neither expired
/// nor been broken at `?1`.
fn active_lease(t: &str) -> String {
    format!(
        "{t}.lease_id IS NOT NULL AND {t}.lease_broken = 0
         AND ({t}.lease_expires_at IS NULL OR {t}.lease_expires_at > ?1)
         AND ({t}.lease_break_at IS NULL OR {t}.lease_break_at > ?1)"
    )
}

fn count(conn: &dyn Sql, sql: &str) -> Result<u64> {
    let n: i64 = conn
        .query_value(sql, &[])?
        .ok_or_else(super::sql::no_rows)?;
    Ok(n.max(0) as u64)
}

/// Counts everything [`StoreUsage`] reports, in one read transaction. The
/// blobs are read once (by container, through the primary key's index);
/// the extents are counted on their indexes, without sorting. The sums are
/// cast to BIGINT: PostgreSQL sums BIGINTs as NUMERIC.
pub(crate) fn store_usage(conn: &dyn Sql, now: SystemTime) -> Result<StoreUsage> {
    let now = to_nanos(now);
    let mut leased_blobs = 0;
    let accounts = conn.query_map(
        &format!(
            "SELECT c.account, COUNT(DISTINCT CASE WHEN c.deleted_at IS NULL THEN c.id END),
                CAST(COALESCE(SUM(CASE WHEN b.is_base = 1 AND c.deleted_at IS NULL
                    THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(b.size), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN {} THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM containers c
         LEFT JOIN blobs b ON b.container_id = c.id AND b.committed = 1
         GROUP BY c.account
         ORDER BY c.account",
            active_lease("b")
        ),
        &vals![now],
        |r| {
            leased_blobs += r.get::<i64>(4)?.max(0) as u64;
            Ok(AccountUsage {
                account: r.get(0)?,
                containers: r.get::<i64>(1)?.max(0) as u64,
                blobs: r.get::<i64>(2)?.max(0) as u64,
                bytes: r.get::<i64>(3)?.max(0) as u64,
            })
        },
    )?;
    let leased_containers: i64 = conn
        .query_value(
            &format!(
                "SELECT COUNT(*) FROM containers c WHERE {}",
                active_lease("c")
            ),
            &vals![now],
        )?
        .ok_or_else(super::sql::no_rows)?;
    Ok(StoreUsage {
        accounts,
        // Committing a block list drops the blob's staged blocks, so an
        // extent is rarely in two tables.
        extents: count(conn, "SELECT COUNT(DISTINCT extent) FROM blob_extents")?
            + count(conn, "SELECT COUNT(DISTINCT extent) FROM blocks")?
            + count(
                conn,
                "SELECT COUNT(DISTINCT extent) FROM page_ranges WHERE extent <> ''",
            )?,
        garbage: count(conn, "SELECT COUNT(*) FROM garbage")?,
        leased_containers: leased_containers.max(0) as u64,
        leased_blobs,
    })
}
