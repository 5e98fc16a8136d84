//! Claiming the data directory at start-up: one server per directory, and
//! only a directory this server can write to.
//!
//! Two servers on one directory would each trust their own view of it (the
//! second's start-up sweep of orphan extents would delete the first one's
//! uploads in flight), so the server holds an exclusive `flock` on a lock
//! file in the directory for as long as it runs; the kernel drops it when
//! the process ends, however it ends. A read-only directory would start and
//! then fail every write, so start-up writes, syncs and removes a probe
//! file first and refuses to start when that fails.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;

/// The lock file's name in the data directory; it holds the pid of the
/// server that has the lock.
pub const LOCK_FILE: &str = "stowage.lock";
const PROBE_FILE: &str = ".stowage-write-check";

/// Why the data directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    /// Another process holds the lock.
    #[error(
        "the data directory {} is in use by another Stowage server (pid {}); stop it or choose \
         another --location",
        dir.display(),
        pid.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
    )]
    InUse {
        /// The data directory.
        dir: PathBuf,
        /// The holder's pid, as it wrote it in the lock file.
        pid: Option<u32>,
    },
    /// The directory cannot be created or written.
    #[error("the data directory {} is not writable ({what}): {source}", dir.display())]
    NotWritable {
        /// The data directory.
        dir: PathBuf,
        /// The step that failed.
        what: &'static str,
        /// The failure.
        source: std::io::Error,
    },
}

/// The claim on a data directory: held until dropped (or the process ends).
#[derive(Debug)]
pub struct DataDirLock {
    file: File,
}

impl Drop for DataDirLock {
    /// Unlocks explicitly rather than by closing the file: a child process
    /// that another thread is starting holds a copy of the descriptor
    /// until its `exec` closes it, and a lock released only by closing
    /// would outlive the claim for that moment (a restore right after a
    /// server stopped was once refused as "in use" that way).
    fn drop(&mut self) {
        let _ = rustix::fs::flock(&self.file, FlockOperation::Unlock);
    }
}

/// Creates `dir` if needed, takes its lock and checks that it is writable.
///
/// # Errors
/// [`DataDirError::InUse`] when another server holds the lock;
/// [`DataDirError::NotWritable`] when the directory cannot be created,
/// locked or written.
pub fn claim(dir: &Path) -> Result<DataDirLock, DataDirError> {
    let not_writable = |what| {
        move |source| DataDirError::NotWritable {
            dir: dir.to_path_buf(),
            what,
            source,
        }
    };
    std::fs::create_dir_all(dir).map_err(not_writable("creating it"))?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(LOCK_FILE))
        .map_err(not_writable("opening its lock file"))?;
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(DataDirError::InUse {
                dir: dir.to_path_buf(),
                pid: holder.trim().parse().ok(),
            });
        }
        Err(e) => return Err(not_writable("locking it")(e.into())),
    }
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .and_then(|()| file.sync_all())
        .map_err(not_writable("writing its lock file"))?;
    probe(dir).map_err(not_writable("writing a file in it"))?;
    Ok(DataDirLock { file })
}

/// Writes, syncs and removes a small file in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(PROBE_FILE);
    let mut file = File::create(&path)?;
    file.write_all(b"stowage")?;
    file.sync_all()?;
    drop(file);
    std::fs::remove_file(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_names_the_directory_and_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let first = claim(&data).unwrap();
        let err = claim(&data).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(err, DataDirError::InUse { pid: Some(p), .. } if p == std::process::id()),
            "{message}"
        );
        assert!(message.contains(&data.display().to_string()), "{message}");
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        drop(first);
        let again = claim(&data).unwrap();
        drop(again);
        assert!(!data.join(PROBE_FILE).exists());
    }
}
