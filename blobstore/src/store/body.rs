//! The body of a Get Blob response: the extents of one version, streamed in
//! order, keeping them pinned until the stream is dropped.

use crate::meta::sql::Sql;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};

use crate::Result;
use crate::extents::{self, Extents};
use crate::meta::{self, Db, ExtentRef};
use crate::pins::PinGuard;

/// Inline bytes a read loads in the transaction that resolved the blob;
/// past this they are loaded piece by piece while streaming (a blob made of
/// many small blocks must not be read into memory at once).
pub(crate) const PRELOAD_INLINE: u64 = 1024 * 1024;

/// One stretch of the body.
#[derive(Debug)]
pub(crate) enum Piece {
    /// A range of an object-store extent.
    Object(String, Range<u64>),
    /// A range of an inline extent, loaded when it is reached.
    Inline(String, Range<u64>),
    /// Bytes already loaded.
    Loaded(Bytes),
    /// Zeros: pages of a page blob that nothing was written to.
    Zeros(u64),
}

/// The zeros a [`Piece::Zeros`] is streamed from, one slice at a time: a
/// terabyte of unwritten pages costs no memory.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// The pieces that cover `range` of the content made of `parts` (in
/// order). Inline pieces are loaded from `conn` while their total stays
/// within [`PRELOAD_INLINE`]; call it in the read that listed `parts`.
/// `preloaded_bytes[i]`, where the read gave it, holds the bytes of
/// `parts[i]` (the query that listed the parts may read them too).
pub(crate) fn pieces(
    conn: &dyn Sql,
    parts: &[ExtentRef],
    preloaded_bytes: &[Option<Bytes>],
    range: &Range<u64>,
) -> Result<Vec<Piece>> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    let mut preloaded = 0u64;
    for (i, part) in parts.iter().enumerate() {
        let (start, end) = (offset, offset + part.len);
        offset = end;
        // Empty committed blocks have no bytes to read.
        if part.len == 0 || end <= range.start || start >= range.end {
            continue;
        }
        let from = range.start.max(start) - start;
        let to = range.end.min(end) - start;
        if !extents::is_inline(&part.extent) {
            out.push(Piece::Object(part.extent.clone(), from..to));
        } else if preloaded + part.len <= PRELOAD_INLINE {
            preloaded += part.len;
            let data = match preloaded_bytes.get(i) {
                Some(Some(data)) => data.clone(),
                _ => meta::inline_data(conn, &part.extent)?,
            };
            out.push(Piece::Loaded(data.slice(from as usize..to as usize)));
        } else {
            out.push(Piece::Inline(part.extent.clone(), from..to));
        }
    }
    Ok(out)
}

/// The pieces of a page blob's `span`, from the stretches of its page map
/// (`pages::map::layout`); inline extents are preloaded as in [`pieces`].
pub(crate) fn page_pieces(
    conn: &dyn Sql,
    stretches: Vec<crate::pages::map::Stretch>,
) -> Result<Vec<Piece>> {
    use crate::pages::map::Stretch;
    let mut out = Vec::with_capacity(stretches.len());
    let mut preloaded = 0u64;
    for stretch in stretches {
        match stretch {
            Stretch::Zeros(n) => out.push(Piece::Zeros(n)),
            Stretch::Data { extent, range } if !extents::is_inline(&extent) => {
                out.push(Piece::Object(extent, range));
            }
            Stretch::Data { extent, range } => {
                let len = range.end - range.start;
                if preloaded + len <= PRELOAD_INLINE {
                    preloaded += len;
                    let data = meta::inline_data(conn, &extent)?;
                    out.push(Piece::Loaded(
                        data.slice(range.start as usize..range.end as usize),
                    ));
                } else {
                    out.push(Piece::Inline(extent, range));
                }
            }
        }
    }
    Ok(out)
}

/// `len` zeros, in slices of [`ZEROS`].
fn zeros(len: u64) -> BoxStream<'static, Result<Bytes>> {
    futures::stream::unfold(len, |left| async move {
        if left == 0 {
            return None;
        }
        let n = left.min(ZEROS.len() as u64);
        Some((Ok(Bytes::from_static(&ZEROS[..n as usize])), left - n))
    })
    .boxed()
}

/// A stream of the bytes of one blob version (or a range of it).
pub struct BlobBody {
    inner: BoxStream<'static, Result<Bytes>>,
    _pins: Option<PinGuard>,
}

impl std::fmt::Debug for BlobBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobBody").finish_non_exhaustive()
    }
}

impl BlobBody {
    /// Streams `pieces`, holding `pins` (the extents they read) until dropped.
    pub(crate) fn new(extents: Extents, db: Db, pieces: Vec<Piece>, pins: PinGuard) -> BlobBody {
        let inner = futures::stream::iter(pieces)
            .then(move |piece| {
                let (extents, db) = (extents.clone(), db.clone());
                async move {
                    match piece {
                        Piece::Object(id, r) => extents.read(&id, r).await,
                        Piece::Inline(id, r) => {
                            let data = db.call(move |conn| meta::inline_data(conn, &id)).await?;
                            let piece = data.slice(r.start as usize..r.end as usize);
                            Ok(futures::stream::once(async move { Ok(piece) }).boxed())
                        }
                        Piece::Loaded(data) => {
                            Ok(futures::stream::once(async move { Ok(data) }).boxed())
                        }
                        Piece::Zeros(n) => Ok(zeros(n)),
                    }
                }
            })
            .map(|r| match r {
                Ok(s) => s,
                Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
            })
            .flatten()
            .boxed();
        BlobBody {
            inner,
            _pins: Some(pins),
        }
    }

    /// [`BlobBody::new`] with its first piece opened already: when the
    /// object store cannot give the first object, the request fails here,
    /// before its answer has begun, and is answered 500 InternalError
    /// instead of a 200 whose body breaks off. (A later object that fails
    /// can only end the connection: the status is sent by then.)
    pub(crate) async fn opened(
        extents: Extents,
        db: Db,
        mut pieces: Vec<Piece>,
        pins: PinGuard,
    ) -> Result<BlobBody> {
        if !matches!(pieces.first(), Some(Piece::Object(..))) {
            return Ok(BlobBody::new(extents, db, pieces, pins));
        }
        let Piece::Object(id, r) = pieces.remove(0) else {
            unreachable!("the first piece is an object")
        };
        let first = extents.read(&id, r).await?;
        let rest = BlobBody::new(extents, db, pieces, pins);
        Ok(BlobBody {
            inner: first.chain(rest.inner).boxed(),
            _pins: rest._pins,
        })
    }

    /// An empty body.
    pub(crate) fn empty() -> BlobBody {
        BlobBody {
            inner: futures::stream::empty().boxed(),
            _pins: None,
        }
    }
}

impl Stream for BlobBody {
    type Item = Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx)
    }
}
