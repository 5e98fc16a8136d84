//! The body of a Get Blob response: the extents of one version, streamed in
//! order, keeping them pinned until the stream is dropped.

use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{BoxStream, Stream, StreamExt};

use crate::Result;
use crate::extents::Extents;
use crate::meta::ExtentRef;
use crate::pins::PinGuard;

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
    /// Streams `range` of the content made of `extents` (in order).
    pub(crate) fn new(
        extents: Extents,
        parts: Vec<ExtentRef>,
        range: Range<u64>,
        pins: PinGuard,
    ) -> BlobBody {
        // The (extent, range within it) pieces that cover `range`.
        let mut pieces = Vec::new();
        let mut offset = 0u64;
        for part in parts {
            let (start, end) = (offset, offset + part.len);
            offset = end;
            // Empty committed blocks have no object to read.
            if part.len == 0 || end <= range.start || start >= range.end {
                continue;
            }
            let from = range.start.max(start) - start;
            let to = range.end.min(end) - start;
            pieces.push((part.extent, from..to));
        }
        let inner = futures::stream::iter(pieces)
            .then(move |(id, r)| {
                let extents = extents.clone();
                async move { extents.read(&id, r).await }
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
