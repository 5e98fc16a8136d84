//! `check`: verifies that every extent a blob version or an uncommitted
//! block refers to exists with the length the database expects, that the
//! bytes of blobs whose Content-MD5 Stowage computed hash to it, and lists
//! the extents nothing refers to (orphans); `repair` deletes those.

use std::collections::HashSet;
use std::io::Read as _;
use std::path::Path;

use md5::{Digest as _, Md5};

use super::{Progress, objects_dir, open_database};
use crate::extents::{is_inline, local_file, local_files};
use crate::meta::admin as sql;
use crate::{Error, Result};

/// One thing wrong in a data directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A referenced extent does not exist.
    Missing {
        /// The extent.
        extent: String,
        /// Who refers to it.
        referrer: String,
    },
    /// A referenced extent has another length than the database records.
    WrongLength {
        /// The extent.
        extent: String,
        /// Who refers to it.
        referrer: String,
        /// The length the database records.
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// The bytes of a blob version do not hash to its Content-MD5.
    Md5Mismatch {
        /// The blob version.
        blob: String,
    },
    /// An extent file (or an inline extent) that nothing refers to.
    Orphan {
        /// The extent (a file name, or an inline extent's id).
        extent: String,
        /// Its size in bytes.
        len: u64,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Missing { extent, referrer } => {
                write!(f, "missing: extent {extent} of {referrer}")
            }
            Problem::WrongLength {
                extent,
                referrer,
                expected,
                found,
            } => write!(
                f,
                "corrupt: extent {extent} of {referrer} has {found} bytes, {expected} expected"
            ),
            Problem::Md5Mismatch { blob } => {
                write!(
                    f,
                    "corrupt: the bytes of {blob} do not match its Content-MD5"
                )
            }
            Problem::Orphan { extent, len } => {
                write!(
                    f,
                    "orphan: extent {extent} ({len} bytes) is referred to by nothing"
                )
            }
        }
    }
}

/// What [`check`] found.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Distinct extents referred to and checked.
    pub extents_checked: u64,
    /// Blob versions whose bytes were hashed against their Content-MD5.
    pub blobs_hashed: u64,
    /// Everything wrong, missing and corrupt extents first, then orphans.
    pub problems: Vec<Problem>,
    /// Orphans deleted (with `repair`).
    pub orphans_removed: u64,
}

impl CheckReport {
    /// Missing or corrupt data: what `repair` cannot fix.
    pub fn damaged(&self) -> usize {
        self.problems
            .iter()
            .filter(|p| !matches!(p, Problem::Orphan { .. }))
            .count()
    }

    /// Orphans found.
    pub fn orphans(&self) -> usize {
        self.problems.len() - self.damaged()
    }

    /// True when nothing is wrong, or only orphans that were removed.
    pub fn healthy(&self) -> bool {
        self.damaged() == 0 && self.orphans() as u64 == self.orphans_removed
    }
}

/// Checks data directory `dir`; with `repair`, deletes the orphans found.
/// The caller must keep servers off the directory (an upload in flight has
/// its file before the row that refers to it, and would look orphaned).
///
/// # Errors
/// `dir` is not a data directory; IO or database failures.
pub fn check(dir: &Path, repair: bool, progress: &dyn Progress) -> Result<CheckReport> {
    let conn = open_database(dir, repair)?;
    let objects = objects_dir(dir);
    let mut report = CheckReport::default();

    let uses = sql::extent_uses(&conn)?;
    // Per extent: the length a blob row expects exactly, or else the most
    // any page map reads of it (a floor), and one referrer to name.
    let wanted = sql::wanted_extents(&uses);
    let mut ids: Vec<&str> = wanted.keys().copied().collect();
    ids.sort_unstable();
    let mut broken: HashSet<&str> = HashSet::new();
    progress.begin("checking extents", ids.len() as u64);
    for id in ids {
        let (expected, exact, referrer) = wanted[id];
        let found = if is_inline(id) {
            sql::inline_len(&conn, id)?
        } else {
            match local_file(&objects, id).map(std::fs::metadata) {
                Some(Ok(m)) => Some(m.len()),
                Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
                Some(Err(e)) => return Err(e.into()),
                None => None,
            }
        };
        match found {
            None => {
                broken.insert(id);
                report.problems.push(Problem::Missing {
                    extent: id.to_owned(),
                    referrer: referrer.to_owned(),
                });
            }
            Some(found) if found < expected || (exact && found != expected) => {
                broken.insert(id);
                report.problems.push(Problem::WrongLength {
                    extent: id.to_owned(),
                    referrer: referrer.to_owned(),
                    expected,
                    found,
                });
            }
            Some(_) => {}
        }
        report.extents_checked += 1;
        progress.advance(1);
    }
    progress.end();

    let hashed = sql::hashed_blobs(&conn)?;
    progress.begin("hashing blobs", hashed.len() as u64);
    for blob in &hashed {
        progress.advance(1);
        if blob
            .extents
            .iter()
            .any(|(e, _)| broken.contains(e.as_str()))
        {
            continue;
        }
        let mut md5 = Md5::new();
        for (extent, _) in &blob.extents {
            if is_inline(extent) {
                md5.update(crate::meta::inline_data(&conn, extent)?);
            } else {
                let path = local_file(&objects, extent)
                    .ok_or_else(|| Error::Corrupt(format!("extent id {extent:?}")))?;
                hash_file(&path, &mut md5)?;
            }
        }
        report.blobs_hashed += 1;
        if md5.finalize().as_slice() != blob.md5.as_slice() {
            report.problems.push(Problem::Md5Mismatch {
                blob: blob.referrer.clone(),
            });
        }
    }
    progress.end();

    let garbage: HashSet<String> = sql::garbage_extents(&conn)?.into_iter().collect();
    let files = local_files(&objects)?;
    let mut orphan_files = Vec::new();
    for file in files {
        if !wanted.contains_key(file.name.as_str()) && !garbage.contains(&file.name) {
            report.problems.push(Problem::Orphan {
                extent: file.name.clone(),
                len: file.len,
            });
            orphan_files.push(file.path);
        }
    }
    let orphan_inline = sql::orphan_inline_extents(&conn)?;
    for id in &orphan_inline {
        let len = sql::inline_len(&conn, id)?.unwrap_or(0);
        report.problems.push(Problem::Orphan {
            extent: id.clone(),
            len,
        });
    }
    if repair {
        progress.begin(
            "removing orphans",
            (orphan_files.len() + orphan_inline.len()) as u64,
        );
        for path in &orphan_files {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e.into()),
            }
            report.orphans_removed += 1;
            progress.advance(1);
        }
        if !orphan_inline.is_empty() {
            let tx = conn.unchecked_transaction()?;
            sql::delete_inline_extents(&tx, &orphan_inline)?;
            tx.commit()?;
            report.orphans_removed += orphan_inline.len() as u64;
            progress.advance(orphan_inline.len() as u64);
        }
        progress.end();
    }
    Ok(report)
}

fn hash_file(path: &Path, md5: &mut Md5) -> Result<()> {
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        md5.update(&buf[..n]);
    }
}
