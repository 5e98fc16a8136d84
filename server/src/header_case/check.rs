//! The differential check behind the `connection` fuzz target and its
//! seeded, bounded version in `cargo test`: the same bytes, split at
//! arbitrary read boundaries, go through the connection layer and on to
//! actix-http's decoder as the dispatcher runs it, and both must see the
//! same requests. Pure (a scripted reader, no sockets).

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use actix_http::h1::{Codec, Message};
use bytes::BytesMut;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::codec::Decoder as _;

use super::io::CaseIo;
use super::mirror::{MAX_HEAD, detached_config};

/// A small deterministic generator (xorshift64*), so a seed replays.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The socket: returns `data` in reads of sizes drawn from `rng`.
struct Script<'a> {
    data: &'a [u8],
    rng: Rng,
}

impl AsyncRead for Script<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = match self.rng.below(4) {
            0 => 1 + self.rng.below(8),
            1 => 1 + self.rng.below(1024),
            _ => 1 + self.rng.below(64 * 1024),
        };
        let n = size.min(buf.remaining()).min(self.data.len());
        let (now, rest) = self.data.split_at(n);
        buf.put_slice(now);
        self.data = rest;
        Poll::Ready(Ok(()))
    }
}

/// A request as actix-http decoded it: lowercase metadata names, sorted.
fn decoded_names(req: &actix_http::Request) -> Vec<String> {
    let mut names: Vec<String> = req
        .head()
        .headers
        .iter()
        .filter_map(|(n, _)| n.as_str().strip_prefix("x-ms-meta-").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// Feeds `stream` through the layer, split at boundaries drawn from
/// `seed`, and the bytes the layer hands on to a second actix-http decoder
/// run as the dispatcher runs it; panics where the two disagree:
/// - the layer changes, drops or adds a byte;
/// - the request a handler would run for is not the layer's current one,
///   or the layer's names for it differ (but for case) from actix's;
/// - the layer holds bytes back while actix has no request to answer;
/// - actix refuses bytes and the layer does not, or the other way round;
/// - the layer ever finds its own reading and actix's differ.
pub(crate) fn compare(stream: &[u8], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut io = CaseIo::new(
        Script {
            data: stream,
            rng: Rng::new(seed ^ 0x5151),
        },
        detached_config(),
        tokio_util::sync::CancellationToken::new(),
    );
    let conn = io.connection();
    let mut actix = Codec::new(detached_config());
    let mut actix_buf = BytesMut::new();
    let mut delivered = Vec::new();
    // Requests actix decoded and the handler has not answered.
    let mut unanswered = 0usize;
    let mut actix_failed = false;
    let mut cx = Context::from_waker(Waker::noop());
    let mut decode = |buf: &mut BytesMut, unanswered: &mut usize, failed: &mut bool| {
        while !*failed {
            match actix.decode(buf) {
                Ok(Some(Message::Item(req))) => {
                    // The handler runs: it asks for its request's names.
                    let names = conn.next_request_names().unwrap_or_else(|| {
                        panic!("actix decoded {:?}; the layer has no request", req.head())
                    });
                    let mut names: Vec<String> =
                        names.iter().map(|n| n.to_ascii_lowercase()).collect();
                    names.sort();
                    assert_eq!(names, decoded_names(&req), "{:?}", req.head());
                    *unanswered += 1;
                }
                Ok(Some(Message::Chunk(_))) => {}
                Ok(None) => break,
                Err(_) => *failed = true,
            }
        }
    };
    loop {
        let mut space = vec![0u8; 1 + rng.below(64 * 1024)];
        let mut read = ReadBuf::new(&mut space);
        match Pin::new(&mut io).poll_read(&mut cx, &mut read) {
            Poll::Ready(Ok(())) if read.filled().is_empty() => break,
            Poll::Ready(Ok(())) => {
                delivered.extend_from_slice(read.filled());
                actix_buf.extend_from_slice(read.filled());
                // actix reads until its buffer holds its limit or the socket
                // has nothing more, then decodes.
                if actix_buf.len() >= MAX_HEAD || rng.below(3) == 0 {
                    decode(&mut actix_buf, &mut unanswered, &mut actix_failed);
                }
                if actix_failed {
                    // actix answers 400 or 431 and closes the connection.
                    break;
                }
                // A handler may answer before it has read the whole body.
                if unanswered > 0 && rng.below(4) == 0 {
                    conn.answer_current();
                    unanswered -= 1;
                }
            }
            Poll::Ready(Err(e)) => panic!("the layer failed the connection: {e}"),
            Poll::Pending => {
                decode(&mut actix_buf, &mut unanswered, &mut actix_failed);
                if actix_failed {
                    break;
                }
                assert!(
                    unanswered > 0,
                    "the layer holds bytes while actix has no request to answer"
                );
                conn.answer_current();
                unanswered -= 1;
            }
        }
    }
    decode(&mut actix_buf, &mut unanswered, &mut actix_failed);
    let real = delivered.len() - io.padded() as usize;
    assert_eq!(delivered[..real], stream[..real], "bytes changed");
    let refused = conn.refused();
    assert_eq!(
        actix_failed, refused,
        "actix refused: {actix_failed}; the layer refused: {refused}"
    );
    if !actix_failed {
        assert_eq!(delivered.len(), stream.len(), "bytes held back at the end");
    }
    for _ in 0..unanswered {
        conn.answer_current();
    }
    assert!(
        conn.next_request_names().is_none(),
        "the layer saw a request actix did not"
    );
}

/// Test inputs: pipelined requests of many shapes, some mangled.
#[cfg(test)]
pub(crate) fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(5) {
        let method = ["GET", "HEAD", "PUT", "DELETE", "POST"][rng.below(5)];
        out.extend_from_slice(format!("{method} /a/b?c={} HTTP/1.1", rng.below(99)).as_bytes());
        let eol: &[u8] = [b"\r\n".as_slice(), b"\n"][usize::from(rng.below(6) == 0)];
        out.extend_from_slice(eol);
        out.extend_from_slice(b"Host: h");
        out.extend_from_slice(eol);
        for _ in 0..rng.below(4) {
            let name = [
                "x-ms-meta-Owner",
                "X-MS-META-myKey",
                "x-ms-meta-a_b",
                "x-ms-metA-Z",
            ][rng.below(4)];
            out.extend_from_slice(format!("{name}: v{}", rng.below(9)).as_bytes());
            out.extend_from_slice(eol);
        }
        match rng.below(40) {
            0..4 => out.extend_from_slice(b"x-ms-client-request-id: caf\xe9\r\n"),
            4 => {
                let len = [1000, 70 * 1024, MAX_HEAD - 200, MAX_HEAD + 10][rng.below(4)];
                out.extend_from_slice(b"X-Filler: ");
                out.extend(std::iter::repeat_n(b'f', len));
                out.extend_from_slice(b"\r\n");
            }
            5..8 => out.extend_from_slice(b"x-stowage-meta-names: Other\r\n"),
            _ => {}
        }
        match rng.below(4) {
            0 => {
                let body = "b".repeat(rng.below(3000));
                out.extend_from_slice(format!("Content-Length: {}", body.len()).as_bytes());
                out.extend_from_slice(eol);
                out.extend_from_slice(eol);
                out.extend_from_slice(body.as_bytes());
            }
            1 => {
                out.extend_from_slice(b"Transfer-Encoding: chunked");
                out.extend_from_slice(eol);
                out.extend_from_slice(eol);
                for _ in 0..rng.below(3) {
                    let n = 1 + rng.below(300);
                    out.extend_from_slice(format!("{n:x};e=1\r\n").as_bytes());
                    out.extend(std::iter::repeat_n(b'c', n));
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n");
                match rng.below(3) {
                    0 => out.extend_from_slice(b"T: v\n\r\n"),
                    1 => out.extend_from_slice(b"T: v\r\n\r\n"),
                    _ => out.extend_from_slice(b"\r\n"),
                }
            }
            _ => out.extend_from_slice(if rng.below(5) == 0 { b"\r\n\n" } else { eol }),
        }
    }
    // Sometimes a few bytes changed, anywhere.
    if rng.below(3) == 0 {
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(out.len());
            out[i] = [b'\r', b'\n', b':', b' ', 0, 0xff, b'0', b'x'][rng.below(8)];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzz target's comparison, bounded: a few thousand seeded inputs,
    /// each split at its own seeded boundaries (`STOWAGE_CHECK_CASES` sets
    /// how many, `STOWAGE_CHECK_SEED` where the inputs start).
    #[test]
    fn the_layer_and_actix_see_the_same_requests() {
        let env = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let mut rng = Rng::new(env("STOWAGE_CHECK_SEED", 16));
        for case in 0..env("STOWAGE_CHECK_CASES", 3000) {
            let stream = generate(&mut rng);
            let result = std::panic::catch_unwind(|| compare(&stream, case));
            assert!(
                result.is_ok(),
                "case {case}: {:?}",
                String::from_utf8_lossy(&stream[..stream.len().min(2000)])
            );
        }
    }
}
