//! Statements that commit on their own, outside any transaction and
//! without the cluster's write lock: for the nodes' bookkeeping
//! (`meta::liveness`: heartbeats, uploads in flight), rows keyed by a
//! node's number or a fresh object name that no other write reads under
//! the lock. One round trip per statement.

use std::sync::atomic::Ordering;

use futures::TryStreamExt;
use postgres::types::Type;
use tokio_postgres::Statement;

use super::{BACKOFF, Owned, PgConnection, PgPool, PgRow, retryable};
use crate::meta::sql::{Dialect, Sql, SqlRow, Value, dollar_placeholders};
use crate::{Error, Result};

impl PgPool {
    /// Runs `f`, each of its statements committing on its own, on a
    /// connection of the pool. `f` runs again (after a pause, on a new
    /// connection) when the database could not be reached: its statements
    /// must be ones that can run twice.
    pub(crate) fn autocommit<T>(&self, f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        self.connection().autocommit(f)
    }
}

impl PgConnection {
    fn autocommit<T>(&mut self, mut f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        let mut pauses = BACKOFF.iter();
        loop {
            let error = match self.autocommit_once(&mut f) {
                Ok(out) => return Ok(out),
                Err(e) => e,
            };
            if error.is_unavailable() {
                self.broken = true;
            }
            match pauses.next() {
                Some(pause) if retryable(&error) => std::thread::sleep(*pause),
                _ => return Err(error),
            }
        }
    }

    fn autocommit_once<T>(&mut self, f: &mut impl FnMut(&dyn Sql) -> Result<T>) -> Result<T> {
        if self.broken || self.client.is_closed() {
            self.client = self.driver.connect(&self.config)?;
            self.statements.clear();
            self.broken = false;
        }
        let session = Autocommit {
            client: &self.client,
            statements: std::cell::RefCell::new(&mut self.statements),
            round_trips: &self.round_trips,
        };
        f(&session)
    }
}

/// A connection running each statement on its own.
struct Autocommit<'c> {
    client: &'c tokio_postgres::Client,
    statements: std::cell::RefCell<&'c mut std::collections::HashMap<String, Statement>>,
    round_trips: &'c std::sync::atomic::AtomicU64,
}

impl Autocommit<'_> {
    fn wait<F: Future>(&self, f: F) -> F::Output {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        futures::executor::block_on(f)
    }

    /// The prepared statement of `sql` (its parameters typed by the values
    /// bound the first time; none of these statements binds a NULL).
    fn statement(&self, sql: &str, params: &[Value<'_>]) -> Result<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let types: Vec<Type> = params.iter().map(|p| p.pg_type(Type::TEXT)).collect();
        let text = dollar_placeholders(sql);
        let prepared = self.wait(self.client.prepare_typed(&text, &types))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }
}

impl Sql for Autocommit<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize> {
        let stmt = self.statement(sql, params)?;
        let client = self.client;
        let n = self.wait(client.execute_raw(&stmt, params.iter()))?;
        Ok(n as usize)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: &mut dyn FnMut(&dyn SqlRow) -> Result<bool>,
    ) -> Result<()> {
        let stmt = self.statement(sql, params)?;
        let client = self.client;
        let rows = self.wait(async {
            let rows = client.query_raw(&stmt, params.iter()).await?;
            futures::pin_mut!(rows);
            let mut read = Vec::new();
            while let Some(row) = rows.try_next().await? {
                let values = (0..row.len())
                    .map(|i| row.try_get::<_, Owned>(i))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                read.push(PgRow(values));
            }
            Ok::<_, postgres::Error>(read)
        })?;
        for row in &rows {
            if !f(row)? {
                break;
            }
        }
        Ok(())
    }

    fn sqlite(&self) -> Result<&rusqlite::Connection> {
        Err(Error::Internal(
            "a statement committing on its own runs on PostgreSQL".into(),
        ))
    }
}
