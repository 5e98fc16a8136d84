//! An in-process Stowage server for one test.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use stowage_blobstore::{ManualClock, ObjectsLocation, Store, StoreConfig};
use stowage_server::observe::{AccessLogFormat, LogSinks, Metrics, log_dispatch};
use stowage_server::{Accounts, AppState, Observe};

use crate::Client;

/// A running server with its data directory and clock.
pub struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The clock every time-dependent check of this server reads.
    pub clock: Arc<ManualClock>,
    /// The engine behind the server, for checks a client cannot make.
    pub store: Store,
    dir: Option<tempfile::TempDir>,
    config: StoreConfig,
    accounts: Accounts,
    handle: actix_web::dev::ServerHandle,
    addr: SocketAddr,
    /// `http://127.0.0.1:<port>/metrics` of a [`TestServer::start_observed`]
    /// server.
    pub metrics_url: Option<String>,
    /// The other nodes of a [`TestServer::start_cluster`] cluster (this
    /// server's own fields are its node 0), and the proxy in front of them
    /// all, which `base` and `addr` name.
    cluster: Vec<Node>,
    /// Where node 0 listens (`addr` too, unless a proxy is in front).
    node_addr: SocketAddr,
    proxy: Option<crate::roundrobin::RoundRobin>,
    /// The PostgreSQL server of a [`TestServer::start_on_postgres`] server
    /// (dropped after the store).
    postgres: Option<Arc<stowage_blobstore::testing::TempPostgres>>,
}

/// The environment variable that moves the extents of the servers the
/// tests start into another object store: an `--objects` URL
/// (`s3://BUCKET?endpoint=…` or `file:///dir`); each server gets a prefix of
/// its own in it (docs/cluster.md#testing-a-cluster).
pub const TEST_OBJECTS_ENV: &str = "STOWAGE_TEST_OBJECTS";

/// `config` with its extents where [`TEST_OBJECTS_ENV`] says, if it is set.
fn with_test_objects(config: StoreConfig) -> StoreConfig {
    let Ok(url) = std::env::var(TEST_OBJECTS_ENV) else {
        return config;
    };
    if config.objects.is_remote() || config.location.is_none() {
        return config;
    }
    let location: ObjectsLocation = url
        .parse()
        .unwrap_or_else(|e| panic!("{TEST_OBJECTS_ENV}: {e}"));
    let prefix = uuid::Uuid::new_v4().simple().to_string();
    config.with_objects(location.with_prefix(&prefix))
}

/// `config` with its metadata in a database of its own on the shared
/// throwaway PostgreSQL server when `STOWAGE_TEST_POSTGRES` is set (as
/// [`TestServer::start`] does), and that server, held until the store is
/// dropped.
fn on_postgres_if_asked(
    config: StoreConfig,
) -> (
    StoreConfig,
    Option<Arc<stowage_blobstore::testing::TempPostgres>>,
) {
    if std::env::var_os("STOWAGE_TEST_POSTGRES").is_none() {
        return (config, None);
    }
    let (pg, url) = postgres_database();
    (config.with_metadata(url), Some(pg))
}

/// A new database of its own on the throwaway PostgreSQL server the tests
/// of this process share (`TempPostgres::shared`), and that server.
fn postgres_database() -> (Arc<stowage_blobstore::testing::TempPostgres>, String) {
    // The PostgreSQL client blocks: not on the test's runtime.
    std::thread::spawn(|| {
        let pg = stowage_blobstore::testing::TempPostgres::shared().expect("start PostgreSQL");
        let url = pg.new_database().expect("create a database");
        (pg, url)
    })
    .join()
    .expect("PostgreSQL start-up")
}

/// The environment variable that makes [`TestServer::start`] start a
/// cluster of that many nodes ([`TestServer::start_cluster`]).
pub const TEST_CLUSTER_ENV: &str = "STOWAGE_TEST_CLUSTER";

/// One more node of a test cluster.
struct Node {
    store: Store,
    handle: actix_web::dev::ServerHandle,
    addr: SocketAddr,
    config: StoreConfig,
}

/// The instant every test clock starts at: Tue, 03 Sep 2024 10:15:07 GMT.
pub fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_725_358_507)
}

impl TestServer {
    /// A server over a fresh temporary directory (real SQLite file, real files).
    /// With `STOWAGE_TEST_POSTGRES` set, a [`TestServer::start_on_postgres`]
    /// server instead: how an e2e module runs against cluster mode.
    pub async fn start() -> TestServer {
        if let Some(n) = std::env::var(TEST_CLUSTER_ENV)
            .ok()
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n > 1)
        {
            return Self::start_cluster(n).await;
        }
        if std::env::var_os("STOWAGE_TEST_POSTGRES").is_some() {
            return Self::start_on_postgres().await;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let config = StoreConfig::at(dir.path().join("data"));
        let clock = Arc::new(ManualClock::new(epoch()));
        Self::start_with(config, clock, Some(dir)).await
    }

    /// A server whose metadata is in a database of its own (cluster mode)
    /// on the throwaway PostgreSQL server the tests share
    /// (`TempPostgres::shared`), its extents in a fresh temporary directory.
    pub async fn start_on_postgres() -> TestServer {
        let (pg, url) = postgres_database();
        let dir = tempfile::tempdir().expect("temp dir");
        let config = StoreConfig::at(dir.path().join("data")).with_metadata(url);
        let clock = Arc::new(ManualClock::new(epoch()));
        let mut server = Self::start_with(config, clock, Some(dir)).await;
        server.postgres = Some(pg);
        server
    }

    /// A cluster of `nodes` in-process servers over one throwaway
    /// PostgreSQL database and one object store (a shared temporary
    /// directory, or [`TEST_OBJECTS_ENV`]'s store when it is set), all
    /// reading one manual clock, behind a round-robin proxy
    /// ([`crate::roundrobin`]) that `base` names: consecutive requests go
    /// to different nodes. `store` is node 0's engine.
    pub async fn start_cluster(nodes: usize) -> TestServer {
        let (pg, url) = postgres_database();
        let dir = tempfile::tempdir().expect("temp dir");
        let objects: ObjectsLocation = match std::env::var(TEST_OBJECTS_ENV) {
            Ok(remote) => remote
                .parse::<ObjectsLocation>()
                .unwrap_or_else(|e| panic!("{TEST_OBJECTS_ENV}: {e}"))
                .with_prefix(&uuid::Uuid::new_v4().simple().to_string()),
            Err(_) => format!("file://{}", dir.path().join("shared").display())
                .parse()
                .expect("a shared directory"),
        };
        let config = |data: &str| {
            StoreConfig::at(dir.path().join(data))
                .with_metadata(url.clone())
                .with_objects(objects.clone())
        };
        let clock = Arc::new(ManualClock::new(epoch()));
        let mut others = Vec::new();
        for n in 1..nodes {
            others.push(
                Self::start_node(
                    config(&format!("node{n}")),
                    clock.clone(),
                    Accounts::development(),
                    true,
                    false,
                )
                .await,
            );
        }
        let config0 = config("data");
        let mut server = Self::start_with(config0, clock, Some(dir)).await;
        server.postgres = Some(pg);
        server.cluster = others;
        server.front_with_proxy();
        server
    }

    /// Puts a round-robin proxy in front of this server's nodes.
    fn front_with_proxy(&mut self) {
        let mut addrs = vec![self.addr];
        addrs.extend(self.cluster.iter().map(|n| n.addr));
        let proxy = crate::roundrobin::RoundRobin::start(addrs);
        self.addr = proxy.addr();
        self.base = format!("http://{}", proxy.addr());
        self.proxy = Some(proxy);
    }

    /// One client per node, talking to that node directly (a single
    /// server's own client when this is not a cluster).
    pub fn node_clients(&self) -> Vec<Client> {
        if self.proxy.is_none() {
            return vec![self.client()];
        }
        std::iter::once(self.node_addr)
            .chain(self.cluster.iter().map(|n| n.addr))
            .map(|addr| Client::new(&format!("http://{addr}"), self.clock.clone()))
            .collect()
    }

    /// A server whose store keeps everything in memory.
    pub async fn start_in_memory() -> TestServer {
        let clock = Arc::new(ManualClock::new(epoch()));
        Self::start_with(StoreConfig::in_memory(), clock, None).await
    }

    /// A server over `dir/data` (which may be a mount point the test made),
    /// with `config` changed by `adjust`, and the extents in `objects` when
    /// given (a wrapper around a real object store that injects failures).
    pub async fn start_in(
        dir: tempfile::TempDir,
        adjust: impl FnOnce(StoreConfig) -> StoreConfig,
        objects: Option<Arc<dyn object_store::ObjectStore>>,
    ) -> TestServer {
        let config = adjust(StoreConfig::at(dir.path().join("data")));
        let clock = Arc::new(ManualClock::new(epoch()));
        Self::start_configured(
            config,
            clock,
            Some(dir),
            objects,
            Accounts::development(),
            true,
            false,
        )
        .await
    }

    /// An in-memory server with the development account and
    /// [`crate::ACCOUNT2`], reading accounts from host names unless
    /// `product_style_urls` is false (`--disableProductStyleUrl`).
    pub async fn start_with_accounts(product_style_urls: bool) -> TestServer {
        let clock = Arc::new(ManualClock::new(epoch()));
        let accounts = Accounts::parse(&format!(
            "{}:{};{}:{}",
            crate::ACCOUNT,
            crate::KEY,
            crate::ACCOUNT2,
            crate::KEY2
        ))
        .expect("accounts");
        Self::start_configured(
            StoreConfig::in_memory(),
            clock,
            None,
            None,
            accounts,
            product_style_urls,
            false,
        )
        .await
    }

    /// A server over a fresh temporary directory whose development account
    /// keeps deleted containers restorable for `days` days
    /// (`--containerDeleteRetentionDays`).
    pub async fn start_with_container_retention(days: u32) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let (config, pg) = on_postgres_if_asked(StoreConfig::at(dir.path().join("data")));
        let clock = Arc::new(ManualClock::new(epoch()));
        let accounts = Accounts::development().with_container_delete_retention_days(Some(days));
        let mut server =
            Self::start_configured(config, clock, Some(dir), None, accounts, true, false).await;
        server.postgres = pg;
        server
    }

    /// A server over a fresh temporary directory with blob versioning on
    /// for every account (`--blobVersioning`).
    pub async fn start_with_versioning() -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut pg = None;
        let mut server = Self::start_in(
            dir,
            |c| {
                let (c, on) = on_postgres_if_asked(c);
                pg = on;
                c.with_versioning(stowage_blobstore::Versioning {
                    all: true,
                    ..stowage_blobstore::Versioning::default()
                })
            },
            None,
        )
        .await;
        server.postgres = pg;
        server
    }

    /// An in-memory server started with `--loose`.
    pub async fn start_loose() -> TestServer {
        let clock = Arc::new(ManualClock::new(epoch()));
        Self::start_configured(
            StoreConfig::in_memory(),
            clock,
            None,
            None,
            Accounts::development(),
            true,
            true,
        )
        .await
    }

    async fn start_with(
        config: StoreConfig,
        clock: Arc<ManualClock>,
        dir: Option<tempfile::TempDir>,
    ) -> TestServer {
        Self::start_configured(
            config,
            clock,
            dir,
            None,
            Accounts::development(),
            true,
            false,
        )
        .await
    }

    async fn start_configured(
        config: StoreConfig,
        clock: Arc<ManualClock>,
        dir: Option<tempfile::TempDir>,
        objects: Option<Arc<dyn object_store::ObjectStore>>,
        accounts: Accounts,
        product_style_urls: bool,
        loose: bool,
    ) -> TestServer {
        let node = Self::start_node_with(
            config,
            clock.clone(),
            objects,
            accounts.clone(),
            product_style_urls,
            loose,
        )
        .await;
        TestServer {
            base: format!("http://{}", node.addr),
            clock,
            store: node.store,
            dir,
            config: node.config,
            accounts,
            handle: node.handle,
            addr: node.addr,
            metrics_url: None,
            cluster: Vec::new(),
            node_addr: node.addr,
            proxy: None,
            postgres: None,
        }
    }

    /// A server on an ephemeral port over `config` (its extents as
    /// [`TEST_OBJECTS_ENV`] says unless `config` names a store).
    async fn start_node(
        config: StoreConfig,
        clock: Arc<ManualClock>,
        accounts: Accounts,
        product_style_urls: bool,
        loose: bool,
    ) -> Node {
        Self::start_node_with(config, clock, None, accounts, product_style_urls, loose).await
    }

    async fn start_node_with(
        config: StoreConfig,
        clock: Arc<ManualClock>,
        objects: Option<Arc<dyn object_store::ObjectStore>>,
        accounts: Accounts,
        product_style_urls: bool,
        loose: bool,
    ) -> Node {
        let config = match objects {
            Some(_) => config,
            None => with_test_objects(config),
        };
        let store = Store::open_with(config.clone(), clock.clone(), objects)
            .await
            .expect("open store");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(AppState {
            store: store.clone(),
            accounts,
            clock,
            product_style_urls,
            loose,
            oauth: false,
            test_clock: None,
            fetcher: Arc::new(stowage_server::Fetcher::new(&Default::default())),
            observe: Default::default(),
        });
        let server = stowage_server::serve(listener, state, 1, None).expect("serve");
        let handle = server.handle();
        tokio::spawn(server);
        Node {
            store,
            handle,
            addr,
            config,
        }
    }

    /// An on-disk server with metrics on a port of their own
    /// ([`TestServer::metrics_url`]), an access log in `format` at
    /// `<dir>/access.log` and a debug log at `<dir>/debug.log`
    /// ([`TestServer::log_path`]).
    pub async fn start_observed(format: AccessLogFormat) -> TestServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = |name: &str| -> Box<dyn std::io::Write + Send> {
            Box::new(std::fs::File::create(dir.path().join(name)).expect("log file"))
        };
        let log = log_dispatch(LogSinks {
            console: None,
            debug: Some(file("debug.log")),
            access: Some((file("access.log"), format)),
        });
        let metrics = Arc::new(Metrics::new());
        let (config, postgres) = on_postgres_if_asked(
            StoreConfig::at(dir.path().join("data")).with_observer(metrics.store_observer()),
        );
        let clock = Arc::new(ManualClock::new(epoch()));
        let store = Store::open_with(config.clone(), clock.clone(), None)
            .await
            .expect("open store");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(AppState {
            store: store.clone(),
            accounts: Accounts::development(),
            clock: clock.clone(),
            product_style_urls: true,
            loose: false,
            oauth: false,
            test_clock: None,
            fetcher: Arc::new(stowage_server::Fetcher::new(&Default::default())),
            observe: Observe {
                metrics: Some(metrics),
                log: Some(log),
                access_log: true,
                debug_log: true,
            },
        });
        let metrics_listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let metrics_url = format!(
            "http://{}/metrics",
            metrics_listener.local_addr().expect("local addr")
        );
        let metrics_server =
            stowage_server::serve_metrics(metrics_listener, state.clone()).expect("serve metrics");
        tokio::spawn(metrics_server);
        let server = stowage_server::serve(listener, state, 1, None).expect("serve");
        let handle = server.handle();
        tokio::spawn(server);
        TestServer {
            base: format!("http://{addr}"),
            clock,
            store,
            dir: Some(dir),
            config,
            accounts: Accounts::development(),
            handle,
            addr,
            metrics_url: Some(metrics_url),
            cluster: Vec::new(),
            node_addr: addr,
            proxy: None,
            postgres,
        }
    }

    /// The file `name` beside the data directory (the logs of a
    /// [`TestServer::start_observed`] server).
    pub fn log_path(&self, name: &str) -> std::path::PathBuf {
        self.dir
            .as_ref()
            .expect("an on-disk server")
            .path()
            .join(name)
    }

    /// A server with `--oauth basic`, serving HTTPS for `localhost` with a
    /// certificate made here, and a client that trusts it (the client signs
    /// with Shared Key unless told `anonymous()`; bearer tokens go in an
    /// `authorization` header of the test's own).
    pub async fn start_oauth() -> (TestServer, Client) {
        let dir = tempfile::tempdir().expect("temp dir");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
        let cert_path = dir.path().join("cert.pem");
        let key_path = dir.path().join("key.pem");
        std::fs::write(&cert_path, cert.cert.pem()).expect("write cert");
        std::fs::write(&key_path, cert.signing_key.serialize_pem()).expect("write key");
        let tls = stowage_server::tls_config(&cert_path, &key_path).expect("tls config");
        let clock = Arc::new(ManualClock::new(epoch()));
        let config = StoreConfig::in_memory();
        let store = Store::open_with(config.clone(), clock.clone(), None)
            .await
            .expect("open store");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let state = Arc::new(AppState {
            store: store.clone(),
            accounts: Accounts::development(),
            clock: clock.clone(),
            product_style_urls: false,
            loose: false,
            oauth: true,
            test_clock: None,
            fetcher: Arc::new(stowage_server::Fetcher::new(&Default::default())),
            observe: Default::default(),
        });
        let server = stowage_server::serve(listener, state, 1, Some(tls)).expect("serve");
        let handle = server.handle();
        tokio::spawn(server);
        let base = format!("https://localhost:{}", addr.port());
        let client = Client::with_certificate(&base, clock.clone(), &cert.cert.pem());
        let server = TestServer {
            base,
            clock,
            store,
            dir: Some(dir),
            config,
            accounts: Accounts::development(),
            handle,
            addr,
            metrics_url: None,
            cluster: Vec::new(),
            node_addr: addr,
            proxy: None,
            postgres: None,
        };
        (server, client)
    }

    /// A client signing as the development account.
    pub fn client(&self) -> Client {
        Client::new(&self.base, self.clock.clone())
    }

    /// The data directory (on-disk servers only).
    pub fn data_dir(&self) -> std::path::PathBuf {
        self.dir
            .as_ref()
            .expect("an on-disk server")
            .path()
            .join("data")
    }

    /// Every extent of the store, as `(id, bytes)` sorted by id: the files
    /// under `objects/extents` (staging files excluded) and the small
    /// extents kept in the metadata database (on-disk servers only).
    pub fn extents(&self) -> Vec<(String, u64)> {
        let data = self.data_dir();
        let mut out = self.remote_extents();
        if let Ok(fanout) = std::fs::read_dir(data.join("objects/extents")) {
            for dir in fanout {
                for file in std::fs::read_dir(dir.expect("fan-out entry").path())
                    .expect("fan-out directory")
                {
                    let file = file.expect("extent entry");
                    let name = file.file_name().to_string_lossy().into_owned();
                    if !name.contains('#') {
                        out.push((name, file.metadata().expect("extent metadata").len()));
                    }
                }
            }
        }
        if let Some(url) = self.config.metadata.clone() {
            // Cluster mode: the inline extents are in PostgreSQL (read off
            // the test's runtime: the client blocks).
            let inline = std::thread::spawn(move || {
                let mut db = postgres::Client::connect(&url, postgres::NoTls).expect("metadata");
                db.query(
                    "SELECT extent, CAST(length(data) AS BIGINT) FROM inline_extents",
                    &[],
                )
                .expect("inline extents")
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64))
                .collect::<Vec<_>>()
            })
            .join()
            .expect("inline extents");
            out.extend(inline);
            out.sort();
            return out;
        }
        let db = rusqlite::Connection::open_with_flags(
            data.join("metadata.sqlite"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("metadata database");
        let mut stmt = db
            .prepare("SELECT extent, length(data) FROM inline_extents")
            .expect("inline extents query");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))
            .expect("inline extents");
        out.extend(rows.map(|r| r.expect("inline extent row")));
        out.sort();
        out
    }

    /// The extents in the object store of a server whose extents are
    /// elsewhere ([`TEST_OBJECTS_ENV`]), listed through that store on a
    /// thread and runtime of their own (the caller may be async).
    fn remote_extents(&self) -> Vec<(String, u64)> {
        use futures::StreamExt;
        if !self.config.objects.is_remote() {
            return Vec::new();
        }
        let objects = self.config.objects.clone();
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("runtime");
                    runtime.block_on(async {
                        let store = objects.build(false).expect("object store").expect("remote");
                        let prefix = object_store::path::Path::from("extents");
                        let mut listing = store.list(Some(&prefix));
                        let mut out = Vec::new();
                        while let Some(meta) = listing.next().await {
                            let meta = meta.expect("listing the extents");
                            let name = meta.location.filename().expect("extent name").to_owned();
                            out.push((name, meta.size));
                        }
                        out
                    })
                })
                .join()
                .expect("listing thread")
        })
    }

    /// Stops the server and starts a new one on the same data directory and
    /// clock, as a restart of the process would.
    pub async fn restart(mut self) -> TestServer {
        self.proxy.take();
        self.handle.stop(true).await;
        let mut others = Vec::new();
        for node in std::mem::take(&mut self.cluster) {
            node.handle.stop(true).await;
            others.push((node.config.clone(), node.addr));
            drop(node.store);
        }
        let dir = self.dir.take();
        assert!(dir.is_some(), "an on-disk server");
        let config = self.config.clone();
        let clock = self.clock.clone();
        let accounts = self.accounts.clone();
        let postgres = self.postgres.take();
        drop(self.store);
        let mut server = Self::start_configured(
            config,
            clock.clone(),
            dir,
            None,
            accounts.clone(),
            true,
            false,
        )
        .await;
        server.postgres = postgres;
        if !others.is_empty() {
            for (config, _) in others {
                server.cluster.push(
                    Self::start_node(config, clock.clone(), accounts.clone(), true, false).await,
                );
            }
            server.front_with_proxy();
        }
        server
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}
