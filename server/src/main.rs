//! `stowage-server`: serves the Azure Blob Storage REST API on
//! 127.0.0.1:10000 with data under `./stowage-data`.

use std::net::TcpListener;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser as _;
use stowage_blobstore::{Store, SystemClock};
use stowage_server::{Accounts, AppState, Config, GC_INTERVAL, serve};

fn init_logging(config: &Config) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let default = if config.silent { "error" } else { "info" };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    match &config.debug {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("opening debug log {}", path.display()))?;
            tracing_subscriber::fmt()
                .with_env_filter(EnvFilter::new("debug"))
                .with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .init();
        }
        None => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init(),
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    init_logging(&config)?;
    if config.cert.is_some() || config.key.is_some() {
        anyhow::bail!("--cert/--key: HTTPS is not served yet");
    }
    let accounts = config.accounts().unwrap_or_else(|e| {
        tracing::error!(error = %e, "ignoring AZURITE_ACCOUNTS; serving the development account");
        Accounts::development()
    });
    let workers = config
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    actix_web::rt::System::new().block_on(async move {
        let clock = Arc::new(SystemClock);
        let store = Store::open(config.store_config(), clock.clone())
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
        });
        let server = serve(listener, state, workers)?;
        // Scripts and test harnesses wait for this line.
        println!("Stowage Blob service is successfully listening at http://{addr}");
        server.await?;
        Ok(())
    })
}
