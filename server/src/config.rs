//! Command-line flags, spelled as the Azure Storage emulator spells them so
//! that existing scripts and containers work unchanged. All defaults live
//! here; below `main` nothing reads the environment or argv.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use stowage_blobstore::StoreConfig;

use crate::accounts::{Accounts, AccountsError};

/// Stowage: a durable, fast Azure Blob Storage compatible server.
#[derive(Clone, Debug, Parser)]
#[command(name = "stowage-server", version, about)]
pub struct Config {
    /// Address to listen on.
    #[arg(long = "blobHost", default_value = "127.0.0.1")]
    pub blob_host: String,
    /// Port to listen on; 0 picks a free port (printed at start-up).
    #[arg(long = "blobPort", default_value_t = 10000)]
    pub blob_port: u16,
    /// Data directory.
    #[arg(short = 'l', long = "location", default_value = "./stowage-data")]
    pub location: PathBuf,
    /// Keep everything in memory (nothing survives a restart).
    #[arg(long = "inMemoryPersistence")]
    pub in_memory_persistence: bool,
    /// Accepted for compatibility; Stowage is always strict where the
    /// service is and lenient where SDKs need it.
    #[arg(short = 'L', long = "loose")]
    pub loose: bool,
    /// Accepted for compatibility; every well-formed version is accepted.
    #[arg(long = "skipApiVersionCheck")]
    pub skip_api_version_check: bool,
    /// Log only errors.
    #[arg(short = 's', long = "silent")]
    pub silent: bool,
    /// Write a debug log to this file.
    #[arg(short = 'd', long = "debug")]
    pub debug: Option<PathBuf>,
    /// PEM certificate chain: serve HTTPS (with `--key`).
    #[arg(long = "cert")]
    pub cert: Option<PathBuf>,
    /// PEM private key of `--cert`.
    #[arg(long = "key")]
    pub key: Option<PathBuf>,
    /// Always read the account from the path, never from the host name
    /// (`<account>.blob.localhost`).
    #[arg(long = "disableProductStyleUrl")]
    pub disable_product_style_url: bool,
    /// Worker threads serving HTTP (default: one per core).
    #[arg(long = "workers")]
    pub workers: Option<usize>,
    /// `name1:key1[:key2];…`, replacing the development account.
    #[arg(long = "accounts", env = "AZURITE_ACCOUNTS", hide_env_values = true)]
    pub accounts: Option<String>,
}

/// The longest the garbage collector sleeps; it also wakes when the oldest
/// garbage comes of age.
pub const GC_INTERVAL: Duration = Duration::from_secs(10);

impl Config {
    /// The store configuration these flags describe.
    pub fn store_config(&self) -> StoreConfig {
        if self.in_memory_persistence {
            StoreConfig::in_memory()
        } else {
            StoreConfig::at(&self.location)
        }
    }

    /// The configured accounts (the development account unless
    /// `AZURITE_ACCOUNTS` is set).
    ///
    /// # Errors
    /// A malformed `AZURITE_ACCOUNTS`; the caller logs it and keeps the
    /// development account, as spec/40-auth.md §1 asks.
    pub fn accounts(&self) -> Result<Accounts, AccountsError> {
        match &self.accounts {
            Some(v) => Accounts::parse(v),
            None => Ok(Accounts::development()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_emulator() {
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!(c.blob_host, "127.0.0.1");
        assert_eq!(c.blob_port, 10000);
        assert_eq!(c.location, PathBuf::from("./stowage-data"));
        assert!(!c.in_memory_persistence);
    }

    #[test]
    fn emulator_flag_spellings_are_accepted() {
        let c = Config::try_parse_from([
            "stowage-server",
            "--blobHost",
            "0.0.0.0",
            "--blobPort",
            "0",
            "--location",
            "/tmp/x",
            "--loose",
            "--skipApiVersionCheck",
            "--inMemoryPersistence",
            "--silent",
            "--debug",
            "/tmp/debug.log",
            "--disableProductStyleUrl",
        ])
        .unwrap();
        assert_eq!(c.blob_port, 0);
        assert!(c.loose && c.skip_api_version_check && c.in_memory_persistence && c.silent);
        assert_eq!(c.store_config().location, None);
    }
}
