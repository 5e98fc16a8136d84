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

mod check;
mod copy;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use md5::{Digest as _, Md5};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt as _};

pub use check::{ClusterCheck, check};
pub use copy::{backup, restore};

use crate::meta::admin as sql;
use crate::meta::pg::PgConnection;
use crate::objects::ObjectsLocation;
use crate::store::OBJECTS_DIR;
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
