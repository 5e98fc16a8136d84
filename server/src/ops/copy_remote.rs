//! Copies from other hosts (docs/wire/copy.md): Copy Blob (asynchronous,
//! fetched in the background), Copy Blob From URL (synchronous), and the
//! source reading the From-URL writes share.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::HttpResponse;
use futures::{StreamExt, TryStreamExt};
use stowage_blobstore::conditions::{self, ConditionFailure, Current};
use stowage_blobstore::{
    ByteRange, ConditionKind, Conditions, CopiedType, CopyJob, RemoteCopyInput, Store,
};

use crate::error::ApiError;
use crate::fetch::{
    Fetcher, Opened, source_content, source_etag, source_kind, source_last_modified,
    source_metadata,
};
use crate::request::RequestContext;
use crate::response;

/// The largest source Copy Blob From URL copies (256 MiB).
const SYNC_COPY_MAX: u64 = 256 * 1024 * 1024;

/// How often a running copy records its progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The longest page list of a source read (one answer of Get Page Ranges).
const PAGE_LIST_MAX: usize = 64 * 1024 * 1024;

/// Opens a copy source on another host for the request in `ctx`: sends
/// `x-ms-copy-source-authorization` as `Authorization`, asks for `range`
/// when given, checks the source conditions against the source's ETag and
/// Last-Modified and the length against `max`. Every copy from another
/// host reads its source through here (Upload Pages From URL may too).
///
/// # Errors
/// `CannotVerifyCopySource` (the source's refusal, a redirect, no
/// length), `SourceConditionNotMet`, `RequestBodyTooLarge`.
pub(crate) async fn open_remote_source(
    ctx: &RequestContext,
    url: reqwest::Url,
    range: Option<ByteRange>,
    max: u64,
    source_conditions: &Conditions,
) -> Result<Opened, ApiError> {
    let authorization = ctx.headers().get("x-ms-copy-source-authorization")?;
    let opened = ctx.state.fetcher.open(url, range, authorization).await?;
    check_source_conditions(source_conditions, &opened.headers)?;
    if opened.length > max {
        return Err(ApiError::RequestBodyTooLarge { max });
    }
    Ok(opened)
}

/// Evaluates the source conditions against a source's answer: the ETag
/// conditions against its `ETag` (none: an ETag nothing matches), the date
/// conditions against its `Last-Modified` (none: they fail), and
/// `x-ms-source-if-tags` fails (the tags of a source elsewhere are unknown).
fn check_source_conditions(
    source_conditions: &Conditions,
    headers: &reqwest::header::HeaderMap,
) -> Result<(), ApiError> {
    let not_met = || stowage_blobstore::Error::Condition(ConditionFailure::SourceConditionNotMet);
    let dated = source_conditions.if_modified_since.is_some()
        || source_conditions.if_unmodified_since.is_some();
    let modified = source_last_modified(headers);
    if (dated && modified.is_none()) || source_conditions.if_tags.is_some() {
        return Err(not_met().into());
    }
    let etag = source_etag(headers).unwrap_or_default();
    let current = Some(Current {
        etag: &etag,
        // Read by the date conditions only, which need the header.
        last_modified: modified.unwrap_or(std::time::UNIX_EPOCH),
    });
    conditions::evaluate(source_conditions, current, ConditionKind::Source)?;
    Ok(())
}

/// Copy Blob and Copy Blob From URL (`sync`) with a source on another host
/// (the caller has refused a snapshot target and unsupported headers).
pub(crate) async fn copy_blob_from_remote(
    ctx: &RequestContext,
    header: &str,
    url: reqwest::Url,
    sync: bool,
) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let source_md5 = if sync {
        h.md5("x-ms-source-content-md5")?
    } else {
        None
    };
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let source_conditions = h.source_conditions()?;
    conditions::validate(&source_conditions, ConditionKind::Source)?;
    let metadata = super::copy::sent_metadata(ctx)?;
    let lease_id = h.lease_id()?;
    let access_tier = super::blob::access_tier(ctx)?;
    let tags = h.tags()?;
    // Sealing the destination is for the asynchronous copy only; without
    // the header an append blob keeps the source's seal, as within the
    // account.
    let seal = match sync {
        true => None,
        false => h.optional_flag("x-ms-seal-blob")?,
    };
    let (account, container, blob) = (ctx.account().to_owned(), ctx.container()?, ctx.blob()?);
    let max = if sync { SYNC_COPY_MAX } else { u64::MAX };
    let source_url = url.clone();
    let mut opened = open_remote_source(ctx, url, None, max, &source_conditions).await?;
    let input = RemoteCopyInput {
        account,
        container,
        blob,
        // Copy Blob From URL copies block blobs only; Copy Blob keeps the
        // source's type.
        kind: if sync {
            CopiedType::Block
        } else {
            seal_as_asked(source_kind(&opened.headers, opened.length), seal)
        },
        source_header: header.to_owned(),
        metadata: metadata.unwrap_or_else(|| source_metadata(&opened.headers)),
        content: source_content(&opened.headers),
        size: opened.length,
        conditions,
        lease_id,
        access_tier,
        tags,
        expected_md5: source_md5,
    };
    let store = ctx.store();
    let (out, status) = if sync {
        (
            store.copy_blob_from_stream(input, opened.body).await?,
            "success",
        )
    } else {
        // A page blob is read range by range, its empty pages left out,
        // when the source answers Get Page Ranges; else as a whole.
        let page_ranges = match input.kind {
            CopiedType::Page { .. } => {
                let auth = ctx.headers().get("x-ms-copy-source-authorization")?;
                let fetcher = &ctx.state.fetcher;
                source_page_ranges(fetcher, &source_url, auth, opened.length).await
            }
            _ => None,
        };
        if let Some(ranges) = &page_ranges {
            let auth = ctx.headers().get("x-ms-copy-source-authorization")?;
            // The whole-blob answer is dropped unread (its permit with it).
            opened.body = ranged_body(
                ctx.state.fetcher.clone(),
                source_url,
                ranges.clone(),
                auth.map(str::to_owned),
                source_etag(&opened.headers),
            );
        }
        let (out, job) = store.begin_remote_copy(input).await?;
        let token = ctx.state.fetcher.register(&job.copy_id);
        actix_web::rt::spawn(run_copy(
            store.clone(),
            ctx.state.fetcher.clone(),
            job,
            opened,
            page_ranges,
            token,
        ));
        (out, "pending")
    };
    let mut b = HttpResponse::Accepted();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-copy-id", out.copy_id));
    b.insert_header(("x-ms-copy-status", status));
    if let Some(md5) = &source_md5 {
        b.insert_header(("content-md5", response::md5_base64(md5)));
    }
    Ok(b.finish())
}

/// Fetches the bytes of an asynchronous copy into its destination,
/// recording progress, until they are all there, the fetch fails, or the
/// copy is aborted (`cancel`, or the destination stops being this copy).
/// A stop ends the body early, so the write fails and removes its partial
/// extent at once.
async fn run_copy(
    store: Store,
    fetcher: Arc<Fetcher>,
    job: CopyJob,
    opened: Opened,
    page_ranges: Option<Vec<Range<u64>>>,
    cancel: tokio_util::sync::CancellationToken,
) {
    let copied = Arc::new(AtomicU64::new(0));
    let counter = copied.clone();
    let body = opened
        .body
        .take_until(Box::pin(cancel.clone().cancelled_owned()))
        .inspect_ok(move |chunk| {
            counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        });
    let source_md5 = source_content_md5(&opened.headers);
    let fetched = page_ranges
        .as_ref()
        .map_or(job.size, |r| r.iter().map(|r| r.end - r.start).sum());
    let mut write = Box::pin(async {
        let bytes = store.write_copied_bytes(body, fetched, source_md5).await?;
        match page_ranges {
            Some(ranges) => bytes.at_page_ranges(ranges),
            None => Ok(bytes),
        }
    });
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let written = loop {
        tokio::select! {
            written = &mut write => break written,
            _ = tick.tick(), if !cancel.is_cancelled() => {
                let now = copied.load(Ordering::Relaxed);
                if let Ok(false) = store.record_copy_progress(&job, now).await {
                    cancel.cancel();
                }
            }
        }
    };
    fetcher.forget(&job.copy_id);
    let ended = match written {
        // Aborted or written over: the store already shows the outcome.
        _ if cancel.is_cancelled() => Ok(()),
        Ok(bytes) => store.complete_remote_copy(&job, bytes).await.map(|_| ()),
        Err(e) => {
            let description = failure_description(&e, copied.load(Ordering::Relaxed), job.size);
            store.fail_remote_copy(&job, description).await
        }
    };
    if let Err(e) = ended {
        tracing::error!(copy_id = %job.copy_id, "ending a copy failed: {e}");
    }
}

/// The page ranges of a page blob source on another host, read with Get
/// Page Ranges (`comp=pagelist` on the source's URL, its SAS kept,
/// following `NextMarker`); `None` when the source does not answer a page
/// list that fits a blob of `length` bytes (the copy then reads the whole
/// blob).
async fn source_page_ranges(
    fetcher: &Fetcher,
    url: &reqwest::Url,
    authorization: Option<&str>,
    length: u64,
) -> Option<Vec<Range<u64>>> {
    let list = source_page_list(fetcher, url, authorization, None).await?;
    sparse_ranges(list.pages, length)
}

/// Get Page Ranges of the source at `url` (its diff since `prev_snapshot`
/// when given), all its pages of answers read.
async fn source_page_list(
    fetcher: &Fetcher,
    url: &reqwest::Url,
    authorization: Option<&str>,
    prev_snapshot: Option<&str>,
) -> Option<crate::xml::SourcePageList> {
    let mut all = crate::xml::SourcePageList::default();
    let mut marker: Option<String> = None;
    loop {
        let mut list_url = url.clone();
        {
            let mut query = list_url.query_pairs_mut();
            query.append_pair("comp", "pagelist");
            if let Some(p) = prev_snapshot {
                query.append_pair("prevsnapshot", p);
            }
            if let Some(m) = &marker {
                query.append_pair("marker", m);
            }
        }
        let body = fetcher
            .get_document(list_url, authorization, PAGE_LIST_MAX)
            .await?;
        let list = crate::xml::parse_page_list(&body)?;
        all.pages.extend(list.pages);
        all.clears.extend(list.clears);
        match list.next_marker {
            Some(m) if marker.as_deref() != Some(m.as_str()) => marker = Some(m),
            // The same marker again would never end.
            Some(_) => return None,
            None => return Some(all),
        }
    }
}

/// Incremental Copy Blob with a source on another host: a snapshot of a
/// page blob there, read through its URL (its SAS, or
/// `x-ms-copy-source-authorization`). The first copy fetches every page
/// range of the snapshot; a later one asks the source for the diff since
/// the snapshot the last copy took (`prevsnapshot`) and fetches only the
/// ranges changed, the cleared ones cleared. Completes before the answer,
/// as incremental copies from this server do (docs/wire/pages.md).
pub(crate) async fn incremental_copy_from_remote(
    ctx: &RequestContext,
    header: &str,
    url: reqwest::Url,
) -> Result<HttpResponse, ApiError> {
    use stowage_blobstore::Error as E;
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let lease_id = h.lease_id()?;
    let authorization = h.get("x-ms-copy-source-authorization")?;
    let (account, container, blob) = (ctx.account().to_owned(), ctx.container()?, ctx.blob()?);
    let snapshot = url
        .query_pairs()
        .find(|(k, _)| k == "snapshot")
        .map(|(_, v)| v.into_owned());
    let Some(source_snapshot) = snapshot else {
        return Err(E::IncrementalCopySourceMustBeSnapshot.into());
    };
    let fetcher = &ctx.state.fetcher;
    // The whole answer's headers say what the snapshot is; its body is
    // dropped unread.
    let opened = fetcher.open(url.clone(), None, authorization).await?;
    let (headers, length) = (opened.headers, opened.length);
    drop(opened.body);
    let CopiedType::Page { sequence_number } = source_kind(&headers, length) else {
        return Err(E::InvalidSourceBlobType.into());
    };
    let mut identity = url.clone();
    identity.set_query(None);
    identity.set_fragment(None);
    let identity = identity.to_string();
    let store = ctx.store();
    let state = store
        .incremental_copy_state(&account, &container, &blob, &identity)
        .await?;
    // The changes since the last copy when the source answers them, else
    // everything.
    let mut since = None;
    let mut plan = None;
    if let Some(state) = &state
        && let Some(diff) =
            source_page_list(fetcher, &url, authorization, Some(&state.source_snapshot)).await
        && let (Some(pages), Some(clears)) = (
            sparse_ranges(diff.pages, length),
            sparse_ranges(diff.clears, length),
        )
    {
        since = Some(state.destination_snapshot.clone());
        plan = Some((pages, clears));
    }
    let (pages, cleared) = match plan {
        Some(p) => p,
        None => {
            let pages = source_page_ranges(fetcher, &url, authorization, length)
                .await
                .unwrap_or_else(|| {
                    std::iter::once(0..length)
                        .filter(|r| !r.is_empty())
                        .collect()
                });
            (pages, Vec::new())
        }
    };
    let fetched = pages.iter().map(|r| r.end - r.start).sum();
    let body = ranged_body(
        fetcher.clone(),
        url,
        pages.clone(),
        authorization.map(str::to_owned),
        source_etag(&headers),
    );
    let bytes = store
        .write_copied_bytes(body, fetched, None)
        .await
        .map_err(|e| match e {
            // The source failed in the middle: as a source that refuses.
            E::Body(_) | E::BodyLengthMismatch { .. } => ApiError::Store(E::CannotVerifyCopySource),
            other => ApiError::Store(other),
        })?
        .at_page_ranges(pages)?;
    let input = stowage_blobstore::RemoteIncrementalCopyInput {
        account,
        container,
        blob,
        source: identity,
        source_snapshot,
        source_header: header.to_owned(),
        size: length,
        sequence_number,
        content: source_content(&headers),
        metadata: source_metadata(&headers),
        since,
        cleared,
        conditions,
        lease_id,
    };
    let out = store.incremental_copy_from_remote(input, bytes).await?;
    let mut b = HttpResponse::Accepted();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-copy-id", out.copy_id));
    b.insert_header(("x-ms-copy-status", "success"));
    Ok(b.finish())
}

/// The ranges of a page list as a copy reads them: in order, whole pages,
/// within `length`, adjacent ones joined; `None` when they are not so.
fn sparse_ranges(ranges: Vec<Range<u64>>, length: u64) -> Option<Vec<Range<u64>>> {
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        let whole = r.start % 512 == 0 && r.end % 512 == 0 && r.start < r.end;
        if !whole || r.end > length || out.last().is_some_and(|l| r.start < l.end) {
            return None;
        }
        match out.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ => out.push(r),
        }
    }
    Some(out)
}

/// The bytes of `ranges` of the source at `url`, one ranged GET after the
/// other (each asking for the version the first answer had, `If-Match`),
/// as one body. A read the source refuses, or answers with another
/// length, ends the body with an error.
fn ranged_body(
    fetcher: Arc<Fetcher>,
    url: reqwest::Url,
    ranges: Vec<Range<u64>>,
    authorization: Option<String>,
    etag: Option<String>,
) -> futures::stream::BoxStream<'static, std::io::Result<bytes::Bytes>> {
    futures::stream::iter(ranges)
        .then(move |r| {
            let (fetcher, url) = (fetcher.clone(), url.clone());
            let (auth, etag) = (authorization.clone(), etag.clone());
            async move {
                let range = ByteRange {
                    start: r.start,
                    end: Some(r.end - 1),
                };
                let refused = |why: String| {
                    std::io::Error::other(format!(
                        "the read of bytes {}-{} {why}",
                        r.start,
                        r.end - 1
                    ))
                };
                let opened = fetcher
                    .open_if_match(url, Some(range), auth.as_deref(), etag.as_deref())
                    .await
                    .map_err(|e| match e {
                        ApiError::CopySourceAnswered { source_status, .. } => {
                            refused(format!("was answered {source_status}"))
                        }
                        _ => refused("failed".to_owned()),
                    })?;
                if opened.length != r.end - r.start {
                    return Err(refused(format!("was answered {} bytes", opened.length)));
                }
                Ok(opened.body)
            }
        })
        .try_flatten()
        .boxed()
}

/// The `Content-MD5` of a source's whole answer, which the destination of
/// an asynchronous copy takes as it is; `None` when absent or not an MD5.
fn source_content_md5(headers: &reqwest::header::HeaderMap) -> Option<[u8; 16]> {
    use base64::Engine as _;
    let value = headers.get("content-md5")?.to_str().ok()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value)
        .ok()?;
    bytes.try_into().ok()
}

/// `x-ms-copy-status-description` of a copy whose fetch failed.
fn failure_description(e: &stowage_blobstore::Error, copied: u64, total: u64) -> String {
    use stowage_blobstore::Error as E;
    let why = match e {
        E::BodyLengthMismatch { received, .. } if *received < total => {
            format!("The copy source's answer ended after {received} of {total} bytes.")
        }
        E::BodyLengthMismatch { received, .. } => {
            format!(
                "The copy source's answer was longer than it said ({received} of {total} bytes)."
            )
        }
        E::Body(io) => format!(
            "Reading the copy source failed after {} of {total} bytes: {io}",
            copied.min(total)
        ),
        other => format!("Writing the copy failed: {other}"),
    };
    format!("500 InternalError \"{why}\"")
}

/// An append blob's seal as `x-ms-seal-blob` asks (`None`: the source's).
fn seal_as_asked(kind: CopiedType, seal: Option<bool>) -> CopiedType {
    match (kind, seal) {
        (
            CopiedType::Append {
                committed_block_count,
                ..
            },
            Some(sealed),
        ) => CopiedType::Append {
            committed_block_count,
            sealed,
        },
        (kind, _) => kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stowage_blobstore::conditions::EtagMatch;

    #[test]
    fn source_conditions_against_the_sources_answer() {
        let date = |s: &str| httpdate::parse_http_date(s).unwrap();
        let modified = "Fri, 27 Nov 2026 10:00:00 GMT";
        let full = |h: &mut reqwest::header::HeaderMap| {
            h.insert("etag", "\"v1\"".parse().unwrap());
            h.insert("last-modified", modified.parse().unwrap());
        };
        let mut with_both = reqwest::header::HeaderMap::new();
        full(&mut with_both);
        let mut etag_only = reqwest::header::HeaderMap::new();
        etag_only.insert("etag", "\"v1\"".parse().unwrap());
        let none = reqwest::header::HeaderMap::new();
        let if_match = |e: &str| Conditions {
            if_match: Some(EtagMatch::List(vec![e.to_owned()])),
            ..Conditions::default()
        };
        let unmodified_since = |d: &str| Conditions {
            if_unmodified_since: Some(date(d)),
            ..Conditions::default()
        };
        // (conditions, answer's headers, holds)
        let cases = [
            (Conditions::default(), &none, true),
            (if_match("v1"), &with_both, true),
            (if_match("v1"), &etag_only, true),
            (if_match("v2"), &with_both, false),
            (if_match("v1"), &none, false),
            (unmodified_since(modified), &with_both, true),
            (
                unmodified_since("Fri, 27 Nov 2026 09:00:00 GMT"),
                &with_both,
                false,
            ),
            (unmodified_since(modified), &etag_only, false),
        ];
        for (i, (c, headers, holds)) in cases.into_iter().enumerate() {
            let got = check_source_conditions(&c, headers);
            assert_eq!(got.is_ok(), holds, "case {i}: {got:?}");
        }
    }

    #[test]
    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    fn page_lists_become_the_ranges_a_copy_reads() {
        let ranges = |pairs: &[(u64, u64)]| pairs.iter().map(|&(s, e)| s..e).collect::<Vec<_>>();
        // (page list, blob length, ranges read: None when not usable)
        let cases: [(&[(u64, u64)], u64, Option<&[(u64, u64)]>); 8] = [
            (&[], 4096, Some(&[])),
            (
                &[(0, 512), (1024, 2048)],
                4096,
                Some(&[(0, 512), (1024, 2048)]),
            ),
            // Adjacent ranges are one read.
            (
                &[(0, 512), (512, 1024), (2048, 4096)],
                4096,
                Some(&[(0, 1024), (2048, 4096)]),
            ),
            (&[(1024, 2048), (0, 512)], 4096, None),
            (&[(0, 1024), (512, 1536)], 4096, None),
            (&[(0, 100)], 4096, None),
            (&[(0, 8192)], 4096, None),
            (&[(512, 512)], 4096, None),
        ];
        for (list, length, want) in cases {
            assert_eq!(
                sparse_ranges(ranges(list), length),
                want.map(ranges),
                "{list:?}"
            );
        }
    }

    #[test]
    fn the_sources_content_md5_is_taken_when_it_is_one() {
        let with = |v: &str| {
            let mut h = reqwest::header::HeaderMap::new();
            h.insert("content-md5", v.parse().unwrap());
            h
        };
        // (headers, taken)
        let cases = [
            (with("XrY7u+Ae7tCTyyK7j1rNww=="), true),
            (with("not base64!"), false),
            (with("AAAA"), false),
            (reqwest::header::HeaderMap::new(), false),
        ];
        for (headers, taken) in cases {
            assert_eq!(source_content_md5(&headers).is_some(), taken, "{headers:?}");
        }
        assert_eq!(
            source_content_md5(&with("XrY7u+Ae7tCTyyK7j1rNww==")),
            // MD5 of "hello world".
            Some([
                94, 182, 59, 187, 224, 30, 238, 208, 147, 203, 34, 187, 143, 90, 205, 195
            ])
        );
    }

    #[test]
    fn failure_descriptions_say_how_far_the_copy_came() {
        let short = stowage_blobstore::Error::BodyLengthMismatch {
            declared: 100,
            received: 10,
        };
        assert_eq!(
            failure_description(&short, 10, 100),
            "500 InternalError \"The copy source's answer ended after 10 of 100 bytes.\""
        );
        let io = stowage_blobstore::Error::Body(std::io::Error::other("reset"));
        let d = failure_description(&io, 40, 100);
        assert!(d.starts_with("500 InternalError \""), "{d}");
        assert!(d.contains("after 40 of 100 bytes"), "{d}");
    }
}
