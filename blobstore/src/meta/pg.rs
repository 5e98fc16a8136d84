//! PostgreSQL behind [`Sql`]: the metadata database of cluster mode, where
//! several server nodes share one database (`docs/cluster.md`, "Metadata"
//! and "Consistency").
//!
//! A [`PgConnection`] is one synchronous `postgres` client with its cache
//! of prepared statements; it is used from one thread at a time, like a
//! SQLite connection. [`PgConnection::write`] runs a closure in a
//! transaction that holds the write locks of its scope (its blob, its
//! container, or the whole store: [`Scope`]), so two nodes racing on one
//! blob end like two writers on one SQLite database: one wins, the other
//! sees the winner's row. Reads run in REPEATABLE READ transactions: one
//! snapshot for all the statements of a read.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use futures::{FutureExt, TryStreamExt};
use postgres::error::SqlState;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Config, NoTls, Statement};

use super::locks::Scope;
use super::sql::{Dialect, Sql, SqlRow, Value, ValueRef, dollar_placeholders};
use crate::{Error, Result};

mod autocommit;

/// What opens a write transaction whose locks are `scope`'s: sent in the
/// same round trip as the transaction's first statement. The lock
/// statement also reads the database's clock once the locks are granted.
fn begin_write(scope: &Scope) -> String {
    format!(
        "BEGIN ISOLATION LEVEL READ COMMITTED; {}",
        scope.lock_statement()
    )
}

/// The comment in front of every statement sent without waiting
/// ([`Sql::execute_deferred`]).
pub(crate) const DEFERRED_MARK: &str = "/* deferred */ ";

/// What opens a read transaction, likewise.
const BEGIN_READ: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";

/// How long a node waits for a connection to the database (the TCP or
/// socket connect and the start-up exchange) before it gives up.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The server-side limit on one statement (`statement_timeout`), the wait
/// for the write locks included: a statement that runs longer is cancelled
/// and its request answered 503.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(15);

/// A session left idle inside a transaction this long (a node that stopped
/// half-way, holding its write locks) is ended by the database, which
/// rolls the transaction back and frees the locks.
pub(crate) const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(30);

/// Attempts at one transaction when it fails in a way that running it again
/// can cure (a lost connection before the commit was sent, a serialization
/// failure or a deadlock), and the pauses between them.
const BACKOFF: [Duration; 3] = [
    Duration::from_millis(50),
    Duration::from_millis(250),
    Duration::from_millis(1000),
];

/// The thread that drives the connections' sockets (`tokio_postgres`
/// connections are futures). The calling threads only wait on channels to
/// it, so they may be any threads, the blocking pool's included. Shut down
/// without waiting when dropped, which may happen on an async runtime's
/// thread.
#[derive(Debug)]
struct Driver(Option<tokio::runtime::Runtime>);

impl Driver {
    fn start() -> Result<Arc<Driver>> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("stowage-pg")
            .enable_all()
            .build()?;
        Ok(Arc::new(Driver(Some(runtime))))
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.0.as_ref().expect("the driver runs until dropped")
    }

    /// A new client for `config`, its connection running on the driver.
    fn connect(&self, config: &Config) -> Result<Client> {
        let config = config.clone();
        let connecting = self.runtime().spawn(async move {
            let (client, connection) = config.connect(NoTls).await?;
            tokio::spawn(connection);
            Ok::<_, postgres::Error>(client)
        });
        Ok(futures::executor::block_on(connecting)
            .map_err(|e| Error::Internal(format!("connecting to PostgreSQL: {e}")))??)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// One connection to the metadata database.
pub(crate) struct PgConnection {
    config: Config,
    driver: Arc<Driver>,
    client: Client,
    statements: HashMap<String, Statement>,
    round_trips: Arc<AtomicU64>,
    /// The last transaction lost the connection: connect again first.
    broken: bool,
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
        Self::connect_on(url, Driver::start()?, Arc::default())
    }

    fn connect_on(
        url: &str,
        driver: Arc<Driver>,
        round_trips: Arc<AtomicU64>,
    ) -> Result<PgConnection> {
        let config = with_timeouts(url.parse()?);
        Ok(PgConnection {
            client: driver.connect(&config)?,
            config,
            driver,
            statements: HashMap::new(),
            round_trips,
            broken: false,
        })
    }

    /// Runs `f` in a write transaction and commits it. The transaction
    /// first takes the locks of `scope` (transaction-level advisory locks),
    /// so the write transactions of every node that touch what `f` touches
    /// run one after another, as on SQLite's single writer: the rows `f`
    /// reads under them cannot change before it writes. It runs READ
    /// COMMITTED: its statements read what was committed before the locks
    /// were granted (a SERIALIZABLE snapshot would be taken by the
    /// statement that waits for them, and so miss the write that held
    /// them).
    ///
    /// Round trips: BEGIN and the locks travel with `f`'s first statement,
    /// then one per further statement waited for, and one for COMMIT; the
    /// statements sent with [`Sql::execute_deferred`] travel with the next
    /// of these.
    ///
    /// `f` runs once: when the transaction fails before `f` was called (a
    /// lost connection that cannot be opened again at once), it is tried
    /// again; once `f` has run, a failure is the caller's
    /// ([`PgConnection::write_again`] runs a closure that may run twice).
    pub(crate) fn write<T>(
        &mut self,
        scope: &Scope,
        f: impl FnOnce(&dyn Sql) -> Result<T>,
    ) -> Result<T> {
        let f = RefCell::new(Some(f));
        self.run(
            &begin_write(scope),
            true,
            &mut |sql| {
                let f = f.borrow_mut().take().ok_or_else(ran_once)?;
                f(sql)
            },
            &|| f.borrow().is_some(),
        )
    }

    /// [`PgConnection::write`] for a closure that may run again: a lost
    /// connection before the commit was sent, a serialization failure or a
    /// deadlock run it again in a new transaction (a bounded number of
    /// times).
    pub(crate) fn write_again<T>(
        &mut self,
        scope: &Scope,
        mut f: impl FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T> {
        self.run(&begin_write(scope), true, &mut |sql| f(sql), &|| true)
    }

    /// Runs `f` in a read-only transaction (one snapshot for all its
    /// reads). Round trips: one per statement; BEGIN travels with the
    /// first, and COMMIT is sent without waiting for its answer (the next
    /// transaction on this connection is behind it on the socket, and a
    /// read has nothing to lose). Tried again, like a write, when it failed
    /// before `f` ran.
    pub(crate) fn read<T>(&mut self, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
        let f = RefCell::new(Some(f));
        self.run(
            BEGIN_READ,
            false,
            &mut |sql| {
                let f = f.borrow_mut().take().ok_or_else(ran_once)?;
                f(sql)
            },
            &|| f.borrow().is_some(),
        )
    }

    /// Runs `f` in a transaction, and again (after a pause) when the
    /// attempt failed in a way a new attempt can cure and `rerunnable` says
    /// `f` can run again.
    fn run<T>(
        &mut self,
        begin: &str,
        write: bool,
        f: &mut dyn FnMut(&dyn Sql) -> Result<T>,
        rerunnable: &dyn Fn() -> bool,
    ) -> Result<T> {
        let mut pauses = BACKOFF.iter();
        loop {
            let failure = match self.attempt(begin, write, f) {
                Ok(out) => return Ok(out),
                Err(failure) => failure,
            };
            let (error, retry) = match failure {
                Failure::Before(e) => {
                    let retry = retryable(&e) && rerunnable();
                    (e, retry)
                }
                Failure::AtCommit(e) => {
                    // The commit was sent: only the database saying it
                    // rolled back makes another attempt safe.
                    let retry = matches!(&e, Error::Postgres(p) if rolled_back(p)) && rerunnable();
                    (e, retry)
                }
            };
            if error.is_unavailable() {
                self.broken = true;
            }
            match pauses.next() {
                Some(pause) if retry => std::thread::sleep(*pause),
                _ => return Err(error),
            }
        }
    }

    fn attempt<T>(
        &mut self,
        begin: &str,
        write: bool,
        f: &mut dyn FnMut(&dyn Sql) -> Result<T>,
    ) -> std::result::Result<T, Failure> {
        if self.broken || self.client.is_closed() {
            // The database went away (a restart, a failover): connect
            // again; the prepared statements went with the old session.
            self.client = self.driver.connect(&self.config).map_err(Failure::Before)?;
            self.statements.clear();
            self.broken = false;
        }
        let session = PgSession {
            client: &self.client,
            statements: RefCell::new(&mut self.statements),
            begin: RefCell::new(Some(begin)),
            round_trips: &self.round_trips,
            deferred: RefCell::default(),
            clock: Rc::default(),
        };
        let out = f(&session);
        if session.begin.borrow().is_some() {
            // No statement ran: no transaction was opened.
            return out.map_err(Failure::Before);
        }
        // A failure rolls the transaction back: nothing of it becomes
        // visible.
        match out {
            Ok(v) if write => {
                session.commit()?;
                Ok(v)
            }
            Ok(v) => {
                if !session.deferred.borrow().is_empty() {
                    session
                        .wait(futures::future::ready(Ok::<_, Error>(())))
                        .map_err(Failure::Before)?;
                }
                session.send("COMMIT");
                Ok(v)
            }
            Err(e) => {
                session.send("ROLLBACK");
                Err(Failure::Before(e))
            }
        }
    }

    /// Runs `batch` (several statements, no parameters) outside any
    /// transaction of ours.
    pub(crate) fn batch(&mut self, batch: &str) -> Result<()> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        Ok(futures::executor::block_on(
            self.client.batch_execute(batch),
        )?)
    }
}

/// How an attempt at a transaction failed.
enum Failure {
    /// Before its commit was sent: the database rolled it back (or will,
    /// when it notices the connection is gone).
    Before(Error),
    /// While committing: whether it committed is not known, unless the
    /// database answered that it rolled back.
    AtCommit(Error),
}

fn ran_once() -> Error {
    Error::Internal("a metadata call that runs once was asked to run again".into())
}

/// `config` with the timeouts of cluster mode, where the connection string
/// does not set its own: [`CONNECT_TIMEOUT`], TCP keep-alives (a database
/// host that vanished is noticed), and the server-side
/// [`STATEMENT_TIMEOUT`] and [`IDLE_IN_TRANSACTION_TIMEOUT`].
fn with_timeouts(mut config: Config) -> Config {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(STATEMENT_TIMEOUT);
    }
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(10));
    let mut options = config.get_options().unwrap_or_default().to_owned();
    for (name, value) in [
        ("statement_timeout", STATEMENT_TIMEOUT),
        (
            "idle_in_transaction_session_timeout",
            IDLE_IN_TRANSACTION_TIMEOUT,
        ),
    ] {
        if !options.contains(name) {
            options.push_str(&format!(" -c {name}={}", value.as_millis()));
        }
    }
    config.options(options.trim());
    config
}

/// The database refused or lost the request in a way that says "not now"
/// rather than "wrong": it cannot be reached, it is shutting down or
/// starting, it is out of connections, a statement ran out of time, or the
/// transaction lost a race (serialization failure, deadlock). Answered 503
/// ServerBusy; the client's retry may succeed.
pub(crate) fn unavailable(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        let class = &code.code()[..2];
        return class == "08" // connection exception
            || class == "53" // insufficient resources (too many connections)
            || class == "57" // operator intervention: shutdown, cancel, timeout
            || rolled_back(e)
            || *code == SqlState::LOCK_NOT_AVAILABLE
            || *code == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT;
    }
    // No answer from the server at all: the socket failed, the connect
    // failed or timed out.
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<std::io::Error>().is_some() {
            return true;
        }
        source = s.source();
    }
    let text = e.to_string();
    text.starts_with("timeout waiting for server") || text.starts_with("error connecting to server")
}

/// The database rolled the transaction back because it lost a race: a
/// serialization failure or a deadlock. Running it again is safe.
fn rolled_back(e: &postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    })
}

/// Whether a failed transaction may succeed when run again: the database
/// was unreachable or lost the connection, or the transaction lost a race.
fn retryable(e: &Error) -> bool {
    match e {
        Error::Postgres(p) => {
            unavailable(p) && p.code().is_none_or(|c| *c != SqlState::QUERY_CANCELED)
        }
        _ => false,
    }
}

/// A transaction on one connection, as [`Sql`]. It is opened by its first
/// statement: `begin` is sent in the same round trip.
struct PgSession<'c> {
    client: &'c Client,
    statements: RefCell<&'c mut HashMap<String, Statement>>,
    begin: RefCell<Option<&'c str>>,
    round_trips: &'c AtomicU64,
    /// The answers of the statements sent without waiting
    /// ([`Sql::execute_deferred`]), in the order they were sent.
    deferred: RefCell<Vec<Deferred<'c>>>,
    /// The database's clock when a write's locks were granted
    /// (microseconds since the epoch), read with BEGIN (shared with the
    /// answer of a BEGIN sent without waiting).
    clock: Rc<Cell<Option<i64>>>,
}

/// The answer of a statement sent without waiting.
type Deferred<'c> = Pin<Box<dyn Future<Output = std::result::Result<u64, postgres::Error>> + 'c>>;

impl<'c> PgSession<'c> {
    /// Waits for `f`, one round trip to the database. The answers of the
    /// deferred statements sent before `f` arrive in the same round trip
    /// (they are ahead of it on the socket); the first of them that failed
    /// is the error, since it aborted the transaction and `f` with it.
    fn wait<T, E: Into<Error>>(
        &self,
        f: impl Future<Output = std::result::Result<T, E>>,
    ) -> Result<T> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        let deferred = self.deferred.take();
        let (earlier, out) =
            futures::executor::block_on(futures::future::join(settle(deferred), f));
        earlier?;
        out.map_err(Into::into)
    }

    /// Commits, in one round trip with the answers of the deferred
    /// statements still unread. When one of them failed, the transaction
    /// was aborted there and the COMMIT rolled it back (PostgreSQL answers
    /// the COMMIT of an aborted transaction without an error): the failure
    /// is that statement's, and nothing was committed.
    fn commit(&self) -> std::result::Result<(), Failure> {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        let deferred = self.deferred.take();
        let (earlier, committed) = futures::executor::block_on(futures::future::join(
            settle(deferred),
            self.client.batch_execute("COMMIT"),
        ));
        if let Err(e) = earlier {
            // Without an answer from the server (a lost connection), the
            // COMMIT behind it may or may not have run.
            return Err(match e.code() {
                Some(_) => Failure::Before(e.into()),
                None => Failure::AtCommit(e.into()),
            });
        }
        committed.map_err(|e| Failure::AtCommit(e.into()))
    }

    /// Sends `f`'s request now and keeps its answer for the next wait.
    fn defer(&self, f: Deferred<'c>) {
        let mut f = f;
        // The first poll encodes the request and hands it to the
        // connection; the answer is read by a later poll.
        let waker = futures::task::noop_waker();
        let f = match f.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(out) => Box::pin(futures::future::ready(out)),
            Poll::Pending => f,
        };
        self.deferred.borrow_mut().push(f);
    }

    /// Sends `sql` without waiting for its answer (which the connection
    /// reads and drops).
    fn send(&self, sql: &str) {
        let _ = self.client.batch_execute(sql).now_or_never();
    }

    /// Runs `f` (one statement), with the transaction's BEGIN in front of
    /// it when it is the first: both in one round trip.
    fn first_with_begin<T>(
        &self,
        f: impl Future<Output = std::result::Result<T, postgres::Error>>,
    ) -> Result<T> {
        let begin = self.begin.borrow_mut().take();
        match begin {
            Some(begin) => {
                let (begun, out) = self.wait(
                    futures::future::join(self.client.simple_query(begin), f).map(Ok::<_, Error>),
                )?;
                self.clock.set(last_integer(&begun?));
                Ok(out?)
            }
            None => self.wait(f),
        }
    }

    /// Opens the transaction without waiting, when no statement did yet.
    fn begin_deferred(&self) {
        let begin = self.begin.borrow_mut().take();
        if let Some(begin) = begin {
            let client = self.client;
            let clock = Rc::clone(&self.clock);
            self.defer(Box::pin(async move {
                let begun = client.simple_query(begin).await?;
                clock.set(last_integer(&begun));
                Ok(0)
            }));
        }
    }

    /// The prepared statement of `sql`, prepared on first use with the
    /// types of the values bound this time (so `SELECT ?2` in an
    /// INSERT ... SELECT is a BIGINT when an integer is bound); a NULL's
    /// type is inferred from where it stands. Where PostgreSQL cannot infer
    /// it (`?4 IS NULL OR name < ?4` bound to NULL), the statement is
    /// prepared again with that NULL as text. Before the transaction is
    /// opened a failed prepare costs nothing; inside it, it would end the
    /// transaction, so there the first attempt runs in a savepoint.
    fn statement(&self, sql: &str, params: &[Value<'_>]) -> Result<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let text = dollar_placeholders(sql);
        let opened = self.begin.borrow().is_none();
        if opened {
            self.wait(self.client.batch_execute("SAVEPOINT prepare"))?;
        }
        let mut types: Vec<Type> = params.iter().map(|p| p.pg_type(Type::UNKNOWN)).collect();
        let prepared = match self.wait(self.client.prepare_typed(&text, &types)) {
            Ok(s) => s,
            Err(Error::Postgres(e)) if untyped(&e) => {
                if opened {
                    self.wait(self.client.batch_execute("ROLLBACK TO SAVEPOINT prepare"))?;
                }
                types = params.iter().map(|p| p.pg_type(Type::TEXT)).collect();
                self.wait(self.client.prepare_typed(&text, &types))?
            }
            Err(e) => return Err(e),
        };
        if opened {
            self.wait(self.client.batch_execute("RELEASE SAVEPOINT prepare"))?;
        }
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }
}

/// Waits for the answers of deferred statements, in order; the first
/// error, if one failed.
async fn settle(deferred: Vec<Deferred<'_>>) -> std::result::Result<(), postgres::Error> {
    for answer in futures::future::join_all(deferred).await {
        answer?;
    }
    Ok(())
}

/// The last column of the last row of a simple query's answer, as an
/// integer: the clock a write's lock statement reads.
fn last_integer(messages: &[tokio_postgres::SimpleQueryMessage]) -> Option<i64> {
    messages.iter().rev().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(row) => {
            row.get(row.len().checked_sub(1)?)?.parse().ok()
        }
        _ => None,
    })
}

/// PostgreSQL could not tell the type of a parameter.
fn untyped(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    e.code().is_some_and(|c| {
        *c == SqlState::INDETERMINATE_DATATYPE || *c == SqlState::AMBIGUOUS_PARAMETER
    })
}

impl Value<'_> {
    /// The same value, owning what it binds (a deferred statement's
    /// parameters outlive the call that sent it).
    fn to_static(&self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Int(i) => Value::Int(*i),
            Value::Real(r) => Value::Real(*r),
            Value::Text(t) => Value::Text(t.clone().into_owned().into()),
            Value::Blob(b) => Value::Blob(b.clone().into_owned().into()),
        }
    }

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
        let n = self.first_with_begin(self.client.execute_raw(&stmt, params.iter()))?;
        Ok(n as usize)
    }

    fn execute_deferred(&self, sql: &str, params: &[Value<'_>]) -> Result<()> {
        // Marked, so that `pg_stat_statements` tells the statements that
        // were not waited for from those that were (bench/run counts
        // round trips that way).
        let stmt = self.statement(&format!("{DEFERRED_MARK}{sql}"), params)?;
        self.begin_deferred();
        let owned: Vec<Value<'static>> = params.iter().map(Value::to_static).collect();
        let client = self.client;
        self.defer(Box::pin(async move {
            client.execute_raw(&stmt, owned.iter()).await
        }));
        Ok(())
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
        let rows = self.first_with_begin(async {
            let rows = self.client.query_raw(&stmt, params.iter()).await?;
            futures::pin_mut!(rows);
            let mut read = Vec::new();
            while let Some(row) = rows.try_next().await? {
                let values = (0..row.len())
                    .map(|i| row.try_get::<_, Owned>(i))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                read.push(PgRow(values));
            }
            Ok(read)
        })?;
        for row in &rows {
            if !f(row)? {
                break;
            }
        }
        Ok(())
    }

    fn locked_at(&self) -> Result<Option<std::time::SystemTime>> {
        let pending = self.begin.borrow_mut().take();
        if let Some(begin) = pending {
            // Asked before the first statement: BEGIN and the locks alone.
            let begun = self.wait(self.client.simple_query(begin))?;
            self.clock.set(last_integer(&begun));
        } else if self.clock.get().is_none() && !self.deferred.borrow().is_empty() {
            // BEGIN was sent without waiting: its answer carries the clock.
            self.wait(futures::future::ready(Ok::<(), Error>(())))?;
        }
        Ok(self
            .clock
            .get()
            .map(|micros| crate::timestamps::from_nanos(micros.saturating_mul(1000))))
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
    round_trips: Arc<AtomicU64>,
}

impl PgPool {
    /// Connects `size` times to `url`, after bringing the schema up to date.
    pub(crate) fn open(url: &str, size: usize) -> Result<PgPool> {
        let driver = Driver::start()?;
        let round_trips = Arc::new(AtomicU64::new(0));
        let mut first = PgConnection::connect_on(url, driver.clone(), round_trips.clone())?;
        super::pg_schema::migrate(&mut first)?;
        let mut connections = vec![std::sync::Mutex::new(first)];
        for _ in 1..size {
            connections.push(std::sync::Mutex::new(PgConnection::connect_on(
                url,
                driver.clone(),
                round_trips.clone(),
            )?));
        }
        Ok(PgPool {
            connections,
            next: std::sync::atomic::AtomicUsize::new(0),
            round_trips,
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

    pub(crate) fn write<T>(
        &self,
        scope: &Scope,
        f: impl FnOnce(&dyn Sql) -> Result<T>,
    ) -> Result<T> {
        self.connection().write(scope, f)
    }

    pub(crate) fn write_again<T>(
        &self,
        scope: &Scope,
        f: impl FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T> {
        self.connection().write_again(scope, f)
    }

    /// The round trips to the database that this pool's connections have
    /// waited for so far (a statement with its BEGIN is one; a COMMIT sent
    /// without waiting is none).
    pub(crate) fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::sql::vals;
    use crate::testing::{Shutdown, TempPostgres};

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
        let on_pg = conn.write(&Scope::Store, run).unwrap();
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
            .write(&Scope::Store, |sql| {
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

    /// Statements sent without waiting cost no round trip of their own:
    /// their answers come with the next statement waited for, or with the
    /// COMMIT. One of them failing fails the write there, and nothing of
    /// it is committed; the connection serves the next write.
    #[test]
    fn deferred_statements_fail_the_write_and_roll_it_back() {
        let pg = TempPostgres::start().unwrap();
        let mut conn = PgConnection::connect(&pg.new_database().unwrap()).unwrap();
        conn.batch("CREATE TABLE t (n BIGINT PRIMARY KEY)").unwrap();
        let insert = "INSERT INTO t (n) VALUES (?1)";
        // Prepares both statements; the waited count sees the deferred row.
        let seen = conn
            .write(&Scope::Store, |sql| {
                sql.execute_deferred(insert, &vals![1i64])?;
                sql.query_value::<i64>("SELECT COUNT(*) FROM t", &[])
            })
            .unwrap();
        assert_eq!(seen, Some(1));
        assert_eq!(count(&mut conn), 1);

        let before = conn.round_trips.load(Ordering::Relaxed);
        conn.write(&Scope::Store, |sql| {
            sql.query_value::<i64>("SELECT COUNT(*) FROM t", &[])?;
            sql.execute_deferred(insert, &vals![2i64])?;
            sql.execute_deferred(insert, &vals![3i64])
        })
        .unwrap();
        let trips = conn.round_trips.load(Ordering::Relaxed) - before;
        assert_eq!(trips, 2, "BEGIN with the read, the inserts with COMMIT");
        assert_eq!(count(&mut conn), 3);

        let unique = |e: &Error| matches!(e, Error::Postgres(p) if p.code() == Some(&SqlState::UNIQUE_VIOLATION));
        // Failing at the COMMIT: rows before and after it are not kept.
        let e = conn
            .write(&Scope::Store, |sql| {
                sql.execute_deferred(insert, &vals![4i64])?;
                sql.execute_deferred(insert, &vals![2i64])?;
                sql.execute_deferred(insert, &vals![5i64])
            })
            .unwrap_err();
        assert!(unique(&e), "{e:?}");
        assert!(!e.is_unavailable(), "{e:?}");
        assert_eq!(count(&mut conn), 3);
        // Failing at the next statement waited for.
        let e = conn
            .write(&Scope::Store, |sql| {
                sql.execute_deferred(insert, &vals![3i64])?;
                sql.query_value::<i64>("SELECT COUNT(*) FROM t", &[])
            })
            .unwrap_err();
        assert!(unique(&e), "{e:?}");
        conn.write(&Scope::Store, |sql| {
            sql.execute_deferred(insert, &vals![6i64])
        })
        .unwrap();
        assert_eq!(count(&mut conn), 4);
    }

    /// An unscoped write takes the cluster key exclusively, as every write
    /// did before there were scopes.
    #[test]
    fn an_unscoped_write_locks_the_whole_store() {
        let lock = i64::from_be_bytes(*b"stowage!");
        assert!(begin_write(&Scope::Store).contains(&format!("pg_advisory_xact_lock({lock}),")));
    }

    /// Ends every other session of the database (as a restart of the
    /// database does to a node's pooled connections).
    fn terminate_others(url: &str) {
        let mut admin = PgConnection::connect(url).unwrap();
        admin
            .batch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            )
            .unwrap();
    }

    /// Waits until the driver has seen the server end `conn`'s session
    /// (pg_terminate_backend returns before the session has ended).
    fn wait_closed(conn: &PgConnection) {
        for _ in 0..500 {
            if conn.client.is_closed() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the terminated session was not seen to end");
    }

    fn count(conn: &mut PgConnection) -> i64 {
        conn.read(|sql| {
            sql.query_value::<i64>("SELECT COUNT(*) FROM t", &[])?
                .ok_or_else(crate::meta::sql::no_rows)
        })
        .unwrap()
    }

    /// A connection lost while idle in the pool (the database restarted) is
    /// replaced when the next transaction finds it lost, before its closure
    /// ran: the caller sees nothing of it.
    #[test]
    fn a_connection_lost_while_idle_is_replaced_without_an_error() {
        let pg = TempPostgres::start().unwrap();
        let url = pg.new_database().unwrap();
        let mut conn = PgConnection::connect(&url).unwrap();
        conn.batch("CREATE TABLE t (n BIGINT)").unwrap();
        terminate_others(&url);
        wait_closed(&conn);
        let mut runs = 0;
        conn.write(&Scope::Store, |sql| {
            runs += 1;
            sql.execute("INSERT INTO t (n) VALUES (1)", &[])
        })
        .unwrap();
        assert_eq!(runs, 1);
        terminate_others(&url);
        wait_closed(&conn);
        assert_eq!(count(&mut conn), 1);
    }

    /// A connection lost inside the closure: a closure that may run again
    /// runs again in a new transaction, one that runs once fails with an
    /// error the server answers 503, and its first statements are not
    /// committed.
    #[test]
    fn a_connection_lost_inside_a_write_is_retried_only_when_the_write_can_run_again() {
        let pg = TempPostgres::start().unwrap();
        let url = pg.new_database().unwrap();
        let mut conn = PgConnection::connect(&url).unwrap();
        conn.batch("CREATE TABLE t (n BIGINT)").unwrap();
        let lose_connection = |sql: &dyn Sql| -> Result<()> {
            sql.execute("INSERT INTO t (n) VALUES (1)", &[])?;
            sql.execute("SELECT pg_terminate_backend(pg_backend_pid())", &[])?;
            Ok(())
        };

        let mut runs = 0;
        conn.write_again(&Scope::Store, |sql| {
            runs += 1;
            if runs == 1 {
                lose_connection(sql)?;
            }
            sql.execute("INSERT INTO t (n) VALUES (2)", &[])
        })
        .unwrap();
        assert_eq!(runs, 2);
        assert_eq!(count(&mut conn), 1, "only the second run committed");

        let once = conn.write(&Scope::Store, |sql| {
            lose_connection(sql)?;
            sql.execute("INSERT INTO t (n) VALUES (3)", &[])
        });
        let e = once.unwrap_err();
        assert!(e.is_unavailable(), "{e:?}");
        assert_eq!(count(&mut conn), 1, "nothing of the lost write is visible");
    }

    /// A serialization failure is retried; one that keeps failing ends in
    /// an error the server answers 503, after a bounded number of runs.
    #[test]
    fn serialization_failures_are_retried_a_bounded_number_of_times() {
        let pg = TempPostgres::start().unwrap();
        let url = pg.new_database().unwrap();
        let mut conn = PgConnection::connect(&url).unwrap();
        let fail = "DO $$ BEGIN RAISE EXCEPTION 'lost a race' USING ERRCODE = '40001'; END $$";
        let mut runs = 0;
        let out = conn.write_again(&Scope::Store, |sql| {
            runs += 1;
            if runs < 3 {
                sql.execute(fail, &[])?;
            }
            Ok(runs)
        });
        assert_eq!(out.unwrap(), 3);
        let mut runs = 0;
        let e = conn
            .write_again(&Scope::Store, |sql| {
                runs += 1;
                sql.execute(fail, &[])
            })
            .unwrap_err();
        assert!(e.is_unavailable(), "{e:?}");
        assert_eq!(runs, 1 + BACKOFF.len());
    }

    /// While the database is down a call fails at once with an error the
    /// server answers 503; once it is back the same connection serves again.
    #[test]
    fn a_stopped_database_fails_fast_and_serves_again_after_its_restart() {
        let pg = TempPostgres::start().unwrap();
        let url = pg.new_database().unwrap();
        let mut conn = PgConnection::connect(&url).unwrap();
        conn.batch("CREATE TABLE t (n BIGINT)").unwrap();
        for how in [Shutdown::Fast, Shutdown::Immediate] {
            pg.stop(how);
            let started = std::time::Instant::now();
            let e = conn
                .write(&Scope::Store, |sql| {
                    sql.execute("INSERT INTO t (n) VALUES (1)", &[])
                })
                .unwrap_err();
            assert!(e.is_unavailable(), "{e:?}");
            assert!(started.elapsed() < CONNECT_TIMEOUT + Duration::from_secs(3));
            pg.start_again().unwrap();
            conn.write(&Scope::Store, |sql| {
                sql.execute("INSERT INTO t (n) VALUES (1)", &[])
            })
            .unwrap();
        }
        assert_eq!(count(&mut conn), 2);
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
