//! Offline and online maintenance of a data directory: [`check`] (every
//! extent the database refers to is there, whole; files nothing refers to),
//! [`backup`] and [`restore`]. The server binary's subcommands call these
//! (docs/operations.md#admin-commands).
//!
//! They work on the directory's files directly, not through a [`Store`]
//! (opening a store sweeps orphans away, which `check` must report first).
//!
//! [`Store`]: crate::Store

mod backup;
mod check;
pub mod cluster;

use std::path::{Path, PathBuf};

pub use backup::{BackupReport, RestoreReport, backup, restore};
pub use check::{CheckReport, Problem, check};

use crate::store::{DATABASE_FILE, OBJECTS_DIR, OBJECTS_ELSEWHERE_FILE};

/// Where long work reports how far it is; the server shows a progress bar
/// on a terminal and plain lines otherwise.
pub trait Progress: Sync {
    /// A step of `total` units (0 when unknown) starts.
    fn begin(&self, step: &str, total: u64);
    /// `n` more units of the current step are done.
    fn advance(&self, n: u64);
    /// The current step is done.
    fn end(&self);
}

/// A [`Progress`] that shows nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quiet;

impl Progress for Quiet {
    fn begin(&self, _: &str, _: u64) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
}

/// The metadata database of data directory `dir`.
pub fn database_file(dir: &Path) -> PathBuf {
    dir.join(DATABASE_FILE)
}

/// The objects directory (the extent files) of data directory `dir`.
pub fn objects_dir(dir: &Path) -> PathBuf {
    dir.join(OBJECTS_DIR)
}

/// Opens the database of `dir`, which must exist; read-only unless
/// `write`.
fn open_database(dir: &Path, write: bool) -> crate::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let path = database_file(dir);
    if !path.is_file() {
        return Err(crate::Error::Corrupt(format!(
            "{} is not a Stowage data directory (no {})",
            dir.display(),
            DATABASE_FILE
        )));
    }
    // These commands read the extents as files under the data directory;
    // extents kept elsewhere (`--objects`) are that store's to check and
    // back up (docs/cluster.md#object-stores).
    if let Ok(location) = std::fs::read_to_string(dir.join(OBJECTS_ELSEWHERE_FILE)) {
        return Err(crate::Error::Internal(format!(
            "the extents of {} are in {}, not in the data directory: check, backup and \
             restore work only on a data directory that holds its extents",
            dir.display(),
            location.trim()
        )));
    }
    let flags = if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    };
    let conn =
        rusqlite::Connection::open_with_flags(&path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    Ok(conn)
}
