//! Shared access signatures: service SAS and account SAS (docs/wire/auth.md#shared-access-signatures).
//!
//! Pure logic: [`parse_sas`] reads the token from the raw query,
//! [`verify_sas`] runs every check of docs/wire/auth.md#sas-validity-checks that does not depend on the
//! operation, with the time, client address and scheme passed in, and returns
//! a [`SasGrant`]. The server then checks the operation against the grant:
//! `srt` through [`ResourceTypes`] (`403 AuthorizationResourceTypeMismatch`),
//! `sp` through [`Permissions::contains_any`] with the docs/wire/auth.md#sas-permissions / docs/wire/auth.md#account-sas tables
//! (`403 AuthorizationPermissionMismatch`), and applies
//! [`ResponseOverrides`] on Get Blob and Get Blob Properties (docs/wire/auth.md#response-header-overrides).
//!
//! ```text
//! if let Some(token) = parse_sas(raw_query) {
//!     let token = token?;
//!     let policy = token.si.as_deref().and_then(|id| container_acl.get(id));
//!     let grant = verify_sas(&token, &request, &account_keys, policy)?;
//!     // operation-specific checks with grant.resource_types / grant.permissions
//! }
//! ```
//!
//! No HTTP types and no clock reads in here. This file uses only std,
//! `hmac`, `sha2`, `base64` and `percent-encoding`, so it compiles both as a
//! server module and as a crate root.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use percent_encoding::percent_decode_str;
use sha2::Sha256;

use super::delegation::{self, Delegation, SignedFields};

type HmacSha256 = Hmac<Sha256>;

/// Oldest `sv` Stowage verifies; earlier forms are refused (docs/wire/auth.md#shared-access-signatures).
const MIN_SIGNED_VERSION: &str = "2015-04-05";
/// Service SAS adds `sr` and the snapshot time to the string-to-sign (docs/wire/auth.md#shared-access-signatures).
const SIGNED_RESOURCE_VERSION: &str = "2018-11-09";
/// Both SAS kinds add the encryption scope to the string-to-sign (docs/wire/auth.md#shared-access-signatures, docs/wire/auth.md#account-sas).
const ENCRYPTION_SCOPE_VERSION: &str = "2020-12-06";
/// Longest stored access policy name (docs/wire/auth.md#shared-access-signatures).
const MAX_IDENTIFIER_CHARS: usize = 64;

/// Query parameters that belong to a SAS token (docs/wire/requests.md#which-operation-a-request-is). They are
/// removed from the operation's view of the query and never count as unknown
/// parameters. (`api-version` is not a token field.)
pub const SAS_PARAMETERS: [&str; 31] = [
    "sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "sr", "si", "sig", "ses", "sdd", "rscc",
    "rscd", "rsce", "rscl", "rsct", "skoid", "sktid", "skt", "ske", "sks", "skv", "saoid", "suoid",
    "scid", "skdutid", "sduoid", "srh", "srq",
];

/// Whether a (decoded) query parameter name is a SAS token parameter.
/// Names match case-insensitively (docs/wire/requests.md#which-operation-a-request-is).
pub fn is_sas_parameter(name: &str) -> bool {
    SAS_PARAMETERS.iter().any(|p| p.eq_ignore_ascii_case(name))
}

/// The two kinds of SAS Stowage verifies (docs/wire/requests.md#etag-and-last-modified).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SasKind {
    /// `ss` and `srt` present: the whole account.
    Account,
    /// `sr` present: one container, blob, snapshot or version.
    Service,
}

/// A service SAS's `sr` (docs/wire/auth.md#shared-access-signatures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedResource {
    /// `sr=c`: any blob of the container, and List Blobs.
    Container,
    /// `sr=b`: one blob.
    Blob,
    /// `sr=bs`: one snapshot of a blob.
    BlobSnapshot,
    /// `sr=bv`: one version of a blob.
    BlobVersion,
}

/// An account SAS's `ss`: the services it is valid for (docs/wire/auth.md#account-sas).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Services {
    /// `b`
    pub blob: bool,
    /// `q`
    pub queue: bool,
    /// `t`
    pub table: bool,
    /// `f`
    pub file: bool,
}

/// An account SAS's `srt`: the resource types it is valid for (docs/wire/auth.md#account-sas).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceTypes {
    /// `s`: service-level operations (List Containers, service properties).
    pub service: bool,
    /// `c`: container operations (and List Blobs).
    pub container: bool,
    /// `o`: blob operations.
    pub object: bool,
}

/// `sip`: one IPv4 address or an inclusive range (docs/wire/auth.md#shared-access-signatures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Range {
    /// First address of the range.
    pub start: Ipv4Addr,
    /// Last address of the range (equal to `start` for a single address).
    pub end: Ipv4Addr,
}

impl Ipv4Range {
    /// Whether `ip` lies in the range. An IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`, what a dual-stack listener reports for an IPv4
    /// client) counts as its IPv4 address; any other IPv6 address is outside.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let v4 = match ip {
            IpAddr::V4(v4) => v4,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => v4,
                None => return false,
            },
        };
        self.start <= v4 && v4 <= self.end
    }
}

/// Every permission letter either SAS kind knows; bit `i` is letter `i`.
const PERMISSION_LETTERS: &str = "racwdxyltfmeopiu";
/// Service SAS letters (docs/wire/auth.md#sas-permissions, documented order `racwdxyltfmeopi`).
const SERVICE_LETTERS: &str = "racwdxyltfmeopi";
/// Account SAS letters (docs/wire/auth.md#account-sas).
const ACCOUNT_LETTERS: &str = "rwdxylacuptfi";

/// A set of SAS permission letters (`sp`, or a stored policy's Permission).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions(u16);

impl Permissions {
    /// Parses `sp` for a SAS of `kind`.
    ///
    /// **Stowage:** letters are accepted in any order, although the service
    /// documents a fixed order and calls others invalid; clients emit that
    /// order anyway (docs/wire/auth.md#sas-permissions).
    ///
    /// # Errors
    ///
    /// [`SasError::Malformed`] for an empty string, a letter the kind does
    /// not know, or a repeated letter.
    pub fn parse(letters: &str, kind: SasKind) -> Result<Self, SasError> {
        let allowed = match kind {
            SasKind::Service => SERVICE_LETTERS,
            SasKind::Account => ACCOUNT_LETTERS,
        };
        if letters.is_empty() {
            return Err(SasError::Malformed("sp is empty"));
        }
        let mut bits = 0u16;
        for letter in letters.chars() {
            let bit = letter_bit(letter)
                .filter(|_| allowed.contains(letter))
                .ok_or(SasError::Malformed("sp has an unknown permission letter"))?;
            if bits & bit != 0 {
                return Err(SasError::Malformed("sp repeats a permission letter"));
            }
            bits |= bit;
        }
        Ok(Self(bits))
    }

    /// Whether the set grants `letter`.
    pub fn contains(&self, letter: char) -> bool {
        letter_bit(letter).is_some_and(|bit| self.0 & bit != 0)
    }

    /// Whether the set grants at least one of `letters` (an operation that
    /// accepts, say, `c` or `w` asks `contains_any("cw")`).
    pub fn contains_any(&self, letters: &str) -> bool {
        letters.chars().any(|letter| self.contains(letter))
    }
}

fn letter_bit(letter: char) -> Option<u16> {
    PERMISSION_LETTERS.find(letter).map(|index| 1 << index)
}

/// Response header overrides of a service SAS (docs/wire/auth.md#response-header-overrides), decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseOverrides {
    /// `rscc`: replaces `Cache-Control`.
    pub cache_control: Option<String>,
    /// `rscd`: replaces `Content-Disposition`.
    pub content_disposition: Option<String>,
    /// `rsce`: replaces `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// `rscl`: replaces `Content-Language`.
    pub content_language: Option<String>,
    /// `rsct`: replaces `Content-Type`.
    pub content_type: Option<String>,
}

/// A SAS token read from the query: the percent-decoded fields (an empty
/// value counts as absent, as it signs the same) and their parsed forms.
/// Field names are the query parameter names of docs/wire/auth.md#shared-access-signatures / docs/wire/auth.md#account-sas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasToken {
    /// Account or service SAS.
    pub kind: SasKind,
    /// signedVersion: selects the string-to-sign layout.
    pub sv: String,
    /// signedServices (account SAS).
    pub ss: Option<String>,
    /// signedResourceTypes (account SAS).
    pub srt: Option<String>,
    /// signedPermissions.
    pub sp: Option<String>,
    /// signedStart.
    pub st: Option<String>,
    /// signedExpiry.
    pub se: Option<String>,
    /// signedIP.
    pub sip: Option<String>,
    /// signedProtocol.
    pub spr: Option<String>,
    /// signedResource (service SAS).
    pub sr: Option<String>,
    /// signedIdentifier: a stored access policy of the container.
    pub si: Option<String>,
    /// signedEncryptionScope (refused, 501).
    pub ses: Option<String>,
    /// Cache-Control override.
    pub rscc: Option<String>,
    /// Content-Disposition override.
    pub rscd: Option<String>,
    /// Content-Encoding override.
    pub rsce: Option<String>,
    /// Content-Language override.
    pub rscl: Option<String>,
    /// Content-Type override.
    pub rsct: Option<String>,
    /// The signature, base64.
    pub sig: String,
    /// `ss`, parsed (account SAS).
    pub services: Option<Services>,
    /// `srt`, parsed (account SAS).
    pub resource_types: Option<ResourceTypes>,
    /// `sr`, parsed (service SAS).
    pub resource: Option<SignedResource>,
    /// `sp`, parsed, when in the URL.
    pub permissions: Option<Permissions>,
    /// `st`, parsed, when in the URL.
    pub start: Option<SystemTime>,
    /// `se`, parsed, when in the URL.
    pub expiry: Option<SystemTime>,
    /// `sip`, parsed.
    pub ip_range: Option<Ipv4Range>,
    /// `spr=https`: plain HTTP is refused.
    pub https_only: bool,
    /// The user delegation fields (`skoid`, `sktid`, ...) of a user
    /// delegation SAS, which is signed with a delegation key instead of the
    /// account key and otherwise checked as a service SAS.
    pub delegation: Option<Box<Delegation>>,
}

/// A stored access policy (`SignedIdentifier` of the container ACL) as
/// stored: `Start`, `Expiry`, `Permission` in their wire form (docs/wire/auth.md#stored-access-policies).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredPolicy {
    /// `Start`, ISO 8601.
    pub start: Option<String>,
    /// `Expiry`, ISO 8601.
    pub expiry: Option<String>,
    /// `Permission` letters.
    pub permission: Option<String>,
}

/// What the SAS checks need to know about the request.
#[derive(Debug, Clone, Copy)]
pub struct SasRequest<'a> {
    /// The account from the URL.
    pub account: &'a str,
    /// The container from the URL, decoded.
    pub container: Option<&'a str>,
    /// The blob name from the URL, decoded.
    pub blob: Option<&'a str>,
    /// The request's `snapshot` query value (signed as signedSnapshotTime
    /// for `sr=bs`); for `sr=bv` pass the `versionid` value here.
    pub snapshot: Option<&'a str>,
    /// Current time, from the injected clock.
    pub now: SystemTime,
    /// The client's address, when known.
    pub client_ip: Option<IpAddr>,
    /// Whether the request came over HTTPS.
    pub https: bool,
}

/// What a verified SAS allows; the server checks the operation against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SasGrant {
    /// Account or service SAS.
    pub kind: SasKind,
    /// Effective permissions (from the URL or the stored policy).
    pub permissions: Permissions,
    /// `srt` of an account SAS; `None` for a service SAS.
    pub resource_types: Option<ResourceTypes>,
    /// `sr` of a service SAS; `None` for an account SAS.
    pub resource: Option<SignedResource>,
    /// Response header overrides; always empty for an account SAS, whose
    /// string-to-sign does not cover them.
    pub overrides: ResponseOverrides,
}

/// Why a SAS is refused. Each variant notes the service answer
/// (docs/wire/auth.md#sas-validity-checks, docs/wire/auth.md#refusals).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SasError {
    /// A required field is missing (after merging the stored policy) or a
    /// field cannot be parsed; the text says which. Answer:
    /// `403 AuthenticationFailed` ("Signature fields not well formed.",
    /// unverified text).
    Malformed(&'static str),
    /// `sv` older than 2015-04-05 (2018-11-09 for a user delegation SAS),
    /// `sr=d` (hierarchical namespace), or a user delegation SAS tied to a
    /// second identity or to request headers (`sduoid`, `skdutid`, `srh`,
    /// `srq`). **Stowage:** not supported. Answer: `403 AuthenticationFailed`.
    UnsupportedKind,
    /// `si` names no policy of the container (never existed, deleted,
    /// renamed). Answer: `403 AuthenticationFailed`.
    PolicyNotFound,
    /// The field (named by its query parameter: `st`, `se` or `sp`) is both
    /// in the URL and in the stored policy. Answer:
    /// `400 InvalidQueryParameterValue` with that `QueryParameterName`.
    PolicyFieldConflict(&'static str),
    /// No key reproduces `sig`. Answer: `403 AuthenticationFailed`
    /// (`"Signature did not match. String to sign used was <string>"`).
    SignatureMismatch {
        /// The string-to-sign the server computed.
        string_to_sign: String,
    },
    /// Before `st` or at/after `se`. Answer: `403 AuthenticationFailed`
    /// ("Signature not valid in the specified time frame", unverified).
    OutsideTimeWindow,
    /// A user delegation SAS whose key is not valid now (before `skt` or
    /// at/after `ske`). Answer: `403 AuthenticationFailed` (detail text
    /// unverified).
    KeyOutsideTimeWindow,
    /// The client address (here, empty when unknown) is outside `sip`.
    /// Answer: `403 AuthorizationSourceIPMismatch`.
    SourceIpMismatch(String),
    /// `spr=https` on a plain HTTP request.
    /// Answer: `403 AuthorizationProtocolMismatch`.
    ProtocolMismatch,
    /// An account SAS whose `ss` lacks `b`.
    /// Answer: `403 AuthorizationServiceMismatch`.
    ServiceMismatch,
    /// `ses` is present. **Stowage:** encryption scopes are not supported.
    /// Answer: `501 NotImplemented`.
    EncryptionScopeNotSupported,
}

impl fmt::Display for SasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(detail) => write!(f, "Signature fields not well formed: {detail}."),
            Self::UnsupportedKind => {
                f.write_str("This kind of shared access signature is not supported.")
            }
            Self::PolicyNotFound => {
                f.write_str("The stored access policy named by si does not exist.")
            }
            Self::PolicyFieldConflict(field) => {
                write!(
                    f,
                    "{field} is given both in the URL and in the stored access policy."
                )
            }
            Self::SignatureMismatch { string_to_sign } => {
                write!(
                    f,
                    "Signature did not match. String to sign used was {string_to_sign}"
                )
            }
            Self::OutsideTimeWindow => {
                f.write_str("Signature not valid in the specified time frame")
            }
            Self::KeyOutsideTimeWindow => {
                f.write_str("The user delegation key is not valid in the specified time frame")
            }
            Self::SourceIpMismatch(ip) => write!(f, "source IP {ip} is outside sip"),
            Self::ProtocolMismatch => f.write_str("the signature requires HTTPS"),
            Self::ServiceMismatch => f.write_str("the signature does not cover the blob service"),
            Self::EncryptionScopeNotSupported => f.write_str("encryption scopes are not supported"),
        }
    }
}

impl std::error::Error for SasError {}

/// Reads a SAS token from the raw (still encoded) query.
///
/// Returns `None` when the query has no `sig` parameter (not a SAS
/// request). Parameter names match case-insensitively; values are
/// percent-decoded once, `+` staying `+` (docs/wire/requests.md#addressing).
///
/// # Errors
///
/// `Some(Err(_))` with [`SasError::Malformed`] for a repeated SAS
/// parameter, a missing `sv`, neither `ss`+`srt` nor `sr`, or a field that
/// does not parse; [`SasError::UnsupportedKind`] for user delegation,
/// `sv` < 2015-04-05 or `sr=d`. Missing `sp`/`se` are not errors here: a
/// stored policy may supply them ([`verify_sas`]).
pub fn parse_sas(raw_query: &str) -> Option<Result<SasToken, SasError>> {
    let mut fields: BTreeMap<&'static str, String> = BTreeMap::new();
    let mut repeated = false;
    for pair in raw_query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = decode(name);
        let Some(known) = SAS_PARAMETERS
            .iter()
            .find(|p| p.eq_ignore_ascii_case(&name))
        else {
            continue;
        };
        repeated |= fields.insert(known, decode(value)).is_some();
    }
    if !fields.contains_key("sig") {
        return None;
    }
    if repeated {
        return Some(Err(SasError::Malformed("a SAS parameter is repeated")));
    }
    Some(build_token(fields))
}

fn build_token(mut fields: BTreeMap<&'static str, String>) -> Result<SasToken, SasError> {
    let mut take = |name: &str| fields.remove(name).filter(|value| !value.is_empty());
    let sig = take("sig").ok_or(SasError::Malformed("sig is empty"))?;
    let sv = take("sv").ok_or(SasError::Malformed("sv is missing"))?;
    if !is_version(&sv) {
        return Err(SasError::Malformed("sv is not a YYYY-MM-DD version"));
    }
    if sv.as_str() < MIN_SIGNED_VERSION {
        return Err(SasError::UnsupportedKind);
    }
    let delegation = delegation::parse(&mut take, &sv)?.map(Box::new);
    let (ss, srt, sr) = (take("ss"), take("srt"), take("sr"));
    if delegation.is_some() && (sr.is_none() || ss.is_some() || srt.is_some()) {
        return Err(SasError::Malformed(
            "a user delegation SAS has sr and no ss, srt",
        ));
    }
    let kind = if ss.is_some() && srt.is_some() {
        SasKind::Account
    } else if sr.is_some() {
        SasKind::Service
    } else {
        return Err(SasError::Malformed("neither ss and srt nor sr"));
    };
    let (services, resource_types, resource) = match kind {
        SasKind::Account => (
            ss.as_deref().map(parse_services).transpose()?,
            srt.as_deref().map(parse_resource_types).transpose()?,
            None,
        ),
        SasKind::Service => (
            None,
            None,
            sr.as_deref().map(parse_signed_resource).transpose()?,
        ),
    };
    let sp = take("sp");
    let permissions = sp
        .as_deref()
        .map(|sp| Permissions::parse(sp, kind))
        .transpose()?;
    let (st, se) = (take("st"), take("se"));
    let start = st
        .as_deref()
        .map(|t| parse_sas_time(t).ok_or(SasError::Malformed("st is not a valid time")))
        .transpose()?;
    let expiry = se
        .as_deref()
        .map(|t| parse_sas_time(t).ok_or(SasError::Malformed("se is not a valid time")))
        .transpose()?;
    let sip = take("sip");
    let ip_range = sip.as_deref().map(parse_ip_range).transpose()?;
    let spr = take("spr");
    let https_only = match spr.as_deref() {
        None | Some("https,http" | "http,https") => false,
        Some("https") => true,
        Some(_) => return Err(SasError::Malformed("spr is neither https nor https,http")),
    };
    let si = take("si");
    if delegation.is_some() && si.is_some() {
        return Err(SasError::Malformed(
            "a user delegation SAS cannot name a stored access policy",
        ));
    }
    if si
        .as_ref()
        .is_some_and(|si| si.chars().count() > MAX_IDENTIFIER_CHARS)
    {
        return Err(SasError::Malformed("si is longer than 64 characters"));
    }
    Ok(SasToken {
        kind,
        sv,
        ss,
        srt,
        sp,
        st,
        se,
        sip,
        spr,
        sr,
        si,
        ses: take("ses"),
        rscc: take("rscc"),
        rscd: take("rscd"),
        rsce: take("rsce"),
        rscl: take("rscl"),
        rsct: take("rsct"),
        sig,
        services,
        resource_types,
        resource,
        permissions,
        start,
        expiry,
        ip_range,
        https_only,
        delegation,
    })
}

/// Runs the operation-independent checks of docs/wire/auth.md#sas-validity-checks, in its order, and returns
/// what the token grants.
///
/// 1. Merge the stored policy when `si` is set (service SAS only; docs/wire/auth.md#stored-access-policies) and
///    require `sp` and `se`. `policy` is the container's policy named by
///    `token.si`, `None` when there is none; it is ignored for an account
///    SAS and when `si` is absent.
/// 2. The signature, with each of `keys` (decoded; key1 then key2), over the
///    string-to-sign of [`string_to_sign`]. For a service SAS the URL must lie
///    inside the signed resource, because the canonicalized resource is
///    built from the URL.
/// 3. `st` ≤ now < `se`.
/// 4. `sip` contains the client address.
/// 5. `spr=https` requires HTTPS.
/// 6. Account SAS: `ss` contains `b`.
///
/// Then `ses` is refused as unsupported (after the checks, so an
/// unauthenticated request learns nothing more than 403).
///
/// # Errors
///
/// The [`SasError`] of the first failing check.
pub fn verify_sas(
    token: &SasToken,
    req: &SasRequest,
    keys: &[Vec<u8>],
    policy: Option<&StoredPolicy>,
) -> Result<SasGrant, SasError> {
    let effective = merge_policy(token, policy)?;
    let candidates = strings_to_sign(token, req);
    let signing_keys: Vec<Vec<u8>> = keys.iter().map(|k| signing_key(token, req, k)).collect();
    if !candidates
        .iter()
        .any(|s| signature_matches(&signing_keys, s, &token.sig))
    {
        let string_to_sign = candidates.into_iter().next().unwrap_or_default();
        return Err(SasError::SignatureMismatch { string_to_sign });
    }
    let not_yet_valid = effective.start.is_some_and(|start| req.now < start);
    if not_yet_valid || req.now >= effective.expiry {
        return Err(SasError::OutsideTimeWindow);
    }
    if let Some(d) = &token.delegation
        && !d.key_valid_at(req.now)
    {
        return Err(SasError::KeyOutsideTimeWindow);
    }
    if let Some(range) = token.ip_range
        && !req.client_ip.is_some_and(|ip| range.contains(ip))
    {
        let ip = req.client_ip.map(|ip| ip.to_string()).unwrap_or_default();
        return Err(SasError::SourceIpMismatch(ip));
    }
    if token.https_only && !req.https {
        return Err(SasError::ProtocolMismatch);
    }
    if token.kind == SasKind::Account && !token.services.is_some_and(|s| s.blob) {
        return Err(SasError::ServiceMismatch);
    }
    if token.ses.is_some() {
        return Err(SasError::EncryptionScopeNotSupported);
    }
    let overrides = match token.kind {
        SasKind::Account => ResponseOverrides::default(),
        SasKind::Service => ResponseOverrides {
            cache_control: token.rscc.clone(),
            content_disposition: token.rscd.clone(),
            content_encoding: token.rsce.clone(),
            content_language: token.rscl.clone(),
            content_type: token.rsct.clone(),
        },
    };
    Ok(SasGrant {
        kind: token.kind,
        permissions: effective.permissions,
        resource_types: token.resource_types,
        resource: token.resource,
        overrides,
    })
}

/// The key that signs `token`: the account key (decoded), or for a user
/// delegation SAS the delegation key derived from it and the token's key
/// fields.
pub fn signing_key(token: &SasToken, req: &SasRequest, account_key: &[u8]) -> Vec<u8> {
    match &token.delegation {
        Some(d) => delegation::derive_key(account_key, req.account, &d.key_fields()),
        None => account_key.to_vec(),
    }
}

/// The string the client signed: docs/wire/auth.md#shared-access-signatures (service SAS, layout chosen by `sv`),
/// docs/wire/auth.md#account-sas (account SAS), or the user delegation layout (the primary one of
/// [`delegation::strings_to_sign`]). Fields are the token's own, so a field
/// that comes from a stored policy signs as an empty line.
pub fn string_to_sign(token: &SasToken, req: &SasRequest) -> String {
    strings_to_sign(token, req)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// Every string a client may have signed for `token`, the primary first:
/// one, except for user delegation layouts that clients write two ways.
fn strings_to_sign(token: &SasToken, req: &SasRequest) -> Vec<String> {
    if let Some(d) = &token.delegation {
        fn field(value: &Option<String>) -> &str {
            value.as_deref().unwrap_or("")
        }
        let snapshot = match token.resource {
            Some(SignedResource::BlobSnapshot | SignedResource::BlobVersion) => {
                req.snapshot.unwrap_or("")
            }
            _ => "",
        };
        let resource = canonicalized_resource(token.resource, req);
        let fields = SignedFields {
            sp: field(&token.sp),
            st: field(&token.st),
            se: field(&token.se),
            canonicalized_resource: &resource,
            sip: field(&token.sip),
            spr: field(&token.spr),
            sv: &token.sv,
            sr: field(&token.sr),
            snapshot,
            ses: field(&token.ses),
            overrides: [
                field(&token.rscc),
                field(&token.rscd),
                field(&token.rsce),
                field(&token.rscl),
                field(&token.rsct),
            ],
        };
        return delegation::strings_to_sign(d, &fields);
    }
    vec![account_or_service_string_to_sign(token, req)]
}

fn account_or_service_string_to_sign(token: &SasToken, req: &SasRequest) -> String {
    let field = |value: &Option<String>| value.as_deref().unwrap_or("").to_owned();
    let with_scope = token.sv.as_str() >= ENCRYPTION_SCOPE_VERSION;
    match token.kind {
        SasKind::Account => {
            let mut fields = vec![
                req.account.to_owned(),
                field(&token.sp),
                field(&token.ss),
                field(&token.srt),
                field(&token.st),
                field(&token.se),
                field(&token.sip),
                field(&token.spr),
                token.sv.clone(),
            ];
            if with_scope {
                fields.push(field(&token.ses));
            }
            // Unlike the service SAS, the account layout ends with "\n".
            let mut out = fields.join("\n");
            out.push('\n');
            out
        }
        SasKind::Service => {
            let mut fields = vec![
                field(&token.sp),
                field(&token.st),
                field(&token.se),
                canonicalized_resource(token.resource, req),
                field(&token.si),
                field(&token.sip),
                field(&token.spr),
                token.sv.clone(),
            ];
            if token.sv.as_str() >= SIGNED_RESOURCE_VERSION {
                // signedSnapshotTime is not a token field: it comes from the URL.
                let snapshot = match token.resource {
                    Some(SignedResource::BlobSnapshot | SignedResource::BlobVersion) => {
                        req.snapshot.unwrap_or("")
                    }
                    _ => "",
                };
                fields.push(field(&token.sr));
                fields.push(snapshot.to_owned());
                if with_scope {
                    fields.push(field(&token.ses));
                }
            }
            for value in [
                &token.rscc,
                &token.rscd,
                &token.rsce,
                &token.rscl,
                &token.rsct,
            ] {
                fields.push(field(value));
            }
            fields.join("\n")
        }
    }
}

/// Base64 of HMAC-SHA256 of `string_to_sign` under the decoded account key.
pub fn sign(key: &[u8], string_to_sign: &str) -> String {
    STANDARD.encode(mac(key, string_to_sign).finalize().into_bytes())
}

/// Parses a SAS / ACL time (docs/wire/requests.md#dates-and-times): `YYYY-MM-DD`,
/// `YYYY-MM-DDThh:mmZ`, `YYYY-MM-DDThh:mm:ssZ`, or the last with a fraction
/// of 1 to 7 digits. Always UTC. Returns `None` for anything else, including
/// impossible dates such as February 30.
pub fn parse_sas_time(s: &str) -> Option<SystemTime> {
    if !s.is_ascii() || s.len() < 10 {
        return None;
    }
    let (date, clock) = s.split_at(10);
    if date.as_bytes()[4] != b'-' || date.as_bytes()[7] != b'-' {
        return None;
    }
    let year = digits(&date[0..4])?;
    let month = digits(&date[5..7])?;
    let day = digits(&date[8..10])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let (hour, minute, second, nanos) = if clock.is_empty() {
        (0, 0, 0, 0)
    } else {
        parse_clock(clock)?
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second;
    let whole = Duration::from_secs(seconds.unsigned_abs());
    let at_second = if seconds >= 0 {
        UNIX_EPOCH.checked_add(whole)?
    } else {
        UNIX_EPOCH.checked_sub(whole)?
    };
    at_second.checked_add(Duration::from_nanos(nanos))
}

/// `Thh:mmZ`, `Thh:mm:ssZ` or `Thh:mm:ss.fffffffZ` → (h, m, s, nanoseconds).
fn parse_clock(clock: &str) -> Option<(i64, i64, i64, u64)> {
    let inner = clock.strip_prefix('T')?.strip_suffix('Z')?;
    if inner.len() < 5 || inner.as_bytes()[2] != b':' {
        return None;
    }
    let hour = digits(&inner[0..2])?;
    let minute = digits(&inner[3..5])?;
    let (second, nanos) = match &inner[5..] {
        "" => (0, 0),
        rest => {
            let rest = rest.strip_prefix(':')?;
            let (whole, fraction) = match rest.split_once('.') {
                Some((whole, fraction)) => (whole, Some(fraction)),
                None => (rest, None),
            };
            if whole.len() != 2 {
                return None;
            }
            let nanos = match fraction {
                None => 0,
                // Right-padded to nanoseconds: ".5" is 500 ms.
                Some(f) if (1..=7).contains(&f.len()) => {
                    u64::try_from(digits(&format!("{f:0<9}"))?).ok()?
                }
                Some(_) => return None,
            };
            (digits(whole)?, nanos)
        }
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some((hour, minute, second, nanos))
}

/// A non-empty run of ASCII digits as a number (`str::parse` would also
/// accept a sign).
fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// days-from-civil).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

struct EffectiveFields {
    permissions: Permissions,
    start: Option<SystemTime>,
    expiry: SystemTime,
}

/// docs/wire/auth.md#stored-access-policies: the stored policy fills in `st`, `se`, `sp`; a field in both is a
/// conflict, a field in neither (`se`, `sp`) is missing.
fn merge_policy(
    token: &SasToken,
    policy: Option<&StoredPolicy>,
) -> Result<EffectiveFields, SasError> {
    let mut permissions = token.permissions;
    let mut start = token.start;
    let mut expiry = token.expiry;
    if token.kind == SasKind::Service && token.si.is_some() {
        let policy = policy.ok_or(SasError::PolicyNotFound)?;
        // An empty ACL element stores nothing.
        let given = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
        let (policy_start, policy_expiry, policy_permission) = (
            given(&policy.start),
            given(&policy.expiry),
            given(&policy.permission),
        );
        for (in_url, in_policy, name) in [
            (token.st.is_some(), policy_start.is_some(), "st"),
            (token.se.is_some(), policy_expiry.is_some(), "se"),
            (token.sp.is_some(), policy_permission.is_some(), "sp"),
        ] {
            if in_url && in_policy {
                return Err(SasError::PolicyFieldConflict(name));
            }
        }
        if let Some(value) = policy_start {
            let time = parse_sas_time(&value)
                .ok_or(SasError::Malformed("policy Start is not a valid time"))?;
            start = Some(time);
        }
        if let Some(value) = policy_expiry {
            let time = parse_sas_time(&value)
                .ok_or(SasError::Malformed("policy Expiry is not a valid time"))?;
            expiry = Some(time);
        }
        if let Some(value) = policy_permission {
            permissions = Some(Permissions::parse(&value, SasKind::Service)?);
        }
    }
    Ok(EffectiveFields {
        permissions: permissions.ok_or(SasError::Malformed("sp is missing"))?,
        start,
        expiry: expiry.ok_or(SasError::Malformed("se is missing"))?,
    })
}

/// docs/wire/auth.md#shared-access-signatures: `/blob/<account>/<container>[/<blob>]` from the request URL, with
/// the decoded blob name and the account once (also for path-style URLs).
fn canonicalized_resource(resource: Option<SignedResource>, req: &SasRequest) -> String {
    let mut out = format!("/blob/{}/{}", req.account, req.container.unwrap_or(""));
    if resource != Some(SignedResource::Container)
        && let Some(blob) = req.blob
    {
        out.push('/');
        out.push_str(blob);
    }
    out
}

fn mac(key: &[u8], message: &str) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(message.as_bytes());
    mac
}

/// Constant-time comparison with each key in turn.
fn signature_matches(keys: &[Vec<u8>], string_to_sign: &str, sig: &str) -> bool {
    let Ok(presented) = STANDARD.decode(sig) else {
        return false;
    };
    keys.iter()
        .any(|key| mac(key, string_to_sign).verify_slice(&presented).is_ok())
}

fn is_version(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, &c)| {
            if i == 4 || i == 7 {
                c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

fn parse_services(letters: &str) -> Result<Services, SasError> {
    let mut services = Services::default();
    for letter in letters.chars() {
        let flag = match letter {
            'b' => &mut services.blob,
            'q' => &mut services.queue,
            't' => &mut services.table,
            'f' => &mut services.file,
            _ => return Err(SasError::Malformed("ss has an unknown service letter")),
        };
        if std::mem::replace(flag, true) {
            return Err(SasError::Malformed("ss repeats a service letter"));
        }
    }
    Ok(services)
}

fn parse_resource_types(letters: &str) -> Result<ResourceTypes, SasError> {
    let mut types = ResourceTypes::default();
    for letter in letters.chars() {
        let flag = match letter {
            's' => &mut types.service,
            'c' => &mut types.container,
            'o' => &mut types.object,
            _ => {
                return Err(SasError::Malformed(
                    "srt has an unknown resource type letter",
                ));
            }
        };
        if std::mem::replace(flag, true) {
            return Err(SasError::Malformed("srt repeats a resource type letter"));
        }
    }
    Ok(types)
}

fn parse_signed_resource(sr: &str) -> Result<SignedResource, SasError> {
    match sr {
        "c" => Ok(SignedResource::Container),
        "b" => Ok(SignedResource::Blob),
        "bs" => Ok(SignedResource::BlobSnapshot),
        "bv" => Ok(SignedResource::BlobVersion),
        // Directory SAS needs a hierarchical namespace, which Stowage lacks.
        "d" => Err(SasError::UnsupportedKind),
        _ => Err(SasError::Malformed("sr is not b, bs, bv or c")),
    }
}

/// `a.b.c.d` or `a.b.c.d-e.f.g.h` (IPv4 only, as the service documents).
fn parse_ip_range(sip: &str) -> Result<Ipv4Range, SasError> {
    let malformed = SasError::Malformed("sip is not an IPv4 address or range");
    let (start, end) = sip.split_once('-').unwrap_or((sip, sip));
    let start: Ipv4Addr = start.parse().map_err(|_| malformed.clone())?;
    let end: Ipv4Addr = end.parse().map_err(|_| malformed.clone())?;
    if start > end {
        return Err(malformed);
    }
    Ok(Ipv4Range { start, end })
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
#[path = "sas_tests.rs"]
mod tests;
