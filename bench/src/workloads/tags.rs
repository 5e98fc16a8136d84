//! Blob index tags: Find Blobs by Tags over many blobs of which 100 match,
//! and Set Blob Tags.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, ensure};
use bytes::Bytes;
use reqwest::{Method, StatusCode};

use super::{Ctx, ensure_container, run_ops};
use crate::stats::{Measured, Tally};

/// How many blobs of a tagged container match the query.
const MATCHES: u64 = 100;

fn find_blob_name(i: u64) -> String {
    format!("t{i:07}")
}

/// Every `count / MATCHES`-th blob is `group=hit-<container>`; the others
/// spread over fifty other groups, so the index holds many keys' worth of
/// values.
fn group_of(container: &str, i: u64, count: u64) -> String {
    if i.is_multiple_of(count / MATCHES) {
        format!("hit-{container}")
    } else {
        format!("miss{:02}", i % 50)
    }
}

/// Writes the tagged container once (its metadata `ready=<count>` says it
/// is done), each blob tagged by `x-ms-tags` on its Put Blob.
async fn fill_tagged(ctx: &Ctx, container: &'static str, count: u64) -> Result<()> {
    let client = &ctx.client;
    let props = crate::client::Request::new(Method::HEAD, container, None)
        .with_query("restype", "container");
    let resp = client.send(&props).await?;
    let ready = resp
        .headers()
        .get("x-ms-meta-ready")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == count.to_string());
    if resp.status() == StatusCode::OK && ready {
        return Ok(());
    }
    ensure_container(client, container).await?;
    let started = Instant::now();
    let c = client.clone();
    run_ops(ctx.concurrency, count, move |_, i| {
        let c = c.clone();
        async move {
            let tags = format!("group={}&n={i:07}", group_of(container, i, count));
            let req = crate::client::Request::new(Method::PUT, container, Some(&find_blob_name(i)))
                .with_header("x-ms-blob-type", "BlockBlob")
                .with_header("x-ms-tags", &tags)
                .with_body(Bytes::from_static(b"t"));
            c.expect(&req, StatusCode::CREATED).await?;
            Ok(())
        }
    })
    .await?;
    eprintln!(
        "  {container}: {count} tagged blobs written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mark = crate::client::Request::new(Method::PUT, container, None)
        .with_query("restype", "container")
        .with_query("comp", "metadata")
        .with_header("x-ms-meta-ready", &count.to_string());
    client.expect(&mark, StatusCode::OK).await?;
    Ok(())
}

/// Find Blobs by Tags across the account over 10,000 tagged blobs (2,000
/// with `--quick`) of which 100 match; each answer must list exactly those
/// 100 blobs.
pub async fn find_tags(ctx: &Ctx) -> Result<(Tally, Measured)> {
    let count = ctx.count(10_000, 2_000);
    find_over(ctx, "tagged", count).await
}

/// The same search over 1,000,000 tagged blobs (100,000 with `--quick`), of
/// which again 100 match: with the index, a page costs what it costs over
/// 10,000 (run only when named: filling it takes minutes).
pub async fn find_tags_1m(ctx: &Ctx) -> Result<(Tally, Measured)> {
    let count = ctx.count(1_000_000, 100_000);
    find_over(ctx, "tagged1m", count).await
}

/// Fills `container` with `count` tagged blobs once, then times 500
/// searches (100 with `--quick`) for its 100 matching blobs.
async fn find_over(ctx: &Ctx, container: &'static str, count: u64) -> Result<(Tally, Measured)> {
    fill_tagged(ctx, container, count).await?;
    let total = ctx.count(500, 100);
    let client = ctx.client.clone();
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |_, _| {
        let client = client.clone();
        async move {
            // Every page of the answer (a server may page below 100).
            let filter = format!("\"group\" = 'hit-{container}'");
            let mut found = 0;
            let mut marker = String::new();
            loop {
                let mut req = crate::client::Request::new(Method::GET, "", None)
                    .with_query("comp", "blobs")
                    .with_query("where", &filter);
                if !marker.is_empty() {
                    req = req.with_query("marker", &marker);
                }
                let text = client.expect(&req, StatusCode::OK).await?.text().await?;
                found += text
                    .matches(&format!("<ContainerName>{container}</ContainerName>"))
                    .count() as u64;
                marker = between(&text, "<NextMarker>", "</NextMarker>").to_owned();
                if marker.is_empty() {
                    break;
                }
            }
            ensure!(
                found == MATCHES,
                "{filter}: {found} blobs of {container}, {MATCHES} match"
            );
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    let tally = Tally {
        ops: total,
        requests: total,
        items: total * MATCHES,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}

/// The text between the first `open` and the `close` after it; empty when
/// absent.
fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    text.split_once(open)
        .and_then(|(_, rest)| rest.split_once(close))
        .map_or("", |(inner, _)| inner)
}

/// Set Blob Tags, 5,000 times (1,000 with `--quick`) over 1,024 blobs; the
/// last tags set on a sample of blobs are read back with Get Blob Tags.
pub async fn set_tags(ctx: &Ctx) -> Result<(Tally, Measured)> {
    const CONTAINER: &str = "settags";
    const BLOBS: u64 = 1024;
    super::fill_once(
        ctx,
        CONTAINER,
        BLOBS,
        |i| format!("s{i:05}"),
        |_| Bytes::from_static(b"s"),
    )
    .await?;
    let total = ctx.count(5000, 1000);
    let body = |i: u64| {
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet>\
             <Tag><Key>round</Key><Value>{i:06}</Value></Tag>\
             <Tag><Key>kind</Key><Value>bench</Value></Tag></TagSet></Tags>"
        )
    };
    let client = ctx.client.clone();
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |_, i| {
        let client = client.clone();
        async move {
            let req = crate::client::Request::new(
                Method::PUT,
                CONTAINER,
                Some(&format!("s{:05}", i % BLOBS)),
            )
            .with_query("comp", "tags")
            .with_header("content-type", "application/xml; charset=UTF-8")
            .with_body(Bytes::from(body(i)));
            client.expect(&req, StatusCode::NO_CONTENT).await?;
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    // The last round of writes to the first blobs; requests may finish out
    // of order, so any round of the blob is accepted but the kind must be
    // there.
    let sample = Arc::new(ctx.client.clone());
    for n in 0..8u64 {
        let req = crate::client::Request::new(Method::GET, CONTAINER, Some(&format!("s{n:05}")))
            .with_query("comp", "tags");
        let text = sample.expect(&req, StatusCode::OK).await?.text().await?;
        ensure!(
            text.contains("<Key>kind</Key><Value>bench</Value>"),
            "{}: {text}",
            req.describe()
        );
    }
    let tally = Tally {
        ops: total,
        requests: total,
        latencies,
        ..Tally::default()
    };
    Ok((tally, measured))
}
