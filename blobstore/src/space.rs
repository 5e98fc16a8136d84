//! Room on the disk of the data directory, and what the store does when
//! there is none.
//!
//! At open the store allocates a reserve file of [`StoreConfig::disk_reserve`]
//! bytes in the data directory. When a write fails because the disk is full
//! (`ENOSPC`, or SQLite's `SQLITE_FULL`), the store marks itself full and
//! deletes the reserve: the room it held lets deletes, lease actions and the
//! garbage collector commit (their transactions need a few pages of WAL),
//! so a client can free space through the API. While full, every other
//! write is refused at once with [`Error::DiskFull`], before it reads a
//! body. The store tries to leave that state (allocate the reserve again
//! and as much room again beside it) when the collector has deleted
//! something, and at most once a second when a write arrives; when that
//! works, writes are accepted again, with no restart.
//!
//! Nothing is corrupted by a full disk: an extent that cannot be written is
//! never referenced, and SQLite rolls back a transaction it cannot commit.
//!
//! [`StoreConfig::disk_reserve`]: crate::StoreConfig::disk_reserve

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use stowage_leases::Clock;

use crate::{Error, Result};

/// The reserve file's name in the data directory.
const RESERVE_FILE: &str = "disk-reserve";
/// How often a refused write may try to leave the full state.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// The full-disk state of one store.
#[derive(Debug)]
pub(crate) struct Space {
    /// The reserve file; `None` for a store in memory, which has no disk.
    reserve: Option<PathBuf>,
    size: u64,
    full: AtomicBool,
    clock: Arc<dyn Clock>,
    /// When leaving the full state was last tried (by the injected clock).
    last_try: Mutex<Option<SystemTime>>,
}

impl Space {
    /// For a store in memory: never full.
    pub(crate) fn none(clock: Arc<dyn Clock>) -> Space {
        Space {
            reserve: None,
            size: 0,
            full: AtomicBool::new(false),
            clock,
            last_try: Mutex::new(None),
        }
    }

    /// Allocates the reserve in `dir`; on a disk already full the store
    /// starts full (and so a restart on a full disk still serves deletes).
    ///
    /// # Errors
    /// The reserve cannot be written for another reason than a full disk.
    pub(crate) fn open(dir: &Path, size: u64, clock: Arc<dyn Clock>) -> Result<Space> {
        let space = Space {
            reserve: Some(dir.join(RESERVE_FILE)),
            size,
            full: AtomicBool::new(false),
            clock,
            last_try: Mutex::new(None),
        };
        match space.refill() {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!("the disk of the data directory is full: only deletes are served");
                space.full.store(true, Ordering::SeqCst);
            }
            Err(e) => return Err(e.into()),
        }
        Ok(space)
    }

    pub(crate) fn is_full(&self) -> bool {
        self.full.load(Ordering::SeqCst)
    }

    /// Lets a write that needs room proceed, or refuses it with
    /// [`Error::DiskFull`] while the disk is full.
    pub(crate) async fn admit(self: &Arc<Self>) -> Result<()> {
        if !self.is_full() {
            return Ok(());
        }
        let now = self.clock.now();
        let due = {
            let mut last = self.last_try.lock().unwrap_or_else(|e| e.into_inner());
            let due = last.is_none_or(|t| now.duration_since(t).unwrap_or_default() >= RETRY_EVERY);
            if due {
                *last = Some(now);
            }
            due
        };
        if due && self.recover().await {
            return Ok(());
        }
        Err(Error::DiskFull)
    }

    /// Passes `out` through, turning a full-disk failure into
    /// [`Error::DiskFull`] and entering the full state.
    pub(crate) fn observe<T>(&self, out: Result<T>) -> Result<T> {
        match out {
            Err(e) if e.is_disk_full() => {
                self.mark_full();
                Err(Error::DiskFull)
            }
            out => out,
        }
    }

    fn mark_full(&self) {
        // The next second of writes is refused without a probe.
        *self.last_try.lock().unwrap_or_else(|e| e.into_inner()) = Some(self.clock.now());
        if self.full.swap(true, Ordering::SeqCst) {
            return;
        }
        tracing::warn!(
            "the disk of the data directory is full: writes are refused, deletes are served \
             on the reserve until space comes back"
        );
        let released = self.reserve.as_ref().map(std::fs::remove_file);
        if let Some(Err(e)) = released {
            tracing::error!(error = %e, "could not release the disk reserve");
        }
    }

    /// Tries to leave the full state; true when the store is not full (any
    /// more). Called by the collector after it deleted something.
    pub(crate) async fn recover(self: &Arc<Self>) -> bool {
        if !self.is_full() {
            return true;
        }
        let space = Arc::clone(self);
        let refilled = tokio::task::spawn_blocking(move || space.refill())
            .await
            .map_err(std::io::Error::other)
            .and_then(|r| r);
        match refilled {
            Ok(true) => {
                self.full.store(false, Ordering::SeqCst);
                tracing::info!("the data directory has room again: writes are accepted");
                true
            }
            Ok(false) => false,
            Err(e) => {
                tracing::error!(error = %e, "could not allocate the disk reserve");
                false
            }
        }
    }

    /// Allocates the reserve, and checks that as much room again is free
    /// beside it (so that leaving the full state is not undone by the next
    /// write). `Ok(false)` when the disk has not that much room; then
    /// nothing is left allocated.
    fn refill(&self) -> std::io::Result<bool> {
        let Some(path) = &self.reserve else {
            return Ok(true);
        };
        if !allocate(path, self.size)? {
            return Ok(false);
        }
        let probe = path.with_extension("probe");
        let room = allocate(&probe, self.size)?;
        let _ = std::fs::remove_file(&probe);
        if !room {
            let _ = std::fs::remove_file(path);
        }
        Ok(room)
    }
}

/// Allocates the first `len` bytes of `file`: `fallocate`, or writing
/// zeros on a file system without it.
fn allocate_blocks(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    use std::io::Write as _;
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => return Ok(()),
        Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS => {}
        Err(e) => return Err(e.into()),
    }
    let zeros = vec![0u8; 1 << 20];
    let mut writer = file;
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        writer.write_all(&zeros[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Makes `path` a file of `len` allocated bytes (not a sparse file: the
/// blocks are the file system's to give back). `Ok(false)` when the disk
/// is full; the file is then removed.
fn allocate(path: &Path, len: u64) -> std::io::Result<bool> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(path)?;
    let outcome = allocate_blocks(&file, len).and_then(|()| file.sync_all().map(|()| true));
    match outcome {
        Ok(done) => Ok(done),
        Err(e)
            if e.kind() == std::io::ErrorKind::StorageFull
                || e.kind() == std::io::ErrorKind::QuotaExceeded =>
        {
            drop(file);
            let _ = std::fs::remove_file(path);
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stowage_leases::ManualClock;

    fn clock() -> Arc<ManualClock> {
        Arc::new(ManualClock::new(
            std::time::UNIX_EPOCH + Duration::from_secs(1_000_000),
        ))
    }

    fn full_disk() -> Error {
        Error::Io(std::io::Error::from(std::io::ErrorKind::StorageFull))
    }

    /// A full-disk failure releases the reserve and refuses writes until
    /// recovery succeeds; other failures change nothing.
    #[tokio::test]
    async fn a_full_disk_releases_the_reserve_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let clock = clock();
        let space = Arc::new(Space::open(dir.path(), 4096, clock.clone()).unwrap());
        let reserve = dir.path().join(RESERVE_FILE);
        assert_eq!(std::fs::metadata(&reserve).unwrap().len(), 4096);
        assert!(space.admit().await.is_ok());

        let other = space.observe::<()>(Err(Error::Internal("x".into())));
        assert!(matches!(other, Err(Error::Internal(_))));
        assert!(!space.is_full());

        let out = space.observe::<()>(Err(full_disk()));
        assert!(matches!(out, Err(Error::DiskFull)));
        assert!(space.is_full());
        assert!(!reserve.exists(), "the reserve is released");

        // Writes within the next second are refused without a probe; then
        // a refused write tries to recover (and here succeeds: the
        // temporary directory has room).
        assert!(matches!(space.admit().await, Err(Error::DiskFull)));
        clock.advance(RETRY_EVERY);
        assert!(space.admit().await.is_ok());
        assert!(!space.is_full());
        assert!(reserve.exists());
    }

    #[tokio::test]
    async fn a_refused_write_retries_recovery_at_most_once_a_second() {
        let clock = clock();
        // No reserve file: recovery always succeeds, so the test can see
        // when it is tried.
        let space = Arc::new(Space::none(clock.clone()));
        space.full.store(true, Ordering::SeqCst);
        *space.last_try.lock().unwrap() = Some(clock.now());
        assert!(matches!(space.admit().await, Err(Error::DiskFull)));
        clock.advance(Duration::from_millis(999));
        assert!(matches!(space.admit().await, Err(Error::DiskFull)));
        clock.advance(Duration::from_millis(1));
        assert!(space.admit().await.is_ok());
    }

    #[test]
    fn full_disk_errors_are_recognised_through_their_sources() {
        let sqlite = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            Some("database or disk is full".into()),
        );
        let wrapped = object_store::Error::Generic {
            store: "LocalFileSystem",
            source: Box::new(std::io::Error::from(rustix::io::Errno::NOSPC)),
        };
        let quota = std::io::Error::from(rustix::io::Errno::DQUOT);
        let cases: Vec<(Error, bool)> = vec![
            (Error::Db(sqlite), true),
            (Error::ObjectStore(wrapped), true),
            (Error::Io(quota), true),
            (full_disk(), true),
            (Error::DiskFull, true),
            (
                Error::Io(std::io::Error::from(std::io::ErrorKind::PermissionDenied)),
                false,
            ),
            (Error::Internal("database or disk is full".into()), false),
            (Error::BlobNotFound, false),
        ];
        for (error, full) in cases {
            assert_eq!(error.is_disk_full(), full, "{error:?}");
        }
    }
}
