//! Large extents written straight into the files of a local store, for the
//! bytes of copies from other hosts (docs/wire/copy.md#speed).
//!
//! The task that receives the bytes never waits for the disk while a
//! buffer is free: it gathers the received chunks into one of a few large
//! buffers, reused for the whole copy (no allocation per chunk), and hands
//! each full buffer to a thread of its own, which writes it with direct IO
//! (`O_DIRECT`: from the buffer to the disk, not through the page cache,
//! which on the machines measured wrote three times slower once fsync was
//! counted; bench/README.md). At the end the thread writes the tail,
//! fsyncs the file, renames it into place and fsyncs its directory: the
//! same durable publication as the object store's, so an extent is whole
//! or absent after a crash. The staging file's name has a `#`, so the
//! start-up sweep removes it if the server dies first. A file system that
//! refuses direct IO gets ordinary writes.
//!
//! When the bytes must be hashed (a copy whose source states no MD5, the
//! From-URL writes), a third stage does it: the writing thread passes each
//! buffer it wrote to a hashing thread, which adds it to the MD5 and the
//! CRC64 and only then frees it. Receiving, writing and hashing overlap,
//! each on its own buffer, and the bytes are read once, from the buffers,
//! never again from the file.

use std::fs::File;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use md5::{Digest, Md5};
use rustix::fs::OFlags;
use tokio::sync::mpsc;

use crate::hashing::Crc64;
use crate::{Error, Result};

/// The size of a buffer (a multiple of [`ALIGN`]).
const BUFFER: usize = 4 * 1024 * 1024;
/// Buffers per copy: one being filled, the others queued or being written.
const BUFFERS: usize = 3;
/// Alignment of direct IO: of the memory, the file offset and the length.
const ALIGN: usize = 4096;

/// A buffer whose bytes start at an [`ALIGN`]-aligned address.
struct Aligned {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new() -> Aligned {
        let raw = vec![0u8; BUFFER + ALIGN];
        let start = raw.as_ptr().align_offset(ALIGN);
        Aligned { raw, start, len: 0 }
    }

    /// Copies as much of `bytes` as fits; returns how much.
    fn fill(&mut self, bytes: &[u8]) -> usize {
        let n = bytes.len().min(BUFFER - self.len);
        let at = self.start + self.len;
        self.raw[at..at + n].copy_from_slice(&bytes[..n]);
        self.len += n;
        n
    }

    fn is_full(&self) -> bool {
        self.len == BUFFER
    }

    fn bytes(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }
}

/// The MD5 and CRC64 of the bytes a [`write_file`] wrote.
pub(crate) type Hashes = ([u8; 16], u64);

/// Streams exactly `declared` bytes of `body` into `dest` (its directory
/// is created when missing), durably when `fsync`. Nothing is left at
/// `dest` on failure; the staging file is removed. With `hash`, returns
/// the MD5 and CRC64 of the bytes, computed as they are written.
///
/// # Errors
/// `Body` when the body fails, `BodyLengthMismatch` when it has another
/// length, `Io` when the file cannot be written.
pub(crate) async fn write_file<S>(
    dest: PathBuf,
    mut body: S,
    declared: u64,
    fsync: bool,
    hash: bool,
) -> Result<Option<Hashes>>
where
    S: Stream<Item = std::io::Result<Bytes>> + Unpin,
{
    let (full, to_write) = mpsc::channel::<Aligned>(BUFFERS);
    let (give_back, mut free) = mpsc::channel::<Aligned>(BUFFERS);
    // Written buffers go to the hashing thread, which frees them; without
    // hashing the writer frees them itself.
    let (after_write, hasher) = match hash {
        true => {
            let (to_hash, hashing) = mpsc::channel::<Aligned>(BUFFERS);
            let hasher = std::thread::Builder::new()
                .name("stowage-copy-hash".into())
                .spawn(move || hash_buffers(hashing, give_back))
                .map_err(Error::Io)?;
            (to_hash, Some(hasher))
        }
        false => (give_back, None),
    };
    let writer =
        tokio::task::spawn_blocking(move || write_buffers(&dest, to_write, after_write, fsync));
    let received: Result<()> = async {
        let mut len = 0u64;
        let mut made = 1;
        let mut current = Aligned::new();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(Error::Body)?;
            len += chunk.len() as u64;
            if len > declared {
                return Err(Error::BodyLengthMismatch {
                    declared,
                    received: len,
                });
            }
            let mut rest = &chunk[..];
            while !rest.is_empty() {
                rest = &rest[current.fill(rest)..];
                if current.is_full() {
                    let next = if made < BUFFERS {
                        made += 1;
                        Some(Aligned::new())
                    } else {
                        free.recv().await
                    };
                    let Some(mut next) = next else {
                        // The writer stopped; its error is the answer.
                        return Ok(());
                    };
                    next.len = 0;
                    if full
                        .send(std::mem::replace(&mut current, next))
                        .await
                        .is_err()
                    {
                        return Ok(());
                    }
                }
            }
        }
        if len != declared {
            return Err(Error::BodyLengthMismatch {
                declared,
                received: len,
            });
        }
        if current.len > 0 {
            let _ = full.send(current).await;
        }
        Ok(())
    }
    .await;
    let complete = received.is_ok();
    // Closing the queue tells the writer the body ended: complete, or not
    // (then it removes its staging file).
    drop(full);
    let written = writer
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e)))?;
    // The writer is done, so the hasher has every buffer it will get.
    let hashes = match hasher {
        Some(h) => Some(
            tokio::task::spawn_blocking(move || h.join())
                .await
                .map_err(|e| Error::Io(std::io::Error::other(e)))?
                .map_err(|_| Error::Io(std::io::Error::other("the hashing thread failed")))?,
        ),
        None => None,
    };
    received?;
    let publish = written.map_err(Error::Io)?;
    if !complete {
        // Dropped unpublished: the staging file is removed.
        return Ok(None);
    }
    tokio::task::spawn_blocking(publish)
        .await
        .map_err(|e| Error::Io(std::io::Error::other(e)))?
        .map_err(Error::Io)?;
    Ok(hashes)
}

/// The hashing thread: adds each written buffer to the MD5 and CRC64, in
/// the order written, then frees it. Ends when the writer is done.
fn hash_buffers(mut written: mpsc::Receiver<Aligned>, give_back: mpsc::Sender<Aligned>) -> Hashes {
    let mut md5 = Md5::new();
    let mut crc64 = Crc64::new();
    while let Some(buffer) = written.blocking_recv() {
        md5.update(buffer.bytes());
        crc64.update(buffer.bytes());
        // Gone only when the receiving side stopped.
        let _ = give_back.blocking_send(buffer);
    }
    (md5.finalize().into(), crc64.finish())
}

/// Publishes a written staging file (fsync, rename, fsync of the
/// directory); dropped unrun, it removes the staging file.
type Publish = Box<dyn FnOnce() -> std::io::Result<()> + Send>;

/// The writing thread: writes every buffer it is given into a staging file
/// beside `dest` and gives it back. When the queue closes, it hands back
/// the step that publishes the file (run only when the body was complete).
fn write_buffers(
    dest: &Path,
    mut buffers: mpsc::Receiver<Aligned>,
    give_back: mpsc::Sender<Aligned>,
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
    let file = open_direct(&staging.0)?;
    let mut offset = 0u64;
    while let Some(buffer) = buffers.blocking_recv() {
        write_out(&file, offset, buffer.bytes())?;
        offset += buffer.len as u64;
        // Gone only when the receiving side stopped.
        let _ = give_back.blocking_send(buffer);
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

/// Creates `path` for direct IO, or for ordinary writes where the file
/// system refuses direct IO.
fn open_direct(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    let direct = options
        .clone()
        .custom_flags(OFlags::DIRECT.bits() as i32)
        .open(path);
    match direct {
        Ok(file) => Ok(file),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => {
            options.open(path)
        }
        Err(e) => Err(e),
    }
}

/// Writes `bytes` at `offset` of `file`: the whole blocks directly, a last
/// partial block (the file's tail) as an ordinary write, since direct IO
/// writes whole blocks only. A file system that refuses a direct write
/// gets it again as an ordinary one, at the same offset (so bytes a
/// refused write left behind are written over with the same bytes).
fn write_out(file: &File, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let whole = bytes.len() / ALIGN * ALIGN;
    let direct = rustix::fs::fcntl_getfl(file)?.contains(OFlags::DIRECT);
    if direct && whole > 0 {
        match file.write_all_at(&bytes[..whole], offset) {
            Ok(()) => {
                if whole == bytes.len() {
                    return Ok(());
                }
                ordinary_writes(file)?;
                return file.write_all_at(&bytes[whole..], offset + whole as u64);
            }
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()) => {}
            Err(e) => return Err(e),
        }
    }
    if direct {
        ordinary_writes(file)?;
    }
    file.write_all_at(bytes, offset)
}

/// Turns direct IO off for `file`; it stays off (a tail is the last write).
fn ordinary_writes(file: &File) -> std::io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(file)?;
    rustix::fs::fcntl_setfl(file, flags - OFlags::DIRECT)?;
    Ok(())
}

/// A staging file, removed when dropped before it is published.
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
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
        let cases: [(&[usize], u64, bool, bool); 7] = [
            (&[big, 1000, 5], big as u64 + 1005, false, true),
            // Exactly whole buffers, and more buffers than BUFFERS.
            (&[BUFFER; 5], 5 * BUFFER as u64, false, true),
            (&[65536; 200], 65536 * 200, false, true),
            (
                &[BUFFER + 100, 3 * BUFFER],
                4 * BUFFER as u64 + 100,
                false,
                true,
            ),
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
            let hash = i % 2 == 0;
            let got = write_file(
                dest.clone(),
                futures::stream::iter(items),
                declared,
                true,
                hash,
            )
            .await;
            assert_eq!(got.is_ok(), written, "case {i}: {got:?}");
            if written {
                assert!(std::fs::read(&dest).unwrap() == all, "case {i}");
                let want = hash.then(|| (Md5::digest(&all).into(), Crc64::of(&all)));
                assert_eq!(got.unwrap(), want, "case {i}");
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

    #[test]
    fn a_tail_that_is_not_whole_blocks_is_written_after_the_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = open_direct(&path).unwrap();
        let mut a = Aligned::new();
        let data: Vec<u8> = (0..ALIGN * 3 + 10).map(|i| (i % 7) as u8).collect();
        assert_eq!(a.fill(&data), data.len());
        assert_eq!(a.bytes().as_ptr().align_offset(ALIGN), 0);
        write_out(&file, 0, a.bytes()).unwrap();
        // Direct IO is off after a tail; the next write is ordinary.
        write_out(&file, data.len() as u64, b"end").unwrap();
        drop(file);
        let mut want = data.clone();
        want.extend_from_slice(b"end");
        assert!(std::fs::read(&path).unwrap() == want);
    }
}
