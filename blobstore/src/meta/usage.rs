//! What the store holds, counted for metrics: a few aggregate queries run
//! now and then (the server caches the answer), never per request.

use std::time::SystemTime;

use rusqlite::Connection;

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
    /// Extents that a blob, snapshot or staged block refers to.
    pub extents: u64,
    /// Unreferenced extents waiting for the garbage collector.
    pub garbage: u64,
    /// Containers whose lease is held or breaking at `now`.
    pub leased_containers: u64,
    /// Blobs and snapshots whose lease is held or breaking at `now`.
    pub leased_blobs: u64,
}

/// A held or breaking lease: an id that has neither expired nor been broken.
const ACTIVE_LEASE: &str = "lease_id IS NOT NULL AND lease_broken = 0
    AND (lease_expires_at IS NULL OR lease_expires_at > ?1)
    AND (lease_break_at IS NULL OR lease_break_at > ?1)";

fn count(conn: &Connection, sql: &str, now: i64) -> Result<u64> {
    let mut stmt = conn.prepare(sql)?;
    let n: i64 = if stmt.parameter_count() == 0 {
        stmt.query_row([], |r| r.get(0))?
    } else {
        stmt.query_row([now], |r| r.get(0))?
    };
    Ok(n.max(0) as u64)
}

/// Counts everything [`StoreUsage`] reports, in one read transaction.
pub(crate) fn store_usage(conn: &Connection, now: SystemTime) -> Result<StoreUsage> {
    let now = to_nanos(now);
    let mut stmt = conn.prepare(
        "SELECT c.account, COUNT(DISTINCT c.id),
                COALESCE(SUM(CASE WHEN b.is_base = 1 THEN 1 ELSE 0 END), 0),
                COALESCE(SUM(b.size), 0)
         FROM containers c
         LEFT JOIN blobs b ON b.container_id = c.id AND b.committed = 1
         GROUP BY c.account
         ORDER BY c.account",
    )?;
    let accounts = stmt
        .query_map([], |r| {
            Ok(AccountUsage {
                account: r.get(0)?,
                containers: r.get::<_, i64>(1)?.max(0) as u64,
                blobs: r.get::<_, i64>(2)?.max(0) as u64,
                bytes: r.get::<_, i64>(3)?.max(0) as u64,
            })
        })?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(StoreUsage {
        accounts,
        extents: count(
            conn,
            "SELECT COUNT(*) FROM (SELECT extent FROM blob_extents UNION SELECT extent FROM blocks)",
            now,
        )?,
        garbage: count(conn, "SELECT COUNT(*) FROM garbage", now)?,
        leased_containers: count(
            conn,
            &format!("SELECT COUNT(*) FROM containers WHERE {ACTIVE_LEASE}"),
            now,
        )?,
        leased_blobs: count(
            conn,
            &format!("SELECT COUNT(*) FROM blobs WHERE {ACTIVE_LEASE}"),
            now,
        )?,
    })
}
