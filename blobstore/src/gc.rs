//! Garbage collection of extents, and the start-up sweep of orphans.

use std::time::Duration;

use crate::meta;
use crate::{Result, Store};

/// How many garbage extents one collection pass deletes at most.
const BATCH: usize = 1000;

impl Store {
    /// Deletes garbage extents whose grace period has passed (measured with
    /// the injected clock) and that no reader is streaming. Returns how many
    /// were deleted. The server calls this periodically; tests call it after
    /// advancing the clock.
    ///
    /// # Errors
    /// Database or object-store failures; what was not deleted stays garbage
    /// and is retried on the next pass.
    pub async fn collect_garbage(&self) -> Result<usize> {
        let inner = &self.inner;
        let cutoff = inner
            .clock
            .now()
            .checked_sub(inner.config.gc_grace)
            .unwrap_or(std::time::UNIX_EPOCH);
        let pins = inner.pins.clone();
        let now = inner.clock.now();
        let block_cutoff = now
            .checked_sub(crate::store::UNCOMMITTED_BLOCK_LIFETIME)
            .unwrap_or(std::time::UNIX_EPOCH);
        // Uncommitted blocks that outlived their lifetime (B12) become
        // garbage; a blob that was nothing but those blocks disappears.
        inner
            .db
            .write(move |tx| {
                for blob_id in meta::blobs_with_stale_blocks(tx, block_cutoff, BATCH)? {
                    let extents = meta::take_blocks(tx, blob_id)?;
                    meta::collect_unreferenced(tx, &extents, now)?;
                    meta::delete_uncommitted_blob(tx, blob_id)?;
                }
                Ok(())
            })
            .await?;
        // Forget the rows first, in one transaction that also checks the
        // pins; a crash before the objects are deleted leaves orphans that
        // the start-up sweep removes.
        let doomed = inner
            .db
            .write(move |tx| {
                let mut doomed = Vec::new();
                for extent in meta::garbage_before(tx, cutoff, BATCH)? {
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
                Ok(doomed)
            })
            .await?;
        for extent in &doomed {
            inner.extents.delete(extent).await?;
        }
        Ok(doomed.len())
    }

    /// Deletes extents that no metadata references and that are not
    /// recorded as garbage: what a crash between writing an extent and
    /// committing its metadata leaves behind. Runs at open, before any
    /// request is served, so no upload can be in flight.
    pub(crate) async fn sweep_orphans(&self) -> Result<usize> {
        let inner = &self.inner;
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

    /// Runs [`Store::collect_garbage`] every `interval` until the store is
    /// dropped by everyone else. Failures are logged and retried.
    pub fn spawn_collector(&self, interval: Duration) -> tokio::task::JoinHandle<()> {
        let weak = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                let store = Store { inner };
                if let Err(e) = store.collect_garbage().await {
                    tracing::error!(error = %e, "garbage collection pass failed");
                }
            }
        })
    }
}
