//! The liveness of the nodes of a cluster (docs/cluster.md, "Garbage across
//! nodes"): each node writes a heartbeat into the shared database every few
//! seconds; a node whose heartbeat is older than a bound, by the database's
//! clock, is dead. Its uploads in flight (objects written, not yet
//! committed) are reclaimed by the collector of any other node, and its
//! pending copies from other hosts are ended as failed.
//!
//! On SQLite the store is the only node: nothing here runs.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::meta::{self, Db};
use crate::{Result, Store};

/// How often a node writes its heartbeat.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);

/// How old a heartbeat may be before its node is taken for dead: six
/// heartbeats missed.
pub const DEAD_AFTER: Duration = Duration::from_secs(30);

/// What another node records on a pending copy whose node died.
pub const ORPHANED_COPY: &str = "500 InternalError \"The copy was interrupted: the server node running it stopped before it completed. Start the copy again.\"";

/// Records of uploads reclaimed in one transaction.
const BATCH: usize = 500;

/// How a node of a cluster takes part in the liveness protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LivenessConfig {
    /// How often the node writes its heartbeat.
    pub heartbeat_every: Duration,
    /// How old a heartbeat may be before its node is taken for dead.
    pub dead_after: Duration,
}

impl Default for LivenessConfig {
    fn default() -> LivenessConfig {
        LivenessConfig {
            heartbeat_every: HEARTBEAT_EVERY,
            dead_after: DEAD_AFTER,
        }
    }
}

/// This node's part: its number and the database it beats into. Records
/// each upload in flight before its object is written (`Extents`), and
/// keeps in memory which of its records are uploads still running.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) number: u64,
    db: Db,
    writing: Arc<Mutex<HashSet<String>>>,
}

/// An upload of this node in flight, until dropped (after its commit, or
/// after the object was discarded).
#[derive(Debug)]
pub(crate) struct UploadGuard {
    writing: Arc<Mutex<HashSet<String>>>,
    extent: String,
}

impl Drop for UploadGuard {
    fn drop(&mut self) {
        self.writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.extent);
    }
}

impl Node {
    /// Registers node `number` (its first heartbeat).
    pub(crate) async fn register(db: Db, number: u64, bound: Duration) -> Result<Node> {
        db.autocommit(move |conn| meta::heartbeat(conn, number, bound))
            .await?;
        Ok(Node {
            number,
            db,
            writing: Arc::default(),
        })
    }

    /// Beats now. Returns whether this node may take others for dead (see
    /// [`meta::heartbeat`]).
    pub(crate) async fn beat(&self, bound: Duration) -> Result<bool> {
        let number = self.number;
        self.db
            .autocommit(move |conn| meta::heartbeat(conn, number, bound))
            .await
    }

    /// Records that this node is about to write object `extent`: one
    /// statement that commits on its own, without the write lock. The
    /// upload is this node's own in flight until the guard is dropped.
    pub(crate) async fn record_upload(&self, extent: &str) -> Result<UploadGuard> {
        self.writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(extent.to_owned());
        let guard = UploadGuard {
            writing: Arc::clone(&self.writing),
            extent: extent.to_owned(),
        };
        let (extent, node) = (extent.to_owned(), self.number);
        self.db
            .autocommit(move |conn| meta::record_upload(conn, &extent, node))
            .await?;
        Ok(guard)
    }

    /// Records of this node's uploads that no upload of it is running any
    /// more (it failed and its record could not be ended then).
    async fn leftovers(&self) -> Result<Vec<String>> {
        let node = self.number;
        let recorded = self
            .db
            .call(move |conn| meta::uploads_of(conn, node))
            .await?;
        let writing = self
            .writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(recorded
            .into_iter()
            .filter(|e| !writing.contains(e))
            .collect())
    }

    /// Ends the record of an upload that will not be committed. True when
    /// the object is the caller's to delete (see [`meta::forget_upload`]).
    pub(crate) async fn forget_upload(&self, extent: &str) -> Result<bool> {
        let extent = extent.to_owned();
        self.db
            .autocommit(move |conn| meta::forget_upload(conn, &extent))
            .await
    }

    /// Whether committed metadata refers to `extent` (or the collector has
    /// it as garbage).
    pub(crate) async fn is_referenced(&self, extent: &str) -> Result<bool> {
        let extent = extent.to_owned();
        self.db
            .call(move |conn| meta::extent_known(conn, &extent))
            .await
    }

    /// Writes heartbeats every `every` for as long as the store `keep`
    /// lives (holding nothing of it in between, so that a dropped store's
    /// connections close). A failed heartbeat is logged and tried at the
    /// next turn.
    fn spawn_heartbeats(
        number: u64,
        every: Duration,
        bound: Duration,
        keep: std::sync::Weak<crate::store::Inner>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(inner) = keep.upgrade() else { break };
                let db = inner.db.clone();
                drop(inner);
                if let Err(e) = db
                    .autocommit(move |conn| meta::heartbeat(conn, number, bound))
                    .await
                {
                    tracing::warn!(node = number, error = %e, "heartbeat failed");
                }
            }
        })
    }
}

impl Store {
    /// Starts this node's heartbeats (cluster mode; nothing on SQLite).
    pub(crate) fn start_heartbeats(&self) {
        if let Some(node) = &self.inner.node {
            let every = self.inner.config.liveness.heartbeat_every;
            drop(Node::spawn_heartbeats(
                node.number,
                every,
                self.inner.config.liveness.dead_after,
                Arc::downgrade(&self.inner),
            ));
        }
    }

    /// This node's number in the cluster (`None` on SQLite).
    #[doc(hidden)]
    #[must_use]
    pub fn node_number(&self) -> Option<u64> {
        self.inner.node.as_ref().map(|n| n.number)
    }

    /// Reclaims what dead nodes left: deletes the objects of their uploads
    /// in flight (the record first, so that a late commit of such a node
    /// fails instead of naming a deleted object), ends their pending copies
    /// as failed, and forgets the nodes. Returns how many objects it
    /// deleted. Part of every pass of the collector; nothing on SQLite.
    ///
    /// # Errors
    /// Database or object-store failures; what was not done is done by a
    /// later pass (an object whose record was taken but whose delete failed
    /// is left to `check --repair`).
    pub(crate) async fn reclaim_dead_nodes(&self) -> Result<usize> {
        let Some(node) = &self.inner.node else {
            return Ok(0);
        };
        let mut deleted = self.reclaim_own_leftovers(node).await?;
        let bound = self.inner.config.liveness.dead_after;
        // This node beats first: it never takes itself for dead, and it
        // judges others only once it has been beating for the bound itself.
        if !node.beat(bound).await? {
            return Ok(deleted);
        }
        if !self
            .inner
            .db
            .call(move |conn| meta::any_dead_node(conn, bound))
            .await?
        {
            return Ok(deleted);
        }
        let now = self.now();
        loop {
            let (doomed, copies) = self
                .inner
                .db
                .write_again_reserved(move |tx| {
                    let doomed = meta::take_dead_uploads(tx, bound, BATCH)?;
                    let copies = meta::fail_dead_copies(tx, bound, ORPHANED_COPY, now)?;
                    meta::forget_dead_nodes(tx, bound)?;
                    Ok((doomed, copies))
                })
                .await?;
            if copies > 0 {
                tracing::warn!(
                    "{copies} copies from other hosts were run by a node that died: failed"
                );
            }
            let n = doomed.len();
            for extent in &doomed {
                self.inner.extents.delete_partial(extent).await?;
            }
            if n > 0 {
                tracing::info!(count = n, "reclaimed the uploads of dead nodes");
            }
            deleted += n;
            if n < BATCH {
                break;
            }
        }
        Ok(deleted)
    }

    /// Deletes the objects of this node's records that no upload of it is
    /// running (a write that failed while the database could not be
    /// reached, so that its record stayed). The record is taken first, in
    /// a transaction: one that a commit took meanwhile is not there, and
    /// its object stays.
    async fn reclaim_own_leftovers(&self, node: &Node) -> Result<usize> {
        let mut deleted = 0;
        for extent in node.leftovers().await? {
            let (number, taken) = (node.number, extent.clone());
            let taken = self
                .inner
                .db
                .write_again_reserved(move |tx| meta::take_upload(tx, &taken, number))
                .await?;
            if taken {
                self.inner.extents.delete(&extent).await?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// Ends as failed the pending copies whose node is dead (see
    /// [`ORPHANED_COPY`]). Returns how many.
    pub(crate) async fn fail_orphaned_copies(&self) -> Result<usize> {
        let Some(node) = &self.inner.node else {
            return Ok(0);
        };
        let bound = self.inner.config.liveness.dead_after;
        if !node.beat(bound).await? {
            return Ok(0);
        }
        let now = self.now();
        let n = self
            .inner
            .db
            .write_again_reserved(move |tx| meta::fail_dead_copies(tx, bound, ORPHANED_COPY, now))
            .await?;
        if n > 0 {
            tracing::warn!("{n} copies from other hosts were run by a node that died: failed");
        }
        Ok(n)
    }
}
