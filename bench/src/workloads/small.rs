//! Small-object workloads: Put Blob and Get Blob of 4 KiB, Get Blob
//! Properties (HEAD), and lease acquire + release cycles.

use std::sync::Arc;

use anyhow::{Result, bail, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use md5::{Digest as _, Md5};
use reqwest::{Method, StatusCode};

use super::{Ctx, check_md5, ensure_container, fill_once, run_ops, worker_blobs};
use crate::client::{Request, header};
use crate::content::{pattern, seed_of};
use crate::stats::{Measured, Tally};

const SMALL: usize = 4096;
/// The container of blobs that get-4k and head read.
const READ_CONTAINER: &str = "small";
/// How many blobs get-4k and head spread their reads over.
const READ_BLOBS: u64 = 1024;

fn read_blob_name(i: u64) -> String {
    format!("s{i:05}")
}

/// Put Blob of 4 KiB under fresh names; each answer's Content-MD5 (when the
/// server sends one) must be the body's, and a sample is read back.
pub async fn put_4k(ctx: &Ctx) -> Result<(Tally, Measured)> {
    const CONTAINER: &str = "put4k";
    ensure_container(&ctx.client, CONTAINER).await?;
    let total = ctx.count(5000, 1000);
    let blobs: Arc<Vec<(String, Bytes, String)>> = Arc::new(
        (0..total)
            .map(|i| {
                let name = format!("{}/{i:06}", ctx.nonce);
                let body = pattern(seed_of(&name), SMALL);
                let md5 = STANDARD.encode(Md5::digest(&body));
                (name, body, md5)
            })
            .collect(),
    );
    let (client, b) = (ctx.client.clone(), blobs.clone());
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |_, i| {
        let (client, blobs) = (client.clone(), b.clone());
        async move {
            let (name, body, md5) = &blobs[i as usize];
            let req = Request::new(Method::PUT, CONTAINER, Some(name))
                .with_header("x-ms-blob-type", "BlockBlob")
                .with_body(body.clone());
            let resp = client.expect(&req, StatusCode::CREATED).await?;
            check_md5(&resp, &req, md5)
        }
    })
    .await?;
    let measured = meter.stop();
    for i in (0..total).step_by((total / 64).max(1) as usize) {
        let (name, body, _) = &blobs[i as usize];
        let req = Request::new(Method::GET, CONTAINER, Some(name));
        let got = ctx
            .client
            .expect(&req, StatusCode::OK)
            .await?
            .bytes()
            .await?;
        ensure!(got == body, "{}: read back other bytes", req.describe());
    }
    let tally = Tally {
        ops: total,
        requests: total,
        bytes: total * SMALL as u64,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}

async fn fill_read_container(ctx: &Ctx) -> Result<Arc<Vec<Bytes>>> {
    fill_once(ctx, READ_CONTAINER, READ_BLOBS, read_blob_name, |i| {
        pattern(i, SMALL)
    })
    .await?;
    Ok(Arc::new(
        (0..READ_BLOBS).map(|i| pattern(i, SMALL)).collect(),
    ))
}

/// Which of the read container's blobs operation `i` reads.
fn pick(i: u64) -> u64 {
    (i * 7919) % READ_BLOBS
}

/// Get Blob of 4 KiB; every body is compared with what was written.
pub async fn get_4k(ctx: &Ctx) -> Result<(Tally, Measured)> {
    let expected = fill_read_container(ctx).await?;
    let total = ctx.count(5000, 1000);
    let client = ctx.client.clone();
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |_, i| {
        let (client, expected) = (client.clone(), expected.clone());
        async move {
            let n = pick(i);
            let req = Request::new(Method::GET, READ_CONTAINER, Some(&read_blob_name(n)));
            let got = client.expect(&req, StatusCode::OK).await?.bytes().await?;
            ensure!(
                got == expected[n as usize],
                "{}: {} bytes that differ from the {SMALL} written",
                req.describe(),
                got.len()
            );
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    let tally = Tally {
        ops: total,
        requests: total,
        bytes: total * SMALL as u64,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// Get Blob Properties (HEAD): Content-Length, blob type and ETag checked.
pub async fn head(ctx: &Ctx) -> Result<(Tally, Measured)> {
    fill_read_container(ctx).await?;
    let total = ctx.count(10_000, 2000);
    let client = ctx.client.clone();
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |_, i| {
        let client = client.clone();
        async move {
            let req = Request::new(Method::HEAD, READ_CONTAINER, Some(&read_blob_name(pick(i))));
            let resp = client.expect(&req, StatusCode::OK).await?;
            let length = header(&resp, "content-length")?;
            let blob_type = header(&resp, "x-ms-blob-type")?;
            header(&resp, "etag")?;
            if length != "4096" || blob_type != "BlockBlob" {
                bail!(
                    "{}: Content-Length {length}, x-ms-blob-type {blob_type}",
                    req.describe()
                );
            }
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    let tally = Tally {
        ops: total,
        requests: total,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// Lease acquire (15 s) then release, each worker on a blob of its own;
/// every lease must be available again at the end.
pub async fn lease_cycle(ctx: &Ctx) -> Result<(Tally, Measured)> {
    const CONTAINER: &str = "leases";
    let names = worker_blobs(ctx, CONTAINER, b"leased").await?;
    let total = ctx.count(2000, 500);
    let (client, n) = (ctx.client.clone(), names.clone());
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |worker, _| {
        let (client, names) = (client.clone(), n.clone());
        async move {
            let name = &names[worker];
            let acquire = Request::new(Method::PUT, CONTAINER, Some(name))
                .with_query("comp", "lease")
                .with_header("x-ms-lease-action", "acquire")
                .with_header("x-ms-lease-duration", "15");
            let resp = client.expect(&acquire, StatusCode::CREATED).await?;
            let id = header(&resp, "x-ms-lease-id")?.to_owned();
            let release = Request::new(Method::PUT, CONTAINER, Some(name))
                .with_query("comp", "lease")
                .with_header("x-ms-lease-action", "release")
                .with_header("x-ms-lease-id", &id);
            client.expect(&release, StatusCode::OK).await?;
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    for name in names.iter() {
        let req = Request::new(Method::HEAD, CONTAINER, Some(name));
        let resp = ctx.client.expect(&req, StatusCode::OK).await?;
        let state = header(&resp, "x-ms-lease-state")?;
        ensure!(
            state == "available",
            "{}: lease state {state} after release",
            req.describe()
        );
    }
    let tally = Tally {
        ops: total,
        requests: 2 * total,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}
