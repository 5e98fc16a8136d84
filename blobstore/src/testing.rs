//! A throwaway PostgreSQL server for tests of the cluster metadata backend:
//! `initdb` into a temporary directory, a server listening only on a unix
//! socket in that directory, stopped and deleted on drop.
//!
//! The binaries are Debian's (`/usr/lib/postgresql/*/bin`, the `postgresql`
//! package) or those in `STOWAGE_PG_BIN`. PostgreSQL refuses to run as
//! root; as root the server runs as the user `nobody`, which owns the
//! temporary directory.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// A running throwaway server; stopped on drop. It can be stopped and
/// started again on the same data directory ([`TempPostgres::stop`],
/// [`TempPostgres::start_again`]), for tests of a database that restarts.
pub struct TempPostgres {
    dir: tempfile::TempDir,
    server: std::sync::Mutex<Option<Child>>,
    databases: std::sync::atomic::AtomicUsize,
}

/// How [`TempPostgres::stop`] stops the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    /// SIGINT, PostgreSQL's fast shutdown: open transactions are rolled
    /// back, clients disconnected, a checkpoint written.
    Fast,
    /// SIGQUIT, PostgreSQL's immediate shutdown: every process exits at
    /// once, as in a crash; the next start replays the WAL.
    Immediate,
}

const PORT: u16 = 5432;

impl TempPostgres {
    /// Creates a database cluster and starts its server.
    ///
    /// # Errors
    /// No PostgreSQL binaries, or initdb or the server failing to start.
    pub fn start() -> io::Result<TempPostgres> {
        let bin = binaries()?;
        let dir = tempfile::Builder::new().prefix("stowage-pg").tempdir()?;
        let owner = owner()?;
        if let Some((uid, _)) = owner {
            chown(dir.path(), uid)?;
        }
        let data = dir.path().join("data");
        let status = as_owner(Command::new(bin.join("initdb")), owner)
            .args(["--auth=trust", "--username=stowage", "--encoding=UTF8"])
            .args(["--locale=C", "--no-sync", "--pgdata"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status()?;
        if !status.success() {
            return Err(io::Error::other(format!("initdb failed: {status}")));
        }
        let server = spawn_server(dir.path())?;
        let pg = TempPostgres {
            dir,
            server: std::sync::Mutex::new(Some(server)),
            databases: std::sync::atomic::AtomicUsize::new(0),
        };
        pg.wait_ready()?;
        Ok(pg)
    }

    /// Stops the server (its data stays); waits until it has exited.
    /// Nothing happens when it is stopped already.
    pub fn stop(&self, how: Shutdown) {
        let server = self
            .server
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(mut server) = server {
            let signal = match how {
                Shutdown::Fast => "-INT",
                Shutdown::Immediate => "-QUIT",
            };
            let _ = Command::new("kill")
                .arg(signal)
                .arg(server.id().to_string())
                .status();
            let _ = server.wait();
        }
    }

    /// Starts the server again on the same data directory and socket (the
    /// connection strings stay valid); waits until it accepts connections.
    ///
    /// # Errors
    /// The server failing to start.
    pub fn start_again(&self) -> io::Result<()> {
        {
            let mut server = self
                .server
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if server.is_some() {
                return Ok(());
            }
            *server = Some(spawn_server(self.dir.path())?);
        }
        self.wait_ready()
    }

    /// The server shared by every caller in this process that holds it:
    /// started by the first, stopped when the last drops it. Tests that
    /// each want a database of their own (`new_database`) start one server
    /// between them rather than one each (an `initdb` and a start-up take
    /// seconds on a loaded machine).
    ///
    /// # Errors
    /// As [`TempPostgres::start`].
    pub fn shared() -> io::Result<Arc<TempPostgres>> {
        static SHARED: Mutex<Weak<TempPostgres>> = Mutex::new(Weak::new());
        let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pg) = slot.upgrade() {
            return Ok(pg);
        }
        let pg = Arc::new(TempPostgres::start()?);
        *slot = Arc::downgrade(&pg);
        Ok(pg)
    }

    /// The connection string of database `db`.
    pub fn url(&self, db: &str) -> String {
        format!(
            "host={} port={PORT} user=stowage dbname={db}",
            self.dir.path().display()
        )
    }

    /// A new empty database; its connection string.
    ///
    /// # Errors
    /// The server refusing to create it.
    pub fn new_database(&self) -> io::Result<String> {
        let n = self
            .databases
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("test{n}");
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls)
            .map_err(io::Error::other)?;
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .map_err(io::Error::other)?;
        Ok(self.url(&name))
    }

    /// Waits until the server accepts connections (it takes a moment after
    /// start; this is not a test of time).
    fn wait_ready(&self) -> io::Result<()> {
        let mut last = None;
        for _ in 0..200 {
            match postgres::Client::connect(&self.url("postgres"), postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(e) => last = Some(e),
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Err(io::Error::other(format!(
            "the test PostgreSQL server did not start: {last:?}"
        )))
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        self.stop(Shutdown::Fast);
    }
}

/// Starts PostgreSQL on the cluster in `dir/data`, listening only on a
/// socket in `dir`.
fn spawn_server(dir: &Path) -> io::Result<Child> {
    let bin = binaries()?;
    as_owner(Command::new(bin.join("postgres")), owner()?)
        .arg("-D")
        .arg(dir.join("data"))
        .arg("-k")
        .arg(dir)
        .args(["-p", &PORT.to_string()])
        .args(["-c", "listen_addresses=", "-c", "fsync=off"])
        .args(["-c", "max_connections=200"])
        // Statement counts for the round-trip tests (pg_stat_statements,
        // BEGIN and COMMIT included).
        .args(["-c", "shared_preload_libraries=pg_stat_statements"])
        .args(["-c", "pg_stat_statements.track_utility=on"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

fn binaries() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("STOWAGE_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| io::Error::other(format!("no PostgreSQL in /usr/lib/postgresql: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("initdb").exists())
        .collect();
    found.sort();
    found
        .pop()
        .ok_or_else(|| io::Error::other("no PostgreSQL binaries in /usr/lib/postgresql/*/bin"))
}

/// `Some((uid, gid))` of `nobody` when running as root, else `None`.
fn owner() -> io::Result<Option<(u32, u32)>> {
    if id(&["-u"])? != 0 {
        return Ok(None);
    }
    Ok(Some((id(&["-u", "nobody"])?, id(&["-g", "nobody"])?)))
}

fn id(args: &[&str]) -> io::Result<u32> {
    let out = Command::new("id").args(args).output()?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|e| io::Error::other(format!("id {args:?}: {e}")))
}

fn chown(path: &Path, uid: u32) -> io::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), None)
}

fn as_owner(mut command: Command, owner: Option<(u32, u32)>) -> Command {
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    command
}

/// The advisory lock keys a write to blob `name` takes in cluster mode, in
/// the order it takes them (`docs/cluster.md`, "Consistency"): the cluster
/// key, shared; the container's, shared; the blob's, exclusive. For tests
/// that hold a blob's locks by hand on a connection of their own.
#[must_use]
pub fn blob_lock_keys(account: &str, container: &str, name: &str) -> [i64; 3] {
    [
        crate::meta::locks::CLUSTER_KEY,
        crate::meta::locks::container_key(account, container),
        crate::meta::locks::blob_key(account, container, name),
    ]
}
