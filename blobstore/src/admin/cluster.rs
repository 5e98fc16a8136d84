//! The admin commands in cluster mode (docs/cluster.md#admin-commands):
//! the metadata in PostgreSQL, the extents in an object store (S3, a shared
//! directory, or a data directory's `objects/`), while nodes keep serving.
//!
//! - [`check`] reads the metadata in one snapshot, then lists the object
//!   store. A problem found is confirmed against a second snapshot taken
//!   after the listing (a blob overwritten meanwhile may have had its old
//!   extent collected), and an object nothing refers to is an orphan only
//!   if it is older than a grace period: a younger one may be an upload
//!   in flight on another node, whose row is not committed yet.
//! - [`backup`] copies the metadata in one REPEATABLE READ snapshot into a
//!   SQLite file, and the extents that snapshot names into `objects/`
//!   beside it: the backup is a single-node data directory, which a server
//!   serves as it is and [`restore`] (or the single-node restore) loads.
//! - [`restore`] loads such a data directory into an empty PostgreSQL
//!   database and the object store: the extents first, then the metadata
//!   in one transaction, so no node sees a row before its bytes.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt as _;
use md5::{Digest as _, Md5};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload, WriteMultipart};

use super::backup::{BackupReport, RestoreReport, fanout_dirs, is_empty_dir};
use super::check::{CheckReport, Problem};
use super::{Progress, database_file, objects_dir};
use crate::extents::{S3_PART_SIZE, is_inline, local_file, local_files};
use crate::meta::admin as sql;
use crate::meta::pg::PgConnection;
use crate::meta::transfer;
use crate::objects::ObjectsLocation;
use crate::store::{DATABASE_FILE, OBJECTS_DIR};
use crate::{Error, Result};

/// How old an object nothing refers to must be before [`check`] calls it
/// an orphan, unless told otherwise: an upload in flight on a node has its
/// object before the row that refers to it, and an S3 multipart object
/// may carry the time its upload began.
pub const DEFAULT_ORPHAN_GRACE: Duration = Duration::from_secs(60 * 60);

/// Where a cluster keeps its data: what the nodes were started with.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The PostgreSQL connection string (`--metadata`).
    pub metadata: String,
    /// Where the extents are (`--objects`).
    pub objects: ObjectsLocation,
    /// The data directory, whose `objects/` holds the extents when
    /// `objects` is [`ObjectsLocation::DataDir`].
    pub location: Option<PathBuf>,
}

/// An open cluster: a metadata connection, the object store, and a runtime
/// for the object store's calls (the PostgreSQL client blocks, so it runs
/// outside that runtime).
struct Open {
    pg: PgConnection,
    objects: Arc<dyn ObjectStore>,
    rt: tokio::runtime::Runtime,
}

impl Cluster {
    /// Connects; with `create`, creates the data directory's `objects/`
    /// when the extents go there.
    fn open(&self, create: bool) -> Result<Open> {
        let objects = match self.objects.build(true)? {
            Some(store) => store,
            None => {
                let dir = self.location.as_ref().ok_or_else(|| {
                    Error::Internal(
                        "the extents are in the data directory: name it with --location, or \
                         name the object store with --objects"
                            .into(),
                    )
                })?;
                let objects = dir.join(OBJECTS_DIR);
                if create {
                    std::fs::create_dir_all(&objects)?;
                }
                if !objects.is_dir() {
                    return Err(Error::Internal(format!(
                        "{} has no {OBJECTS_DIR} directory",
                        dir.display()
                    )));
                }
                Arc::new(object_store::local::LocalFileSystem::new_with_prefix(
                    objects,
                )?)
            }
        };
        let mut pg = PgConnection::connect(&self.metadata)?;
        crate::meta::pg_schema::migrate(&mut pg)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Open { pg, objects, rt })
    }
}

/// The object of extent `id`.
fn object(id: &str) -> ObjectPath {
    ObjectPath::from(format!("extents/{}/{}", &id[..2.min(id.len())], id))
}

/// An object under `extents/`: its length and age.
struct Listed {
    len: u64,
    modified_ms: i64,
}

impl Open {
    /// Every object under `extents/`, by extent id.
    fn list(&self) -> Result<HashMap<String, Listed>> {
        self.rt.block_on(async {
            let mut out = HashMap::new();
            let mut listing = self.objects.list(Some(&ObjectPath::from("extents")));
            while let Some(meta) = listing.next().await {
                let meta = meta?;
                if let Some(name) = meta.location.filename() {
                    out.insert(
                        name.to_owned(),
                        Listed {
                            len: meta.size,
                            modified_ms: meta.last_modified.timestamp_millis(),
                        },
                    );
                }
            }
            Ok(out)
        })
    }

    /// Adds the bytes of object extent `id` to `md5`; `None` when it is gone.
    fn hash_object(&self, id: &str, md5: &mut Md5) -> Result<Option<()>> {
        self.rt.block_on(async {
            let got = match self.objects.get(&object(id)).await {
                Ok(got) => got,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let mut stream = got.into_stream();
            while let Some(chunk) = stream.next().await {
                md5.update(chunk?);
            }
            Ok(Some(()))
        })
    }

    /// The extents the metadata refers to now (a new snapshot), garbage
    /// records included.
    fn referenced_now(&mut self) -> Result<HashSet<String>> {
        self.pg.read(|conn| {
            let mut out: HashSet<String> = sql::extent_uses(conn)?
                .into_iter()
                .map(|u| u.extent)
                .collect();
            out.extend(sql::garbage_extents(conn)?);
            Ok(out)
        })
    }
}

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
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    progress.end();

    // Per extent: the length a blob row expects exactly, or else the most
    // any page map reads of it (a floor), and one referrer to name.
    let mut wanted: HashMap<&str, (u64, bool, &str)> = HashMap::with_capacity(uses.len());
    for u in &uses {
        let entry = wanted
            .entry(&u.extent)
            .or_insert((u.len, u.exact, &u.referrer));
        if !entry.1 && (u.exact || u.len > entry.0) {
            *entry = (u.len, u.exact, &u.referrer);
        }
    }
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
            out.report.orphans_removed += open
                .pg
                .write(|conn| sql::delete_inline_extents(conn, &ids))?;
            progress.advance(ids.len() as u64);
        }
        progress.end();
    }
    Ok(out)
}

/// Snapshots a backup takes before it gives up on a collector that deletes
/// extents faster than the backup copies them.
const ATTEMPTS: usize = 5;

/// Backs a cluster up into `dest` (missing or empty), while nodes run: the
/// metadata of one REPEATABLE READ snapshot into a SQLite file, then every
/// extent that snapshot names. `dest` is then a single-node data directory.
///
/// # Errors
/// `dest` is not empty; the database or object store fails; the collector
/// deleted needed extents during the copy five times over.
pub fn backup(cluster: &Cluster, dest: &Path, progress: &dyn Progress) -> Result<BackupReport> {
    if !is_empty_dir(dest, None)? {
        return Err(Error::Internal(format!(
            "the backup directory {} is not empty",
            dest.display()
        )));
    }
    let mut open = cluster.open(false)?;
    let dest_objects = objects_dir(dest);
    std::fs::create_dir_all(&dest_objects)?;
    let snapshot = dest.join(format!("{DATABASE_FILE}.partial"));
    let mut copied: HashSet<String> = HashSet::new();
    let mut report = BackupReport::default();
    for attempt in 1..=ATTEMPTS {
        report.snapshots = attempt;
        if snapshot.exists() {
            std::fs::remove_file(&snapshot)?;
        }
        progress.begin("copying the metadata", 0);
        let copy = rusqlite::Connection::open(&snapshot)?;
        crate::meta::schema::migrate(&copy)?;
        let order = transfer::fill_order(&copy)?;
        let wanted = open.pg.read(|pg| {
            let tx = copy.unchecked_transaction()?;
            transfer::copy_tables(pg, &tx, &order)?;
            tx.commit()?;
            sql::extent_uses(pg)
        })?;
        drop(copy);
        progress.end();
        let mut wanted: Vec<(String, u64)> = wanted
            .into_iter()
            .filter(|u| !is_inline(&u.extent))
            .map(|u| (u.extent, u.len))
            .collect();
        wanted.sort();
        wanted.dedup_by(|a, b| a.0 == b.0);
        let todo: Vec<&(String, u64)> =
            wanted.iter().filter(|(e, _)| !copied.contains(e)).collect();
        progress.begin(
            "copying extents",
            todo.iter().map(|(_, len)| *len).sum::<u64>(),
        );
        let mut vanished = 0usize;
        for (extent, _) in todo {
            let to = local_file(&dest_objects, extent)
                .ok_or_else(|| Error::Corrupt(format!("extent id {extent:?}")))?;
            match open.rt.block_on(download(&*open.objects, extent, &to))? {
                Some(n) => {
                    copied.insert(extent.clone());
                    progress.advance(n);
                }
                None => vanished += 1,
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
        let keep: HashSet<&str> = wanted.iter().map(|(e, _)| e.as_str()).collect();
        for file in local_files(&dest_objects)? {
            if !keep.contains(file.name.as_str()) {
                std::fs::remove_file(&file.path)?;
            }
        }
        for dir in fanout_dirs(&dest_objects)? {
            std::fs::File::open(&dir)?.sync_all()?;
        }
        std::fs::File::open(&snapshot)?.sync_all()?;
        std::fs::rename(&snapshot, database_file(dest))?;
        std::fs::File::open(dest)?.sync_all()?;
        report.extents = wanted.len() as u64;
        report.bytes = wanted.iter().map(|(_, len)| len).sum();
        return Ok(report);
    }
    Err(Error::Internal(format!(
        "extents kept being collected while they were copied ({ATTEMPTS} snapshots); run the \
         backup again when the cluster is less busy"
    )))
}

/// Writes object extent `id` to file `to` (synced), and returns its bytes;
/// `None` when the object is gone.
async fn download(objects: &dyn ObjectStore, id: &str, to: &Path) -> Result<Option<u64>> {
    use std::io::Write as _;
    let got = match objects.get(&object(id)).await {
        Ok(got) => got,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let partial = to.with_extension("partial");
    let mut file = std::fs::File::create(&partial)?;
    let mut n = 0u64;
    let mut stream = got.into_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        file.write_all(&chunk)?;
        n += chunk.len() as u64;
    }
    file.sync_all()?;
    std::fs::rename(&partial, to)?;
    Ok(Some(n))
}

/// Restores backup `src` (a data directory: a backup of either kind, or a
/// stopped single node's directory) into a cluster whose database holds no
/// metadata yet: the extents into the object store, then the metadata in
/// one transaction.
///
/// # Errors
/// The database already holds metadata; `src` is not a data directory or
/// its schema is not this build's; the database or object store fails.
pub fn restore(cluster: &Cluster, src: &Path, progress: &dyn Progress) -> Result<RestoreReport> {
    let source = super::open_database(src, false)?;
    let version: i64 = source.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let current = crate::meta::schema::version();
    if version != current {
        return Err(Error::Internal(format!(
            "the backup's database has schema version {version}, this build's is {current}: \
             open it once with this build (stowage-server --location {}) before restoring it \
             into a cluster",
            src.display()
        )));
    }
    let mut open = cluster.open(true)?;
    if !open.pg.read(transfer::is_empty)? {
        return Err(Error::Internal(
            "the metadata database is not empty; restore only into an empty one".into(),
        ));
    }
    let referenced: HashSet<String> = sql::extent_uses(&source)?
        .into_iter()
        .map(|u| u.extent)
        .chain(sql::garbage_extents(&source)?)
        .collect();
    let files: Vec<_> = local_files(&objects_dir(src))?
        .into_iter()
        .filter(|f| !f.name.contains('#') && referenced.contains(&f.name))
        .collect();
    let mut report = RestoreReport::default();
    progress.begin("restoring extents", files.iter().map(|f| f.len).sum());
    for file in &files {
        let n = open
            .rt
            .block_on(upload(&*open.objects, &file.name, &file.path))?;
        report.extents += 1;
        report.bytes += n;
        progress.advance(n);
    }
    progress.end();
    progress.begin("restoring the metadata", 0);
    let order = transfer::fill_order(&source)?;
    open.pg.write(|pg| {
        // Checked again under the write lock: a node may have written since.
        if !transfer::is_empty(pg)? {
            return Err(Error::Internal(
                "the metadata database is not empty; restore only into an empty one".into(),
            ));
        }
        transfer::copy_tables(&source, pg, &order)?;
        transfer::reset_identities(pg)
    })?;
    progress.end();
    Ok(report)
}

/// Writes file `path` as the object of extent `id`; returns its bytes.
async fn upload(objects: &dyn ObjectStore, id: &str, path: &Path) -> Result<u64> {
    use std::io::Read as _;
    let len = std::fs::metadata(path)?.len();
    if len <= S3_PART_SIZE as u64 {
        let data = std::fs::read(path)?;
        objects.put(&object(id), PutPayload::from(data)).await?;
        return Ok(len);
    }
    let upload = objects.put_multipart(&object(id)).await?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, S3_PART_SIZE);
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; S3_PART_SIZE];
    let mut n = 0u64;
    loop {
        let got = file.read(&mut buf)?;
        if got == 0 {
            break;
        }
        writer.wait_for_capacity(1).await?;
        writer.write(&buf[..got]);
        n += got as u64;
    }
    writer.finish().await?;
    Ok(n)
}
