//! Page blobs: random 4 KiB Put Page, and Get Page Ranges over a blob with
//! 100,000 separate ranges.

use std::sync::Arc;

use anyhow::{Result, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest as _, Md5};
use reqwest::{Method, StatusCode};

use super::{Ctx, check_md5, ensure_container, run_ops};
use crate::client::Request;
use crate::content::pattern;
use crate::stats::{Measured, Tally};

const CONTAINER: &str = "pages";
const PAGE_WRITE: u64 = 4096;
/// The random-write blob: 1 GiB, 262,144 slots of 4 KiB.
const RANDOM_BLOB_SIZE: u64 = 1 << 30;
/// Odd, so `i * STRIDE mod slots` visits every slot once (slots is a power
/// of two): the writes land at distinct random-looking offsets, and the
/// last write of each slot is known.
const STRIDE: u64 = 2_654_435_761;

fn slot_of(i: u64) -> u64 {
    (i.wrapping_mul(STRIDE)) % (RANDOM_BLOB_SIZE / PAGE_WRITE)
}

async fn create_page_blob(ctx: &Ctx, name: &str, size: u64) -> Result<()> {
    let req = Request::new(Method::PUT, CONTAINER, Some(name))
        .with_header("x-ms-blob-type", "PageBlob")
        .with_header("x-ms-blob-content-length", &size.to_string());
    ctx.client.expect(&req, StatusCode::CREATED).await?;
    Ok(())
}

/// 20,000 Put Page of 4 KiB (2,000 with `--quick`) at distinct random
/// offsets of a 1 GiB page blob, each with its Content-MD5; a sample of the
/// pages is read back byte for byte, the rest of the sample's window as
/// zeros.
pub async fn put_page_4k(ctx: &Ctx) -> Result<(Tally, Measured)> {
    ensure_container(&ctx.client, CONTAINER).await?;
    let name = format!("{}-random", ctx.nonce);
    create_page_blob(ctx, &name, RANDOM_BLOB_SIZE).await?;
    let total = ctx.count(20_000, 2_000);
    let body = |i: u64| pattern(i + 1, PAGE_WRITE as usize);
    let (client, blob) = (ctx.client.clone(), Arc::new(name.clone()));
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |_, i| {
        let (client, blob) = (client.clone(), blob.clone());
        async move {
            let data = body(i);
            let md5 = STANDARD.encode(Md5::digest(&data));
            let start = slot_of(i) * PAGE_WRITE;
            let req = Request::new(Method::PUT, CONTAINER, Some(&blob))
                .with_query("comp", "page")
                .with_header("x-ms-page-write", "update")
                .with_header(
                    "x-ms-range",
                    &format!("bytes={start}-{}", start + PAGE_WRITE - 1),
                )
                .with_header("content-md5", &md5)
                .with_body(data);
            let resp = client.expect(&req, StatusCode::CREATED).await?;
            check_md5(&resp, &req, &md5)
        }
    })
    .await?;
    let measured = meter.stop();
    for i in (0..total).step_by((total / 32).max(1) as usize) {
        let start = slot_of(i) * PAGE_WRITE;
        let req = Request::new(Method::GET, CONTAINER, Some(&name)).with_header(
            "x-ms-range",
            &format!("bytes={start}-{}", start + PAGE_WRITE - 1),
        );
        let got = ctx
            .client
            .expect(&req, StatusCode::PARTIAL_CONTENT)
            .await?
            .bytes()
            .await?;
        ensure!(got == body(i), "{}: read back other bytes", req.describe());
    }
    let tally = Tally {
        ops: total,
        requests: total,
        bytes: total * PAGE_WRITE,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// Get Page Ranges of a blob holding 100,000 separate 512-byte ranges
/// (10,000 with `--quick`), written once (untimed; the container's
/// metadata records that it is done): 20 full answers (5 with `--quick`),
/// each checked to list every range.
pub async fn page_ranges_100k(ctx: &Ctx) -> Result<(Tally, Measured)> {
    let ranges = ctx.count(100_000, 10_000);
    let name = format!("ranges-{ranges}");
    ensure_container(&ctx.client, CONTAINER).await?;
    let marker = Request::new(Method::HEAD, CONTAINER, Some(&name));
    let done = ctx
        .client
        .send(&marker)
        .await?
        .headers()
        .get("x-ms-meta-ready")
        .is_some();
    if !done {
        create_page_blob(ctx, &name, ranges * 1024).await?;
        let (client, blob) = (ctx.client.clone(), Arc::new(name.clone()));
        run_ops(ctx.concurrency, ranges, move |_, i| {
            let (client, blob) = (client.clone(), blob.clone());
            async move {
                // Every other page: no two ranges touch.
                let start = i * 1024;
                let req = Request::new(Method::PUT, CONTAINER, Some(&blob))
                    .with_query("comp", "page")
                    .with_header("x-ms-page-write", "update")
                    .with_header("x-ms-range", &format!("bytes={start}-{}", start + 511))
                    .with_body(Bytes::from_static(&[7u8; 512]));
                client.expect(&req, StatusCode::CREATED).await?;
                Ok(())
            }
        })
        .await?;
        let mark = Request::new(Method::PUT, CONTAINER, Some(&name))
            .with_query("comp", "metadata")
            .with_header("x-ms-meta-ready", "1");
        ctx.client.expect(&mark, StatusCode::OK).await?;
    }
    let total = ctx.count(20, 5);
    let (client, blob) = (ctx.client.clone(), Arc::new(name));
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency.min(4), total, move |_, _| {
        let (client, blob) = (client.clone(), blob.clone());
        async move {
            let req =
                Request::new(Method::GET, CONTAINER, Some(&blob)).with_query("comp", "pagelist");
            let text = client.expect(&req, StatusCode::OK).await?.text().await?;
            let found = text.matches("<PageRange>").count() as u64;
            ensure!(
                found == ranges,
                "{}: {found} ranges, {ranges} written",
                req.describe()
            );
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    let tally = Tally {
        ops: total,
        requests: total,
        items: total * ranges,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}
