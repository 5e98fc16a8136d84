//! The connections behind [`super::Db`]: a few read-only connections that
//! read concurrently (WAL gives each read transaction a snapshot), and one
//! writer thread that commits queued writes in groups.
//!
//! Group commit: the writer takes every write waiting in its queue (up to
//! [`MAX_GROUP`]), runs each in its own savepoint inside one IMMEDIATE
//! transaction, commits once (one WAL fsync with `synchronous = FULL`), and
//! only then hands each caller its result. A write that fails rolls back its
//! savepoint alone; a failed commit fails every write of the group. No
//! caller hears of success before its write is on disk.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use super::sql::Sql;
use crate::{Error, Result};

/// Writes committed together at most.
const MAX_GROUP: usize = 256;

/// A write waiting for the writer thread.
trait WriteJob: Send {
    /// Runs inside the group's transaction; returns what to tell the caller
    /// once the group's commit is known.
    fn run(self: Box<Self>, tx: &Transaction<'_>) -> Box<dyn Finish>;
    /// The group never got a transaction.
    fn abandon(self: Box<Self>, error: &Failure);
}

trait Finish: Send {
    /// `committed` is the outcome of the group's commit.
    fn finish(self: Box<Self>, committed: Result<(), &Failure>);
    /// Whether the write itself succeeded (its savepoint is kept).
    fn succeeded(&self) -> bool;
    /// Whether the write failed because the disk is full.
    fn found_disk_full(&self) -> bool;
}

/// Why a group (or a write in it) could not be committed. Kept apart from
/// its message so that a full disk reaches the caller as
/// [`Error::DiskFull`], which the store answers differently from a bug.
#[derive(Clone, Debug)]
struct Failure {
    message: String,
    disk_full: bool,
}

impl Failure {
    fn of(e: &rusqlite::Error) -> Failure {
        Failure {
            message: format!("metadata database: {e}"),
            disk_full: crate::error::sqlite_full(e),
        }
    }

    fn stopped() -> Failure {
        Failure {
            message: "the metadata writer has stopped".into(),
            disk_full: false,
        }
    }

    fn to_error(&self) -> Error {
        if self.disk_full {
            Error::DiskFull
        } else {
            Error::Internal(self.message.clone())
        }
    }
}

struct Pending<F, T> {
    f: F,
    reply: oneshot::Sender<Result<T>>,
}

struct Done<T> {
    out: Result<T>,
    reply: oneshot::Sender<Result<T>>,
}

impl<F, T> WriteJob for Pending<F, T>
where
    F: FnOnce(&dyn Sql) -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    fn run(self: Box<Self>, tx: &Transaction<'_>) -> Box<dyn Finish> {
        let Pending { f, reply } = *self;
        let out = catch_unwind(AssertUnwindSafe(|| f(tx)))
            .unwrap_or_else(|_| Err(Error::Internal("a metadata write panicked".into())));
        Box::new(Done { out, reply })
    }

    fn abandon(self: Box<Self>, error: &Failure) {
        let _ = self.reply.send(Err(error.to_error()));
    }
}

impl<T: Send + 'static> Finish for Done<T> {
    fn finish(self: Box<Self>, committed: Result<(), &Failure>) {
        let out = match committed {
            Ok(()) => self.out,
            Err(e) => Err(e.to_error()),
        };
        // The caller may have gone away (client disconnected); the write
        // stands either way.
        let _ = self.reply.send(out);
    }

    fn succeeded(&self) -> bool {
        self.out.is_ok()
    }

    fn found_disk_full(&self) -> bool {
        self.out.as_ref().is_err_and(Error::is_disk_full)
    }
}

/// Read connections and the writer's queue.
#[derive(Debug)]
pub(super) struct Pool {
    readers: Vec<Arc<Mutex<Connection>>>,
    next_reader: AtomicUsize,
    queue: Mutex<mpsc::Sender<Box<dyn WriteJob>>>,
}

impl Pool {
    /// A pool over `writer` and `readers`. With no readers (an in-memory
    /// database, which other connections cannot see) reads share the
    /// writer's connection.
    pub(super) fn new(writer: Connection, readers: Vec<Connection>) -> Result<Pool> {
        let writer = Arc::new(Mutex::new(writer));
        let readers = if readers.is_empty() {
            vec![Arc::clone(&writer)]
        } else {
            readers
                .into_iter()
                .map(|c| Arc::new(Mutex::new(c)))
                .collect()
        };
        let (queue, jobs) = mpsc::channel();
        std::thread::Builder::new()
            .name("stowage-db-writer".into())
            .spawn(move || write_loop(&writer, &jobs))?;
        Ok(Pool {
            readers,
            next_reader: AtomicUsize::new(0),
            queue: Mutex::new(queue),
        })
    }

    /// A read connection: the first idle one, else the next in turn.
    fn reader(&self) -> MutexGuard<'_, Connection> {
        if let Some(guard) = self.readers.iter().find_map(|c| c.try_lock().ok()) {
            return guard;
        }
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        lock(&self.readers[i])
    }

    /// Runs `f` in a read transaction (one snapshot for all its queries).
    pub(super) fn read<F, T>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Sql) -> Result<T>,
    {
        read_in(&self.reader(), f)
    }

    /// Like [`Pool::read`] when a read connection is idle; else gives `f`
    /// back without waiting.
    pub(super) fn try_read<F, T>(&self, f: F) -> std::result::Result<Result<T>, F>
    where
        F: FnOnce(&dyn Sql) -> Result<T>,
    {
        match self.readers.iter().find_map(|c| c.try_lock().ok()) {
            Some(conn) => Ok(read_in(&conn, f)),
            None => Err(f),
        }
    }

    /// Queues `f` for the writer; the receiver answers after the commit.
    pub(super) fn write<F, T>(&self, f: F) -> oneshot::Receiver<Result<T>>
    where
        F: FnOnce(&dyn Sql) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Box<dyn WriteJob> = Box::new(Pending { f, reply });
        if let Err(mpsc::SendError(job)) = lock(&self.queue).send(job) {
            job.abandon(&Failure::stopped());
        }
        answer
    }
}

fn read_in<T>(conn: &Connection, f: impl FnOnce(&dyn Sql) -> Result<T>) -> Result<T> {
    let snapshot = ReadTransaction::begin(conn)?;
    let out = f(conn);
    snapshot.end()?;
    out
}

/// A read transaction on a read connection, with cached BEGIN and COMMIT
/// statements (`Connection::transaction` parses both on every call). Ended
/// on drop too, so a read that panics does not leave its connection inside
/// a transaction.
struct ReadTransaction<'c> {
    conn: &'c Connection,
    open: bool,
}

impl<'c> ReadTransaction<'c> {
    fn begin(conn: &'c Connection) -> Result<ReadTransaction<'c>> {
        conn.prepare_cached("BEGIN DEFERRED")?.execute([])?;
        Ok(ReadTransaction { conn, open: true })
    }

    fn end(mut self) -> Result<()> {
        self.open = false;
        // Nothing to keep: a read transaction only ends.
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        Ok(())
    }
}

impl Drop for ReadTransaction<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The writer thread: until every sender is gone, commits what is queued.
fn write_loop(writer: &Mutex<Connection>, jobs: &mpsc::Receiver<Box<dyn WriteJob>>) {
    while let Ok(first) = jobs.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match jobs.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let mut conn = lock(writer);
        commit_group(&mut conn, group);
    }
}

fn commit_group(conn: &mut Connection, group: Vec<Box<dyn WriteJob>>) {
    let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(e) => {
            let failure = Failure::of(&e);
            for job in group {
                job.abandon(&failure);
            }
            return;
        }
    };
    let mut finished: Vec<Box<dyn Finish>> = Vec::with_capacity(group.len());
    let mut broken: Option<Failure> = None;
    for job in group {
        if let Some(failure) = &broken {
            job.abandon(failure);
            continue;
        }
        if let Err(e) = tx.execute_batch("SAVEPOINT job") {
            let failure = Failure::of(&e);
            job.abandon(&failure);
            broken = Some(failure);
            continue;
        }
        let done = job.run(&tx);
        let end = if done.succeeded() {
            "RELEASE job"
        } else {
            "ROLLBACK TO job; RELEASE job"
        };
        if let Err(e) = tx.execute_batch(end) {
            // SQLite rolls the whole transaction back itself after some
            // failures, a full disk among them; then the savepoint is gone
            // and so is every write of the group.
            let mut failure = Failure::of(&e);
            failure.disk_full |= done.found_disk_full();
            broken = Some(failure);
        }
        finished.push(done);
    }
    let committed = match broken {
        Some(failure) => {
            let _ = tx.rollback();
            Err(failure)
        }
        None => tx.commit().map_err(|e| Failure::of(&e)),
    };
    for done in finished {
        done.finish(committed.as_ref().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(dir: &std::path::Path) -> Pool {
        let path = dir.join("t.sqlite");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER UNIQUE);")
            .unwrap();
        let reader = Connection::open(&path).unwrap();
        reader.pragma_update(None, "query_only", "ON").unwrap();
        Pool::new(writer, vec![reader]).unwrap()
    }

    fn count(pool: &Pool) -> i64 {
        pool.read(|c| {
            Ok(c.sqlite()?
                .query_row("SELECT count(*) FROM t", [], |r| r.get(0))?)
        })
        .unwrap()
    }

    /// Writes queued together: a failing one and a panicking one roll back
    /// alone, the others commit, and each caller hears its own outcome.
    #[tokio::test]
    async fn a_group_commits_what_succeeded_and_only_that() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool(dir.path());
        let mut answers = Vec::new();
        for v in 0..20i64 {
            answers.push(pool.write(move |tx| {
                if v == 13 {
                    tx.sqlite()?.execute("INSERT INTO t (v) VALUES (100)", [])?;
                    panic!("a bug in one write");
                }
                tx.sqlite()?
                    .execute("INSERT INTO t (v) VALUES (?1)", [v % 10])?;
                Ok(v)
            }));
        }
        let mut outcomes = Vec::new();
        for a in answers {
            outcomes.push(a.await.unwrap().map_err(|e| e.to_string()));
        }
        for (v, outcome) in outcomes.iter().enumerate() {
            match v {
                0..10 => assert_eq!(outcome.as_ref().ok(), Some(&(v as i64))),
                13 => assert!(outcome.as_ref().unwrap_err().contains("panicked")),
                // A duplicate of a value inserted earlier in the group.
                _ => assert!(outcome.as_ref().unwrap_err().contains("UNIQUE")),
            }
        }
        assert_eq!(count(&pool), 10);
    }

    /// Reads run on the read connections, which refuse to write.
    #[tokio::test]
    async fn reads_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool(dir.path());
        let refused = pool.read(|c| Ok(c.sqlite()?.execute("INSERT INTO t (v) VALUES (1)", [])?));
        assert!(refused.is_err());
        assert_eq!(count(&pool), 0);
        // A read that panics leaves its connection usable.
        let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            pool.read(|_| -> Result<()> { panic!("a bug in one read") })
        }));
        assert!(panicked.is_err());
        assert_eq!(count(&pool), 0);
    }
}
