//! A raw HTTP client for the tests: it builds exactly the request the test
//! describes, signs it with Shared Key, and returns status, headers and body
//! without interpreting them, so tests can pin the wire format.

use std::sync::Arc;

use bytes::Bytes;
use stowage_blobstore::Clock;

use crate::signing::{shared_key_signature, string_to_sign_for};
use crate::{ACCOUNT, KEY};

/// The service version the test client speaks.
pub const VERSION: &str = "2025-11-05";

/// Signs requests as the development account (or another, see
/// [`Client::as_account`]), dated by the server's clock.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    clock: Arc<dyn Clock>,
    account: String,
    key: String,
    /// The `Host` header of product-style requests (the account is then
    /// not in the path).
    host: Option<String>,
    /// What goes before the path: `/<account>` path-style, `` host-style.
    prefix: String,
}

impl Client {
    /// A client for the server at `base` (`http://host:port`).
    pub fn new(base: &str, clock: Arc<dyn Clock>) -> Client {
        Client {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(64)
                // Well under the server's keep-alive, so a pooled connection
                // is never one the server is closing.
                .pool_idle_timeout(std::time::Duration::from_secs(10))
                .build()
                .expect("reqwest client"),
            base: base.to_owned(),
            clock,
            account: ACCOUNT.to_owned(),
            key: KEY.to_owned(),
            host: None,
            prefix: format!("/{ACCOUNT}"),
        }
    }

    /// A client for the HTTPS server at `base` that trusts `cert_pem`.
    pub fn with_certificate(base: &str, clock: Arc<dyn Clock>, cert_pem: &str) -> Client {
        let cert = reqwest::Certificate::from_pem(cert_pem.as_bytes()).expect("certificate");
        Client {
            http: reqwest::Client::builder()
                .use_rustls_tls()
                .tls_built_in_root_certs(false)
                .add_root_certificate(cert)
                .build()
                .expect("reqwest client"),
            ..Client::new(base, clock)
        }
    }

    /// This client signing as `account` with the base64 `key`.
    pub fn as_account(&self, account: &str, key: &str) -> Client {
        Client {
            account: account.to_owned(),
            key: key.to_owned(),
            prefix: format!("/{account}"),
            ..self.clone()
        }
    }

    /// This client addressing its account product-style: `Host: <host>`,
    /// paths without the account.
    pub fn host_style(&self, host: &str) -> Client {
        Client {
            host: Some(host.to_owned()),
            prefix: String::new(),
            ..self.clone()
        }
    }

    /// This client with `prefix` (e.g. `/devstoreaccount1-secondary`)
    /// before every path instead of `/<account>`.
    pub fn with_prefix(&self, prefix: &str) -> Client {
        Client {
            prefix: prefix.to_owned(),
            ..self.clone()
        }
    }

    /// A request to `/<account><path>`; `path` starts with `/` and may carry
    /// a query (already percent-encoded, as it goes on the wire).
    pub fn request(&self, method: &str, path: &str) -> Request {
        Request {
            client: self.clone(),
            method: method.to_owned(),
            path: format!("{}{path}", self.prefix),
            headers: vec![("x-ms-version".to_owned(), VERSION.to_owned())],
            body: None,
            sign: true,
            timeout: None,
        }
    }

    /// `PUT`.
    pub fn put(&self, path: &str) -> Request {
        self.request("PUT", path)
    }
    /// `GET`.
    pub fn get(&self, path: &str) -> Request {
        self.request("GET", path)
    }
    /// `HEAD`.
    pub fn head(&self, path: &str) -> Request {
        self.request("HEAD", path)
    }
    /// `DELETE`.
    pub fn delete(&self, path: &str) -> Request {
        self.request("DELETE", path)
    }

    /// Creates container `name` and asserts 201.
    pub async fn create_container(&self, name: &str) {
        let r = self.put(&format!("/{name}?restype=container")).send().await;
        assert_eq!(r.status, 201, "create container {name}: {}", r.text());
    }

    /// Uploads a block blob and asserts 201; returns the response.
    pub async fn put_blob(&self, container: &str, blob: &str, data: &[u8]) -> Response {
        let r = self
            .put(&format!("/{container}/{blob}"))
            .header("x-ms-blob-type", "BlockBlob")
            .body(data.to_vec())
            .send()
            .await;
        assert_eq!(r.status, 201, "put blob {blob}: {}", r.text());
        r
    }
}

enum Body {
    Bytes(Bytes),
    Stream(reqwest::Body, u64),
}

/// One request being built.
pub struct Request {
    client: Client,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Body>,
    sign: bool,
    timeout: Option<std::time::Duration>,
}

impl Request {
    /// Gives up on the answer after `limit` ([`Request::try_send`] then
    /// fails).
    pub fn timeout(mut self, limit: std::time::Duration) -> Request {
        self.timeout = Some(limit);
        self
    }

    /// Adds a header (the name is lowercased).
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.headers
            .push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }

    /// Removes every header called `name` (e.g. `x-ms-version`).
    pub fn without(mut self, name: &str) -> Request {
        self.headers.retain(|(n, _)| n != name);
        self
    }

    /// The request body.
    pub fn body(mut self, data: impl Into<Bytes>) -> Request {
        self.body = Some(Body::Bytes(data.into()));
        self
    }

    /// A streamed body of `len` bytes.
    pub fn body_stream(mut self, body: reqwest::Body, len: u64) -> Request {
        self.body = Some(Body::Stream(body, len));
        self
    }

    /// Send without `Authorization` (anonymous).
    pub fn anonymous(mut self) -> Request {
        self.sign = false;
        self
    }

    /// Signs (unless anonymous) and sends; panics only on transport errors.
    pub async fn send(self) -> Response {
        self.try_send().await.expect("request sent")
    }

    /// Like [`Request::send`], but a transport error (the server went away,
    /// the answer did not come in time) is returned, not a panic.
    ///
    /// # Errors
    /// The request or its answer failing on the way.
    pub async fn try_send(self) -> Result<Response, reqwest::Error> {
        let mut headers = self.headers;
        let len = match &self.body {
            Some(Body::Bytes(b)) => Some(b.len() as u64),
            Some(Body::Stream(_, n)) => Some(*n),
            None if matches!(self.method.as_str(), "PUT" | "POST") => Some(0),
            None => None,
        };
        if let Some(n) = len
            && !headers.iter().any(|(h, _)| h == "content-length")
        {
            headers.push(("content-length".into(), n.to_string()));
        }
        if !headers.iter().any(|(h, _)| h == "x-ms-date") {
            headers.push((
                "x-ms-date".into(),
                httpdate::fmt_http_date(self.client.clock.now()),
            ));
        }
        if self.sign {
            let c = &self.client;
            let sts = string_to_sign_for(&c.account, &self.method, &self.path, &headers);
            let sig = shared_key_signature(&c.key, &sts);
            headers.push((
                "authorization".into(),
                format!("SharedKey {}:{sig}", c.account),
            ));
        }
        if let Some(host) = &self.client.host {
            headers.push(("host".into(), host.clone()));
        }
        let method = reqwest::Method::from_bytes(self.method.as_bytes()).expect("method");
        let url = format!("{}{}", self.client.base, self.path);
        let mut rb = self.client.http.request(method, url);
        for (n, v) in &headers {
            rb = rb.header(n, v);
        }
        if let Some(limit) = self.timeout {
            rb = rb.timeout(limit);
        }
        rb = match self.body {
            Some(Body::Bytes(b)) => rb.body(b),
            Some(Body::Stream(s, _)) => rb.body(s),
            None => rb,
        };
        let resp = rb.send().await?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.bytes().await?;
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

/// A response, uninterpreted.
#[derive(Debug)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: reqwest::header::HeaderMap,
    /// Response body.
    pub body: Bytes,
}

impl Response {
    /// A header value as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("text header").to_owned())
    }

    /// `x-ms-error-code`.
    pub fn code(&self) -> Option<String> {
        self.header("x-ms-error-code")
    }

    /// The `ETag` header.
    pub fn etag(&self) -> String {
        self.header("etag").expect("an ETag header")
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Asserts status and error code (and that the error body names it).
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.code().as_deref()),
            (status, Some(code)),
            "body: {}",
            self.text()
        );
        if status != 304 && !self.body.is_empty() {
            assert!(
                self.text().contains(&format!("<Code>{code}</Code>")),
                "error body: {}",
                self.text()
            );
        }
    }
}
