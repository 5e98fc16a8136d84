//! The load generator's own Shared Key signer (docs/wire/auth.md#the-string-to-sign).
//!
//! Written from the spec, sharing nothing with the server, so a benchmark
//! against Stowage also checks that Stowage accepts what the published rules
//! produce. It signs only what it is given; the caller hands in every header
//! it will send (`x-ms-date` included) and the body length as
//! `Content-Length`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The standard headers that StringToSign carries by value, in order (docs/wire/auth.md#the-string-to-sign
/// fields 2–12; `Date` is field 7).
const STANDARD_HEADERS: [&str; 11] = [
    "content-encoding",
    "content-language",
    "content-length",
    "content-md5",
    "content-type",
    "date",
    "if-modified-since",
    "if-match",
    "if-none-match",
    "if-unmodified-since",
    "range",
];

/// An account name with its decoded key.
#[derive(Clone)]
pub struct SharedKey {
    account: String,
    key: Vec<u8>,
}

/// What a request signs: method, the path exactly as it goes on the request
/// line (percent-encoded, starting with `/`), the query parameters decoded,
/// and every header the request carries.
#[derive(Clone, Copy, Debug)]
pub struct SignInput<'a> {
    /// HTTP verb, e.g. `PUT`.
    pub method: &'a str,
    /// The raw request path, e.g. `/devstoreaccount1/c/dir/hello%20world.txt`.
    pub raw_path: &'a str,
    /// Query parameters, names and values decoded.
    pub query: &'a [(&'a str, &'a str)],
    /// Headers as sent, any case.
    pub headers: &'a [(&'a str, &'a str)],
}

/// Why a key cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("the account key is not base64: {0}")]
pub struct BadKey(#[from] base64::DecodeError);

impl SharedKey {
    /// An account and its key as the connection string gives it (base64).
    ///
    /// # Errors
    ///
    /// [`BadKey`] when the key is not base64.
    pub fn new(account: &str, key_base64: &str) -> Result<Self, BadKey> {
        Ok(Self {
            account: account.to_owned(),
            key: STANDARD.decode(key_base64.trim())?,
        })
    }

    /// The account name.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The StringToSign of docs/wire/auth.md#the-string-to-sign for a request of service version 2015-02-21
    /// or later (`Content-Length: 0` signs as an empty line).
    pub fn string_to_sign(&self, req: &SignInput<'_>) -> String {
        let mut out = String::with_capacity(256);
        out.push_str(&req.method.to_ascii_uppercase());
        out.push('\n');
        for name in STANDARD_HEADERS {
            let value = header(req.headers, name).unwrap_or("");
            if !(name == "content-length" && value == "0") {
                out.push_str(value);
            }
            out.push('\n');
        }
        canonical_headers(req.headers, &mut out);
        out.push('/');
        out.push_str(&self.account);
        out.push_str(req.raw_path);
        canonical_query(req.query, &mut out);
        out
    }

    /// The `Authorization` header value: `SharedKey <account>:<signature>`.
    pub fn authorization(&self, req: &SignInput<'_>) -> String {
        let string_to_sign = self.string_to_sign(req);
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        mac.update(string_to_sign.as_bytes());
        let signature = STANDARD.encode(mac.finalize().into_bytes());
        format!("SharedKey {}:{signature}", self.account)
    }
}

fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// docs/wire/auth.md#the-string-to-sign: every `x-ms-*` header, lowercased, trimmed, sorted by the service's
/// character ranking, each as `name:value\n`.
fn canonical_headers(headers: &[(&str, &str)], out: &mut String) {
    let mut signed: Vec<(String, &str)> = headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim()))
        .filter(|(n, _)| n.starts_with("x-ms-"))
        .collect();
    signed.sort_by_cached_key(|a| rank_key(&a.0));
    for (name, value) in signed {
        out.push_str(&name);
        out.push(':');
        out.push_str(value);
        out.push('\n');
    }
}

/// The service's header-name order (docs/wire/auth.md#the-string-to-sign step 5): `-` first, then
/// punctuation, digits, `:;<=>?@`, upper case, `[]`, lower case, `{}`.
/// Anything else sorts after those, by byte.
fn rank_key(name: &str) -> Vec<u16> {
    const ORDER: &str = "-!#$%&*.^_|~+\"'(),/`0123456789:;<=>?@\
                         ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz{}";
    name.bytes()
        .map(|b| match ORDER.bytes().position(|o| o == b) {
            Some(p) => p as u16,
            None => 256 + u16::from(b),
        })
        .collect()
}

/// docs/wire/auth.md#the-string-to-sign step 3: `\n<name>:<value>` per parameter, names lowercased and
/// sorted, repeated names joined with `,` in sorted order.
fn canonical_query(query: &[(&str, &str)], out: &mut String) {
    let mut params: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, value) in query {
        let name = name.to_ascii_lowercase();
        match params.iter_mut().find(|(n, _)| *n == name) {
            Some((_, values)) => values.push(value),
            None => params.push((name, vec![value])),
        }
    }
    params.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, mut values) in params {
        values.sort_unstable();
        out.push('\n');
        out.push_str(&name);
        out.push(':');
        out.push_str(&values.join(","));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV_KEY: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    const DATE: &str = "Tue, 03 Sep 2024 10:15:07 GMT";

    fn key() -> SharedKey {
        SharedKey::new("devstoreaccount1", DEV_KEY).unwrap()
    }

    /// docs/wire/auth.md#test-vectors, vector 1: Create Container.
    #[test]
    fn vector_1_create_container() {
        let headers = [
            ("x-ms-version", "2021-10-04"),
            ("x-ms-date", DATE),
            ("Content-Length", "0"),
        ];
        let req = SignInput {
            method: "PUT",
            raw_path: "/devstoreaccount1/mycontainer",
            query: &[("restype", "container")],
            headers: &headers,
        };
        assert_eq!(
            key().string_to_sign(&req),
            "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\n\
             x-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer\n\
             restype:container"
        );
        assert_eq!(
            key().authorization(&req),
            "SharedKey devstoreaccount1:m5xBtgvPs2dzzKB3r83qyAdtaLR6z3dFFawzqeRPsLA="
        );
    }

    /// docs/wire/auth.md#test-vectors, vector 2: Put Blob with metadata whose name has upper case.
    #[test]
    fn vector_2_put_blob() {
        let headers = [
            ("Content-Length", "11"),
            ("Content-Type", "text/plain"),
            ("x-ms-blob-type", "BlockBlob"),
            ("x-ms-meta-Owner", "alice"),
            ("x-ms-date", DATE),
            ("x-ms-version", "2021-10-04"),
        ];
        let req = SignInput {
            method: "PUT",
            raw_path: "/devstoreaccount1/mycontainer/dir/hello%20world.txt",
            query: &[],
            headers: &headers,
        };
        assert_eq!(
            key().string_to_sign(&req),
            "PUT\n\n\n11\n\ntext/plain\n\n\n\n\n\n\nx-ms-blob-type:BlockBlob\n\
             x-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\nx-ms-meta-owner:alice\n\
             x-ms-version:2021-10-04\n\
             /devstoreaccount1/devstoreaccount1/mycontainer/dir/hello%20world.txt"
        );
        assert_eq!(
            key().authorization(&req),
            "SharedKey devstoreaccount1:SPUViwkOsQoI+V4kAhlcn5/XTnAvHhR1flkPC7Y/YJI="
        );
    }

    /// docs/wire/auth.md#test-vectors, vector 3: List Blobs; query names sorted, values decoded.
    #[test]
    fn vector_3_list_blobs() {
        let headers = [("x-ms-date", DATE), ("x-ms-version", "2021-10-04")];
        let req = SignInput {
            method: "GET",
            raw_path: "/devstoreaccount1/mycontainer",
            query: &[
                ("restype", "container"),
                ("comp", "list"),
                ("include", "metadata,snapshots"),
                ("prefix", "dir/"),
            ],
            headers: &headers,
        };
        assert_eq!(
            key().string_to_sign(&req),
            "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\n\
             x-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer\n\
             comp:list\ninclude:metadata,snapshots\nprefix:dir/\nrestype:container"
        );
        assert_eq!(
            key().authorization(&req),
            "SharedKey devstoreaccount1:dxU/ds+r13x8K6tkOVM/CBwlzvSTDcyEh7DqKL2TtIw="
        );
    }

    #[test]
    fn underscore_sorts_before_digits_and_repeated_parameters_join() {
        let headers = [("x-ms-meta-a1", "x"), ("x-ms-meta-a_", "y")];
        let req = SignInput {
            method: "get",
            raw_path: "/a/c",
            query: &[("B", "2"), ("b", "1")],
            headers: &headers,
        };
        let sts = key().string_to_sign(&req);
        assert!(sts.starts_with("GET\n"));
        assert!(sts.ends_with("x-ms-meta-a_:y\nx-ms-meta-a1:x\n/devstoreaccount1/a/c\nb:1,2"));
    }
}
