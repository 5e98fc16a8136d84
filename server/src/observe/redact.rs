//! What the debug log must never show in clear: the signature of a shared
//! access signature (`sig=`), and the secret part of an `Authorization`
//! header (a Shared Key signature or a bearer token). Everything else of a
//! request is logged as sent.

use std::borrow::Cow;

/// What replaces a secret.
pub(crate) const REDACTED: &str = "REDACTED";

/// Headers whose whole value is a credential: the scheme (and for Shared
/// Key the account) stays, the secret goes.
const CREDENTIAL_HEADERS: &[&str] = &["authorization", "x-ms-copy-source-authorization"];

/// `query` (without the `?`) with the value of every `sig` parameter
/// replaced. Parameter names are compared without case, as a client may
/// write `Sig=`.
pub(crate) fn redact_query(query: &str) -> Cow<'_, str> {
    if !contains_sig(query) {
        return Cow::Borrowed(query);
    }
    let parts: Vec<Cow<'_, str>> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if name.eq_ignore_ascii_case("sig") => {
                Cow::Owned(format!("{name}={REDACTED}"))
            }
            _ => Cow::Borrowed(pair),
        })
        .collect();
    Cow::Owned(parts.join("&"))
}

/// A request target or URL with its query's signatures redacted.
pub(crate) fn redact_url(url: &str) -> Cow<'_, str> {
    match url.split_once('?') {
        Some((path, query)) if contains_sig(query) => {
            Cow::Owned(format!("{path}?{}", redact_query(query)))
        }
        _ => Cow::Borrowed(url),
    }
}

/// The value of header `name` as the debug log shows it.
pub(crate) fn redact_header<'a>(name: &str, value: &'a str) -> Cow<'a, str> {
    if CREDENTIAL_HEADERS
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
    {
        return Cow::Owned(redact_credential(value));
    }
    // Source URLs (x-ms-copy-source) may carry a SAS.
    redact_url(value)
}

/// `SharedKey account:signature` keeps `SharedKey account:`; any other
/// scheme keeps its name only (`Bearer <token>`).
fn redact_credential(value: &str) -> String {
    let (scheme, rest) = value.trim().split_once(' ').unwrap_or((value.trim(), ""));
    if rest.is_empty() {
        return REDACTED.to_owned();
    }
    match rest.split_once(':') {
        Some((account, _))
            if scheme.eq_ignore_ascii_case("SharedKey")
                || scheme.eq_ignore_ascii_case("SharedKeyLite") =>
        {
            format!("{scheme} {account}:{REDACTED}")
        }
        _ => format!("{scheme} {REDACTED}"),
    }
}

fn contains_sig(s: &str) -> bool {
    s.as_bytes()
        .windows(4)
        .any(|w| w.eq_ignore_ascii_case(b"sig="))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sas_signatures_are_redacted_wherever_they_appear() {
        let table = [
            ("restype=container", "restype=container"),
            (
                "sv=2021-08-06&sig=abc%2Bdef%3D",
                "sv=2021-08-06&sig=REDACTED",
            ),
            ("sig=abc&sp=r", "sig=REDACTED&sp=r"),
            ("Sig=abc", "Sig=REDACTED"),
            ("sv=1&sig=", "sv=1&sig=REDACTED"),
            // Other parameters that merely end in "sig" are not secrets.
            ("design=1", "design=1"),
            ("xsig=1&sig=2", "xsig=1&sig=REDACTED"),
        ];
        for (query, want) in table {
            assert_eq!(redact_query(query), want, "{query}");
        }
        assert_eq!(
            redact_url("/acct/c/b?sv=1&sig=secret"),
            "/acct/c/b?sv=1&sig=REDACTED"
        );
        assert_eq!(redact_url("/acct/c/b"), "/acct/c/b");
    }

    #[test]
    fn credentials_keep_their_scheme_only() {
        let table = [
            (
                "Authorization",
                "SharedKey devstoreaccount1:c2lnbmF0dXJl",
                "SharedKey devstoreaccount1:REDACTED",
            ),
            (
                "authorization",
                "SharedKeyLite acct:c2ln",
                "SharedKeyLite acct:REDACTED",
            ),
            (
                "authorization",
                "Bearer eyJ0eXAi.abc.def",
                "Bearer REDACTED",
            ),
            ("authorization", "garbage", "REDACTED"),
            (
                "x-ms-copy-source-authorization",
                "Bearer eyJ0eXAi",
                "Bearer REDACTED",
            ),
            (
                "x-ms-copy-source",
                "http://127.0.0.1/acct/c/src?sv=1&sig=s3cret",
                "http://127.0.0.1/acct/c/src?sv=1&sig=REDACTED",
            ),
            ("x-ms-version", "2021-08-06", "2021-08-06"),
        ];
        for (name, value, want) in table {
            let got = redact_header(name, value);
            assert_eq!(got, want, "{name}: {value}");
        }
    }
}
