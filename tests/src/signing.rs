//! Shared Key signing for the test client (docs/wire/auth.md#the-string-to-sign),
//! written independently of the server's verifier.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The Shared Key string-to-sign of a request whose headers the client sets
/// itself (names lowercase; only plain ASCII header names are used here, so
/// byte order is the service's order).
pub fn string_to_sign(method: &str, path_and_query: &str, headers: &[(String, String)]) -> String {
    string_to_sign_for(crate::ACCOUNT, method, path_and_query, headers)
}

/// [`string_to_sign`] for `account`.
pub fn string_to_sign_for(
    account: &str,
    method: &str,
    path_and_query: &str,
    headers: &[(String, String)],
) -> String {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let content_length = match get("content-length") {
        "0" => "",
        v => v,
    };
    let mut s = format!(
        "{method}\n{}\n{}\n{content_length}\n{}\n{}\n\n{}\n{}\n{}\n{}\n{}\n",
        get("content-encoding"),
        get("content-language"),
        get("content-md5"),
        get("content-type"),
        get("if-modified-since"),
        get("if-match"),
        get("if-none-match"),
        get("if-unmodified-since"),
        get("range"),
    );
    let mut ms: Vec<&(String, String)> = headers
        .iter()
        .filter(|(n, _)| n.starts_with("x-ms-"))
        .collect();
    ms.sort_by(|a, b| a.0.cmp(&b.0));
    for (n, v) in ms {
        s.push_str(&format!("{n}:{}\n", v.trim()));
    }
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    s.push_str(&format!("/{account}{path}"));
    let mut params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (n, v) = p.split_once('=').unwrap_or((p, ""));
            let dec = |x: &str| {
                percent_encoding::percent_decode_str(x)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (dec(n).to_lowercase(), dec(v))
        })
        .collect();
    params.sort();
    let mut merged: Vec<(String, Vec<String>)> = Vec::new();
    for (n, v) in params {
        match merged.last_mut() {
            Some((last, values)) if *last == n => values.push(v),
            _ => merged.push((n, vec![v])),
        }
    }
    for (n, values) in merged {
        s.push_str(&format!("\n{n}:{}", values.join(",")));
    }
    s
}

/// The query of a blob service SAS (`sr=b`, version 2025-11-05) granting
/// `permissions` on `/account/container/blob` until `expiry` (ISO 8601),
/// signed with the base64 `key`.
pub fn blob_sas(
    account: &str,
    key: &str,
    container: &str,
    blob: &str,
    permissions: &str,
    expiry: &str,
) -> String {
    let version = crate::VERSION;
    // sp, st, se, resource, si, sip, spr, sv, sr, snapshot time, ses, and
    // the five response-header overrides.
    let string_to_sign = format!(
        "{permissions}\n\n{expiry}\n/blob/{account}/{container}/{blob}\n\n\n\n{version}\nb\n\n\n\n\n\n\n"
    );
    let sig = shared_key_signature(key, &string_to_sign);
    let enc = |s: &str| {
        percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    format!(
        "sv={version}&sr=b&sp={permissions}&se={}&sig={}",
        enc(expiry),
        enc(&sig)
    )
}

/// Base64 HMAC-SHA256 of `string_to_sign` with the base64 `key`.
pub fn shared_key_signature(key: &str, string_to_sign: &str) -> String {
    let key = base64::engine::general_purpose::STANDARD
        .decode(key)
        .expect("base64 key");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("any key length");
    mac.update(string_to_sign.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// The `se` of the SAS tokens below: the day after the test clock's epoch.
const SAS_EXPIRY: &str = "2024-09-04T00:00:00Z";

/// The `sv` of the SAS tokens below.
const SAS_VERSION: &str = "2025-11-05";

/// A service SAS (`sr=c`) for `container` of the development account with
/// `permissions`, valid at the test clock's epoch: the query string without
/// `?`, each value percent-encoded.
pub fn container_sas(container: &str, permissions: &str) -> String {
    // sp, st, se, resource, si, sip, spr, sv, sr, snapshot time, ses, and
    // the five response-header overrides.
    let string_to_sign = format!(
        "{permissions}\n\n{SAS_EXPIRY}\n/blob/{}/{container}\n\n\n\n{SAS_VERSION}\nc\n\n\n\n\n\n\n",
        crate::ACCOUNT
    );
    let sig = shared_key_signature(crate::KEY, &string_to_sign);
    format!(
        "sv={SAS_VERSION}&sr=c&sp={permissions}&se={}&sig={}",
        encode(SAS_EXPIRY),
        encode(&sig)
    )
}

/// An account SAS for the blob service of the development account with
/// `permissions` and resource types `resource_types`, valid at the test
/// clock's epoch; the query string without `?`.
pub fn account_sas(permissions: &str, resource_types: &str) -> String {
    // account, sp, ss, srt, st, se, sip, spr, sv, ses, and a final newline.
    let string_to_sign = format!(
        "{}\n{permissions}\nb\n{resource_types}\n\n{SAS_EXPIRY}\n\n\n{SAS_VERSION}\n\n",
        crate::ACCOUNT
    );
    let sig = shared_key_signature(crate::KEY, &string_to_sign);
    format!(
        "sv={SAS_VERSION}&ss=b&srt={resource_types}&sp={permissions}&se={}&sig={}",
        encode(SAS_EXPIRY),
        encode(&sig)
    )
}

fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/wire/auth.md#test-vectors, vector 1.
    #[test]
    fn create_container_vector() {
        let headers = vec![
            ("content-length".to_owned(), "0".to_owned()),
            (
                "x-ms-date".to_owned(),
                "Tue, 03 Sep 2024 10:15:07 GMT".to_owned(),
            ),
            ("x-ms-version".to_owned(), "2021-10-04".to_owned()),
        ];
        let sts = string_to_sign(
            "PUT",
            "/devstoreaccount1/mycontainer?restype=container",
            &headers,
        );
        assert_eq!(
            shared_key_signature(crate::KEY, &sts),
            "m5xBtgvPs2dzzKB3r83qyAdtaLR6z3dFFawzqeRPsLA="
        );
    }
}
