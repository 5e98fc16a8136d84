//! `check` in cluster mode (docs/cluster.md#admin-commands).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use md5::{Digest as _, Md5};
use object_store::ObjectStoreExt as _;

use super::{Cluster, Listed, object};
use crate::admin::Progress;
use crate::admin::check::{CheckReport, Problem};
use crate::extents::is_inline;
use crate::meta::admin as sql;
use crate::{Error, Result};

/// What [`check`] left alone: objects nothing refers to that are younger
/// than the grace period.
#[derive(Clone, Debug, Default)]
pub struct ClusterCheck {
    /// What was found, as the single-node check reports it.
    pub report: CheckReport,
    /// Objects nothing refers to, younger than the grace period: perhaps
    /// uploads in flight on a node; neither reported nor removed.
    pub young_unreferenced: u64,
}

/// Checks a cluster's metadata against its object store while nodes run;
/// with `repair`, deletes the orphans found (objects nothing referred to in
/// a snapshot taken after they were listed, older than `grace`, and inline
/// extents nothing refers to).
///
/// # Errors
/// The database or the object store cannot be reached or fails.
pub fn check(
    cluster: &Cluster,
    repair: bool,
    grace: Duration,
    progress: &dyn Progress,
) -> Result<ClusterCheck> {
    let mut open = cluster.open(false)?;
    let mut out = ClusterCheck::default();
    let report = &mut out.report;

    progress.begin("reading the metadata", 0);
    let (uses, hashed, garbage) = open.pg.read(|conn| {
        Ok((
            sql::extent_uses(conn)?,
            sql::hashed_blobs(conn)?,
            sql::garbage_extents(conn)?,
        ))
    })?;
    progress.end();
    progress.begin("listing the object store", 0);
    let listed = open.list()?;
    // Read after the listing: an object listed there whose record is gone
    // by now was committed (the second snapshot below refers to it) or
    // reclaimed by a node's collector.
    let in_flight: HashSet<String> = open
        .pg
        .read(|conn| crate::meta::uploads_in_flight(conn))?
        .into_iter()
        .collect();
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    progress.end();

    // Per extent: the length a blob row expects exactly, or else the most
    // any page map reads of it (a floor), and one referrer to name.
    let wanted = sql::wanted_extents(&uses);
    let mut ids: Vec<&str> = wanted.keys().copied().collect();
    ids.sort_unstable();
    let inline_lens: HashMap<String, Option<u64>> = open.pg.read(|conn| {
        ids.iter()
            .filter(|id| is_inline(id))
            .map(|id| Ok(((*id).to_owned(), sql::inline_len(conn, id)?)))
            .collect()
    })?;
    let mut suspects: Vec<Problem> = Vec::new();
    progress.begin("checking extents", ids.len() as u64);
    for id in &ids {
        let (expected, exact, referrer) = wanted[id];
        let found = if is_inline(id) {
            inline_lens.get(*id).copied().flatten()
        } else {
            listed.get(*id).map(|l| l.len)
        };
        match found {
            None => suspects.push(Problem::Missing {
                extent: (*id).to_owned(),
                referrer: referrer.to_owned(),
            }),
            Some(found) if found < expected || (exact && found != expected) => {
                suspects.push(Problem::WrongLength {
                    extent: (*id).to_owned(),
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
    // An extent the first snapshot named may have been dropped by a write
    // and collected since: a problem only if the metadata still names it.
    let mut broken: HashSet<String> = HashSet::new();
    if !suspects.is_empty() {
        let now = open.referenced_now()?;
        for p in suspects {
            let (Problem::Missing { extent, .. } | Problem::WrongLength { extent, .. }) = &p else {
                continue;
            };
            if now.contains(extent) {
                broken.insert(extent.clone());
                report.problems.push(p);
            }
        }
    }

    progress.begin("hashing blobs", hashed.len() as u64);
    let mut vanished = false;
    for blob in &hashed {
        progress.advance(1);
        if blob.extents.iter().any(|(e, _)| broken.contains(e)) {
            continue;
        }
        let mut md5 = Md5::new();
        let mut whole = true;
        for (extent, _) in &blob.extents {
            if is_inline(extent) {
                match open.pg.read(|conn| crate::meta::inline_data(conn, extent)) {
                    Ok(data) => md5.update(data),
                    Err(Error::Corrupt(_)) => whole = false,
                    Err(e) => return Err(e),
                }
            } else if open.hash_object(extent, &mut md5)?.is_none() {
                whole = false;
            }
            if !whole {
                break;
            }
        }
        if !whole {
            // Collected after an overwrite since the snapshot, most
            // likely; confirmed below with the other extents.
            vanished = true;
            continue;
        }
        report.blobs_hashed += 1;
        if md5.finalize().as_slice() != blob.md5.as_slice() {
            report.problems.push(Problem::Md5Mismatch {
                blob: blob.referrer.clone(),
            });
        }
    }
    progress.end();
    if vanished {
        let now = open.referenced_now()?;
        for blob in &hashed {
            for (extent, _) in &blob.extents {
                if broken.contains(extent) || !now.contains(extent) {
                    continue;
                }
                let gone = if is_inline(extent) {
                    open.pg
                        .read(|conn| sql::inline_len(conn, extent))?
                        .is_none()
                } else {
                    open.rt
                        .block_on(open.objects.head(&object(extent)))
                        .is_err()
                };
                if gone {
                    broken.insert(extent.clone());
                    report.problems.push(Problem::Missing {
                        extent: extent.clone(),
                        referrer: blob.referrer.clone(),
                    });
                }
            }
        }
    }

    // Orphans: listed, named by nothing in the first snapshot nor in one
    // taken after the listing, and old enough not to be an upload in flight.
    let garbage: HashSet<String> = garbage.into_iter().collect();
    let mut candidates: Vec<(&String, &Listed)> = listed
        .iter()
        .filter(|(id, _)| !wanted.contains_key(id.as_str()) && !garbage.contains(*id))
        .collect();
    // Uploads in flight are the nodes' business, however old: the
    // collector of a live node reclaims those of a dead one.
    candidates.retain(|(id, _)| {
        let writing = in_flight.contains(id.as_str());
        if writing {
            out.young_unreferenced += 1;
        }
        !writing
    });
    candidates.sort_by(|a, b| a.0.cmp(b.0));
    let now = if candidates.is_empty() {
        HashSet::new()
    } else {
        open.referenced_now()?
    };
    let grace_ms = grace.as_millis() as i64;
    let mut orphan_objects = Vec::new();
    for (id, l) in candidates {
        if now.contains(id) {
            continue;
        }
        if now_ms - l.modified_ms < grace_ms {
            out.young_unreferenced += 1;
            continue;
        }
        out.report.problems.push(Problem::Orphan {
            extent: id.clone(),
            len: l.len,
        });
        orphan_objects.push(id.clone());
    }
    let orphan_inline = open.pg.read(|conn| {
        sql::orphan_inline_extents(conn)?
            .into_iter()
            .map(|id| {
                let len = sql::inline_len(conn, &id)?.unwrap_or(0);
                Ok((id, len))
            })
            .collect::<Result<Vec<_>>>()
    })?;
    for (id, len) in &orphan_inline {
        out.report.problems.push(Problem::Orphan {
            extent: id.clone(),
            len: *len,
        });
    }
    if repair {
        progress.begin(
            "removing orphans",
            (orphan_objects.len() + orphan_inline.len()) as u64,
        );
        for id in &orphan_objects {
            match open.rt.block_on(open.objects.delete(&object(id))) {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
            out.report.orphans_removed += 1;
            progress.advance(1);
        }
        if !orphan_inline.is_empty() {
            let ids: Vec<String> = orphan_inline.iter().map(|(id, _)| id.clone()).collect();
            // Deleted only where still nothing refers to them, inside a
            // write transaction (which holds the cluster's write lock).
            out.report.orphans_removed +=
                open.pg.write(&crate::meta::locks::Scope::Store, |conn| {
                    sql::delete_inline_extents(conn, &ids)
                })?;
            progress.advance(ids.len() as u64);
        }
        progress.end();
    }
    Ok(out)
}
