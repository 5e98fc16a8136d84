//! User delegation: the key Get User Delegation Key hands out, and the
//! fields and string-to-sign of a user delegation SAS
//! (docs/wire/oauth.md).
//!
//! Pure logic. The service keeps each delegation key it issues; Stowage
//! keeps none: the key's value is an HMAC, under the account key, of the
//! fields the key is issued with (account, `skoid`, `sktid`, `skt`, `ske`,
//! `sks`, `skv`). A user delegation SAS carries exactly those fields, so
//! [`derive_key`] computes the key again from the token, and a changed field
//! gives another key and a signature that does not match.

use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::sas::{SasError, parse_sas_time};

/// Oldest `sv` of a user delegation SAS.
pub const MIN_SIGNED_VERSION: &str = "2018-11-09";
/// `saoid`, `suoid` and `scid` join the string-to-sign.
const AGENT_FIELDS_VERSION: &str = "2020-02-10";
/// `ses` joins the string-to-sign (as for a service SAS).
const ENCRYPTION_SCOPE_VERSION: &str = "2020-12-06";
/// `skdutid` and `sduoid` join the string-to-sign; so, in current clients,
/// do the request header and query lines (`srh`, `srq`), whose first version
/// is not confirmed: from this version both layouts are tried.
const DELEGATED_USER_VERSION: &str = "2025-07-05";
/// The only service a blob delegation key is for.
const BLOB_SERVICE: &str = "b";
/// Separates Stowage's derivation from any other use of the account key.
const DERIVATION_LABEL: &str = "stowage-user-delegation-key";

/// The fields of a delegation key, as a SAS or a Get User Delegation Key
/// answer spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyFields<'a> {
    /// `skoid` / `SignedOid`.
    pub oid: &'a str,
    /// `sktid` / `SignedTid`.
    pub tid: &'a str,
    /// `skt` / `SignedStart`.
    pub start: &'a str,
    /// `ske` / `SignedExpiry`.
    pub expiry: &'a str,
    /// `sks` / `SignedService`.
    pub service: &'a str,
    /// `skv` / `SignedVersion`.
    pub version: &'a str,
}

/// The delegation key of `fields` for `account`, derived from one of the
/// account's (decoded) keys. Base64 of it is the `Value` Get User
/// Delegation Key answers; the raw bytes sign the SAS.
pub fn derive_key(account_key: &[u8], account: &str, fields: &KeyFields<'_>) -> Vec<u8> {
    let message = [
        DERIVATION_LABEL,
        account,
        fields.oid,
        fields.tid,
        fields.start,
        fields.expiry,
        fields.service,
        fields.version,
    ]
    .join("\n");
    let mut mac =
        Hmac::<Sha256>::new_from_slice(account_key).expect("HMAC accepts keys of any length");
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// [`derive_key`] as the base64 `Value` of a Get User Delegation Key answer.
pub fn key_value(account_key: &[u8], account: &str, fields: &KeyFields<'_>) -> String {
    STANDARD.encode(derive_key(account_key, account, fields))
}

/// The user delegation fields of a SAS token, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegation {
    /// `skoid`
    pub skoid: String,
    /// `sktid`
    pub sktid: String,
    /// `skt`
    pub skt: String,
    /// `ske`
    pub ske: String,
    /// `sks`
    pub sks: String,
    /// `skv`
    pub skv: String,
    /// `saoid`: signed, otherwise unused (it names a user for the POSIX ACL
    /// checks of a hierarchical namespace, which Stowage does not have).
    pub saoid: Option<String>,
    /// `suoid`: signed, otherwise unused (as `saoid`).
    pub suoid: Option<String>,
    /// `scid`: a correlation id, signed and otherwise unused.
    pub scid: Option<String>,
    /// `skt`, parsed.
    pub key_start: SystemTime,
    /// `ske`, parsed.
    pub key_expiry: SystemTime,
}

impl Delegation {
    /// The key fields, for [`derive_key`].
    pub fn key_fields(&self) -> KeyFields<'_> {
        KeyFields {
            oid: &self.skoid,
            tid: &self.sktid,
            start: &self.skt,
            expiry: &self.ske,
            service: &self.sks,
            version: &self.skv,
        }
    }

    /// Whether the key is valid at `now` (`skt` ≤ now < `ske`).
    pub fn key_valid_at(&self, now: SystemTime) -> bool {
        self.key_start <= now && now < self.key_expiry
    }
}

/// Reads the delegation fields through `take` (which removes a field from
/// the query and returns its decoded, non-empty value). `None` when the
/// token has neither `skoid` nor `sktid`: not a user delegation SAS.
///
/// # Errors
/// [`SasError::Malformed`] for a missing key field, `sks` other than `b`,
/// an `skv` that is not a version or times that do not parse;
/// [`SasError::UnsupportedKind`] for `sduoid`, `skdutid`, `srh` or `srq`
/// (a SAS tied to a second identity, or to request headers: not
/// supported) and for `sv` older than 2018-11-09.
pub fn parse(
    take: &mut dyn FnMut(&str) -> Option<String>,
    sv: &str,
) -> Result<Option<Delegation>, SasError> {
    let (skoid, sktid) = (take("skoid"), take("sktid"));
    if skoid.is_none() && sktid.is_none() {
        return Ok(None);
    }
    if sv < MIN_SIGNED_VERSION {
        return Err(SasError::UnsupportedKind);
    }
    for unsupported in ["sduoid", "skdutid", "srh", "srq"] {
        if take(unsupported).is_some() {
            return Err(SasError::UnsupportedKind);
        }
    }
    let missing = |name: &'static str| SasError::Malformed(name);
    let skoid = skoid.ok_or(missing("skoid is missing"))?;
    let sktid = sktid.ok_or(missing("sktid is missing"))?;
    let skt = take("skt").ok_or(missing("skt is missing"))?;
    let ske = take("ske").ok_or(missing("ske is missing"))?;
    let sks = take("sks").ok_or(missing("sks is missing"))?;
    let skv = take("skv").ok_or(missing("skv is missing"))?;
    if sks != BLOB_SERVICE {
        return Err(SasError::Malformed("sks is not b"));
    }
    if !is_version(&skv) {
        return Err(SasError::Malformed("skv is not a YYYY-MM-DD version"));
    }
    let key_start = parse_sas_time(&skt).ok_or(missing("skt is not a valid time"))?;
    let key_expiry = parse_sas_time(&ske).ok_or(missing("ske is not a valid time"))?;
    Ok(Some(Delegation {
        skoid,
        sktid,
        skt,
        ske,
        sks,
        skv,
        saoid: take("saoid"),
        suoid: take("suoid"),
        scid: take("scid"),
        key_start,
        key_expiry,
    }))
}

/// The token fields of a service-shaped SAS that the user delegation
/// string-to-sign reads besides the delegation fields, each decoded (empty
/// when absent), and the two that come from the request.
#[derive(Debug, Clone, Copy)]
pub struct SignedFields<'a> {
    /// `sp`
    pub sp: &'a str,
    /// `st`
    pub st: &'a str,
    /// `se`
    pub se: &'a str,
    /// `/blob/<account>/<container>[/<blob>]`, from the URL.
    pub canonicalized_resource: &'a str,
    /// `sip`
    pub sip: &'a str,
    /// `spr`
    pub spr: &'a str,
    /// `sv`
    pub sv: &'a str,
    /// `sr`
    pub sr: &'a str,
    /// The snapshot or version the URL names, for `sr=bs` / `bv`.
    pub snapshot: &'a str,
    /// `ses`
    pub ses: &'a str,
    /// `rscc`, `rscd`, `rsce`, `rscl`, `rsct`, in that order.
    pub overrides: [&'a str; 5],
}

/// The strings a client may have signed for this user delegation SAS, the
/// primary one first. Fields are joined with `\n`, no trailing newline:
///
/// `sp, st, se, canonicalizedResource, skoid, sktid, skt, ske, sks, skv,`
/// then `saoid, suoid, scid` (sv ≥ 2020-02-10), then `skdutid, sduoid`
/// (sv ≥ 2025-07-05; always empty here), then `sip, spr, sv, sr,
/// snapshotTime`, then `ses` (sv ≥ 2020-12-06), then `srh, srq` (empty;
/// from 2025-07-05 the layout with and the layout without these two lines
/// are both tried, the first version that has them being unconfirmed), then
/// `rscc, rscd, rsce, rscl, rsct`.
pub fn strings_to_sign(d: &Delegation, f: &SignedFields<'_>) -> Vec<String> {
    let build = |request_lines: bool| {
        let mut fields: Vec<&str> = vec![
            f.sp,
            f.st,
            f.se,
            f.canonicalized_resource,
            &d.skoid,
            &d.sktid,
            &d.skt,
            &d.ske,
            &d.sks,
            &d.skv,
        ];
        if f.sv >= AGENT_FIELDS_VERSION {
            fields.push(d.saoid.as_deref().unwrap_or(""));
            fields.push(d.suoid.as_deref().unwrap_or(""));
            fields.push(d.scid.as_deref().unwrap_or(""));
        }
        if f.sv >= DELEGATED_USER_VERSION {
            // skdutid, sduoid: refused when present (see `parse`).
            fields.extend(["", ""]);
        }
        fields.extend([f.sip, f.spr, f.sv, f.sr, f.snapshot]);
        if f.sv >= ENCRYPTION_SCOPE_VERSION {
            fields.push(f.ses);
        }
        if request_lines {
            // srh, srq: refused when present (see `parse`).
            fields.extend(["", ""]);
        }
        fields.extend(f.overrides);
        fields.join("\n")
    };
    if f.sv >= DELEGATED_USER_VERSION {
        vec![build(true), build(false)]
    } else {
        vec![build(false)]
    }
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

#[cfg(test)]
#[path = "delegation_tests.rs"]
mod tests;
