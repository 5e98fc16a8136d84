//! Extents: immutable objects in the object store holding a blob's bytes.
//!
//! An extent is written once, under a fresh random name, and never modified;
//! the metadata database decides which extents make up which blob version.
//! This is the only module that knows object-store paths.

use crate::meta::sql::Sql;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use md5::{Digest, Md5};
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, GetResultPayload, ObjectStore, ObjectStoreExt, WriteMultipart,
};

use crate::hashing::{BodyMd5, Crc64};
use crate::observe::{ObjectCall, StoreObserver};
use crate::space::Space;
use crate::{Error, Result};

/// Bodies up to this size are collected and written with one `put`; larger
/// ones stream through a multipart upload in parts of this size, so memory per
/// upload stays bounded whatever the blob size: one part being filled and
/// one being written, so 32 concurrent 4 MiB Put Blocks hold ~16 MiB of
/// parts, not 128 (the benchmarks' `block-upload` peaked at 60 MiB resident
/// with 512 KiB parts and two in flight, 50 MiB with these, at the same
/// speed). `LocalFileSystem` writes each part at its offset in one staging
/// file, so small parts cost a write call each, nothing more.
pub(crate) const PART_SIZE: usize = 256 * 1024;
/// The part size for S3: its multipart uploads refuse parts under 5 MiB
/// (all but the last), so bodies up to this size go in one `put` there.
pub(crate) const S3_PART_SIZE: usize = 5 * 1024 * 1024;
/// Parts in flight at once for one upload.
const PARTS_IN_FLIGHT: usize = 1;
/// Bodies up to this size are not written to the object store: their bytes
/// go into the metadata database in the transaction that references them,
/// so a small write costs one WAL fsync (shared with the writes committed
/// beside it) instead of a file, a rename and three fsyncs.
pub(crate) const INLINE_MAX: u64 = 64 * 1024;
/// Ids of inline extents start with this; object ids are 32 hex digits.
const INLINE_PREFIX: &str = "i.";
/// Read size when streaming an extent from a local file.
const READ_CHUNK: usize = 256 * 1024;

/// The result of streaming a request body into storage.
#[derive(Debug)]
pub(crate) struct WrittenExtent {
    /// The new extent, or `None` for an empty body (no object is written).
    pub id: Option<String>,
    /// Bytes written.
    pub len: u64,
    /// MD5 of the bytes, computed while streaming.
    pub md5: [u8; 16],
    /// CRC64 of the bytes, computed while streaming.
    pub crc64: u64,
    /// The bytes of an inline extent, for the committing transaction to store.
    pub inline: Option<Bytes>,
    /// In cluster mode, while the object is this node's upload in flight
    /// (until this is dropped, after the commit or the discard).
    pub _upload: Option<crate::liveness::UploadGuard>,
}

impl WrittenExtent {
    /// Stores the bytes of an inline extent; called in the transaction that
    /// first references it, so they are committed (or not) with it. For an
    /// object, ends its record of an upload in flight in that transaction
    /// (cluster mode), which fails if another node reclaimed it.
    pub(crate) fn store_inline(
        id: Option<&str>,
        inline: Option<&Bytes>,
        conn: &dyn Sql,
    ) -> Result<()> {
        match (id, inline) {
            (Some(id), Some(data)) => crate::meta::put_inline(conn, id, data),
            (Some(id), None) => crate::meta::finish_upload(conn, id),
            _ => Ok(()),
        }
    }
}

/// Whether a write should check its conditions and lease before reading a
/// body of `len` bytes. A refused large body is not worth receiving and
/// storing; a small one costs less to read than the extra database call,
/// and the commit checks again anyway, in the same order.
pub(crate) fn worth_a_precheck(len: u64) -> bool {
    len > INLINE_MAX
}

/// True for the id of an extent whose bytes live in the metadata database.
pub(crate) fn is_inline(id: &str) -> bool {
    id.starts_with(INLINE_PREFIX)
}

/// Compares the transactional `Content-MD5` a client sent with the MD5 of
/// the body as received.
///
/// # Errors
/// `Md5Mismatch` when they differ.
pub(crate) fn check_md5(expected: Option<[u8; 16]>, computed: [u8; 16]) -> Result<()> {
    match expected {
        Some(expected) if expected != computed => Err(Error::Md5Mismatch { expected, computed }),
        _ => Ok(()),
    }
}

/// Compares the transactional `x-ms-content-crc64` a client sent with the
/// CRC64 of the body as received.
///
/// # Errors
/// `Crc64Mismatch` when they differ.
pub(crate) fn check_crc64(expected: Option<u64>, computed: u64) -> Result<()> {
    match expected {
        Some(expected) if expected != computed => Err(Error::Crc64Mismatch {
            expected: Some(expected),
            computed: Some(computed),
        }),
        _ => Ok(()),
    }
}

/// Which writer a write's bytes go through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writer {
    /// A request body: [`Extents::write`].
    Body,
    /// The bytes of a copy (the From-URL writes): [`Extents::write_copy`],
    /// hashed as they are written.
    Copy,
}

/// The extent store: a thin layer over an [`ObjectStore`].
#[derive(Clone, Debug)]
pub(crate) struct Extents {
    store: Arc<dyn ObjectStore>,
    /// The root directory when the store is a `LocalFileSystem`, for the
    /// start-up sweep of staging files (see [`Extents::sweep_staging`]).
    local_root: Option<std::path::PathBuf>,
    /// Refuses new extents while the disk is full.
    space: Arc<Space>,
    /// Told how long each object-store call takes.
    observer: Option<Arc<dyn StoreObserver>>,
    /// Set when the store is the server's own `LocalFileSystem` under
    /// this root: large copies are then written straight into its files
    /// (see [`Extents::write_copy`]); whether to fsync them.
    direct: Option<(std::path::PathBuf, bool)>,
    /// Bodies up to this size are written with one `put`, larger ones in
    /// parts of this size ([`PART_SIZE`], or [`S3_PART_SIZE`] for S3).
    part_size: usize,
    /// In cluster mode, this node: each object is recorded as an upload in
    /// flight before it is written (`crate::liveness`).
    node: Option<crate::liveness::Node>,
    /// The root of a store in a directory (its own or a shared one), where
    /// an interrupted write leaves staging files (see
    /// [`Extents::delete_partial`]).
    staging_root: Option<std::path::PathBuf>,
}

impl Extents {
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        local_root: Option<std::path::PathBuf>,
        space: Arc<Space>,
    ) -> Extents {
        Extents {
            store,
            local_root,
            space,
            observer: None,
            direct: None,
            part_size: PART_SIZE,
            node: None,
            staging_root: None,
        }
    }

    /// Records every object as an upload in flight of `node` before it is
    /// written (cluster mode).
    pub(crate) fn with_node(mut self, node: Option<crate::liveness::Node>) -> Extents {
        self.node = node;
        self
    }

    /// Says where a store in a directory keeps its files, for
    /// [`Extents::delete_partial`].
    pub(crate) fn with_staging_root(mut self, root: Option<std::path::PathBuf>) -> Extents {
        self.staging_root = root;
        self
    }

    /// Records object `id` as an upload in flight of this node, before
    /// its first byte is written (cluster mode; nothing otherwise).
    async fn record_upload(&self, id: &str) -> Result<Option<crate::liveness::UploadGuard>> {
        match &self.node {
            Some(node) => node.record_upload(id).await.map(Some),
            None => Ok(None),
        }
    }

    /// Drops object `id`, written by this node but not committed (the
    /// write failed or was refused). In cluster mode the record of the
    /// upload is ended first, and the object deleted only if nothing refers
    /// to it: a commit whose answer was lost may have taken the record (the
    /// object is then referenced and stays); another node may have taken
    /// it, this node having been taken for dead (the object, which this
    /// node may have finished writing after that node deleted it, goes).
    /// Best effort: what is left is reclaimed once this node is dead, or by
    /// `check --repair`.
    pub(crate) async fn discard(&self, id: &str) {
        if is_inline(id) {
            return;
        }
        if let Some(node) = &self.node {
            match node.forget_upload(id).await {
                Ok(true) => {}
                Ok(false) if matches!(node.is_referenced(id).await, Ok(false)) => {}
                Ok(false) => return,
                Err(e) => {
                    tracing::warn!(extent = id, error = %e, "could not end an upload's record");
                    return;
                }
            }
        }
        // This node's own write is over (completed or aborted): it left no
        // staging file.
        let _ = self.delete(id).await;
    }

    /// Deletes object `id` and what an interrupted write of it left: in a
    /// directory, its staging files (`<id>#<n>`, which the object store's
    /// listing hides); a multipart upload left open in an S3 bucket is the
    /// bucket's lifecycle rules' to end.
    pub(crate) async fn delete_partial(&self, id: &str) -> Result<()> {
        self.delete(id).await?;
        let Some(dir) = self
            .staging_root
            .as_ref()
            .and_then(|root| local_file(root, id))
            .and_then(|f| f.parent().map(std::path::Path::to_path_buf))
        else {
            return Ok(());
        };
        let staging = format!("{id}#");
        tokio::task::spawn_blocking(move || -> Result<()> {
            let Ok(files) = std::fs::read_dir(&dir) else {
                return Ok(());
            };
            for file in files {
                let file = file?;
                if file.file_name().to_string_lossy().starts_with(&staging) {
                    match std::fs::remove_file(file.path()) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                            return Err(e.into());
                        }
                        _ => {}
                    }
                }
            }
            Ok(())
        })
        .await?
    }

    /// Lets [`Extents::write_copy`] write large copies straight into the
    /// files under `root`, where the store's `LocalFileSystem` keeps them
    /// (fsynced when `fsync`, as the store's own writes).
    pub(crate) fn with_direct_files(mut self, root: std::path::PathBuf, fsync: bool) -> Extents {
        self.direct = Some((root, fsync));
        self
    }

    /// Sets the part size of multipart uploads (see [`S3_PART_SIZE`]).
    pub(crate) fn with_part_size(mut self, part_size: usize) -> Extents {
        self.part_size = part_size;
        self
    }

    /// Reports the duration of every object-store call to `observer`: the
    /// one place the store measures its object store.
    pub(crate) fn with_observer(mut self, observer: Option<Arc<dyn StoreObserver>>) -> Extents {
        self.observer = observer;
        self
    }

    /// Runs `call` and reports how long it took.
    async fn timed<T>(&self, kind: ObjectCall, call: impl Future<Output = T>) -> T {
        let Some(observer) = &self.observer else {
            return call.await;
        };
        let started = Instant::now();
        let out = call.await;
        observer.object_store(kind, started.elapsed());
        out
    }

    /// Removes the staging files of uploads that a crash interrupted.
    ///
    /// `LocalFileSystem` writes every object to `<name>#<n>` and renames it
    /// when complete; a crash leaves the staging file behind, and its
    /// `list()` hides such names, so the object-store API can neither find
    /// nor sweep them. This is the one place Stowage reads the data
    /// directory directly. Runs at open, before any upload can be in flight.
    pub(crate) fn sweep_staging(&self) -> Result<usize> {
        let Some(root) = &self.local_root else {
            return Ok(0);
        };
        let mut removed = 0;
        let dir = root.join("extents");
        let Ok(fanout) = std::fs::read_dir(&dir) else {
            return Ok(0);
        };
        for sub in fanout {
            let sub = sub?;
            if !sub.file_type()?.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(sub.path())? {
                let file = file?;
                if file.file_name().to_string_lossy().contains('#') {
                    std::fs::remove_file(file.path())?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// `extents/ab/abcdef…`: two hex digits of fan-out keep directories small.
    fn path(id: &str) -> Path {
        Path::from(format!("extents/{}/{}", &id[..2], id))
    }

    /// Streams `body` into a new extent. The body must be exactly `declared`
    /// bytes long; `declared` was already checked against the operation's
    /// limit by the caller. On any failure nothing is left referenced (a
    /// partly written object is aborted, or swept later). While the disk is
    /// full this refuses at once, before reading the body.
    pub(crate) async fn write<S>(&self, body: S, declared: u64) -> Result<WrittenExtent>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        self.space.admit().await?;
        let out = self.write_admitted(body, declared).await;
        self.space.observe(out)
    }

    async fn write_admitted<S>(&self, mut body: S, declared: u64) -> Result<WrittenExtent>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let mut md5 = Md5::new();
        let mut crc64 = Crc64::new();
        let mut len: u64 = 0;
        if declared == 0 {
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(Error::Body)?;
                len += chunk.len() as u64;
                if len > 0 {
                    return Err(Error::BodyLengthMismatch {
                        declared,
                        received: len,
                    });
                }
            }
            return Ok(WrittenExtent {
                id: None,
                len: 0,
                md5: md5.finalize().into(),
                crc64: crc64.finish(),
                inline: None,
                _upload: None,
            });
        }

        let uuid = uuid::Uuid::new_v4().simple();
        if declared <= self.part_size as u64 {
            let mut buf = BytesMut::with_capacity(declared as usize);
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(Error::Body)?;
                len += chunk.len() as u64;
                if len > declared {
                    return Err(Error::BodyLengthMismatch {
                        declared,
                        received: len,
                    });
                }
                md5.update(&chunk);
                crc64.update(&chunk);
                buf.extend_from_slice(&chunk);
            }
            if len != declared {
                return Err(Error::BodyLengthMismatch {
                    declared,
                    received: len,
                });
            }
            let md5 = md5.finalize().into();
            if declared <= INLINE_MAX {
                // Time-ordered, unlike object ids (whose first digits spread
                // files over directories): an inline id is a key in the
                // inline-extent table and the extent indexes, and ids that
                // only grow add to the last pages of those b-trees instead
                // of dirtying a random page each, so a group commit writes
                // fewer pages however large the tables get.
                let ordered = uuid::Uuid::now_v7().simple();
                return Ok(WrittenExtent {
                    id: Some(format!("{INLINE_PREFIX}{ordered}")),
                    len,
                    md5,
                    crc64: crc64.finish(),
                    inline: Some(buf.freeze()),
                    _upload: None,
                });
            }
            let id = uuid.to_string();
            let upload = self.record_upload(&id).await?;
            if let Err(e) = self
                .timed(
                    ObjectCall::Put,
                    self.store.put(&Self::path(&id), buf.freeze().into()),
                )
                .await
            {
                self.discard(&id).await;
                return Err(e.into());
            }
            return Ok(WrittenExtent {
                id: Some(id),
                len,
                md5,
                crc64: crc64.finish(),
                inline: None,
                _upload: upload,
            });
        }
        let id = uuid.to_string();
        let upload = self.record_upload(&id).await?;
        let out = self
            .write_parts(&id, body, declared, &mut len, &mut crc64)
            .await;
        let md5 = match out {
            Ok(md5) => md5,
            Err(e) => {
                self.discard(&id).await;
                return Err(e);
            }
        };
        Ok(WrittenExtent {
            id: Some(id),
            len,
            md5,
            crc64: crc64.finish(),
            inline: None,
            _upload: upload,
        })
    }

    /// Streams `body` into object `id` through a multipart upload; returns
    /// the MD5 of the bytes (their length and CRC64 go to `len` and
    /// `crc64`).
    async fn write_parts<S>(
        &self,
        id: &str,
        mut body: S,
        declared: u64,
        len: &mut u64,
        crc64: &mut Crc64,
    ) -> Result<[u8; 16]>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let md5 = {
            let upload = self.store.put_multipart(&Self::path(id)).await?;
            let mut writer = WriteMultipart::new_with_chunk_size(upload, self.part_size);
            let mut hash = BodyMd5::new(declared);
            let outcome: Result<BodyMd5> = async {
                while let Some(chunk) = body.next().await {
                    let chunk = chunk.map_err(Error::Body)?;
                    *len += chunk.len() as u64;
                    if *len > declared {
                        return Err(Error::BodyLengthMismatch {
                            declared,
                            received: *len,
                        });
                    }
                    // CRC64 runs at memory speed: in place, not on the
                    // MD5 thread.
                    crc64.update(&chunk);
                    hash.update(&chunk).await?;
                    writer.wait_for_capacity(PARTS_IN_FLIGHT).await?;
                    // Handed over, not copied: a part is the received
                    // chunks themselves, written one after the other.
                    writer.put(chunk);
                }
                if *len != declared {
                    return Err(Error::BodyLengthMismatch {
                        declared,
                        received: *len,
                    });
                }
                Ok(hash)
            }
            .await;
            match outcome {
                Ok(hash) => {
                    // The file's last part, fsync and rename run while the
                    // hash catches up with the last bytes. A digest that
                    // then does not match the client's fails the commit,
                    // which deletes the extent (no version refers to it).
                    let (digest, finished) = tokio::join!(
                        hash.finish(),
                        self.timed(ObjectCall::CompleteMultipart, writer.finish())
                    );
                    finished?;
                    digest?
                }
                Err(e) => {
                    // Best effort: a staging file that survives is swept at start-up.
                    let _ = writer.abort().await;
                    return Err(e);
                }
            }
        };
        Ok(md5)
    }

    /// Streams `body` into a new extent with the writer `how` names.
    pub(crate) async fn write_with<S>(
        &self,
        body: S,
        declared: u64,
        how: Writer,
    ) -> Result<WrittenExtent>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        match how {
            Writer::Body => self.write(body, declared).await,
            Writer::Copy => self.write_copy(body, declared, None).await,
        }
    }

    /// Streams the bytes of a copy from another host into a new extent.
    ///
    /// A large copy to the server's own directory is neither cut into
    /// parts nor passed through the object store: it goes straight into
    /// its file through [`crate::file_writer`], at the speed of the network
    /// or the disk, whichever is slower. With `known_md5` (the source's
    /// `Content-MD5`, which an asynchronous copy's destination takes as it
    /// is, as the service's copies do) the bytes are not hashed; without
    /// it their MD5 and CRC64 are computed by the writer as it writes.
    /// Small copies, and other stores, are written as a request body.
    pub(crate) async fn write_copy<S>(
        &self,
        body: S,
        declared: u64,
        known_md5: Option<[u8; 16]>,
    ) -> Result<WrittenExtent>
    where
        S: Stream<Item = std::io::Result<Bytes>> + Unpin,
    {
        let (Some((root, fsync)), true) = (&self.direct, declared > PART_SIZE as u64) else {
            let mut written = self.write(body, declared).await?;
            if let Some(md5) = known_md5 {
                written.md5 = md5;
            }
            return Ok(written);
        };
        self.space.admit().await?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dest =
            local_file(root, &id).ok_or_else(|| Error::Io(std::io::Error::other("extent id")))?;
        let hash = known_md5.is_none();
        let upload = self.record_upload(&id).await?;
        let out = self
            .timed(
                ObjectCall::CompleteMultipart,
                crate::file_writer::write_file(dest, body, declared, *fsync, hash),
            )
            .await;
        let hashes = match self.space.observe(out) {
            Ok(hashes) => hashes,
            Err(e) => {
                self.discard(&id).await;
                return Err(e);
            }
        };
        let (md5, crc64) = match (known_md5, hashes) {
            // Not kept for a copy that takes its source's MD5: such a
            // destination has no CRC64 of its own.
            (Some(md5), _) => (md5, 0),
            (None, Some(h)) => h,
            (None, None) => return Err(Error::Io(std::io::Error::other("no digest"))),
        };
        Ok(WrittenExtent {
            id: Some(id),
            len: declared,
            md5,
            crc64,
            inline: None,
            _upload: upload,
        })
    }

    /// Streams `range` (relative to the extent) of extent `id`.
    pub(crate) async fn read(
        &self,
        id: &str,
        range: Range<u64>,
    ) -> Result<BoxStream<'static, Result<Bytes>>> {
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            ..GetOptions::default()
        };
        let result = self
            .timed(
                ObjectCall::Get,
                self.store.get_opts(&Self::path(id), options),
            )
            .await?;
        Ok(match result.payload {
            // object_store reads local files 8 KiB per blocking task; larger
            // reads make downloads several times faster.
            GetResultPayload::File(file, _) => file_stream(file, range),
            GetResultPayload::Stream(s) => s.map_err(Error::from).boxed(),
        })
    }

    /// Deletes extent `id`; a missing object is not an error (a crash may
    /// have deleted it already).
    pub(crate) async fn delete(&self, id: &str) -> Result<()> {
        if is_inline(id) {
            // Its bytes go with the database row (see `meta::delete_inline`).
            return Ok(());
        }
        match self
            .timed(ObjectCall::Delete, self.store.delete(&Self::path(id)))
            .await
        {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Every extent id in the store (for the start-up sweep).
    pub(crate) async fn list(&self) -> Result<Vec<String>> {
        self.timed(ObjectCall::List, self.list_untimed()).await
    }

    async fn list_untimed(&self) -> Result<Vec<String>> {
        let prefix = Path::from("extents");
        let mut ids = Vec::new();
        let mut listing = self.store.list(Some(&prefix));
        while let Some(meta) = listing.next().await {
            let meta = meta?;
            if let Some(name) = meta.location.filename() {
                ids.push(name.to_owned());
            }
        }
        Ok(ids)
    }
}

/// The file of object extent `id` in the objects directory `root` of a
/// local store (`None` for an id too short to be one).
pub(crate) fn local_file(root: &std::path::Path, id: &str) -> Option<std::path::PathBuf> {
    let fanout = id.get(..2)?;
    Some(root.join("extents").join(fanout).join(id))
}

/// A file found under the extents of a local store.
#[derive(Debug)]
pub(crate) struct LocalFile {
    /// Its name: an extent id, or a staging file's `<id>#<n>`.
    pub name: String,
    pub path: std::path::PathBuf,
    pub len: u64,
}

/// Every file under the extents of the local store at `root`, staging
/// files included (for the admin commands, which run without a server).
pub(crate) fn local_files(root: &std::path::Path) -> Result<Vec<LocalFile>> {
    let mut out = Vec::new();
    let Ok(fanout) = std::fs::read_dir(root.join("extents")) else {
        return Ok(out);
    };
    for sub in fanout {
        let sub = sub?;
        if !sub.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(sub.path())? {
            let file = file?;
            if !file.file_type()?.is_file() {
                continue;
            }
            out.push(LocalFile {
                name: file.file_name().to_string_lossy().into_owned(),
                path: file.path(),
                len: file.metadata()?.len(),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Reads `range` of a local file in large chunks on the blocking pool.
fn file_stream(file: std::fs::File, range: Range<u64>) -> BoxStream<'static, Result<Bytes>> {
    let state = (Some(file), range.start, range.end);
    futures::stream::try_unfold(state, |(file, pos, end)| async move {
        let Some(mut file) = file else {
            return Ok(None);
        };
        if pos >= end {
            return Ok(None);
        }
        let want = (end - pos).min(READ_CHUNK as u64) as usize;
        let (file, chunk) = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
            let mut buf = vec![0u8; want];
            file.seek(SeekFrom::Start(pos))?;
            file.read_exact(&mut buf)?;
            Ok((file, buf))
        })
        .await??;
        let next = pos + chunk.len() as u64;
        Ok(Some((Bytes::from(chunk), (Some(file), next, end))))
    })
    .boxed()
}
