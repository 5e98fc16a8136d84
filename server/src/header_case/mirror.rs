//! The request side of a connection as actix-http reads it, read with
//! actix-http's own HTTP/1 decoder, so the two cannot disagree on where a
//! request starts or ends: same line endings, same trailer rules, same
//! limits. Pure: fed the bytes read from the socket, it records each
//! request's metadata names as sent and tells how far the server's parser
//! may read (see [`Mirror::allowed`]).

use std::collections::VecDeque;

use actix_http::ServiceConfig;
use actix_http::h1::{Codec, Message, MessageType};
use bytes::BytesMut;
use tokio_util::codec::Decoder as _;

/// actix-http's limit on a request head (its `MAX_BUFFER_SIZE`): a head
/// still incomplete with this many bytes buffered is refused with 431. As
/// actix applies it to whatever its read buffer holds when it decodes, a
/// longer head could pass or not depending on how it arrived; the mirror
/// refuses every longer head, and lets actix read no more than this many
/// bytes of it, so that actix refuses it too.
pub(crate) const MAX_HEAD: usize = 131_072;

/// actix-http's limit on the number of header lines in a head.
const MAX_HEADERS: usize = 96;

/// The longest header name the `http` crate takes. httparse accepts longer
/// ones, and actix-http 3.20 then panics on them (it unwraps the name's
/// conversion), dropping the connection without an answer; the mirror
/// refuses such a head before actix-http reads it whole.
const MAX_NAME: usize = 65_535;

const META: &[u8] = b"x-ms-meta-";

/// A request read and not yet answered.
#[derive(Debug)]
pub(crate) struct Pending {
    /// Names of its `x-ms-meta-*` headers as sent (without the prefix).
    pub names: Vec<String>,
    /// A HEAD request: its answer has no body whatever its length says.
    pub is_head: bool,
    /// Stream offset just past its body; `None` while the body is arriving.
    end: Option<u64>,
}

/// Why the mirror stopped: actix stops at the same place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Bytes actix's decoder refuses (it answers 400 or 431 and closes).
    Refused,
    /// The layer's own record of a head differs from actix's decoding of
    /// it; cannot happen while both use the same httparse, and ends the
    /// connection if it ever does.
    Disagreed,
}

/// One connection's requests, decoded as actix-http decodes them.
pub(crate) struct Mirror {
    codec: Codec,
    /// Bytes fed and not yet decoded.
    buf: BytesMut,
    /// Bytes fed in all.
    fed: u64,
    /// Where the head being read starts, when between requests.
    head_start: Option<u64>,
    stopped: Option<Stop>,
    /// For a head refused for a name too long: where it ends. actix is
    /// given all of it but its last byte, then filler (see [`Mirror::padding`]).
    refused_head_end: Option<u64>,
    pending: VecDeque<Pending>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("fed", &self.fed)
            .field("head_start", &self.head_start)
            .field("stopped", &self.stopped)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl Mirror {
    /// A mirror for a new connection; `config` is the worker's (decoding
    /// does not depend on it, but actix-http's codec needs one).
    pub(crate) fn new(config: ServiceConfig) -> Self {
        Mirror {
            codec: Codec::new(config),
            buf: BytesMut::new(),
            fed: 0,
            head_start: Some(0),
            stopped: None,
            refused_head_end: None,
            pending: VecDeque::new(),
        }
    }

    /// Decodes `input`, the next bytes read from the client.
    pub(crate) fn feed(&mut self, input: &[u8]) {
        self.fed += input.len() as u64;
        if self.stopped.is_some() {
            return;
        }
        self.buf.extend_from_slice(input);
        while let Some(stop) = self.step() {
            if !stop {
                return;
            }
        }
    }

    /// One decoding step: `Some(true)` to go on, `Some(false)` to wait for
    /// more bytes, `None` once stopped.
    fn step(&mut self) -> Option<bool> {
        let head = match self.head_start {
            Some(_) => exact_names(&self.buf).unwrap_or_default(),
            None => None,
        };
        if let (Some(start), Some((len, _))) = (self.head_start, &head)
            && longest_name(&self.buf[..*len]) > MAX_NAME
        {
            self.refused_head_end = Some(start + *len as u64);
            return self.stop(Stop::Refused);
        }
        let before = self.buf.len();
        let decoded = self.codec.decode(&mut self.buf);
        let offset = self.fed - self.buf.len() as u64;
        match decoded {
            Err(_) => return self.stop(Stop::Refused),
            Ok(None) => return Some(false),
            Ok(Some(Message::Item(req))) => {
                let used = before - self.buf.len();
                let Some((len, names)) = head else {
                    return self.stop(Stop::Disagreed);
                };
                if used != len || !same_names(&names, &req.head().headers) {
                    return self.stop(Stop::Disagreed);
                }
                if used > MAX_HEAD {
                    return self.stop(Stop::Refused);
                }
                let body = self.codec.message_type() != MessageType::None;
                self.head_start = None;
                if !body {
                    self.head_start = Some(offset);
                }
                self.pending.push_back(Pending {
                    names,
                    is_head: req.head().method == actix_http::Method::HEAD,
                    end: (!body).then_some(offset),
                });
            }
            Ok(Some(Message::Chunk(Some(_)))) => {}
            Ok(Some(Message::Chunk(None))) => {
                self.head_start = Some(offset);
                // Its request may have been answered (and forgotten) early.
                if let Some(p) = self.pending.back_mut().filter(|p| p.end.is_none()) {
                    p.end = Some(offset);
                }
            }
        }
        self.stopped.map_or(Some(true), |_| None)
    }

    fn stop(&mut self, why: Stop) -> Option<bool> {
        self.stopped = Some(why);
        self.buf = BytesMut::new();
        None
    }

    /// Why decoding stopped, if it did.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        self.stopped
    }

    /// After a head refused for a name too long, how many filler bytes
    /// actix-http is to be given once it has `delivered` bytes of the
    /// stream: up to [`MAX_HEAD`] bytes from the head's start, so that it
    /// refuses the head as too large (431), or, when the filler lands after
    /// a CR, as malformed (400). 0 otherwise.
    pub(crate) fn padding(&self, delivered: u64) -> u64 {
        match (self.refused_head_end, self.head_start) {
            (Some(end), Some(start)) if delivered + 1 >= end => {
                (start + MAX_HEAD as u64).saturating_sub(delivered)
            }
            _ => 0,
        }
    }

    /// How many bytes of the stream actix-http may read now: up to the end
    /// of the first request not yet answered, so that actix never decodes
    /// a request before it has written the answer to the one before (its
    /// encoder takes HEAD-ness and version from the request it decoded
    /// last); and no more than [`MAX_HEAD`] bytes of a head (of a head
    /// refused for a name too long, all but its last byte).
    pub(crate) fn allowed(&self) -> u64 {
        if let Some(end) = self.refused_head_end {
            let gate = self.pending.front().and_then(|p| p.end).unwrap_or(end - 1);
            return gate.min(end - 1);
        }
        let gate = self.pending.front().and_then(|p| p.end).unwrap_or(self.fed);
        match self.head_start {
            Some(start) => gate.min(start + MAX_HEAD as u64),
            None => gate,
        }
    }

    /// Between requests: none read in part, none unanswered.
    pub(crate) fn is_idle(&self) -> bool {
        self.pending.is_empty() && self.buf.is_empty() && self.head_start == Some(self.fed)
    }

    /// The request being answered (the first not yet answered).
    pub(crate) fn current(&mut self) -> Option<&mut Pending> {
        self.pending.front_mut()
    }

    /// The answer to the current request was written in full.
    pub(crate) fn answered(&mut self) {
        self.pending.pop_front();
    }
}

/// A configuration made outside the server's runtime, for the tests and
/// the fuzz targets: actix-http starts a task that keeps its date header
/// current when a configuration is made, which needs a local task set.
/// That task never runs again; decoding does not use the date.
pub(crate) fn detached_config() -> ServiceConfig {
    thread_local! {
        static CONFIG: ServiceConfig = {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("a runtime");
            tokio::task::LocalSet::new().block_on(&rt, async { ServiceConfig::default() })
        };
    }
    CONFIG.with(Clone::clone)
}

/// The head at the start of `buf` parsed as actix-http parses it: its
/// length and its `x-ms-meta-*` names as sent. `Ok(None)` while
/// incomplete, `Err` when it does not parse.
fn exact_names(buf: &[u8]) -> Result<Option<(usize, Vec<String>)>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let names = req
        .headers
        .iter()
        .filter_map(|h| meta_suffix(h.name.as_bytes()))
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    Ok(Some((len, names)))
}

/// The length of the longest header name in a complete head (which
/// httparse accepted: every line up to the blank one has a name).
fn longest_name(head: &[u8]) -> usize {
    head.split(|b| *b == b'\n')
        .skip(1)
        .map(|line| line.iter().position(|b| *b == b':').unwrap_or(0))
        .max()
        .unwrap_or(0)
}

/// The name after `x-ms-meta-` (any case; empty for `x-ms-meta-` itself),
/// when the header is one.
fn meta_suffix(name: &[u8]) -> Option<&[u8]> {
    (name.len() >= META.len() && name[..META.len()].eq_ignore_ascii_case(META))
        .then(|| &name[META.len()..])
}

/// Whether `names` are, but for case, the metadata names actix decoded.
fn same_names(names: &[String], decoded: &actix_http::header::HeaderMap) -> bool {
    let mut ours: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
    let mut theirs: Vec<String> = decoded
        .iter()
        .filter_map(|(n, _)| meta_suffix(n.as_str().as_bytes()))
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    ours.sort();
    theirs.sort();
    ours == theirs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(stream: &[u8], step: usize) -> Mirror {
        let mut m = Mirror::new(detached_config());
        for part in stream.chunks(step) {
            m.feed(part);
        }
        m
    }

    fn names(m: &Mirror) -> Vec<Vec<String>> {
        m.pending.iter().map(|p| p.names.clone()).collect()
    }

    #[test]
    fn requests_are_found_with_their_names_at_every_split() {
        let stream = b"PUT /a HTTP/1.1\r\nHost: h\r\nx-ms-meta-Owner: a\r\nContent-Length: 5\r\n\r\nhello\
                       GET /b HTTP/1.1\r\nHost: h\r\n\r\n\
                       PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nX-MS-META-myKey: b\r\n\r\n\
                       3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\nHEAD /d HTTP/1.1\r\nHost: h\r\n\r\n";
        for step in [1, 2, 3, 5, 7, 64, stream.len()] {
            let m = fed(stream, step);
            assert_eq!(m.stopped(), None);
            assert_eq!(
                names(&m),
                [
                    vec!["Owner".to_owned()],
                    vec![],
                    vec!["myKey".to_owned()],
                    vec![]
                ],
                "step {step}"
            );
            let heads: Vec<bool> = m.pending.iter().map(|p| p.is_head).collect();
            assert_eq!(heads, [false, false, false, true]);
        }
    }

    #[test]
    fn actix_may_read_only_up_to_the_end_of_the_request_being_answered() {
        let first = b"PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello".as_slice();
        let second = b"HEAD /b HTTP/1.1\r\nHost: h\r\n\r\n".as_slice();
        let third = b"GET /c HTTP/1.1\r\nHost: h\r\n".as_slice();
        let mut m = Mirror::new(detached_config());
        m.feed(&first[..10]);
        assert_eq!(m.allowed(), 10, "a partial head: all of it");
        m.feed(&first[10..]);
        m.feed(second);
        m.feed(third);
        let ends = [first.len(), first.len() + second.len()].map(|n| n as u64);
        assert_eq!(m.allowed(), ends[0]);
        m.answered();
        assert_eq!(m.allowed(), ends[1]);
        m.answered();
        assert_eq!(
            m.allowed(),
            (first.len() + second.len() + third.len()) as u64
        );
    }

    #[test]
    fn a_body_still_arriving_is_all_allowed() {
        let mut m = Mirror::new(detached_config());
        m.feed(b"PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nabc");
        assert_eq!(m.allowed(), m.fed);
        // Answered early: the rest of the body and what follows may go.
        m.answered();
        m.feed(b"rest");
        assert_eq!(m.allowed(), m.fed);
    }

    #[test]
    fn heads_over_the_limit_are_refused_and_actix_reads_at_most_the_limit() {
        for total in [MAX_HEAD - 100, MAX_HEAD + 1, MAX_HEAD + 5000, 3 * MAX_HEAD] {
            let mut head = b"GET / HTTP/1.1\r\nHost: h\r\nX: ".to_vec();
            head.resize(total - 4, b'a');
            head.extend_from_slice(b"\r\n\r\n");
            for step in [1000, MAX_HEAD - 1, total] {
                let m = fed(&head, step);
                if total <= MAX_HEAD {
                    assert_eq!((m.stopped(), m.pending.len()), (None, 1), "{total} {step}");
                } else {
                    assert_eq!(m.stopped(), Some(Stop::Refused), "{total} {step}");
                    assert_eq!(m.allowed(), MAX_HEAD as u64, "{total} {step}");
                }
            }
        }
    }

    #[test]
    fn a_head_with_a_name_too_long_is_never_given_whole_to_actix() {
        let mut head = b"GET / HTTP/1.1\r\nHost: h\r\nX".to_vec();
        head.resize(head.len() + MAX_NAME, b'n');
        head.extend_from_slice(b": v\r\n\r\n");
        for step in [1000, head.len()] {
            let m = fed(&head, step);
            assert_eq!(m.stopped(), Some(Stop::Refused), "step {step}");
            let all_but_last = head.len() as u64 - 1;
            assert_eq!(m.allowed(), all_but_last);
            assert_eq!(m.padding(all_but_last), MAX_HEAD as u64 - all_but_last);
            assert_eq!(m.padding(all_but_last - 1), 0, "real bytes first");
        }
        // A name of the longest length the http crate takes is served.
        let mut head = b"GET / HTTP/1.1\r\nHost: h\r\nX".to_vec();
        head.resize(head.len() + MAX_NAME - 1, b'n');
        head.extend_from_slice(b": v\r\n\r\n");
        let m = fed(&head, 1000);
        assert_eq!((m.stopped(), m.pending.len()), (None, 1));
    }

    #[test]
    fn bytes_actix_refuses_stop_the_mirror_where_actix_stops() {
        let cases: &[&[u8]] = &[
            b"GET / HTTP/1.1\r\nHost: h\r\nBad Name: v\r\n\r\n",
            b"PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: x\r\n\r\n",
            b"PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"\x00\x01\x02",
        ];
        for case in cases {
            let m = fed(case, 3);
            assert_eq!(
                m.stopped(),
                Some(Stop::Refused),
                "{}",
                String::from_utf8_lossy(case)
            );
        }
    }
}
