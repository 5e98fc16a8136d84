//! PostgreSQL behind [`Sql`]: the metadata database of cluster mode, where
//! several server nodes share one database (`docs/cluster.md`, "Metadata"
//! and "Consistency").
//!
//! A [`PgConnection`] is one synchronous `postgres` client with its cache
//! of prepared statements; it is used from one thread at a time, like a
//! SQLite connection. [`PgConnection::write`] runs a closure in a
//! transaction that holds the cluster's write lock, so two nodes racing on
//! one row end like two writers on one SQLite database: one wins, the other
//! sees the winner's row. Reads run in REPEATABLE READ transactions: one
//! snapshot for all the statements of a read.

use std::cell::RefCell;
use std::collections::HashMap;

use bytes::BytesMut;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, IsolationLevel, NoTls, Statement, Transaction};

use super::sql::{Dialect, Sql, SqlRow, Value, ValueRef, dollar_placeholders};
use crate::{Error, Result};

/// The advisory lock every write transaction takes ("stowage!" in ASCII).
const WRITE_LOCK: i64 = 0x73_74_6f_77_61_67_65_21;

/// One connection to the metadata database.
pub(crate) struct PgConnection {
    url: String,
    client: Client,
    statements: HashMap<String, Statement>,
}

impl std::fmt::Debug for PgConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConnection").finish_non_exhaustive()
    }
}

impl PgConnection {
    /// Connects to `url` (`postgres://USER@HOST:PORT/DB`, or the key=value
    /// form; `host` may be a directory holding the server's socket).
    pub(crate) fn connect(url: &str) -> Result<PgConnection> {
        Ok(PgConnection {
            url: url.to_owned(),
            client: Client::connect(url, NoTls)?,
            statements: HashMap::new(),
        })
    }

    /// Runs `f` in a write transaction and commits it. The transaction
    /// first takes the cluster's write lock (a transaction-level advisory
    /// lock), so the write transactions of every node run one after
    /// another, as on SQLite's single writer: the rows `f` reads cannot
    /// change before it writes. It runs READ COMMITTED: its statements read
    /// what was committed before the lock was granted (a SERIALIZABLE
    /// snapshot would be taken by the statement that waits for the lock,
    /// and so miss the write that held it).
    pub(crate) fn write<T>(&mut self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        let mut f = Some(f);
        self.run(IsolationLevel::ReadCommitted, &mut |sql| {
            sql.execute(&format!("SELECT pg_advisory_xact_lock({WRITE_LOCK})"), &[])?;
            (f.take().expect("a write runs once"))(sql)
        })
    }

    /// Runs `f` in a read-only transaction (one snapshot for all its reads).
    pub(crate) fn read<T>(&mut self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        let mut f = Some(f);
        self.run(IsolationLevel::RepeatableRead, &mut |sql| {
            (f.take().expect("a read runs once"))(sql)
        })
    }

    fn run<T>(
        &mut self,
        isolation: IsolationLevel,
        f: &mut dyn FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T> {
        if self.client.is_closed() {
            // The database went away (a restart, a failover): connect
            // again; the prepared statements went with the old session.
            self.client = Client::connect(&self.url, NoTls)?;
            self.statements.clear();
        }
        let tx = self
            .client
            .build_transaction()
            .isolation_level(isolation)
            .read_only(matches!(isolation, IsolationLevel::RepeatableRead))
            .start()?;
        let session = PgSession {
            tx: RefCell::new(tx),
            statements: RefCell::new(&mut self.statements),
        };
        let out = f(&session)?;
        session.tx.into_inner().commit()?;
        Ok(out)
    }

    /// Runs `batch` (several statements, no parameters) outside any
    /// transaction of ours.
    pub(crate) fn batch(&mut self, batch: &str) -> Result<()> {
        Ok(self.client.batch_execute(batch)?)
    }
}

/// An open transaction, as [`Sql`].
struct PgSession<'c> {
    tx: RefCell<Transaction<'c>>,
    statements: RefCell<&'c mut HashMap<String, Statement>>,
}

impl PgSession<'_> {
    /// The prepared statement of `sql`, prepared on first use with the
    /// types of the values bound this time (so `SELECT ?2` in an
    /// INSERT ... SELECT is a BIGINT when an integer is bound); a NULL's
    /// type is inferred from where it stands. Where PostgreSQL cannot infer
    /// it (`?4 IS NULL OR name < ?4` bound to NULL), the statement is
    /// prepared again with that NULL as text. A failed prepare would end
    /// the transaction, so the first attempt runs in a savepoint.
    fn statement(&self, sql: &str, params: &[Value<'_>]) -> Result<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let text = dollar_placeholders(sql);
        let mut tx = self.tx.borrow_mut();
        tx.batch_execute("SAVEPOINT prepare")?;
        let mut types: Vec<Type> = params.iter().map(|p| p.pg_type(Type::UNKNOWN)).collect();
        let prepared = match tx.prepare_typed(&text, &types) {
            Ok(s) => s,
            Err(e) if untyped(&e) => {
                tx.batch_execute("ROLLBACK TO SAVEPOINT prepare")?;
                types = params.iter().map(|p| p.pg_type(Type::TEXT)).collect();
                tx.prepare_typed(&text, &types)?
            }
            Err(e) => return Err(e.into()),
        };
        tx.batch_execute("RELEASE SAVEPOINT prepare")?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }
}

/// PostgreSQL could not tell the type of a parameter.
fn untyped(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    e.code().is_some_and(|c| {
        *c == SqlState::INDETERMINATE_DATATYPE || *c == SqlState::AMBIGUOUS_PARAMETER
    })
}

impl Value<'_> {
    /// The type a parameter with this value is declared with; `null` for
    /// a NULL (`unknown` lets PostgreSQL infer it from where it stands).
    fn pg_type(&self, null: Type) -> Type {
        match self {
            Value::Int(_) => Type::INT8,
            Value::Real(_) => Type::FLOAT8,
            Value::Blob(_) => Type::BYTEA,
            Value::Text(_) => Type::TEXT,
            Value::Null => null,
        }
    }
}

impl Sql for PgSession<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<usize> {
        let stmt = self.statement(sql, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let n = self.tx.borrow_mut().execute(&stmt, &refs)?;
        Ok(n as usize)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Value<'_>],
        f: &mut dyn FnMut(&dyn SqlRow) -> Result<bool>,
    ) -> Result<()> {
        let stmt = self.statement(sql, params)?;
        // Every row is read before `f` sees the first: `f` may run
        // statements of its own (a listing reads each blob's tags), and the
        // connection answers one statement at a time. The queries that
        // stop early have a LIMIT.
        let rows = {
            let mut tx = self.tx.borrow_mut();
            let mut rows = tx.query_raw(&stmt, params.iter())?;
            let mut read = Vec::new();
            while let Some(row) = rows.next()? {
                let values = (0..row.len())
                    .map(|i| row.try_get::<_, Owned>(i))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                read.push(PgRow(values));
            }
            read
        };
        for row in &rows {
            if !f(row)? {
                break;
            }
        }
        Ok(())
    }

    fn sqlite(&self) -> Result<&rusqlite::Connection> {
        Err(Error::Internal(
            "this operation is not available on the PostgreSQL metadata database yet".into(),
        ))
    }
}

impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Value::Real(r) => r.to_sql(ty, out),
            Value::Text(s) => s.as_ref().to_sql(ty, out),
            Value::Blob(b) => b.as_ref().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column as read from PostgreSQL.
enum Owned {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl<'a> FromSql<'a> for Owned {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Owned, Box<dyn std::error::Error + Sync + Send>> {
        Ok(match *ty {
            Type::INT8 => Owned::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Owned::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Owned::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Owned::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Owned::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Owned::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Owned::Blob(Vec::from_sql(ty, raw)?),
            _ => Owned::Text(String::from_sql(ty, raw)?),
        })
    }

    fn from_sql_null(
        _: &Type,
    ) -> std::result::Result<Owned, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Owned::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

struct PgRow(Vec<Owned>);

impl SqlRow for PgRow {
    fn value(&self, i: usize) -> Result<ValueRef<'_>> {
        Ok(match self.0.get(i) {
            None => return Err(Error::Corrupt(format!("no column {i}"))),
            Some(Owned::Null) => Value::Null,
            Some(Owned::Int(v)) => Value::Int(*v),
            Some(Owned::Real(v)) => Value::Real(*v),
            Some(Owned::Text(v)) => Value::Text(v.as_str().into()),
            Some(Owned::Blob(v)) => Value::Blob(v.as_slice().into()),
        })
    }
}

/// Connections to the metadata database, each used by one thread at a
/// time (the calls run on the blocking pool).
#[derive(Debug)]
pub(crate) struct PgPool {
    connections: Vec<std::sync::Mutex<PgConnection>>,
    next: std::sync::atomic::AtomicUsize,
}

impl Drop for PgPool {
    /// The synchronous client may not be dropped on an async runtime's
    /// thread (it blocks on its own runtime): drop it on a thread of its own.
    fn drop(&mut self) {
        let connections = std::mem::take(&mut self.connections);
        let _ = std::thread::spawn(move || drop(connections)).join();
    }
}

impl PgPool {
    /// Connects `size` times to `url`, after bringing the schema up to date.
    pub(crate) fn open(url: &str, size: usize) -> Result<PgPool> {
        let mut first = PgConnection::connect(url)?;
        super::pg_schema::migrate(&mut first)?;
        let mut connections = vec![std::sync::Mutex::new(first)];
        for _ in 1..size {
            connections.push(std::sync::Mutex::new(PgConnection::connect(url)?));
        }
        Ok(PgPool {
            connections,
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// An idle connection, else the next in turn once it is free.
    fn connection(&self) -> std::sync::MutexGuard<'_, PgConnection> {
        if let Some(c) = self.connections.iter().find_map(|c| c.try_lock().ok()) {
            return c;
        }
        let i =
            self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % self.connections.len();
        self.connections[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn read<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        self.connection().read(f)
    }

    pub(crate) fn write<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        self.connection().write(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::sql::vals;
    use crate::testing::TempPostgres;

    /// The same statements give the same answers on SQLite and PostgreSQL:
    /// text sorts by bytes, NULL parameters compare as NULL, booleans are
    /// integers, bytes round-trip.
    #[test]
    fn statements_answer_alike_on_both_databases() {
        let pg = TempPostgres::start().unwrap();
        let mut conn = PgConnection::connect(&pg.new_database().unwrap()).unwrap();
        let sqlite = rusqlite::Connection::open_in_memory().unwrap();
        let create = "CREATE TABLE t (k TEXT COLLATE \"C\" PRIMARY KEY, n BIGINT, b BYTEA)";
        conn.batch(create).unwrap();
        sqlite
            .execute_batch(
                &create
                    .replace("COLLATE \"C\" ", "")
                    .replace("BYTEA", "BLOB"),
            )
            .unwrap();
        let run = |sql: &dyn Sql| -> Result<Vec<(String, Option<i64>, bool)>> {
            for (k, n) in [
                ("b", Some(2i64)),
                ("B", None),
                ("é", Some(0)),
                ("a/", Some(1)),
            ] {
                sql.execute(
                    "INSERT INTO t (k, n, b) VALUES (?1, ?2, ?3)",
                    &vals![k, n, &b"\x00\xff"[..]],
                )?;
            }
            let upper: Option<&str> = None;
            sql.query_map(
                "SELECT k, n, b = ?2 FROM t WHERE k > ?1 AND (?3 IS NULL OR k < ?3) ORDER BY k",
                &vals!["A", &b"\x00\xff"[..], upper],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        };
        let on_pg = conn.write(run).unwrap();
        let on_sqlite = run(&sqlite).unwrap();
        assert_eq!(on_pg, on_sqlite);
        let keys: Vec<&str> = on_pg.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(keys, ["B", "a/", "b", "é"]);
    }

    /// A row's reader may run statements of its own (a listing reads each
    /// blob's tags while it walks the blobs).
    #[test]
    fn statements_run_inside_a_walk_of_rows() {
        let pg = TempPostgres::start().unwrap();
        let mut conn = PgConnection::connect(&pg.new_database().unwrap()).unwrap();
        let sums = conn
            .write(|sql| {
                sql.execute("CREATE TABLE t (n BIGINT)", &[])?;
                for n in 1..=3i64 {
                    sql.execute("INSERT INTO t (n) VALUES (?1)", &vals![n])?;
                }
                sql.query_map("SELECT n FROM t ORDER BY n", &[], |r| {
                    let n: i64 = r.get(0)?;
                    sql.query_value::<i64>(
                        "SELECT CAST(SUM(n) AS BIGINT) FROM t WHERE n <= ?1",
                        &vals![n],
                    )?
                    .ok_or_else(crate::meta::sql::no_rows)
                })
            })
            .unwrap();
        assert_eq!(sums, [1, 3, 6]);
    }

    /// Nodes starting together migrate once; a second start finds the schema.
    #[test]
    fn the_schema_is_created_once() {
        let pg = TempPostgres::start().unwrap();
        let url = pg.new_database().unwrap();
        let starts: Vec<_> = (0..3)
            .map(|_| {
                let url = url.clone();
                std::thread::spawn(move || PgPool::open(&url, 1).map(|_| ()))
            })
            .collect();
        for s in starts {
            s.join().unwrap().unwrap();
        }
        let mut conn = PgConnection::connect(&url).unwrap();
        let versions = conn
            .read(|sql| {
                sql.query_map("SELECT version FROM stowage_schema", &[], |r| {
                    r.get::<i64>(0)
                })
            })
            .unwrap();
        assert_eq!(versions, [super::super::pg_schema::SCHEMA_VERSION]);
    }
}
