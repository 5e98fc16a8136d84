//! One connection, many requests (issue 16, findings 3 and 4): pipelined
//! requests of every mix of methods each get their answer, in order; and
//! the connection layer that keeps metadata names in the case they were
//! written agrees with the HTTP parser behind it on the inputs where it
//! used to disagree (bare-LF trailer lines, heads ended by `\r\n\n`,
//! non-UTF-8 header values, large heads), never gives up on a connection,
//! and never lets its private header in from a client or out to one.

use stowage_tests::{ACCOUNT, TestServer, unique};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::errors::{Raw, date_and_version, request_head};

/// The connection layer's private response header.
const PRIVATE: &str = "x-stowage-meta-names";

/// A signed request for `path` (after the account) with `headers` and
/// `body`; it keeps the connection open unless `last`.
fn signed(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    last: bool,
) -> Vec<u8> {
    let [date, version] = date_and_version(server);
    let length = body.len().to_string();
    let mut all = vec![(date.0, date.1.as_str()), (version.0, version.1.as_str())];
    if method == "PUT" {
        all.push(("Content-Length", length.as_str()));
    }
    all.extend_from_slice(headers);
    let mut head = request_head(server, method, &format!("/{ACCOUNT}{path}"), &all, true);
    if !last {
        head = head.replace("Connection: close\r\n", "");
    }
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Writes `requests` in one write and reads until the server closes the
/// connection.
async fn send_all(server: &TestServer, requests: &[u8]) -> Vec<u8> {
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    stream.write_all(requests).await.expect("write");
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes).await;
    bytes
}

/// Splits what a server sent into its responses; `was_head[i]` tells
/// whether the i-th request was a HEAD (its answer has no body). Panics on
/// bytes that are not a sequence of complete responses.
fn responses(mut bytes: &[u8], was_head: &[bool]) -> Vec<Raw> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("a response head in {:?}", String::from_utf8_lossy(bytes)))
            + 4;
        let head = String::from_utf8_lossy(&bytes[..end - 4]).into_owned();
        let status: u16 = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let mut r = Raw {
            status,
            head,
            body: Vec::new(),
        };
        bytes = &bytes[end..];
        if status < 200 {
            continue;
        }
        let no_body =
            was_head.get(out.len()).copied().unwrap_or(false) || status == 204 || status == 304;
        if !no_body {
            if let Some(n) = r.header("content-length") {
                let n: usize = n.parse().expect("content-length");
                r.body = bytes[..n].to_vec();
                bytes = &bytes[n..];
            } else if r.header("transfer-encoding").is_some() {
                loop {
                    let eol = bytes
                        .windows(2)
                        .position(|w| w == b"\r\n")
                        .expect("chunk size");
                    let size = usize::from_str_radix(
                        std::str::from_utf8(&bytes[..eol]).expect("size").trim(),
                        16,
                    )
                    .expect("hex size");
                    bytes = &bytes[eol + 2..];
                    if size == 0 {
                        assert!(bytes.starts_with(b"\r\n"), "no trailers from the server");
                        bytes = &bytes[2..];
                        break;
                    }
                    r.body.extend_from_slice(&bytes[..size]);
                    bytes = &bytes[size + 2..];
                }
            } else {
                r.body = bytes.to_vec();
                bytes = &[];
            }
        }
        out.push(r);
    }
    out
}

/// Asserts that no response carries the private header.
fn assert_private_header_never_sent(rs: &[Raw]) {
    for r in rs {
        assert!(r.header(PRIVATE).is_none(), "leaked: {}", r.head);
    }
}

/// The `x-ms-meta-*` header lines of a response, exactly as sent.
fn meta_lines(r: &Raw) -> Vec<String> {
    let mut lines: Vec<String> = r
        .header_lines()
        .into_iter()
        .filter(|l| l.to_ascii_lowercase().starts_with("x-ms-meta-"))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// Stores `data` at `path` with the metadata `Stored: yes`, the name in
/// that case (written on a raw socket: HTTP clients lowercase names).
async fn put_blob(server: &TestServer, path: &str, data: &[u8]) {
    let headers = [("x-ms-blob-type", "BlockBlob"), ("x-ms-meta-Stored", "yes")];
    let put = signed(server, "PUT", path, &headers, data, true);
    let rs = responses(&send_all(server, &put).await, &[false]);
    assert_eq!(rs[0].status, 201, "{}", rs[0].text());
}

/// A container with one blob `b` holding `data`.
async fn container_with_blob(server: &TestServer, data: &[u8]) -> String {
    let name = unique("conn");
    server.client().create_container(&name).await;
    put_blob(server, &format!("/{name}/b"), data).await;
    name
}

/// Finding 3: `GET; HEAD; GET` and `PUT; HEAD; GET` in one write, and
/// every other sequence of three of GET, HEAD and PUT, each get three
/// answers in order: the right status, a HEAD answer without a body, every
/// GET answer with the blob's bytes as they were at that point.
#[tokio::test]
async fn pipelined_requests_of_every_mix_of_methods_get_every_answer_in_order() {
    let server = TestServer::start().await;
    let original = b"the original bytes".to_vec();
    let container = container_with_blob(&server, &original).await;
    let path = format!("/{container}/b");
    let methods = ["GET", "HEAD", "PUT"];
    for mix in 0..27 {
        let sequence = [methods[mix % 3], methods[mix / 3 % 3], methods[mix / 9]];
        let mut requests = Vec::new();
        let mut expected = Vec::new();
        let mut current = original.clone();
        for (i, method) in sequence.iter().enumerate() {
            let last = i == sequence.len() - 1;
            match *method {
                "PUT" => {
                    current = format!("put {i} of mix {mix}").into_bytes();
                    let headers = [("x-ms-blob-type", "BlockBlob"), ("x-ms-meta-Stored", "yes")];
                    requests.extend(signed(&server, "PUT", &path, &headers, &current, last));
                    expected.push((201, Vec::new()));
                }
                "HEAD" => {
                    requests.extend(signed(&server, "HEAD", &path, &[], &[], last));
                    expected.push((200, Vec::new()));
                }
                _ => {
                    requests.extend(signed(&server, "GET", &path, &[], &[], last));
                    expected.push((200, current.clone()));
                }
            }
        }
        let was_head: Vec<bool> = sequence.iter().map(|m| *m == "HEAD").collect();
        let rs = responses(&send_all(&server, &requests).await, &was_head);
        let got: Vec<(u16, Vec<u8>)> = rs.iter().map(|r| (r.status, r.body.clone())).collect();
        assert_eq!(got, expected, "{sequence:?}");
        for (r, method) in rs.iter().zip(sequence) {
            if method != "PUT" {
                assert_eq!(meta_lines(r), ["x-ms-meta-Stored: yes"], "{sequence:?}");
            }
        }
        assert_private_header_never_sent(&rs);
        // Put back the original bytes for the next mix.
        put_blob(&server, &path, &original).await;
    }
}

/// A PUT request with metadata name `meta` (value `v`) for `path`, ended
/// by `end` instead of the blank line, with `body`.
fn put_with_meta(server: &TestServer, path: &str, meta: &str, body: &[u8], end: &[u8]) -> Vec<u8> {
    let headers = [("x-ms-blob-type", "BlockBlob"), (meta, "v")];
    let mut bytes = signed(server, "PUT", path, &headers, body, false);
    bytes.truncate(bytes.len() - body.len() - 2);
    bytes.extend_from_slice(end);
    bytes.extend_from_slice(body);
    bytes
}

/// Finding 4: a head ended by `\r\n\n` is a head to both parsers, and each
/// request keeps its own metadata names.
#[tokio::test]
async fn a_head_ended_by_a_bare_lf_keeps_each_requests_own_metadata_names() {
    let server = TestServer::start().await;
    let container = container_with_blob(&server, b"x").await;
    let (a, b) = (format!("/{container}/a"), format!("/{container}/b"));
    let mut requests = put_with_meta(&server, &a, "x-ms-meta-FirstName", b"aa", b"\n");
    requests.extend(put_with_meta(
        &server,
        &b,
        "x-ms-meta-SecondName",
        b"bb",
        b"\r\n",
    ));
    requests.extend(signed(&server, "HEAD", &a, &[], &[], false));
    requests.extend(signed(&server, "HEAD", &b, &[], &[], true));
    let rs = responses(
        &send_all(&server, &requests).await,
        &[false, false, true, true],
    );
    let statuses: Vec<u16> = rs.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [201, 201, 200, 200]);
    assert_eq!(meta_lines(&rs[2]), ["x-ms-meta-FirstName: v"]);
    assert_eq!(meta_lines(&rs[3]), ["x-ms-meta-SecondName: v"]);
    assert_private_header_never_sent(&rs);
}

/// Finding 4: a chunked body whose trailer line ends in a bare LF is
/// framed as the HTTP parser frames it, and nothing after it is rewritten:
/// an answer's body that looks like a response head comes back byte for
/// byte. The parser ends a trailer line only at CRLF, so the request that
/// follows such a trailer is read as more trailer lines and gets no answer
/// of its own; the one after it does.
#[tokio::test]
async fn a_bare_lf_trailer_line_changes_no_later_bytes() {
    let server = TestServer::start().await;
    let lookalike =
        b"HTTP/1.1 200 OK\r\nx-ms-meta-stored: no\r\nx-stowage-meta-names: X\r\n\r\n".to_vec();
    let container = container_with_blob(&server, &lookalike).await;
    let path = format!("/{container}/b");
    let mut requests = signed(&server, "GET", &path, &[], &[], false);
    requests.truncate(requests.len() - 2);
    requests.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: v\n\r\n");
    requests.extend(signed(
        &server,
        "GET",
        "/swallowed/as/trailer",
        &[],
        &[],
        false,
    ));
    requests.extend(signed(&server, "HEAD", &path, &[], &[], true));
    let rs = responses(&send_all(&server, &requests).await, &[false, true]);
    assert_private_header_never_sent(&rs);
    let statuses: Vec<u16> = rs.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200]);
    assert_eq!(rs[0].body, lookalike, "a body is never rewritten");
    assert_eq!(meta_lines(&rs[0]), ["x-ms-meta-Stored: yes"]);
    assert_eq!(meta_lines(&rs[1]), ["x-ms-meta-Stored: yes"]);
}

/// Finding 4: a non-UTF-8 `x-ms-client-request-id` is echoed as sent, and
/// the requests after it on the connection keep their names' case.
#[tokio::test]
async fn a_non_utf8_header_value_does_not_stop_the_layer() {
    let server = TestServer::start().await;
    let container = container_with_blob(&server, b"x").await;
    let path = format!("/{container}/b");
    let mut first = signed(&server, "GET", &path, &[], &[], false);
    first.truncate(first.len() - 2);
    first.extend_from_slice(b"x-ms-client-request-id: caf\xe9\r\n\r\n");
    let mut requests = first;
    requests.extend(put_with_meta(
        &server,
        &path,
        "x-ms-meta-LaterName",
        b"z",
        b"\r\n",
    ));
    requests.extend(signed(&server, "HEAD", &path, &[], &[], true));
    let bytes = send_all(&server, &requests).await;
    let rs = responses(&bytes, &[false, false, true]);
    let statuses: Vec<u16> = rs.iter().map(|r| r.status).collect();
    // The id is an `x-ms-` header, so it is signed: the test's signer takes
    // text only, and the first request is refused for its signature.
    assert_eq!(statuses, [403, 201, 200]);
    assert_eq!(
        rs[0].header("x-ms-error-code").as_deref(),
        Some("AuthenticationFailed")
    );
    assert!(
        bytes
            .windows(30)
            .any(|w| w == b"x-ms-client-request-id: caf\xe9\r\n"),
        "the id is echoed byte for byte"
    );
    assert_eq!(meta_lines(&rs[2]), ["x-ms-meta-LaterName: v"]);
    assert_private_header_never_sent(&rs);
}

/// Finding 4: heads between 64 and 128 KiB are served like any other (the
/// HTTP parser's limit is 128 KiB), written in several pieces, and the
/// requests after them keep their names' case. A head past the limit is
/// refused with 431 whatever the pieces.
#[tokio::test]
async fn large_heads_in_pieces_are_served_and_names_keep_their_case() {
    let server = TestServer::start().await;
    let container = container_with_blob(&server, b"x").await;
    let path = format!("/{container}/b");
    for filler_len in [70 * 1024, 127 * 1024] {
        let filler = "f".repeat(filler_len);
        let mut requests = signed(&server, "GET", &path, &[("X-Filler", &filler)], &[], false);
        requests.extend(put_with_meta(
            &server,
            &path,
            "x-ms-meta-AfterBig",
            b"z",
            b"\r\n",
        ));
        requests.extend(signed(&server, "HEAD", &path, &[], &[], true));
        let mut stream = tokio::net::TcpStream::connect(server.addr())
            .await
            .expect("connect");
        for piece in requests.chunks(5000) {
            stream.write_all(piece).await.expect("write");
            stream.flush().await.expect("flush");
        }
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes).await;
        let rs = responses(&bytes, &[false, false, true]);
        let statuses: Vec<u16> = rs.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [200, 201, 200], "{filler_len}");
        assert_eq!(meta_lines(&rs[2]), ["x-ms-meta-AfterBig: v"]);
        assert_private_header_never_sent(&rs);
    }
    let filler = "f".repeat(129 * 1024);
    let requests = signed(&server, "GET", &path, &[("X-Filler", &filler)], &[], true);
    let mut stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    for piece in requests.chunks(5000) {
        // The server may answer 431 and close before the rest is written.
        if stream.write_all(piece).await.is_err() {
            break;
        }
    }
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes).await;
    let rs = responses(&bytes, &[false]);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0].status, 431);
}

/// A client's own `x-stowage-meta-names` header is refused: it is the
/// server's private header, never taken from a request.
#[tokio::test]
async fn a_clients_private_header_is_refused() {
    let server = TestServer::start().await;
    let container = container_with_blob(&server, b"x").await;
    let path = format!("/{container}/b");
    let requests = put_with_meta(
        &server,
        &path,
        "x-ms-meta-Sneaky",
        b"",
        b"x-stowage-meta-names: Other\r\n\r\n",
    );
    let mut requests = requests;
    requests.extend(signed(&server, "HEAD", &path, &[], &[], true));
    let rs = responses(&send_all(&server, &requests).await, &[false, true]);
    assert_eq!(rs[0].status, 400, "{}", rs[0].head);
    assert_eq!(
        rs[0].header("x-ms-error-code").as_deref(),
        Some("InvalidHeaderValue")
    );
    assert!(
        rs[0]
            .text()
            .contains("<HeaderName>x-stowage-meta-names</HeaderName>"),
        "{}",
        rs[0].text()
    );
    // Nothing was written: the blob keeps its metadata.
    assert_eq!(rs[1].status, 200);
    assert_eq!(meta_lines(&rs[1]), ["x-ms-meta-Stored: yes"]);
    assert_private_header_never_sent(&rs);
}

/// A header name longer than 65,535 bytes (which httparse accepts and the
/// `http` crate does not; actix-http 3.20 panics on it and drops the
/// connection without an answer) is refused with actix's own 400, and the
/// server goes on serving.
#[tokio::test]
async fn a_header_name_over_64_kib_is_refused_with_400() {
    let server = TestServer::start().await;
    let container = container_with_blob(&server, b"x").await;
    let path = format!("/{container}/b");
    let name = format!("X{}", "n".repeat(65_535));
    let requests = signed(&server, "GET", &path, &[(&name, "v")], &[], true);
    let rs = responses(&send_all(&server, &requests).await, &[false]);
    assert_eq!(rs.len(), 1);
    assert_eq!((rs[0].status, rs[0].header("x-ms-error-code")), (400, None));
    let requests = signed(&server, "HEAD", &path, &[], &[], true);
    let rs = responses(&send_all(&server, &requests).await, &[true]);
    assert_eq!(rs[0].status, 200);
}
