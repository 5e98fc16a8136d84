//! A minimal signed Blob REST client over reqwest: build a request from a
//! container, a blob name, query parameters and headers, sign it with
//! [`SharedKey`], send it, and check the status. Failures carry the request
//! line and the answer, so a benchmark that fails says what the server said.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, Response, StatusCode};

use crate::signer::{SharedKey, SignInput};

/// The service version every request names.
pub const API_VERSION: &str = "2021-10-04";

/// Characters left as they are in a path segment or query value.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One request before it is signed.
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    container: String,
    blob: Option<String>,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Request {
    /// A request on a container (`blob` `None`) or a blob.
    pub fn new(method: Method, container: &str, blob: Option<&str>) -> Self {
        Self {
            method,
            container: container.to_owned(),
            blob: blob.map(str::to_owned),
            query: Vec::new(),
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// Adds a query parameter (decoded; it is encoded when sent).
    pub fn with_query(mut self, name: &str, value: &str) -> Self {
        self.query.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the body.
    pub fn with_body(mut self, body: Bytes) -> Self {
        self.body = body;
        self
    }

    /// `METHOD container/blob?query`, for error messages.
    pub fn describe(&self) -> String {
        let mut s = format!("{} /{}", self.method, self.container);
        if let Some(blob) = &self.blob {
            let _ = write!(s, "/{blob}");
        }
        for (i, (n, v)) in self.query.iter().enumerate() {
            let _ = write!(s, "{}{n}={v}", if i == 0 { '?' } else { '&' });
        }
        s
    }
}

/// A signed client for one account on one endpoint, or on several nodes
/// of one cluster: then each request goes to the next endpoint in turn.
#[derive(Clone)]
pub struct BlobClient {
    http: reqwest::Client,
    /// `http://host:port`
    origin: String,
    /// The endpoint's path, e.g. `/devstoreaccount1` (no trailing slash).
    base_path: String,
    /// The other nodes' origins (same path), for round-robin.
    others: Arc<Vec<String>>,
    /// Requests sent so far, shared by the clones: picks the node.
    sent: Arc<AtomicUsize>,
    key: SharedKey,
}

impl BlobClient {
    /// A client for `endpoint` (`http://127.0.0.1:10000/devstoreaccount1`)
    /// keeping up to `connections` idle connections.
    ///
    /// # Errors
    ///
    /// A malformed endpoint or a reqwest client that cannot be built.
    pub fn new(endpoint: &str, key: SharedKey, connections: usize) -> Result<Self> {
        let url = reqwest::Url::parse(endpoint).context("parsing --endpoint")?;
        let host = url.host_str().context("--endpoint has no host")?;
        let origin = match url.port() {
            Some(port) => format!("{}://{host}:{port}", url.scheme()),
            None => format!("{}://{host}", url.scheme()),
        };
        let base_path = url.path().trim_end_matches('/').to_owned();
        let http = reqwest::Client::builder()
            .no_proxy()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(connections)
            .timeout(Duration::from_secs(600))
            .build()?;
        Ok(Self {
            http,
            origin,
            base_path,
            others: Arc::new(Vec::new()),
            sent: Arc::new(AtomicUsize::new(0)),
            key,
        })
    }

    /// A client that sends each request to the next of `endpoints` in turn
    /// (nodes of one cluster: the same account behind each, the same path).
    ///
    /// # Errors
    ///
    /// No endpoint, a malformed one, or endpoints whose paths differ.
    pub fn round_robin(endpoints: &[String], key: SharedKey, connections: usize) -> Result<Self> {
        let (first, rest) = endpoints.split_first().context("no --endpoint")?;
        let mut client = Self::new(first, key.clone(), connections)?;
        let mut others = Vec::new();
        for endpoint in rest {
            let other = Self::new(endpoint, key.clone(), connections)?;
            if other.base_path != client.base_path {
                bail!(
                    "--endpoint {endpoint}: a path other than {}",
                    client.base_path
                );
            }
            others.push(other.origin);
        }
        client.others = Arc::new(others);
        Ok(client)
    }

    /// The origin the next request goes to.
    fn next_origin(&self) -> &str {
        if self.others.is_empty() {
            return &self.origin;
        }
        let n = self.sent.fetch_add(1, Ordering::Relaxed) % (self.others.len() + 1);
        if n == 0 {
            &self.origin
        } else {
            &self.others[n - 1]
        }
    }

    /// The URL of a blob (names of plain ASCII letters, digits and `-`).
    pub fn url_of(&self, container: &str, blob: &str) -> String {
        format!("{}{}/{container}/{blob}", self.origin, self.base_path)
    }

    /// Signs and sends `req`; any status is returned.
    ///
    /// # Errors
    ///
    /// A transport error (connection refused or reset, timeout).
    pub async fn send(&self, req: &Request) -> Result<Response> {
        let mut raw_path = format!(
            "{}/{}",
            self.base_path,
            utf8_percent_encode(&req.container, UNRESERVED)
        );
        if let Some(blob) = &req.blob {
            for segment in blob.split('/') {
                raw_path.push('/');
                raw_path.extend(utf8_percent_encode(segment, UNRESERVED));
            }
        }
        let mut url = format!("{}{raw_path}", self.next_origin());
        for (i, (name, value)) in req.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.extend(utf8_percent_encode(name, UNRESERVED));
            url.push('=');
            url.extend(utf8_percent_encode(value, UNRESERVED));
        }
        let date = httpdate::fmt_http_date(SystemTime::now());
        let length = req.body.len().to_string();
        let mut headers: Vec<(&str, &str)> = vec![
            ("x-ms-date", &date),
            ("x-ms-version", API_VERSION),
            ("content-length", &length),
        ];
        headers.extend(req.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        let query: Vec<(&str, &str)> = req
            .query
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let authorization = self.key.authorization(&SignInput {
            method: req.method.as_str(),
            raw_path: &raw_path,
            query: &query,
            headers: &headers,
        });
        let mut builder = self
            .http
            .request(req.method.clone(), url)
            .header("authorization", authorization);
        for (name, value) in headers {
            // reqwest sets Content-Length from a non-empty body; it was
            // signed above. An empty PUT body gets no header from reqwest,
            // and the service requires one (411 otherwise).
            if name != "content-length" || (req.body.is_empty() && req.method == Method::PUT) {
                builder = builder.header(name, value);
            }
        }
        if !req.body.is_empty() {
            builder = builder.body(req.body.clone());
        }
        builder
            .send()
            .await
            .with_context(|| format!("{} failed to send", req.describe()))
    }

    /// Sends `req` and fails unless the answer's status is `expected`.
    ///
    /// # Errors
    ///
    /// A transport error, or a different status (with the answer's body).
    pub async fn expect(&self, req: &Request, expected: StatusCode) -> Result<Response> {
        let resp = self.send(req).await?;
        if resp.status() == expected {
            return Ok(resp);
        }
        Err(unexpected(req, expected, resp).await)
    }
}

/// The error for an answer with the wrong status, quoting its body.
pub async fn unexpected(req: &Request, expected: StatusCode, resp: Response) -> anyhow::Error {
    let status = resp.status();
    let code = resp
        .headers()
        .get("x-ms-error-code")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = resp.text().await.unwrap_or_default();
    let body: String = body.chars().take(600).collect();
    anyhow::anyhow!(
        "{} answered {status} {code} (expected {expected}): {body}",
        req.describe()
    )
}

/// A response header as text.
///
/// # Errors
///
/// When the header is absent or not text.
pub fn header<'a>(resp: &'a Response, name: &str) -> Result<&'a str> {
    match resp.headers().get(name).map(|v| v.to_str()) {
        Some(Ok(v)) => Ok(v),
        _ => bail!("answer without a {name} header"),
    }
}
