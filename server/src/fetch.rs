//! The fetcher: the only code of Stowage that opens outbound connections.
//! It reads copy sources on other hosts (docs/wire/copy.md#sources-on-other-hosts).
//!
//! - Only `http` and `https` URLs are fetched: no `file:` or other scheme,
//!   so a copy can never read the server's own data directory; a source
//!   on this server is read in-process before the fetcher is asked.
//! - Redirects are not followed: the service refuses a redirected answer
//!   of the source, and so does Stowage ([`redirect_refusal`]).
//! - Connect and read timeouts, and a bound on the copies that read at
//!   once (a permit travels with each open body and is given back when
//!   the body is dropped).
//! - A shared access signature in the URL passes through as it is;
//!   `x-ms-copy-source-authorization` is sent as `Authorization`.
//! - The body is streamed: nothing is held whole in memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use stowage_blobstore::{ByteRange, ContentProperties, CopiedType, Metadata};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::error::ApiError;

/// How the fetcher behaves; built from the server's flags.
#[derive(Clone, Debug)]
pub struct FetchConfig {
    /// Longest wait for a connection to the source.
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of the source's answer.
    pub read_timeout: Duration,
    /// Copies that may read from other hosts at once (`--copyConcurrency`);
    /// more wait for their turn.
    pub max_copies: usize,
}

/// `x-ms-version` of the documents the fetcher reads (Get Page Ranges of a
/// page blob source): a version whose page lists may carry `NextMarker`.
const DOCUMENT_VERSION: &str = "2021-08-06";

/// The default of [`FetchConfig::max_copies`].
pub const DEFAULT_MAX_COPIES: usize = 8;

impl Default for FetchConfig {
    fn default() -> FetchConfig {
        FetchConfig {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
            max_copies: DEFAULT_MAX_COPIES,
        }
    }
}

/// Reads copy sources on other hosts, and knows the asynchronous copies
/// running (so that Abort Copy Blob can stop one).
#[derive(Debug)]
pub struct Fetcher {
    client: reqwest::Client,
    permits: Arc<Semaphore>,
    running: Mutex<HashMap<String, CancellationToken>>,
}

/// A source's answer, its body not read yet.
pub(crate) struct Opened {
    /// The bytes the body yields (its `Content-Length`).
    pub length: u64,
    /// The answer's headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body; holds a permit of the concurrency bound until dropped.
    pub body: BoxStream<'static, std::io::Result<Bytes>>,
}

/// Why a URL is not fetched.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum UrlRefusal {
    /// Not an absolute URL.
    Malformed,
    /// A scheme other than `http` and `https`.
    Scheme,
}

/// Parses a source URL the fetcher may read: `http` or `https` with a host.
pub(crate) fn fetchable_url(url: &str) -> Result<reqwest::Url, UrlRefusal> {
    let parsed = reqwest::Url::parse(url).map_err(|_| UrlRefusal::Malformed)?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(UrlRefusal::Scheme);
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(UrlRefusal::Malformed);
    }
    Ok(parsed)
}

/// The refusal of a source that answered with a redirect, as the service
/// words it; `None` for any other status. The service does not follow
/// redirects of a copy source, and neither does Stowage.
pub(crate) fn redirect_refusal(status: u16) -> Option<String> {
    (300..400).contains(&status).then(|| {
        format!("A redirected response (HTTP status code {status}) from the copy source is not supported.")
    })
}

/// The header value asking the source for `range`.
pub(crate) fn range_header(range: &ByteRange) -> String {
    match range.end {
        Some(end) => format!("bytes={}-{end}", range.start),
        None => format!("bytes={}-", range.start),
    }
}

impl Fetcher {
    /// A fetcher with `config`. HTTPS sources are checked against the
    /// system's trusted roots; when those cannot be read the server still
    /// starts, and HTTPS sources then fail to verify.
    pub fn new(config: &FetchConfig) -> Fetcher {
        let builder = |native_roots: bool| {
            reqwest::Client::builder()
                .connect_timeout(config.connect_timeout)
                .read_timeout(config.read_timeout)
                .redirect(reqwest::redirect::Policy::none())
                .tls_built_in_native_certs(native_roots)
                // Each request opens its own connection on the runtime of
                // the worker that asks: a pooled connection would belong to
                // the runtime of another worker.
                .pool_max_idle_per_host(0)
                .build()
        };
        let client = builder(true).unwrap_or_else(|e| {
            tracing::warn!("copy sources over HTTPS cannot be verified: {e}");
            builder(false).unwrap_or_default()
        });
        Fetcher {
            client,
            permits: Arc::new(Semaphore::new(config.max_copies.max(1))),
            running: Mutex::new(HashMap::new()),
        }
    }

    /// GETs `url` (`range` of it when given), sending `authorization` as
    /// `Authorization`. The answer must be a success with a length.
    ///
    /// # Errors
    /// `CannotVerifyCopySource`: the source's own refusal with its status,
    /// a redirect, an unreachable source (404, as a missing source).
    pub(crate) async fn open(
        &self,
        url: reqwest::Url,
        range: Option<ByteRange>,
        authorization: Option<&str>,
    ) -> Result<Opened, ApiError> {
        self.open_if_match(url, range, authorization, None).await
    }

    /// [`Fetcher::open`], sending `If-Match: if_match` when given: the
    /// reads after the first of a copy made of several ask for the version
    /// the first one saw.
    pub(crate) async fn open_if_match(
        &self,
        url: reqwest::Url,
        range: Option<ByteRange>,
        authorization: Option<&str>,
        if_match: Option<&str>,
    ) -> Result<Opened, ApiError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| stowage_blobstore::Error::CannotVerifyCopySource)?;
        let mut req = self.client.get(url);
        if let Some(r) = &range {
            req = req.header("range", range_header(r));
        }
        if let Some(auth) = authorization {
            req = req.header("authorization", auth);
        }
        if let Some(etag) = if_match {
            req = req.header("if-match", format!("\"{etag}\""));
        }
        let resp = req.send().await.map_err(|e| {
            tracing::debug!("copy source unreachable: {e}");
            ApiError::Store(stowage_blobstore::Error::CannotVerifyCopySource)
        })?;
        let status = resp.status().as_u16();
        if let Some(message) = redirect_refusal(status) {
            return Err(ApiError::CopySourceAnswered {
                status: 400,
                source_status: status,
                code: None,
                message,
            });
        }
        if !resp.status().is_success() {
            let code = resp
                .headers()
                .get("x-ms-error-code")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let message = resp
                .status()
                .canonical_reason()
                .unwrap_or("The copy source refused the read.")
                .to_owned();
            return Err(ApiError::CopySourceAnswered {
                status,
                source_status: status,
                code,
                message,
            });
        }
        let partial = resp.status() == reqwest::StatusCode::PARTIAL_CONTENT;
        if range.is_some() && !partial {
            // A source that ignores ranges would give the wrong bytes.
            return Err(ApiError::CopySourceAnswered {
                status: 400,
                source_status: status,
                code: None,
                message: "The copy source does not serve byte ranges.".into(),
            });
        }
        let Some(length) = resp.content_length() else {
            return Err(ApiError::CopySourceAnswered {
                status: 400,
                source_status: status,
                code: None,
                message: "The copy source did not state the length of its content.".into(),
            });
        };
        let headers = resp.headers().clone();
        let body = resp
            .bytes_stream()
            .map_err(std::io::Error::other)
            .map(move |chunk| {
                let _held = &permit;
                chunk
            })
            .boxed();
        Ok(Opened {
            length,
            headers,
            body,
        })
    }

    /// GETs a small document at `url` (an answer of at most `max` bytes,
    /// with or without a stated length) with `x-ms-version` set, as the
    /// Blob service's XML answers need. Holds no permit: it is read whole
    /// at once. `None` when the source refuses, cannot be reached, or
    /// answers more than `max` bytes.
    pub(crate) async fn get_document(
        &self,
        url: reqwest::Url,
        authorization: Option<&str>,
        max: usize,
    ) -> Option<Bytes> {
        let mut req = self
            .client
            .get(url)
            .header("x-ms-version", DOCUMENT_VERSION);
        if let Some(auth) = authorization {
            req = req.header("authorization", auth);
        }
        let resp = req.send().await.ok()?;
        if resp.status() != reqwest::StatusCode::OK {
            return None;
        }
        let mut body = resp.bytes_stream();
        let mut out = bytes::BytesMut::new();
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk.ok()?);
            if out.len() > max {
                return None;
            }
        }
        Some(out.freeze())
    }

    /// Registers the running copy `copy_id`; the token is cancelled by
    /// [`Fetcher::cancel`].
    pub(crate) fn register(&self, copy_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.lock().insert(copy_id.to_owned(), token.clone());
        token
    }

    /// Forgets the copy `copy_id` (it ended).
    pub(crate) fn forget(&self, copy_id: &str) {
        self.lock().remove(copy_id);
    }

    /// Stops the running copy `copy_id`, if it runs here.
    pub(crate) fn cancel(&self, copy_id: &str) {
        if let Some(token) = self.lock().remove(copy_id) {
            token.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The content properties a source's answer states.
pub(crate) fn source_content(headers: &reqwest::header::HeaderMap) -> ContentProperties {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    ContentProperties {
        content_type: get("content-type"),
        content_encoding: get("content-encoding"),
        content_language: get("content-language"),
        content_md5: None,
        cache_control: get("cache-control"),
        content_disposition: get("content-disposition"),
    }
}

/// The metadata (`x-ms-meta-*`) a source's answer carries; none when it
/// is not valid metadata.
pub(crate) fn source_metadata(headers: &reqwest::header::HeaderMap) -> Metadata {
    let pairs = headers
        .iter()
        .filter_map(|(k, v)| {
            let name = k.as_str().strip_prefix("x-ms-meta-")?;
            Some((name.to_owned(), v.to_str().ok()?.to_owned()))
        })
        .collect();
    Metadata::from_pairs(pairs).unwrap_or_default()
}

/// The type an asynchronous copy's destination takes: the source's
/// `x-ms-blob-type`, with the sequence number of a page blob and the
/// committed block count and seal of an append blob; a block blob when the answer
/// names no type (any HTTP server), another one, or a page blob whose
/// length is not whole pages.
pub(crate) fn source_kind(headers: &reqwest::header::HeaderMap, length: u64) -> CopiedType {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let number = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    match get("x-ms-blob-type") {
        Some("PageBlob") if length.is_multiple_of(512) => CopiedType::Page {
            sequence_number: number("x-ms-blob-sequence-number"),
        },
        Some("AppendBlob") => CopiedType::Append {
            committed_block_count: number("x-ms-blob-committed-block-count"),
            sealed: get("x-ms-blob-sealed").is_some_and(|v| v.eq_ignore_ascii_case("true")),
        },
        _ => CopiedType::Block,
    }
}

/// The source's ETag (unquoted), for the source conditions.
pub(crate) fn source_etag(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let etag = headers.get("etag")?.to_str().ok()?;
    Some(etag.trim_start_matches("W/").trim_matches('"').to_owned())
}

/// The source's Last-Modified, for the source conditions.
pub(crate) fn source_last_modified(
    headers: &reqwest::header::HeaderMap,
) -> Option<std::time::SystemTime> {
    let modified = headers.get("last-modified")?.to_str().ok()?;
    httpdate::parse_http_date(modified).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_are_fetched() {
        let cases = [
            ("http://example.com/a/b", Ok(())),
            ("https://acct.blob.core.windows.net/c/b?sv=1&sig=x", Ok(())),
            ("HTTP://example.com/x", Ok(())),
            ("file:///etc/passwd", Err(UrlRefusal::Scheme)),
            (
                "file://localhost/var/data/metadata.sqlite",
                Err(UrlRefusal::Scheme),
            ),
            ("ftp://example.com/x", Err(UrlRefusal::Scheme)),
            ("gopher://example.com/x", Err(UrlRefusal::Scheme)),
            ("data:text/plain,hello", Err(UrlRefusal::Scheme)),
            ("/relative/path", Err(UrlRefusal::Malformed)),
            ("not a url", Err(UrlRefusal::Malformed)),
            ("http://", Err(UrlRefusal::Malformed)),
        ];
        for (url, want) in cases {
            assert_eq!(fetchable_url(url).map(|_| ()), want, "{url}");
        }
    }

    #[test]
    fn redirects_are_refused_as_the_service_refuses_them() {
        for status in [200, 204, 206, 299, 400, 404, 500] {
            assert_eq!(redirect_refusal(status), None, "{status}");
        }
        for status in [300, 301, 302, 303, 307, 308] {
            let message = redirect_refusal(status).expect("a redirect");
            assert!(
                message.contains(&format!("(HTTP status code {status})")),
                "{message}"
            );
        }
    }

    #[test]
    fn ranges_are_asked_as_http_ranges() {
        let r = |start, end| ByteRange { start, end };
        assert_eq!(range_header(&r(0, Some(9))), "bytes=0-9");
        assert_eq!(range_header(&r(5, None)), "bytes=5-");
    }

    #[test]
    fn source_headers_give_properties_metadata_and_version() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("content-type", "text/csv".parse().unwrap());
        h.insert("cache-control", "no-cache".parse().unwrap());
        h.insert("x-ms-meta-owner", "ana".parse().unwrap());
        h.insert("etag", "\"0x1\"".parse().unwrap());
        h.insert(
            "last-modified",
            "Fri, 27 Nov 2026 10:00:00 GMT".parse().unwrap(),
        );
        let content = source_content(&h);
        assert_eq!(content.content_type.as_deref(), Some("text/csv"));
        assert_eq!(content.cache_control.as_deref(), Some("no-cache"));
        assert_eq!(content.content_encoding, None);
        assert_eq!(
            source_metadata(&h).pairs(),
            &[("owner".to_owned(), "ana".to_owned())]
        );
        assert_eq!(source_etag(&h).as_deref(), Some("0x1"));
        assert!(source_last_modified(&h).is_some());
        h.insert("etag", "W/\"weak\"".parse().unwrap());
        assert_eq!(source_etag(&h).as_deref(), Some("weak"));
        h.remove("last-modified");
        assert_eq!(source_last_modified(&h), None);
    }

    #[test]
    fn the_destination_takes_the_sources_blob_type() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = reqwest::header::HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().unwrap());
            }
            h
        };
        let cases = [
            (headers(&[]), 1000, CopiedType::Block),
            (
                headers(&[("x-ms-blob-type", "BlockBlob")]),
                1000,
                CopiedType::Block,
            ),
            (
                headers(&[("x-ms-blob-type", "Other")]),
                1000,
                CopiedType::Block,
            ),
            (
                headers(&[
                    ("x-ms-blob-type", "PageBlob"),
                    ("x-ms-blob-sequence-number", "7"),
                ]),
                1024,
                CopiedType::Page { sequence_number: 7 },
            ),
            (
                headers(&[("x-ms-blob-type", "PageBlob")]),
                0,
                CopiedType::Page { sequence_number: 0 },
            ),
            // Not whole pages: not a page blob.
            (
                headers(&[("x-ms-blob-type", "PageBlob")]),
                1000,
                CopiedType::Block,
            ),
            (
                headers(&[
                    ("x-ms-blob-type", "AppendBlob"),
                    ("x-ms-blob-committed-block-count", "3"),
                ]),
                1000,
                CopiedType::Append {
                    committed_block_count: 3,
                    sealed: false,
                },
            ),
            (
                headers(&[
                    ("x-ms-blob-type", "AppendBlob"),
                    ("x-ms-blob-committed-block-count", "2"),
                    ("x-ms-blob-sealed", "true"),
                ]),
                1000,
                CopiedType::Append {
                    committed_block_count: 2,
                    sealed: true,
                },
            ),
        ];
        for (i, (h, length, want)) in cases.into_iter().enumerate() {
            assert_eq!(source_kind(&h, length), want, "case {i}");
        }
    }

    /// A one-answer HTTP server on loopback: `head` then `body`, and the
    /// connection held open.
    async fn answering(head: &'static str, body: &'static [u8]) -> reqwest::Url {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = socket.read(&mut buf).await;
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(body).await;
                    let _ = socket.read(&mut buf).await;
                });
            }
        });
        reqwest::Url::parse(&format!("http://{addr}/blob")).unwrap()
    }

    #[tokio::test]
    async fn an_open_body_holds_a_permit_until_it_is_dropped() {
        let url = answering("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", b"01234").await;
        let fetcher = Fetcher::new(&FetchConfig {
            max_copies: 2,
            ..FetchConfig::default()
        });
        let first = fetcher.open(url.clone(), None, None).await.unwrap();
        let second = fetcher.open(url, None, None).await.unwrap();
        assert_eq!((first.length, second.length), (10, 10));
        assert_eq!(fetcher.permits.available_permits(), 0);
        drop(first);
        assert_eq!(fetcher.permits.available_permits(), 1);
        drop(second);
        assert_eq!(fetcher.permits.available_permits(), 2);
    }

    #[tokio::test]
    async fn refusals_carry_the_sources_status_and_code() {
        let fetcher = Fetcher::new(&FetchConfig::default());
        let cases = [
            (
                "HTTP/1.1 403 Forbidden\r\nx-ms-error-code: AuthorizationFailure\r\nContent-Length: 0\r\n\r\n",
                (403, 403, Some("AuthorizationFailure"), "Forbidden"),
            ),
            (
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
                (404, 404, None, "Not Found"),
            ),
            (
                "HTTP/1.1 301 Moved Permanently\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
                (
                    400,
                    301,
                    None,
                    "A redirected response (HTTP status code 301) from the copy source is not supported.",
                ),
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                (
                    400,
                    200,
                    None,
                    "The copy source did not state the length of its content.",
                ),
            ),
        ];
        for (head, want) in cases {
            let url = answering(head, b"").await;
            match fetcher.open(url, None, None).await {
                Err(ApiError::CopySourceAnswered {
                    status,
                    source_status,
                    code,
                    message,
                }) => assert_eq!(
                    (status, source_status, code.as_deref(), message.as_str()),
                    want,
                    "{head}"
                ),
                Err(e) => panic!("{head}: {e:?}"),
                Ok(_) => panic!("{head}: opened"),
            }
        }
        assert_eq!(fetcher.permits.available_permits(), DEFAULT_MAX_COPIES);
    }
}
