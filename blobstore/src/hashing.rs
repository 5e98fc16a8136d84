//! The MD5 of a request body, computed as the body streams in.

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use md5::{Digest, Md5};
use tokio::sync::{mpsc, oneshot};

use crate::{Error, Result};

/// Bodies at least this long are hashed on a thread of their own.
const BACKGROUND_FROM: u64 = 16 * 1024 * 1024;
/// Bytes handed to the hashing thread at a time.
const BATCH: usize = 256 * 1024;
/// Batches queued for the hashing thread before the body waits for it: the
/// memory a large upload holds beyond its part buffers, and the slack that
/// keeps the thread busy while the receiving task is elsewhere.
const QUEUED_BATCHES: usize = 64;
/// Hashing threads at once. MD5 is one long dependency chain per body, so a
/// body is hashed by one core at a time anyway; past this, bodies are
/// hashed in place by the task that receives them.
const MAX_THREADS: usize = 2;

/// Hashing threads running now (see [`MAX_THREADS`]).
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// MD5 of a body fed chunk by chunk.
///
/// A large body is hashed on a thread of its own, fed through a short
/// queue, while the task that feeds it goes on receiving and writing: MD5
/// runs at about 600 MB/s on one core here (bench/README.md), the largest
/// single cost of a large upload, and this way the hashing thread never
/// waits for the receiving task to wake and hand it the next batch. It is a
/// plain thread, not a task on tokio's blocking pool: the pool is bounded,
/// and a hasher that held a pool thread for a whole upload could leave the
/// upload's own part writes without one. Smaller bodies are hashed in place.
pub(crate) struct BodyMd5 {
    mode: Mode,
    batch: Vec<Bytes>,
    batched: usize,
}

enum Mode {
    InPlace(Md5),
    Thread {
        queue: mpsc::Sender<Vec<Bytes>>,
        digest: oneshot::Receiver<[u8; 16]>,
    },
}

impl BodyMd5 {
    /// For a body of `declared` bytes.
    pub(crate) fn new(declared: u64) -> BodyMd5 {
        let mode = if declared >= BACKGROUND_FROM {
            spawn_hasher().unwrap_or_else(|| Mode::InPlace(Md5::new()))
        } else {
            Mode::InPlace(Md5::new())
        };
        BodyMd5 {
            mode,
            batch: Vec::new(),
            batched: 0,
        }
    }

    /// Adds `chunk`; waits only when the hashing thread is
    /// [`QUEUED_BATCHES`] behind.
    pub(crate) async fn update(&mut self, chunk: &Bytes) -> Result<()> {
        if let Mode::InPlace(md5) = &mut self.mode {
            md5.update(chunk);
            return Ok(());
        }
        self.batched += chunk.len();
        self.batch.push(chunk.clone());
        if self.batched >= BATCH {
            self.hand_off().await?;
        }
        Ok(())
    }

    /// The digest of everything fed.
    pub(crate) async fn finish(mut self) -> Result<[u8; 16]> {
        self.hand_off().await?;
        match self.mode {
            Mode::InPlace(md5) => Ok(md5.finalize().into()),
            Mode::Thread { queue, digest } => {
                // Closing the queue tells the thread the body is complete.
                drop(queue);
                digest.await.map_err(|_| hasher_lost())
            }
        }
    }

    /// Queues the pending batch for the hashing thread.
    async fn hand_off(&mut self) -> Result<()> {
        let Mode::Thread { queue, .. } = &self.mode else {
            return Ok(());
        };
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        self.batched = 0;
        queue.send(batch).await.map_err(|_| hasher_lost())
    }
}

/// Starts a hashing thread, unless [`MAX_THREADS`] are running or the
/// system refuses a thread.
fn spawn_hasher() -> Option<Mode> {
    let running = THREADS.fetch_add(1, Ordering::AcqRel);
    if running >= MAX_THREADS {
        THREADS.fetch_sub(1, Ordering::AcqRel);
        return None;
    }
    let (queue, mut batches) = mpsc::channel::<Vec<Bytes>>(QUEUED_BATCHES);
    let (done, digest) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("stowage-md5".into())
        .spawn(move || {
            let mut md5 = Md5::new();
            // Ends when the sender is dropped: the body is complete (the
            // digest is wanted) or the upload failed (nobody listens).
            while let Some(batch) = batches.blocking_recv() {
                for piece in &batch {
                    md5.update(piece);
                }
            }
            THREADS.fetch_sub(1, Ordering::AcqRel);
            let _ = done.send(md5.finalize().into());
        });
    if spawned.is_err() {
        THREADS.fetch_sub(1, Ordering::AcqRel);
        return None;
    }
    Some(Mode::Thread { queue, digest })
}

/// A hashing thread that went away before giving its digest (it panicked).
fn hasher_lost() -> Error {
    Error::Io(std::io::Error::other("the body's MD5 thread stopped"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fed in uneven chunks, both ways give the one-shot digest.
    #[tokio::test]
    async fn in_place_and_background_digests_match_one_shot() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let expected: [u8; 16] = Md5::digest(&data).into();
        for declared in [1, BACKGROUND_FROM] {
            let mut md5 = BodyMd5::new(declared);
            for chunk in data.chunks(70_001) {
                md5.update(&Bytes::copy_from_slice(chunk)).await.unwrap();
            }
            assert_eq!(md5.finish().await.unwrap(), expected, "declared {declared}");
        }
        let empty: [u8; 16] = Md5::digest(b"").into();
        for declared in [0, BACKGROUND_FROM] {
            assert_eq!(BodyMd5::new(declared).finish().await.unwrap(), empty);
        }
    }

    /// More large bodies at once than there may be hashing threads: no more
    /// threads start than the limit, the rest hash in place, and every
    /// digest is right, also beside a body dropped half way.
    #[tokio::test]
    async fn bodies_past_the_thread_limit_hash_in_place() {
        let data = Bytes::from((0..600_000u32).map(|i| (i % 253) as u8).collect::<Vec<_>>());
        let expected: [u8; 16] = Md5::digest(&data).into();
        let mut bodies: Vec<BodyMd5> = (0..MAX_THREADS + 2)
            .map(|_| BodyMd5::new(BACKGROUND_FROM))
            .collect();
        let threaded = bodies
            .iter()
            .filter(|b| matches!(b.mode, Mode::Thread { .. }))
            .count();
        assert!(threaded <= MAX_THREADS, "{threaded} threads");
        for body in &mut bodies {
            body.update(&data).await.unwrap();
        }
        let abandoned = bodies.pop().unwrap();
        drop(abandoned);
        for body in bodies {
            assert_eq!(body.finish().await.unwrap(), expected);
        }
    }
}
