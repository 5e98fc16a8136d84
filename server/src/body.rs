//! Request bodies as the engine takes them: a stream of bytes that fails
//! when the client stalls, so a slow or stopped client cannot hold an
//! upload (and its resources) open forever.

use std::time::Duration;

use bytes::Bytes;
use futures::stream::{Stream, StreamExt};

/// How long a body may go without a byte before the request fails.
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
