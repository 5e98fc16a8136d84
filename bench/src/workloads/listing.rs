//! List Blobs over a container of 10,000 or 1,000,000 empty blobs in pages
//! of 5000, flat and with the delimiter `/`. Blob `i` is
//! `d<i/10:05>/b<i:07>`, so a flat listing returns every name in order and a
//! delimited one returns one prefix per ten blobs; both are checked name by
//! name. A listing follows its markers, so one lister runs at a time and a
//! page's latency is the server's time to produce it.
//!
//! Bounds, so that a slow server ends the run instead of holding it: over
//! 1,000,000 blobs the delimited listing reads its first [`DELIMITED_PAGES`]
//! pages only (the target compares page latencies, not whole listings), and
//! each phase stops at the first page boundary after [`PHASE_BUDGET`]; the
//! record's note says so.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use bytes::Bytes;
use reqwest::{Method, StatusCode};

use super::{Ctx, fill_once};
use crate::client::{BlobClient, Request};
use crate::stats::{Record, Tally};

const PAGE: u64 = 5000;
/// Pages a delimited listing over 1,000,000 blobs reads.
const DELIMITED_PAGES: u64 = 2;
/// Wall time one phase (flat or delimited) may take.
const PHASE_BUDGET: Duration = Duration::from_secs(300);

fn blob_name(i: u64) -> String {
    format!("d{:05}/b{i:07}", i / 10)
}

fn prefix_name(j: u64) -> String {
    format!("d{j:05}/")
}

/// Fills the container once, then times full flat and delimited listings,
/// returning a record for each (`<workload>` and `<workload>-delim`).
///
/// # Errors
///
/// A failed request, or a listing that misses, repeats or reorders a name.
pub async fn list(ctx: &Ctx, workload: &str, count: u64) -> Result<Vec<Record>> {
    let container = workload.replace('-', "");
    fill_once(ctx, &container, count, blob_name, |_| Bytes::new()).await?;
    let passes = if count <= 10_000 { ctx.count(10, 1) } else { 1 };
    let mut records = Vec::new();
    for delimited in [false, true] {
        let max_pages = (delimited && count > 10_000).then_some(DELIMITED_PAGES);
        let mut tally = Tally::default();
        let deadline = Instant::now() + PHASE_BUDGET;
        let meter = ctx.meter();
        let mut done = 0;
        for _ in 0..passes {
            let pass = Pass {
                container: &container,
                count,
                delimited,
                max_pages,
                deadline,
            };
            if !list_all(&ctx.client, &pass, &mut tally).await? {
                break;
            }
            done += 1;
        }
        let measured = meter.stop();
        tally.note = match max_pages {
            _ if done < passes => format!(
                "stopped by the {} s budget after {done} of {passes} listings; \
                 ops are pages of up to {PAGE}",
                PHASE_BUDGET.as_secs()
            ),
            Some(p) => format!("the first {p} pages of {PAGE}"),
            None => format!("{passes} full listings; ops are pages of up to {PAGE}"),
        };
        let name = if delimited {
            format!("{workload}-delim")
        } else {
            workload.to_owned()
        };
        records.push(Record::completed(&name, 1, tally, measured));
    }
    Ok(records)
}

/// What one listing reads.
struct Pass<'a> {
    container: &'a str,
    count: u64,
    delimited: bool,
    /// Stop after this many pages.
    max_pages: Option<u64>,
    /// Stop at the first page boundary after this.
    deadline: Instant,
}

/// One listing, following markers, checking every name. `Ok(false)` when it
/// stopped at the deadline before the end.
async fn list_all(client: &BlobClient, pass: &Pass<'_>, tally: &mut Tally) -> Result<bool> {
    let &Pass {
        container,
        count,
        delimited,
        max_pages,
        deadline,
    } = pass;
    let expected_total = if delimited { count / 10 } else { count };
    let mut pages = 0;
    let mut seen = 0u64;
    let mut marker: Option<String> = None;
    loop {
        let mut req = Request::new(Method::GET, container, None)
            .with_query("restype", "container")
            .with_query("comp", "list")
            .with_query("maxresults", &PAGE.to_string());
        if delimited {
            req = req.with_query("delimiter", "/");
        }
        if let Some(m) = &marker {
            req = req.with_query("marker", m);
        }
        let t = Instant::now();
        let resp = client.expect(&req, StatusCode::OK).await?;
        let xml = resp.text().await?;
        tally.latencies.push(t.elapsed());
        tally.ops += 1;
        tally.requests += 1;
        tally.bytes += xml.len() as u64;
        let page = parse_page(&xml).with_context(|| req.describe())?;
        let (names, others) = if delimited {
            (&page.prefixes, &page.blobs)
        } else {
            (&page.blobs, &page.prefixes)
        };
        ensure!(
            others.is_empty() && names.len() as u64 <= PAGE,
            "{}: {} names and {} others in one page",
            req.describe(),
            names.len(),
            others.len()
        );
        for name in names {
            let want = if delimited {
                prefix_name(seen)
            } else {
                blob_name(seen)
            };
            ensure!(
                *name == want,
                "{}: entry {seen} is {name:?}, expected {want:?}",
                req.describe()
            );
            seen += 1;
        }
        tally.items += names.len() as u64;
        pages += 1;
        marker = page.next_marker;
        if marker.is_none() {
            break;
        }
        if max_pages.is_some_and(|m| pages >= m) {
            return Ok(true);
        }
        if Instant::now() > deadline {
            return Ok(false);
        }
    }
    ensure!(
        seen == expected_total,
        "{container}: listing ended after {seen} entries, {expected_total} expected"
    );
    Ok(true)
}

/// The parts of an `EnumerationResults` page this benchmark checks.
#[derive(Debug, Default, PartialEq)]
struct Page {
    blobs: Vec<String>,
    prefixes: Vec<String>,
    next_marker: Option<String>,
}

/// Reads blob names, prefix names and the next marker out of a List Blobs
/// answer. A scan rather than an XML parser: the benchmark's names need no
/// escaping, and the load generator's own CPU should go to sending requests.
fn parse_page(xml: &str) -> Result<Page> {
    let mut page = Page::default();
    let mut rest = xml;
    while let Some(at) = rest.find("<Blob") {
        rest = &rest[at + "<Blob".len()..];
        let list = if rest.starts_with('>') {
            &mut page.blobs
        } else if rest.starts_with("Prefix>") {
            &mut page.prefixes
        } else {
            continue; // <Blobs>
        };
        let start = rest.find("<Name>").context("an entry without <Name>")? + "<Name>".len();
        let len = rest[start..]
            .find("</Name>")
            .context("an unclosed <Name>")?;
        list.push(unescape(&rest[start..start + len]));
        rest = &rest[start + len..];
    }
    if let Some(at) = xml.find("<NextMarker>") {
        let start = at + "<NextMarker>".len();
        let len = xml[start..]
            .find("</NextMarker>")
            .context("an unclosed <NextMarker>")?;
        let marker = unescape(&xml[start..start + len]);
        if !marker.is_empty() {
            page.next_marker = Some(marker);
        }
    }
    Ok(page)
}

fn unescape(s: &str) -> String {
    // Most names have no reference to resolve: one scan, one copy.
    if !s.contains('&') {
        return s.to_owned();
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_with_blobs_prefixes_and_a_marker() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><EnumerationResults ContainerName="c"><MaxResults>2</MaxResults><Delimiter>/</Delimiter><Blobs><BlobPrefix><Name>d00000/</Name></BlobPrefix><Blob><Name>top</Name><Properties><Content-Length>0</Content-Length></Properties></Blob></Blobs><NextMarker>a&amp;b</NextMarker></EnumerationResults>"#;
        assert_eq!(
            parse_page(xml).unwrap(),
            Page {
                blobs: vec!["top".into()],
                prefixes: vec!["d00000/".into()],
                next_marker: Some("a&b".into()),
            }
        );
    }

    #[test]
    fn an_empty_or_self_closed_marker_ends_the_listing() {
        let a = "<EnumerationResults><Blobs /><NextMarker /></EnumerationResults>";
        let b = "<EnumerationResults><Blobs></Blobs><NextMarker></NextMarker></EnumerationResults>";
        assert_eq!(parse_page(a).unwrap(), Page::default());
        assert_eq!(parse_page(b).unwrap(), Page::default());
    }

    #[test]
    fn names_sort_as_numbers() {
        assert!(blob_name(9) < blob_name(10));
        assert_eq!(blob_name(123_456), "d12345/b0123456");
        assert_eq!(prefix_name(7), "d00007/");
    }
}
