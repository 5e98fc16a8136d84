//! The metadata database: every SQL statement of Stowage lives below this
//! module, so that another backend (PostgreSQL, for several server nodes) can
//! be added beside it.
//!
//! SQLite in WAL mode with `synchronous = FULL`: a committed transaction is
//! on disk before the server replies. Reads run on a few read-only
//! connections on the blocking pool; writes are committed in groups by one
//! writer thread ([`pool`]).

pub(crate) mod admin;
mod blobs;
mod blocks;
mod combined;
mod containers;
mod copies;
mod deleted_containers;
mod expiry;
mod garbage;
mod inline;
mod lease_columns;
mod listing;
mod liveness;
pub(crate) mod locks;
mod nodes;
mod pages;
pub(crate) mod pg;
pub(crate) mod pg_schema;
mod pool;
pub(crate) mod schema;
mod service;
pub(crate) mod sql;
mod tags;
mod tier_columns;
pub(crate) mod transfer;
mod usage;
pub(crate) mod versions;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rusqlite::{Connection, OpenFlags};

use crate::Result;
use crate::observe::{MetadataCall, StoreObserver};
use crate::space::Space;
pub(crate) use locks::Scope;
use sql::Sql;

pub(crate) use blobs::{BlobRow, ExtentRef, NewBlob};
pub(crate) use containers::{ContainerRow, NewContainer};
pub(crate) use listing::{BlobCursor, BlobListQuery};

/// Read connections of a database file: enough for the reads of a busy
/// server to overlap the writer's fsync on two cores.
const READERS: usize = 4;

/// The WAL is cut back to this size after a checkpoint, so a burst of
/// writes does not leave a large WAL file behind for good.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// Connections per node to a PostgreSQL metadata database.
const PG_CONNECTIONS: usize = 8;

/// How long a request waits for the PostgreSQL metadata database before it
/// is answered 503, whatever the database is doing: within the 30 seconds
/// the service gives an operation by default. The database's own limits
/// ([`pg::STATEMENT_TIMEOUT`], [`pg::CONNECT_TIMEOUT`]) end a call sooner;
/// this one is for a database that stops answering without closing the
/// connection.
const PG_DEADLINE: std::time::Duration = std::time::Duration::from_secs(25);

/// Waits for a call on the blocking pool, at most [`PG_DEADLINE`]. The
/// call itself goes on until the database's limits end it; if it is a
/// write, its outcome is unknown to the client, as with any timeout.
async fn within_deadline<T>(call: tokio::task::JoinHandle<Result<T>>) -> Result<T> {
    match tokio::time::timeout(PG_DEADLINE, call).await {
        Ok(out) => out?,
        Err(_) => Err(crate::Error::Unavailable(format!(
            "no answer within {} s",
            PG_DEADLINE.as_secs()
        ))),
    }
}

/// Where the metadata lives.
#[derive(Clone, Debug)]
enum Backend {
    /// A SQLite file (or memory): one node.
    Sqlite(Arc<pool::Pool>),
    /// A PostgreSQL database shared by the nodes of a cluster.
    Postgres(Arc<pg::PgPool>),
}

/// A handle on the metadata database; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Db {
    backend: Backend,
    space: Arc<Space>,
    observer: Option<Arc<dyn StoreObserver>>,
    /// What this handle's writes lock in cluster mode ([`Db::locking`]).
    scope: Arc<Scope>,
}

impl Db {
    /// Opens (creating if needed) the database file at `path`, or an
    /// in-memory database when `path` is `None`.
    pub(crate) fn open(path: Option<&Path>, space: Arc<Space>) -> Result<Db> {
        let writer = match path {
            Some(p) => Connection::open(p)?,
            None => Connection::open_in_memory()?,
        };
        // WAL lets readers proceed while a writer commits; FULL makes every
        // commit durable before it returns (docs/architecture.md#write-order, step 2).
        writer.pragma_update(None, "journal_mode", "WAL")?;
        writer.pragma_update(None, "synchronous", "FULL")?;
        writer.pragma_update(None, "foreign_keys", "ON")?;
        writer.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        stable_plans(&writer)?;
        schema::migrate(&writer)?;
        let mut readers = Vec::new();
        if let Some(p) = path {
            for _ in 0..READERS {
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI;
                let reader = Connection::open_with_flags(p, flags)?;
                reader.pragma_update(None, "query_only", "ON")?;
                stable_plans(&reader)?;
                readers.push(reader);
            }
        }
        Ok(Db {
            backend: Backend::Sqlite(Arc::new(pool::Pool::new(writer, readers)?)),
            space,
            observer: None,
            scope: Arc::default(),
        })
    }

    /// Connects to the PostgreSQL database at `url` (cluster mode), creating
    /// or updating its schema.
    pub(crate) async fn open_postgres(url: &str, space: Arc<Space>) -> Result<Db> {
        let url = url.to_owned();
        let pool =
            tokio::task::spawn_blocking(move || pg::PgPool::open(&url, PG_CONNECTIONS)).await??;
        Ok(Db {
            backend: Backend::Postgres(Arc::new(pool)),
            space,
            observer: None,
            scope: Arc::default(),
        })
    }

    /// Whether the metadata is in a database that other nodes share
    /// (PostgreSQL): then nothing read from it may be kept in memory.
    pub(crate) fn is_shared(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// This handle, its writes locking `scope` in cluster mode instead of
    /// the whole store (`docs/cluster.md`, "Consistency"): the blob or
    /// container a write changes, and every blob it refers to. SQLite
    /// ignores the scope.
    pub(crate) fn locking(&self, scope: Scope) -> Db {
        if !self.is_shared() {
            return self.clone();
        }
        Db {
            scope: Arc::new(scope),
            ..self.clone()
        }
    }

    /// Reports the duration of every call to `observer`: the one place the
    /// store measures its metadata database.
    pub(crate) fn with_observer(mut self, observer: Option<Arc<dyn StoreObserver>>) -> Db {
        self.observer = observer;
        self
    }

    fn observed(&self, call: MetadataCall, started: Option<Instant>) {
        if let (Some(o), Some(t)) = (&self.observer, started) {
            o.metadata(call, t.elapsed());
        }
    }

    fn start(&self) -> Option<Instant> {
        self.observer.as_ref().map(|_| Instant::now())
    }

    /// Runs `f` on a read connection, in one read transaction, on the
    /// blocking pool.
    pub(crate) async fn call<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let started = self.start();
        let backend = self.backend.clone();
        let out = match backend {
            Backend::Sqlite(pool) => tokio::task::spawn_blocking(move || pool.read(f)).await?,
            Backend::Postgres(pool) => {
                within_deadline(tokio::task::spawn_blocking(move || pool.read(f))).await
            }
        };
        self.observed(MetadataCall::Read, started);
        out
    }

    /// Runs `f` like [`Db::call`], but on this thread when a read connection
    /// is free at once. For reads of one resource by its key (a blob's row
    /// and extents, a container's row): they take microseconds, less than
    /// the two thread switches of a trip through the blocking pool, which
    /// were most of a HEAD's cost (head: 41,000 -> 53,000 requests/s, server
    /// CPU per request down 40%). Never for listings or anything whose
    /// length depends on the data: those would hold up every other request
    /// of this worker. When every connection is busy (with a listing,
    /// perhaps), `f` goes to the blocking pool instead of waiting here.
    pub(crate) async fn read_now<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let started = self.start();
        let Backend::Sqlite(pool) = &self.backend else {
            return self.call(f).await;
        };
        match pool.try_read(f) {
            Ok(out) => {
                self.observed(MetadataCall::Read, started);
                out
            }
            Err(f) => self.call(f).await,
        }
    }

    /// Runs `f` inside an IMMEDIATE transaction (the write lock is held from
    /// its start, so the rows `f` reads cannot change before it writes) and
    /// answers once that transaction is committed. `f` runs on the writer
    /// thread and must not block on anything but the database.
    ///
    /// While the disk is full this refuses at once with `DiskFull`.
    pub(crate) async fn write<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.space.admit().await?;
        self.write_reserved(f).await
    }

    /// Like [`Db::write`], but runs on a full disk too, on the room the
    /// store keeps in reserve: for writes that free space or need almost
    /// none (deletes, lease actions, the garbage collector), so that a full
    /// disk can be emptied through the API.
    pub(crate) async fn write_reserved<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let started = self.start();
        let out = match &self.backend {
            Backend::Sqlite(pool) => pool.write(f).await.unwrap_or_else(|_| {
                Err(crate::Error::Internal("the metadata writer stopped".into()))
            }),
            Backend::Postgres(pool) => {
                let pool = Arc::clone(pool);
                let scope = Arc::clone(&self.scope);
                within_deadline(tokio::task::spawn_blocking(move || pool.write(&scope, f))).await
            }
        };
        self.observed(MetadataCall::Write, started);
        self.space.observe(out)
    }

    /// Like [`Db::write`], for a closure that may run more than once: in
    /// cluster mode a transaction that lost its connection before the
    /// commit was sent, or lost a race (serialization failure, deadlock),
    /// runs it again in a new transaction, a bounded number of times. (A
    /// [`Db::write`] closure is run again only when the transaction failed
    /// before it ran.)
    pub(crate) async fn write_again<F, T>(&self, f: F) -> Result<T>
    where
        F: FnMut(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.space.admit().await?;
        self.write_again_reserved(f).await
    }

    /// [`Db::write_again`] on the room kept in reserve, as
    /// [`Db::write_reserved`].
    pub(crate) async fn write_again_reserved<F, T>(&self, f: F) -> Result<T>
    where
        F: FnMut(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let Backend::Postgres(pool) = &self.backend else {
            return self.write_reserved(f).await;
        };
        let started = self.start();
        let pool = Arc::clone(pool);
        let scope = Arc::clone(&self.scope);
        let out = within_deadline(tokio::task::spawn_blocking(move || {
            pool.write_again(&scope, f)
        }))
        .await;
        self.observed(MetadataCall::Write, started);
        self.space.observe(out)
    }
}

impl Db {
    /// The round trips waited for on a PostgreSQL metadata database since
    /// the store opened; `None` on SQLite.
    pub(crate) fn round_trips(&self) -> Option<u64> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(pool) => Some(pool.round_trips()),
        }
    }
}

/// Plans that do not depend on bound values: otherwise SQLite marks a
/// statement whose plan used a parameter's value as expired whenever that
/// parameter is bound again, and re-prepares it on its next step (the
/// parser showed up in profiles of delimited listings).
fn stable_plans(conn: &Connection) -> Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

pub(crate) use blobs::*;
pub(crate) use blocks::*;
pub(crate) use combined::*;
pub(crate) use containers::*;
pub(crate) use copies::*;
pub(crate) use deleted_containers::*;
pub(crate) use expiry::*;
pub(crate) use garbage::*;
pub(crate) use inline::*;
pub(crate) use listing::*;
pub(crate) use liveness::*;
pub(crate) use nodes::*;
pub(crate) use pages::*;
pub(crate) use service::*;
pub(crate) use tags::*;
pub(crate) use usage::store_usage;
pub use usage::{AccountUsage, StoreUsage};
pub(crate) use versions::*;
