//! The metadata database: every SQL statement of Stowage lives below this
//! module, so that another backend (PostgreSQL, for several server nodes) can
//! be added beside it.
//!
//! One SQLite connection in WAL mode with `synchronous = FULL`: a committed
//! transaction is on disk before the server replies. Calls run on the
//! blocking pool, never across an `.await`.

mod blobs;
mod blocks;
mod containers;
mod garbage;
mod lease_columns;
mod listing;
mod schema;
mod service;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use crate::Result;

pub(crate) use blobs::{BlobRow, ExtentRef, NewBlob};
pub(crate) use containers::{ContainerRow, NewContainer};
pub(crate) use listing::{BlobCursor, BlobListQuery};

/// A handle on the metadata database; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Db {
    conn: Arc<Mutex<Connection>>,
}

impl Db {
    /// Opens (creating if needed) the database file at `path`, or an
    /// in-memory database when `path` is `None`.
    pub(crate) fn open(path: Option<&Path>) -> Result<Db> {
        let conn = match path {
            Some(p) => Connection::open(p)?,
            None => Connection::open_in_memory()?,
        };
        // WAL lets readers proceed while a writer commits; FULL makes every
        // commit durable before it returns (DESIGN.md, write order step 2).
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&conn)?;
        Ok(Db {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` with the connection on the blocking pool.
    pub(crate) async fn call<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|e| e.into_inner());
            f(&mut guard)
        })
        .await?
    }

    /// Runs `f` inside one IMMEDIATE transaction (the write lock is taken at
    /// the start, so the rows `f` reads cannot change before it writes) and
    /// commits when it returns `Ok`.
    pub(crate) async fn write<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&rusqlite::Transaction<'_>) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }
}

pub(crate) use blobs::*;
pub(crate) use blocks::*;
pub(crate) use containers::*;
pub(crate) use garbage::*;
pub(crate) use listing::*;
pub(crate) use service::*;
