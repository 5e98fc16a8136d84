//! [`Store`]: the engine's API, one method per REST operation.

mod append;
mod blobs;
mod blocks;
mod body;
mod containers;
mod copy;
mod expiry;
mod import;
mod incremental;
mod leases;
mod pages;
mod remote_copy;
mod service_cache;
mod snapshots;
mod tags;
mod tiers;
mod usage;
mod versions;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use object_store::ObjectStore;
use stowage_leases::{Clock, LeaseProperties, LeaseRecord};

use crate::etag::EtagGenerator;
use crate::extents::Extents;
use crate::meta::{self, BlobRow, ContainerRow, Db};
use crate::objects::ObjectsLocation;
use crate::observe::StoreObserver;
use crate::pins::Pins;
use crate::space::Space;
use crate::{BlobProperties, ContainerProperties, Result};

pub use append::{AppendBlockInput, AppendBlockOutput, MAX_APPENDED_BLOCKS, SealAppendBlobInput};
pub use blobs::{
    DeleteBlobInput, DeleteSnapshots, GetBlobInput, GetBlobOutput, PutBlobInput, PutBlobOutput,
    SetBlobMetadataInput, SetBlobPropertiesInput,
};
pub use blocks::{
    BlockId, BlockListKind, BlockListType, GetBlockListInput, GetBlockListOutput,
    MAX_COMMITTED_BLOCKS, MAX_UNCOMMITTED_BLOCKS, PutBlockInput, PutBlockListInput, PutBlockOutput,
    UNCOMMITTED_BLOCK_LIFETIME,
};
pub use body::BlobBody;
pub use containers::{
    CreateContainerInput, DeleteContainerInput, RestoreContainerInput, SetContainerAclInput,
    SetContainerMetadataInput,
};
pub use copy::{CopyBlobInput, CopyBlobOutput, CopySource, SourceAccess};
pub use expiry::SetBlobExpiryInput;
pub use import::{ImportBlobInput, ImportContainerInput, ImportPart};
pub use incremental::{
    IncrementalCopyBlobInput, IncrementalCopyBlobOutput, IncrementalCopyState,
    RemoteIncrementalCopyInput,
};
pub use leases::{LeaseBlobInput, LeaseContainerInput, LeaseOutput};
pub(crate) use pages::page_properties;
pub use pages::{
    CreatePageBlobInput, GetPageRangesInput, GetPageRangesOutput, PageRangeItem, PageWrite,
    PutPageInput, PutPageOutput, SetPageBlobPropertiesInput, SetPageBlobPropertiesOutput,
};
pub use remote_copy::{
    CopiedBytes, CopiedType, CopyJob, INTERRUPTED_COPY, RemoteCopyInput, copy_progress,
};
pub use snapshots::{SnapshotBlobInput, SnapshotBlobOutput};
pub use tags::{
    FindBlobsByTagsInput, FindBlobsByTagsOutput, GetBlobTagsInput, SetBlobTagsInput, TaggedBlob,
    is_find_marker,
};
pub use tiers::SetBlobTierInput;
pub use versions::{UndeleteBlobInput, Versioning};

/// The metadata database's file in a data directory.
pub(crate) const DATABASE_FILE: &str = "metadata.sqlite";
/// The directory of the object store (the extents) in a data directory.
pub(crate) const OBJECTS_DIR: &str = "objects";
/// Written in a data directory whose extents are elsewhere (`--objects`):
/// names where, so that the admin commands refuse instead of reporting
/// every extent missing.
pub(crate) const OBJECTS_ELSEWHERE_FILE: &str = "objects-location";

/// Where and how the store keeps its data; built once from the server's flags.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Data directory, or `None` for memory only (`--inMemoryPersistence`).
    pub location: Option<PathBuf>,
    /// fsync extents and their directories before a write is acknowledged.
    pub fsync: bool,
    /// How long an unreferenced extent is kept before it is deleted.
    pub gc_grace: Duration,
    /// Bytes kept allocated in the data directory for a full disk: released
    /// when a write finds the disk full, so that deletes, lease actions and
    /// the garbage collector can still commit.
    pub disk_reserve: u64,
    /// How long a rehydration out of the archive tier takes (the service
    /// takes hours; an emulator's users should not wait that long).
    pub rehydrate_delay: Duration,
    /// Which accounts keep previous versions of their blobs.
    pub versioning: Versioning,
    /// Told how long each metadata and object-store call takes.
    pub observer: Option<Arc<dyn StoreObserver>>,
    /// Where the extents live (`--objects`; docs/cluster.md#object-stores).
    pub objects: ObjectsLocation,
    /// TEST ONLY, a deliberately broken build: Put Blob evaluates its
    /// conditions in a read of its own and commits without them, so two
    /// writers can both pass the same `If-Match`. The history test shows
    /// that its checker catches this (docs/cluster.md#testing-a-cluster).
    pub fault_conditions_outside_transaction: bool,
    /// A PostgreSQL database for the metadata (cluster mode): its
    /// connection string. `None` keeps the metadata in SQLite, in the data
    /// directory (or in memory).
    pub metadata: Option<String>,
    /// Heartbeats and the bound past which a node is dead (cluster mode;
    /// docs/cluster.md, "Garbage across nodes").
    pub liveness: crate::LivenessConfig,
}

/// The default [`StoreConfig::rehydrate_delay`].
pub const DEFAULT_REHYDRATE_DELAY: Duration = Duration::from_secs(5);

/// The default [`StoreConfig::disk_reserve`]: a delete commits a few pages,
/// and a batch of the collector at most a few MiB of WAL.
pub const DEFAULT_DISK_RESERVE: u64 = 32 * 1024 * 1024;

impl StoreConfig {
    /// Keep everything in memory: an in-memory object store and SQLite database.
    pub fn in_memory() -> StoreConfig {
        StoreConfig {
            location: None,
            fsync: false,
            gc_grace: Duration::from_secs(30),
            disk_reserve: 0,
            rehydrate_delay: DEFAULT_REHYDRATE_DELAY,
            versioning: Versioning::default(),
            observer: None,
            objects: ObjectsLocation::DataDir,
            fault_conditions_outside_transaction: false,
            metadata: None,
            liveness: crate::LivenessConfig::default(),
        }
    }

    /// Keep data under `dir` (created if missing), durably.
    pub fn at(dir: impl Into<PathBuf>) -> StoreConfig {
        StoreConfig {
            location: Some(dir.into()),
            fsync: true,
            gc_grace: Duration::from_secs(30),
            disk_reserve: DEFAULT_DISK_RESERVE,
            rehydrate_delay: DEFAULT_REHYDRATE_DELAY,
            versioning: Versioning::default(),
            observer: None,
            objects: ObjectsLocation::DataDir,
            fault_conditions_outside_transaction: false,
            metadata: None,
            liveness: crate::LivenessConfig::default(),
        }
    }

    /// Sets the grace period of garbage extents.
    pub fn with_gc_grace(mut self, grace: Duration) -> StoreConfig {
        self.gc_grace = grace;
        self
    }

    /// Sets how long a rehydration takes.
    pub fn with_rehydrate_delay(mut self, delay: Duration) -> StoreConfig {
        self.rehydrate_delay = delay;
        self
    }

    /// Sets which accounts keep previous versions of their blobs.
    pub fn with_versioning(mut self, versioning: Versioning) -> StoreConfig {
        self.versioning = versioning;
        self
    }

    /// Reports the duration of every backend call to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn StoreObserver>) -> StoreConfig {
        self.observer = Some(observer);
        self
    }

    /// Keeps the extents in `objects` instead of the data directory.
    pub fn with_objects(mut self, objects: ObjectsLocation) -> StoreConfig {
        self.objects = objects;
        self
    }

    /// TEST ONLY: see [`StoreConfig::fault_conditions_outside_transaction`].
    pub fn with_fault_conditions_outside_transaction(mut self) -> StoreConfig {
        self.fault_conditions_outside_transaction = true;
        self
    }

    /// Keeps the metadata in the PostgreSQL database at `url` (cluster
    /// mode, `docs/cluster.md`).
    pub fn with_metadata(mut self, url: impl Into<String>) -> StoreConfig {
        self.metadata = Some(url.into());
        self
    }

    /// Sets how often a node of a cluster writes its heartbeat and how old
    /// a heartbeat may be before its node is taken for dead.
    pub fn with_liveness(mut self, liveness: crate::LivenessConfig) -> StoreConfig {
        self.liveness = liveness;
        self
    }

    /// Sets the size of the disk reserve.
    pub fn with_disk_reserve(mut self, bytes: u64) -> StoreConfig {
        self.disk_reserve = bytes;
        self
    }
}

/// The storage engine. Cheap to clone; all clones share one database and
/// object store.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) db: Db,
    pub(crate) extents: Extents,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) etags: EtagGenerator,
    pub(crate) pins: Arc<Pins>,
    /// This node of a cluster (`None` on SQLite).
    pub(crate) node: Option<crate::liveness::Node>,
    pub(crate) space: Arc<Space>,
    pub(crate) config: StoreConfig,
    pub(crate) service_cache: service_cache::ServiceCache,
}

/// An account's Blob service properties document (`None`: never set) as
/// the read that returned it saw it, in the same snapshot as the blob. In
/// cluster mode Get Blob and Get Blob Properties return it, so that the
/// server answers their CORS headers without reading the document again.
#[derive(Clone, Debug)]
pub struct ServiceSnapshot(pub Option<Arc<str>>);

impl Store {
    /// Opens the store described by `config`, reading time from `clock`, and
    /// sweeps extents left unreferenced by a crash.
    ///
    /// # Errors
    /// The data directory cannot be created or the database cannot be opened.
    pub async fn open(config: StoreConfig, clock: Arc<dyn Clock>) -> Result<Store> {
        Self::open_with(config, clock, None).await
    }

    /// Creates the data directory and its `objects` directory.
    fn objects_dir(dir: &std::path::Path) -> Result<PathBuf> {
        let objects_dir = dir.join(OBJECTS_DIR);
        std::fs::create_dir_all(&objects_dir)?;
        Ok(objects_dir)
    }

    /// Like [`Store::open`], with the extents in `objects` (for tests that
    /// put a failing object store in front of the real one). `None` keeps
    /// them where [`Store::open`] would.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub async fn open_with(
        config: StoreConfig,
        clock: Arc<dyn Clock>,
        objects: Option<Arc<dyn ObjectStore>>,
    ) -> Result<Store> {
        let remote = config.objects.build(config.fsync)?;
        let (db, objects, local_root, direct, space): (Db, Arc<dyn ObjectStore>, _, _, _) =
            match &config.location {
                Some(dir) => {
                    let objects_dir = Self::objects_dir(dir)?;
                    Self::mark_objects_elsewhere(dir, &config.objects)?;
                    let space = Arc::new(Space::open(dir, config.disk_reserve, clock.clone())?);
                    let db = match &config.metadata {
                        Some(url) => Db::open_postgres(url, space.clone()).await?,
                        None => Db::open(Some(&dir.join(DATABASE_FILE)), space.clone())?,
                    };
                    match (objects, remote) {
                        (Some(o), _) => (db, o, Some(objects_dir), None, space),
                        // Staging files in a remote store are not this
                        // node's to sweep: another node may be writing them.
                        (None, Some(o)) => (db, o, None, None, space),
                        // The server's own directory: large copies may be
                        // written straight into its files.
                        (None, None) => {
                            let local = object_store::local::LocalFileSystem::new_with_prefix(
                                &objects_dir,
                            )?
                            .with_fsync(config.fsync);
                            let direct = Some((objects_dir.clone(), config.fsync));
                            (db, Arc::new(local), Some(objects_dir), direct, space)
                        }
                    }
                }
                None => {
                    let space = Arc::new(Space::none(clock.clone()));
                    let db = match &config.metadata {
                        Some(url) => Db::open_postgres(url, space.clone()).await?,
                        None => Db::open(None, space.clone())?,
                    };
                    (
                        db,
                        objects
                            .or(remote)
                            .unwrap_or_else(|| Arc::new(object_store::memory::InMemory::new())),
                        None,
                        None,
                        space,
                    )
                }
            };
        let db = db.with_observer(config.observer.clone());
        let highest = db.call(meta::highest_etag).await?;
        let mut etags = EtagGenerator::new(highest.as_deref());
        let mut node = None;
        if db.is_shared()
            && let Some(number) = db.write(meta::draw_node_number).await?
        {
            etags = etags.for_node(number);
            tracing::info!(node = number, "joined the cluster");
            node = Some(
                crate::liveness::Node::register(db.clone(), number, config.liveness.dead_after)
                    .await?,
            );
        }
        let staging_root = match (&config.objects, &local_root) {
            (ObjectsLocation::Shared(dir), _) => Some(dir.clone()),
            (ObjectsLocation::DataDir, Some(root)) => Some(root.clone()),
            _ => None,
        };
        let store = Store {
            inner: Arc::new(Inner {
                db,
                extents: {
                    let extents = Extents::new(objects, local_root, space.clone())
                        .with_part_size(match config.objects {
                            ObjectsLocation::S3 { .. } => crate::extents::S3_PART_SIZE,
                            _ => crate::extents::PART_SIZE,
                        })
                        .with_observer(config.observer.clone())
                        .with_node(node.clone())
                        .with_staging_root(staging_root);
                    match direct {
                        Some((root, fsync)) => extents.with_direct_files(root, fsync),
                        None => extents,
                    }
                },
                clock,
                etags,
                pins: Arc::new(Pins::default()),
                node,
                space,
                config,
                service_cache: service_cache::ServiceCache::default(),
            }),
        };
        store.sweep_orphans().await?;
        store.fail_interrupted_copies().await?;
        store.start_heartbeats();
        Ok(store)
    }

    /// Records in data directory `dir` where its extents are when that is
    /// not `objects/` in it, and removes the record when it is.
    fn mark_objects_elsewhere(dir: &std::path::Path, objects: &ObjectsLocation) -> Result<()> {
        let marker = dir.join(OBJECTS_ELSEWHERE_FILE);
        if objects.is_remote() {
            std::fs::write(&marker, format!("{objects}\n"))?;
        } else {
            match std::fs::remove_file(&marker) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
        Ok(())
    }

    pub(crate) fn now(&self) -> SystemTime {
        self.inner.clock.now()
    }

    /// The time a write transaction judges by (lease expiry, break
    /// periods, expiry times, Last-Modified): in cluster mode the
    /// database's clock when the transaction's locks were granted, so that
    /// every node judges by one clock whatever its own reads; otherwise, and
    /// on a clock moved by hand (tests), `local`, read before the
    /// transaction. Call it after the transaction's first statement: the
    /// time comes with its locks, at no extra round trip.
    pub(crate) fn judge_now(
        &self,
        tx: &dyn meta::sql::Sql,
        local: SystemTime,
    ) -> Result<SystemTime> {
        if self.inner.clock.is_manual() {
            return Ok(local);
        }
        Ok(tx.locked_at()?.unwrap_or(local))
    }

    /// The metadata database, its writes locking the blob `name` (with its
    /// snapshots and versions) in cluster mode (`docs/cluster.md`,
    /// "Consistency").
    pub(crate) fn blob_db(&self, account: &str, container: &str, name: &str) -> Db {
        self.inner
            .db
            .locking(meta::Scope::blob(account, container, name))
    }

    /// The metadata database, its writes locking one container's own row
    /// in cluster mode: the writes of its blobs wait, and are waited for.
    pub(crate) fn container_db(&self, account: &str, container: &str) -> Db {
        self.inner
            .db
            .locking(meta::Scope::container(account, container))
    }

    /// The round trips this store has waited for on its PostgreSQL
    /// metadata database (`None` on SQLite): for the tests that hold each
    /// operation to its count.
    #[doc(hidden)]
    #[must_use]
    pub fn metadata_round_trips(&self) -> Option<u64> {
        self.inner.db.round_trips()
    }

    /// The stored Blob service properties document of `account`, if one was
    /// set. Answered from memory after the first read (the store's own
    /// writes keep that copy current), except in cluster mode.
    ///
    /// # Errors
    /// Database failures.
    pub async fn get_service_properties(&self, account: &str) -> Result<Option<Arc<str>>> {
        // In cluster mode another node may change the document at any
        // moment: read it from the shared database every time (a read of
        // a blob answers it without that: `ServiceSnapshot`).
        if self.inner.db.is_shared() {
            let owned = account.to_owned();
            let (version, doc) = self
                .inner
                .db
                .call(move |conn| meta::service_properties_at(conn, &owned))
                .await?;
            let doc: Option<Arc<str>> = doc.map(Arc::from);
            self.inner
                .service_cache
                .keep_version(account, version, doc.clone());
            return Ok(doc);
        }
        let generation = match self.inner.service_cache.lookup(account) {
            service_cache::Lookup::Hit(doc) => return Ok(doc),
            service_cache::Lookup::Miss { generation } => generation,
        };
        let owned = account.to_owned();
        let doc: Option<Arc<str>> = self
            .inner
            .db
            .call(move |conn| meta::get_service_properties(conn, &owned))
            .await?
            .map(Arc::from);
        self.inner
            .service_cache
            .fill(account, generation, doc.clone());
        Ok(doc)
    }

    /// Stores the Blob service properties document of `account` (the server
    /// merges and validates it; the engine keeps it opaque).
    ///
    /// # Errors
    /// Database failures.
    pub async fn set_service_properties(&self, account: &str, document: String) -> Result<()> {
        let doc: Arc<str> = Arc::from(document);
        let (owned, written) = (account.to_owned(), doc.clone());
        let version = self
            .inner
            .db
            .write_again(move |tx| meta::set_service_properties(tx, &owned, &written))
            .await?;
        if self.inner.db.is_shared() {
            self.inner
                .service_cache
                .keep_version(account, Some(version), Some(doc));
        } else {
            self.inner.service_cache.replace(account, doc);
        }
        Ok(())
    }

    /// The service properties of `account` at `seen`, the version a read
    /// found in its snapshot (`None`: the read did not ask, as on
    /// SQLite): the cached document when it is that version, else the
    /// document read in the same snapshot (one round trip, once per
    /// change).
    pub(crate) fn service_snapshot(
        &self,
        conn: &dyn meta::sql::Sql,
        account: &str,
        seen: Option<meta::ServiceVersion>,
    ) -> Result<Option<ServiceSnapshot>> {
        let Some(version) = seen else {
            return Ok(None);
        };
        let cache = &self.inner.service_cache;
        if let Some(doc) = cache.at_version(account, version) {
            return Ok(Some(ServiceSnapshot(doc)));
        }
        let (read, doc) = meta::service_properties_at(conn, account)?;
        let doc: Option<Arc<str>> = doc.map(Arc::from);
        cache.keep_version(account, read, doc.clone());
        Ok(Some(ServiceSnapshot(doc)))
    }

    /// Lists containers (docs/wire/listing.md#list-containers).
    ///
    /// # Errors
    /// Database failures.
    pub async fn list_containers(
        &self,
        input: crate::ListContainersInput,
    ) -> Result<crate::ListContainersOutput> {
        let now = self.now();
        self.inner
            .db
            .call(move |conn| crate::listing::list_containers(conn, &input, now))
            .await
    }

    /// Lists blobs (docs/wire/listing.md#list-blobs).
    ///
    /// # Errors
    /// `ContainerNotFound`; database failures.
    pub async fn list_blobs(&self, input: crate::ListBlobsInput) -> Result<crate::ListBlobsOutput> {
        let now = self.now();
        self.inner
            .db
            .call(move |conn| {
                let id = meta::container_id(conn, &input.account, input.container.as_str())?;
                crate::listing::list_blobs(conn, id, &input, now)
            })
            .await
    }
}

/// What Get Container Properties shows for a stored container at `now`.
pub(crate) fn container_properties(row: ContainerRow, now: SystemTime) -> ContainerProperties {
    ContainerProperties {
        lease: row.lease.properties(now),
        name: row.name,
        version: row.version,
        metadata: row.metadata,
        public_access: row.public_access,
        default_encryption_scope: row.default_encryption_scope,
        deny_encryption_scope_override: row.deny_encryption_scope_override,
        deleted: row.deleted.map(|d| crate::DeletedContainer {
            // Never counted from before the deletion: in cluster mode the
            // node reading may be a moment behind the node that deleted.
            remaining_retention_days: crate::DeletedContainer::remaining_days(
                d.purge_at,
                now.max(d.deleted_at),
            ),
            version: d.version,
            deleted_time: d.deleted_at,
        }),
    }
}

/// What Get Blob Properties shows for a stored blob version at `now`.
/// Snapshots are never leased.
pub(crate) fn blob_properties(row: BlobRow, now: SystemTime) -> BlobProperties {
    let lease: LeaseProperties = if row.snapshot.is_some() || row.hidden.is_some() {
        LeaseRecord::default().properties(now)
    } else {
        row.lease.properties(now)
    };
    BlobProperties {
        name: row.name,
        is_current_version: row
            .version_id
            .as_ref()
            .map(|_| row.hidden.is_none() && row.snapshot.is_none()),
        snapshot: row.snapshot,
        blob_type: row.blob_type,
        size: row.size,
        version: row.version,
        creation_time: row.creation_time,
        content: row.content,
        metadata: row.metadata,
        lease,
        committed_block_count: row.committed_block_count,
        sealed: row.sealed,
        tier: row.tier.properties(now),
        copy: row.copy.map(|c| c.at(now)),
        tag_count: 0,
        tags: None,
        expires_on: row.expires_at,
        version_id: row.version_id,
        deleted: row.deleted.map(|(at, purge)| crate::DeletedState {
            deleted_time: at,
            // As for containers: never counted from before the deletion.
            remaining_retention_days: versions::remaining_days(purge, now.max(at)),
        }),
        page: None,
    }
}
