//! The connection wrapper: reads requests with actix-http's own decoder
//! ([`Mirror`]) before handing their bytes on, and rewrites response heads
//! on write.

use std::cell::{RefCell, RefMut};
use std::future::Future as _;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker, ready};

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::framer::{Framer, Piece};
use super::heads::rewrite_response_head;
use super::mirror::{Mirror, Stop};

/// Per-connection state shared between the wrapper and the handlers
/// (reached through the request's connection data; a connection lives on
/// one worker thread).
#[derive(Debug)]
pub(crate) struct Connection {
    mirror: RefCell<Mirror>,
}

impl Connection {
    /// The `x-ms-meta-*` names (exact case) of the request being handled
    /// on this connection: actix-http is given no byte of a request before
    /// the answer to the one before it was written, so the request a
    /// handler runs for is always the first one not yet answered.
    pub(crate) fn next_request_names(&self) -> Option<Vec<String>> {
        self.lock().current().map(|p| std::mem::take(&mut p.names))
    }

    /// Marks the current request answered, as writing its answer does;
    /// for the differential check, which has no writer.
    pub(crate) fn answer_current(&self) {
        self.lock().answered();
    }

    /// Whether the layer found bytes actix-http refuses.
    pub(crate) fn refused(&self) -> bool {
        self.lock().stopped() == Some(Stop::Refused)
    }

    fn lock(&self) -> RefMut<'_, Mirror> {
        self.mirror.borrow_mut()
    }
}

/// The IO wrapper around one accepted connection.
#[derive(Debug)]
pub(crate) struct CaseIo<T> {
    inner: T,
    conn: Rc<Connection>,
    /// Bytes read from the socket that actix-http may not read yet.
    held: BytesMut,
    /// Bytes handed to actix-http in all.
    delivered: u64,
    /// Of them, filler (see `Mirror::padding`).
    padded: u64,
    /// Woken when held bytes may go.
    read_waker: Option<Waker>,
    writer: Framer,
    /// A final answer's head was written and its body is not complete.
    answering: bool,
    /// Rewritten bytes accepted from actix but not yet written to the socket.
    out: BytesMut,
    /// Cancelled when the server stops: the connection then ends as soon
    /// as it is idle.
    shutdown: CancellationToken,
    stopping: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<T> CaseIo<T> {
    /// Wraps `inner`; `config` is the worker's actix-http configuration;
    /// once `shutdown` is cancelled, the connection ends when it is idle.
    pub(crate) fn new(
        inner: T,
        config: actix_http::ServiceConfig,
        shutdown: CancellationToken,
    ) -> CaseIo<T> {
        CaseIo {
            stopping: Box::pin(shutdown.clone().cancelled_owned()),
            shutdown,
            inner,
            conn: Rc::new(Connection {
                mirror: RefCell::new(Mirror::new(config)),
            }),
            held: BytesMut::new(),
            delivered: 0,
            padded: 0,
            read_waker: None,
            writer: Framer::new(),
            answering: false,
            out: BytesMut::new(),
        }
    }

    /// The wrapped stream.
    pub(crate) fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The handle handlers use to learn the names of their request.
    pub(crate) fn connection(&self) -> Rc<Connection> {
        Rc::clone(&self.conn)
    }

    /// Whether the server is stopping and no request is under way on this
    /// connection (none read in part, none unanswered, no answer half
    /// written). Registers for a wake-up when the server starts stopping.
    fn idle_at_shutdown(&mut self, cx: &mut Context<'_>) -> bool {
        let stopping = self.shutdown.is_cancelled() || self.stopping.as_mut().poll(cx).is_ready();
        stopping
            && self.held.is_empty()
            && self.out.is_empty()
            && !self.answering
            && self.writer.at_message_start()
            && self.conn.lock().is_idle()
    }

    /// When no byte may go to actix: the filler that makes it refuse a head
    /// the layer refused (see `Mirror::padding`), else wait for an answer
    /// to be written (which wakes this task).
    fn pad_or_wait(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let pad = self.conn.lock().padding(self.delivered);
        let n = pad.min(buf.remaining() as u64) as usize;
        if n == 0 {
            self.read_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        buf.put_slice(&vec![b'a'; n]);
        self.delivered += n as u64;
        self.padded += n as u64;
        Poll::Ready(Ok(()))
    }

    /// Filler bytes given to actix in place of a refused head's end.
    pub(crate) fn padded(&self) -> u64 {
        self.padded
    }

    /// Ends the answer being written once its body is complete, letting
    /// actix-http read the next request.
    fn finish_answer(&mut self) {
        if self.answering && self.writer.at_message_start() {
            self.answering = false;
            self.conn.lock().answered();
            if let Some(w) = self.read_waker.take() {
                w.wake();
            }
        }
    }
}

fn disagreed() -> std::io::Error {
    tracing::error!("the connection layer and actix-http read a request head differently");
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        "the connection layer and actix-http read a request head differently",
    )
}

impl<T: AsyncRead + Unpin> AsyncRead for CaseIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.idle_at_shutdown(cx) {
            // The end of the stream: actix closes an idle connection.
            return Poll::Ready(Ok(()));
        }
        let allowed = this.conn.lock().allowed();
        if !this.held.is_empty() {
            let n = allowed
                .saturating_sub(this.delivered)
                .min(this.held.len() as u64)
                .min(buf.remaining() as u64) as usize;
            if n == 0 {
                return this.pad_or_wait(cx, buf);
            }
            buf.put_slice(&this.held[..n]);
            this.held.advance(n);
            this.delivered += n as u64;
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let new = &buf.filled()[before..];
        if new.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let (allowed, stopped) = {
            let mut mirror = this.conn.lock();
            mirror.feed(new);
            (mirror.allowed(), mirror.stopped())
        };
        if stopped == Some(Stop::Disagreed) {
            return Poll::Ready(Err(disagreed()));
        }
        let keep = allowed.saturating_sub(this.delivered).min(new.len() as u64) as usize;
        if keep < new.len() {
            this.held.extend_from_slice(&new[keep..]);
            buf.set_filled(before + keep);
        }
        this.delivered += keep as u64;
        if keep == 0 {
            buf.set_filled(before);
            return this.pad_or_wait(cx, buf);
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
            // A body that runs until the connection closes (an HTTP/1.0
            // answer of unknown length): nothing follows it.
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        // Body bytes of known length go straight to the socket: no copy.
        if let Some(remaining) = this.writer.body_remaining().filter(|&r| r > 0) {
            let n = (remaining.min(buf.len() as u64)) as usize;
            let written = ready!(Pin::new(&mut this.inner).poll_write(cx, &buf[..n]))?;
            this.writer.feed(&buf[..written], &mut |_| None);
            this.finish_answer();
            return Poll::Ready(Ok(written));
        }
        // Up to the end of the next head only: the body after it comes back
        // in the next call and goes straight to the socket, instead of
        // being copied here (a listing page is megabytes).
        let was_head = this.conn.lock().current().is_some_and(|p| p.is_head);
        let (out, answering) = (&mut this.out, &mut this.answering);
        let mut unreadable = false;
        let taken = this
            .writer
            .feed_through_head(buf, &mut |piece| match piece {
                Piece::Head(head) => match rewrite_response_head(head, was_head) {
                    Some(r) => {
                        *answering |= r.is_final;
                        out.extend_from_slice(&r.bytes);
                        Some(r.framing)
                    }
                    None => {
                        unreadable = true;
                        None
                    }
                },
                Piece::Body(body) => {
                    out.extend_from_slice(body);
                    None
                }
            });
        if unreadable {
            tracing::error!("the connection layer cannot read a response head actix-http wrote");
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "unreadable response head",
            )));
        }
        this.finish_answer();
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
