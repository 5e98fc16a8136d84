//! The rewrite of a response head back to the exact case of its metadata
//! names. Pure.

use super::framer::Framing;

/// The private response header through which a handler passes the exact
/// names of the `x-ms-meta-*` headers it emits; the connection layer
/// removes it from every response head, and a request carrying it is
/// refused.
pub(crate) const NAMES_HEADER: &str = "x-stowage-meta-names";

const META: &[u8] = b"x-ms-meta-";

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
    let mut exact: Vec<&[u8]> = Vec::new();
    let mut framing = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case(NAMES_HEADER) {
            exact.extend(h.value.split(|b| *b == b',').filter(|n| !n.is_empty()));
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
    // actix-http ends every line with CRLF; values may hold any byte but
    // CR and LF.
    let mut out = Vec::with_capacity(head.len());
    for line in head.split_inclusive(|b| *b == b'\n') {
        let name = line.split(|b| *b == b':').next().unwrap_or_default();
        if name.eq_ignore_ascii_case(NAMES_HEADER.as_bytes()) {
            continue;
        }
        if name.len() > META.len() && name[..META.len()].eq_ignore_ascii_case(META) {
            let lower = &name[META.len()..];
            if let Some(e) = exact.iter().find(|e| e.eq_ignore_ascii_case(lower)) {
                out.extend_from_slice(META);
                out.extend_from_slice(e);
                out.extend_from_slice(&line[name.len()..]);
                continue;
            }
        }
        out.extend_from_slice(line);
    }
    Some(RewrittenHead {
        bytes: out,
        framing,
        is_final,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn non_utf8_values_are_kept_and_the_private_header_always_goes() {
        let head = b"HTTP/1.1 400 Bad\r\nx-ms-client-request-id: caf\xe9\r\n\
                     X-Stowage-Meta-Names: a\r\ncontent-length: 0\r\n\r\n";
        let r = rewrite_response_head(head, false).unwrap();
        assert_eq!(
            r.bytes,
            b"HTTP/1.1 400 Bad\r\nx-ms-client-request-id: caf\xe9\r\ncontent-length: 0\r\n\r\n"
        );
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
