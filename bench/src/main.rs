//! `loadgen`: runs named workloads against a Blob endpoint and prints one
//! JSON line per measured phase; `loadgen report` turns those lines into
//! the comparison table. Exits non-zero when any workload's check fails.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use stowage_bench::client::BlobClient;
use stowage_bench::signer::SharedKey;
use stowage_bench::stats::Record;
use stowage_bench::{DEV_KEY, report, workloads};

/// Workloads `--quick` runs when none are named.
const QUICK: [&str; 7] = [
    "put-4k",
    "get-4k",
    "head",
    "lease-cycle",
    "list-10k",
    "contended-increments",
    "appenders",
];

#[derive(Parser)]
#[command(name = "loadgen", about, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Prints the comparison table from files of loadgen's JSON lines.
    Report(ReportArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The account's Blob endpoint, path-style. Repeated: nodes of one
    /// cluster, each request sent to the next in turn.
    #[arg(
        long = "endpoint",
        default_value = "http://127.0.0.1:10000/devstoreaccount1"
    )]
    endpoints: Vec<String>,
    /// A PostgreSQL metadata database (connection string) whose statements
    /// each timed phase counts through `pg_stat_statements` (the extension
    /// created in it): adds statements and round trips per operation.
    #[arg(long)]
    db_stats: Option<String>,
    /// Account name.
    #[arg(long, default_value = "devstoreaccount1")]
    account: String,
    /// Account key (base64).
    #[arg(long, default_value = DEV_KEY)]
    key: String,
    /// Concurrent clients (workloads that fix their own ignore it).
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    /// Workloads to run, comma-separated or repeated: put-4k, get-4k, head,
    /// lease-cycle, block-upload, put-64m, put-1g, get-large, list-10k,
    /// list-1m, contended-increments, appenders, find-tags, set-tags, and,
    /// only when named, overwrite (needs --data-dir), set-tier, find-tags-1m
    /// and copy-remote (with --source-endpoint). Default
    /// all but those (with --quick, the small ones).
    #[arg(long = "workload", short = 'w', value_delimiter = ',')]
    workloads: Vec<String>,
    /// Smaller counts.
    #[arg(long)]
    quick: bool,
    /// The server's pid, to report its CPU seconds and peak RSS.
    #[arg(long)]
    server_pid: Option<u32>,
    /// A label copied into each line (which server this is).
    #[arg(long, default_value = "")]
    label: String,
    /// A round number copied into each line.
    #[arg(long, default_value_t = 0)]
    round: u32,
    /// The server's data directory (the overwrite workload measures it).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Write each blob of a workload's set-up this many more times over
    /// itself (list-10k, get-4k): on a server with blob versioning on
    /// (`--blobVersioning`), each blob then has this many previous versions.
    #[arg(long, default_value_t = 0)]
    versions: u64,
    /// Another server's Blob endpoint (same account and key), the source of
    /// `copy-remote`; without it that copy is within the server.
    #[arg(long)]
    source_endpoint: Option<String>,
}

#[derive(Args)]
struct ReportArgs {
    /// Files of JSON lines.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The label of the server compared against.
    #[arg(long, default_value = "azurite")]
    baseline: String,
    /// The label of the server under test.
    #[arg(long, default_value = "stowage")]
    candidate: String,
    /// Instead of the two-server comparison, one column per label here
    /// (`bench/run --cluster`): rate, p50 / p99 and database round trips
    /// per operation.
    #[arg(long, value_delimiter = ',')]
    servers: Vec<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Report(args)) => print_report(&args),
        None => run(cli.run).await,
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("loadgen: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs the workloads; `Ok(false)` when one of them failed.
async fn run(args: RunArgs) -> Result<bool> {
    let key = SharedKey::new(&args.account, &args.key)?;
    let client = BlobClient::round_robin(&args.endpoints, key.clone(), args.concurrency.max(16))?;
    let source = match &args.source_endpoint {
        Some(endpoint) => Some(BlobClient::new(endpoint, key, 4)?),
        None => None,
    };
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos();
    let ctx = workloads::Ctx {
        client,
        concurrency: args.concurrency,
        quick: args.quick,
        server_pid: args.server_pid,
        db_stats: args.db_stats,
        nonce: format!("{nanos:x}"),
        data_dir: args.data_dir,
        versions: args.versions,
        source,
    };
    let names: Vec<String> = match (args.workloads.is_empty(), args.quick) {
        (false, _) => args.workloads,
        (true, true) => QUICK.iter().map(|s| s.to_string()).collect(),
        (true, false) => workloads::ALL.iter().map(|s| s.to_string()).collect(),
    };
    let mut all_ok = true;
    for name in &names {
        let records = match workloads::run(name, &ctx).await {
            Ok(records) => records,
            Err(e) => {
                all_ok = false;
                vec![Record::failed(name, args.concurrency, &e)]
            }
        };
        for mut r in records {
            r.server = args.label.clone();
            r.round = args.round;
            println!("{}", serde_json::to_string(&r)?);
        }
    }
    Ok(all_ok)
}

/// Prints the table; `Ok(false)` when any record is a failure.
fn print_report(args: &ReportArgs) -> Result<bool> {
    let mut records = Vec::new();
    for file in &args.files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let record: Record = serde_json::from_str(line)
                .with_context(|| format!("{}:{}", file.display(), n + 1))?;
            records.push(record);
        }
    }
    if args.servers.is_empty() {
        print!(
            "{}",
            report::table(&records, &args.baseline, &args.candidate)
        );
    } else {
        print!("{}", report::columns(&records, &args.servers));
    }
    Ok(records.iter().all(|r| r.ok))
}
