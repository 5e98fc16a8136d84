//! Blob Batch: several Delete Blob or Set Blob Tier calls in one
//! `multipart/mixed` request.
//! Each sub-request goes through the same authentication and authorization
//! as a top-level request, on its own credentials (Shared Key, signed with
//! the batch's version when it has no `x-ms-version`, or a SAS in its URL).
//! object_store's Azure backend deletes through it, even for one object.
//!
//! A batch without a Content-Type is refused as a whole with `400
//! MissingRequiredHeader`. A batch that cannot be run as a whole for any
//! other reason (no boundary or several, a malformed body, more than 256
//! parts, operations mixed) is answered as the service answers it: `202
//! Accepted` with a single part carrying the error, no part run.

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use actix_web::{HttpResponse, web};
use percent_encoding::percent_decode_str;
use stowage_blobstore::{BlobName, ContainerName, SetTierOutcome};

use super::Operation;
use super::batch_body::{self, BatchBodyError, SubRequest, SubResponse};
use crate::auth::shared_key::RequestView;
use crate::auth::{self, AuthScope};
use crate::error::ApiError;
use crate::headers::Headers;
use crate::request::RequestContext;
use crate::target::{Query, Target};

/// The largest batch body accepted (256 sub-requests of a few KiB each).
const MAX_BATCH_BODY: usize = 4 * 1024 * 1024;

pub(crate) async fn blob_batch(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    h.content_length()?;
    let content_type = h
        .get("content-type")?
        .filter(|v| !v.trim().is_empty())
        .ok_or(ApiError::MissingRequiredHeader("Content-Type"))?;
    let bytes = super::service::collect_body(body, MAX_BATCH_BODY).await?;
    let responses = match sub_requests(content_type, &bytes) {
        Ok(subs) => {
            let mut responses = Vec::with_capacity(subs.len());
            for sub in subs {
                let content_id = sub.content_id.clone();
                responses.push(answer(ctx, content_id, execute(ctx, &sub).await));
            }
            responses
        }
        Err(e) => vec![answer(ctx, None, Err(e))],
    };
    let boundary = format!("batchresponse_{}", uuid::Uuid::new_v4());
    Ok(HttpResponse::Accepted()
        .content_type(format!("multipart/mixed; boundary={boundary}"))
        .body(batch_body::render_batch(&boundary, &responses)))
}

/// The sub-requests of a batch, or the error that refuses it as a whole.
fn sub_requests(content_type: &str, body: &[u8]) -> Result<Vec<SubRequest>, ApiError> {
    let boundary =
        batch_body::boundary(content_type).ok_or_else(|| ApiError::InvalidHeaderValue {
            name: "Content-Type".into(),
            value: content_type.into(),
        })?;
    let subs = batch_body::parse_batch(body, boundary).map_err(|e| match e {
        BatchBodyError::Malformed => ApiError::InvalidInput,
        BatchBodyError::TooMany => ApiError::ExceedsMaxBatchRequestCount,
    })?;
    // A batch is of one operation: Delete Blob or Set Blob Tier.
    let mut kinds = subs.iter().filter_map(|s| kind(s).ok());
    if let Some(first) = kinds.next()
        && kinds.any(|k| k != first)
    {
        return Err(ApiError::AllBatchSubRequestsShouldBeSameApi);
    }
    Ok(subs)
}

/// The operations a batch may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    DeleteBlob,
    SetBlobTier,
}

/// What a sub-request that succeeded did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Done {
    /// Whether the deletion was permanent (soft delete off).
    Deleted(bool),
    Tiered(SetTierOutcome),
}

/// The operation a sub-request asks for, or an error for anything a batch
/// cannot carry.
fn kind(sub: &SubRequest) -> Result<Kind, ApiError> {
    let raw_query = sub.target.split_once('?').map_or("", |(_, q)| q);
    let query = Query::parse(raw_query)?;
    match (sub.method.as_str(), query.get("comp")) {
        ("DELETE", None) => Ok(Kind::DeleteBlob),
        ("PUT", Some("tier")) => Ok(Kind::SetBlobTier),
        _ => Err(ApiError::InvalidInput),
    }
}

/// Renders the answer of one sub-request (or of the whole batch when
/// `content_id` is `None` and it failed).
fn answer(
    ctx: &RequestContext,
    content_id: Option<String>,
    result: Result<Done, ApiError>,
) -> SubResponse {
    let request_id = uuid::Uuid::new_v4().to_string();
    let mut headers = vec![
        ("x-ms-request-id", request_id.clone()),
        ("x-ms-version", ctx.version.clone()),
    ];
    match result {
        Ok(done) => {
            let (status, reason) = match done {
                Done::Deleted(permanent) => {
                    headers.push(("x-ms-delete-type-permanent", permanent.to_string()));
                    (202, "Accepted")
                }
                Done::Tiered(outcome) => super::tiers::status(outcome),
            };
            SubResponse {
                content_id,
                status,
                reason: reason.into(),
                headers,
                body: None,
            }
        }
        Err(e) => {
            let a = e.answer();
            headers.push(("x-ms-error-code", a.code.to_owned()));
            let time = stowage_blobstore::iso8601_7(ctx.state.clock.now());
            SubResponse {
                content_id,
                status: a.status.as_u16(),
                reason: a.message.clone(),
                headers,
                body: Some(crate::xml::error_body(
                    a.code,
                    &a.message,
                    &request_id,
                    &time,
                    &a.details,
                )),
            }
        }
    }
}

/// Authenticates, authorizes and runs one sub-request.
async fn execute(ctx: &RequestContext, sub: &SubRequest) -> Result<Done, ApiError> {
    let (raw_path, raw_query) = sub.target.split_once('?').unwrap_or((&sub.target, ""));
    let view = RequestView {
        method: &sub.method,
        raw_path,
        raw_query,
        headers: &sub.headers,
    };
    let credentials = auth::authenticate_view(&view, &ctx.version, ctx.account(), &ctx.state)?;
    let (container, blob) = sub_target(raw_path, ctx.account())?;
    if let Some(scope) = &ctx.target.container {
        // A container-scoped batch may only touch that container.
        if *scope != container {
            return Err(ApiError::InvalidInput);
        }
    }
    let kind = kind(sub)?;
    let op = match kind {
        Kind::DeleteBlob => Operation::DeleteBlob,
        Kind::SetBlobTier => Operation::SetBlobTier,
    };
    let query = Query::parse(raw_query)?;
    let target = Target {
        account: ctx.account().to_owned(),
        container: Some(container),
        blob: Some(blob),
        secondary: ctx.target.secondary,
        host_style: ctx.target.host_style,
    };
    let scope = AuthScope {
        state: &ctx.state,
        target: &target,
        query: &query,
        lease_break: false,
        client_ip: ctx.client_ip(),
        https: ctx.is_https(),
    };
    auth::authorize_scope(op, &scope, credentials).await?;
    let container = ContainerName::parse(target.container.as_deref().unwrap_or_default())
        .map_err(stowage_blobstore::Error::Name)?;
    let blob = BlobName::parse(target.blob.as_deref().unwrap_or_default())
        .map_err(stowage_blobstore::Error::Name)?;
    let map = header_map(&sub.headers);
    let snapshot = query.get("snapshot").map(str::to_owned);
    let version_id = query.get("versionid").map(str::to_owned);
    match kind {
        Kind::DeleteBlob => {
            let mut input =
                super::blob::delete_input(ctx.account(), container, blob, snapshot, Headers(&map))?;
            input.version_id = version_id;
            Ok(Done::Deleted(ctx.store().delete_blob(input).await?))
        }
        Kind::SetBlobTier => {
            let mut input = super::tiers::set_blob_tier_input(
                ctx.account(),
                container,
                blob,
                snapshot,
                Headers(&map),
            )?;
            input.version_id = version_id;
            Ok(Done::Tiered(ctx.store().set_blob_tier(input).await?))
        }
    }
}

/// Container and blob of a sub-request path: `/<container>/<blob>` as the
/// service has them, or path-style `/<account>/<container>/<blob>` as
/// clients address an emulator.
fn sub_target(raw_path: &str, account: &str) -> Result<(String, String), ApiError> {
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| ApiError::InvalidUri)
    };
    let path = raw_path.strip_prefix('/').ok_or(ApiError::InvalidUri)?;
    let path = match path.split_once('/') {
        Some((first, rest)) if first == account && rest.contains('/') => rest,
        _ => path,
    };
    let (container, blob) = path.split_once('/').ok_or(ApiError::InvalidUri)?;
    if blob.is_empty() {
        return Err(ApiError::InvalidUri);
    }
    Ok((decode(container)?, decode(blob)?))
}

fn header_map(headers: &[(String, String)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (n, v) in headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            map.append(n, v);
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_batch_refusals() {
        let part = |request_line: &str| {
            format!("--b\r\nContent-Type: application/http\r\n\r\n{request_line}\r\n\r\n\r\n")
        };
        let body = |lines: &[&str]| {
            let mut out: String = lines.iter().map(|l| part(l)).collect();
            out.push_str("--b--\r\n");
            out
        };
        let delete = "DELETE /c/a HTTP/1.1";
        let tier = "PUT /c/a?comp=tier HTTP/1.1";
        let get = "GET /c/a HTTP/1.1";
        let ok = "multipart/mixed; boundary=b";
        let cases: &[(&str, String, Result<usize, &str>)] = &[
            (ok, body(&[delete, delete]), Ok(2)),
            (ok, body(&[tier, tier]), Ok(2)),
            // A part a batch cannot carry fails alone.
            (ok, body(&[get, delete]), Ok(2)),
            (
                ok,
                body(&[delete, tier]),
                Err("AllBatchSubRequestsShouldBeSameApi"),
            ),
            (
                ok,
                body(&[tier, get, delete]),
                Err("AllBatchSubRequestsShouldBeSameApi"),
            ),
            (ok, "garbage".into(), Err("InvalidInput")),
            (ok, body(&[delete; 257]), Err("ExceedsMaxBatchRequestCount")),
            (
                "multipart/mixed",
                body(&[delete]),
                Err("InvalidHeaderValue"),
            ),
            (
                "text/plain; boundary=b",
                body(&[delete]),
                Err("InvalidHeaderValue"),
            ),
            (
                "multipart/mixed; boundary=b; boundary=c",
                body(&[delete]),
                Err("InvalidHeaderValue"),
            ),
        ];
        for (content_type, body, expected) in cases {
            let got = sub_requests(content_type, body.as_bytes())
                .map(|subs| subs.len())
                .map_err(|e| e.answer().code);
            assert_eq!(got, *expected, "{content_type:?} {body:?}");
        }
    }

    #[test]
    fn sub_target_table() {
        let t = |p: &str| sub_target(p, "devstoreaccount1").map_err(|_| ());
        let ok = |c: &str, b: &str| Ok((c.to_owned(), b.to_owned()));
        assert_eq!(t("/testcontainer/a"), ok("testcontainer", "a"));
        assert_eq!(
            t("/devstoreaccount1/testcontainer/a%20b"),
            ok("testcontainer", "a b")
        );
        assert_eq!(t("/c/dir/x.txt"), ok("c", "dir/x.txt"));
        assert_eq!(t("/devstoreaccount1/x"), ok("devstoreaccount1", "x"));
        assert_eq!(t("/c"), Err(()));
        assert_eq!(t("/c/"), Err(()));
        assert_eq!(t("c/a"), Err(()));
    }
}
