//! Garbage collection of extents, and the start-up sweep of orphans.
//!
//! The bound on disk use: an extent that no blob version references is
//! recorded as garbage in the transaction that dropped its last reference,
//! and a pass of the collector deletes every garbage extent older than the
//! grace period (except those a reader is still streaming), in batches,
//! until none is left; then it gives the metadata file's free pages back.
//! The collector runs again when the oldest garbage left comes of age, and
//! at least every `interval`; as long as `interval` is shorter than the
//! grace period, it is awake before anything recorded while it slept
//! comes of age. So, whatever the rate of overwrites and deletes, the data
//! directory holds the live data, plus what became garbage within the last
//! grace period and the running pass (plus extents pinned by readers, and
//! the disk reserve): the work of a pass is proportional to what became
//! garbage, with no cap per pass.
//!
//! In a cluster each pass also reclaims what dead nodes left: the objects
//! of their uploads in flight and their pending copies
//! (`crate::liveness`). An upload in flight is never garbage: its object
//! is recorded with its node, not in the garbage table.

use std::time::{Duration, SystemTime};

use futures::StreamExt as _;

use crate::meta::{self, GarbageCursor};
use crate::{Result, Store};

/// Rows handled in one metadata transaction: a pass runs as many batches as
/// it needs, and the writes of clients are committed between them.
const BATCH: usize = 500;
/// Extent files deleted at once.
const DELETES_IN_FLIGHT: usize = 16;
/// The shortest pause between two passes of the collector, so that garbage
/// pinned by a slow reader does not make it spin.
const MIN_PAUSE: Duration = Duration::from_millis(200);

impl Store {
    /// Deletes every garbage extent whose grace period has passed (measured
    /// with the injected clock) and that no reader is streaming, and
    /// expires uncommitted blocks past their lifetime. Returns how many
    /// extents were deleted. The server's collector calls this; tests call
    /// it after advancing the clock.
    ///
    /// # Errors
    /// Database or object-store failures; what was not deleted stays garbage
    /// and is retried on the next pass.
    pub async fn collect_garbage(&self) -> Result<usize> {
        let inner = &self.inner;
        let now = inner.clock.now();
        let cutoff = now
            .checked_sub(inner.config.gc_grace)
            .unwrap_or(std::time::UNIX_EPOCH);
        let block_cutoff = now
            .checked_sub(crate::store::UNCOMMITTED_BLOCK_LIFETIME)
            .unwrap_or(std::time::UNIX_EPOCH);
        // The uploads and copies of nodes of a cluster that died
        // (`crate::liveness`).
        let reclaimed = self.reclaim_dead_nodes().await?;
        // Soft-deleted containers past their retention, and blobs past
        // their expiry time, go with everything they hold; their extents
        // become garbage like those of any delete.
        while self.purge_deleted_containers(now, BATCH).await? == BATCH {}
        while self.purge_expired_blobs(now, BATCH).await? == BATCH {}
        // Uncommitted blocks that outlived their lifetime (B12) become
        // garbage; a blob that was nothing but those blocks disappears.
        loop {
            let expired = inner
                .db
                .write_again_reserved(move |tx| {
                    let blobs = meta::blobs_with_stale_blocks(tx, block_cutoff, BATCH)?;
                    for &blob_id in &blobs {
                        let extents = meta::take_blocks(tx, blob_id)?;
                        meta::collect_unreferenced(tx, &extents, now)?;
                        meta::delete_uncommitted_blob(tx, blob_id)?;
                    }
                    Ok(blobs.len())
                })
                .await?;
            if expired < BATCH {
                break;
            }
        }
        // Soft-deleted blobs, snapshots and versions whose retention ended
        // are purged; what only they referenced becomes garbage now.
        while self.purge_expired(BATCH).await? == BATCH {}
        let mut cursor = GarbageCursor::start();
        let mut deleted = reclaimed;
        loop {
            let (doomed, seen, next) = self.forget_due_garbage(cutoff, cursor).await?;
            cursor = next;
            deleted += doomed.len();
            let extents = inner.extents.clone();
            let outcomes: Vec<Result<()>> = futures::stream::iter(doomed)
                .map(move |extent| {
                    let extents = extents.clone();
                    async move { extents.delete(&extent).await }
                })
                .buffer_unordered(DELETES_IN_FLIGHT)
                .collect()
                .await;
            outcomes.into_iter().collect::<Result<()>>()?;
            if seen < BATCH {
                break;
            }
        }
        if deleted > 0 {
            inner
                .db
                .write_reserved(|tx| meta::reclaim_free_pages(tx))
                .await?;
            inner.space.recover().await;
        }
        Ok(deleted)
    }

    /// Forgets up to one batch of due garbage after `cursor`, skipping
    /// pinned extents, in one transaction that also checks the pins; a crash
    /// before the objects are deleted leaves orphans that the start-up sweep
    /// removes. Returns the extents to delete, how many rows were looked
    /// at, and where the next batch starts.
    async fn forget_due_garbage(
        &self,
        cutoff: SystemTime,
        cursor: GarbageCursor,
    ) -> Result<(Vec<String>, usize, GarbageCursor)> {
        let pins = self.inner.pins.clone();
        self.inner
            .db
            .write_again_reserved(move |tx| {
                // Each attempt starts where the batch starts.
                let mut cursor = cursor.clone();
                let due = meta::garbage_before(tx, cutoff, &mut cursor, BATCH)?;
                let seen = due.len();
                let mut doomed = Vec::with_capacity(seen);
                for extent in due {
                    if pins.is_pinned(&extent) {
                        continue;
                    }
                    meta::forget_garbage(tx, &extent)?;
                    if crate::extents::is_inline(&extent) {
                        // Its bytes go with this transaction.
                        meta::delete_inline(tx, &extent)?;
                    }
                    doomed.push(extent);
                }
                Ok((doomed, seen, cursor))
            })
            .await
    }

    /// Caps the metadata database at `pages` pages (SQLite's
    /// `max_page_count`; never below its current size, which it returns),
    /// so that a write that needs more fails as on a full disk. For tests
    /// that inject a full disk into the database layer.
    ///
    /// # Errors
    /// Database failures.
    #[doc(hidden)]
    pub async fn limit_database_pages(&self, pages: u64) -> Result<u64> {
        self.inner
            .db
            .write_again_reserved(move |tx| {
                let pages = i64::try_from(pages).unwrap_or(i64::MAX);
                let set: i64 =
                    tx.sqlite()?
                        .pragma_update_and_check(None, "max_page_count", pages, |r| r.get(0))?;
                Ok(u64::try_from(set).unwrap_or_default())
            })
            .await
    }

    /// How long the collector may wait before the oldest garbage comes of
    /// age: `None` when there is no garbage.
    async fn until_next_due(&self) -> Result<Option<Duration>> {
        let oldest = self.inner.db.call(meta::oldest_garbage).await?;
        Ok(oldest.map(|since| {
            let due = since + self.inner.config.gc_grace;
            due.duration_since(self.inner.clock.now())
                .unwrap_or_default()
        }))
    }

    /// Deletes extents that no metadata references and that are not
    /// recorded as garbage: what a crash between writing an extent and
    /// committing its metadata leaves behind. Runs at open, before any
    /// request is served, so no upload can be in flight.
    pub(crate) async fn sweep_orphans(&self) -> Result<usize> {
        let inner = &self.inner;
        if inner.config.objects.is_remote() {
            // Other nodes share these objects: an extent unknown to this
            // node's metadata may be theirs, or an upload still in flight.
            tracing::info!(
                objects = %inner.config.objects,
                "no orphan sweep at start: the object store is shared"
            );
            return Ok(0);
        }
        let staging = inner.extents.sweep_staging()?;
        if staging > 0 {
            tracing::info!(
                count = staging,
                "removed staging files of interrupted uploads"
            );
        }
        let all = inner.extents.list().await?;
        let orphans = inner
            .db
            .call(move |conn| {
                let mut orphans = Vec::new();
                for id in all {
                    if !meta::extent_known(conn, &id)? {
                        orphans.push(id);
                    }
                }
                Ok(orphans)
            })
            .await?;
        for id in &orphans {
            inner.extents.delete(id).await?;
        }
        if !orphans.is_empty() {
            tracing::info!(
                count = orphans.len(),
                "removed orphan extents left by a crash"
            );
        }
        Ok(orphans.len())
    }

    /// Runs [`Store::collect_garbage`] whenever the oldest garbage comes of
    /// age, and at least every `interval`, until the store is dropped by
    /// everyone else. Failures are logged and retried.
    pub fn spawn_collector(&self, interval: Duration) -> tokio::task::JoinHandle<()> {
        let weak = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                let Some(inner) = weak.upgrade() else { break };
                let store = Store { inner };
                if let Err(e) = store.collect_garbage().await {
                    tracing::error!(error = %e, "garbage collection pass failed");
                }
                let next_due = store.until_next_due().await.unwrap_or_else(|e| {
                    tracing::error!(error = %e, "garbage collection pass failed");
                    None
                });
                let pause = pause(next_due, interval);
                drop(store);
                tokio::time::sleep(pause).await;
            }
        })
    }
}

/// How long the collector sleeps after a pass: until the oldest garbage
/// left comes of age (`next_due`), but at least [`MIN_PAUSE`] (garbage
/// pinned by a reader is past due and must not make it spin) and at most
/// `interval` (so garbage recorded while it sleeps is not waited on longer
/// than that).
fn pause(next_due: Option<Duration>, interval: Duration) -> Duration {
    let longest = interval.max(MIN_PAUSE);
    next_due.map_or(longest, |due| due.clamp(MIN_PAUSE, longest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_sleeps_until_the_oldest_garbage_comes_of_age() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        let cases = [
            // (next due, interval, pause)
            (None, s(10), s(10)),
            (Some(s(3)), s(10), s(3)),
            (Some(s(25)), s(10), s(10)),
            (Some(Duration::ZERO), s(10), MIN_PAUSE),
            (Some(ms(50)), s(10), MIN_PAUSE),
            (Some(s(3)), ms(10), MIN_PAUSE),
            (None, ms(10), MIN_PAUSE),
        ];
        for (due, interval, expected) in cases {
            assert_eq!(pause(due, interval), expected, "{due:?} {interval:?}");
        }
    }
}
