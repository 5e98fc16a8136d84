//! `backup` and `restore`.
//!
//! A backup is a data directory itself: a copy of the metadata database
//! taken in one read transaction (`VACUUM INTO`, while the server goes on
//! writing), then every extent file that copy refers to. Extents are
//! immutable once written, so a file copied after the database snapshot
//! holds the bytes the snapshot refers to. The one race is the garbage
//! collector: an extent the snapshot refers to may be dropped by an
//! overwrite after it and deleted once its grace period has passed. A file
//! gone by the time it is copied makes the backup take a new snapshot and
//! copy what that one needs beyond the files it has (at most
//! [`ATTEMPTS`] times), so what it keeps is one consistent snapshot.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::{Progress, database_file, objects_dir, open_database};
use crate::extents::{local_file, local_files};
use crate::meta::admin as sql;
use crate::{Error, Result};

/// Snapshots a backup takes before it gives up on a server that deletes
/// extents faster than the backup copies them.
const ATTEMPTS: usize = 5;

/// What [`backup`] copied.
#[derive(Clone, Debug, Default)]
pub struct BackupReport {
    /// Extent files in the backup.
    pub extents: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Database snapshots taken (1 unless the collector raced the copy).
    pub snapshots: usize,
}

/// What [`restore`] copied.
#[derive(Clone, Debug, Default)]
pub struct RestoreReport {
    /// Extent files restored.
    pub extents: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// True when `dir` does not exist or is an empty directory (a lock file
/// named `lock_file` excepted).
pub(super) fn is_empty_dir(dir: &Path, lock_file: Option<&str>) -> Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let name = entry?.file_name();
                if Some(name.to_string_lossy().as_ref()) != lock_file {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e.into()),
    }
}

/// Copies `from` to `to` (creating its directory), syncs it, and returns
/// the bytes copied.
fn copy_synced(from: &Path, to: &Path) -> std::io::Result<u64> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let partial = to.with_extension("partial");
    let n = {
        let mut src = File::open(from)?;
        let mut dst = File::create(&partial)?;
        let n = std::io::copy(&mut src, &mut dst)?;
        dst.sync_all()?;
        n
    };
    std::fs::rename(&partial, to)?;
    Ok(n)
}

/// Syncs directory `dir` (its entries, after renames into it).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Backs data directory `dir` up into `dest`, which must be missing or
/// empty. Safe while a server runs on `dir`.
///
/// # Errors
/// `dest` is not empty; `dir` is not a data directory; the server's
/// collector deleted extents faster than they were copied, five
/// times over; IO or database failures.
pub fn backup(dir: &Path, dest: &Path, progress: &dyn Progress) -> Result<BackupReport> {
    if !is_empty_dir(dest, None)? {
        return Err(Error::Internal(format!(
            "the backup directory {} is not empty",
            dest.display()
        )));
    }
    let source = open_database(dir, false)?;
    let src_objects = objects_dir(dir);
    let dest_objects = objects_dir(dest);
    std::fs::create_dir_all(&dest_objects)?;
    let snapshot = dest.join("metadata.sqlite.partial");
    let mut copied: HashSet<String> = HashSet::new();
    let mut report = BackupReport::default();
    for attempt in 1..=ATTEMPTS {
        report.snapshots = attempt;
        if snapshot.exists() {
            std::fs::remove_file(&snapshot)?;
        }
        progress.begin("copying the database", 0);
        sql::copy_database(&source, &snapshot)?;
        progress.end();
        let copy = rusqlite::Connection::open(&snapshot)?;
        let wanted = sql::stored_extents(sql::extent_uses(&copy)?);
        drop(copy);
        let todo: Vec<&(String, u64)> =
            wanted.iter().filter(|(e, _)| !copied.contains(e)).collect();
        progress.begin(
            "copying extents",
            todo.iter().map(|(_, len)| *len).sum::<u64>(),
        );
        let mut vanished = 0usize;
        for (extent, len) in todo {
            let (Some(from), Some(to)) = (
                local_file(&src_objects, extent),
                local_file(&dest_objects, extent),
            ) else {
                return Err(Error::Corrupt(format!("extent id {extent:?}")));
            };
            match copy_synced(&from, &to) {
                Ok(n) if n == *len => {
                    copied.insert(extent.clone());
                    progress.advance(n);
                }
                Ok(n) => {
                    return Err(Error::Corrupt(format!(
                        "extent {extent} has {n} bytes, the database expects {len}; run check"
                    )));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => vanished += 1,
                Err(e) => return Err(e.into()),
            }
        }
        progress.end();
        if vanished > 0 {
            tracing::info!(
                vanished,
                "extents were collected during the copy; taking a new snapshot"
            );
            continue;
        }
        keep_only(&dest_objects, &wanted)?;
        std::fs::rename(&snapshot, database_file(dest))?;
        sync_dir(dest)?;
        report.extents = wanted.len() as u64;
        report.bytes = wanted.iter().map(|(_, len)| len).sum();
        return Ok(report);
    }
    Err(Error::Internal(format!(
        "extents kept being collected while they were copied ({ATTEMPTS} snapshots); run the \
         backup again when the server is less busy"
    )))
}

/// The fan-out directories under the extents of `objects`.
/// Removes the extent files of a backup's `objects` directory that
/// `wanted` (the extents a snapshot names) does not list — files copied for
/// an earlier snapshot that this one no longer needs — and makes the
/// directories' entries durable.
pub(crate) fn keep_only(objects: &Path, wanted: &[(String, u64)]) -> Result<()> {
    let keep: HashSet<&str> = wanted.iter().map(|(e, _)| e.as_str()).collect();
    for file in local_files(objects)? {
        if !keep.contains(file.name.as_str()) {
            std::fs::remove_file(&file.path)?;
        }
    }
    for dir in fanout_dirs(objects)? {
        sync_dir(&dir)?;
    }
    Ok(())
}

pub(super) fn fanout_dirs(objects: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let root = objects.join("extents");
    if let Ok(entries) = std::fs::read_dir(&root) {
        for entry in entries {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                out.push(entry.path());
            }
        }
        out.push(root);
    }
    Ok(out)
}

/// Restores backup `src` (made by [`backup`]) into data directory `dir`,
/// which must be missing or empty but for the lock file `lock_file` (the
/// caller holds the directory's lock).
///
/// # Errors
/// `dir` is not empty; `src` is not a backup; IO failures.
pub fn restore(
    src: &Path,
    dir: &Path,
    lock_file: Option<&str>,
    progress: &dyn Progress,
) -> Result<RestoreReport> {
    if !is_empty_dir(dir, lock_file)? {
        return Err(Error::Internal(format!(
            "the data directory {} is not empty; restore only into an empty one",
            dir.display()
        )));
    }
    // Refuses what is not a data directory before copying anything.
    drop(open_database(src, false)?);
    let files = local_files(&objects_dir(src))?;
    let files: Vec<_> = files
        .into_iter()
        .filter(|f| !f.name.contains('#'))
        .collect();
    let dest_objects = objects_dir(dir);
    std::fs::create_dir_all(&dest_objects)?;
    let mut report = RestoreReport::default();
    progress.begin("restoring extents", files.iter().map(|f| f.len).sum());
    for file in &files {
        let to = local_file(&dest_objects, &file.name)
            .ok_or_else(|| Error::Corrupt(format!("extent id {:?}", file.name)))?;
        let n = copy_synced(&file.path, &to)?;
        report.extents += 1;
        report.bytes += n;
        progress.advance(n);
    }
    progress.end();
    for d in fanout_dirs(&dest_objects)? {
        sync_dir(&d)?;
    }
    // Through SQLite, not as a file: a server may have run on the backup
    // (it is a data directory), leaving rows in a WAL beside the file.
    progress.begin("restoring the database", 0);
    let partial = dir.join("metadata.sqlite.partial");
    if partial.exists() {
        std::fs::remove_file(&partial)?;
    }
    sql::copy_database(&open_database(src, false)?, &partial)?;
    File::open(&partial)?.sync_all()?;
    std::fs::rename(&partial, database_file(dir))?;
    sync_dir(dir)?;
    progress.end();
    Ok(report)
}
