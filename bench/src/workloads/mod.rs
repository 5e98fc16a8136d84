//! The named workloads. Each one sets up what it needs (untimed, and only
//! once per data directory where that is expensive), runs a timed phase
//! under a [`Meter`], then checks what the server answered: a workload whose
//! bytes or counts are wrong fails, whatever its speed.

mod blocks;
mod contention;
mod copy;
mod large;
mod listing;
mod overwrite;
mod pages;
mod small;
mod tags;
mod tiers;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail, ensure};
use bytes::Bytes;
use reqwest::{Method, StatusCode};

use crate::client::{BlobClient, Request, header};
use crate::stats::{Measured, Meter, Record, Tally};

/// Every workload, in the order `bench/run` runs them.
pub const ALL: [&str; 15] = [
    "put-4k",
    "get-4k",
    "head",
    "lease-cycle",
    "block-upload",
    "staged-blocks",
    "put-64m",
    "put-1g",
    "get-large",
    "list-10k",
    "list-1m",
    "contended-increments",
    "appenders",
    "find-tags",
    "set-tags",
];

/// What every workload is given.
pub struct Ctx {
    /// The signed client.
    pub client: BlobClient,
    /// Concurrent clients for workloads that do not fix their own.
    pub concurrency: usize,
    /// Smaller counts, for a run in minutes.
    pub quick: bool,
    /// The server's pid, to sample its CPU and memory.
    pub server_pid: Option<u32>,
    /// The PostgreSQL metadata database whose statements each timed phase
    /// counts (`--db-stats`).
    pub db_stats: Option<String>,
    /// A token unique to this invocation, for fresh blob names.
    pub nonce: String,
    /// The server's data directory, for workloads that measure disk use.
    pub data_dir: Option<std::path::PathBuf>,
    /// How many more times the set-up writes each blob over itself: on a
    /// server with blob versioning on, each blob then has this many
    /// previous versions (`--versions`).
    pub versions: u64,
    /// Another server to copy from (`copy-remote`); `None`: the server
    /// under test itself.
    pub source: Option<BlobClient>,
}

impl Ctx {
    /// `full` normally, `quick` under `--quick`.
    pub fn count(&self, full: u64, quick: u64) -> u64 {
        if self.quick { quick } else { full }
    }

    /// Starts a timed phase.
    pub fn meter(&self) -> Meter {
        Meter::start(self.server_pid, self.db_stats.as_deref())
    }
}

/// Runs `workload`, returning one record per measured phase.
///
/// # Errors
///
/// An unknown name, a transport error, an unexpected answer, or a failed
/// check.
pub async fn run(name: &str, ctx: &Ctx) -> Result<Vec<Record>> {
    let c = ctx.concurrency;
    let (concurrency, (tally, measured)) = match name {
        "put-4k" => (c, small::put_4k(ctx).await?),
        "get-4k" => (c, small::get_4k(ctx).await?),
        "head" => (c, small::head(ctx).await?),
        "lease-cycle" => (c, small::lease_cycle(ctx).await?),
        "block-upload" => (c, large::block_upload(ctx).await?),
        "staged-blocks" => return blocks::staged_blocks(ctx).await,
        "put-64m" => (1, large::put_64m(ctx).await?),
        "put-1g" => (1, large::put_1g(ctx).await?),
        "get-large" => (1, large::get_large(ctx).await?),
        "list-10k" => return listing::list(ctx, name, 10_000).await,
        "list-1m" => return listing::list(ctx, name, 1_000_000).await,
        "contended-increments" => (
            contention::CLIENTS,
            contention::contended_increments(ctx).await?,
        ),
        "appenders" => (contention::CLIENTS, contention::appenders(ctx).await?),
        "overwrite" => (c, overwrite::overwrite(ctx).await?),
        "set-tier" => (c, tiers::set_tier(ctx).await?),
        "find-tags-1m" => (c, tags::find_tags_1m(ctx).await?),
        "find-tags" => (c, tags::find_tags(ctx).await?),
        "set-tags" => (c, tags::set_tags(ctx).await?),
        "copy-remote" => return copy::copy_remote(ctx).await,
        "put-page-4k" => (c, pages::put_page_4k(ctx).await?),
        "page-ranges-100k" => (c.min(4), pages::page_ranges_100k(ctx).await?),
        "probe" => (1, probe(ctx).await?),
        other => bail!("unknown workload {other:?}; known: {}", ALL.join(", ")),
    };
    Ok(vec![Record::completed(name, concurrency, tally, measured)])
}

/// Not a benchmark: waits until the server answers List Containers (for
/// at most 30 s), so `bench/run` can time a start-up to the first answer.
async fn probe(ctx: &Ctx) -> Result<(Tally, Measured)> {
    let req = Request::new(Method::GET, "", None).with_query("comp", "list");
    let meter = ctx.meter();
    let started = Instant::now();
    let mut tries = 0;
    loop {
        tries += 1;
        match ctx.client.send(&req).await {
            Ok(resp) if resp.status() == StatusCode::OK => break,
            Ok(resp) => return Err(crate::client::unexpected(&req, StatusCode::OK, resp).await),
            Err(e) if started.elapsed() > Duration::from_secs(30) => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
    let tally = Tally {
        ops: 1,
        requests: tries,
        latencies: vec![started.elapsed()],
        ..Tally::default()
    };
    Ok((tally, meter.stop()))
}

/// Runs `total` operations on `concurrency` tasks; `op(worker, index)` is
/// one operation and is timed. Stops at the first error.
///
/// # Errors
///
/// The first operation's error.
pub async fn run_ops<F, Fut>(concurrency: usize, total: u64, op: F) -> Result<Vec<Duration>>
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>> + Send + 'static,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::with_capacity(concurrency);
    for worker in 0..concurrency {
        let (op, next, failed) = (op.clone(), next.clone(), failed.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total || failed.load(Ordering::Relaxed) {
                    return Ok(latencies);
                }
                let t = Instant::now();
                if let Err(e) = op(worker, i).await {
                    failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                latencies.push(t.elapsed());
            }
        }));
    }
    let mut all = Vec::with_capacity(total as usize);
    let mut first_error = None;
    for task in tasks {
        match task.await? {
            Ok(l) => all.extend(l),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(all),
    }
}

/// Fails when the answer carries a Content-MD5 that is not `md5`, the
/// body's.
///
/// # Errors
///
/// A different Content-MD5.
pub fn check_md5(resp: &reqwest::Response, req: &Request, md5: &str) -> Result<()> {
    if let Ok(answered) = header(resp, "content-md5") {
        ensure!(
            answered == md5,
            "{}: Content-MD5 {answered}, body's is {md5}",
            req.describe()
        );
    }
    Ok(())
}

/// Creates `container` unless it exists.
///
/// # Errors
///
/// Any answer but 201 or 409.
pub async fn ensure_container(client: &BlobClient, container: &str) -> Result<()> {
    let req = Request::new(Method::PUT, container, None).with_query("restype", "container");
    let resp = client.send(&req).await?;
    match resp.status() {
        StatusCode::CREATED | StatusCode::CONFLICT => Ok(()),
        _ => Err(crate::client::unexpected(&req, StatusCode::CREATED, resp).await),
    }
}

/// A blob of its own for each worker in `container` (created if need be),
/// named after the run's nonce, holding `body`.
///
/// # Errors
///
/// Any failed request.
pub async fn worker_blobs(
    ctx: &Ctx,
    container: &str,
    body: &'static [u8],
) -> Result<Arc<Vec<String>>> {
    ensure_container(&ctx.client, container).await?;
    let names: Vec<String> = (0..ctx.concurrency)
        .map(|w| format!("{}-w{w:03}", ctx.nonce))
        .collect();
    for name in &names {
        let req = Request::new(Method::PUT, container, Some(name))
            .with_header("x-ms-blob-type", "BlockBlob")
            .with_body(Bytes::from_static(body));
        ctx.client.expect(&req, StatusCode::CREATED).await?;
    }
    Ok(Arc::new(names))
}

/// Makes sure `container` holds `count` blobs, writing them with
/// `body(i)` under `name(i)` if a previous invocation did not finish that.
/// The container's metadata `ready=<count>` records that it did.
///
/// # Errors
///
/// Any failed request.
pub async fn fill_once<N, B>(ctx: &Ctx, container: &str, count: u64, name: N, body: B) -> Result<()>
where
    N: Fn(u64) -> String + Send + Sync + 'static,
    B: Fn(u64) -> Bytes + Send + Sync + 'static,
{
    let client = &ctx.client;
    let props = Request::new(Method::HEAD, container, None).with_query("restype", "container");
    let resp = client.send(&props).await?;
    let marker = match ctx.versions {
        0 => count.to_string(),
        n => format!("{count}v{n}"),
    };
    let ready = resp
        .headers()
        .get("x-ms-meta-ready")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == marker);
    if resp.status() == StatusCode::OK && ready {
        return Ok(());
    }
    ensure_container(client, container).await?;
    let started = Instant::now();
    let (c, container_name) = (client.clone(), container.to_owned());
    let (name, body) = (Arc::new(name), Arc::new(body));
    let step = (count / 10).max(1);
    let writes = 1 + ctx.versions;
    run_ops(ctx.concurrency, count, move |_, i| {
        let (c, container, name, body) = (
            c.clone(),
            container_name.clone(),
            name.clone(),
            body.clone(),
        );
        async move {
            for _ in 0..writes {
                let req = Request::new(Method::PUT, &container, Some(&name(i)))
                    .with_header("x-ms-blob-type", "BlockBlob")
                    .with_body(body(i));
                c.expect(&req, StatusCode::CREATED).await?;
            }
            if count >= 100_000 && (i + 1) % step == 0 {
                eprintln!("  {container}: {} of {count} blobs written", i + 1);
            }
            Ok(())
        }
    })
    .await?;
    eprintln!(
        "  {container}: {count} blobs written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mark = Request::new(Method::PUT, container, None)
        .with_query("restype", "container")
        .with_query("comp", "metadata")
        .with_header("x-ms-meta-ready", &marker);
    client.expect(&mark, StatusCode::OK).await?;
    Ok(())
}
