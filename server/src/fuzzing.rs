//! Entry points for the fuzz targets in `fuzz/` (cargo fuzz); not an API.
//!
//! The parsers that read client input are `pub(crate)`, and a fuzz target
//! is a separate crate, so it reaches them only through this module. Each
//! function takes raw bytes, calls the parsers the server calls on them, in
//! the server's order, and panics when the server would misbehave: a panic
//! inside a parser, a refusal that is not a 4xx (or `501 NotImplemented`),
//! or a broken round trip (a request signed over the server's own
//! string-to-sign refused for its signature, a stored document the next
//! request cannot read back). Nothing in the server calls this module.
#![doc(hidden)]

use std::time::{Duration, UNIX_EPOCH};

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode, Uri};
use base64::Engine as _;
use stowage_blobstore::{
    AccessPolicy, BlobType, BlockId, ByteRange, EtagMatch, LeaseId, ListingMarker, PublicAccess,
};

use crate::auth::bearer;
use crate::auth::sas::{self, Permissions, SasError, SasKind, SasRequest, StoredPolicy};
use crate::auth::shared_key::{self, AuthorizationHeader, RequestView, Scheme, SharedKeyError};
use crate::error::ApiError;
use crate::headers::{self, Headers};
use crate::ops::batch_body;
use crate::ops::{Operation, RouteKey};
use crate::target::{Query, Target};
use crate::{version, xml};

/// The development account, whose key signs the round trips.
const ACCOUNT: &str = "devstoreaccount1";
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn key() -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(KEY)
        .unwrap_or_default()
}

/// A refusal must be the client's fault (4xx) or an operation Stowage does
/// not serve (501); anything else would reach the client as a server error.
fn refused(e: &ApiError) {
    let status = e.answer().status;
    assert!(
        status.is_client_error() || status == StatusCode::NOT_IMPLEMENTED,
        "{e:?} answers {status}"
    );
}

fn check<T>(r: Result<T, ApiError>) -> Option<T> {
    r.map_err(|e| refused(&e)).ok()
}

/// Splits `data` into `\n`-separated text fields (lossy UTF-8).
fn fields(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect()
}

/// Raw bytes from a client connection, as an HTTP/1.1 request: first the
/// connection layer that records metadata-name case ([`connection`]), then
/// the request head as actix would parse it, then everything the handler
/// reads before dispatch: version, target, credentials, query, operation.
pub fn route(data: &[u8]) {
    connection(data);
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut slots);
    if req.parse(data).is_err() {
        return;
    }
    let (Some(method), Some(target)) = (req.method, req.path) else {
        return;
    };
    let mut map = HeaderMap::new();
    for h in req.headers.iter() {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(h.name.as_bytes()),
            HeaderValue::from_bytes(h.value),
        ) {
            map.append(n, v);
        }
    }
    route_parts(method, target, &map);
}

/// Method, request target and headers through the handler's parsers.
pub fn route_parts(method: &str, target: &str, headers: &HeaderMap) {
    // actix refuses both with 400 before the handler runs.
    let (Ok(method), Ok(uri)) = (Method::from_bytes(method.as_bytes()), target.parse::<Uri>())
    else {
        return;
    };
    let (raw_path, raw_query) = (uri.path(), uri.query().unwrap_or(""));
    let h = Headers(headers);
    if let Some(Some(v)) = check(h.get("x-ms-version")) {
        let _ = version::is_acceptable(v);
    }
    let Some(target) = check(Target::parse(raw_path)) else {
        return;
    };
    if let Some(Some(value)) = check(h.get("authorization")) {
        let _ = shared_key::parse_authorization(value);
    } else {
        let _ = sas::parse_sas(raw_query);
    }
    let Some(query) = check(Query::parse(raw_query)) else {
        return;
    };
    let _ = query.get("timeout").map(str::parse::<u64>);
    let _ = query.get("marker").map(ListingMarker::decode);
    let _ = query.get("blockid").map(BlockId::parse);
    let _ = query.all("include").count();
    let op = Operation::parse(RouteKey {
        method: &method,
        level: target.level(),
        restype: query.get("restype"),
        comp: query.get("comp"),
        has_blob_type: h.has("x-ms-blob-type"),
        has_copy_source: h.has("x-ms-copy-source"),
    });
    // The operation's handler reads its headers next.
    if check(op).is_some() {
        headers_parsed(&h, &[]);
    }
}

/// Bytes from a client connection through the layer that records the
/// `x-ms-meta-*` names of each request, and on to actix-http's decoder as
/// the server runs it, in reads whose sizes the first 8 bytes seed: both
/// must see the same requests (see `header_case::check::compare`).
pub fn connection(data: &[u8]) {
    let (seed, stream) = data.split_at(data.len().min(8));
    let mut le = [0u8; 8];
    le[..seed.len()].copy_from_slice(seed);
    crate::header_case::check::compare(stream, u64::from_le_bytes(le));
}

/// Header lines (`name: value`, one a line) through every typed header
/// reader, and each value through the value parsers.
pub fn headers(data: &[u8]) {
    let mut map = HeaderMap::new();
    let mut exact = Vec::new();
    for line in data.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) {
            if let Some(meta) = std::str::from_utf8(name)
                .ok()
                .and_then(|n| n.get(..10).filter(|p| p.eq_ignore_ascii_case("x-ms-meta-")))
                .and_then(|_| std::str::from_utf8(&name[10..]).ok())
            {
                exact.push(meta.to_owned());
            }
            map.append(n, v);
        }
    }
    headers_parsed(&Headers(&map), &exact);
    for (_, value) in map.iter() {
        let Ok(v) = value.to_str() else { continue };
        if let Some(r) = ByteRange::parse(v) {
            assert!(r.end.is_none_or(|e| r.start <= e), "{r:?} from {v:?}");
            for size in [0, 1, r.start, r.start.saturating_add(1), u64::MAX] {
                if let Some(span) = r.resolve(size) {
                    assert!(span.start < span.end && span.end <= size, "{r:?} in {size}");
                }
            }
        }
        let _ = headers::decode_md5(v);
        let _ = EtagMatch::parse(v);
        let _ = LeaseId::parse(v);
        let _ = BlockId::parse(v);
        let _ = BlobType::parse(v);
        let _ = PublicAccess::parse(v);
        let _ = httpdate::parse_http_date(v);
        let _ = sas::parse_sas_time(v);
        let _ = version::is_acceptable(v);
    }
}

/// Every typed reader of [`Headers`]; each refusal must be a 4xx.
fn headers_parsed(h: &Headers<'_>, exact: &[String]) {
    check(h.conditions());
    check(h.source_conditions());
    check(h.lease_id());
    check(h.metadata(exact));
    check(h.md5("content-md5"));
    check(h.put_blob_content());
    check(h.blob_content_headers());
    check(h.range());
    check(h.flag("x-ms-range-get-content-md5"));
    check(h.content_length());
}

/// A request as lines: method, path and query, the `Authorization` value,
/// then `name:value` headers. Builds every Shared Key and Lite
/// string-to-sign, verifies the presented signature, and checks that the
/// request signed over the server's own string-to-sign is never refused for
/// its signature.
pub fn shared_key(data: &[u8]) {
    let lines = fields(data);
    let line = |i: usize| lines.get(i).map_or("", String::as_str);
    let target = line(1);
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let headers: Vec<(String, String)> = lines
        .iter()
        .skip(3)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.to_owned()))
        .collect();
    let view = RequestView {
        method: line(0),
        raw_path,
        raw_query,
        headers: &headers,
    };
    let keys = [key()];
    let one = |name: &str| {
        let mut all = headers.iter().filter(|(n, _)| n == name);
        match (all.next(), all.next()) {
            (Some((_, v)), None) => Some(Some(v.trim())),
            (None, _) => Some(None),
            (Some(_), Some(_)) => None,
        }
    };
    let now = match (one("x-ms-date"), one("date")) {
        (Some(Some(d)), _) | (Some(None), Some(Some(d))) => httpdate::parse_http_date(d).ok(),
        _ => None,
    }
    .unwrap_or(UNIX_EPOCH);
    let presented = shared_key::parse_authorization(line(2));
    let account = presented.as_ref().map_or(ACCOUNT, |a| a.account.as_str());
    if let Ok(auth) = &presented {
        let _ = shared_key::verify(&view, auth, ACCOUNT, &keys, now);
    }
    let Some(version) = one("x-ms-version").map(Option::unwrap_or_default) else {
        return;
    };
    for scheme in [Scheme::SharedKey, Scheme::SharedKeyLite] {
        for form in shared_key::Canonicalization::ALTERNATIVES {
            let _ = shared_key::string_to_sign_variant(&view, account, scheme, version, form);
        }
        let Ok(sts) = shared_key::string_to_sign(&view, account, scheme, version) else {
            continue;
        };
        let auth = AuthorizationHeader {
            scheme,
            account: account.to_owned(),
            signature: shared_key::sign(&keys[0], &sts),
        };
        let verdict = shared_key::verify(&view, &auth, account, &keys, now);
        assert!(
            !matches!(verdict, Err(SharedKeyError::SignatureMismatch { .. })),
            "signed over {sts:?}, refused: {verdict:?}"
        );
    }
}

/// A SAS request as lines: the raw query, the path, the client address,
/// `https` or not, then a stored policy's start, expiry and permission.
/// Parses and verifies the token, then re-signs it with the account key
/// over the server's own string-to-sign, which must pass the signature
/// check.
pub fn sas(data: &[u8]) {
    let lines = fields(data);
    let line = |i: usize| lines.get(i).map(String::as_str);
    let query = line(0).unwrap_or("");
    for text in &lines {
        let _ = sas::parse_sas_time(text);
        let _ = Permissions::parse(text, SasKind::Service);
        let _ = Permissions::parse(text, SasKind::Account);
    }
    let Some(Ok(mut token)) = sas::parse_sas(query) else {
        return;
    };
    let target = Target::parse(line(1).unwrap_or("/devstoreaccount1"));
    let target = target.unwrap_or(Target {
        account: ACCOUNT.into(),
        container: None,
        blob: None,
        secondary: false,
        host_style: false,
    });
    let snapshot = Query::parse(query).ok();
    let client_ip = line(2).and_then(|ip| ip.trim().parse().ok());
    if let (Some(range), Some(ip)) = (token.ip_range, client_ip) {
        let _ = range.contains(ip);
    }
    let policy = line(5).map(|_| StoredPolicy {
        start: line(4).filter(|s| !s.is_empty()).map(str::to_owned),
        expiry: line(5).filter(|s| !s.is_empty()).map(str::to_owned),
        permission: line(6).map(str::to_owned),
    });
    // Inside the window when there is one, so later checks run too.
    let now = token
        .expiry
        .and_then(|e| e.checked_sub(Duration::from_secs(1)))
        .or(token.start)
        .unwrap_or(UNIX_EPOCH + Duration::from_secs(1_725_358_507));
    let req = SasRequest {
        account: &target.account,
        container: target.container.as_deref(),
        blob: target.blob.as_deref(),
        snapshot: snapshot.as_ref().and_then(|q| q.get("snapshot")),
        now,
        client_ip,
        https: line(3) == Some("https"),
    };
    let keys = [key()];
    let _ = sas::verify_sas(&token, &req, &keys, policy.as_ref());
    let sts = sas::string_to_sign(&token, &req);
    token.sig = sas::sign(&sas::signing_key(&token, &req, &keys[0]), &sts);
    let verdict = sas::verify_sas(&token, &req, &keys, policy.as_ref());
    assert!(
        !matches!(verdict, Err(SasError::SignatureMismatch { .. })),
        "signed over {sts:?}, refused: {verdict:?}"
    );
}

/// A Put Block List body.
pub fn block_list(body: &[u8]) {
    if let Some(list) = check(xml::parse_block_list(body)) {
        assert!(list.len() <= stowage_blobstore::MAX_COMMITTED_BLOCKS);
    }
}

/// A Set Container ACL body; what it sets must read back the same from the
/// Get Container ACL document.
pub fn acl(body: &[u8]) {
    let Some(policies) = check(xml::parse_acl(body)) else {
        return;
    };
    assert!(policies.len() <= 5, "{} policies", policies.len());
    let doc = xml::acl(&policies);
    let again = xml::parse_acl(doc.as_bytes());
    // Known difference, left as it is: the writer shows a time before 1970
    // as 1970-01-01T00:00:00.0000000Z (`iso8601_7`), which is the same
    // instant for every check a SAS makes (both are in the past).
    let shown = |mut p: AccessPolicy| {
        p.start = p.start.map(|t| t.max(UNIX_EPOCH));
        p.expiry = p.expiry.map(|t| t.max(UNIX_EPOCH));
        p
    };
    let expected: Vec<AccessPolicy> = policies.into_iter().map(shown).collect();
    assert_eq!(again.ok().as_ref(), Some(&expected), "{doc}");
}

/// Up to four Set Blob Service Properties bodies, separated by NUL,
/// applied one after another to the default document; the stored result
/// must stay readable by the next Set. (Each Set re-reads the stored
/// document, so more bodies would only slow the fuzzer down.)
pub fn service_properties(bodies: &[u8]) {
    let mut stored = xml::default_service_properties();
    for body in bodies.splitn(4, |b| *b == 0) {
        // The handler refuses a body that is not UTF-8 with InvalidXmlDocument.
        let Ok(update) = std::str::from_utf8(body) else {
            continue;
        };
        if let Some(merged) = check(xml::merge_service_properties(&stored, update)) {
            stored = merged;
        }
    }
    let reread = xml::merge_service_properties(
        &stored,
        "<StorageServiceProperties></StorageServiceProperties>",
    );
    assert!(reread.is_ok(), "stored document refused: {stored}");
}

/// The XML readers on the same bytes.
pub fn xml(body: &[u8]) {
    block_list(body);
    acl(body);
    service_properties(body);
    check(xml::parse_key_info(body));
}

/// A bearer token (the bytes, as text): checked at a fixed time, and the
/// challenge of its refusal, which carries the token's tenant into a
/// response header, stays a valid header value.
pub fn bearer(data: &[u8]) {
    let token = String::from_utf8_lossy(data);
    let now = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
    let _ = bearer::verify_bearer(&token, ACCOUNT, now);
    let challenge = bearer::challenge(bearer::token_tenant(&token).as_deref());
    assert!(
        HeaderValue::from_str(&challenge).is_ok(),
        "challenge {challenge:?}"
    );
}

/// A Blob Batch request: the `Content-Type` value, a newline, the body.
/// Each sub-request goes through what the batch handler reads of it.
pub fn batch(data: &[u8]) {
    let (content_type, body) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(content_type) = std::str::from_utf8(content_type) else {
        return;
    };
    let Some(boundary) = batch_body::boundary(content_type.trim_end_matches('\r')) else {
        return;
    };
    let Ok(subs) = batch_body::parse_batch(body, boundary) else {
        return;
    };
    assert!((1..=batch_body::MAX_SUBREQUESTS).contains(&subs.len()));
    for sub in &subs {
        let (raw_path, raw_query) = sub.target.split_once('?').unwrap_or((&sub.target, ""));
        let view = RequestView {
            method: &sub.method,
            raw_path,
            raw_query,
            headers: &sub.headers,
        };
        let _ = shared_key::string_to_sign(&view, ACCOUNT, Scheme::SharedKey, "2023-11-03");
        for (_, value) in sub.headers.iter().filter(|(n, _)| n == "authorization") {
            let _ = shared_key::parse_authorization(value);
        }
        check(Target::parse(raw_path));
        check(Query::parse(raw_query));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry points run clean on the spec's own examples (the fuzz
    /// crate is outside the workspace, so this is what CI sees of them).
    #[test]
    fn entry_points_accept_the_spec_examples() {
        route(b"PUT /devstoreaccount1/mycontainer?restype=container HTTP/1.1\r\nHost: x\r\nx-ms-meta-Owner: alice\r\nContent-Length: 0\r\n\r\n");
        headers(b"if-match: \"0x1\"\nrange: bytes=0-9\nx-ms-meta-Owner: alice\ncontent-md5: 1B2M2Y8AsgTpgAmY7PhCfg==");
        shared_key(b"PUT\n/devstoreaccount1/mycontainer?restype=container\nSharedKey devstoreaccount1:m5xBtgvPs2dzzKB3r83qyAdtaLR6z3dFFawzqeRPsLA=\ncontent-length:0\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\nx-ms-version:2021-10-04");
        sas(b"sp=r&st=2024-09-01T00:00:00Z&se=2024-09-30T00:00:00Z&spr=https,http&sv=2026-10-06&sr=b&sig=JiHNNd1YhxdbUZMBsAuSxM5jRTEzh0nq/AWq5Kfu4IY%3D\n/devstoreaccount1/mycontainer/dir/hello%20world.txt\n127.0.0.1\nhttps");
        xml(b"<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>read-only-2024</Id><AccessPolicy><Start>2024-09-01T00:00:00.0000000Z</Start><Permission>rl</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>");
        xml(b"<BlockList><Latest>QUFBQUE=</Latest><Committed>QkJCQkI=</Committed></BlockList>");
        xml(b"<StorageServiceProperties><Cors /></StorageServiceProperties>");
        xml(b"<KeyInfo><Start>2024-09-03T10:00:00Z</Start><Expiry>2024-09-03T12:00:00Z</Expiry></KeyInfo>");
        bearer(b"eyJhbGciOiJub25lIn0.eyJhdWQiOiJodHRwczovL3N0b3JhZ2UuYXp1cmUuY29tIiwidGlkIjoiNzJmOTg4YmYifQ.");
        batch(b"multipart/mixed; boundary=b\n--b\r\nContent-Type: application/http\r\n\r\nDELETE /c/a HTTP/1.1\r\nx-ms-version: 2023-11-03\r\n\r\n\r\n--b--\r\n");
    }
}
