//! The checksums of a request body, computed as the body streams in: MD5,
//! and the CRC64 of Azure Storage.

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

/// The CRC64 Azure Storage uses for `x-ms-content-crc64`: CRC-64/NVME
/// (reflected polynomial 0x9A6C9329AC4BC9B5, initial value and final XOR
/// all ones). SIMD-accelerated, so it costs little next to MD5 and is
/// computed in place over every body.
#[derive(Clone)]
pub struct Crc64(crc64fast_nvme::Digest);

impl Crc64 {
    /// An empty digest.
    pub fn new() -> Crc64 {
        Crc64(crc64fast_nvme::Digest::new())
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    /// The CRC of everything added.
    pub fn finish(&self) -> u64 {
        self.0.sum64()
    }

    /// The CRC of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut crc = Crc64::new();
        crc.update(bytes);
        crc.finish()
    }

    /// The CRC as it travels in `x-ms-content-crc64`: its 8 bytes, least
    /// significant first.
    pub fn to_bytes(crc: u64) -> [u8; 8] {
        crc.to_le_bytes()
    }
}

impl Default for Crc64 {
    fn default() -> Crc64 {
        Crc64::new()
    }
}

impl std::fmt::Debug for Crc64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Crc64({:016x})", self.finish())
    }
}

/// A hashing thread that went away before giving its digest (it panicked).
fn hasher_lost() -> Error {
    Error::Io(std::io::Error::other("the body's MD5 thread stopped"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known values: the CRC-64/NVME check value, and the vectors the Azure
    /// Storage SDKs test their CRC64 against (given there as unsigned
    /// decimals).
    #[test]
    fn crc64_known_vectors() {
        let table: &[(&[u8], u64)] = &[
            (b"", 0),
            (b"123456789", 0xAE8B_1486_0A79_9888),
            (b"Hello World!", 208_604_604_655_264_165),
            (b"123456789!@#$%^&*()", 2_153_758_901_452_455_624),
            (
                b"This is a test where the data is longer than 64 characters so that we can test that code path.",
                2_736_107_658_526_394_369,
            ),
            (
                &[0xC8, 0xE1, 0x1B, 0x40, 0xD7, 0x93, 0xD1, 0x52, 0x60, 0x18],
                3_386_042_136_331_673_945,
            ),
        ];
        for (data, expected) in table {
            assert_eq!(Crc64::of(data), *expected, "{data:?}");
        }
    }

    /// Fed in uneven chunks, the CRC is the one-shot CRC.
    #[test]
    fn crc64_in_chunks_matches_one_shot() {
        let data: Vec<u8> = (0..1_000_003u32).map(|i| (i % 251) as u8).collect();
        let mut crc = Crc64::new();
        for chunk in data.chunks(7_919) {
            crc.update(chunk);
        }
        assert_eq!(crc.finish(), Crc64::of(&data));
        assert_eq!(
            Crc64::to_bytes(0x0102_0304_0506_0708),
            [8, 7, 6, 5, 4, 3, 2, 1]
        );
    }

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
