//! Stowage nodes as real processes, for the tests of faults across a
//! cluster: the built `stowage-server` binary started N times on one
//! throwaway PostgreSQL database (`--metadata`) and one shared directory
//! of objects (`--objects file:///...`), each node killable with SIGKILL and
//! restartable on the same port; the database can be stopped and started
//! again on its data directory.
//!
//! The binary is `STOWAGE_BIN` when set, else the workspace's
//! `target/debug/stowage-server`, built once per test process with
//! `cargo build -p stowage-server`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use stowage_blobstore::SystemClock;
use stowage_blobstore::testing::{Shutdown, TempPostgres};

use crate::Client;

/// How long a node may take to start listening.
const START_LIMIT: Duration = Duration::from_secs(60);

/// Several nodes on one database and one shared directory of objects.
/// Dropped: the nodes are killed, then the database is stopped and every
/// directory removed.
pub struct Cluster {
    /// The nodes, in the order they were started.
    pub nodes: Vec<Node>,
    /// The database all nodes share.
    pub postgres: TempPostgres,
    /// Its connection string.
    pub metadata: String,
    /// The shared directory of objects (`--objects file://<this>`).
    pub objects: PathBuf,
    dir: tempfile::TempDir,
}

/// How the nodes of a [`Cluster`] are started.
#[derive(Clone, Debug, Default)]
pub struct NodeOptions {
    /// Extra environment variables of every node.
    pub env: Vec<(String, String)>,
}

impl Cluster {
    /// `n` nodes on a fresh database and a fresh shared directory.
    ///
    /// # Panics
    /// PostgreSQL or a node failing to start.
    pub fn start(n: usize) -> Cluster {
        Self::start_with(n, &NodeOptions::default())
    }

    /// [`Cluster::start`] with `options` for every node.
    ///
    /// # Panics
    /// PostgreSQL or a node failing to start.
    pub fn start_with(n: usize, options: &NodeOptions) -> Cluster {
        let binary = server_binary();
        let postgres = TempPostgres::start().expect("start PostgreSQL");
        let metadata = postgres.new_database().expect("create a database");
        let dir = tempfile::Builder::new()
            .prefix("stowage-cluster")
            .tempdir()
            .expect("temp dir");
        let objects = dir.path().join("objects");
        std::fs::create_dir_all(&objects).expect("objects dir");
        let nodes = (0..n)
            .map(|i| {
                let mut node = Node {
                    name: format!("node{i}"),
                    binary: binary.clone(),
                    dir: dir.path().join(format!("node{i}")),
                    metadata: metadata.clone(),
                    objects: objects.clone(),
                    env: options.env.clone(),
                    port: 0,
                    base: String::new(),
                    child: None,
                };
                node.start();
                node
            })
            .collect();
        Cluster {
            nodes,
            postgres,
            metadata,
            objects,
            dir,
        }
    }

    /// Stops the database (`how`), waiting until it has exited.
    pub fn stop_postgres(&self, how: Shutdown) {
        self.postgres.stop(how);
    }

    /// Starts the database again on its data directory.
    ///
    /// # Panics
    /// The server failing to start.
    pub fn start_postgres(&self) {
        self.postgres.start_again().expect("restart PostgreSQL");
    }

    /// The cluster's temporary directory (node directories, objects).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
    }
}

/// One `stowage-server` process.
pub struct Node {
    /// `node0`, `node1`, ...
    pub name: String,
    binary: PathBuf,
    dir: PathBuf,
    metadata: String,
    objects: PathBuf,
    env: Vec<(String, String)>,
    port: u16,
    /// `http://127.0.0.1:<port>` (the same across restarts).
    pub base: String,
    child: Option<Child>,
}

impl Node {
    /// A client of this node (dated by the system clock: the nodes read
    /// the database's).
    pub fn client(&self) -> Client {
        Client::new(&self.base, Arc::new(SystemClock))
    }

    /// Whether the process is running.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Starts the process (on the port of its first start, if it had one)
    /// and waits until it listens.
    ///
    /// # Panics
    /// The node failing to start.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "{} is running", self.name);
        std::fs::create_dir_all(&self.dir).expect("node dir");
        let log_path = self.dir.join("log");
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("node log");
        let _ = writeln!(log, "--- start");
        let mut child = Command::new(&self.binary)
            .arg("--location")
            .arg(self.dir.join("data"))
            .arg("--metadata")
            .arg(&self.metadata)
            .arg("--objects")
            .arg(format!("file://{}", self.objects.display()))
            .args([
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                &self.port.to_string(),
            ])
            .args(["--workers", "2"])
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env_remove("STOWAGE_METADATA")
            .env_remove("STOWAGE_OBJECTS")
            .stdout(Stdio::piped())
            .stderr(log.try_clone().expect("log"))
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", self.binary.display()));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.split("listening at http://").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(addr.trim().to_owned());
                }
                let _ = writeln!(log, "{line}");
            }
        });
        let addr = match rx.recv_timeout(START_LIMIT) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{} did not start; its log:\n{}",
                    self.name,
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                );
            }
        };
        self.port = addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port");
        self.base = format!("http://{addr}");
        self.child = Some(child);
    }

    /// SIGKILL: the process ends at once, whatever it was doing.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// What the process wrote (its log and standard output).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }
}

/// The server binary: `STOWAGE_BIN`, else the workspace's debug build, built
/// once per test process.
pub fn server_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if let Some(bin) = std::env::var_os("STOWAGE_BIN") {
                return PathBuf::from(bin);
            }
            let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("workspace")
                .to_owned();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "-p", "stowage-server", "--bin", "stowage-server"])
                .current_dir(&workspace)
                .status()
                .expect("run cargo build");
            assert!(status.success(), "cargo build -p stowage-server failed");
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| workspace.join("target"), PathBuf::from);
            target.join("debug").join("stowage-server")
        })
        .clone()
}
