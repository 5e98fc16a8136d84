//! `copy-remote`: an asynchronous Copy Blob of one large blob from a source
//! server (`--source-endpoint`, another Stowage) into the server under
//! test, timed from the request to the moment the destination reads
//! `x-ms-copy-status: success`; beside it the plain GET of the same source
//! blob (`copy-source-get`), the rate a copy can at best reach. Without
//! `--source-endpoint` the source is the server under test itself (a
//! same-account copy: what Azurite can do).

use std::time::{Duration, Instant};

use anyhow::{Result, bail, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use md5::{Digest as _, Md5};
use reqwest::{Method, StatusCode};

use super::Ctx;
use crate::client::{BlobClient, Request, header};
use crate::content::{pattern, seed_of};
use crate::stats::{Record, Tally};

const SOURCE_CONTAINER: &str = "copysrc";
const DEST_CONTAINER: &str = "copydst";
const SOURCE_BLOB: &str = "copy-source";

/// How often the destination is asked whether the copy is done.
const POLL: Duration = Duration::from_millis(10);

/// The source blob's size: 1 GiB, 64 MiB under `--quick`.
fn size(ctx: &Ctx) -> usize {
    if ctx.quick { 64 << 20 } else { 1 << 30 }
}

/// Creates `container` readable anonymously (the copy source is read
/// without credentials), unless it exists.
async fn public_container(client: &BlobClient, container: &str) -> Result<()> {
    let req = Request::new(Method::PUT, container, None)
        .with_query("restype", "container")
        .with_header("x-ms-blob-public-access", "blob");
    let resp = client.send(&req).await?;
    match resp.status() {
        StatusCode::CREATED | StatusCode::CONFLICT => Ok(()),
        _ => Err(crate::client::unexpected(&req, StatusCode::CREATED, resp).await),
    }
}

/// Uploads the source blob unless it is there with the expected MD5.
async fn ensure_source(source: &BlobClient, len: usize) -> Result<String> {
    public_container(source, SOURCE_CONTAINER).await?;
    let body = pattern(seed_of(SOURCE_BLOB), len);
    let md5 = STANDARD.encode(Md5::digest(&body));
    let head = Request::new(Method::HEAD, SOURCE_CONTAINER, Some(SOURCE_BLOB));
    let resp = source.send(&head).await?;
    if resp.status() == StatusCode::OK && header(&resp, "content-md5").ok() == Some(md5.as_str()) {
        return Ok(md5);
    }
    let put = Request::new(Method::PUT, SOURCE_CONTAINER, Some(SOURCE_BLOB))
        .with_header("x-ms-blob-type", "BlockBlob")
        .with_body(body);
    source.expect(&put, StatusCode::CREATED).await?;
    Ok(md5)
}

/// A full GET of the source blob, its bytes counted.
async fn get_source(source: &BlobClient, len: usize) -> Result<()> {
    let req = Request::new(Method::GET, SOURCE_CONTAINER, Some(SOURCE_BLOB));
    let mut resp = source.expect(&req, StatusCode::OK).await?;
    let mut got = 0usize;
    while let Some(chunk) = resp.chunk().await? {
        got += chunk.len();
    }
    ensure!(got == len, "{}: {got} bytes of {len}", req.describe());
    Ok(())
}

/// Starts the copy of the source into `dest` and waits for its end.
async fn copy_and_wait(ctx: &Ctx, source_url: &str, dest: &str) -> Result<u32> {
    let req = Request::new(Method::PUT, DEST_CONTAINER, Some(dest))
        .with_header("x-ms-copy-source", source_url);
    let resp = ctx.client.expect(&req, StatusCode::ACCEPTED).await?;
    let mut status = header(&resp, "x-ms-copy-status")?.to_owned();
    let mut polls = 0;
    let head = Request::new(Method::HEAD, DEST_CONTAINER, Some(dest));
    while status == "pending" {
        tokio::time::sleep(POLL).await;
        polls += 1;
        let resp = ctx.client.expect(&head, StatusCode::OK).await?;
        status = header(&resp, "x-ms-copy-status")?.to_owned();
    }
    if status != "success" {
        let resp = ctx.client.expect(&head, StatusCode::OK).await?;
        let why = header(&resp, "x-ms-copy-status-description").unwrap_or("");
        bail!("the copy ended {status}: {why}");
    }
    Ok(polls)
}

/// The two phases; see the module's documentation.
pub async fn copy_remote(ctx: &Ctx) -> Result<Vec<Record>> {
    let len = size(ctx);
    let source = ctx.source.as_ref().unwrap_or(&ctx.client);
    let md5 = ensure_source(source, len).await?;
    super::ensure_container(&ctx.client, DEST_CONTAINER).await?;

    let meter = ctx.meter();
    let t = Instant::now();
    get_source(source, len).await?;
    let get_latency = t.elapsed();
    let get = Record::completed(
        "copy-source-get",
        1,
        Tally {
            ops: 1,
            requests: 1,
            bytes: len as u64,
            latencies: vec![get_latency],
            ..Tally::default()
        },
        meter.stop(),
    );

    let dest = format!("{}-copy", ctx.nonce);
    let source_url = source.url_of(SOURCE_CONTAINER, SOURCE_BLOB);
    let meter = ctx.meter();
    let t = Instant::now();
    let polls = copy_and_wait(ctx, &source_url, &dest).await?;
    let copy_latency = t.elapsed();
    let measured = meter.stop();
    let head = Request::new(Method::HEAD, DEST_CONTAINER, Some(&dest));
    let resp = ctx.client.expect(&head, StatusCode::OK).await?;
    let length: u64 = header(&resp, "content-length")?.parse()?;
    ensure!(
        length == len as u64,
        "{dest}: length {length} after the copy"
    );
    let copied_md5 = header(&resp, "content-md5")?;
    ensure!(
        copied_md5 == md5,
        "{dest}: Content-MD5 {copied_md5}, source's {md5}"
    );
    let kind = if ctx.source.is_some() {
        "from another server"
    } else {
        "same account"
    };
    let copy = Record::completed(
        "copy-remote",
        1,
        Tally {
            ops: 1,
            requests: 1 + polls as u64,
            bytes: len as u64,
            latencies: vec![copy_latency],
            note: format!("{kind}; {polls} status polls"),
            ..Tally::default()
        },
        measured,
    );
    let delete = Request::new(Method::DELETE, DEST_CONTAINER, Some(&dest));
    ctx.client.expect(&delete, StatusCode::ACCEPTED).await?;
    Ok(vec![get, copy])
}
