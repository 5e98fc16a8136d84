//! Command-line flags, spelled as the Azure Storage emulator spells them so
//! that existing scripts and containers work unchanged. All defaults live
//! here; below `main` nothing reads the environment or argv.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use stowage_blobstore::{DEFAULT_REHYDRATE_DELAY, ObjectsLocation, StoreConfig, Versioning};

use crate::accounts::{Accounts, AccountsError};
use crate::fetch::{DEFAULT_MAX_COPIES, FetchConfig};

/// Stowage: a durable, fast Azure Blob Storage compatible server.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "stowage-server",
    version,
    about,
    after_help = "Admin commands (each with its own --help): stowage-server check | backup | \
                  restore | import-azurite | healthcheck"
)]
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
    /// Keep the metadata in this PostgreSQL database
    /// (`postgres://USER@HOST:PORT/DB`) instead of SQLite under
    /// `--location`: cluster mode, several servers on one database
    /// (docs/cluster.md). The bytes stay under `--location`.
    #[arg(long = "metadata", env = "STOWAGE_METADATA", hide_env_values = true)]
    pub metadata: Option<String>,
    /// Loose mode, as the emulator's: request headers of features Stowage
    /// does not implement (customer-provided keys, encryption scopes) are
    /// ignored instead of refused with 501.
    #[arg(short = 'L', long = "loose")]
    pub loose: bool,
    /// Accepted as the emulator accepts it. The emulator refuses a version
    /// newer than it knows unless this is given; Stowage never does, so the
    /// flag has nothing to skip (a malformed version is still refused, as
    /// the service refuses it).
    #[arg(long = "skipApiVersionCheck")]
    pub skip_api_version_check: bool,
    /// Log only errors.
    #[arg(short = 's', long = "silent")]
    pub silent: bool,
    /// Write a debug log to this file: every request's and answer's
    /// headers (credentials and SAS signatures redacted), error details,
    /// and the server's own debug events.
    #[arg(short = 'd', long = "debug")]
    pub debug: Option<PathBuf>,
    /// Serve Prometheus metrics at `http://<blobHost>:<PORT>/metrics`
    /// (off unless given).
    #[arg(long = "metricsPort", value_name = "PORT")]
    pub metrics_port: Option<u16>,
    /// Write an access log, one line per request, to this file (appended)
    /// or to standard output (`-`).
    #[arg(long = "accessLog", value_name = "FILE|-")]
    pub access_log: Option<PathBuf>,
    /// The access log's format.
    #[arg(long = "accessLogFormat", value_enum, default_value = "plain")]
    pub access_log_format: crate::observe::AccessLogFormat,
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
    /// OAuth level: `basic` accepts bearer tokens (their lifetime, issuer
    /// and audience are checked, their signature is not) and Get User
    /// Delegation Key. Needs HTTPS (`--cert`, `--key`).
    #[arg(long = "oauth", value_enum)]
    pub oauth: Option<OAuthLevel>,
    /// Seconds a rehydration out of the archive tier takes (Set Blob Tier
    /// from Archive to Hot, Cool or Cold). The service takes hours.
    #[arg(long = "rehydrateDelay", value_name = "SECONDS", default_value_t = DEFAULT_REHYDRATE_DELAY.as_secs())]
    pub rehydrate_delay: u64,
    /// Days a deleted container stays restorable with Restore Container
    /// (container soft delete, 1 to 365); off when not given. An entry of
    /// `AZURITE_ACCOUNTS` may set its own with
    /// `:containerDeleteRetentionDays=N`.
    #[arg(long = "containerDeleteRetentionDays", value_name = "DAYS",
        value_parser = clap::value_parser!(u32).range(1..=365))]
    pub container_delete_retention_days: Option<u32>,
    /// Copies from other hosts that may read at once (Copy Blob and the
    /// From-URL writes with a source elsewhere); more wait their turn.
    #[arg(long = "copyConcurrency", value_name = "N", default_value_t = DEFAULT_MAX_COPIES)]
    pub copy_concurrency: usize,
    /// Seconds a copy source on another host may stay silent (to connect,
    /// or between two reads of its answer) before the copy fails.
    #[arg(long = "copyTimeout", value_name = "SECONDS", default_value_t = 60)]
    pub copy_timeout: u64,
    /// TEST ONLY: run on a manual clock that starts at the system time and
    /// moves only when `POST /_stowage/test-clock?advance=<seconds>` asks
    /// (a request that exists only in this mode). Never for real data.
    #[arg(
        long = "testClock",
        env = "STOWAGE_TEST_CLOCK",
        hide = true,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub test_clock: bool,
    /// `name1:key1[:key2];…`, replacing the development account.
    #[arg(long = "accounts", env = "AZURITE_ACCOUNTS", hide_env_values = true)]
    pub accounts: Option<String>,
    /// Keep every previous version of a blob (blob versioning, which the
    /// service turns on per account; the emulator has no such setting).
    #[arg(long = "blobVersioning")]
    pub blob_versioning: bool,
    /// Blob versioning per account, overriding `--blobVersioning`:
    /// `name=on|off` entries separated by `;`.
    #[arg(
        long = "blobVersioningAccounts",
        env = "STOWAGE_BLOB_VERSIONING_ACCOUNTS",
        value_name = "NAME=on|off;...",
        value_parser = parse_versioning_accounts
    )]
    pub blob_versioning_accounts: Option<VersioningAccounts>,
    /// Keep blob bytes outside `--location`: `s3://BUCKET?endpoint=URL`
    /// (credentials and region from the AWS_* variables) or
    /// `file:///shared/dir` (docs/cluster.md#object-stores).
    #[arg(long = "objects", env = "STOWAGE_OBJECTS", value_name = "URL")]
    pub objects: Option<ObjectsLocation>,
    /// Emulator flags Stowage accepts without acting on them (one warning
    /// line each at start-up; see [`Config::ignored_flags`]).
    #[command(flatten)]
    pub ignored: IgnoredFlags,
}

/// The per-account versioning settings of `--blobVersioningAccounts`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersioningAccounts(pub HashMap<String, bool>);

/// Parses `name=on|off;…` (also `true`/`false`); empty entries are skipped.
fn parse_versioning_accounts(value: &str) -> Result<VersioningAccounts, String> {
    let mut out = HashMap::new();
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, setting) = entry
            .split_once('=')
            .ok_or_else(|| format!("{entry:?} is not NAME=on|off"))?;
        let on = match setting.trim().to_ascii_lowercase().as_str() {
            "on" | "true" => true,
            "off" | "false" => false,
            _ => return Err(format!("{entry:?}: the setting is on or off")),
        };
        out.insert(name.trim().to_owned(), on);
    }
    Ok(VersioningAccounts(out))
}

/// The emulator's `--oauth` levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OAuthLevel {
    /// Bearer tokens checked without their signature (docs/wire/oauth.md).
    Basic,
}

/// The emulator's flags (`azurite` and `azurite-blob` 3.37) that have no
/// effect here. They are accepted so that existing scripts and containers
/// start unchanged.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct IgnoredFlags {
    /// Password of a PFX certificate (ignored: use PEM `--cert`/`--key`).
    #[arg(long = "pwd", hide = true)]
    pub pwd: Option<String>,
    /// HTTP keep-alive timeout of the blob service (ignored).
    #[arg(long = "blobKeepAliveTimeout", hide = true)]
    pub blob_keep_alive_timeout: Option<String>,
    /// Memory limit of in-memory extents (ignored).
    #[arg(long = "extentMemoryLimit", hide = true)]
    pub extent_memory_limit: Option<String>,
    /// Telemetry opt-out (ignored: Stowage collects none).
    #[arg(long = "disableTelemetry", hide = true)]
    pub disable_telemetry: bool,
    /// Queue service address (ignored: no queue service).
    #[arg(long = "queueHost", hide = true)]
    pub queue_host: Option<String>,
    /// Queue service port (ignored: no queue service).
    #[arg(long = "queuePort", hide = true)]
    pub queue_port: Option<String>,
    /// Queue service keep-alive timeout (ignored: no queue service).
    #[arg(long = "queueKeepAliveTimeout", hide = true)]
    pub queue_keep_alive_timeout: Option<String>,
    /// Table service address (ignored: no table service).
    #[arg(long = "tableHost", hide = true)]
    pub table_host: Option<String>,
    /// Table service port (ignored: no table service).
    #[arg(long = "tablePort", hide = true)]
    pub table_port: Option<String>,
    /// Table service keep-alive timeout (ignored: no table service).
    #[arg(long = "tableKeepAliveTimeout", hide = true)]
    pub table_keep_alive_timeout: Option<String>,
    /// The emulator's SQL metadata database (ignored: Stowage keeps its
    /// metadata in SQLite under `--location`).
    #[arg(
        long = "azuriteDb",
        env = "AZURITE_DB",
        hide = true,
        hide_env_values = true
    )]
    pub azurite_db: Option<String>,
}

/// What each ignored emulator flag does not do here, for the start-up
/// warnings: (flag as the emulator spells it, given?, what is ignored).
fn ignored_table(i: &IgnoredFlags) -> [(&'static str, bool, &'static str); 11] {
    [
        (
            "--pwd",
            i.pwd.is_some(),
            "PFX certificates are not read; use PEM files with --cert and --key",
        ),
        (
            "--blobKeepAliveTimeout",
            i.blob_keep_alive_timeout.is_some(),
            "the keep-alive timeout is the HTTP layer's own",
        ),
        (
            "--extentMemoryLimit",
            i.extent_memory_limit.is_some(),
            "in-memory data has no separate limit",
        ),
        (
            "--disableTelemetry",
            i.disable_telemetry,
            "Stowage collects no telemetry",
        ),
        (
            "--queueHost",
            i.queue_host.is_some(),
            "there is no queue service",
        ),
        (
            "--queuePort",
            i.queue_port.is_some(),
            "there is no queue service",
        ),
        (
            "--queueKeepAliveTimeout",
            i.queue_keep_alive_timeout.is_some(),
            "there is no queue service",
        ),
        (
            "--tableHost",
            i.table_host.is_some(),
            "there is no table service",
        ),
        (
            "--tablePort",
            i.table_port.is_some(),
            "there is no table service",
        ),
        (
            "--tableKeepAliveTimeout",
            i.table_keep_alive_timeout.is_some(),
            "there is no table service",
        ),
        (
            "AZURITE_DB",
            i.azurite_db.is_some(),
            "metadata is kept in SQLite under --location, not in an external database",
        ),
    ]
}

/// The longest the garbage collector sleeps; it also wakes when the oldest
/// garbage comes of age.
pub const GC_INTERVAL: Duration = Duration::from_secs(10);

impl Config {
    /// The store configuration these flags describe.
    pub fn store_config(&self) -> StoreConfig {
        let mut config = if self.in_memory_persistence {
            StoreConfig::in_memory()
        } else {
            StoreConfig::at(&self.location)
        };
        if let Some(url) = &self.metadata {
            config = config.with_metadata(url.clone());
        }
        config
            .with_rehydrate_delay(Duration::from_secs(self.rehydrate_delay))
            .with_versioning(Versioning {
                all: self.blob_versioning,
                accounts: self.blob_versioning_accounts.clone().unwrap_or_default().0,
            })
            .with_objects(self.objects.clone().unwrap_or_default())
    }

    /// The fetcher configuration these flags describe.
    pub fn fetch_config(&self) -> FetchConfig {
        FetchConfig {
            connect_timeout: Duration::from_secs(self.copy_timeout.min(10)),
            read_timeout: Duration::from_secs(self.copy_timeout),
            max_copies: self.copy_concurrency,
        }
    }

    /// One line for each given emulator flag that has no effect here,
    /// saying what it does not do; `main` logs each as a warning.
    pub fn ignored_flags(&self) -> Vec<String> {
        let mut out: Vec<String> = ignored_table(&self.ignored)
            .into_iter()
            .filter(|(_, given, _)| *given)
            .map(|(flag, _, what)| {
                format!("{flag} is accepted for compatibility and ignored: {what}")
            })
            .collect();
        if self.skip_api_version_check {
            out.push(
                "--skipApiVersionCheck is accepted for compatibility: every well-formed x-ms-version is served already"
                    .to_owned(),
            );
        }
        out
    }

    /// Whether bearer tokens are accepted (`--oauth basic`).
    ///
    /// # Errors
    /// `--oauth` without `--cert`: bearer tokens are accepted over HTTPS
    /// only, as in the emulator, so the server would refuse every one.
    pub fn oauth_enabled(&self) -> Result<bool, &'static str> {
        match (self.oauth, &self.cert) {
            (None, _) => Ok(false),
            (Some(OAuthLevel::Basic), Some(_)) => Ok(true),
            (Some(_), None) => Err("--oauth needs HTTPS: give --cert and --key too"),
        }
    }

    /// The configured accounts (the development account unless
    /// `AZURITE_ACCOUNTS` is set).
    ///
    /// # Errors
    /// A malformed `AZURITE_ACCOUNTS`, naming the entry; the server does not
    /// start with it (serving the development account instead would hide
    /// the mistake until every request fails to authenticate).
    pub fn accounts(&self) -> Result<Accounts, AccountsError> {
        let accounts = match &self.accounts {
            Some(v) => Accounts::parse(v)?,
            None => Accounts::development(),
        };
        Ok(accounts.with_container_delete_retention_days(self.container_delete_retention_days))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_delete_retention_days_is_off_by_default_and_limited_to_a_year() {
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!(c.container_delete_retention_days, None);
        let dev = |c: &Config| {
            c.accounts()
                .unwrap()
                .get(crate::accounts::DEV_ACCOUNT)
                .unwrap()
                .container_delete_retention_days
        };
        assert_eq!(dev(&c), None);
        let c = Config::try_parse_from(["stowage-server", "--containerDeleteRetentionDays", "7"])
            .unwrap();
        assert_eq!(dev(&c), Some(7));
        for bad in ["0", "366", "x"] {
            let r =
                Config::try_parse_from(["stowage-server", "--containerDeleteRetentionDays", bad]);
            assert!(r.is_err(), "{bad}");
        }
    }

    #[test]
    fn versioning_flags_give_a_default_and_exceptions() {
        let c = Config::try_parse_from([
            "stowage-server",
            "--blobVersioning",
            "--blobVersioningAccounts",
            "a=off; b=on;;",
        ])
        .unwrap();
        let v = c.store_config().versioning;
        assert!(v.enabled("devstoreaccount1"));
        assert!(!v.enabled("a"));
        assert!(v.enabled("b"));
        let off = Config::try_parse_from(["stowage-server", "--blobVersioningAccounts", "a=on"])
            .unwrap()
            .store_config()
            .versioning;
        assert!(off.enabled("a") && !off.enabled("devstoreaccount1"));
        for bad in ["a", "a=maybe"] {
            let argv = ["stowage-server", "--blobVersioningAccounts", bad];
            assert!(Config::try_parse_from(argv).is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_names_a_postgres_database() {
        let url = "postgres://stowage@db.internal:5432/blobs";
        let c = Config::try_parse_from(["stowage-server", "--metadata", url]).unwrap();
        let store = c.store_config();
        assert_eq!(store.metadata.as_deref(), Some(url));
        assert_eq!(store.location, Some(PathBuf::from("./stowage-data")));
    }

    #[test]
    fn defaults_match_the_emulator() {
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!(c.blob_host, "127.0.0.1");
        assert_eq!(c.blob_port, 10000);
        assert_eq!(c.location, PathBuf::from("./stowage-data"));
        assert!(!c.in_memory_persistence);
    }

    #[test]
    fn objects_url_is_parsed_or_refused() {
        let c = Config::try_parse_from([
            "stowage-server",
            "--objects",
            "s3://bucket?endpoint=http://127.0.0.1:3900",
        ])
        .unwrap();
        assert_eq!(
            c.store_config().objects.to_string(),
            "s3://bucket?endpoint=http://127.0.0.1:3900"
        );
        let c = Config::try_parse_from(["stowage-server", "--objects", "file:///shared"]).unwrap();
        assert_eq!(
            c.store_config().objects,
            ObjectsLocation::Shared("/shared".into())
        );
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!(c.store_config().objects, ObjectsLocation::DataDir);
        assert!(Config::try_parse_from(["stowage-server", "--objects", "gs://b"]).is_err());
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
        assert!(c.disable_product_style_url);
        assert_eq!(c.store_config().location, None);
        // Product-style URLs are served unless the flag is given.
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert!(!c.disable_product_style_url && !c.loose);
    }

    /// Every flag of `azurite` and `azurite-blob` 3.37 parses; each one
    /// Stowage does not act on gives exactly one warning line naming it.
    #[test]
    fn every_emulator_flag_is_accepted_and_the_ignored_ones_warn_once() {
        let table: &[(&[&str], Option<&str>)] = &[
            (&["--blobHost", "0.0.0.0"], None),
            (&["--blobPort", "10000"], None),
            (&["-l", "/tmp/x"], None),
            (&["-s"], None),
            (&["-L"], None),
            (&["-d", "/tmp/debug.log"], None),
            (&["--inMemoryPersistence"], None),
            (&["--disableProductStyleUrl"], None),
            (&["--cert", "c.pem", "--key", "k.pem"], None),
            (&["--skipApiVersionCheck"], Some("--skipApiVersionCheck")),
            (&["--pwd", "secret"], Some("--pwd")),
            (&["--oauth", "basic"], None),
            (
                &["--blobKeepAliveTimeout", "5"],
                Some("--blobKeepAliveTimeout"),
            ),
            (&["--extentMemoryLimit", "100"], Some("--extentMemoryLimit")),
            (&["--disableTelemetry"], Some("--disableTelemetry")),
            (&["--queueHost", "0.0.0.0"], Some("--queueHost")),
            (&["--queuePort", "10001"], Some("--queuePort")),
            (
                &["--queueKeepAliveTimeout", "5"],
                Some("--queueKeepAliveTimeout"),
            ),
            (&["--tableHost", "0.0.0.0"], Some("--tableHost")),
            (&["--tablePort", "10002"], Some("--tablePort")),
            (
                &["--tableKeepAliveTimeout", "5"],
                Some("--tableKeepAliveTimeout"),
            ),
        ];
        for (args, warns) in table {
            let argv = std::iter::once("stowage-server").chain(args.iter().copied());
            let c = Config::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"));
            let lines = c.ignored_flags();
            match warns {
                None => assert!(lines.is_empty(), "{args:?}: {lines:?}"),
                Some(flag) => {
                    assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
                    assert!(lines[0].starts_with(flag), "{lines:?}");
                }
            }
        }
        // `=` spellings, as scripts write them, parse too.
        let c =
            Config::try_parse_from(["stowage-server", "--blobPort=0", "--queuePort=1"]).unwrap();
        assert_eq!(c.blob_port, 0);
        assert_eq!(c.ignored_flags().len(), 1);
        // A flag the emulator does not have is still an error.
        assert!(Config::try_parse_from(["stowage-server", "--noSuchFlag"]).is_err());
    }

    #[test]
    fn metrics_and_access_log_are_off_unless_asked_for() {
        use crate::observe::AccessLogFormat;
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!((c.metrics_port, &c.access_log), (None, &None));
        assert_eq!(c.access_log_format, AccessLogFormat::Plain);
        let c = Config::try_parse_from([
            "stowage-server",
            "--metricsPort",
            "9100",
            "--accessLog",
            "-",
            "--accessLogFormat",
            "json",
        ])
        .unwrap();
        assert_eq!(c.metrics_port, Some(9100));
        assert_eq!(c.access_log, Some(PathBuf::from("-")));
        assert_eq!(c.access_log_format, AccessLogFormat::Json);
        assert!(Config::try_parse_from(["stowage-server", "--accessLogFormat", "xml"]).is_err());
    }

    #[test]
    fn oauth_basic_needs_a_certificate() {
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!(c.oauth_enabled(), Ok(false));
        let c = Config::try_parse_from(["stowage-server", "--oauth", "basic"]).unwrap();
        assert!(c.oauth_enabled().is_err());
        let c = Config::try_parse_from([
            "stowage-server",
            "--oauth",
            "basic",
            "--cert",
            "c.pem",
            "--key",
            "k.pem",
        ])
        .unwrap();
        assert_eq!(c.oauth_enabled(), Ok(true));
        assert!(Config::try_parse_from(["stowage-server", "--oauth", "full"]).is_err());
    }

    #[test]
    fn loose_is_carried_and_accounts_errors_name_the_entry() {
        let c = Config::try_parse_from(["stowage-server", "--loose"]).unwrap();
        assert!(c.loose);
        let c =
            Config::try_parse_from(["stowage-server", "--accounts", "good:a2V5MQ==;oops"]).unwrap();
        let e = c.accounts().unwrap_err();
        assert_eq!(e.entry, "oops");
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert_eq!(c.accounts().unwrap(), Accounts::development());
    }

    #[test]
    fn rehydrate_delay_and_the_test_clock_are_off_by_default() {
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        assert!(!c.test_clock);
        assert_eq!(
            c.store_config().rehydrate_delay,
            stowage_blobstore::DEFAULT_REHYDRATE_DELAY
        );
        let c = Config::try_parse_from([
            "stowage-server",
            "--testClock",
            "--rehydrateDelay",
            "30",
            "--inMemoryPersistence",
        ])
        .unwrap();
        assert!(c.test_clock);
        assert_eq!(c.store_config().rehydrate_delay, Duration::from_secs(30));
    }

    #[test]
    fn copy_flags_bound_the_fetcher() {
        let c = Config::try_parse_from(["stowage-server"]).unwrap();
        let f = c.fetch_config();
        assert_eq!(f.max_copies, DEFAULT_MAX_COPIES);
        assert_eq!(f.read_timeout, Duration::from_secs(60));
        assert_eq!(f.connect_timeout, Duration::from_secs(10));
        let c = Config::try_parse_from([
            "stowage-server",
            "--copyConcurrency",
            "2",
            "--copyTimeout",
            "5",
        ])
        .unwrap();
        let f = c.fetch_config();
        assert_eq!(f.max_copies, 2);
        assert_eq!(f.read_timeout, Duration::from_secs(5));
        assert_eq!(f.connect_timeout, Duration::from_secs(5));
    }
}
