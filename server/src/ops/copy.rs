//! Snapshot Blob, Copy Blob and Abort Copy Blob (docs/wire/blobs.md).

use std::net::SocketAddr;

use actix_web::HttpResponse;
use percent_encoding::percent_decode_str;
use stowage_blobstore::{
    BlobName, ConditionKind, ContainerName, CopyBlobInput, CopySource, RehydratePriority,
    SnapshotBlobInput, SourceAccess, conditions,
};

use super::blob::refuse_unsupported;
use crate::auth::SasResource;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;
use crate::target::{SECONDARY_SUFFIX, host_account};

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
    response::version_id(&mut b, out.version_id.as_deref());
    b.insert_header(("x-ms-snapshot", out.snapshot));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// The request's metadata if any `x-ms-meta-*` was sent (Snapshot and Copy
/// keep the source's metadata otherwise).
pub(crate) fn sent_metadata(
    ctx: &RequestContext,
) -> Result<Option<stowage_blobstore::Metadata>, ApiError> {
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
    /// `versionid=`: a version of the source.
    pub version_id: Option<String>,
    /// The raw query, where a shared access signature may be.
    pub query: String,
    /// The URL is `https`.
    pub https: bool,
}

/// Why a copy source was refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SourceError {
    /// Not a URL of the form `http(s)://host[:port]/account/container/blob`.
    Unparseable,
    /// A URL of another host, which Stowage does not fetch.
    OtherHost,
}

/// What says whether a copy source URL names this server.
pub(crate) struct ThisServer<'a> {
    /// The address the request arrived on.
    pub local: Option<SocketAddr>,
    /// The request's `Host`.
    pub host: &'a str,
    /// Whether a name is a configured account.
    pub is_account: &'a dyn Fn(&str) -> bool,
    /// Product-style URLs are served (no `--disableProductStyleUrl`).
    pub product_style: bool,
}

/// Parses `x-ms-copy-source` (docs/wire/blobs.md#copy-blob). A source is this
/// server when its host is the request's `Host`, the address the request
/// arrived on, `localhost`, `127.0.0.1` or `[::1]`, with this server's port
/// (the account then comes first in the path); or when its host names a
/// configured account: `<account>.blob.core.windows.net` on any port (what
/// tools that build the service's URL from an account name send), or any
/// product-style host `<account>.<...>` with this server's port.
pub(crate) fn parse_copy_source(url: &str, server: &ThisServer) -> Result<SourceUrl, SourceError> {
    let (https, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
        (Some(rest), _) => (false, rest),
        (_, Some(rest)) => (true, rest),
        _ => return Err(SourceError::Unparseable),
    };
    let (authority, path_and_query) =
        rest.split_at(rest.find('/').ok_or(SourceError::Unparseable)?);
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let (source_host, port) = split_host_port(authority).ok_or(SourceError::Unparseable)?;
    let local_port = server.local.map(|a| a.port());
    let (request_host, request_port) =
        split_host_port(server.host).unwrap_or((server.host.to_owned(), local_port.unwrap_or(80)));
    let same_port = Some(port) == local_port || port == request_port;
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| SourceError::Unparseable)
    };
    let named = host_account(authority, server.is_account).filter(|_| {
        source_host.ends_with(".blob.core.windows.net") || (server.product_style && same_port)
    });
    let path = path.trim_start_matches('/');
    let (account, rest) = match named {
        Some(label) => {
            let account = label.strip_suffix(SECONDARY_SUFFIX).unwrap_or(&label);
            (account.to_owned(), path)
        }
        None => {
            let same_host = source_host.eq_ignore_ascii_case(&request_host)
                || matches!(source_host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
                || server
                    .local
                    .is_some_and(|a| a.ip().to_string() == source_host.trim_matches(['[', ']']));
            if !(same_host && same_port) {
                return Err(SourceError::OtherHost);
            }
            let (account, rest) = path.split_once('/').unwrap_or((path, ""));
            let account = decode(account)?;
            match account.strip_suffix(SECONDARY_SUFFIX) {
                Some(primary) if !primary.is_empty() => (primary.to_owned(), rest),
                _ => (account, rest),
            }
        }
    };
    let (container, blob) = rest.split_once('/').ok_or(SourceError::Unparseable)?;
    let (container, blob) = (decode(container)?, decode(blob)?.replace('\\', "/"));
    if account.is_empty() || container.is_empty() || blob.is_empty() {
        return Err(SourceError::Unparseable);
    }
    let (mut snapshot, mut version_id) = (None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "snapshot" => snapshot = Some(decode(value)?),
            "versionid" => version_id = Some(decode(value)?),
            _ => {}
        }
    }
    Ok(SourceUrl {
        account,
        container,
        blob,
        snapshot,
        version_id,
        query: query.to_owned(),
        https,
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

/// The copy source refused with the source's own answer.
pub(crate) fn source_refused(status: u16, code: &'static str) -> ApiError {
    ApiError::CannotVerifyCopySource { status, code }
}

/// How the request may read `url`: a shared access signature in the URL is
/// checked as the source's own service would check a read with it; without
/// one, the asynchronous Copy Blob reads its own account's blobs with the
/// request's credentials, while Copy Blob From URL (`sync`), like a source
/// in another account, needs a container that allows anonymous reads.
pub(crate) async fn source_access(
    ctx: &RequestContext,
    url: &SourceUrl,
    sync: bool,
) -> Result<SourceAccess, ApiError> {
    if let Some(token) = crate::auth::sas::parse_sas(&url.query) {
        let token = token.map_err(|_| source_refused(403, "AuthenticationFailed"))?;
        let resource = SasResource {
            account: &url.account,
            container: Some(&url.container),
            blob: Some(&url.blob),
            snapshot: url.snapshot.as_deref(),
            https: url.https,
        };
        crate::auth::authorize_copy_source(ctx, &token, &resource)
            .await
            .map_err(|e| match e {
                ApiError::AuthorizationPermissionMismatch => {
                    source_refused(403, "AuthorizationPermissionMismatch")
                }
                ApiError::AuthorizationResourceTypeMismatch => {
                    source_refused(403, "AuthorizationResourceTypeMismatch")
                }
                ApiError::AuthorizationSourceIpMismatch(_) => {
                    source_refused(403, "AuthorizationSourceIPMismatch")
                }
                ApiError::AuthorizationProtocolMismatch => {
                    source_refused(403, "AuthorizationProtocolMismatch")
                }
                ApiError::AuthorizationServiceMismatch => {
                    source_refused(403, "AuthorizationServiceMismatch")
                }
                _ => source_refused(403, "AuthenticationFailed"),
            })?;
        return Ok(SourceAccess::Granted);
    }
    if url.account == ctx.account() && !sync {
        return Ok(SourceAccess::Account);
    }
    if sync {
        // The source answers an anonymous read of a private container
        // with 401; a missing container is the store's 404.
        let public = match ContainerName::parse(&url.container) {
            Ok(name) => ctx
                .store()
                .get_container_properties(&url.account, &name, None)
                .await
                .map(|p| p.public_access.is_some())
                .unwrap_or(true),
            Err(_) => true,
        };
        if !public {
            return Err(source_refused(401, "NoAuthenticationInformation"));
        }
    }
    Ok(SourceAccess::Public)
}

/// Where `x-ms-copy-source` points.
pub(crate) enum CopySourceUrl {
    /// A blob of this server, read in-process.
    Local(SourceUrl),
    /// Anything on another host, read by the fetcher.
    Remote(reqwest::Url),
}

/// `x-ms-copy-source`, required, parsed: a URL of this server's data, a
/// URL on another host, or the error the request is answered with.
pub(crate) fn copy_source_url(ctx: &RequestContext) -> Result<(&str, CopySourceUrl), ApiError> {
    let header = ctx
        .headers()
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
    let accounts = &ctx.state.accounts;
    let server = ThisServer {
        local,
        host: info.host(),
        is_account: &|a: &str| accounts.get(a).is_some(),
        product_style: ctx.state.product_style_urls,
    };
    match parse_copy_source(header, &server) {
        Ok(url) => Ok((header, CopySourceUrl::Local(url))),
        Err(SourceError::Unparseable) => Err(bad_source()),
        Err(SourceError::OtherHost) => crate::fetch::fetchable_url(header)
            .map(|url| (header, CopySourceUrl::Remote(url)))
            .map_err(|_| bad_source()),
    }
}

pub(crate) async fn copy_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let sync = h.flag("x-ms-requires-sync")?;
    let (header, url) = match copy_source_url(ctx)? {
        (header, CopySourceUrl::Local(url)) => (header, url),
        (header, CopySourceUrl::Remote(url)) => {
            return super::copy_remote::copy_blob_from_remote(ctx, header, url, sync).await;
        }
    };
    let source_md5 = if sync {
        h.md5("x-ms-source-content-md5")?
    } else {
        None
    };
    let access = source_access(ctx, &url, sync).await?;
    let not_found = |_| ApiError::Store(stowage_blobstore::Error::CannotVerifyCopySource);
    let other_account = url.account != ctx.account();
    let source = CopySource {
        access,
        container: ContainerName::parse(&url.container).map_err(not_found)?,
        blob: BlobName::parse(&url.blob).map_err(not_found)?,
        account: url.account,
        snapshot: url.snapshot,
        version_id: url.version_id,
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
        expected_md5: source_md5,
        // Sealing the destination is for the asynchronous copy only;
        // without the header the copy keeps the source's seal.
        seal: match sync {
            true => Some(false),
            false => h.optional_flag("x-ms-seal-blob")?,
        },
        rehydrate: match sync {
            true => None,
            false => Some(
                h.parse("x-ms-rehydrate-priority", RehydratePriority::parse)?
                    .unwrap_or(RehydratePriority::Standard),
            ),
        },
        tags: ctx.headers().tags()?,
    };
    let out = match ctx.store().copy_blob(input).await {
        // Another account's archived blob refuses the read the copy makes
        // of it, and that refusal comes back wrapped, as for any other
        // source read (docs/wire/copy.md).
        Err(stowage_blobstore::Error::BlobArchived) if other_account => {
            return Err(source_refused(409, "BlobArchived"));
        }
        out => out?,
    };
    let mut b = HttpResponse::Accepted();
    response::version(&mut b, &out.version);
    response::version_id(&mut b, out.version_id.as_deref());
    b.insert_header(("x-ms-copy-id", out.copy_id));
    b.insert_header((
        "x-ms-copy-status",
        if out.pending { "pending" } else { "success" },
    ));
    // Copy Blob From URL returns Content-MD5 only when the request sent the
    // source's MD5 (checked against the source's stored MD5 by the store).
    if let Some(md5) = &source_md5 {
        b.insert_header(("content-md5", response::md5_base64(md5)));
    }
    Ok(b.finish())
}

pub(crate) async fn abort_copy_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let copy_id = ctx
        .query
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
            copy_id,
        )
        .await?;
    // The copy is aborted once the store says so; this stops its fetch.
    ctx.state.fetcher.cancel(copy_id);
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_source_table() {
        let local: SocketAddr = "127.0.0.1:10000".parse().unwrap();
        let is_account = |a: &str| matches!(a, "devstoreaccount1" | "acct2");
        let server = ThisServer {
            local: Some(local),
            host: "stowage:10000",
            is_account: &is_account,
            product_style: true,
        };
        let ok = |a: &str, c: &str, b: &str, s: Option<&str>, query: &str, https: bool| {
            Ok(SourceUrl {
                account: a.into(),
                container: c.into(),
                blob: b.into(),
                snapshot: s.map(Into::into),
                version_id: None,
                query: query.into(),
                https,
            })
        };
        let cases = [
            (
                "http://127.0.0.1:10000/devstoreaccount1/src/dir/a%20b.txt",
                ok("devstoreaccount1", "src", "dir/a b.txt", None, "", false),
            ),
            (
                "http://localhost:10000/acct/c/b?snapshot=2024-09-03T10%3A15%3A07.1234567Z",
                ok(
                    "acct",
                    "c",
                    "b",
                    Some("2024-09-03T10:15:07.1234567Z"),
                    "snapshot=2024-09-03T10%3A15%3A07.1234567Z",
                    false,
                ),
            ),
            (
                "https://[::1]:10000/acct/c/b?sv=2021&sig=abc",
                ok("acct", "c", "b", None, "sv=2021&sig=abc", true),
            ),
            (
                "http://stowage:10000/acct/c/b",
                ok("acct", "c", "b", None, "", false),
            ),
            (
                "http://127.0.0.1:10000/acct-secondary/c/b",
                ok("acct", "c", "b", None, "", false),
            ),
            // The account in the host name: the service's own host names on
            // any port, product-style names on this server's port.
            (
                "https://devstoreaccount1.blob.core.windows.net/c/dir/b",
                ok("devstoreaccount1", "c", "dir/b", None, "", true),
            ),
            (
                "http://acct2.blob.localhost:10000/c/b?sig=x",
                ok("acct2", "c", "b", None, "sig=x", false),
            ),
            (
                "http://devstoreaccount1-secondary.blob.localhost:10000/c/b",
                ok("devstoreaccount1", "c", "b", None, "", false),
            ),
            (
                "https://other.blob.core.windows.net/acct/c/b",
                Err(SourceError::OtherHost),
            ),
            (
                "http://acct2.blob.localhost:9999/c/b",
                Err(SourceError::OtherHost),
            ),
            (
                "https://devstoreaccount1.blob.core.windows.net/c",
                Err(SourceError::Unparseable),
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
            assert_eq!(parse_copy_source(url, &server), expected, "{url}");
        }
        // Without product-style URLs only the service's host names count.
        let path_only = ThisServer {
            product_style: false,
            ..server
        };
        assert_eq!(
            parse_copy_source("http://acct2.blob.localhost:10000/c/b", &path_only),
            Err(SourceError::OtherHost)
        );
        assert_eq!(
            parse_copy_source("https://acct2.blob.core.windows.net/c/b", &path_only),
            ok("acct2", "c", "b", None, "", true)
        );
    }
}
