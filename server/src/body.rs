//! Request bodies as the engine takes them: a stream of bytes that fails
//! when the client stalls, so a slow or stopped client cannot hold an
//! upload (and its resources) open forever.

use std::time::Duration;

use bytes::Bytes;
use futures::stream::{Stream, StreamExt};

use crate::error::ApiError;

/// How long a body may go without a byte before the request fails. Every
/// operation that reads a body reads it through [`streamed`]: Put Blob,
/// Put Block and Append Block stream it to the store, the others collect
/// it with [`collect`].
pub(crate) const BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The payload as an `io::Result` stream that errors after `idle` without data.
pub(crate) fn streamed<S, E>(
    payload: S,
    idle: Duration,
) -> impl Stream<Item = std::io::Result<Bytes>> + Unpin
where
    S: Stream<Item = Result<Bytes, E>> + Unpin + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    futures::stream::unfold(Some(payload), move |state| async move {
        let mut payload = state?;
        match tokio::time::timeout(idle, payload.next()).await {
            Ok(Some(Ok(chunk))) => Some((Ok(chunk), Some(payload))),
            Ok(Some(Err(e))) => Some((Err(std::io::Error::other(e)), None)),
            Ok(None) => None,
            Err(_) => Some((
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the request body stalled",
                )),
                None,
            )),
        }
    })
    .boxed_local()
}

/// Collects a body of at most `max` bytes from `stream`: a longer one is
/// refused as soon as it passes the limit (413 RequestBodyTooLarge), one
/// that fails or stalls answers 400 InvalidInput, as a Put Blob body that
/// does.
pub(crate) async fn collect(
    mut stream: impl Stream<Item = std::io::Result<Bytes>> + Unpin,
    max: usize,
) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| ApiError::InvalidInput)?;
        if out.len() + chunk.len() > max {
            return Err(ApiError::RequestBodyTooLarge { max: max as u64 });
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::error::PayloadError;

    fn payload(
        s: impl Stream<Item = Result<Bytes, PayloadError>> + 'static,
    ) -> impl Stream<Item = Result<Bytes, PayloadError>> + Unpin {
        Box::pin(s)
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_fails_after_the_idle_timeout() {
        let chunks = futures::stream::iter([Ok(Bytes::from_static(b"first"))])
            .chain(futures::stream::pending());
        let mut s = streamed(payload(chunks), Duration::from_secs(60));
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(b"first")
        );
        let err = s.next().await.unwrap().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(s.next().await.is_none());
    }

    /// The collected bodies (block lists, ACLs, batches, service
    /// properties): whole, too large, failed, stalled before the first byte
    /// and after some. The clock is paused: the timeout passes at once.
    #[tokio::test(start_paused = true)]
    async fn collected_bodies_end_whole_too_large_or_failed() {
        type Chunks = Vec<Result<Bytes, PayloadError>>;
        type Expected = Result<Vec<u8>, &'static str>;
        let ok = |s: &'static [u8]| Ok(Bytes::from_static(s));
        let cases: Vec<(Chunks, bool, Expected)> = vec![
            (vec![ok(b"ab"), ok(b"cd")], false, Ok(b"abcd".to_vec())),
            (
                vec![ok(b"abc"), ok(b"de")],
                false,
                Err("RequestBodyTooLarge"),
            ),
            (
                vec![ok(b"ab"), Err(PayloadError::Incomplete(None))],
                false,
                Err("InvalidInput"),
            ),
            (vec![], true, Err("InvalidInput")),
            (vec![ok(b"ab")], true, Err("InvalidInput")),
        ];
        for (chunks, stall, expected) in cases {
            let what = format!("{chunks:?} then stall: {stall}");
            let tail = if stall {
                futures::stream::pending().boxed_local()
            } else {
                futures::stream::empty().boxed_local()
            };
            let body = payload(futures::stream::iter(chunks).chain(tail));
            let got = collect(streamed(body, BODY_IDLE_TIMEOUT), 4)
                .await
                .map_err(|e| e.answer().code);
            assert_eq!(got, expected, "{what}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_keeps_coming_is_passed_through_whole() {
        let chunks = futures::stream::iter((0..3).map(|i| Ok(Bytes::from(vec![i; 4]))));
        let got: Vec<_> = streamed(payload(chunks), Duration::from_secs(60))
            .map(|c| c.unwrap())
            .collect()
            .await;
        assert_eq!(got.concat(), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    }
}
