//! Snapshot Blob, Copy Blob and Abort Copy Blob (spec/10-operations.md
//! §B8–B10).

use std::net::SocketAddr;

use actix_web::HttpResponse;
use percent_encoding::percent_decode_str;
use stowage_blobstore::{
    BlobName, ConditionKind, ContainerName, CopyBlobInput, CopySource, SnapshotBlobInput,
    conditions,
};

use super::blob::refuse_unsupported;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;

pub(crate) async fn snapshot_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = SnapshotBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        metadata: sent_metadata(ctx)?,
        conditions,
        lease_id: h.lease_id()?,
    };
    let out = ctx.store().snapshot_blob(input).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-snapshot", out.snapshot));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// The request's metadata if any `x-ms-meta-*` was sent (Snapshot and Copy
/// keep the source's metadata otherwise).
fn sent_metadata(ctx: &RequestContext) -> Result<Option<stowage_blobstore::Metadata>, ApiError> {
    let sent = ctx
        .req
        .headers()
        .keys()
        .any(|k| k.as_str().starts_with("x-ms-meta-"));
    sent.then(|| ctx.metadata()).transpose()
}

/// The longest `x-ms-copy-source` accepted.
const MAX_COPY_SOURCE: usize = 2048;

/// Where a copy source URL points.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SourceUrl {
    pub account: String,
    pub container: String,
    pub blob: String,
    pub snapshot: Option<String>,
    /// The URL carries a shared access signature.
    pub has_sas: bool,
}

/// Why a copy source was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SourceError {
    /// Not a URL of the form `http(s)://host[:port]/account/container/blob`.
    Unparseable,
    /// A URL of another host, which Stowage does not fetch.
    OtherHost,
}

/// Parses `x-ms-copy-source` (spec/10-operations.md §B9). `local` is the
/// address the request arrived on and `host` its `Host` header: a source
/// counts as this server when its host is one of those, `localhost`,
/// `127.0.0.1` or `[::1]`, with this server's port.
pub(crate) fn parse_copy_source(
    url: &str,
    local: Option<SocketAddr>,
    host: &str,
) -> Result<SourceUrl, SourceError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or(SourceError::Unparseable)?;
    let (authority, path_and_query) =
        rest.split_at(rest.find('/').ok_or(SourceError::Unparseable)?);
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let (source_host, port) = split_host_port(authority).ok_or(SourceError::Unparseable)?;
    let local_port = local.map(|a| a.port());
    let (request_host, request_port) =
        split_host_port(host).unwrap_or((host.to_owned(), local_port.unwrap_or(80)));
    let same_host = source_host.eq_ignore_ascii_case(&request_host)
        || matches!(source_host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
        || local.is_some_and(|a| a.ip().to_string() == source_host.trim_matches(['[', ']']));
    let same_port = Some(port) == local_port || port == request_port;
    if !(same_host && same_port) {
        return Err(SourceError::OtherHost);
    }
    let mut parts = path.trim_start_matches('/').splitn(3, '/');
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| SourceError::Unparseable)
    };
    let account = decode(parts.next().unwrap_or_default())?;
    let container = decode(parts.next().ok_or(SourceError::Unparseable)?)?;
    let blob = decode(parts.next().ok_or(SourceError::Unparseable)?)?;
    if account.is_empty() || container.is_empty() || blob.is_empty() {
        return Err(SourceError::Unparseable);
    }
    let mut snapshot = None;
    let mut has_sas = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "snapshot" => snapshot = Some(decode(value)?),
            "sig" => has_sas = true,
            _ => {}
        }
    }
    Ok(SourceUrl {
        account,
        container,
        blob,
        snapshot,
        has_sas,
    })
}

/// `host:port` (default port 80), IPv6 literals in brackets.
fn split_host_port(authority: &str) -> Option<(String, u16)> {
    let (host, port) = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => {
            (&authority[..i], authority[i + 1..].parse().ok()?)
        }
        _ => (authority, 80),
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

pub(crate) async fn copy_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let header = h
        .get("x-ms-copy-source")?
        .ok_or(ApiError::MissingRequiredHeader("x-ms-copy-source"))?;
    let bad_source = || ApiError::InvalidHeaderValue {
        name: "x-ms-copy-source".into(),
        value: header.into(),
    };
    if header.len() > MAX_COPY_SOURCE {
        return Err(bad_source());
    }
    let local = ctx
        .req
        .conn_data::<crate::header_case::LocalAddr>()
        .map(|a| a.0);
    let info = ctx.req.connection_info().clone();
    let url = match parse_copy_source(header, local, info.host()) {
        Ok(u) => u,
        Err(SourceError::Unparseable) => return Err(bad_source()),
        // Stowage does not fetch from other hosts (10 §B9).
        Err(SourceError::OtherHost) => {
            return Err(stowage_blobstore::Error::CannotVerifyCopySource.into());
        }
    };
    let not_found = |_| ApiError::Store(stowage_blobstore::Error::CannotVerifyCopySource);
    let source = CopySource {
        authorized: url.account == ctx.account(),
        container: ContainerName::parse(&url.container).map_err(not_found)?,
        blob: BlobName::parse(&url.blob).map_err(not_found)?,
        account: url.account,
        snapshot: url.snapshot,
    };
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let source_conditions = h.source_conditions()?;
    conditions::validate(&source_conditions, ConditionKind::Source)?;
    let input = CopyBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        source,
        source_header: header.to_owned(),
        metadata: sent_metadata(ctx)?,
        conditions,
        source_conditions,
        lease_id: h.lease_id()?,
        access_tier: super::blob::access_tier(ctx)?,
    };
    let sync = h.flag("x-ms-requires-sync")?;
    let out = ctx.store().copy_blob(input).await?;
    let mut b = HttpResponse::Accepted();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-copy-id", out.copy_id));
    b.insert_header(("x-ms-copy-status", "success"));
    if sync && let Some(md5) = &out.content_md5 {
        b.insert_header(("content-md5", response::md5_base64(md5)));
    }
    Ok(b.finish())
}

pub(crate) async fn abort_copy_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    ctx.query
        .get("copyid")
        .ok_or(ApiError::MissingRequiredQueryParameter("copyid"))?;
    match h.get("x-ms-copy-action")? {
        None => return Err(ApiError::MissingRequiredHeader("x-ms-copy-action")),
        Some("abort") => {}
        Some(other) => {
            return Err(ApiError::InvalidHeaderValue {
                name: "x-ms-copy-action".into(),
                value: other.into(),
            });
        }
    }
    ctx.store()
        .abort_copy_blob(
            ctx.account(),
            &ctx.container()?,
            &ctx.blob()?,
            h.lease_id()?,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_source_table() {
        let local: SocketAddr = "127.0.0.1:10000".parse().unwrap();
        let ok = |a: &str, c: &str, b: &str, s: Option<&str>, sas: bool| {
            Ok(SourceUrl {
                account: a.into(),
                container: c.into(),
                blob: b.into(),
                snapshot: s.map(Into::into),
                has_sas: sas,
            })
        };
        let cases = [
            (
                "http://127.0.0.1:10000/devstoreaccount1/src/dir/a%20b.txt",
                ok("devstoreaccount1", "src", "dir/a b.txt", None, false),
            ),
            (
                "http://localhost:10000/acct/c/b?snapshot=2024-09-03T10%3A15%3A07.1234567Z",
                ok(
                    "acct",
                    "c",
                    "b",
                    Some("2024-09-03T10:15:07.1234567Z"),
                    false,
                ),
            ),
            (
                "https://[::1]:10000/acct/c/b?sv=2021&sig=abc",
                ok("acct", "c", "b", None, true),
            ),
            (
                "http://stowage:10000/acct/c/b",
                ok("acct", "c", "b", None, false),
            ),
            ("http://example.com/acct/c/b", Err(SourceError::OtherHost)),
            (
                "http://127.0.0.1:9999/acct/c/b",
                Err(SourceError::OtherHost),
            ),
            (
                "ftp://127.0.0.1:10000/acct/c/b",
                Err(SourceError::Unparseable),
            ),
            (
                "http://127.0.0.1:10000/acct/c",
                Err(SourceError::Unparseable),
            ),
            ("not a url", Err(SourceError::Unparseable)),
            (
                "http://127.0.0.1:notaport/a/c/b",
                Err(SourceError::Unparseable),
            ),
        ];
        for (url, expected) in cases {
            assert_eq!(
                parse_copy_source(url, Some(local), "stowage:10000"),
                expected,
                "{url}"
            );
        }
    }
}
