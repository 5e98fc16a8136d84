//! What a request head tells about metadata-name case, and the rewrite of a
//! response head back to exact case. Pure.

use super::framer::Framing;

/// The private response header through which a handler passes the exact
/// names of the `x-ms-meta-*` headers it emits; the connection layer
/// consumes it and never sends it.
pub(crate) const NAMES_HEADER: &str = "x-stowage-meta-names";

/// Facts of one request head.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RequestFacts {
    /// Names of the `x-ms-meta-*` headers as sent (without the prefix).
    pub meta_names: Vec<String>,
    /// A HEAD request: its response has no body whatever its length says.
    pub is_head: bool,
    /// How the request body is delimited.
    pub framing: Framing,
}

const META: &str = "x-ms-meta-";

/// Parses a complete request head; `None` if it is not a valid head.
pub(crate) fn request_facts(head: &[u8]) -> Option<RequestFacts> {
    let mut headers = [httparse::EMPTY_HEADER; 256];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return None,
    }
    let mut meta_names = Vec::new();
    let mut framing = Framing::Length(0);
    for h in req.headers.iter() {
        if h.name.len() > META.len() && h.name[..META.len()].eq_ignore_ascii_case(META) {
            meta_names.push(h.name[META.len()..].to_owned());
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if String::from_utf8_lossy(h.value)
                .to_ascii_lowercase()
                .contains("chunked")
            {
                framing = Framing::Chunked;
            }
        } else if h.name.eq_ignore_ascii_case("content-length") && framing != Framing::Chunked {
            framing = Framing::Length(std::str::from_utf8(h.value).ok()?.trim().parse().ok()?);
        }
    }
    Some(RequestFacts {
        meta_names,
        is_head: req.method? == "HEAD",
        framing,
    })
}

/// A rewritten response head.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RewrittenHead {
    pub bytes: Vec<u8>,
    pub framing: Framing,
    /// False for interim (1xx) responses, which answer no request on their own.
    pub is_final: bool,
}

/// Rewrites a complete response head: drops [`NAMES_HEADER`] and gives each
/// `x-ms-meta-*` header the exact name it lists. `request_was_head` tells
/// whether the request it answers was a HEAD (its body is then empty).
/// `None` when the head does not parse (the caller stops rewriting).
pub(crate) fn rewrite_response_head(head: &[u8], request_was_head: bool) -> Option<RewrittenHead> {
    let mut headers = [httparse::EMPTY_HEADER; 256];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(head) {
        Ok(httparse::Status::Complete(n)) if n == head.len() => {}
        _ => return None,
    }
    let status = resp.code?;
    let mut exact: Vec<&str> = Vec::new();
    let mut framing = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case(NAMES_HEADER) {
            exact.extend(
                std::str::from_utf8(h.value)
                    .ok()?
                    .split(',')
                    .filter(|n| !n.is_empty()),
            );
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            framing = Some(Framing::Chunked);
        } else if h.name.eq_ignore_ascii_case("content-length") && framing.is_none() {
            framing = Some(Framing::Length(
                std::str::from_utf8(h.value).ok()?.trim().parse().ok()?,
            ));
        }
    }
    let is_final = status >= 200;
    let framing = if !is_final || request_was_head || status == 204 || status == 304 {
        Framing::Length(0)
    } else {
        framing.unwrap_or(Framing::UntilClose)
    };
    let text = std::str::from_utf8(head).ok()?;
    let mut out = String::with_capacity(head.len());
    for line in text.split_inclusive("\r\n") {
        let name = line.split(':').next().unwrap_or_default();
        if name.eq_ignore_ascii_case(NAMES_HEADER) {
            continue;
        }
        if name.len() > META.len() && name[..META.len()].eq_ignore_ascii_case(META) {
            let lower = &name[META.len()..];
            if let Some(e) = exact.iter().find(|e| e.eq_ignore_ascii_case(lower)) {
                out.push_str(META);
                out.push_str(e);
                out.push_str(&line[name.len()..]);
                continue;
            }
        }
        out.push_str(line);
    }
    Some(RewrittenHead {
        bytes: out.into_bytes(),
        framing,
        is_final,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    #[test]
    fn request_facts_keep_the_sent_case_and_find_the_framing() {
        let cases: &[(&[u8], Option<(Vec<&str>, bool, Framing)>)] = &[
            (
                b"PUT /a/c/b HTTP/1.1\r\nx-ms-meta-Owner: a\r\nX-MS-META-myKey: b\r\nContent-Length: 3\r\n\r\n",
                Some((vec!["Owner", "myKey"], false, Framing::Length(3))),
            ),
            (
                b"HEAD /a/c/b HTTP/1.1\r\nHost: x\r\n\r\n",
                Some((vec![], true, Framing::Length(0))),
            ),
            (
                b"PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n",
                Some((vec![], false, Framing::Chunked)),
            ),
            (b"PUT /a HTTP/1.1\r\nContent-Length: x\r\n\r\n", None),
            (b"not a request\r\n\r\n", None),
        ];
        for (head, expected) in cases {
            let got = request_facts(head).map(|f| (f.meta_names, f.is_head, f.framing));
            let expected = expected
                .as_ref()
                .map(|(n, h, f)| (n.iter().map(|s| s.to_string()).collect::<Vec<_>>(), *h, *f));
            assert_eq!(got, expected, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn response_heads_get_exact_names_and_lose_the_private_header() {
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\nx-ms-meta-owner: alice\r\n\
                     x-stowage-meta-names: Owner,myKey\r\nx-ms-meta-mykey: v: w\r\nx-ms-meta-other: o\r\n\r\n";
        let r = rewrite_response_head(head, false).unwrap();
        assert_eq!(
            String::from_utf8(r.bytes).unwrap(),
            "HTTP/1.1 200 OK\r\ncontent-length: 11\r\nx-ms-meta-Owner: alice\r\n\
             x-ms-meta-myKey: v: w\r\nx-ms-meta-other: o\r\n\r\n"
        );
        assert_eq!(r.framing, Framing::Length(11));
        assert!(r.is_final);
    }

    #[test]
    fn response_framing_table() {
        let cases: &[(&[u8], bool, Framing, bool)] = &[
            (
                b"HTTP/1.1 100 Continue\r\n\r\n",
                false,
                Framing::Length(0),
                false,
            ),
            (
                b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n",
                true,
                Framing::Length(0),
                true,
            ),
            (
                b"HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n",
                false,
                Framing::Length(0),
                true,
            ),
            (
                b"HTTP/1.1 204 No Content\r\n\r\n",
                false,
                Framing::Length(0),
                true,
            ),
            (
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n",
                false,
                Framing::Chunked,
                true,
            ),
            (b"HTTP/1.1 200 OK\r\n\r\n", false, Framing::UntilClose, true),
        ];
        for (head, was_head, framing, is_final) in cases {
            let r = rewrite_response_head(head, *was_head).unwrap();
            assert_eq!(
                (r.framing, r.is_final),
                (*framing, *is_final),
                "{}",
                String::from_utf8_lossy(head)
            );
            assert_eq!(r.bytes, head.to_vec(), "no names to change");
        }
        assert!(rewrite_response_head(b"garbage\r\n\r\n", false).is_none());
    }
}
