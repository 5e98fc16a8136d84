//! Put Block latency against the number of blocks already staged on the
//! blob: one client stages 4 KiB blocks, each on a blob of its own (nothing
//! staged before it), then the same number on a blob that already holds
//! [`STAGED`] uncommitted blocks. The two records (`put-block-0` and
//! `put-block-50k`) sit side by side in the table; a server whose Put Block
//! reads the blob's other blocks shows it as a ratio of their latencies.
//!
//! One client, so a latency is the server's cost of one Put Block, not a
//! queue. Staging the [`STAGED`] blocks (16 bytes each, `concurrency` at a
//! time) is set-up, untimed. Checked: every answer's Content-MD5, and the
//! large blob's uncommitted list has exactly the blocks staged. The large
//! blob is committed empty and deleted at the end, so rounds do not pile
//! up blocks.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest as _, Md5};
use reqwest::{Method, StatusCode};

use super::{Ctx, check_md5, ensure_container, run_ops};
use crate::client::{BlobClient, Request};
use crate::content::{pattern, seed_of};
use crate::stats::{Record, Tally};

const CONTAINER: &str = "staged";
/// Blocks staged on the large blob before its timed phase.
const STAGED: u64 = 50_000;
const BLOCK: usize = 4096;

/// Block `k`'s id: every id of a blob must decode to the same length.
fn block_id(k: u64) -> String {
    STANDARD.encode(format!("{k:08}"))
}

fn put_block(blob: &str, k: u64, body: Bytes) -> Request {
    Request::new(Method::PUT, CONTAINER, Some(blob))
        .with_query("comp", "block")
        .with_query("blockid", &block_id(k))
        .with_body(body)
}

/// Stages one 4 KiB block and checks the Content-MD5 answered.
async fn stage_checked(client: &BlobClient, blob: &str, k: u64) -> Result<()> {
    let body = pattern(seed_of(blob) + k, BLOCK);
    let md5 = STANDARD.encode(Md5::digest(&body));
    let req = put_block(blob, k, body);
    let resp = client.expect(&req, StatusCode::CREATED).await?;
    check_md5(&resp, &req, &md5)
}

/// Times `total` Put Blocks on one client; `blob_and_index(i)` says where
/// the i-th goes.
async fn timed(
    ctx: &Ctx,
    name: &str,
    total: u64,
    blob_and_index: impl Fn(u64) -> (String, u64) + Send + Sync + 'static,
) -> Result<Record> {
    let client = ctx.client.clone();
    let target = Arc::new(blob_and_index);
    let meter = ctx.meter();
    let latencies = run_ops(1, total, move |_, i| {
        let (client, target) = (client.clone(), target.clone());
        async move {
            let (blob, k) = target(i);
            stage_checked(&client, &blob, k).await
        }
    })
    .await?;
    let measured = meter.stop();
    let tally = Tally {
        ops: total,
        requests: total,
        bytes: total * BLOCK as u64,
        latencies,
        note: "one client".into(),
        ..Tally::default()
    };
    Ok(Record::completed(name, 1, tally, measured))
}

/// How many blocks `blob`'s uncommitted list holds.
async fn uncommitted_count(client: &BlobClient, blob: &str) -> Result<u64> {
    let req = Request::new(Method::GET, CONTAINER, Some(blob))
        .with_query("comp", "blocklist")
        .with_query("blocklisttype", "uncommitted");
    let xml = client.expect(&req, StatusCode::OK).await?.text().await?;
    Ok(xml.matches("<Block>").count() as u64)
}

/// The workload: `put-block-0`, then `put-block-50k`.
///
/// # Errors
///
/// A failed request, a wrong Content-MD5, or a wrong uncommitted count.
pub async fn staged_blocks(ctx: &Ctx) -> Result<Vec<Record>> {
    ensure_container(&ctx.client, CONTAINER).await?;
    let total = ctx.count(2000, 500);
    let nonce = ctx.nonce.clone();
    let mut records = Vec::new();

    let fresh = nonce.clone();
    records.push(
        timed(ctx, "put-block-0", total, move |i| {
            (format!("{fresh}/fresh-{i:06}"), 0)
        })
        .await?,
    );

    let big = format!("{nonce}/staged-50k");
    let started = Instant::now();
    let (client, blob) = (ctx.client.clone(), big.clone());
    run_ops(ctx.concurrency, STAGED, move |_, k| {
        let (client, blob) = (client.clone(), blob.clone());
        async move {
            let body = Bytes::from(format!("block {k:010}"));
            client
                .expect(&put_block(&blob, k, body), StatusCode::CREATED)
                .await?;
            Ok(())
        }
    })
    .await?;
    eprintln!(
        "  {CONTAINER}: {STAGED} blocks staged in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let blob = big.clone();
    records.push(
        timed(ctx, "put-block-50k", total, move |i| {
            (blob.clone(), STAGED + i)
        })
        .await?,
    );

    let staged = uncommitted_count(&ctx.client, &big).await?;
    ensure!(
        staged == STAGED + total,
        "{big}: {staged} uncommitted blocks, {} staged",
        STAGED + total
    );
    let sample = format!("{nonce}/fresh-{:06}", total - 1);
    let one = uncommitted_count(&ctx.client, &sample).await?;
    ensure!(one == 1, "{sample}: {one} uncommitted blocks, 1 staged");
    let commit_empty = Request::new(Method::PUT, CONTAINER, Some(&big))
        .with_query("comp", "blocklist")
        .with_body(Bytes::from_static(
            br#"<?xml version="1.0" encoding="utf-8"?><BlockList></BlockList>"#,
        ));
    let started = Instant::now();
    ctx.client
        .expect(&commit_empty, StatusCode::CREATED)
        .await?;
    eprintln!(
        "  {CONTAINER}: an empty Put Block List discarded {staged} staged blocks in {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let delete = Request::new(Method::DELETE, CONTAINER, Some(&big));
    ctx.client.expect(&delete, StatusCode::ACCEPTED).await?;
    Ok(records)
}
