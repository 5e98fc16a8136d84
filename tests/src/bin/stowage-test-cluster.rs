//! A 3-node Stowage cluster in one command, for the suites that drive the
//! server binary (tests/sdk; docs/cluster.md#testing-a-cluster). It takes
//! `stowage-server`'s own command line and starts, in its place:
//!
//! - a throwaway PostgreSQL server (`stowage_blobstore::testing::TempPostgres`),
//! - `STOWAGE_TEST_CLUSTER` nodes (3 by default) of the server named by
//!   `STOWAGE_CLUSTER_SERVER` (default: `stowage-server` beside this
//!   binary), each with the arguments given here, its own data directory
//!   `<--location>/nodeN`, `--metadata` that database and `--objects` one
//!   shared store (`STOWAGE_TEST_OBJECTS`, or `<--location>/shared`),
//! - the round-robin proxy of `stowage_tests::roundrobin` on `--blobHost`
//!   and `--blobPort`, announced with the server's own line
//!   ("Stowage Blob service is successfully listening at ..."), so that a
//!   harness waiting for that line waits for the whole cluster.
//!
//! With `STOWAGE_TEST_CLOCK` set the nodes' manual clocks are brought to
//! one instant before the proxy opens (the proxy then moves them together):
//! each node starts its clock at a whole second, so the lags are whole
//! seconds, which an advance moves exactly.
//! SIGTERM or SIGINT stops the nodes and PostgreSQL; so does a node that
//! exits on its own.
//!
//! The proxy also answers the launcher's own requests (any method):
//!
//! - `/_stowage/test-cluster/nodes`: the nodes' addresses
//!   (`http://127.0.0.1:PORT`, one a line), for a test that checks
//!   something through every node;
//! - `/_stowage/test-cluster/restart[?node=N][&signal=TERM]`: kills every
//!   node (or node `N`) with SIGKILL (SIGTERM with `signal=TERM`, then
//!   SIGKILL if it lingers), starts it again on the same port, data
//!   directory, database and object store, brings the manual clocks
//!   together again, and answers once the nodes listen. PostgreSQL and the
//!   proxy stay up: this is how a test restarts "the server" of a cluster.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use stowage_tests::roundrobin::{self, TEST_CLOCK_PATH};

const READY: &str = "Stowage Blob service is successfully listening at http://";

fn main() {
    if let Err(e) = run() {
        eprintln!("stowage-test-cluster: {e}");
        std::process::exit(1);
    }
}

/// The command line: the three flags the cluster itself uses, and the rest
/// for the nodes.
struct Args {
    host: String,
    port: u16,
    location: PathBuf,
    rest: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        host: "127.0.0.1".into(),
        port: 10000,
        location: std::env::temp_dir().join("stowage-test-cluster"),
        rest: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--blobHost" | "-d" => args.host = value("--blobHost")?,
            "--blobPort" => {
                args.port = value("--blobPort")?
                    .parse()
                    .map_err(|e| format!("--blobPort: {e}"))?;
            }
            "--location" | "-l" => args.location = value("--location")?.into(),
            _ => args.rest.push(arg),
        }
    }
    Ok(args)
}

/// A node process and where it listens.
struct Node {
    child: Child,
    addr: SocketAddr,
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let nodes: usize = std::env::var("STOWAGE_TEST_CLUSTER")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(3);
    let server = match std::env::var_os("STOWAGE_CLUSTER_SERVER") {
        Some(s) => PathBuf::from(s),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("stowage-server"),
    };
    std::fs::create_dir_all(&args.location).map_err(|e| format!("--location: {e}"))?;
    let objects = match std::env::var("STOWAGE_TEST_OBJECTS") {
        Ok(url) => url
            .parse::<stowage_blobstore::ObjectsLocation>()
            .map_err(|e| format!("STOWAGE_TEST_OBJECTS: {e}"))?
            .with_prefix(&unique())
            .to_string(),
        Err(_) => format!(
            "file://{}",
            std::fs::canonicalize(&args.location)
                .map_err(|e| e.to_string())?
                .join("shared")
                .display()
        ),
    };
    let pg = stowage_blobstore::testing::TempPostgres::start()
        .map_err(|e| format!("starting PostgreSQL: {e}"))?;
    let url = pg
        .new_database()
        .map_err(|e| format!("creating the database: {e}"))?;
    let cluster = Cluster {
        server,
        location: args.location.clone(),
        url,
        objects,
        rest: args.rest.clone(),
    };
    let mut started = Vec::new();
    let out = (|| {
        for n in 0..nodes {
            started.push(start_node(&cluster, n, 0)?);
        }
        align_clocks_if_manual(&started)?;
        serve(&args, &cluster, &mut started)
    })();
    for node in &mut started {
        stop(&mut node.child);
    }
    drop(pg);
    out
}

/// What every node is started with.
struct Cluster {
    server: PathBuf,
    location: PathBuf,
    url: String,
    objects: String,
    rest: Vec<String>,
}

/// [`align_clocks`] when the nodes run on manual clocks.
fn align_clocks_if_manual(nodes: &[Node]) -> Result<(), String> {
    if std::env::var_os("STOWAGE_TEST_CLOCK").is_some() {
        align_clocks(nodes)?;
    }
    Ok(())
}

/// Answers a request of the proxy's control path (`what`: the path after
/// it, and the query).
fn control(what: &str, cluster: &Cluster, nodes: &mut [Node]) -> Result<String, String> {
    let (path, query) = what.split_once('?').unwrap_or((what, ""));
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())
    };
    match path {
        "nodes" => Ok(nodes
            .iter()
            .map(|n| format!("http://{}\n", n.addr))
            .collect()),
        "restart" => {
            let which: Vec<usize> = match param("node") {
                Some(n) => {
                    let n: usize = n.parse().map_err(|e| format!("node={n}: {e}"))?;
                    if n >= nodes.len() {
                        return Err(format!("no node {n}: the cluster has {}", nodes.len()));
                    }
                    vec![n]
                }
                None => (0..nodes.len()).collect(),
            };
            let gentle = match param("signal").as_deref() {
                None | Some("KILL") => false,
                Some("TERM") => true,
                Some(other) => return Err(format!("signal={other}: KILL or TERM")),
            };
            for &n in &which {
                let node = &mut nodes[n];
                if gentle {
                    stop(&mut node.child);
                } else {
                    let _ = node.child.kill();
                    let _ = node.child.wait();
                }
            }
            for &n in &which {
                nodes[n] = start_node(cluster, n, nodes[n].addr.port())?;
            }
            align_clocks_if_manual(nodes)?;
            Ok(format!("restarted {which:?}\n"))
        }
        _ => Err(format!("no control {path:?}: nodes, restart")),
    }
}

/// A name for this cluster's prefix in a shared bucket.
fn unique() -> String {
    format!(
        "cluster-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    )
}

/// Starts node `n` and waits for its listening line; its other output
/// goes to this process's, each line marked with the node.
fn start_node(cluster: &Cluster, n: usize, port: u16) -> Result<Node, String> {
    let data = cluster.location.join(format!("node{n}"));
    let mut child = Command::new(&cluster.server)
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .arg("--location")
        .arg(data)
        .args(["--metadata", &cluster.url, "--objects", &cluster.objects])
        .args(&cluster.rest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{}: {e}", cluster.server.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(at) = line.find(READY) {
                let addr = line[at + READY.len()..].trim().to_owned();
                if let Some(tx) = tx.take() {
                    let _ = tx.send(addr);
                }
                continue;
            }
            println!("[node{n}] {line}");
        }
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(addr) => Ok(Node {
            child,
            addr: addr
                .parse()
                .map_err(|e| format!("node {n} listens at {addr}: {e}"))?,
        }),
        Err(_) => {
            stop(&mut child);
            Err(format!("node {n} did not start"))
        }
    }
}

/// Brings every node's manual clock to the latest of them: each is asked
/// its time (an advance of 0 answers it) and moved forward by what it lags.
fn align_clocks(nodes: &[Node]) -> Result<(), String> {
    let ask = |addr: SocketAddr, seconds: &str| -> Result<i128, String> {
        let answer = http_post(addr, &format!("{TEST_CLOCK_PATH}?advance={seconds}"))?;
        ticks(answer.trim()).ok_or_else(|| format!("node {addr} answered the time {answer:?}"))
    };
    let times = nodes
        .iter()
        .map(|n| ask(n.addr, "0"))
        .collect::<Result<Vec<_>, _>>()?;
    let latest = *times.iter().max().expect("nodes");
    for (node, t) in nodes.iter().zip(times) {
        let lag = latest - t;
        if lag > 0 {
            ask(
                node.addr,
                &format!("{}.{:07}", lag / 10_000_000, lag % 10_000_000),
            )?;
        }
    }
    Ok(())
}

/// 100 ns ticks within the day of `2024-09-03T10:15:07.1234567Z` (the
/// nodes start within one day of each other).
fn ticks(iso: &str) -> Option<i128> {
    let time = iso.split_once('T')?.1.trim_end_matches('Z');
    let (hms, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let mut parts = hms.split(':').map(|p| p.parse::<i128>().ok());
    let (h, m, s) = (parts.next()??, parts.next()??, parts.next()??);
    let fraction = format!("{fraction:0<7}");
    let fraction: i128 = fraction.get(..7)?.parse().ok()?;
    Some(((h * 60 + m) * 60 + s) * 10_000_000 + fraction)
}

/// A body-less POST over a fresh connection; the answer's body.
fn http_post(addr: SocketAddr, path: &str) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).map_err(|e| e.to_string())?;
    if !answer.starts_with("HTTP/1.1 200") {
        return Err(format!("{addr}{path}: {answer}"));
    }
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Ok(body.to_owned())
}

/// Runs the proxy until a stop signal or the end of a node, answering its
/// control requests ([`control`]) meanwhile.
fn serve(args: &Args, cluster: &Cluster, nodes: &mut [Node]) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind((
            args.host.as_str(),
            args.port,
        )))
        .map_err(|e| format!("binding {}:{}: {e}", args.host, args.port))?;
    let at = listener.local_addr().map_err(|e| e.to_string())?;
    let (control_tx, mut control_rx) = tokio::sync::mpsc::channel(4);
    runtime.spawn(roundrobin::serve_with_control(
        listener,
        addrs,
        Some(control_tx),
    ));
    for (n, node) in nodes.iter().enumerate() {
        println!("stowage-test-cluster: node {n} at http://{}", node.addr);
    }
    println!("{READY}{at}");
    let ended = runtime.block_on(async {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
        let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
        loop {
            tokio::select! {
                _ = term.recv() => return Ok(None),
                _ = int.recv() => return Ok(None),
                Some((what, answer)) = control_rx.recv() => {
                    // The nodes start and stop on this thread; the proxy
                    // runs on the runtime's workers meanwhile.
                    let _ = answer.send(control(&what, cluster, nodes));
                    continue;
                }
                () = tokio::time::sleep(std::time::Duration::from_millis(500)) => {}
            }
            for (n, node) in nodes.iter_mut().enumerate() {
                if let Ok(Some(status)) = node.child.try_wait() {
                    return Ok::<_, String>(Some(format!("node {n} exited: {status}")));
                }
            }
        }
    })?;
    runtime.shutdown_background();
    match ended {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// SIGTERM, then SIGKILL if the node lingers.
fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}
