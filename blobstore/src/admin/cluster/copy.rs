//! `backup` and `restore` in cluster mode (docs/cluster.md#admin-commands).

use std::collections::HashSet;
use std::path::Path;

use futures::StreamExt as _;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload, WriteMultipart};

use super::{Cluster, object};
use crate::admin::backup::{BackupReport, RestoreReport, is_empty_dir, keep_only};
use crate::admin::{Progress, database_file, objects_dir};
use crate::extents::{S3_PART_SIZE, local_file, local_files};
use crate::meta::admin as sql;
use crate::meta::transfer;
use crate::store::DATABASE_FILE;
use crate::{Error, Result};

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
        let wanted = sql::stored_extents(wanted);
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
        keep_only(&dest_objects, &wanted)?;
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
    let source = crate::admin::open_database(src, false)?;
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
    open.pg.write(&crate::meta::locks::Scope::Store, |pg| {
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
