//! Shared Key and Shared Key Lite request signing (docs/wire/auth.md#shared-key).
//!
//! Pure logic: the HTTP layer hands in a [`RequestView`] (raw path, raw query,
//! lowercased header names) and the current time; nothing here reads the
//! clock, knows HTTP types or status codes. [`SharedKeyError`] documents the
//! service answer each refusal maps to; the mapping itself lives in the
//! server's error module.
//!
//! ```text
//! let auth = parse_authorization(header_value)?;
//! verify(&view, &auth, url_account, &account_keys, now)?;
//! ```
//!
//! This file uses only std, `hmac`, `sha2`, `base64`, `percent-encoding` and
//! `httpdate`, so it compiles both as a server module and as a crate root.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use percent_encoding::percent_decode_str;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How far the request's `x-ms-date` / `Date` may be from the server clock,
/// in either direction (docs/wire/auth.md#shared-key). Exactly 15 minutes is still accepted.
pub const MAX_CLOCK_SKEW: Duration = Duration::from_secs(15 * 60);

/// From this version on, `Content-Length: 0` is signed as an empty line (docs/wire/auth.md#the-string-to-sign).
const EMPTY_ZERO_LENGTH_VERSION: &str = "2015-02-21";

/// From this version on, an empty-valued `x-ms-*` header is signed as
/// `name:`; earlier versions left it out (docs/wire/auth.md#the-string-to-sign step 4).
const EMPTY_HEADER_VERSION: &str = "2016-05-31";

/// The parts of a request that Shared Key signs.
#[derive(Debug, Clone, Copy)]
pub struct RequestView<'a> {
    /// HTTP method as sent (it is uppercased for signing).
    pub method: &'a str,
    /// Path exactly as on the request line, still percent-encoded, without
    /// the query. Decoding or re-encoding it breaks signatures of names with
    /// `(`, `'`, spaces or non-ASCII characters (docs/wire/auth.md#the-string-to-sign step 2).
    pub raw_path: &'a str,
    /// Query after `?`, still encoded; `""` when there is none.
    pub raw_query: &'a str,
    /// Headers with lowercased names and values as received, in arrival
    /// order; a repeated header appears repeatedly.
    pub headers: &'a [(String, String)],
}

/// The authorization scheme named in the `Authorization` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `SharedKey` (docs/wire/auth.md#the-string-to-sign).
    SharedKey,
    /// `SharedKeyLite` (docs/wire/auth.md#shared-key-lite).
    SharedKeyLite,
}

/// A parsed `Authorization: <scheme> <account>:<signature>` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationHeader {
    /// Which string-to-sign layout the client used.
    pub scheme: Scheme,
    /// The account the client claims to sign for.
    pub account: String,
    /// Base64 HMAC-SHA256 as sent by the client.
    pub signature: String,
}

/// Why a Shared Key request is refused. Each variant notes the service
/// answer (docs/wire/auth.md#shared-key, docs/wire/auth.md#refusals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharedKeyError {
    /// The `Authorization` header is not `<scheme> <account>:<signature>` with
    /// a known scheme. Answer: `400 InvalidAuthenticationInfo` (unverified;
    /// the service may answer 403).
    Malformed,
    /// An OAuth `Bearer` token on a server without `--oauth basic` (with
    /// it, bearer tokens never reach Shared Key: see `auth::bearer`).
    /// Answer: `403 AuthenticationFailed`.
    BearerNotSupported,
    /// The header's account is not the account in the URL.
    /// Answer: `403 AuthenticationFailed`.
    AccountMismatch,
    /// The account has no configured keys (not a known account).
    /// Answer: `403 AuthenticationFailed`.
    UnknownAccount,
    /// Neither `x-ms-date` nor `Date` is present, or the one that counts is
    /// not an HTTP date. Answer: `403 AuthenticationFailed`.
    MissingDate,
    /// The request time is more than [`MAX_CLOCK_SKEW`] away from the server
    /// clock. Answer: `403 AuthenticationFailed`.
    DateOutOfRange,
    /// No key and no canonical form reproduces the signature.
    /// Answer: `403 AuthenticationFailed`, with `AuthenticationErrorDetail`
    /// "The MAC signature found in the HTTP request '`<signature>`' is not the
    /// same as any computed signature. Server used following string to sign:
    /// '`string_to_sign`'." (the primary string).
    SignatureMismatch {
        /// The signature the client sent.
        signature: String,
        /// The primary string-to-sign the server computed.
        string_to_sign: String,
    },
    /// A signed header (named here, lowercased) occurs more than once.
    /// Answer: `400 InvalidHeaderValue` (code unverified) with this
    /// `HeaderName`.
    DuplicateSignedHeader(String),
}

impl fmt::Display for SharedKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed => f.write_str("malformed Authorization header"),
            Self::BearerNotSupported => f.write_str(
                "OAuth bearer tokens are not accepted: the server runs without --oauth basic",
            ),
            Self::AccountMismatch => {
                f.write_str("the Authorization header names another account than the URL")
            }
            Self::UnknownAccount => f.write_str("unknown account"),
            Self::MissingDate => f.write_str("x-ms-date or Date header missing or invalid"),
            Self::DateOutOfRange => {
                f.write_str("request date is more than 15 minutes from the server time")
            }
            Self::SignatureMismatch {
                signature,
                string_to_sign,
            } => write!(
                f,
                "The MAC signature found in the HTTP request '{signature}' is not the same as \
                 any computed signature. Server used following string to sign: \
                 '{string_to_sign}'."
            ),
            Self::DuplicateSignedHeader(name) => write!(f, "signed header {name} is repeated"),
        }
    }
}

impl std::error::Error for SharedKeyError {}

/// Which canonical form to build. [`Canonicalization::Primary`] follows
/// docs/wire/auth.md#the-string-to-sign; the others are the docs/wire/auth.md#forms-stowage-also-accepts alternatives, each a single deviation
/// that some client makes. Each only reproduces a string the client signed
/// with the account key, so accepting them does not weaken authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Canonicalization {
    /// The rules of docs/wire/auth.md#the-string-to-sign (and docs/wire/auth.md#shared-key-lite for Lite).
    Primary,
    /// (a) An empty `Date` line although a `Date` header is present, when
    /// `x-ms-date` is also sent: SDKs that send `x-ms-date` sign an empty
    /// line even if the HTTP stack adds `Date`.
    EmptyDateLine,
    /// (b) Canonicalized headers in plain byte order instead of the
    /// service's character ranking (most hand-written signers).
    ByteOrderHeaders,
    /// (c) Runs of spaces and tabs inside `x-ms-*` values collapsed to one
    /// space, as the published rule says (the SDKs sign values verbatim).
    CollapsedWhitespace,
    /// (d) `+` in query values read as a space (form-encoding decoders).
    PlusAsSpace,
}

impl Canonicalization {
    /// The docs/wire/auth.md#forms-stowage-also-accepts alternatives, in the order they are tried.
    pub const ALTERNATIVES: [Self; 4] = [
        Self::EmptyDateLine,
        Self::ByteOrderHeaders,
        Self::CollapsedWhitespace,
        Self::PlusAsSpace,
    ];
}

/// Parses an `Authorization` header value.
///
/// The scheme is matched case-insensitively (HTTP auth schemes are).
///
/// # Errors
///
/// [`SharedKeyError::BearerNotSupported`] for `Bearer …`;
/// [`SharedKeyError::Malformed`] for an unknown scheme, a missing `:`, or an
/// empty account or signature.
pub fn parse_authorization(value: &str) -> Result<AuthorizationHeader, SharedKeyError> {
    let value = value.trim();
    let (scheme, credentials) = match value.split_once([' ', '\t']) {
        Some((scheme, rest)) => (scheme, rest.trim()),
        None => (value, ""),
    };
    let scheme = if scheme.eq_ignore_ascii_case("SharedKey") {
        Scheme::SharedKey
    } else if scheme.eq_ignore_ascii_case("SharedKeyLite") {
        Scheme::SharedKeyLite
    } else if scheme.eq_ignore_ascii_case("Bearer") {
        return Err(SharedKeyError::BearerNotSupported);
    } else {
        return Err(SharedKeyError::Malformed);
    };
    let (account, signature) = credentials
        .split_once(':')
        .ok_or(SharedKeyError::Malformed)?;
    let well_formed =
        |s: &str| !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == ':');
    if !well_formed(account) || !well_formed(signature) {
        return Err(SharedKeyError::Malformed);
    }
    Ok(AuthorizationHeader {
        scheme,
        account: account.to_owned(),
        signature: signature.to_owned(),
    })
}

/// The primary string-to-sign (docs/wire/auth.md#the-string-to-sign; docs/wire/auth.md#shared-key-lite for Shared Key Lite).
///
/// `account` is the account from the `Authorization` header. `version` is
/// the request's `x-ms-version` (`""` when absent, which signs like the
/// oldest version); it selects the Content-Length `0` rule (docs/wire/auth.md#the-string-to-sign) and the
/// empty-header rule (docs/wire/auth.md#the-string-to-sign step 4). Versions compare as `YYYY-MM-DD` strings,
/// so the caller validates the format.
///
/// # Errors
///
/// [`SharedKeyError::DuplicateSignedHeader`] when a signed header occurs
/// more than once.
pub fn string_to_sign(
    req: &RequestView,
    account: &str,
    scheme: Scheme,
    version: &str,
) -> Result<String, SharedKeyError> {
    string_to_sign_variant(req, account, scheme, version, Canonicalization::Primary)
}

/// The string-to-sign in one given canonical form (docs/wire/auth.md#forms-stowage-also-accepts).
///
/// # Errors
///
/// As [`string_to_sign`].
pub fn string_to_sign_variant(
    req: &RequestView,
    account: &str,
    scheme: Scheme,
    version: &str,
    form: Canonicalization,
) -> Result<String, SharedKeyError> {
    let mut out = req.method.to_ascii_uppercase();
    out.push('\n');
    match scheme {
        Scheme::SharedKey => {
            for name in ["content-encoding", "content-language"] {
                push_line(&mut out, single_header(req, name)?.unwrap_or(""));
            }
            let length = single_header(req, "content-length")?.unwrap_or("");
            let zero_is_empty = version >= EMPTY_ZERO_LENGTH_VERSION;
            push_line(
                &mut out,
                if zero_is_empty && length == "0" {
                    ""
                } else {
                    length
                },
            );
            for name in ["content-md5", "content-type"] {
                push_line(&mut out, single_header(req, name)?.unwrap_or(""));
            }
            push_line(&mut out, date_line(req, form)?);
            push_line(
                &mut out,
                single_header(req, "if-modified-since")?.unwrap_or(""),
            );
            // If-Match and If-None-Match are lists; docs/wire/conditions.md treats a
            // repeated header as one comma-joined list, and Azure.Core joins
            // repeated values with "," when it signs.
            for name in ["if-match", "if-none-match"] {
                push_line(&mut out, &joined_header(req, name));
            }
            for name in ["if-unmodified-since", "range"] {
                push_line(&mut out, single_header(req, name)?.unwrap_or(""));
            }
        }
        Scheme::SharedKeyLite => {
            for name in ["content-md5", "content-type"] {
                push_line(&mut out, single_header(req, name)?.unwrap_or(""));
            }
            push_line(&mut out, date_line(req, form)?);
        }
    }
    out.push_str(&canonicalized_headers(req, version, form)?);
    out.push_str(&canonicalized_resource(req, account, scheme, form));
    Ok(out)
}

/// Base64 of HMAC-SHA256 of `string_to_sign` under the decoded account key.
pub fn sign(key: &[u8], string_to_sign: &str) -> String {
    STANDARD.encode(mac(key, string_to_sign).finalize().into_bytes())
}

/// Verifies a Shared Key or Shared Key Lite request (docs/wire/auth.md#shared-key).
///
/// Checks, in order: the header's account is `url_account`; the account has
/// keys; the request is not a duplicate-header request; `x-ms-date` (or else
/// `Date`) is an HTTP date within [`MAX_CLOCK_SKEW`] of `now`; and the
/// signature matches any key with the primary string-to-sign or with one of
/// the docs/wire/auth.md#forms-stowage-also-accepts alternatives, each tried alone (never combined). `keys` are the
/// account's decoded keys, empty for an unknown account.
///
/// # Errors
///
/// The [`SharedKeyError`] of the first failing check.
pub fn verify(
    req: &RequestView,
    auth: &AuthorizationHeader,
    url_account: &str,
    keys: &[Vec<u8>],
    now: SystemTime,
) -> Result<(), SharedKeyError> {
    verify_with_version(req, auth, url_account, keys, now, "")
}

/// [`verify`] for a request whose `x-ms-version` may come from elsewhere:
/// a Blob Batch sub-request without its own `x-ms-version` is processed,
/// and signed, with the version of the batch (`inherited_version`), so a
/// `Content-Length: 0` in it signs as an empty line.
///
/// # Errors
///
/// As [`verify`].
pub fn verify_with_version(
    req: &RequestView,
    auth: &AuthorizationHeader,
    url_account: &str,
    keys: &[Vec<u8>],
    now: SystemTime,
    inherited_version: &str,
) -> Result<(), SharedKeyError> {
    if auth.account != url_account {
        return Err(SharedKeyError::AccountMismatch);
    }
    if keys.is_empty() {
        return Err(SharedKeyError::UnknownAccount);
    }
    let version = single_header(req, "x-ms-version")?.unwrap_or(inherited_version);
    let primary = string_to_sign(req, &auth.account, auth.scheme, version)?;
    check_request_time(req, now)?;

    let mismatch = || SharedKeyError::SignatureMismatch {
        signature: auth.signature.clone(),
        string_to_sign: primary.clone(),
    };
    // A signature that is not base64 cannot match anything; still report the
    // string-to-sign so the client can debug its signer.
    let Ok(presented) = STANDARD.decode(&auth.signature) else {
        return Err(mismatch());
    };
    if matches_any_key(keys, &primary, &presented) {
        return Ok(());
    }
    for form in Canonicalization::ALTERNATIVES {
        let candidate = string_to_sign_variant(req, &auth.account, auth.scheme, version, form)?;
        if candidate != primary && matches_any_key(keys, &candidate, &presented) {
            return Ok(());
        }
    }
    Err(mismatch())
}

fn mac(key: &[u8], message: &str) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(message.as_bytes());
    mac
}

/// Constant-time comparison against each key in turn (key1, then key2).
fn matches_any_key(keys: &[Vec<u8>], string_to_sign: &str, presented: &[u8]) -> bool {
    keys.iter()
        .any(|key| mac(key, string_to_sign).verify_slice(presented).is_ok())
}

fn check_request_time(req: &RequestView, now: SystemTime) -> Result<(), SharedKeyError> {
    // docs/wire/requests.md#common-headers: when both are sent, x-ms-date wins.
    let raw = match single_header(req, "x-ms-date")? {
        Some(value) => value,
        None => single_header(req, "date")?.ok_or(SharedKeyError::MissingDate)?,
    };
    let sent = httpdate::parse_http_date(raw).map_err(|_| SharedKeyError::MissingDate)?;
    let skew = now
        .duration_since(sent)
        .or_else(|_| sent.duration_since(now))
        .unwrap_or(Duration::ZERO);
    if skew > MAX_CLOCK_SKEW {
        return Err(SharedKeyError::DateOutOfRange);
    }
    Ok(())
}

fn push_line(out: &mut String, value: &str) {
    out.push_str(value);
    out.push('\n');
}

/// The trimmed value of a header that must occur at most once.
fn single_header<'r>(req: &RequestView<'r>, name: &str) -> Result<Option<&'r str>, SharedKeyError> {
    let mut found = None;
    for (header, value) in req.headers {
        if header.eq_ignore_ascii_case(name) {
            if found.is_some() {
                return Err(SharedKeyError::DuplicateSignedHeader(name.to_owned()));
            }
            found = Some(value.trim());
        }
    }
    Ok(found)
}

/// All values of a list-valued header, trimmed and joined with `,`.
fn joined_header(req: &RequestView, name: &str) -> String {
    let values: Vec<&str> = req
        .headers
        .iter()
        .filter(|(header, _)| header.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim())
        .collect();
    values.join(",")
}

/// docs/wire/auth.md#the-string-to-sign field 7: the `Date` header's value when present. Clients that send
/// `x-ms-date` sign an empty line here; that is alternative (a).
fn date_line<'r>(req: &RequestView<'r>, form: Canonicalization) -> Result<&'r str, SharedKeyError> {
    let date = single_header(req, "date")?.unwrap_or("");
    if form == Canonicalization::EmptyDateLine && single_header(req, "x-ms-date")?.is_some() {
        return Ok("");
    }
    Ok(date)
}

/// docs/wire/auth.md#the-string-to-sign: every `x-ms-*` header as `name:value\n`, sorted.
fn canonicalized_headers(
    req: &RequestView,
    version: &str,
    form: Canonicalization,
) -> Result<String, SharedKeyError> {
    let mut seen = BTreeSet::new();
    let mut entries: Vec<(String, String)> = Vec::new();
    for (name, value) in req.headers {
        let name = name.to_ascii_lowercase();
        if !name.starts_with("x-ms-") {
            continue;
        }
        if !seen.insert(name.clone()) {
            return Err(SharedKeyError::DuplicateSignedHeader(name));
        }
        let value = value.trim();
        if value.is_empty() && version < EMPTY_HEADER_VERSION {
            continue;
        }
        let value = if form == Canonicalization::CollapsedWhitespace {
            collapse_whitespace(value)
        } else {
            value.to_owned()
        };
        entries.push((name, value));
    }
    if form == Canonicalization::ByteOrderHeaders {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    } else {
        entries.sort_by(|a, b| compare_ranked(&a.0, &b.0));
    }
    let mut out = String::new();
    for (name, value) in entries {
        out.push_str(&name);
        out.push(':');
        out.push_str(&value);
        out.push('\n');
    }
    Ok(out)
}

/// The service's header-name ranking (docs/wire/auth.md#the-string-to-sign step 5): `-` first, then these
/// punctuation marks, digits, more punctuation, letters. It matters for `_`,
/// which sorts before digits here but after them in byte order.
const HEADER_RANKING: &[u8] =
    b"-!#$%&*.^_|~+\"'(),/`0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz{}";

/// Rank of a byte; bytes the ranking does not list (never valid in a header
/// name) sort after all listed ones, in byte order.
fn header_rank(byte: u8) -> usize {
    HEADER_RANKING
        .iter()
        .position(|&b| b == byte)
        .unwrap_or(HEADER_RANKING.len() + usize::from(byte))
}

/// Compares two header names by [`HEADER_RANKING`]; a prefix sorts first.
fn compare_ranked(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes().map(header_rank).cmp(b.bytes().map(header_rank))
}

/// Collapses runs of spaces and tabs into one space (alternative (c)).
fn collapse_whitespace(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut in_run = false;
    for c in value.chars() {
        if c == ' ' || c == '\t' {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// docs/wire/auth.md#the-string-to-sign (Shared Key) and docs/wire/auth.md#shared-key-lite (Lite) canonicalized resource.
fn canonicalized_resource(
    req: &RequestView,
    account: &str,
    scheme: Scheme,
    form: Canonicalization,
) -> String {
    // The raw path already starts with the account in path-style URLs, so the
    // account appears twice; that is what every client signs.
    let path = if req.raw_path.is_empty() {
        "/"
    } else {
        req.raw_path
    };
    let mut out = format!("/{account}{path}");
    let params = query_parameters(req.raw_query, form == Canonicalization::PlusAsSpace);
    match scheme {
        Scheme::SharedKey => {
            for (name, values) in params {
                out.push('\n');
                out.push_str(&name);
                out.push(':');
                out.push_str(&values.join(","));
            }
        }
        Scheme::SharedKeyLite => {
            if let Some(values) = params.get("comp") {
                out.push_str("?comp=");
                out.push_str(&values.join(","));
            }
        }
    }
    out
}

/// Query parameters with lowercased, decoded names (byte order) and their
/// decoded values, sorted. `+` stays `+` unless `plus_as_space`.
fn query_parameters(raw_query: &str, plus_as_space: bool) -> BTreeMap<String, Vec<String>> {
    let mut params: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in raw_query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = if plus_as_space {
            decode(&value.replace('+', " "))
        } else {
            decode(value)
        };
        params
            .entry(decode(name).to_lowercase())
            .or_default()
            .push(value);
    }
    for values in params.values_mut() {
        values.sort();
    }
    params
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
#[path = "shared_key_tests.rs"]
mod tests;
