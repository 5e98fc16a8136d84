//! The number of a node of a cluster: drawn once at start-up from a
//! sequence of the shared database, so that no two nodes of one cluster
//! share it (it goes into the low bits of the node's ETags, and names the
//! node's heartbeat and its uploads in flight: `meta::liveness`).

use super::sql::{Dialect, Sql};
use crate::Result;

/// A number no other node of the cluster drew, on PostgreSQL; `None` on
/// SQLite, whose store is the only node. Runs in a write transaction
/// (`nextval` is refused in a read-only one).
pub(crate) fn draw_node_number(conn: &dyn Sql) -> Result<Option<u64>> {
    if conn.dialect() == Dialect::Sqlite {
        return Ok(None);
    }
    let n = conn.query_value::<i64>("SELECT nextval('stowage_nodes')", &[])?;
    Ok(n.map(|n| n as u64))
}
