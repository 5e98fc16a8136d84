//! OAuth bearer tokens (`Authorization: Bearer <JWT>`), checked the way the
//! emulator's `--oauth basic` mode checks them (docs/wire/oauth.md).
//!
//! Pure logic: [`verify_bearer`] decodes the token and checks its lifetime,
//! issuer and audience against the time and account passed in. The
//! signature is **not** verified: that would need the identity provider's
//! signing keys, fetched over the network, and a local server has neither
//! the network nor a tenant of its own. A token is therefore only as
//! trustworthy as the channel it came over, which is why the server accepts
//! bearer tokens over HTTPS only.
//!
//! ```text
//! let identity = verify_bearer(token, "devstoreaccount1", now)?;
//! // identity.oid / identity.tid name the caller (Get User Delegation Key)
//! ```

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};

/// Issuers accepted by prefix (the tenant that follows is not checked): the
/// token services of the public and national clouds, and the v2.0 endpoint.
const ISSUER_PREFIXES: [&str; 5] = [
    "https://sts.windows.net/",
    "https://sts.microsoftonline.de/",
    "https://sts.chinacloudapi.cn/",
    "https://sts.windows-ppe.net",
    "https://login.microsoftonline.com/",
];

/// The storage resource, as an audience and as the challenge's `resource_id`.
pub const STORAGE_RESOURCE: &str = "https://storage.azure.com";
/// The application id of Azure Storage, also a valid audience.
const STORAGE_APP_ID: &str = "e406a681-f3d4-42a8-90b6-c2b029497af1";
/// Blob endpoint host suffixes: `https://<account><suffix>` is an audience
/// for that account only.
const BLOB_HOST_SUFFIXES: [&str; 4] = [
    ".blob.core.windows.net",
    ".blob.core.chinacloudapi.cn",
    ".blob.core.usgovcloudapi.net",
    ".blob.core.cloudapi.de",
];
/// The tenant of the challenge when the token names none.
const COMMON_TENANT: &str = "common";

/// Who a valid token names: the claims a user delegation key is issued for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerIdentity {
    /// `oid`: the caller's object id (empty when the token has none).
    pub oid: String,
    /// `tid`: the caller's tenant id (empty when the token has none).
    pub tid: String,
}

/// Why a bearer token is refused. The server answers each with
/// `401 InvalidAuthenticationInfo` and a `WWW-Authenticate` challenge
/// (requests of version 2019-12-12 and later) or `403 AuthenticationFailed`
/// (older versions); the `Display` text is the `AuthenticationErrorDetail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BearerError {
    /// The request came over plain HTTP.
    NotHttps,
    /// Not three base64url parts, not JSON, or a required claim (`exp`,
    /// `nbf`, `iat`, `iss`, `aud`) missing or of the wrong type.
    Malformed,
    /// `nbf` is after now.
    NotYetValid,
    /// `exp` is now or before.
    Expired,
    /// `iss` is not one of the accepted issuers.
    InvalidIssuer,
    /// `aud` is not storage, nor this account's blob endpoint.
    InvalidAudience,
}

impl fmt::Display for BearerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotHttps => "Authentication scheme Bearer is not allowed with HTTP.",
            Self::Malformed => {
                "The access token is not a well-formed JWT with exp, nbf, iat, iss and aud claims."
            }
            Self::NotYetValid => "Lifetime validation failed. The token is not yet valid.",
            Self::Expired => "Lifetime validation failed. The token is expired.",
            Self::InvalidIssuer => "Issuer validation failed. Issuer did not match.",
            Self::InvalidAudience => "Audience validation failed. Audience did not match.",
        })
    }
}

impl std::error::Error for BearerError {}

/// Checks a bearer token for `account` at `now` (docs/wire/oauth.md):
///
/// 1. three `.`-separated base64url parts, the first two JSON objects (the
///    third, the signature, is not checked and may be empty);
/// 2. `exp`, `nbf` and `iat` are numbers: `nbf` ≤ now < `exp`, no skew;
/// 3. `iss` starts with one of the accepted issuer prefixes;
/// 4. `aud` (a string or an array of strings) holds `https://storage.azure.com`
///    (with or without a trailing `/`), the storage application id, or
///    `https://<account>.blob.core.windows.net` (or another cloud's blob
///    host) for this very account.
///
/// # Errors
/// The [`BearerError`] of the first failing check.
pub fn verify_bearer(
    token: &str,
    account: &str,
    now: SystemTime,
) -> Result<BearerIdentity, BearerError> {
    let claims = decode_claims(token).ok_or(BearerError::Malformed)?;
    let time = |name: &str| {
        claims
            .get(name)
            .and_then(Value::as_f64)
            .filter(|t| t.is_finite())
    };
    let (Some(exp), Some(nbf), Some(_iat)) = (time("exp"), time("nbf"), time("iat")) else {
        return Err(BearerError::Malformed);
    };
    let now = seconds_since_epoch(now);
    if now < nbf {
        return Err(BearerError::NotYetValid);
    }
    if now >= exp {
        return Err(BearerError::Expired);
    }
    let issuer = claims
        .get("iss")
        .and_then(Value::as_str)
        .ok_or(BearerError::Malformed)?;
    if !ISSUER_PREFIXES.iter().any(|p| issuer.starts_with(p)) {
        return Err(BearerError::InvalidIssuer);
    }
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => return Err(BearerError::Malformed),
    };
    if !audiences.iter().any(|aud| audience_matches(aud, account)) {
        return Err(BearerError::InvalidAudience);
    }
    let text = |name: &str| {
        claims
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(BearerIdentity {
        oid: text("oid"),
        tid: text("tid"),
    })
}

/// The tenant a token names (`tid`), read without checking anything else:
/// the tenant of the challenge sent back with a refusal.
pub fn token_tenant(token: &str) -> Option<String> {
    decode_claims(token)?
        .get("tid")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .map(str::to_owned)
}

/// The `WWW-Authenticate` value of a refused bearer token: where to get a
/// token (the tenant's authorize endpoint, `common` when unknown) and for
/// which resource.
pub fn challenge(tenant: Option<&str>) -> String {
    let tenant = tenant.unwrap_or(COMMON_TENANT);
    format!(
        "Bearer authorization_uri=https://login.microsoftonline.com/{tenant}/oauth2/authorize resource_id={STORAGE_RESOURCE}"
    )
}

fn audience_matches(aud: &str, account: &str) -> bool {
    let trimmed = aud.strip_suffix('/').unwrap_or(aud);
    if trimmed == STORAGE_RESOURCE || aud == STORAGE_APP_ID {
        return true;
    }
    let Some(host) = trimmed.strip_prefix("https://") else {
        return false;
    };
    BLOB_HOST_SUFFIXES
        .iter()
        .any(|suffix| host.strip_suffix(suffix) == Some(account))
}

/// The payload of a JWT, when the token has the JWT shape.
fn decode_claims(token: &str) -> Option<Map<String, Value>> {
    let mut parts = token.split('.');
    let (header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    decode_object(header)?;
    decode_object(payload)
}

fn decode_object(part: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD
        .decode(part)
        .or_else(|_| URL_SAFE.decode(part))
        .ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn seconds_since_epoch(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// `seconds` after the epoch, for tests that build tokens.
#[cfg(test)]
pub(crate) fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + std::time::Duration::from_secs(seconds)
}

#[cfg(test)]
#[path = "bearer_tests.rs"]
mod tests;
