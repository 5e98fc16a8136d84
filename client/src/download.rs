//! Downloads: the body as a stream of chunks, into memory, or into a file
//! (docs/wire/blobs.md#get-blob).

use std::path::Path;

use bytes::{Bytes, BytesMut};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use reqwest::Method;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::properties::header;
use crate::{BlobClient, BlobProperties, ByteRange, Conditions, ContentRange, Error, Etag, Result};

/// What to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DownloadOptions {
    /// Only these bytes (a 206 answer); `None` reads the whole blob.
    pub range: Option<ByteRange>,
    /// Conditions and lease id (an unmet `If-None-Match` /
    /// `If-Modified-Since` is a 304 error).
    pub conditions: Conditions,
}

impl DownloadOptions {
    /// Only the bytes of `range`.
    pub fn with_range(mut self, range: ByteRange) -> DownloadOptions {
        self.range = Some(range);
        self
    }

    /// Conditions and lease id.
    pub fn with_conditions(mut self, conditions: Conditions) -> DownloadOptions {
        self.conditions = conditions;
        self
    }
}

/// An answer to Get Blob whose body has not been read yet.
///
/// The body is streamed: nothing is held in memory unless
/// [`Download::bytes`] is asked for. The bytes are those of the version the
/// request started on, even if the blob is overwritten meanwhile.
pub struct Download {
    properties: BlobProperties,
    range: Option<ContentRange>,
    body: BoxStream<'static, Result<Bytes>>,
}

impl std::fmt::Debug for Download {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("properties", &self.properties)
            .field("range", &self.range)
            .finish_non_exhaustive()
    }
}

impl Download {
    /// The blob's properties and metadata (`content_length` is the whole
    /// blob's length, also for a range).
    pub fn properties(&self) -> &BlobProperties {
        &self.properties
    }

    /// The range returned, for a range read.
    pub fn content_range(&self) -> Option<ContentRange> {
        self.range
    }

    /// The body, chunk by chunk.
    pub fn into_stream(self) -> BoxStream<'static, Result<Bytes>> {
        self.body
    }

    /// The whole body in memory.
    ///
    /// # Errors
    /// [`Error::Transport`](crate::Error::Transport) when the body breaks off.
    pub async fn bytes(self) -> Result<Bytes> {
        let mut out = BytesMut::new();
        let mut body = self.body;
        while let Some(chunk) = body.try_next().await? {
            out.extend_from_slice(&chunk);
        }
        Ok(out.freeze())
    }

    /// Writes the body to `writer`; returns the number of bytes written.
    ///
    /// # Errors
    /// Transport errors of the body, I/O errors of the writer.
    pub async fn write_to<W: AsyncWrite + Unpin + ?Sized>(self, writer: &mut W) -> Result<u64> {
        let mut written = 0u64;
        let mut body = self.body;
        while let Some(chunk) = body.try_next().await? {
            writer.write_all(&chunk).await?;
            written += chunk.len() as u64;
        }
        writer.flush().await?;
        Ok(written)
    }
}

/// The state of a body being streamed: where it stands, so that a body
/// that breaks off can be continued from the next byte.
struct Resume {
    blob: BlobClient,
    lease_id: Option<crate::LeaseId>,
    /// The version being read; continuations must read the same one.
    etag: Etag,
    /// Offset of the next byte to deliver.
    next: u64,
    /// Offset just past the last byte wanted.
    end: u64,
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    /// Requests made so far for this body.
    attempt: u32,
    done: bool,
}

impl Resume {
    /// The body as a stream that, when the connection breaks mid-body,
    /// asks for the rest (`x-ms-range: bytes=<next>-<end − 1>`) with
    /// `If-Match` on the ETag already read, so the bytes delivered always
    /// belong to one version; as often as the retry policy allows.
    fn into_stream(self) -> BoxStream<'static, Result<Bytes>> {
        stream::unfold(self, |mut st| async move {
            if st.done {
                return None;
            }
            loop {
                match st.body.next().await {
                    Some(Ok(chunk)) => {
                        st.next += chunk.len() as u64;
                        return Some((Ok(chunk), st));
                    }
                    None => return None,
                    Some(Err(source)) => {
                        let retry = st.blob.pipeline.retry().clone();
                        let resumable = st.next < st.end
                            && retry.should_retry(st.attempt, crate::Outcome::Connection);
                        if !resumable {
                            st.done = true;
                            let error = Error::Transport {
                                attempts: st.attempt,
                                source,
                            };
                            return Some((Err(error), st));
                        }
                        tracing::debug!(error = %source, next = st.next, "resuming a download");
                        tokio::time::sleep(retry.backoff(st.attempt)).await;
                        st.attempt += 1;
                        let rest = reopen(
                            st.blob.clone(),
                            st.lease_id,
                            st.etag.clone(),
                            ByteRange {
                                start: st.next,
                                end: Some(st.end - 1),
                            },
                        );
                        match rest.await {
                            Ok(body) => st.body = body,
                            Err(error) => {
                                st.done = true;
                                return Some((Err(error), st));
                            }
                        }
                    }
                }
            }
        })
        .boxed()
    }
}

/// Asks for `range` of exactly the version `etag`.
async fn reopen(
    blob: BlobClient,
    lease_id: Option<crate::LeaseId>,
    etag: Etag,
    range: ByteRange,
) -> Result<BoxStream<'static, reqwest::Result<Bytes>>> {
    let mut conditions = Conditions::new().with_if_match(etag);
    conditions.lease_id = lease_id;
    let request = conditions
        .apply(blob.request(Method::GET))
        .header("x-ms-range", range.header_value());
    let response = blob.pipeline.send(request).await?;
    Ok(response.bytes_stream().boxed())
}

impl BlobClient {
    /// Get Blob: properties now, the body as a stream.
    ///
    /// A body that breaks off is continued from the next byte, pinned to
    /// the version first read (see the retry policy); if that version is
    /// gone by then, the stream ends with `412 ConditionNotMet` (or 404).
    ///
    /// # Errors
    /// `404 BlobNotFound`; `304` / `412 ConditionNotMet`;
    /// `416 InvalidRange` for a range past the end (or any range of an empty
    /// blob); lease errors.
    ///
    /// ```no_run
    /// use stowage_client::{BlobServiceClient, ByteRange, DownloadOptions};
    ///
    /// # async fn demo() -> stowage_client::Result<()> {
    /// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
    /// let blob = service.container("photos").blob("2024/09/cat.jpg");
    /// # service.container("photos").create_if_not_exists().await?;
    /// # blob.upload(vec![0u8; 4096], &stowage_client::UploadOptions::default()).await?;
    /// // The first kilobyte only, and the whole blob's properties with it.
    /// let download = blob
    ///     .download(&DownloadOptions::default().with_range(ByteRange::new(0, 1024)))
    ///     .await?;
    /// let size = download.properties().content_length;
    /// let head = download.bytes().await?;
    /// assert!(head.len() as u64 <= size.min(1024));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn download(&self, options: &DownloadOptions) -> Result<Download> {
        let request = options
            .conditions
            .apply(self.request(Method::GET))
            .header_opt(
                "x-ms-range",
                options.range.as_ref().map(ByteRange::header_value),
            );
        let response = self.pipeline.send(request).await?;
        let properties = BlobProperties::from_headers(response.headers())?;
        let range = header(response.headers(), "content-range").and_then(ContentRange::parse);
        let (first, end) = match range {
            Some(r) => (r.start, r.end + 1),
            None => (0, properties.content_length),
        };
        let resume = Resume {
            blob: self.clone(),
            lease_id: options.conditions.lease_id,
            etag: properties.etag.clone(),
            next: first,
            end,
            body: response.bytes_stream().boxed(),
            attempt: 1,
            done: false,
        };
        Ok(Download {
            properties,
            range,
            body: resume.into_stream(),
        })
    }

    /// The whole blob in memory.
    ///
    /// # Errors
    /// As [`BlobClient::download`].
    pub async fn download_bytes(&self) -> Result<Bytes> {
        self.download(&DownloadOptions::default())
            .await?
            .bytes()
            .await
    }

    /// Streams the blob into a new file at `path` (replacing one that
    /// exists) and returns its properties.
    ///
    /// # Errors
    /// As [`BlobClient::download`], plus I/O errors.
    pub async fn download_to_file(
        &self,
        path: impl AsRef<Path>,
        options: &DownloadOptions,
    ) -> Result<BlobProperties> {
        let download = self.download(options).await?;
        let properties = download.properties().clone();
        let mut file = tokio::fs::File::create(path).await?;
        download.write_to(&mut file).await?;
        file.sync_all().await?;
        Ok(properties)
    }
}
