//! Workloads where clients contend for one blob: If-Match increments of a
//! counter (optimistic concurrency: exactly one writer per ETag may win), and
//! concurrent Append Blocks to one append blob.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use bytes::Bytes;
use reqwest::{Method, StatusCode};

use super::{Ctx, ensure_container};
use crate::client::{BlobClient, Request, header, unexpected};
use crate::content::{APPEND_BLOCK, append_block, parse_append_block};
use crate::stats::{Measured, Tally};

/// Clients in both workloads.
pub const CLIENTS: usize = 16;
/// A bound on tries for one increment, so a server that never lets a
/// conditional write through ends the run instead of spinning.
const MAX_TRIES: u32 = 10_000;

/// What one incrementing client did.
#[derive(Default)]
struct Incrementer {
    latencies: Vec<Duration>,
    written: Vec<u64>,
    tries: u64,
    conflicts: u64,
}

async fn increment_loop(client: BlobClient, blob: String, times: u64) -> Result<Incrementer> {
    let mut me = Incrementer::default();
    for _ in 0..times {
        let t = Instant::now();
        let mut tries = 0;
        loop {
            tries += 1;
            ensure!(
                tries <= MAX_TRIES,
                "{blob}: no increment won in {MAX_TRIES} tries"
            );
            let read = Request::new(Method::GET, "contended", Some(&blob));
            let resp = client.expect(&read, StatusCode::OK).await?;
            let etag = header(&resp, "etag")?.to_owned();
            let text = resp.text().await?;
            let value: u64 = text
                .trim()
                .parse()
                .with_context(|| format!("{}: body {text:?} is not a count", read.describe()))?;
            let write = Request::new(Method::PUT, "contended", Some(&blob))
                .with_header("x-ms-blob-type", "BlockBlob")
                .with_header("if-match", &etag)
                .with_body(Bytes::from((value + 1).to_string()));
            let resp = client.send(&write).await?;
            match resp.status() {
                StatusCode::CREATED => {
                    me.written.push(value + 1);
                    break;
                }
                StatusCode::PRECONDITION_FAILED => me.conflicts += 1,
                _ => return Err(unexpected(&write, StatusCode::CREATED, resp).await),
            }
        }
        me.tries += u64::from(tries);
        me.latencies.push(t.elapsed());
    }
    Ok(me)
}

/// 16 clients each make 100 increments of one counter blob by reading it
/// and writing the next value with `If-Match`, retrying on 412. The final
/// count must be exact and the won writes must be 1..=N, each once.
pub async fn contended_increments(ctx: &Ctx) -> Result<(Tally, Measured)> {
    ensure_container(&ctx.client, "contended").await?;
    let blob = format!("counter-{}", ctx.nonce);
    let init = Request::new(Method::PUT, "contended", Some(&blob))
        .with_header("x-ms-blob-type", "BlockBlob")
        .with_body(Bytes::from_static(b"0"));
    ctx.client.expect(&init, StatusCode::CREATED).await?;
    let per_client = ctx.count(100, 10);
    let meter = ctx.meter();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(increment_loop(ctx.client.clone(), blob.clone(), per_client)))
        .collect();
    let mut all = Incrementer::default();
    for task in tasks {
        let one = task.await??;
        all.latencies.extend(one.latencies);
        all.written.extend(one.written);
        all.tries += one.tries;
        all.conflicts += one.conflicts;
    }
    let measured = meter.stop();
    let total = CLIENTS as u64 * per_client;
    let read = Request::new(Method::GET, "contended", Some(&blob));
    let text = ctx
        .client
        .expect(&read, StatusCode::OK)
        .await?
        .text()
        .await?;
    ensure!(
        text.trim() == total.to_string(),
        "{blob}: final count {text:?} after {total} acknowledged increments (lost updates)"
    );
    all.written.sort_unstable();
    ensure!(
        all.written.iter().copied().eq(1..=total),
        "{blob}: two writers won with the same ETag (acknowledged values repeat)"
    );
    let tally = Tally {
        ops: total,
        requests: 2 * all.tries,
        latencies: all.latencies,
        note: format!(
            "{} tries, {} lost to If-Match (412)",
            all.tries, all.conflicts
        ),
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// What one appender was told: (offset, writer, seq) per block.
async fn append_loop(
    client: BlobClient,
    blob: String,
    writer: u32,
    blocks: u32,
) -> Result<(Vec<Duration>, Vec<(u64, u32, u32)>)> {
    let mut latencies = Vec::with_capacity(blocks as usize);
    let mut placed = Vec::with_capacity(blocks as usize);
    for seq in 0..blocks {
        let req = Request::new(Method::PUT, "append", Some(&blob))
            .with_query("comp", "appendblock")
            .with_body(append_block(writer, seq));
        let t = Instant::now();
        let resp = client.expect(&req, StatusCode::CREATED).await?;
        latencies.push(t.elapsed());
        let offset = header(&resp, "x-ms-blob-append-offset")?;
        let offset: u64 = offset
            .parse()
            .with_context(|| format!("{}: append offset {offset:?}", req.describe()))?;
        placed.push((offset, writer, seq));
    }
    Ok((latencies, placed))
}

/// 16 appenders each append 1000 blocks of 1 KiB to one append blob. The
/// blob must end up holding exactly every block, each where its answer's
/// `x-ms-blob-append-offset` said, each writer's blocks in its order.
pub async fn appenders(ctx: &Ctx) -> Result<(Tally, Measured)> {
    ensure_container(&ctx.client, "append").await?;
    let blob = format!("log-{}", ctx.nonce);
    let create = Request::new(Method::PUT, "append", Some(&blob))
        .with_header("x-ms-blob-type", "AppendBlob")
        .with_body(Bytes::new());
    ctx.client.expect(&create, StatusCode::CREATED).await?;
    let per_writer = ctx.count(1000, 100) as u32;
    let meter = ctx.meter();
    let tasks: Vec<_> = (0..CLIENTS as u32)
        .map(|w| tokio::spawn(append_loop(ctx.client.clone(), blob.clone(), w, per_writer)))
        .collect();
    let mut latencies = Vec::new();
    let mut placed = HashMap::new();
    for task in tasks {
        let (l, p) = task.await??;
        latencies.extend(l);
        for (offset, w, s) in p {
            if placed.insert(offset, (w, s)).is_some() {
                bail!("{blob}: two appends answered offset {offset}");
            }
        }
    }
    let measured = meter.stop();
    let total = CLIENTS as u64 * u64::from(per_writer);
    let read = Request::new(Method::GET, "append", Some(&blob));
    let body = ctx
        .client
        .expect(&read, StatusCode::OK)
        .await?
        .bytes()
        .await?;
    ensure!(
        body.len() as u64 == total * APPEND_BLOCK as u64,
        "{blob}: {} bytes after {total} appends of {APPEND_BLOCK}",
        body.len()
    );
    let mut last_seq: HashMap<u32, u32> = HashMap::new();
    for (k, block) in body.chunks(APPEND_BLOCK).enumerate() {
        let offset = (k * APPEND_BLOCK) as u64;
        let found = parse_append_block(block)
            .with_context(|| format!("{blob}: bytes at {offset} are no appended block"))?;
        let told = placed.get(&offset).copied();
        ensure!(
            told == Some(found),
            "{blob}: block {found:?} at {offset}, but the append there answered {told:?}"
        );
        let (w, s) = found;
        if let Some(prev) = last_seq.insert(w, s) {
            ensure!(
                prev < s,
                "{blob}: writer {w}'s block {s} comes after its {prev}"
            );
        }
    }
    let tally = Tally {
        ops: total,
        requests: total,
        bytes: total * APPEND_BLOCK as u64,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}
