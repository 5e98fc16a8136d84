//! One place where requests are built, dated, signed, sent, retried and
//! turned into errors.
//!
//! Callers describe a request ([`Request`]: method, encoded path, decoded
//! query, headers, body as `Bytes`); every attempt gets a fresh `x-ms-date`
//! from the client's clock and a fresh signature. Bodies are `Bytes`, so a
//! retried attempt sends the same bytes again without buffering anything
//! twice; large uploads are split into blocks before they get here.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Response};

use crate::retry::Outcome;
use crate::signing::{signature, string_to_sign};
use crate::{
    Clock, ConnectionString, Credentials, Error, ErrorCode, Result, RetryPolicy, ServiceError,
    SystemClock, xml,
};

/// The service version this client speaks.
pub const SERVICE_VERSION: &str = "2024-11-04";

/// Characters left as they are in a path: unreserved ones and `/`.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');
/// Characters left as they are in a query name or value: unreserved ones.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a container or blob name for a URL path (`/` kept).
pub(crate) fn encode_path(s: &str) -> String {
    utf8_percent_encode(s, PATH).to_string()
}

fn encode_query(s: &str) -> String {
    utf8_percent_encode(s, QUERY).to_string()
}

/// Settings of the HTTP layer, given when a client is made.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    retry: RetryPolicy,
    clock: Arc<dyn Clock>,
    connect_timeout: Duration,
    read_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            retry: RetryPolicy::default(),
            clock: Arc::new(SystemClock),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
        }
    }
}

impl ClientOptions {
    /// When and how often to send a request again.
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> ClientOptions {
        self.retry = retry;
        self
    }

    /// The clock requests are dated with (and that the patterns sleep on).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> ClientOptions {
        self.clock = clock;
        self
    }

    /// How long to wait for a connection.
    pub fn with_connect_timeout(mut self, d: Duration) -> ClientOptions {
        self.connect_timeout = d;
        self
    }

    /// How long to wait for the next bytes of an answer (not for the whole
    /// answer: a large download may take longer).
    pub fn with_read_timeout(mut self, d: Duration) -> ClientOptions {
        self.read_timeout = d;
        self
    }
}

/// One REST request, as the operation modules describe it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: Method,
    /// Percent-encoded path below the endpoint, starting with `/`.
    path: String,
    /// Decoded (name, value) pairs.
    query: Vec<(String, String)>,
    /// (lowercase name, value) pairs.
    headers: Vec<(String, String)>,
    body: Bytes,
}

impl Request {
    pub(crate) fn new(method: Method, path: String) -> Request {
        Request {
            method,
            path,
            query: Vec::new(),
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    pub(crate) fn query(mut self, name: &str, value: impl Into<String>) -> Request {
        self.query.push((name.to_owned(), value.into()));
        self
    }

    pub(crate) fn query_opt(self, name: &str, value: Option<impl Into<String>>) -> Request {
        match value {
            Some(v) => self.query(name, v),
            None => self,
        }
    }

    pub(crate) fn header(mut self, name: &str, value: impl Into<String>) -> Request {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    pub(crate) fn header_opt(self, name: &str, value: Option<impl Into<String>>) -> Request {
        match value {
            Some(v) => self.header(name, v),
            None => self,
        }
    }

    pub(crate) fn body(mut self, body: Bytes) -> Request {
        self.body = body;
        self
    }
}

/// Sends [`Request`]s for one account endpoint.
#[derive(Debug)]
pub(crate) struct Pipeline {
    http: reqwest::Client,
    endpoint: String,
    credentials: Credentials,
    clock: Arc<dyn Clock>,
    retry: RetryPolicy,
}

impl Pipeline {
    pub(crate) fn new(conn: &ConnectionString, options: ClientOptions) -> Result<Pipeline> {
        let http = reqwest::Client::builder()
            // A redirect would change the signed path; the service never sends one.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            .pool_max_idle_per_host(32)
            .build()
            .map_err(|e| Error::InvalidInput(format!("cannot build the HTTP client: {e}")))?;
        Ok(Pipeline {
            http,
            endpoint: conn.blob_endpoint().to_owned(),
            credentials: conn.credentials().clone(),
            clock: options.clock,
            retry: options.retry,
        })
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub(crate) fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    fn url(&self, request: &Request) -> Result<reqwest::Url> {
        let mut url = format!("{}{}", self.endpoint, request.path);
        let mut parts: Vec<String> = request
            .query
            .iter()
            .map(|(n, v)| format!("{}={}", encode_query(n), encode_query(v)))
            .collect();
        if let Credentials::Sas(token) = &self.credentials {
            parts.push(token.clone());
        }
        if !parts.is_empty() {
            url.push('?');
            url.push_str(&parts.join("&"));
        }
        reqwest::Url::parse(&url).map_err(|e| Error::InvalidInput(format!("bad URL {url}: {e}")))
    }

    /// Sends `request`, retrying as the policy allows; a status of 300 or
    /// more becomes [`Error::Service`].
    pub(crate) async fn send(&self, request: Request) -> Result<Response> {
        let url = self.url(&request)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let headers = self.headers(&request, &url)?;
            let mut builder = self
                .http
                .request(request.method.clone(), url.clone())
                .headers(headers);
            if request.method == Method::PUT || request.method == Method::POST {
                builder = builder.body(request.body.clone());
            }
            let outcome = match builder.send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let error = service_error(response, request.method == Method::HEAD).await;
                    if !self.retry.should_retry(attempt, Outcome::Status(status)) {
                        return Err(error.into());
                    }
                    tracing::debug!(%error, attempt, "retrying");
                    Outcome::Status(status)
                }
                Err(source) => {
                    let outcome = classify(&source);
                    if !self.retry.should_retry(attempt, outcome) {
                        return Err(Error::Transport {
                            attempts: attempt,
                            source,
                        });
                    }
                    tracing::debug!(error = %source, attempt, "retrying");
                    outcome
                }
            };
            let wait = self.retry.backoff(attempt);
            tracing::trace!(?outcome, ?wait, "backing off");
            tokio::time::sleep(wait).await;
        }
    }

    /// The attempt's headers: the request's own, version, date, length and
    /// the Shared Key signature over all of them.
    fn headers(&self, request: &Request, url: &reqwest::Url) -> Result<HeaderMap> {
        let mut headers = request.headers.clone();
        headers.push(("x-ms-version".into(), SERVICE_VERSION.into()));
        headers.push((
            "x-ms-date".into(),
            httpdate::fmt_http_date(self.clock.now()),
        ));
        if request.method == Method::PUT || request.method == Method::POST {
            headers.push(("content-length".into(), request.body.len().to_string()));
        }
        if let Credentials::SharedKey { account, key } = &self.credentials {
            let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
            let sts = string_to_sign(
                request.method.as_str(),
                &headers,
                account,
                url.path(),
                &query,
            );
            let auth = format!("SharedKey {account}:{}", signature(key, &sts));
            headers.push(("authorization".into(), auth));
        }
        let mut map = HeaderMap::with_capacity(headers.len());
        for (name, value) in headers {
            let header_name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::InvalidInput(format!("bad header name `{name}`")))?;
            let header_value = HeaderValue::from_str(&value)
                .map_err(|_| Error::InvalidInput(format!("bad value for header `{name}`")))?;
            map.append(header_name, header_value);
        }
        Ok(map)
    }
}

/// How a transport failure counts for the retry policy.
fn classify(e: &reqwest::Error) -> Outcome {
    if e.is_timeout() {
        Outcome::Timeout
    } else if e.is_connect() || e.is_request() {
        Outcome::Connection
    } else {
        Outcome::Other
    }
}

/// Reads the error code from `x-ms-error-code` (HEAD and 304 answers have
/// no body) or else from the XML body, and the message from the body.
async fn service_error(response: Response, head: bool) -> ServiceError {
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let header_code = header("x-ms-error-code");
    let request_id = header("x-ms-request-id");
    let (body_code, message) = if head {
        (None, None)
    } else {
        match response.text().await {
            Ok(text) => xml::parse_error(&text),
            Err(_) => (None, None),
        }
    };
    let code = header_code
        .or(body_code)
        .map(|c| ErrorCode::parse(&c))
        .unwrap_or_else(|| ErrorCode::Other(String::new()));
    ServiceError {
        status,
        code,
        message,
        request_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_encoded_for_the_path_and_values_for_the_query() {
        let path = [
            ("dir/hello world.txt", "dir/hello%20world.txt"),
            ("a+b", "a%2Bb"),
            ("ü", "%C3%BC"),
            ("100%", "100%25"),
            ("q?#", "q%3F%23"),
            ("keep-_.~/", "keep-_.~/"),
        ];
        for (name, encoded) in path {
            assert_eq!(encode_path(name), encoded, "{name}");
        }
        let query = [
            ("a b", "a%20b"),
            ("x/y", "x%2Fy"),
            ("k=v&", "k%3Dv%26"),
            ("QUFB==", "QUFB%3D%3D"),
        ];
        for (value, encoded) in query {
            assert_eq!(encode_query(value), encoded, "{value}");
        }
    }

    #[test]
    fn urls_carry_the_encoded_path_the_query_and_a_sas_token() {
        let sas = ConnectionString::new(
            "https://acct.blob.core.windows.net",
            Credentials::Sas("sv=2024-11-04&sig=a%2Bb".into()),
        );
        let pipeline = Pipeline::new(&sas, ClientOptions::default()).unwrap();
        let request = Request::new(Method::GET, "/c/a%20b".into())
            .query("comp", "list")
            .query("prefix", "x y");
        let url = pipeline.url(&request).unwrap();
        assert_eq!(
            url.as_str(),
            "https://acct.blob.core.windows.net/c/a%20b?comp=list&prefix=x%20y&sv=2024-11-04&sig=a%2Bb"
        );
        assert_eq!(url.path(), "/c/a%20b");
    }

    #[test]
    fn every_attempt_is_dated_by_the_clock_and_signed() {
        let clock = Arc::new(crate::ManualClock::new(
            httpdate::parse_http_date("Tue, 03 Sep 2024 10:15:07 GMT").unwrap(),
        ));
        let pipeline = Pipeline::new(
            &ConnectionString::development(),
            ClientOptions::default().with_clock(clock),
        )
        .unwrap();
        let request =
            Request::new(Method::PUT, "/mycontainer".into()).query("restype", "container");
        let url = pipeline.url(&request).unwrap();
        let headers = pipeline.headers(&request, &url).unwrap();
        assert_eq!(headers["x-ms-date"], "Tue, 03 Sep 2024 10:15:07 GMT");
        assert_eq!(headers["x-ms-version"], SERVICE_VERSION);
        assert_eq!(headers["content-length"], "0");
        let auth = headers["authorization"].to_str().unwrap();
        assert!(auth.starts_with("SharedKey devstoreaccount1:"), "{auth}");
    }
}
