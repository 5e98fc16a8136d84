//! `overwrite`: clients overwrite eight 70 KiB blobs as fast as the server
//! accepts for 60 s, while the data directory's size is sampled; then the
//! workload waits for the server's garbage collector to catch up and
//! reports the peak and the final disk use against the live data. With
//! `--data-dir` only (the size is read from the file system).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use bytes::Bytes;
use reqwest::{Method, StatusCode};

use super::{Ctx, ensure_container};
use crate::client::Request;
use crate::content::pattern;
use crate::stats::{Measured, Tally};

const CONTAINER: &str = "overwrite";
const BLOBS: usize = 8;
/// Above the server's inline limit (64 KiB): each version is a file.
const SIZE: usize = 70 * 1024;
/// Distinct bodies, so consecutive versions differ.
const BODIES: usize = 64;
/// How often the data directory is measured.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// The longest wait for the collector after the timed phase (Stowage's
/// grace period is 30 s).
const SETTLE_MAX: Duration = Duration::from_secs(120);
/// Settled: the size has not changed for this long.
const SETTLED_FOR: Duration = Duration::from_secs(10);
const FILE_SYSTEM_BLOCK: u64 = 512;

/// Bytes allocated under `dir` (what `du` counts), except the server's
/// fixed disk reserve, which is not data.
fn disk_use(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt as _;
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if entry.file_name() != "disk-reserve" {
                total += meta.blocks() * FILE_SYSTEM_BLOCK;
            }
        }
    }
    total
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The timed overwrites, the wait for the collector, and the check.
///
/// # Errors
///
/// No `--data-dir`, a failed request, or a blob that is not one of the
/// bodies written.
pub async fn overwrite(ctx: &Ctx) -> Result<(Tally, Measured)> {
    let dir: PathBuf = ctx
        .data_dir
        .clone()
        .context("the overwrite workload measures the data directory: pass --data-dir")?;
    ensure_container(&ctx.client, CONTAINER).await?;
    let bodies: Arc<Vec<Bytes>> = Arc::new(
        (0..BODIES)
            .map(|i| pattern(0x0BAD_5EED + i as u64, SIZE))
            .collect(),
    );
    let name = |b: usize| format!("{}-{b}", ctx.nonce);
    let duration = Duration::from_secs(ctx.count(60, 10));
    let baseline = disk_use(&dir);

    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(baseline));
    let sampler = {
        let (dir, stop, peak) = (dir.clone(), stop.clone(), peak.clone());
        tokio::task::spawn_blocking(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(disk_use(&dir), Ordering::Relaxed);
                std::thread::sleep(SAMPLE_EVERY);
            }
        })
    };

    let meter = ctx.meter();
    let started = Instant::now();
    let mut workers = Vec::new();
    for w in 0..ctx.concurrency {
        let (client, bodies, blob) = (ctx.client.clone(), bodies.clone(), name(w % BLOBS));
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut n = w;
            while started.elapsed() < duration {
                let req = Request::new(Method::PUT, CONTAINER, Some(&blob))
                    .with_header("x-ms-blob-type", "BlockBlob")
                    .with_body(bodies[n % BODIES].clone());
                let t = Instant::now();
                client.expect(&req, StatusCode::CREATED).await?;
                latencies.push(t.elapsed());
                n += 7;
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut tally = Tally::default();
    for worker in workers {
        tally.latencies.extend(worker.await??);
    }
    let measured = meter.stop();
    tally.ops = tally.latencies.len() as u64;
    tally.requests = tally.ops;
    tally.bytes = tally.ops * SIZE as u64;
    let peak_during = peak.load(Ordering::Relaxed);

    // Let the collector catch up: until the size has not moved for a while.
    let settle_start = Instant::now();
    let mut last = disk_use(&dir);
    let mut unchanged_since = Instant::now();
    while settle_start.elapsed() < SETTLE_MAX {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = disk_use(&dir);
        if now != last {
            last = now;
            unchanged_since = Instant::now();
        } else if unchanged_since.elapsed() >= SETTLED_FOR && now <= peak_during / 2 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    sampler.await?;
    let final_use = disk_use(&dir);
    let peak_use = peak.load(Ordering::Relaxed);

    // Every blob holds one of the bodies, whole.
    for b in 0..BLOBS {
        let req = Request::new(Method::GET, CONTAINER, Some(&name(b)));
        let resp = ctx.client.expect(&req, StatusCode::OK).await?;
        let got = resp.bytes().await?;
        ensure!(
            bodies.contains(&got),
            "{}: not one of the bodies written",
            req.describe()
        );
    }
    let live = (BLOBS * SIZE) as u64;
    tally.note = format!(
        "data directory above its {:.1} MiB at the start (SQLite files included, disk reserve \
         excluded): peak {:.1} MiB, {:.1} MiB {:.0} s after the last write; live data {:.2} MiB",
        mib(baseline),
        mib(peak_use.saturating_sub(baseline)),
        mib(final_use.saturating_sub(baseline)),
        settle_start.elapsed().as_secs_f64(),
        mib(live),
    );
    eprintln!("  overwrite: {}", tally.note);
    Ok((tally, measured))
}
