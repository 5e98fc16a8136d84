//! `stowage-server`: serves the Azure Blob Storage REST API on
//! 127.0.0.1:10000 with data under `./stowage-data`.

use std::net::TcpListener;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser as _;
use stowage_blobstore::{Clock, DatabaseClock, ManualClock, REMEASURE_EVERY, Store, SystemClock};
use stowage_server::observe::{BatchedWriter, LogSinks, Metrics, log_dispatch};
use stowage_server::{AppState, Config, Fetcher, GC_INTERVAL, Observe, serve_metrics, serve_until};
use tokio_util::sync::CancellationToken;

/// jemalloc with one arena (`.cargo/config.toml`) instead of glibc's
/// malloc. glibc gives the threads their own arenas and keeps what each one
/// freed, so a burst of uploads on some threads and a listing on others
/// added up: two rounds of the benchmarks took the resident size to 50, 60,
/// then 80 MiB. With one jemalloc arena the same runs stay under 60 MiB,
/// and with freed pages returned after a second, the workloads after a
/// burst start from 20-30 MiB instead of 40-50.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Installs the process's `tracing` dispatcher: the console, and the debug
/// and access logs when asked for. Returns what the server records per
/// request, and the access log's writer, to flush before the process ends.
fn init_logging(config: &Config) -> anyhow::Result<(Observe, Option<BatchedWriter>)> {
    use std::io::Write;
    use tracing_subscriber::EnvFilter;
    let default = if config.silent { "error" } else { "info" };
    let console = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let debug = match &config.debug {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("opening debug log {}", path.display()))?;
            Some(Box::new(file) as Box<dyn Write + Send>)
        }
        None => None,
    };
    let access = match &config.access_log {
        Some(path) if path.as_os_str() == "-" => {
            Some(Box::new(std::io::stdout()) as Box<dyn Write + Send>)
        }
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening access log {}", path.display()))?;
            Some(Box::new(file) as Box<dyn Write + Send>)
        }
        None => None,
    };
    // Lines are written by a thread of their own, many per system call.
    let batched = access.map(BatchedWriter::new).transpose()?;
    let access = batched
        .clone()
        .map(|w| Box::new(w) as Box<dyn Write + Send>);
    let (debug_log, access_log) = (debug.is_some(), access.is_some());
    let dispatch = log_dispatch(LogSinks {
        console: Some(console),
        debug,
        access: access.map(|out| (out, config.access_log_format)),
    });
    // Also forwards the `log` records of dependencies, as `init()` did.
    tracing_subscriber::util::SubscriberInitExt::try_init(dispatch.clone())
        .context("installing the logger")?;
    let observe = Observe {
        metrics: config.metrics_port.map(|_| Arc::new(Metrics::new())),
        log: (debug_log || access_log).then_some(dispatch),
        access_log,
        debug_log,
    };
    Ok((observe, batched))
}

/// Cancels `shutdown` on the first SIGTERM, SIGINT or SIGQUIT (Ctrl-C
/// elsewhere).
async fn cancel_on_stop_signal(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            SignalKind::terminate(),
            SignalKind::interrupt(),
            SignalKind::quit(),
        ];
        let mut streams = Vec::new();
        for kind in kinds {
            match signal(kind) {
                Ok(s) => streams.push(s),
                Err(e) => tracing::warn!(error = %e, "cannot listen for a stop signal"),
            }
        }
        if streams.is_empty() {
            return;
        }
        let waits = streams.iter_mut().map(|s| Box::pin(s.recv()));
        futures::future::select_all(waits).await;
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    shutdown.cancel();
}

fn main() -> anyhow::Result<()> {
    // `check`, `backup`, `restore`, `import-azurite`; anything else serves.
    if let Some(status) = stowage_server::admin::run_if_subcommand(std::env::args_os().collect()) {
        std::process::exit(status);
    }
    let config = Config::parse();
    let (observe, mut access_log) = init_logging(&config)?;
    let tls = match (&config.cert, &config.key) {
        (Some(cert), Some(key)) => Some(stowage_server::tls_config(cert, key)?),
        (None, None) => None,
        _ => anyhow::bail!("--cert and --key go together"),
    };
    if config.in_memory_persistence && config.objects.is_some() {
        // The metadata would vanish with the process and leave the bytes.
        anyhow::bail!("--objects needs a data directory: not with --inMemoryPersistence");
    }
    let accounts = config.accounts()?;
    let oauth = config.oauth_enabled().map_err(anyhow::Error::msg)?;
    for warning in config.ignored_flags() {
        tracing::warn!("{warning}");
    }
    let workers = config
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    // Held until the process ends: one server per data directory.
    let _data_dir = if config.in_memory_persistence {
        None
    } else {
        Some(stowage_server::data_dir::claim(&config.location)?)
    };
    actix_web::rt::System::new().block_on(async move {
        let test_clock = config.test_clock.then(|| {
            tracing::warn!(
                "--testClock: time moves only when a test moves it; never use this for real data"
            );
            // From a whole second: the nodes of a test cluster are brought
            // to one instant by advancing each by whole seconds, which the
            // clock control moves exactly (docs/cluster.md#testing-a-cluster).
            let secs = SystemClock
                .now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Arc::new(ManualClock::new(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
            ))
        });
        let mut clock: Arc<dyn Clock> = match &test_clock {
            Some(manual) => manual.clone(),
            None => Arc::new(SystemClock),
        };
        let mut store_config = config.store_config();
        // TEST ONLY: the deliberately broken build the cluster's history
        // test must catch (docs/cluster.md#the-history-test).
        if std::env::var_os("STOWAGE_TEST_FAULT_CONDITIONS_OUTSIDE_TRANSACTION").is_some() {
            tracing::warn!(
                "conditions are checked outside the transaction: a broken build for tests"
            );
            store_config = store_config.with_fault_conditions_outside_transaction();
        }
        // Cluster mode: the nodes read the database's time (docs/cluster.md).
        if let (Some(url), None) = (store_config.metadata.clone(), &test_clock) {
            let inner = clock.clone();
            let db_clock = tokio::task::spawn_blocking(move || DatabaseClock::measure(&url, inner))
                .await?
                .context("reading the metadata database's clock")?;
            tracing::info!(
                offset_ms = db_clock.offset_nanos() / 1_000_000,
                "time is the metadata database's"
            );
            let db_clock = Arc::new(db_clock);
            db_clock.keep_measuring(REMEASURE_EVERY);
            clock = db_clock;
        }
        if let Some(m) = &observe.metrics {
            store_config = store_config.with_observer(m.store_observer());
        }
        let store = Store::open(store_config, clock.clone())
            .await
            .context("opening the data directory")?;
        let _collector = store.spawn_collector(GC_INTERVAL);
        let listener = TcpListener::bind((config.blob_host.as_str(), config.blob_port))
            .with_context(|| format!("binding {}:{}", config.blob_host, config.blob_port))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(AppState {
            store,
            accounts,
            clock,
            product_style_urls: !config.disable_product_style_url,
            loose: config.loose,
            oauth,
            test_clock,
            fetcher: Arc::new(Fetcher::new(&config.fetch_config())),
            observe,
        });
        if let Some(port) = config.metrics_port {
            let metrics = TcpListener::bind((config.blob_host.as_str(), port))
                .with_context(|| format!("binding {}:{port} for metrics", config.blob_host))?;
            let at = metrics.local_addr()?;
            actix_web::rt::spawn(serve_metrics(metrics, state.clone())?);
            // On standard output like the line below: --silent hides logs.
            println!("Stowage metrics at http://{at}/metrics");
        }
        let scheme = if tls.is_some() { "https" } else { "http" };
        // actix-server stops on the same signals: SIGTERM gracefully,
        // waiting for open connections; this closes the idle ones.
        let shutdown = CancellationToken::new();
        actix_web::rt::spawn(cancel_on_stop_signal(shutdown.clone()));
        let server = serve_until(listener, state, workers, tls, shutdown)?;
        // Scripts and test harnesses wait for this line.
        println!("Stowage Blob service is successfully listening at {scheme}://{addr}");
        server.await?;
        if let Some(w) = &mut access_log {
            use std::io::Write as _;
            let _ = w.flush();
        }
        Ok(())
    })
}
