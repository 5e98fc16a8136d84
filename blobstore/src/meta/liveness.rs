//! SQL for the liveness of the nodes of a cluster (docs/cluster.md,
//! "Garbage across nodes"): each node's heartbeat, the uploads in flight
//! (an object being written that no committed metadata names yet) and the
//! node running each pending copy from another host.
//!
//! A node is alive while its heartbeat is younger than a bound, judged by
//! the database's clock (`now()`), never by a node's own. The tables exist
//! on PostgreSQL only: on SQLite the store is the only node, and every
//! function here does nothing there.

use std::time::Duration;

use super::sql::{Dialect, Sql, vals};
use super::{Backend, Db};
use crate::timestamps::to_nanos;
use crate::{Error, Result};

impl Db {
    /// Runs `f` with each statement committing on its own, without the
    /// cluster's write lock (PostgreSQL); on SQLite as a write. `f` may run
    /// more than once.
    pub(crate) async fn autocommit<F, T>(&self, f: F) -> Result<T>
    where
        F: FnMut(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let Backend::Postgres(pool) = &self.backend else {
            return self.write_again_reserved(f).await;
        };
        let pool = std::sync::Arc::clone(pool);
        super::within_deadline(tokio::task::spawn_blocking(move || pool.autocommit(f))).await
    }
}

/// `bound` in milliseconds, as the statements bind it.
fn millis(bound: Duration) -> i64 {
    i64::try_from(bound.as_millis()).unwrap_or(i64::MAX)
}

/// Records that `node` is alive now (by the database's clock), adding its
/// row if it has none. Returns whether it has been alive, without a gap
/// longer than `bound`, for at least `bound`: only then may it take other
/// nodes for dead. (After a gap, the database restarting or this node cut
/// from it, the others may not have been able to beat either.)
pub(crate) fn heartbeat(conn: &dyn Sql, node: u64, bound: Duration) -> Result<bool> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(false);
    }
    Ok(conn
        .query_value::<i64>(
            "INSERT INTO stowage_node_heartbeats AS h (node) VALUES (?1)
             ON CONFLICT (node) DO UPDATE SET
                 alive_since = CASE WHEN h.heartbeat > now() - ?2 * interval '1 millisecond'
                                    THEN h.alive_since ELSE now() END,
                 heartbeat = now()
             RETURNING CASE WHEN h.alive_since <= now() - ?2 * interval '1 millisecond'
                            THEN 1 ELSE 0 END",
            &vals![node as i64, millis(bound)],
        )?
        .is_some_and(|judge| judge == 1))
}

/// Records an upload in flight: `node` is about to write object `extent`.
/// Written before the object, so that another node can reclaim the object
/// if `node` dies before committing it.
pub(crate) fn record_upload(conn: &dyn Sql, extent: &str, node: u64) -> Result<()> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(());
    }
    conn.execute(
        "INSERT INTO stowage_uploads (extent, node) VALUES (?1, ?2)
         ON CONFLICT (extent) DO NOTHING",
        &vals![&extent, node as i64],
    )?;
    Ok(())
}

/// In the transaction that commits the first reference to object `extent`:
/// ends its record of an upload in flight. Fails when the record is gone:
/// the writing node was taken for dead and another node reclaimed (is
/// deleting) the object, which must then not be referenced.
pub(crate) fn finish_upload(conn: &dyn Sql, extent: &str) -> Result<()> {
    if conn.dialect() == Dialect::Sqlite || extent.is_empty() || crate::extents::is_inline(extent) {
        return Ok(());
    }
    let n = conn.execute(
        "DELETE FROM stowage_uploads WHERE extent = ?1",
        &vals![&extent],
    )?;
    if n == 0 {
        return Err(Error::Unavailable(format!(
            "the upload of {extent} was reclaimed: this node was taken for dead"
        )));
    }
    Ok(())
}

/// Ends the record of an upload that failed before its commit. True when
/// the record was there: the object is then the caller's to delete (no
/// commit can refer to it any more). False when a commit took it (the
/// object is referenced: keep it) or another node reclaimed it.
pub(crate) fn forget_upload(conn: &dyn Sql, extent: &str) -> Result<bool> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(true);
    }
    let n = conn.execute(
        "DELETE FROM stowage_uploads WHERE extent = ?1",
        &vals![&extent],
    )?;
    Ok(n == 1)
}

/// The condition "node `n` is dead" for a row aliased `x` with a `node`
/// column: no heartbeat younger than `?1` milliseconds.
const DEAD: &str = "NOT EXISTS (SELECT 1 FROM stowage_node_heartbeats h
      WHERE h.node = x.node AND h.heartbeat > now() - ?1 * interval '1 millisecond')";

/// Takes up to `limit` records of uploads whose node is dead (no heartbeat
/// within `bound`) and returns their objects, for the caller to delete.
/// Taking the record first makes a late commit of the dead node fail
/// ([`finish_upload`]) rather than refer to a deleted object.
pub(crate) fn take_dead_uploads(
    conn: &dyn Sql,
    bound: Duration,
    limit: usize,
) -> Result<Vec<String>> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(Vec::new());
    }
    conn.query_map(
        &format!(
            "DELETE FROM stowage_uploads WHERE extent IN (
               SELECT extent FROM stowage_uploads x WHERE {DEAD} LIMIT ?2)
             RETURNING extent"
        ),
        &vals![millis(bound), limit as i64],
        |r| r.get(0),
    )
}

/// The objects recorded as uploads in flight of `node`.
pub(crate) fn uploads_of(conn: &dyn Sql, node: u64) -> Result<Vec<String>> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(Vec::new());
    }
    conn.query_map(
        "SELECT extent FROM stowage_uploads WHERE node = ?1",
        &vals![node as i64],
        |r| r.get(0),
    )
}

/// Takes the record of `node`'s upload of `extent`; true when it was there.
pub(crate) fn take_upload(conn: &dyn Sql, extent: &str, node: u64) -> Result<bool> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(false);
    }
    let n = conn.execute(
        "DELETE FROM stowage_uploads WHERE extent = ?1 AND node = ?2",
        &vals![&extent, node as i64],
    )?;
    Ok(n == 1)
}

/// Records that `node` runs the pending copy `copy_id` into row `blob_id`
/// (in the transaction that makes the copy pending).
pub(crate) fn own_copy(conn: &dyn Sql, copy_id: &str, blob_id: i64, node: u64) -> Result<()> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(());
    }
    conn.execute(
        "INSERT INTO stowage_copy_owners (copy_id, blob_id, node) VALUES (?1, ?2, ?3)
         ON CONFLICT (copy_id) DO NOTHING",
        &vals![&copy_id, &blob_id, node as i64],
    )?;
    Ok(())
}

/// Forgets who runs copy `copy_id` (it ended, whichever way).
pub(crate) fn disown_copy(conn: &dyn Sql, copy_id: &str) -> Result<()> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(());
    }
    conn.execute(
        "DELETE FROM stowage_copy_owners WHERE copy_id = ?1",
        &vals![&copy_id],
    )?;
    Ok(())
}

/// Ends as failed, with `description`, every copy still pending whose node
/// is dead (no heartbeat within `bound`), and forgets their owners (also
/// of those no longer pending: overwritten or aborted meanwhile). Returns
/// how many copies it failed.
pub(crate) fn fail_dead_copies(
    conn: &dyn Sql,
    bound: Duration,
    description: &str,
    now: std::time::SystemTime,
) -> Result<usize> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(0);
    }
    let owners: Vec<(String, i64)> = conn.query_map(
        &format!("DELETE FROM stowage_copy_owners x WHERE {DEAD} RETURNING copy_id, blob_id"),
        &vals![millis(bound)],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut failed = 0;
    for (copy_id, blob_id) in owners {
        failed += conn.execute(
            "UPDATE blobs SET copy_status = 'failed', copy_status_description = ?3,
                    copy_completion_time = ?4
              WHERE id = ?1 AND copy_id = ?2 AND copy_status = 'pending'",
            &vals![&blob_id, &copy_id, &description, to_nanos(now)],
        )?;
    }
    Ok(failed)
}

/// Removes the rows of dead nodes (no heartbeat within `bound`) that no
/// upload or copy names any more. Returns how many.
pub(crate) fn forget_dead_nodes(conn: &dyn Sql, bound: Duration) -> Result<usize> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(0);
    }
    conn.execute(
        "DELETE FROM stowage_node_heartbeats x
          WHERE heartbeat <= now() - ?1 * interval '1 millisecond'
            AND NOT EXISTS (SELECT 1 FROM stowage_uploads u WHERE u.node = x.node)
            AND NOT EXISTS (SELECT 1 FROM stowage_copy_owners c WHERE c.node = x.node)",
        &vals![millis(bound)],
    )
}

/// Whether a dead node (no heartbeat within `bound`) left anything: a row,
/// an upload in flight, a pending copy. A read, so that the collector takes
/// the write lock only when there is something to reclaim.
pub(crate) fn any_dead_node(conn: &dyn Sql, bound: Duration) -> Result<bool> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(false);
    }
    conn.query_row(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM stowage_node_heartbeats x
                             WHERE heartbeat <= now() - ?1 * interval '1 millisecond')
                 OR EXISTS (SELECT 1 FROM stowage_uploads x WHERE {DEAD})
                 OR EXISTS (SELECT 1 FROM stowage_copy_owners x WHERE {DEAD})"
        ),
        &vals![millis(bound)],
        |r| r.get(0),
    )?
    .ok_or_else(super::sql::no_rows)
}

/// Every object named by a record of an upload in flight, whichever node
/// writes it (for `check`, which leaves them to the nodes).
pub(crate) fn uploads_in_flight(conn: &dyn Sql) -> Result<Vec<String>> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(Vec::new());
    }
    conn.query_map("SELECT extent FROM stowage_uploads", &[], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::pg::PgPool;
    use crate::testing::TempPostgres;

    const BOUND: Duration = Duration::from_secs(30);

    fn set_back(pool: &PgPool, node: u64) {
        pool.autocommit(|c| {
            c.execute(
                "UPDATE stowage_node_heartbeats SET heartbeat = now() - interval '1 hour'
                  WHERE node = ?1",
                &vals![node as i64],
            )
        })
        .unwrap();
    }

    fn take(pool: &PgPool) -> Vec<String> {
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            take_dead_uploads(tx, BOUND, 100)
        })
        .unwrap()
    }

    /// A node may judge others once it has beaten for the bound without a
    /// gap longer than the bound.
    #[test]
    fn a_node_judges_others_only_after_beating_for_the_bound() {
        let pg = TempPostgres::start().unwrap();
        let pool = PgPool::open(&pg.new_database().unwrap(), 1).unwrap();
        let beat = || pool.autocommit(|c| heartbeat(c, 7, BOUND)).unwrap();
        let set = |column: &str| {
            pool.autocommit(|c| {
                c.execute(
                    &format!(
                        "UPDATE stowage_node_heartbeats
                            SET {column} = now() - interval '1 hour' WHERE node = 7"
                    ),
                    &[],
                )
            })
            .unwrap();
        };
        assert!(!beat(), "new");
        assert!(!beat(), "alive for less than the bound");
        set("alive_since");
        assert!(beat(), "alive for an hour");
        assert!(beat());
        set("heartbeat");
        assert!(
            !beat(),
            "after a gap longer than the bound, alive again from now"
        );
    }

    /// Who is dead, and what a dead node's late commit finds: each row is
    /// a case (node 1 beats, node 2 beat long ago, node 3 never did).
    #[test]
    fn the_uploads_of_dead_nodes_are_taken_and_their_late_commits_fail() {
        let pg = TempPostgres::start().unwrap();
        let pool = PgPool::open(&pg.new_database().unwrap(), 1).unwrap();
        for node in [1, 2] {
            pool.autocommit(|c| heartbeat(c, node, BOUND)).unwrap();
        }
        for (extent, node) in [("a1", 1), ("b2", 2), ("c3", 3), ("d1", 1)] {
            pool.autocommit(|c| record_upload(c, extent, node)).unwrap();
        }
        // Recording twice (a retry) is harmless.
        pool.autocommit(|c| record_upload(c, "a1", 1)).unwrap();
        assert_eq!(take(&pool), vec!["c3".to_owned()], "no heartbeat: dead");
        set_back(&pool, 2);
        assert!(pool.read(|c| any_dead_node(c, BOUND)).unwrap());
        assert_eq!(take(&pool), vec!["b2".to_owned()]);
        assert!(take(&pool).is_empty());

        // The live node commits one upload and drops the other.
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            finish_upload(tx, "a1")
        })
        .unwrap();
        assert!(pool.autocommit(|c| forget_upload(c, "d1")).unwrap());
        // Node 2's commit, after its record was taken: refused.
        let late = pool.write(&crate::meta::locks::Scope::Store, |tx| {
            finish_upload(tx, "b2")
        });
        assert!(matches!(late, Err(Error::Unavailable(_))), "{late:?}");
        assert!(!pool.autocommit(|c| forget_upload(c, "b2")).unwrap());
        // Inline and empty extents have no record.
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            finish_upload(tx, "i.0123")
        })
        .unwrap();
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            finish_upload(tx, "")
        })
        .unwrap();

        // Node 2 has nothing left: its row goes; node 1 stays.
        assert_eq!(
            pool.write(&crate::meta::locks::Scope::Store, |tx| forget_dead_nodes(
                tx, BOUND
            ))
            .unwrap(),
            1
        );
        assert!(!pool.read(|c| any_dead_node(c, BOUND)).unwrap());
        let left = pool
            .read(|c| {
                c.query_map("SELECT node FROM stowage_node_heartbeats", &[], |r| {
                    r.get::<i64>(0)
                })
            })
            .unwrap();
        assert_eq!(left, vec![1]);
    }

    #[test]
    fn a_dead_nodes_pending_copies_fail_and_a_live_nodes_stay_pending() {
        let pg = TempPostgres::start().unwrap();
        let pool = PgPool::open(&pg.new_database().unwrap(), 1).unwrap();
        pool.autocommit(|c| {
            c.execute(
                "INSERT INTO containers (account, name, etag, last_modified, metadata,
                        default_encryption_scope, deny_encryption_scope_override)
                 VALUES ('a', 'c', 'e', 0, '', '', 0)",
                &[],
            )
        })
        .unwrap();
        let row = |name: &str, copy: &str| {
            pool.autocommit(|c| {
                c.query_value::<i64>(
                    "INSERT INTO blobs (container_id, name, is_base, snapshot, committed,
                            blob_type, size, etag, last_modified, creation_time, metadata,
                            copy_id, copy_status)
                     SELECT id, ?1, 1, '', 1, 'BlockBlob', 0, 'e', 0, 0, '', ?2, 'pending'
                       FROM containers RETURNING id",
                    &vals![&name, &copy],
                )
            })
            .unwrap()
            .unwrap()
        };
        let (live, dead) = (row("live", "copy-live"), row("dead", "copy-dead"));
        for node in [1, 2] {
            pool.autocommit(|c| heartbeat(c, node, BOUND)).unwrap();
        }
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            own_copy(tx, "copy-live", live, 1)
        })
        .unwrap();
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            own_copy(tx, "copy-dead", dead, 2)
        })
        .unwrap();
        let fail = || {
            pool.write(&crate::meta::locks::Scope::Store, |tx| {
                fail_dead_copies(tx, BOUND, "gone", std::time::UNIX_EPOCH)
            })
            .unwrap()
        };
        assert_eq!(fail(), 0);
        set_back(&pool, 2);
        assert_eq!(fail(), 1);
        assert_eq!(fail(), 0, "its owner is forgotten");
        let states = pool
            .read(|c| {
                c.query_map(
                    "SELECT name || ' ' || copy_status || ' ' || COALESCE(copy_status_description, '-')
                       FROM blobs ORDER BY name",
                    &[],
                    |r| r.get::<String>(0),
                )
            })
            .unwrap();
        assert_eq!(states, vec!["dead failed gone", "live pending -"]);
        pool.write(&crate::meta::locks::Scope::Store, |tx| {
            disown_copy(tx, "copy-live")
        })
        .unwrap();
        assert_eq!(
            pool.write(&crate::meta::locks::Scope::Store, |tx| forget_dead_nodes(
                tx, BOUND
            ))
            .unwrap(),
            1
        );
    }
}
