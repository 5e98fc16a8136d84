//! Large-object workloads: a 256 MiB blob uploaded as 4 MiB Put Blocks and
//! a Put Block List, one 64 MiB Put Blob, and full GETs of both, every byte
//! compared; and one 1 GiB Put Blob, for the server's memory during it.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest as _, Md5};
use reqwest::{Method, StatusCode};

use super::{Ctx, check_md5, ensure_container, run_ops};
use crate::client::{BlobClient, Request, header};
use crate::content::{pattern, seed_of};
use crate::stats::{Measured, Tally};

const CONTAINER: &str = "large";
const BLOCK_BLOB: &str = "block-256m";
const BLOCK: usize = 4 << 20;
const BLOCKS: u64 = 64;
const SINGLE_BLOB: &str = "put-64m";
const SINGLE: usize = 64 << 20;
const GIB_BLOB: &str = "put-1g";
const GIB: usize = 1 << 30;

/// The 256 MiB blob's blocks: (block id, bytes, Content-MD5).
fn blocks() -> Vec<(String, Bytes, String)> {
    (0..BLOCKS)
        .map(|k| {
            let body = pattern(seed_of(BLOCK_BLOB) + k, BLOCK);
            let md5 = STANDARD.encode(Md5::digest(&body));
            (STANDARD.encode(format!("block-{k:06}")), body, md5)
        })
        .collect()
}

fn single_body() -> Bytes {
    pattern(seed_of(SINGLE_BLOB), SINGLE)
}

/// Uploads the 256 MiB blob: the blocks on `concurrency` tasks, then the
/// block list. Returns the Put Block latencies.
async fn upload_blocks(
    client: &BlobClient,
    concurrency: usize,
    blocks: Arc<Vec<(String, Bytes, String)>>,
) -> Result<Vec<std::time::Duration>> {
    let (c, b) = (client.clone(), blocks.clone());
    let latencies = run_ops(concurrency.min(BLOCKS as usize), BLOCKS, move |_, k| {
        let (client, blocks) = (c.clone(), b.clone());
        async move {
            let (id, body, md5) = &blocks[k as usize];
            let req = Request::new(Method::PUT, CONTAINER, Some(BLOCK_BLOB))
                .with_query("comp", "block")
                .with_query("blockid", id)
                .with_body(body.clone());
            let resp = client.expect(&req, StatusCode::CREATED).await?;
            check_md5(&resp, &req, md5)
        }
    })
    .await?;
    let mut list = String::from(r#"<?xml version="1.0" encoding="utf-8"?><BlockList>"#);
    for (id, _, _) in blocks.iter() {
        list.push_str(&format!("<Latest>{id}</Latest>"));
    }
    list.push_str("</BlockList>");
    let commit = Request::new(Method::PUT, CONTAINER, Some(BLOCK_BLOB))
        .with_query("comp", "blocklist")
        .with_body(Bytes::from(list));
    client.expect(&commit, StatusCode::CREATED).await?;
    Ok(latencies)
}

/// One Put Blob of `body` to `blob`, checking the Content-MD5 answered.
async fn put_whole(client: &BlobClient, blob: &str, body: Bytes, md5: &str) -> Result<()> {
    let req = Request::new(Method::PUT, CONTAINER, Some(blob))
        .with_header("x-ms-blob-type", "BlockBlob")
        .with_body(body);
    let resp = client.expect(&req, StatusCode::CREATED).await?;
    check_md5(&resp, &req, md5)
}

async fn length_of(client: &BlobClient, blob: &str) -> Result<Option<u64>> {
    let resp = client
        .send(&Request::new(Method::HEAD, CONTAINER, Some(blob)))
        .await?;
    if resp.status() != StatusCode::OK {
        return Ok(None);
    }
    Ok(header(&resp, "content-length")?.parse().ok())
}

/// 256 MiB as 64 Put Blocks of 4 MiB and one Put Block List.
pub async fn block_upload(ctx: &Ctx) -> Result<(Tally, Measured)> {
    ensure_container(&ctx.client, CONTAINER).await?;
    let blocks = Arc::new(blocks());
    let meter = ctx.meter();
    let latencies = upload_blocks(&ctx.client, ctx.concurrency, blocks).await?;
    let measured = meter.stop();
    let length = length_of(&ctx.client, BLOCK_BLOB).await?;
    ensure!(
        length == Some(BLOCKS * BLOCK as u64),
        "{BLOCK_BLOB}: length {length:?} after Put Block List"
    );
    let tally = Tally {
        ops: BLOCKS,
        requests: BLOCKS + 1,
        bytes: BLOCKS * BLOCK as u64,
        latencies,
        note: "ops are Put Blocks; seconds include the Put Block List".into(),
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// One Put Blob of 64 MiB.
pub async fn put_64m(ctx: &Ctx) -> Result<(Tally, Measured)> {
    timed_put(ctx, SINGLE_BLOB, single_body()).await
}

/// One Put Blob of 1 GiB: the issue's bound on the server's memory during a
/// 1 GiB upload.
pub async fn put_1g(ctx: &Ctx) -> Result<(Tally, Measured)> {
    timed_put(ctx, GIB_BLOB, pattern(seed_of(GIB_BLOB), GIB)).await
}

/// Times one Put Blob of `body` to `blob` (hashed before the clock starts),
/// then checks the stored length.
async fn timed_put(ctx: &Ctx, blob: &str, body: Bytes) -> Result<(Tally, Measured)> {
    ensure_container(&ctx.client, CONTAINER).await?;
    let size = body.len() as u64;
    let md5 = STANDARD.encode(Md5::digest(&body));
    let meter = ctx.meter();
    let t = Instant::now();
    put_whole(&ctx.client, blob, body, &md5).await?;
    let latency = t.elapsed();
    let measured = meter.stop();
    let length = length_of(&ctx.client, blob).await?;
    ensure!(
        length == Some(size),
        "{blob}: length {length:?} after Put Blob"
    );
    let tally = Tally {
        ops: 1,
        requests: 1,
        bytes: size,
        latencies: vec![latency],
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// Streams a full GET of `blob`, comparing each chunk with `expected`.
async fn get_and_compare(client: &BlobClient, blob: &str, expected: &[u8]) -> Result<()> {
    let req = Request::new(Method::GET, CONTAINER, Some(blob));
    let mut resp = client.expect(&req, StatusCode::OK).await?;
    let mut at = 0usize;
    while let Some(chunk) = resp.chunk().await? {
        let end = at + chunk.len();
        ensure!(
            end <= expected.len() && chunk[..] == expected[at..end],
            "{}: bytes {at}..{end} differ from those written ({} expected)",
            req.describe(),
            expected.len()
        );
        at = end;
    }
    ensure!(
        at == expected.len(),
        "{}: {at} bytes, {} written",
        req.describe(),
        expected.len()
    );
    Ok(())
}

/// Full GETs of the 256 MiB and the 64 MiB blob, one after the other, every
/// byte compared. Uploads them first (untimed) if they are not there.
pub async fn get_large(ctx: &Ctx) -> Result<(Tally, Measured)> {
    ensure_container(&ctx.client, CONTAINER).await?;
    let blocks = Arc::new(blocks());
    let mut big = Vec::with_capacity(BLOCKS as usize * BLOCK);
    for (_, body, _) in blocks.iter() {
        big.extend_from_slice(body);
    }
    let single = single_body();
    if length_of(&ctx.client, BLOCK_BLOB).await? != Some(big.len() as u64) {
        upload_blocks(&ctx.client, ctx.concurrency, blocks).await?;
    }
    if length_of(&ctx.client, SINGLE_BLOB).await? != Some(SINGLE as u64) {
        let md5 = STANDARD.encode(Md5::digest(&single));
        put_whole(&ctx.client, SINGLE_BLOB, single.clone(), &md5).await?;
    }
    let meter = ctx.meter();
    let mut latencies = Vec::new();
    for (blob, expected) in [(BLOCK_BLOB, &big[..]), (SINGLE_BLOB, &single[..])] {
        let t = Instant::now();
        get_and_compare(&ctx.client, blob, expected).await?;
        latencies.push(t.elapsed());
    }
    let measured = meter.stop();
    let tally = Tally {
        ops: 2,
        requests: 2,
        bytes: (big.len() + single.len()) as u64,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}
