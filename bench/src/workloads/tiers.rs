//! Set Blob Tier throughput (run only when named).

use std::sync::Arc;

use anyhow::{Result, ensure};
use reqwest::{Method, StatusCode};

use super::{Ctx, run_ops, worker_blobs};
use crate::client::{Request, header};
use crate::stats::{Measured, Tally};

/// The tier of operation `i` on a worker's blob: Cool and Hot in turn.
fn tier(i: u64) -> &'static str {
    if i.is_multiple_of(2) { "Cool" } else { "Hot" }
}

/// Set Blob Tier between Cool and Hot, each worker on a blob of its own
/// (every change is a write transaction); at the end each blob reports the
/// last tier its worker set.
pub async fn set_tier(ctx: &Ctx) -> Result<(Tally, Measured)> {
    const CONTAINER: &str = "tiers";
    let names = worker_blobs(ctx, CONTAINER, b"tiered").await?;
    let total = ctx.count(10_000, 2_000);
    // Each worker's last tier, recorded as operations complete.
    let last: Arc<Vec<std::sync::Mutex<Option<u64>>>> = Arc::new(
        (0..ctx.concurrency)
            .map(|_| std::sync::Mutex::new(None))
            .collect(),
    );
    let (client, n, l) = (ctx.client.clone(), names.clone(), last.clone());
    let meter = ctx.meter();
    let latencies = run_ops(ctx.concurrency, total, move |worker, i| {
        let (client, names, last) = (client.clone(), n.clone(), l.clone());
        async move {
            let req = Request::new(Method::PUT, CONTAINER, Some(&names[worker]))
                .with_query("comp", "tier")
                .with_header("x-ms-access-tier", tier(i));
            client.expect(&req, StatusCode::OK).await?;
            *last[worker].lock().unwrap_or_else(|e| e.into_inner()) = Some(i);
            Ok(())
        }
    })
    .await?;
    let measured = meter.stop();
    for (worker, name) in names.iter().enumerate() {
        let Some(i) = *last[worker].lock().unwrap_or_else(|e| e.into_inner()) else {
            continue;
        };
        let req = Request::new(Method::HEAD, CONTAINER, Some(name));
        let resp = ctx.client.expect(&req, StatusCode::OK).await?;
        let reported = header(&resp, "x-ms-access-tier")?;
        ensure!(
            reported == tier(i),
            "{}: tier {reported}, last set {}",
            req.describe(),
            tier(i)
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
