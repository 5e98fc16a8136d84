//! Incremental HTTP/1.1 message framing: splits a byte stream into message
//! heads and bodies without interpreting the bodies. Pure; fed by the
//! connection wrapper with the responses actix-http writes (requests are
//! read with actix-http's own decoder instead).

/// How the body after a head is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Exactly this many bytes (0: no body).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Everything until the connection closes (responses only).
    UntilClose,
}

/// A piece of the stream, in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// A complete head, from the start line to the blank line inclusive.
    Head(&'a [u8]),
    /// Body bytes (or everything after a body that runs until the close).
    Body(&'a [u8]),
}

/// The largest head the framer buffers; past it, what it holds is handed
/// on as a head (which then does not parse). A response head repeats at
/// most a request header, and actix-http reads no request head over
/// 128 KiB.
const MAX_HEAD: usize = 1024 * 1024;

#[derive(Debug)]
enum State {
    Head(Vec<u8>),
    Length(u64),
    Chunked(Chunk),
    /// The body runs to the end, or framing was lost: pass bytes through.
    Opaque,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading the size line; `Some(n)` once digits were seen, `ext` after `;`.
    Size {
        size: Option<u64>,
        ext: bool,
    },
    /// The `\n` of the size line.
    SizeLf(u64),
    Data(u64),
    DataCr,
    DataLf,
    /// Trailer lines after the last chunk; `at_line_start` finds the end.
    Trailer {
        at_line_start: bool,
        saw_cr: bool,
    },
}

/// Splits one direction of a connection into heads and bodies.
#[derive(Debug)]
pub(crate) struct Framer {
    state: State,
}

impl Framer {
    pub(crate) fn new() -> Framer {
        Framer {
            state: State::Head(Vec::new()),
        }
    }

    /// True once framing was lost; everything is then passed as body.
    pub(crate) fn is_opaque(&self) -> bool {
        matches!(self.state, State::Opaque)
    }

    /// True between messages: before the first byte of the next head.
    pub(crate) fn at_message_start(&self) -> bool {
        matches!(&self.state, State::Head(buf) if buf.is_empty())
    }

    /// Body bytes the framer expects before the next head, when known.
    pub(crate) fn body_remaining(&self) -> Option<u64> {
        match self.state {
            State::Length(n) => Some(n),
            _ => None,
        }
    }

    /// Feeds `input`; calls `sink` for each piece in order. For a head,
    /// `sink` returns the framing of its body, or `None` to stop framing.
    pub(crate) fn feed(
        &mut self,
        mut input: &[u8],
        sink: &mut dyn FnMut(Piece<'_>) -> Option<Framing>,
    ) {
        while !input.is_empty() {
            let (used, _) = self.step(input, sink);
            input = &input[used..];
        }
    }

    /// Like [`Framer::feed`], but stops just after the first complete head;
    /// returns how many bytes of `input` it took. A writer hands what
    /// follows a head to the socket itself instead of through `sink`.
    pub(crate) fn feed_through_head(
        &mut self,
        input: &[u8],
        sink: &mut dyn FnMut(Piece<'_>) -> Option<Framing>,
    ) -> usize {
        let mut used = 0;
        while used < input.len() {
            let (n, head) = self.step(&input[used..], sink);
            used += n;
            if head {
                break;
            }
        }
        used
    }

    /// One step over a non-empty `input`: bytes taken, and whether a head
    /// was completed.
    fn step(
        &mut self,
        input: &[u8],
        sink: &mut dyn FnMut(Piece<'_>) -> Option<Framing>,
    ) -> (usize, bool) {
        match &mut self.state {
            State::Head(buf) => {
                // Only the head's own bytes are copied: a body that arrives
                // in the same buffer is not.
                let Some(end) = head_end(buf, input) else {
                    buf.extend_from_slice(input);
                    if buf.len() > MAX_HEAD {
                        let all = std::mem::take(buf);
                        self.state = State::Opaque;
                        sink(Piece::Head(&all));
                        return (input.len(), true);
                    }
                    return (input.len(), false);
                };
                buf.extend_from_slice(&input[..end]);
                let head = std::mem::take(buf);
                self.state = match sink(Piece::Head(&head)) {
                    Some(Framing::Length(0)) => State::Head(Vec::new()),
                    Some(Framing::Length(n)) => State::Length(n),
                    Some(Framing::Chunked) => State::Chunked(Chunk::Size {
                        size: None,
                        ext: false,
                    }),
                    Some(Framing::UntilClose) | None => State::Opaque,
                };
                (end, true)
            }
            State::Length(n) => {
                let take = (*n).min(input.len() as u64) as usize;
                *n -= take as u64;
                let done = *n == 0;
                sink(Piece::Body(&input[..take]));
                if done {
                    self.state = State::Head(Vec::new());
                }
                (take, false)
            }
            State::Chunked(chunk) => {
                let (used, next) = step_chunk(*chunk, input);
                sink(Piece::Body(&input[..used]));
                self.state = match next {
                    Some(c) => State::Chunked(c),
                    None if used == 0 => State::Opaque,
                    None => State::Head(Vec::new()),
                };
                (used, false)
            }
            State::Opaque => {
                sink(Piece::Body(input));
                (input.len(), false)
            }
        }
    }
}

/// Where the head that `kept` begins ends in `input`: the index just past
/// its blank line, which may start in `kept` (split across two feeds).
fn head_end(kept: &[u8], input: &[u8]) -> Option<usize> {
    const END: &[u8] = b"\r\n\r\n";
    // The longest overlap ends earliest in `input`.
    for k in (1..END.len()).rev() {
        if kept.ends_with(&END[..k]) && input.starts_with(&END[k..]) {
            return Some(END.len() - k);
        }
    }
    find(input, END).map(|i| i + END.len())
}

/// Advances the chunked-body state over `input`. Returns bytes used and the
/// next state (`None`: the body ended, or — with 0 bytes used — is malformed).
fn step_chunk(mut c: Chunk, input: &[u8]) -> (usize, Option<Chunk>) {
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        c = match c {
            Chunk::Size { size, ext } => match b {
                b'\r' => match size {
                    Some(n) => Chunk::SizeLf(n),
                    None => return (i, None),
                },
                _ if ext => c,
                b';' => Chunk::Size { size, ext: true },
                _ => match (b as char).to_digit(16) {
                    Some(d) => match size.unwrap_or(0).checked_mul(16) {
                        Some(n) => Chunk::Size {
                            size: Some(n + u64::from(d)),
                            ext,
                        },
                        None => return (i, None),
                    },
                    None => return (i, None),
                },
            },
            Chunk::SizeLf(n) if b == b'\n' => {
                if n == 0 {
                    Chunk::Trailer {
                        at_line_start: true,
                        saw_cr: false,
                    }
                } else {
                    Chunk::Data(n)
                }
            }
            Chunk::Data(n) => {
                let take = (n as usize).min(input.len() - i);
                i += take;
                let left = n - take as u64;
                c = if left == 0 {
                    Chunk::DataCr
                } else {
                    Chunk::Data(left)
                };
                continue;
            }
            Chunk::DataCr if b == b'\r' => Chunk::DataLf,
            Chunk::DataLf if b == b'\n' => Chunk::Size {
                size: None,
                ext: false,
            },
            Chunk::Trailer {
                at_line_start,
                saw_cr,
            } => match b {
                b'\r' => Chunk::Trailer {
                    at_line_start,
                    saw_cr: true,
                },
                b'\n' if saw_cr && at_line_start => return (i + 1, None),
                b'\n' => Chunk::Trailer {
                    at_line_start: true,
                    saw_cr: false,
                },
                _ => Chunk::Trailer {
                    at_line_start: false,
                    saw_cr: false,
                },
            },
            _ => return (i, None),
        };
        i += 1;
    }
    (i, Some(c))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `stream` split at every `step` bytes; returns the heads seen and
    /// the body bytes in order.
    fn run(stream: &[u8], step: usize, framing: &[Framing]) -> (Vec<String>, Vec<u8>, bool) {
        let mut f = Framer::new();
        let mut heads = Vec::new();
        let mut body = Vec::new();
        let mut framings = framing.iter().copied();
        for part in stream.chunks(step) {
            f.feed(part, &mut |p| match p {
                Piece::Head(h) => {
                    heads.push(String::from_utf8_lossy(h).into_owned());
                    framings.next()
                }
                Piece::Body(b) => {
                    body.extend_from_slice(b);
                    None
                }
            });
        }
        (heads, body, f.is_opaque())
    }

    #[test]
    fn heads_and_bodies_are_found_at_every_split() {
        let stream = b"PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.1\r\n\r\n\
                       PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
                       3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\nHEAD /d HTTP/1.1\r\n\r\n";
        let framing = [
            Framing::Length(5),
            Framing::Length(0),
            Framing::Chunked,
            Framing::Length(0),
        ];
        for step in [1, 2, 3, 5, 7, 64, stream.len()] {
            let (heads, body, opaque) = run(stream, step, &framing);
            assert_eq!(heads.len(), 4, "step {step}: {heads:?}");
            assert!(heads[0].starts_with("PUT /a") && heads[0].ends_with("\r\n\r\n"));
            assert!(heads[1].starts_with("GET /b"));
            assert!(heads[2].starts_with("PUT /c"));
            assert!(heads[3].starts_with("HEAD /d"));
            assert_eq!(
                body, b"hello3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n",
                "step {step}"
            );
            assert!(!opaque);
        }
    }

    #[test]
    fn feed_through_head_takes_the_head_and_leaves_the_body() {
        let stream = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let head_len = stream.len() - 5;
        for split in 1..head_len {
            let mut f = Framer::new();
            let mut heads = 0;
            let mut sink = |p: Piece<'_>| match p {
                Piece::Head(h) => {
                    assert_eq!(h, &stream[..head_len]);
                    heads += 1;
                    Some(Framing::Length(5))
                }
                Piece::Body(_) => panic!("no body goes through the sink"),
            };
            let first = f.feed_through_head(&stream[..split], &mut sink);
            assert_eq!(first, split);
            let second = f.feed_through_head(&stream[split..], &mut sink);
            assert_eq!(split + second, head_len, "split at {split}");
            assert_eq!(heads, 1);
            assert_eq!(f.body_remaining(), Some(5));
        }
    }

    #[test]
    fn a_malformed_chunk_size_stops_framing() {
        let stream = b"PUT /c HTTP/1.1\r\n\r\nzz\r\nGET / HTTP/1.1\r\n\r\n";
        let (heads, _, opaque) = run(stream, 4, &[Framing::Chunked]);
        assert_eq!(heads.len(), 1);
        assert!(opaque);
    }

    #[test]
    fn until_close_passes_everything_through() {
        let stream = b"HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 looks like a head but is body";
        let (heads, body, opaque) = run(stream, 3, &[Framing::UntilClose]);
        assert_eq!(heads.len(), 1);
        assert_eq!(body, b"HTTP/1.1 looks like a head but is body");
        assert!(opaque);
    }

    #[test]
    fn an_oversized_head_is_handed_on_as_a_head_and_stops_framing() {
        let mut stream = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        stream.extend(std::iter::repeat_n(b'a', MAX_HEAD + 10));
        let (heads, body, opaque) = run(&stream, 4096, &[]);
        assert_eq!(heads.len(), 1);
        assert!(heads[0].len() > MAX_HEAD);
        assert_eq!(heads[0].len() + body.len(), stream.len());
        assert!(opaque);
    }

    #[test]
    fn at_message_start_only_between_messages() {
        let mut f = Framer::new();
        assert!(f.at_message_start());
        let mut sink = |p: Piece<'_>| match p {
            Piece::Head(_) => Some(Framing::Length(2)),
            Piece::Body(_) => None,
        };
        f.feed(b"HTTP/1.1 200 OK\r\n", &mut sink);
        assert!(!f.at_message_start());
        f.feed(b"\r\na", &mut sink);
        assert!(!f.at_message_start());
        f.feed(b"b", &mut sink);
        assert!(f.at_message_start());
    }
}
