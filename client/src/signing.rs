//! Shared Key signing (docs/wire/auth.md#shared-key), written from the wire contract alone.
//!
//! Pure functions: the request's method, headers, raw path and query go in,
//! the string to sign and the signature come out. The pipeline calls them
//! once per attempt, because each attempt carries a fresh `x-ms-date`.

use std::cmp::Ordering;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The standard headers signed by value, in StringToSign order (docs/wire/auth.md#the-string-to-sign,
/// fields 2–12).
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

/// The StringToSign of a Blob service request (versions 2015-02-21 and
/// later).
///
/// `headers` are (lowercase name, value) pairs as sent; `path` is the
/// request path exactly as it goes on the request line (still
/// percent-encoded); `query` holds the decoded (name, value) pairs.
pub(crate) fn string_to_sign(
    method: &str,
    headers: &[(String, String)],
    account: &str,
    path: &str,
    query: &[(String, String)],
) -> String {
    let mut out = String::with_capacity(256);
    out.push_str(&method.to_ascii_uppercase());
    out.push('\n');
    for name in STANDARD_HEADERS {
        let value = header(headers, name).unwrap_or("");
        // Content-Length 0 is signed as an empty line (versions 2015-02-21+).
        if !(name == "content-length" && value == "0") {
            out.push_str(value);
        }
        out.push('\n');
    }
    out.push_str(&canonicalized_headers(headers));
    out.push_str(&canonicalized_resource(account, path, query));
    out
}

/// Base64(HMAC-SHA256(key, string_to_sign)).
pub(crate) fn signature(key: &[u8], string_to_sign: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(string_to_sign.as_bytes());
    STANDARD.encode(mac.finalize().into_bytes())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// docs/wire/auth.md#the-string-to-sign: every `x-ms-*` header, lowercased, value trimmed, sorted with the
/// service's character ranking, each as `name:value\n`.
fn canonicalized_headers(headers: &[(String, String)]) -> String {
    let mut ms: Vec<(String, &str)> = headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.trim()))
        .filter(|(n, _)| n.starts_with("x-ms-"))
        .collect();
    ms.sort_by(|a, b| compare_header_names(&a.0, &b.0));
    let mut out = String::new();
    for (name, value) in ms {
        out.push_str(&name);
        out.push(':');
        out.push_str(value);
        out.push('\n');
    }
    out
}

/// The service's fixed character ranking for header names (docs/wire/auth.md#the-string-to-sign step 5):
/// `-` first, then ``!#$%&*.^_|~+"'(),/` ``, digits, `:;<=>?@`, `A`–`Z`,
/// `[]`, `a`–`z`, `{}`. Characters outside the ranking sort after it, by
/// code point.
const RANKING: &str = "-!#$%&*.^_|~+\"'(),/`0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz{}";

fn rank(c: char) -> (usize, u32) {
    match RANKING.find(c) {
        Some(i) => (i, 0),
        None => (RANKING.len(), c as u32),
    }
}

fn compare_header_names(a: &str, b: &str) -> Ordering {
    a.chars().map(rank).cmp(b.chars().map(rank))
}

/// docs/wire/auth.md#the-string-to-sign: `/account` + raw path, then `\nname:value` per query parameter
/// (names lowercased, sorted; repeated names' values sorted and joined with
/// `,`).
fn canonicalized_resource(account: &str, path: &str, query: &[(String, String)]) -> String {
    let mut out = format!("/{account}{path}");
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::DEVELOPMENT_KEY;

    fn key() -> Vec<u8> {
        STANDARD.decode(DEVELOPMENT_KEY).unwrap()
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    const DATE: (&str, &str) = ("x-ms-date", "Tue, 03 Sep 2024 10:15:07 GMT");
    const VERSION: (&str, &str) = ("x-ms-version", "2021-10-04");

    /// The three vectors of docs/wire/auth.md#test-vectors.
    #[test]
    fn spec_vectors_give_the_published_strings_and_signatures() {
        struct Vector {
            method: &'static str,
            headers: Vec<(String, String)>,
            path: &'static str,
            query: Vec<(String, String)>,
            string_to_sign: &'static str,
            signature: &'static str,
        }
        let vectors = [
            Vector {
                method: "PUT",
                headers: owned(&[("content-length", "0"), DATE, VERSION]),
                path: "/devstoreaccount1/mycontainer",
                query: owned(&[("restype", "container")]),
                string_to_sign: "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\nx-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer\nrestype:container",
                signature: "m5xBtgvPs2dzzKB3r83qyAdtaLR6z3dFFawzqeRPsLA=",
            },
            Vector {
                method: "PUT",
                headers: owned(&[
                    ("content-length", "11"),
                    ("content-type", "text/plain"),
                    ("x-ms-blob-type", "BlockBlob"),
                    ("x-ms-meta-Owner", "alice"),
                    DATE,
                    VERSION,
                ]),
                path: "/devstoreaccount1/mycontainer/dir/hello%20world.txt",
                query: vec![],
                string_to_sign: "PUT\n\n\n11\n\ntext/plain\n\n\n\n\n\n\nx-ms-blob-type:BlockBlob\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\nx-ms-meta-owner:alice\nx-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer/dir/hello%20world.txt",
                signature: "SPUViwkOsQoI+V4kAhlcn5/XTnAvHhR1flkPC7Y/YJI=",
            },
            Vector {
                method: "GET",
                headers: owned(&[DATE, VERSION]),
                path: "/devstoreaccount1/mycontainer",
                query: owned(&[
                    ("restype", "container"),
                    ("comp", "list"),
                    ("include", "metadata,snapshots"),
                    ("prefix", "dir/"),
                ]),
                string_to_sign: "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\nx-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer\ncomp:list\ninclude:metadata,snapshots\nprefix:dir/\nrestype:container",
                signature: "dxU/ds+r13x8K6tkOVM/CBwlzvSTDcyEh7DqKL2TtIw=",
            },
        ];
        for v in vectors {
            let sts = string_to_sign(v.method, &v.headers, "devstoreaccount1", v.path, &v.query);
            assert_eq!(sts, v.string_to_sign);
            assert_eq!(signature(&key(), &sts), v.signature, "{}", v.path);
        }
    }

    #[test]
    fn header_names_sort_with_the_service_ranking() {
        // (a, b, expected order of a relative to b)
        let table = [
            ("x-ms-meta-a_b", "x-ms-meta-a1", Ordering::Less), // `_` before digits
            ("x-ms-meta-a-b", "x-ms-meta-a_b", Ordering::Less), // `-` first
            ("x-ms-date", "x-ms-version", Ordering::Less),
            ("x-ms-meta-a", "x-ms-meta-ab", Ordering::Less), // prefix first
            ("x-ms-meta-b", "x-ms-meta-a", Ordering::Greater),
            ("x-ms-meta-a9", "x-ms-meta-aa", Ordering::Less),
            ("x-ms-meta-x", "x-ms-meta-x", Ordering::Equal),
        ];
        for (a, b, expected) in table {
            assert_eq!(compare_header_names(a, b), expected, "{a} vs {b}");
        }
    }

    #[test]
    fn canonicalized_headers_trim_values_and_keep_empty_ones() {
        let headers = owned(&[
            ("x-ms-version", " 2021-10-04 "),
            ("x-ms-meta-empty", ""),
            ("Content-Type", "text/plain"),
            ("X-MS-Date", "d"),
        ]);
        assert_eq!(
            canonicalized_headers(&headers),
            "x-ms-date:d\nx-ms-meta-empty:\nx-ms-version:2021-10-04\n"
        );
    }

    #[test]
    fn canonicalized_resource_sorts_and_joins_repeated_parameters() {
        let table = [
            (vec![], "/acct/acct/"),
            (owned(&[("comp", "list")]), "/acct/acct/\ncomp:list"),
            (
                owned(&[
                    ("include", "snapshots"),
                    ("Include", "metadata"),
                    ("comp", "list"),
                ]),
                "/acct/acct/\ncomp:list\ninclude:metadata,snapshots",
            ),
            (owned(&[("prefix", "a b+c")]), "/acct/acct/\nprefix:a b+c"),
            (owned(&[("marker", "")]), "/acct/acct/\nmarker:"),
        ];
        for (query, expected) in table {
            assert_eq!(canonicalized_resource("acct", "/acct/", &query), expected);
        }
    }

    #[test]
    fn a_non_zero_content_length_and_the_range_header_are_signed() {
        let headers = owned(&[("content-length", "5"), ("range", "bytes=0-9"), DATE]);
        let sts = string_to_sign("get", &headers, "a", "/a/c/b", &[]);
        assert_eq!(
            sts,
            "GET\n\n\n5\n\n\n\n\n\n\n\nbytes=0-9\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\n/a/a/c/b"
        );
    }
}
