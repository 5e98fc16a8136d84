//! The admin subcommands of the server binary: `check`, `backup`,
//! `restore` and `import-azurite` (docs/operations.md#admin-commands).
//!
//! The server's own flags are the emulator's and stay as they are: the
//! binary runs a subcommand only when its first argument names one, and
//! serves otherwise (`stowage-server --blobPort 10000` serves).

mod azurite;
mod health;
mod progress;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Parser, Subcommand};
use stowage_blobstore::admin::cluster::{Cluster, DEFAULT_ORPHAN_GRACE};
use stowage_blobstore::admin::{self as engine, Progress};
use stowage_blobstore::{ObjectsLocation, Store, StoreConfig, SystemClock};

use crate::data_dir;
use progress::Reporter;

/// Exit status when the command found something wrong (`check`).
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit status when the command could not run.
pub const EXIT_FAILED: i32 = 2;

/// Where the data is: a data directory, or a cluster's database and object
/// store (the flags the server takes for them).
#[derive(Debug, clap::Args)]
struct Target {
    /// Data directory (in cluster mode: where the extents are when
    /// `--objects` is not given).
    #[arg(short = 'l', long = "location")]
    location: Option<PathBuf>,
    /// Cluster mode: the PostgreSQL database of the metadata.
    #[arg(long = "metadata", env = "STOWAGE_METADATA", hide_env_values = true)]
    metadata: Option<String>,
    /// Cluster mode: where the extents are (`s3://BUCKET?endpoint=...`,
    /// `file:///shared/dir`).
    #[arg(long = "objects", env = "STOWAGE_OBJECTS", value_name = "URL")]
    objects: Option<ObjectsLocation>,
}

impl Target {
    /// The cluster, when `--metadata` names one.
    fn cluster(&self) -> Option<Cluster> {
        Some(Cluster {
            metadata: self.metadata.clone()?,
            objects: self.objects.clone().unwrap_or_default(),
            location: self.location.clone(),
        })
    }

    /// The data directory of single-node mode.
    fn data_dir(&self) -> anyhow::Result<&Path> {
        if let Some(objects) = self.objects.as_ref().filter(|o| o.is_remote()) {
            anyhow::bail!(
                "--objects {objects} without --metadata: check, backup and restore of a \
                 single node work on a data directory that holds its extents"
            );
        }
        self.location
            .as_deref()
            .ok_or_else(|| anyhow::anyhow!("name the data directory with --location"))
    }
}

/// Names of the subcommands: a first argument equal to one of these runs it.
const SUBCOMMANDS: [&str; 5] = [
    "check",
    "backup",
    "restore",
    "import-azurite",
    "healthcheck",
];

/// Stowage's admin commands.
#[derive(Debug, Parser)]
#[command(name = "stowage-server", version)]
struct AdminCli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Verifies every extent blobs, page maps and uncommitted blocks refer
    /// to (it exists, with the right length, and the MD5 Stowage computed
    /// for a blob matches its bytes) and lists orphan extents. Exits with 1
    /// when something is wrong. Refuses a directory a server is running on;
    /// in cluster mode (`--metadata`) it runs while the nodes serve.
    Check {
        #[command(flatten)]
        target: Target,
        /// Delete the orphans found (missing or corrupt data cannot be
        /// repaired; it is only reported).
        #[arg(long)]
        repair: bool,
        /// Cluster mode: an object nothing refers to is an orphan only when
        /// older than this many seconds (a younger one may be an upload in
        /// flight on a node).
        #[arg(long = "grace", value_name = "SECONDS", default_value_t = DEFAULT_ORPHAN_GRACE.as_secs())]
        grace: u64,
    },
    /// Copies a data directory, or a cluster's metadata and extents, to
    /// DEST (missing or empty), consistently, while servers run. The copy
    /// is a single-node data directory.
    Backup {
        #[command(flatten)]
        target: Target,
        /// Where the backup goes.
        dest: PathBuf,
    },
    /// Restores a backup into an empty data directory, or into a cluster
    /// whose database holds no metadata yet.
    Restore {
        #[command(flatten)]
        target: Target,
        /// The backup.
        src: PathBuf,
    },
    /// Loads an Azurite 3.x data directory (its `__azurite_db_blob__.json`,
    /// `__azurite_db_blob_extent__.json` and `__blobstorage__`) into a
    /// Stowage data directory, or into a cluster. Refuses a directory a
    /// server is running on.
    ImportAzurite {
        #[command(flatten)]
        target: Target,
        /// Azurite's data directory (its `--location`).
        azurite_dir: PathBuf,
    },
    /// Exits with 0 when a server answers on the port (the container
    /// image's HEALTHCHECK), 1 otherwise.
    Healthcheck {
        /// Address the server listens on.
        #[arg(long = "blobHost", default_value = "127.0.0.1")]
        blob_host: String,
        /// Port the server listens on.
        #[arg(long = "blobPort", default_value_t = 10000)]
        blob_port: u16,
    },
}

/// Runs the subcommand `args` names (`args[0]` is the program name) and
/// returns the process's exit status, or `None` when `args[1]` names none:
/// then the binary serves.
pub fn run_if_subcommand(args: Vec<OsString>) -> Option<i32> {
    let first = args.get(1)?.to_str()?;
    if !SUBCOMMANDS.contains(&first) {
        return None;
    }
    Some(run(args))
}

/// Runs the admin command in `args` (`args[0]` is the program name) and
/// returns the exit status; prints results on stdout, progress and
/// errors on stderr.
pub fn run(args: Vec<OsString>) -> i32 {
    let cli = match AdminCli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let progress = Reporter::for_stderr();
    match execute(cli.command, &progress) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("error: {e:#}");
            EXIT_FAILED
        }
    }
}

fn execute(command: Command, progress: &dyn Progress) -> anyhow::Result<i32> {
    match command {
        Command::Check {
            target,
            repair,
            grace,
        } => {
            let (report, young) = if let Some(cluster) = target.cluster() {
                let grace = std::time::Duration::from_secs(grace);
                let out = engine::cluster::check(&cluster, repair, grace, progress)?;
                (out.report, out.young_unreferenced)
            } else {
                let location = target.data_dir()?;
                require_data_dir(location)?;
                let _lock = data_dir::claim(location)?;
                (engine::check(location, repair, progress)?, 0)
            };
            for problem in &report.problems {
                println!("{problem}");
            }
            if young > 0 {
                println!(
                    "left alone: {young} extents nothing refers to yet, younger than the grace \
                     period (uploads in flight on a node, perhaps)"
                );
            }
            println!(
                "checked {} extents and the MD5 of {} blobs: {} missing or corrupt, {} orphans{}",
                report.extents_checked,
                report.blobs_hashed,
                report.damaged(),
                report.orphans(),
                if repair {
                    format!(" ({} removed)", report.orphans_removed)
                } else {
                    String::new()
                }
            );
            Ok(if report.healthy() { 0 } else { EXIT_PROBLEMS })
        }
        Command::Backup { target, dest } => {
            let report = if let Some(cluster) = target.cluster() {
                engine::cluster::backup(&cluster, &dest, progress)?
            } else {
                let location = target.data_dir()?;
                require_data_dir(location)?;
                engine::backup(location, &dest, progress)?
            };
            println!(
                "backed up {} extents ({} bytes) and the database into {}",
                report.extents,
                report.bytes,
                dest.display()
            );
            Ok(0)
        }
        Command::Restore { target, src } => {
            require_data_dir(&src)?;
            let (report, into) = if let Some(cluster) = target.cluster() {
                let into = match &cluster.objects {
                    ObjectsLocation::DataDir => "the metadata database and the data directory",
                    _ => "the metadata database and the object store",
                };
                (
                    engine::cluster::restore(&cluster, &src, progress)?,
                    into.to_owned(),
                )
            } else {
                let location = target.data_dir()?;
                let _lock = data_dir::claim(location)?;
                let report = engine::restore(&src, location, Some(data_dir::LOCK_FILE), progress)?;
                (report, location.display().to_string())
            };
            println!(
                "restored {} extents ({} bytes) and the database into {into}",
                report.extents, report.bytes,
            );
            Ok(0)
        }
        Command::Healthcheck {
            blob_host,
            blob_port,
        } => {
            let host = if blob_host == "0.0.0.0" {
                "127.0.0.1"
            } else {
                blob_host.as_str()
            };
            Ok(match health::probe(host, blob_port) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("unhealthy: {e}");
                    EXIT_PROBLEMS
                }
            })
        }
        Command::ImportAzurite {
            target,
            azurite_dir,
        } => {
            azurite::require_azurite_dir(&azurite_dir)?;
            // In cluster mode with the extents in an object store and no
            // --location, the store's own files (its disk reserve) go into
            // a scratch directory for this run. (Extents kept in the data
            // directory need the directory named.)
            let remote = target.objects.as_ref().is_some_and(|o| o.is_remote());
            let scratch = match (&target.metadata, &target.location) {
                (Some(_), None) if remote => Some(ScratchDir::new()?),
                _ => None,
            };
            let location = match &scratch {
                Some(s) => s.0.clone(),
                None => target.data_dir()?.to_path_buf(),
            };
            let _lock = data_dir::claim(&location)?;
            let mut config = StoreConfig::at(&location);
            if let Some(url) = &target.metadata {
                config = config
                    .with_metadata(url.clone())
                    .with_objects(target.objects.clone().unwrap_or_default());
            }
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let report = runtime.block_on(async {
                let store = Store::open(config, Arc::new(SystemClock)).await?;
                let report = azurite::import(&azurite_dir, &store, progress).await;
                // The PostgreSQL pool is dropped off this runtime's thread.
                tokio::task::spawn_blocking(move || drop(store)).await?;
                report
            })?;
            for blob in &report.skipped {
                println!("skipped: {blob} (page blobs are not served yet)");
            }
            println!(
                "imported {} containers, {} blobs, {} snapshots, {} uncommitted blocks \
                 ({} bytes committed) from {}",
                report.containers,
                report.blobs,
                report.snapshots,
                report.uncommitted_blocks,
                report.bytes,
                azurite_dir.display()
            );
            Ok(if report.skipped.is_empty() {
                0
            } else {
                EXIT_PROBLEMS
            })
        }
    }
}

/// A directory removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<ScratchDir> {
        let dir = std::env::temp_dir().join(format!("stowage-import-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Refuses a path that is not a Stowage data directory, before anything
/// (such as taking the lock) creates it.
fn require_data_dir(dir: &Path) -> anyhow::Result<()> {
    if !engine::database_file(dir).is_file() {
        anyhow::bail!(
            "{} is not a Stowage data directory (it has no metadata database)",
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::Config;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    /// The command lines the Azurite image is started with (its own CMD,
    /// testcontainers' Java and Node modules, docker-compose files): each
    /// one serves (no subcommand) and parses as the server's flags, through
    /// the image's `azurite` and `azurite-blob` names of the binary.
    #[test]
    fn the_azurite_images_command_lines_serve() {
        let lines: [&[&str]; 6] = [
            &[
                "azurite",
                "-l",
                "/data",
                "--blobHost",
                "0.0.0.0",
                "--queueHost",
                "0.0.0.0",
                "--tableHost",
                "0.0.0.0",
            ],
            &[
                "azurite",
                "--blobHost",
                "0.0.0.0",
                "--queueHost",
                "0.0.0.0",
                "--tableHost",
                "0.0.0.0",
            ],
            &[
                "azurite",
                "--blobHost",
                "0.0.0.0",
                "--queueHost",
                "0.0.0.0",
                "--tableHost",
                "0.0.0.0",
                "--inMemoryPersistence",
                "--extentMemoryLimit",
                "100",
                "--skipApiVersionCheck",
            ],
            &[
                "azurite",
                "--blobHost",
                "0.0.0.0",
                "--queueHost",
                "0.0.0.0",
                "--tableHost",
                "0.0.0.0",
                "--cert",
                "/azurite-cert.pem",
                "--key",
                "/azurite-key.pem",
                "--oauth",
                "basic",
            ],
            &[
                "azurite-blob",
                "--blobHost",
                "0.0.0.0",
                "--blobPort",
                "10000",
            ],
            &[
                "azurite-blob",
                "--blobHost",
                "0.0.0.0",
                "--blobPort",
                "10000",
                "-l",
                "/data",
                "--loose",
                "--skipApiVersionCheck",
                "--disableProductStyleUrl",
                "--debug",
                "/data/debug.log",
            ],
        ];
        for line in lines {
            assert_eq!(run_if_subcommand(argv(line)), None, "{line:?}");
            let config =
                Config::try_parse_from(argv(line)).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            assert_eq!(config.blob_host, "0.0.0.0");
            assert_eq!(config.blob_port, 10000);
        }
    }

    #[test]
    fn only_a_first_argument_naming_a_subcommand_runs_one() {
        assert_eq!(run_if_subcommand(argv(&["stowage-server"])), None);
        assert_eq!(
            run_if_subcommand(argv(&["stowage-server", "--location", "check"])),
            None
        );
        assert_eq!(
            run_if_subcommand(argv(&["stowage-server", "check"])),
            Some(2)
        );
        assert_eq!(
            run_if_subcommand(argv(&["stowage-server", "backup", "--location"])),
            Some(2)
        );
    }
}
