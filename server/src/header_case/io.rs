//! The connection wrapper: records request heads on read, rewrites response
//! heads on write.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::framer::{Framer, Piece};
use super::heads::{request_facts, rewrite_response_head};

/// Per-connection state shared between the wrapper and the handlers
/// (reached through the request's connection data).
#[derive(Debug, Default)]
pub(crate) struct Connection {
    state: Mutex<Queues>,
}

#[derive(Debug, Default)]
struct Queues {
    /// Metadata names of requests not yet handled, in order.
    names: VecDeque<Vec<String>>,
    /// Whether each request not yet answered was a HEAD, in order.
    heads: VecDeque<bool>,
}

impl Connection {
    /// The `x-ms-meta-*` names (exact case) of the next request handled on
    /// this connection; called once per request. `None` when unknown.
    pub(crate) fn next_request_names(&self) -> Option<Vec<String>> {
        self.lock().names.pop_front()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queues> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The IO wrapper around one accepted connection.
#[derive(Debug)]
pub(crate) struct CaseIo<T> {
    inner: T,
    conn: Arc<Connection>,
    reader: Framer,
    writer: Framer,
    /// Rewritten bytes accepted from actix but not yet written to the socket.
    out: BytesMut,
}

impl<T> CaseIo<T> {
    pub(crate) fn new(inner: T) -> CaseIo<T> {
        CaseIo {
            inner,
            conn: Arc::new(Connection::default()),
            reader: Framer::new(),
            writer: Framer::new(),
            out: BytesMut::new(),
        }
    }

    /// The wrapped stream.
    pub(crate) fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The handle handlers use to learn the names of their request.
    pub(crate) fn connection(&self) -> Arc<Connection> {
        Arc::clone(&self.conn)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for CaseIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let conn = &this.conn;
        this.reader
            .feed(&buf.filled()[before..], &mut |piece| match piece {
                Piece::Head(head) => {
                    let facts = request_facts(head)?;
                    let mut q = conn.lock();
                    q.names.push_back(facts.meta_names);
                    q.heads.push_back(facts.is_head);
                    Some(facts.framing)
                }
                Piece::Body(_) => None,
            });
        if this.reader.is_opaque() {
            // Requests from here on cannot be matched with their heads.
            conn.lock().names.clear();
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> CaseIo<T> {
    /// Writes out buffered bytes; `Pending` if the socket cannot take them all.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while !self.out.is_empty() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.out))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.out.advance(n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for CaseIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        if this.writer.is_opaque() {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        // Body bytes of known length go straight to the socket: no copy.
        if let Some(remaining) = this.writer.body_remaining().filter(|&r| r > 0) {
            let n = (remaining.min(buf.len() as u64)) as usize;
            let written = ready!(Pin::new(&mut this.inner).poll_write(cx, &buf[..n]))?;
            this.writer.feed(&buf[..written], &mut |_| None);
            return Poll::Ready(Ok(written));
        }
        // Up to the end of the next head only: the body after it comes back
        // in the next call and goes straight to the socket, instead of
        // being copied here (a listing page is megabytes).
        let (conn, out) = (&this.conn, &mut this.out);
        let taken = this
            .writer
            .feed_through_head(buf, &mut |piece| match piece {
                Piece::Head(head) => {
                    let was_head = {
                        let q = conn.lock();
                        q.heads.front().copied()
                    };
                    let rewritten = match was_head {
                        Some(h) => rewrite_response_head(head, h),
                        // No record of the request: stop rewriting for good.
                        None => None,
                    };
                    match rewritten {
                        Some(r) => {
                            if r.is_final {
                                conn.lock().heads.pop_front();
                            }
                            out.extend_from_slice(&r.bytes);
                            Some(r.framing)
                        }
                        None => {
                            out.extend_from_slice(head);
                            None
                        }
                    }
                }
                Piece::Body(body) => {
                    out.extend_from_slice(body);
                    None
                }
            });
        // The bytes taken are ours now; write what the socket takes.
        match this.poll_drain(cx) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            _ => Poll::Ready(Ok(taken)),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
