//! The answers every request shares (docs/wire/requests.md#which-operation-a-request-is, docs/wire/requests.md#service-version, docs/wire/requests.md#common-headers, docs/wire/errors.md#the-error-answer;
//! docs/wire/auth.md#shared-key, docs/wire/auth.md#anonymous-access, docs/wire/auth.md#refusals): common headers, the error body, requests
//! that match no operation, versions, authentication and anonymous access.
//!
//! Also home of [`raw`], a request written byte for byte on a TCP socket,
//! for what reqwest cannot send (no `Content-Length`, header names in mixed
//! case, another account in the path) or cannot show (response header case).

use std::time::Duration;

use stowage_blobstore::{Clock as _, ManualClock};
use stowage_tests::{ACCOUNT, Client, KEY, TestServer, shared_key_signature, string_to_sign};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A response read off the socket.
pub(super) struct Raw {
    pub status: u16,
    /// The status line and header lines, as sent.
    pub head: String,
    pub body: Vec<u8>,
}

impl Raw {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }

    /// Header lines exactly as sent (name case kept).
    pub fn header_lines(&self) -> Vec<&str> {
        self.head.lines().skip(1).collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// The head of a request `method path` (the full request target, account
/// included) with exactly `headers` in the given case, plus `Host`,
/// `Connection: close` and, when `sign` is set, a Shared Key
/// `Authorization` computed over the headers as given. Nothing else is
/// added: no `Content-Length`, no date.
pub(super) fn request_head(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    sign: bool,
) -> String {
    let mut lines = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", server.addr());
    for (n, v) in headers {
        lines.push_str(&format!("{n}: {v}\r\n"));
    }
    if sign {
        let lower: Vec<(String, String)> = headers
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), (*v).to_owned()))
            .collect();
        let sig = shared_key_signature(KEY, &string_to_sign(method, path, &lower));
        lines.push_str(&format!("Authorization: SharedKey {ACCOUNT}:{sig}\r\n"));
    }
    lines.push_str("Connection: close\r\n\r\n");
    lines
}

/// Parses everything a server sent on a connection as one response.
pub(super) fn parse_response(bytes: &[u8]) -> Raw {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| {
            panic!(
                "a complete response head: {:?}",
                String::from_utf8_lossy(bytes)
            )
        });
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let response = Raw {
        status,
        head,
        body: Vec::new(),
    };
    let mut body = bytes[split + 4..].to_vec();
    if response
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Raw { body, ..response }
}

/// Sends the request of [`request_head`] with `body` on a new connection
/// and reads the response until the server closes it.
pub(super) async fn raw(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    sign: bool,
) -> Raw {
    let head = request_head(server, method, path, headers, sign);
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write head");
    stream.write_all(body).await.expect("write body");
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.expect("read response");
    parse_response(&bytes)
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size_text = String::from_utf8_lossy(&data[..eol]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[eol + 2..eol + 2 + size]);
        data = &data[eol + 2 + size + 2..];
    }
}

/// `x-ms-date` (the server's clock) and `x-ms-version`, for raw requests.
pub(super) fn date_and_version(server: &TestServer) -> [(&'static str, String); 2] {
    [
        ("x-ms-date", httpdate::fmt_http_date(server.clock.now())),
        ("x-ms-version", stowage_tests::client_version().to_owned()),
    ]
}

fn is_lower_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && s.chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// The element text between `<tag>` and `</tag>`, if present.
fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&close)? + start;
    Some(&xml[start..end])
}

// ---------------------------------------------------------------------------
// Common response headers

#[tokio::test]
async fn every_response_success_or_error_has_request_id_version_and_date() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("common");
    c.create_container(&name).await;
    c.put_blob(&name, "b", b"x").await;
    let requests = [
        ("list containers", c.get("/?comp=list")),
        ("get blob", c.get(&format!("/{name}/b"))),
        ("head blob", c.head(&format!("/{name}/b"))),
        (
            "create container",
            c.put(&format!(
                "/{}?restype=container",
                stowage_tests::unique("c")
            )),
        ),
        (
            "missing container",
            c.get("/nosuchcontainer?restype=container"),
        ),
        ("missing blob, HEAD", c.head(&format!("/{name}/missing"))),
        (
            "unknown comp",
            c.get(&format!("/{name}?restype=container&comp=bogus")),
        ),
        ("unsupported verb", c.delete("/?comp=list")),
        (
            "not implemented",
            c.put(&format!("/{name}/b?comp=legalhold")),
        ),
        ("anonymous", c.get(&format!("/{name}/b")).anonymous()),
        (
            "bad signature",
            c.get("/?comp=list")
                .header("authorization", "SharedKey devstoreaccount1:AAAA")
                .anonymous(),
        ),
    ];
    for (what, request) in requests {
        let r = request.send().await;
        let id = r.header("x-ms-request-id");
        assert!(
            id.as_deref().is_some_and(is_lower_uuid),
            "{what}: x-ms-request-id {id:?}"
        );
        assert!(r.header("x-ms-version").is_some(), "{what}: x-ms-version");
        let date = r.header("date").unwrap_or_default();
        assert!(
            httpdate::parse_http_date(&date).is_ok() && date.ends_with(" GMT"),
            "{what}: Date {date:?}"
        );
        if r.status >= 400 {
            assert!(r.code().is_some(), "{what}: x-ms-error-code");
        } else {
            assert_eq!(r.code(), None, "{what}: no x-ms-error-code on success");
        }
    }
}

#[tokio::test]
async fn every_request_gets_a_new_request_id() {
    let server = TestServer::start().await;
    let c = server.client();
    let a = c.get("/?comp=list").send().await;
    let b = c.get("/?comp=list").send().await;
    assert_ne!(a.header("x-ms-request-id"), b.header("x-ms-request-id"));
}

#[tokio::test]
async fn the_response_version_is_the_request_version() {
    let server = TestServer::start().await;
    let c = server.client();
    for v in ["2009-09-19", "2021-10-04", stowage_tests::client_version()] {
        let r = c
            .get("/?comp=list")
            .without("x-ms-version")
            .header("x-ms-version", v)
            .send()
            .await;
        assert_eq!(r.status, 200, "{v}: {}", r.text());
        assert_eq!(r.header("x-ms-version").as_deref(), Some(v));
    }
}

#[tokio::test]
async fn a_signed_request_without_a_version_is_answered_as_2009_09_19() {
    let server = TestServer::start().await;
    let r = server
        .client()
        .get("/?comp=list")
        .without("x-ms-version")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-ms-version").as_deref(), Some("2009-09-19"));
}

#[tokio::test]
async fn the_client_request_id_is_echoed_on_success_and_error() {
    let server = TestServer::start().await;
    let c = server.client();
    for (path, sign) in [
        ("/?comp=list", true),
        ("/nosuchcontainer?restype=container", true),
        ("/?comp=list", false),
    ] {
        let mut request = c.get(path).header("x-ms-client-request-id", "my-id-42");
        if !sign {
            request = request.anonymous();
        }
        let r = request.send().await;
        assert_eq!(
            r.header("x-ms-client-request-id").as_deref(),
            Some("my-id-42"),
            "{path}"
        );
    }
}

// ---------------------------------------------------------------------------
// The error body

#[tokio::test]
async fn an_error_has_the_code_header_and_the_xml_body_with_request_id_and_time() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("body");
    c.create_container(&name).await;
    let r = c.get(&format!("/{name}/missing")).send().await;
    r.assert_error(404, "BlobNotFound");
    assert_eq!(r.header("content-type").as_deref(), Some("application/xml"));
    let text = r.text();
    assert!(
        text.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>"),
        "{text}"
    );
    assert!(text.contains("<Error>"), "{text}");
    assert_eq!(element(&text, "Code"), Some("BlobNotFound"));
    let message = element(&text, "Message").expect("a Message element");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 3, "{message:?}");
    assert_eq!(lines[0], "The specified blob does not exist.");
    let request_id = r.header("x-ms-request-id").unwrap();
    assert_eq!(lines[1], format!("RequestId:{request_id}"));
    let time = lines[2].strip_prefix("Time:").expect("a Time line");
    // ISO 8601 UTC with exactly seven fraction digits.
    assert_eq!(time.len(), "2024-09-03T10:15:07.1234567Z".len(), "{time}");
    assert!(time.ends_with('Z') && time.as_bytes()[10] == b'T', "{time}");
    assert_eq!(time.split('.').nth(1).map(str::len), Some(8), "{time}");
    assert_eq!(
        r.header("content-length").as_deref(),
        Some(r.body.len().to_string().as_str())
    );
}

#[tokio::test]
async fn head_errors_have_the_code_header_and_no_body() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("headerr");
    c.create_container(&name).await;
    let cases = [
        (format!("/{name}/missing"), 404, "BlobNotFound"),
        (
            "/nosuchcontainer?restype=container".to_owned(),
            404,
            "ContainerNotFound",
        ),
        ("/nosuchcontainer/blob".to_owned(), 404, "ContainerNotFound"),
        (
            format!("/{name}/missing?comp=metadata"),
            404,
            "BlobNotFound",
        ),
    ];
    for (path, status, code) in cases {
        let r = c.head(&path).send().await;
        r.assert_error(status, code);
        assert!(r.body.is_empty(), "{path}: {:?}", r.text());
    }
}

// ---------------------------------------------------------------------------
// Requests that match no operation (docs/wire/requests.md#which-operation-a-request-is)

#[tokio::test]
async fn an_unknown_comp_or_restype_is_400_invalid_query_parameter_value() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("comp");
    c.create_container(&name).await;
    c.put_blob(&name, "b", b"x").await;
    let cases = [
        ("GET", "/?comp=bogus".to_owned(), "comp", "bogus"),
        (
            "GET",
            format!("/{name}?restype=container&comp=nope"),
            "comp",
            "nope",
        ),
        (
            "GET",
            format!("/{name}/b?comp=whatever"),
            "comp",
            "whatever",
        ),
        (
            "PUT",
            format!("/{name}/b?comp=whatever"),
            "comp",
            "whatever",
        ),
        ("GET", format!("/{name}?restype=bogus"), "restype", "bogus"),
    ];
    for (method, path, param, value) in cases {
        let r = c.request(method, &path).send().await;
        r.assert_error(400, "InvalidQueryParameterValue");
        let text = r.text();
        assert_eq!(element(&text, "QueryParameterName"), Some(param), "{path}");
        assert_eq!(element(&text, "QueryParameterValue"), Some(value), "{path}");
    }
}

#[tokio::test]
async fn a_verb_the_operation_does_not_support_is_405_unsupported_http_verb() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("verb");
    c.create_container(&name).await;
    c.put_blob(&name, "b", b"x").await;
    let cases = [
        ("DELETE", "/?comp=list".to_owned()),
        ("PUT", "/?comp=list".to_owned()),
        ("PUT", format!("/{name}?restype=container&comp=list")),
        ("DELETE", format!("/{name}?restype=container&comp=metadata")),
        ("POST", format!("/{name}?restype=container")),
        ("GET", format!("/{name}/b?comp=properties")),
        ("DELETE", format!("/{name}/b?comp=metadata")),
        ("POST", format!("/{name}/b")),
        ("PATCH", format!("/{name}/b")),
        ("PATCH", format!("/{name}?restype=container")),
    ];
    for (method, path) in cases {
        let r = c.request(method, &path).send().await;
        assert_eq!(r.status, 405, "{method} {path}: {}", r.text());
        r.assert_error(405, "UnsupportedHttpVerb");
    }
}

#[tokio::test]
async fn operations_stowage_does_not_implement_are_501_not_implemented() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("nimpl");
    c.create_container(&name).await;
    c.put_blob(&name, "b", b"x").await;
    let cases = [
        ("POST", format!("/{name}/b?comp=query")),
        ("PUT", format!("/{name}/b?comp=legalhold")),
    ];
    for (method, path) in cases {
        let r = c.request(method, &path).send().await;
        r.assert_error(501, "NotImplemented");
        assert!(
            r.text()
                .contains("The requested operation is not implemented by this server."),
            "{method} {path}: {}",
            r.text()
        );
    }
}

#[tokio::test]
async fn a_container_url_without_restype_is_400_invalid_uri() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("uri");
    c.create_container(&name).await;
    let r = c.get(&format!("/{name}")).send().await;
    r.assert_error(400, "InvalidUri");
}

#[tokio::test]
async fn put_blob_without_x_ms_blob_type_is_400_missing_required_header() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("btype");
    c.create_container(&name).await;
    let r = c.put(&format!("/{name}/b")).body(&b"data"[..]).send().await;
    r.assert_error(400, "MissingRequiredHeader");
    assert_eq!(element(&r.text(), "HeaderName"), Some("x-ms-blob-type"));
    let r = c.get(&format!("/{name}/b")).send().await;
    r.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn an_unknown_blob_type_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("btype");
    c.create_container(&name).await;
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "FancyBlob")
        .body(&b"data"[..])
        .send()
        .await;
    r.assert_error(400, "InvalidHeaderValue");
}

#[tokio::test]
async fn put_blob_without_content_length_is_411_missing_content_length_header() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("nolen");
    c.create_container(&name).await;
    let [date, version] = date_and_version(&server);
    let path = format!("/{ACCOUNT}/{name}/b");
    // reqwest always sends a Content-Length for a body, so this one goes
    // out on a raw socket: no body, no Content-Length, no Transfer-Encoding.
    let r = raw(
        &server,
        "PUT",
        &path,
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("x-ms-blob-type", "BlockBlob"),
        ],
        b"",
        true,
    )
    .await;
    assert_eq!(r.status, 411, "{}\n{}", r.head, r.text());
    assert_eq!(
        r.header("x-ms-error-code").as_deref(),
        Some("MissingContentLengthHeader")
    );
    assert!(r.text().contains("<Code>MissingContentLengthHeader</Code>"));
    let g = c.get(&format!("/{name}/b")).send().await;
    g.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn a_chunked_put_blob_without_content_length_is_411() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("chunked");
    c.create_container(&name).await;
    let [date, version] = date_and_version(&server);
    let path = format!("/{ACCOUNT}/{name}/b");
    let r = raw(
        &server,
        "PUT",
        &path,
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("x-ms-blob-type", "BlockBlob"),
            ("Transfer-Encoding", "chunked"),
        ],
        b"4\r\ndata\r\n0\r\n\r\n",
        true,
    )
    .await;
    assert_eq!(r.status, 411, "{}\n{}", r.head, r.text());
    assert_eq!(
        r.header("x-ms-error-code").as_deref(),
        Some("MissingContentLengthHeader")
    );
    let g = c.get(&format!("/{name}/b")).send().await;
    g.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn an_invalid_timeout_is_400_invalid_query_parameter_value() {
    let server = TestServer::start().await;
    let c = server.client();
    for bad in ["abc", "0", "-5"] {
        let r = c.get(&format!("/?comp=list&timeout={bad}")).send().await;
        r.assert_error(400, "InvalidQueryParameterValue");
        assert_eq!(element(&r.text(), "QueryParameterName"), Some("timeout"));
    }
    let r = c.get("/?comp=list&timeout=30").send().await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn a_path_without_an_account_is_400_invalid_uri() {
    let server = TestServer::start().await;
    let r = raw(&server, "GET", "/", &[], b"", false).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.header("x-ms-error-code").as_deref(), Some("InvalidUri"));
    assert!(r.text().contains("<Code>InvalidUri</Code>"), "{}", r.text());
    for header in ["x-ms-request-id", "x-ms-version", "date"] {
        assert!(r.header(header).is_some(), "{header}: {}", r.head);
    }
}

// ---------------------------------------------------------------------------
// x-ms-version (docs/wire/requests.md#service-version)

#[tokio::test]
async fn a_malformed_or_too_old_version_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let c = server.client();
    for bad in [
        "yesterday",
        "2021-10",
        "21-10-04",
        "2021/10/04",
        "2021-10-04x",
        "2009-09-18",
        "1999-01-01",
    ] {
        let r = c
            .get("/?comp=list")
            .without("x-ms-version")
            .header("x-ms-version", bad)
            .send()
            .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        r.assert_error(400, "InvalidHeaderValue");
        let text = r.text();
        assert_eq!(element(&text, "HeaderName"), Some("x-ms-version"), "{bad}");
        assert_eq!(element(&text, "HeaderValue"), Some(bad), "{bad}");
    }
}

#[tokio::test]
async fn well_formed_future_versions_are_accepted() {
    let server = TestServer::start().await;
    let c = server.client();
    for v in ["2026-10-06", "2031-01-01", "2099-12-31"] {
        let r = c
            .get("/?comp=list")
            .without("x-ms-version")
            .header("x-ms-version", v)
            .send()
            .await;
        assert_eq!(r.status, 200, "{v}: {}", r.text());
        assert_eq!(r.header("x-ms-version").as_deref(), Some(v));
    }
}

// ---------------------------------------------------------------------------
// Shared Key (docs/wire/auth.md#shared-key, docs/wire/auth.md#refusals)

/// A request signed with `key` instead of the account key.
fn signed_with(
    c: &Client,
    server: &TestServer,
    key: &str,
    account: &str,
) -> stowage_tests::Request {
    let date = httpdate::fmt_http_date(server.clock.now());
    let headers = vec![
        (
            "x-ms-version".to_owned(),
            stowage_tests::client_version().to_owned(),
        ),
        ("x-ms-date".to_owned(), date.clone()),
    ];
    let sts = string_to_sign("GET", &format!("/{ACCOUNT}/?comp=list"), &headers);
    let sig = shared_key_signature(key, &sts);
    c.get("/?comp=list")
        .header("x-ms-date", &date)
        .header("authorization", &format!("SharedKey {account}:{sig}"))
        .anonymous()
}

#[tokio::test]
async fn the_harness_manual_signature_is_accepted_with_the_right_key() {
    // The control for the two tests below: same construction, right key.
    let server = TestServer::start().await;
    let c = server.client();
    let r = signed_with(&c, &server, KEY, ACCOUNT).send().await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn a_signature_made_with_another_key_is_403_authentication_failed() {
    let server = TestServer::start().await;
    let c = server.client();
    let other_key = "b3RoZXIta2V5LW90aGVyLWtleS1vdGhlci1rZXktb3RoZXIta2V5LW90aGVyLWtleQ==";
    let r = signed_with(&c, &server, other_key, ACCOUNT).send().await;
    r.assert_error(403, "AuthenticationFailed");
    assert!(
        r.text().contains("<AuthenticationErrorDetail>"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn an_authorization_account_other_than_the_url_account_is_403() {
    let server = TestServer::start().await;
    let c = server.client();
    let r = signed_with(&c, &server, KEY, "otheraccount").send().await;
    r.assert_error(403, "AuthenticationFailed");
}

#[tokio::test]
async fn a_header_changed_after_signing_is_403_authentication_failed() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("tamper");
    let date = httpdate::fmt_http_date(server.clock.now());
    let signed = vec![
        ("content-length".to_owned(), "0".to_owned()),
        ("x-ms-date".to_owned(), date.clone()),
        ("x-ms-meta-owner".to_owned(), "alice".to_owned()),
        (
            "x-ms-version".to_owned(),
            stowage_tests::client_version().to_owned(),
        ),
    ];
    let path = format!("/{name}?restype=container");
    let sig = shared_key_signature(
        KEY,
        &string_to_sign("PUT", &format!("/{ACCOUNT}{path}"), &signed),
    );
    let r = c
        .put(&path)
        .header("x-ms-date", &date)
        .header("x-ms-meta-owner", "mallory")
        .header("authorization", &format!("SharedKey {ACCOUNT}:{sig}"))
        .anonymous()
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
    // Authentication comes first: nothing was created.
    let g = c.get(&format!("/{name}?restype=container")).send().await;
    g.assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn a_request_dated_more_than_15_minutes_ago_is_403_authentication_failed() {
    let server = TestServer::start().await;
    // The client's clock stays at the epoch; the server's moves ahead.
    let client_clock = std::sync::Arc::new(ManualClock::new(server.clock.now()));
    let c = Client::new(&server.base, client_clock);
    server.clock.advance(Duration::from_secs(14 * 60));
    let r = c.get("/?comp=list").send().await;
    assert_eq!(r.status, 200, "14 minutes old: {}", r.text());
    server.clock.advance(Duration::from_secs(2 * 60));
    let r = c.get("/?comp=list").send().await;
    r.assert_error(403, "AuthenticationFailed");
}

#[tokio::test]
async fn a_request_dated_more_than_15_minutes_ahead_is_403_authentication_failed() {
    let server = TestServer::start().await;
    let client_clock = std::sync::Arc::new(ManualClock::new(
        server.clock.now() + Duration::from_secs(16 * 60),
    ));
    let c = Client::new(&server.base, client_clock);
    let r = c.get("/?comp=list").send().await;
    r.assert_error(403, "AuthenticationFailed");
}

#[tokio::test]
async fn a_signed_request_without_any_date_is_403_authentication_failed() {
    let server = TestServer::start().await;
    let version = stowage_tests::client_version();
    let path = format!("/{ACCOUNT}/?comp=list");
    let r = raw(
        &server,
        "GET",
        &path,
        &[("x-ms-version", version)],
        b"",
        true,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(
        r.header("x-ms-error-code").as_deref(),
        Some("AuthenticationFailed")
    );
}

#[tokio::test]
async fn an_unknown_account_is_403_when_signed_and_404_resource_not_found_when_anonymous() {
    let server = TestServer::start().await;
    let [date, version] = date_and_version(&server);
    let headers = [(date.0, date.1.as_str()), (version.0, version.1.as_str())];
    let signed = raw(
        &server,
        "GET",
        "/nosuchaccount/?comp=list",
        &headers,
        b"",
        true,
    )
    .await;
    assert_eq!(signed.status, 403, "{}", signed.text());
    assert_eq!(
        signed.header("x-ms-error-code").as_deref(),
        Some("AuthenticationFailed")
    );
    let anonymous = raw(&server, "GET", "/nosuchaccount/c/b", &[], b"", false).await;
    assert_eq!(anonymous.status, 404, "{}", anonymous.text());
    assert_eq!(
        anonymous.header("x-ms-error-code").as_deref(),
        Some("ResourceNotFound")
    );
}

// ---------------------------------------------------------------------------
// Anonymous access (docs/wire/auth.md#anonymous-access)

/// A container with `access` (`None` = private) holding blob `b` with metadata.
async fn container_with_access(c: &Client, access: Option<&str>) -> String {
    let name = stowage_tests::unique("anon");
    let mut r = c.put(&format!("/{name}?restype=container"));
    if let Some(a) = access {
        r = r.header("x-ms-blob-public-access", a);
    }
    let r = r.send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-meta-owner", "alice")
        .body(&b"public bytes"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    name
}

/// The anonymous requests of the docs/wire/errors.md#the-error-answer table, each with its row.
fn anonymous_requests(
    c: &Client,
    name: &str,
) -> Vec<(&'static str, &'static str, stowage_tests::Request)> {
    // (row of the table, what, request)
    vec![
        ("blob read", "Get Blob", c.get(&format!("/{name}/b"))),
        (
            "blob read",
            "Get Blob Properties",
            c.head(&format!("/{name}/b")),
        ),
        (
            "blob read",
            "Get Blob Metadata",
            c.get(&format!("/{name}/b?comp=metadata")),
        ),
        (
            "container read",
            "Get Container Properties",
            c.get(&format!("/{name}?restype=container")),
        ),
        (
            "container read",
            "Get Container Metadata",
            c.get(&format!("/{name}?restype=container&comp=metadata")),
        ),
        (
            "container read",
            "List Blobs",
            c.get(&format!("/{name}?restype=container&comp=list")),
        ),
        (
            "denied",
            "Put Blob",
            c.put(&format!("/{name}/new"))
                .header("x-ms-blob-type", "BlockBlob")
                .body(&b"x"[..]),
        ),
        (
            "denied",
            "Set Blob Metadata",
            c.put(&format!("/{name}/b?comp=metadata")),
        ),
        ("denied", "Delete Blob", c.delete(&format!("/{name}/b"))),
        (
            "denied",
            "Delete Container",
            c.delete(&format!("/{name}?restype=container")),
        ),
        (
            "denied",
            "Get Container ACL",
            c.get(&format!("/{name}?restype=container&comp=acl")),
        ),
        ("denied", "List Containers", c.get("/?comp=list")),
    ]
}

async fn check_anonymous_access(access: Option<&str>, allowed_rows: &[&str]) {
    let server = TestServer::start().await;
    let c = server.client();
    let name = container_with_access(&c, access).await;
    for (row, what, request) in anonymous_requests(&c, &name) {
        let r = request.without("x-ms-version").anonymous().send().await;
        if allowed_rows.contains(&row) {
            assert!(
                r.status == 200,
                "{access:?} {what}: expected 200, got {} {}",
                r.status,
                r.text()
            );
        } else {
            assert_eq!(
                (r.status, r.code().as_deref()),
                (404, Some("ResourceNotFound")),
                "{access:?} {what}: {}",
                r.text()
            );
        }
    }
    // Nothing the denied writes tried happened.
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(g.status, 200);
    assert_eq!(g.header("x-ms-meta-owner").as_deref(), Some("alice"));
    let g = c.head(&format!("/{name}/new")).send().await;
    g.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn anonymous_access_to_a_private_container_is_404_resource_not_found() {
    check_anonymous_access(None, &[]).await;
}

#[tokio::test]
async fn anonymous_access_to_a_blob_public_container_reads_blobs_only() {
    check_anonymous_access(Some("blob"), &["blob read"]).await;
}

#[tokio::test]
async fn anonymous_access_to_a_container_public_container_reads_and_lists() {
    check_anonymous_access(Some("container"), &["blob read", "container read"]).await;
}

#[tokio::test]
async fn an_anonymous_read_returns_the_blob_bytes() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = container_with_access(&c, Some("blob")).await;
    let r = c
        .get(&format!("/{name}/b"))
        .without("x-ms-version")
        .anonymous()
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(&r.body[..], b"public bytes");
    // No x-ms-version, no SAS, no default version set: 2009-09-19 (docs/wire/requests.md#service-version).
    assert_eq!(r.header("x-ms-version").as_deref(), Some("2009-09-19"));
}

#[tokio::test]
async fn anonymous_requests_cannot_tell_a_missing_container_from_a_private_one() {
    let server = TestServer::start().await;
    let c = server.client();
    let private = container_with_access(&c, None).await;
    for path in [
        format!("/{private}/b"),
        format!("/{private}/missing"),
        "/nosuchcontainer/b".to_owned(),
        "/nosuchcontainer?restype=container".to_owned(),
    ] {
        let r = c.get(&path).anonymous().send().await;
        r.assert_error(404, "ResourceNotFound");
    }
}

// ---------------------------------------------------------------------------
// Request framing (docs/wire/requests.md#common-headers)

/// Reads from `stream` until a complete response head has arrived.
async fn read_head(stream: &mut tokio::net::TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 1024];
    while !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(
            n > 0,
            "connection closed: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        bytes.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A guard against a server that never answers: the test fails instead of
/// hanging. Not a timing assertion; the bound is far above any real answer.
async fn answered<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .expect("the server answered")
}

#[tokio::test]
async fn expect_100_continue_is_answered_before_the_body_is_sent() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("expect");
    c.create_container(&name).await;
    let [date, version] = date_and_version(&server);
    let head = request_head(
        &server,
        "PUT",
        &format!("/{ACCOUNT}/{name}/b"),
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("x-ms-blob-type", "BlockBlob"),
            ("Content-Length", "5"),
            ("Expect", "100-continue"),
        ],
        true,
    );
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let interim = answered(read_head(&mut stream)).await;
    assert!(interim.starts_with("HTTP/1.1 100"), "{interim}");
    stream.write_all(b"hello").await.unwrap();
    let mut bytes = Vec::new();
    answered(stream.read_to_end(&mut bytes)).await.unwrap();
    let r = parse_response(&bytes);
    assert_eq!(r.status, 201, "{}\n{}", r.head, r.text());
    assert_eq!(
        &c.get(&format!("/{name}/b")).send().await.body[..],
        b"hello"
    );
}

#[tokio::test]
async fn a_body_shorter_than_content_length_fails_and_stores_nothing() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = stowage_tests::unique("short");
    c.create_container(&name).await;
    c.put_blob(&name, "existing", b"old bytes").await;
    for blob in ["new", "existing"] {
        let [date, version] = date_and_version(&server);
        let head = request_head(
            &server,
            "PUT",
            &format!("/{ACCOUNT}/{name}/{blob}"),
            &[
                (date.0, &date.1),
                (version.0, &version.1),
                ("x-ms-blob-type", "BlockBlob"),
                ("Content-Length", "10"),
            ],
            true,
        );
        let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(b"four").await.unwrap();
        // The client gives up: end of its side of the connection.
        stream.shutdown().await.unwrap();
        let mut bytes = Vec::new();
        answered(stream.read_to_end(&mut bytes)).await.unwrap();
        // docs/wire/requests.md#common-headers: 400 InvalidInput (code unverified).
        let r = parse_response(&bytes);
        assert_eq!(r.status, 400, "{blob}: {}\n{}", r.head, r.text());
        assert_eq!(r.header("x-ms-error-code").as_deref(), Some("InvalidInput"));
    }
    c.get(&format!("/{name}/new"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let r = c.get(&format!("/{name}/existing")).send().await;
    assert_eq!(&r.body[..], b"old bytes");
}

#[tokio::test]
async fn x_ms_date_wins_over_date() {
    let server = TestServer::start().await;
    let c = server.client();
    let stale = httpdate::fmt_http_date(server.clock.now() - Duration::from_secs(3600));
    // Fresh x-ms-date, stale Date: accepted.
    let r = c.get("/?comp=list").header("date", &stale).send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    // Stale x-ms-date, fresh Date: refused.
    let fresh = httpdate::fmt_http_date(server.clock.now());
    let r = c
        .get("/?comp=list")
        .header("x-ms-date", &stale)
        .header("date", &fresh)
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
}

#[tokio::test]
async fn a_client_request_id_over_1024_characters_is_400() {
    let server = TestServer::start().await;
    let c = server.client();
    let ok = "a".repeat(1024);
    let r = c
        .get("/?comp=list")
        .header("x-ms-client-request-id", &ok)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-ms-client-request-id"), Some(ok));
    let r = c
        .get("/?comp=list")
        .header("x-ms-client-request-id", &"a".repeat(1025))
        .send()
        .await;
    // docs/wire/requests.md#common-headers: InvalidHeaderValue, code unverified.
    assert_eq!(r.status, 400, "{}", r.text());
    r.assert_error(400, "InvalidHeaderValue");
}
