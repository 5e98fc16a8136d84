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
use stowage_blobstore::admin::{self as engine, Progress};
use stowage_blobstore::{Store, StoreConfig, SystemClock};

use crate::data_dir;
use progress::Reporter;

/// Exit status when the command found something wrong (`check`).
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit status when the command could not run.
pub const EXIT_FAILED: i32 = 2;

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
    /// Verifies every extent blobs and uncommitted blocks refer to (it
    /// exists, with the right length, and the MD5 Stowage computed for a
    /// blob matches its bytes) and lists orphan extents. Exits with 1 when
    /// something is wrong. Refuses a directory a server is running on.
    Check {
        /// Data directory.
        #[arg(short = 'l', long = "location")]
        location: PathBuf,
        /// Delete the orphans found (missing or corrupt data cannot be
        /// repaired; it is only reported).
        #[arg(long)]
        repair: bool,
    },
    /// Copies a data directory to DEST (missing or empty), consistently,
    /// while a server may be running on it.
    Backup {
        /// Data directory.
        #[arg(short = 'l', long = "location")]
        location: PathBuf,
        /// Where the backup goes.
        dest: PathBuf,
    },
    /// Restores a backup into an empty data directory.
    Restore {
        /// Data directory (missing or empty).
        #[arg(short = 'l', long = "location")]
        location: PathBuf,
        /// The backup.
        src: PathBuf,
    },
    /// Loads an Azurite 3.x data directory (its `__azurite_db_blob__.json`,
    /// `__azurite_db_blob_extent__.json` and `__blobstorage__`) into a
    /// Stowage data directory. Refuses a directory a server is running on.
    ImportAzurite {
        /// Stowage data directory.
        #[arg(short = 'l', long = "location")]
        location: PathBuf,
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
        Command::Check { location, repair } => {
            require_data_dir(&location)?;
            let _lock = data_dir::claim(&location)?;
            let report = engine::check(&location, repair, progress)?;
            for problem in &report.problems {
                println!("{problem}");
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
        Command::Backup { location, dest } => {
            require_data_dir(&location)?;
            let report = engine::backup(&location, &dest, progress)?;
            println!(
                "backed up {} extents ({} bytes) and the database into {}",
                report.extents,
                report.bytes,
                dest.display()
            );
            Ok(0)
        }
        Command::Restore { location, src } => {
            require_data_dir(&src)?;
            let _lock = data_dir::claim(&location)?;
            let report = engine::restore(&src, &location, Some(data_dir::LOCK_FILE), progress)?;
            println!(
                "restored {} extents ({} bytes) and the database into {}",
                report.extents,
                report.bytes,
                location.display()
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
            location,
            azurite_dir,
        } => {
            azurite::require_azurite_dir(&azurite_dir)?;
            let _lock = data_dir::claim(&location)?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let report = runtime.block_on(async {
                let store = Store::open(StoreConfig::at(&location), Arc::new(SystemClock)).await?;
                azurite::import(&azurite_dir, &store, progress).await
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
