//! Large extents written straight into the files of a local store, for the
//! bytes of copies from other hosts (docs/wire/copy.md#speed).
//!
//! The task that receives the bytes never waits for the disk: it hands
//! batches of received chunks through a short queue to a thread of their
//! own, which writes each batch with one vectored write (the chunks as
//! they arrived, never copied), asks the kernel to start writing back every
//! [`WRITEBACK_EVERY`] bytes so that the final fsync finds little left to
//! do, and at the end fsyncs the file, renames it into place and fsyncs
//! its directory: the same durable publication as the object store's, so
//! an extent is whole or absent after a crash. The staging file's name
//! has a `#`, so the start-up sweep removes it if the server dies first.

use std::fs::File;
use std::io::{IoSlice, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::sync::mpsc;

use crate::{Error, Result};

/// Bytes gathered before a batch goes to the writing thread.
const BATCH: usize = 1024 * 1024;
/// Batches queued for the writing thread: with [`BATCH`], the memory one
/// copy holds beyond the chunk being received.
const QUEUED_BATCHES: usize = 8;
/// The kernel is asked to write back the file's dirty pages each time this
/// many more bytes were written.
const WRITEBACK_EVERY: u64 = 16 * 1024 * 1024;

/// Streams exactly `declared` bytes of `body` into `dest` (its directory
/// is created when missing), durably when `fsync`. Nothing is left at
/// `dest` on failure; the staging file is removed.
///
/// # Errors
/// `Body` when the body fails, `BodyLengthMismatch` when it has another
/// length, `Io` when the file cannot be written.
pub(crate) async fn write_file<S>(
    dest: PathBuf,
    mut body: S,
    declared: u64,
    fsync: bool,
) -> Result<()>
where
    S: Stream<Item = std::io::Result<Bytes>> + Unpin,
{
    let (queue, batches) = mpsc::channel::<Vec<Bytes>>(QUEUED_BATCHES);
    let writer = tokio::task::spawn_blocking(move || write_batches(&dest, batches, fsync));
    let received: Result<()> = async {
        let mut len = 0u64;
        let mut batch = Vec::new();
        let mut batched = 0usize;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(Error::Body)?;
            len += chunk.len() as u64;
            if len > declared {
                return Err(Error::BodyLengthMismatch {
                    declared,
                    received: len,
                });
            }
            batched += chunk.len();
            batch.push(chunk);
            if batched >= BATCH {
                batched = 0;
                if queue.send(std::mem::take(&mut batch)).await.is_err() {
                    // The writer stopped; its error is the answer.
                    return Ok(());
                }
            }
        }
        if len != declared {
            return Err(Error::BodyLengthMismatch {
                declared,
                received: len,
            });
        }
        if !batch.is_empty() {
            let _ = queue.send(batch).await;
        }
        Ok(())
    }
    .await;
    let complete = received.is_ok();
    // Closing the queue tells the writer the body ended: complete, or not
    // (then it removes its staging file).
    drop(queue);
    let written = writer
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e)))?;
    received?;
    let publish = written.map_err(Error::Io)?;
    if !complete {
        // Dropped unpublished: the staging file is removed.
        return Ok(());
    }
    tokio::task::spawn_blocking(publish)
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e)))?
        .map_err(Error::Io)
}

/// Publishes a written staging file (fsync, rename, fsync of the
/// directory); dropped unrun, it removes the staging file.
type Publish = Box<dyn FnOnce() -> std::io::Result<()> + Send>;

/// The writing thread: writes every batch it is given into a staging file
/// beside `dest`. When the queue closes, it hands back the step that
/// publishes the file (run only when the body was complete).
fn write_batches(
    dest: &Path,
    mut batches: mpsc::Receiver<Vec<Bytes>>,
    fsync: bool,
) -> std::io::Result<Publish> {
    let dir = dest
        .parent()
        .ok_or_else(|| std::io::Error::other("no directory"))?;
    let created_dir = !dir.exists();
    std::fs::create_dir_all(dir)?;
    let name = dest
        .file_name()
        .ok_or_else(|| std::io::Error::other("no file name"))?
        .to_string_lossy()
        .into_owned();
    let staging = Staging(dir.join(format!("{name}#copy")));
    let mut file = File::create(&staging.0)?;
    let mut written = 0u64;
    let mut flushed = 0u64;
    while let Some(batch) = batches.blocking_recv() {
        write_all_vectored(&mut file, &batch)?;
        written += batch.iter().map(|b| b.len() as u64).sum::<u64>();
        if fsync && written - flushed >= WRITEBACK_EVERY {
            start_writeback(&file, flushed, written - flushed);
            flushed = written;
        }
    }
    let dest = dest.to_owned();
    Ok(Box::new(move || {
        if fsync {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&staging.0, &dest)?;
        std::mem::forget(staging);
        if fsync {
            File::open(dest.parent().unwrap_or(Path::new(".")))?.sync_all()?;
            if created_dir && let Some(up) = dest.parent().and_then(Path::parent) {
                File::open(up)?.sync_all()?;
            }
        }
        Ok(())
    }))
}

/// A staging file, removed when dropped before it is published.
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes every byte of `chunks`, as few write calls as the kernel allows.
fn write_all_vectored(file: &mut File, chunks: &[Bytes]) -> std::io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = chunks.iter().map(|c| IoSlice::new(c)).collect();
    let mut slices = &mut slices[..];
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Asks the kernel to start writing `len` bytes of `file` from `offset` to
/// the disk, without waiting (`POSIX_FADV_DONTNEED` starts the write-back
/// of dirty pages on Linux). Only a hint: the final fsync is what makes
/// the bytes durable.
fn start_writeback(file: &File, offset: u64, len: u64) {
    let _ = rustix::fs::fadvise(
        file,
        offset,
        std::num::NonZeroU64::new(len),
        rustix::fs::Advice::DontNeed,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(sizes: &[usize]) -> (Vec<std::io::Result<Bytes>>, Vec<u8>) {
        let mut all = Vec::new();
        let mut out = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let bytes: Vec<u8> = (0..n).map(|j| ((i * 31 + j) % 251) as u8).collect();
            all.extend_from_slice(&bytes);
            out.push(Ok(Bytes::from(bytes)));
        }
        (out, all)
    }

    #[tokio::test]
    async fn the_bytes_arrive_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let big = 3 * 1024 * 1024 + 17;
        // (chunk sizes, declared, body fails at the end, written)
        let cases: [(&[usize], u64, bool, bool); 5] = [
            (&[big, 1000, 5], big as u64 + 1005, false, true),
            (&[65536; 40], 65536 * 40, false, true),
            (&[100, 100], 300, false, false),
            (&[100, 100], 150, false, false),
            (&[big, 100], big as u64 + 200, true, false),
        ];
        for (i, (sizes, declared, fails, written)) in cases.into_iter().enumerate() {
            let dest = dir.path().join(format!("d{i}")).join("extent");
            let (mut items, all) = chunks(sizes);
            if fails {
                items.push(Err(std::io::Error::other("reset")));
            }
            let got = write_file(dest.clone(), futures::stream::iter(items), declared, true).await;
            assert_eq!(got.is_ok(), written, "case {i}: {got:?}");
            if written {
                assert_eq!(std::fs::read(&dest).unwrap(), all, "case {i}");
            } else {
                assert!(!dest.exists(), "case {i}");
            }
            let left: Vec<_> = std::fs::read_dir(dest.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left.len(), usize::from(written), "case {i}: {left:?}");
        }
    }
}
