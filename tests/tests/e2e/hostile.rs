//! Hostile input (issue 8; docs/wire/errors.md#the-error-answer, docs/wire/requests.md#limits): one server stores
//! some data, then receives every kind of malformed request, each answered
//! with its 4xx and error code, and afterwards still serves every earlier
//! blob byte for byte with its metadata.
//!
//! errors.rs already pins an ASCII-malformed `x-ms-version` on a signed
//! request, a Put Blob body cut short on a half-closed socket, and a
//! missing Content-Length; the cases here are the hostile forms of those
//! inputs and the ones errors.rs does not send at all. The answers actix
//! gives itself, before Stowage sees a request (431 for a huge head, 400
//! for bytes that are not HTTP), carry no `x-ms-error-code`.

use std::time::Duration;

use stowage_tests::{ACCOUNT, Client, TestServer, unique};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::blocks::{b64, block_id, block_list_xml, enc, stage};
use super::errors::{Raw, date_and_version, parse_response, request_head};
use super::listing::texts;

/// A blob stored before the hostile requests, as it must read back after.
struct Stored {
    container: String,
    /// The blob name as it goes in the URL (percent-encoded).
    blob: &'static str,
    data: Vec<u8>,
    metadata: &'static [(&'static str, &'static str)],
}

impl Stored {
    fn path(&self) -> String {
        format!("/{}/{}", self.container, self.blob)
    }
}

#[tokio::test]
async fn hostile_requests_get_their_4xx_and_leave_every_blob_intact() {
    let server = TestServer::start().await;
    let c = server.client();
    let (stored, acl_container) = store_some_data(&c).await;
    let (plain, blocks) = (&stored[0], &stored[2]);

    oversized_request_heads(&server).await;
    long_urls(&c, plain).await;
    oversized_metadata(&c, plain).await;
    bodies_over_the_size_limits(&server, plain).await;
    hostile_block_lists(&server, &c, blocks).await;
    hostile_acls(&server, &c, &acl_container).await;
    malformed_dates_and_ranges(&c, plain).await;
    malformed_block_ids_and_md5(&c, plain, blocks).await;
    bad_versions_and_lease_ids(&c, plain).await;
    truncated_bodies(&server, blocks, &acl_container).await;
    binary_garbage(&server).await;

    // Still serving, and everything stored earlier reads back unchanged.
    let r = c.get("/?comp=list").send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    for s in &stored {
        let r = c.get(&s.path()).send().await;
        assert_eq!(r.status, 200, "{}: {}", s.path(), r.text());
        assert!(r.body[..] == s.data[..], "{}: the bytes changed", s.path());
        let mut metadata: Vec<(String, String)> = r
            .headers
            .iter()
            .filter_map(|(n, v)| {
                let name = n.as_str().strip_prefix("x-ms-meta-")?;
                Some((name.to_owned(), v.to_str().ok()?.to_owned()))
            })
            .collect();
        metadata.sort();
        let mut expected: Vec<(String, String)> = s
            .metadata
            .iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), (*v).to_owned()))
            .collect();
        expected.sort();
        assert_eq!(metadata, expected, "{}: metadata", s.path());
    }
    let r = c
        .get(&format!(
            "{}?comp=blocklist&blocklisttype=all",
            blocks.path()
        ))
        .send()
        .await;
    assert_eq!(
        texts(&r.text(), "Name"),
        [block_id(1), block_id(2)],
        "no block was staged by the refused requests: {}",
        r.text()
    );
    let r = c
        .get(&format!("/{acl_container}?restype=container&comp=acl"))
        .send()
        .await;
    assert_eq!(texts(&r.text(), "Id"), ["hostile-policy"], "{}", r.text());
    assert_eq!(texts(&r.text(), "Permission"), ["rl"], "{}", r.text());
    let r = c
        .get(&format!("/{}?restype=container", plain.container))
        .send()
        .await;
    assert_eq!(r.header("x-ms-meta-owner").as_deref(), Some("alice"));
}

/// A value that is not visible ASCII is a malformed version like any
/// other, not an absent one.
#[tokio::test]
async fn a_non_ascii_x_ms_version_is_refused() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("hostile");
    c.create_container(&name).await;
    let head = format!(
        "GET /{ACCOUNT}/{name}?restype=container HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    );
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(b"x-ms-version: 2021-10-04\xff\r\n\r\n");
    let r = exchange(&server, bytes, Vec::new())
        .await
        .expect("an answer");
    assert_eq!(
        (r.status, code(&r).as_deref()),
        (400, Some("InvalidHeaderValue")),
        "a non-ASCII x-ms-version is refused"
    );
}

// ---------------------------------------------------------------------------
// Helpers

/// A guard against a server that never answers: the test fails instead of
/// hanging. Not a timing assertion; the bound is far above any real answer.
async fn answered<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .expect("the server answered")
}

/// Sends `head` then `body` on a new connection from a separate task, so a
/// server that answers before reading everything cannot stall the test, and
/// returns what the server sent until it closed the connection (`None` when
/// it sent nothing).
async fn exchange(server: &TestServer, head: Vec<u8>, body: Vec<u8>) -> Option<Raw> {
    let stream = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let sending = tokio::spawn(async move {
        // The server may stop reading once it has answered; that is its right.
        let _ = writer.write_all(&head).await;
        let _ = writer.write_all(&body).await;
    });
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    // A reset after the answer (request bytes left unread) also ends it.
    while let Ok(n) = answered(reader.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n]);
    }
    sending.abort();
    (!bytes.is_empty()).then(|| parse_response(&bytes))
}

/// A raw request signed with Shared Key, `path` after the account.
async fn signed_raw(
    server: &TestServer,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: Vec<u8>,
) -> Raw {
    let [date, version] = date_and_version(server);
    let mut headers = vec![(date.0, date.1.as_str()), (version.0, version.1.as_str())];
    headers.extend_from_slice(extra);
    let head = request_head(server, method, &format!("/{ACCOUNT}{path}"), &headers, true);
    exchange(server, head.into_bytes(), body)
        .await
        .unwrap_or_else(|| panic!("{method} {path}: no answer"))
}

fn code(r: &Raw) -> Option<String> {
    r.header("x-ms-error-code")
}

/// Asserts a raw answer's status and error code, and that the XML body
/// names the code.
fn assert_raw_error(r: &Raw, status: u16, error: &str, what: &str) {
    assert_eq!(
        (r.status, code(r).as_deref()),
        (status, Some(error)),
        "{what}: {}\n{}",
        r.head,
        r.text()
    );
    assert!(
        r.text().contains(&format!("<Code>{error}</Code>")),
        "{what}: {}",
        r.text()
    );
}

/// Asserts an answer actix gave itself: the status and no error code.
fn assert_refused_by_http(r: Option<Raw>, status: u16, what: &str) {
    let r = r.unwrap_or_else(|| panic!("{what}: closed without an answer"));
    assert_eq!((r.status, code(&r)), (status, None), "{what}: {}", r.head);
}

/// Asserts 413 RequestBodyTooLarge with `<MaxLimit>max</MaxLimit>`.
fn assert_too_large(r: &Raw, max: u64, what: &str) {
    assert_raw_error(r, 413, "RequestBodyTooLarge", what);
    assert_eq!(texts(&r.text(), "MaxLimit"), [max.to_string()], "{what}");
}

// ---------------------------------------------------------------------------
// The data, and the hostile requests kind by kind

/// Two containers (one with metadata, one with a stored access policy) and
/// three blobs with metadata: two from Put Blob, one committed from blocks.
async fn store_some_data(c: &Client) -> (Vec<Stored>, String) {
    let first = unique("hostile");
    let r = c
        .put(&format!("/{first}?restype=container"))
        .header("x-ms-meta-Owner", "alice")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let second = unique("hostile");
    c.create_container(&second).await;
    let acl = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier>\
               <Id>hostile-policy</Id><AccessPolicy><Permission>rl</Permission></AccessPolicy>\
               </SignedIdentifier></SignedIdentifiers>";
    let r = c
        .put(&format!("/{second}?restype=container&comp=acl"))
        .body(acl)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());

    let binary: Vec<u8> = (0..64 * 1024u32).map(|i| (i * 31 % 251) as u8).collect();
    let stored = vec![
        Stored {
            container: first.clone(),
            blob: "plain.txt",
            data: b"hello, hostile world".to_vec(),
            metadata: &[("Owner", "alice"), ("project", "stowage")],
        },
        Stored {
            container: first,
            blob: "dir/binary%20blob.bin",
            data: binary,
            metadata: &[("Kind", "binary")],
        },
        Stored {
            container: second.clone(),
            blob: "blocks",
            data: b"first block|second block".to_vec(),
            metadata: &[("Committed", "yes")],
        },
    ];
    for s in &stored[..2] {
        let mut r = c
            .put(&s.path())
            .header("x-ms-blob-type", "BlockBlob")
            .body(s.data.clone());
        for (name, value) in s.metadata {
            r = r.header(&format!("x-ms-meta-{name}"), value);
        }
        let r = r.send().await;
        assert_eq!(r.status, 201, "{}: {}", s.path(), r.text());
    }
    let b = &stored[2];
    stage(c, &b.container, b.blob, &block_id(1), b"first block|").await;
    stage(c, &b.container, b.blob, &block_id(2), b"second block").await;
    let xml = block_list_xml(&[("Uncommitted", &block_id(1)), ("Uncommitted", &block_id(2))]);
    let r = c
        .put(&format!("{}?comp=blocklist", b.path()))
        .header("x-ms-meta-Committed", "yes")
        .body(xml)
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    (stored, second)
}

/// A head past actix's limit, by size or by header count: 431 from actix.
async fn oversized_request_heads(server: &TestServer) {
    let filler = "a".repeat(200 * 1024);
    let head = format!(
        "GET /{ACCOUNT}/?comp=list HTTP/1.1\r\nHost: x\r\nX-Filler: {filler}\r\n\
         Connection: close\r\n\r\n"
    );
    let r = exchange(server, head.into_bytes(), Vec::new()).await;
    assert_refused_by_http(r, 431, "a 200 KiB header");
    let many: String = (0..200).map(|i| format!("X-Many-{i}: v\r\n")).collect();
    let head =
        format!("GET /{ACCOUNT}/?comp=list HTTP/1.1\r\nHost: x\r\n{many}Connection: close\r\n\r\n");
    let r = exchange(server, head.into_bytes(), Vec::new()).await;
    assert_refused_by_http(r, 431, "200 headers");
}

/// URLs over 8 KiB: a name that long is out of range; a long query is
/// just a query.
async fn long_urls(c: &Client, plain: &Stored) {
    let long = "n".repeat(9 * 1024);
    let r = c.get(&format!("/{}/{long}", plain.container)).send().await;
    r.assert_error(400, "OutOfRangeInput");
    let r = c.get(&format!("/{long}?restype=container")).send().await;
    r.assert_error(400, "OutOfRangeInput");
    let r = c
        .put(&format!("/{}/{long}", plain.container))
        .header("x-ms-blob-type", "BlockBlob")
        .body(&b"x"[..])
        .send()
        .await;
    r.assert_error(400, "OutOfRangeInput");
    let r = c
        .get(&format!(
            "/{}?restype=container&comp=list&prefix={long}",
            plain.container
        ))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(texts(&r.text(), "Name"), Vec::<String>::new());
}

/// Nine 1 KiB values: over the 8 KiB total, nothing replaced.
async fn oversized_metadata(c: &Client, plain: &Stored) {
    let value = "v".repeat(1024);
    let mut r = c.put(&format!("{}?comp=metadata", plain.path()));
    for i in 0..9 {
        r = r.header(&format!("x-ms-meta-big{i}"), &value);
    }
    r.send().await.assert_error(400, "MetadataTooLarge");
    let mut r = c
        .put(&plain.path())
        .header("x-ms-blob-type", "BlockBlob")
        .body(&b"replaced"[..]);
    for i in 0..9 {
        r = r.header(&format!("x-ms-meta-big{i}"), &value);
    }
    r.send().await.assert_error(400, "MetadataTooLarge");
}

/// Declared lengths past the limits, answered before any body byte is sent;
/// a length that is not a number is refused by actix.
async fn bodies_over_the_size_limits(server: &TestServer, plain: &Stored) {
    let put_blob = ("x-ms-blob-type", "BlockBlob");
    let r = signed_raw(
        server,
        "PUT",
        &plain.path(),
        &[put_blob, ("Content-Length", &u64::MAX.to_string())],
        Vec::new(),
    )
    .await;
    assert_too_large(&r, 5_242_880_000, "Put Blob of u64::MAX bytes");
    let r = signed_raw(
        server,
        "PUT",
        &format!("{}?comp=block&blockid={}", plain.path(), enc(&block_id(9))),
        &[("Content-Length", "4194304001")],
        Vec::new(),
    )
    .await;
    assert_too_large(&r, 4_194_304_000, "Put Block over 4000 MiB");
    let [date, version] = date_and_version(server);
    let head = request_head(
        server,
        "PUT",
        &format!("/{ACCOUNT}{}", plain.path()),
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            put_blob,
            ("Content-Length", "99999999999999999999999"),
        ],
        true,
    );
    let r = exchange(server, head.into_bytes(), Vec::new()).await;
    assert_refused_by_http(r, 400, "a Content-Length past u64");
}

/// Put Block List bodies: not XML, nested deep, and over the 8 MiB limit.
async fn hostile_block_lists(server: &TestServer, c: &Client, b: &Stored) {
    let path = format!("{}?comp=blocklist", b.path());
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "binary",
            vec![0, 0xff, 0xfe, 0x3c, 0x00, 0x3e],
            "InvalidXmlDocument",
        ),
        (
            "not UTF-8 inside",
            b"<BlockList><Latest>\xff\xfe</Latest></BlockList>".to_vec(),
            "InvalidXmlDocument",
        ),
        (
            "nested inside an entry",
            format!("<BlockList><Latest>{}", "<Latest>".repeat(100_000)).into_bytes(),
            "InvalidBlockList",
        ),
        (
            "nested from the root",
            "<a>".repeat(100_000).into_bytes(),
            "InvalidXmlDocument",
        ),
        (
            "a bad base64 id",
            block_list_xml(&[("Latest", "not base64!")]).into_bytes(),
            "InvalidBlockList",
        ),
    ];
    for (what, body, error) in cases {
        let r = c.put(&path).body(body).send().await;
        assert_eq!(r.code().as_deref(), Some(error), "{what}: {}", r.text());
        r.assert_error(400, error);
    }
    let oversized = format!("<BlockList>{}</BlockList>", " ".repeat(8 * 1024 * 1024));
    let length = oversized.len().to_string();
    let r = signed_raw(
        server,
        "PUT",
        &path,
        &[("Content-Length", &length)],
        oversized.into_bytes(),
    )
    .await;
    assert_too_large(&r, 8 * 1024 * 1024, "a Put Block List body over 8 MiB");
}

/// Set Container ACL bodies: not XML, nested deep, over the 16 KiB limit.
async fn hostile_acls(server: &TestServer, c: &Client, container: &str) {
    let path = format!("/{container}?restype=container&comp=acl");
    let nested = format!("<SignedIdentifiers>{}", "<x>".repeat(5000));
    for (what, body) in [
        ("binary", vec![0, 0xff, 0xfe, 0x3c, 0x00, 0x3e]),
        ("nested", nested.into_bytes()),
        (
            "unclosed",
            b"<SignedIdentifiers><SignedIdentifier>".to_vec(),
        ),
    ] {
        let r = c.put(&path).body(body).send().await;
        assert_eq!(r.code().as_deref(), Some("InvalidXmlDocument"), "{what}");
        r.assert_error(400, "InvalidXmlDocument");
    }
    let oversized = format!(
        "<SignedIdentifiers>{}</SignedIdentifiers>",
        " ".repeat(16 * 1024)
    );
    let length = oversized.len().to_string();
    let r = signed_raw(
        server,
        "PUT",
        &path,
        &[("Content-Length", &length)],
        oversized.into_bytes(),
    )
    .await;
    assert_too_large(&r, 16 * 1024, "a Set Container ACL body over 16 KiB");
}

/// A date that does not parse is ignored; a range that does not parse
/// (ASCII, but no `bytes=S-E` / `bytes=S-`) reads the whole blob.
async fn malformed_dates_and_ranges(c: &Client, plain: &Stored) {
    let long = "9".repeat(4096);
    for date in [
        "yesterday",
        "Tue, 31 Feb 2024 25:61:61 GMT",
        "0",
        long.as_str(),
    ] {
        for header in ["if-modified-since", "if-unmodified-since"] {
            let r = c.get(&plain.path()).header(header, date).send().await;
            assert_eq!(r.status, 200, "{header}: {}", r.text());
            assert!(r.body[..] == plain.data[..], "{header}: a full read");
        }
    }
    for range in [
        "bytes=0-99999999999999999999999",
        "bytes=--1",
        "bytes=5-3",
        "bytes=1-2-3",
        "bytes=0x10-0x20",
        "bytes=1 - 2",
        long.as_str(),
    ] {
        for header in ["range", "x-ms-range"] {
            let r = c.get(&plain.path()).header(header, range).send().await;
            assert_eq!(r.status, 200, "{header}: {range}: {}", r.text());
            assert!(
                r.body[..] == plain.data[..],
                "{header}: {range}: a full read"
            );
        }
    }
}

/// Block ids that are not base64 of 1–64 bytes, and MD5s that are not 16
/// bytes of base64; nothing is staged or replaced.
async fn malformed_block_ids_and_md5(c: &Client, plain: &Stored, b: &Stored) {
    let sixty_five = enc(&b64(&[7u8; 65]));
    let huge = "QUFB".repeat(10_000);
    for id in ["not%20base64!!", "%FF%FE", "", &sixty_five, &huge] {
        let r = c
            .put(&format!("{}?comp=block&blockid={id}", b.path()))
            .body(&b"x"[..])
            .send()
            .await;
        r.assert_error(400, "InvalidQueryParameterValue");
        assert_eq!(texts(&r.text(), "QueryParameterName"), ["blockid"]);
    }
    let seventeen = b64(&[1u8; 17]);
    let long = "A".repeat(10_000);
    for md5 in ["zzz", "", seventeen.as_str(), long.as_str()] {
        let r = c
            .put(&plain.path())
            .header("x-ms-blob-type", "BlockBlob")
            .header("content-md5", md5)
            .body(&b"replaced"[..])
            .send()
            .await;
        r.assert_error(400, "InvalidMd5");
        let r = c
            .put(&format!(
                "{}?comp=block&blockid={}",
                b.path(),
                enc(&block_id(9))
            ))
            .header("content-md5", md5)
            .body(&b"x"[..])
            .send()
            .await;
        r.assert_error(400, "InvalidMd5");
    }
}

/// Versions that are not `YYYY-MM-DD` on anonymous requests (errors.rs has
/// the signed ones), and lease ids that are not GUIDs on writes.
async fn bad_versions_and_lease_ids(c: &Client, plain: &Stored) {
    let long = "2".repeat(10_000);
    for version in ["2021-10-04; DROP", "2021-02-30x", long.as_str()] {
        let r = c
            .get(&plain.path())
            .without("x-ms-version")
            .header("x-ms-version", version)
            .anonymous()
            .send()
            .await;
        r.assert_error(400, "InvalidHeaderValue");
        assert_eq!(texts(&r.text(), "HeaderName"), ["x-ms-version"]);
    }
    let long = "a".repeat(10_000);
    for id in [
        "not-a-guid",
        "{zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz}",
        "aaaaaaaa-0000-4000-8000-00000000000",
        long.as_str(),
    ] {
        let writes = [
            c.put(&plain.path())
                .header("x-ms-blob-type", "BlockBlob")
                .body(&b"replaced"[..]),
            c.put(&format!("{}?comp=metadata", plain.path()))
                .header("x-ms-meta-Owner", "mallory"),
            c.delete(&plain.path()),
        ];
        for w in writes {
            let r = w.header("x-ms-lease-id", id).send().await;
            r.assert_error(400, "InvalidHeaderValue");
            assert_eq!(texts(&r.text(), "HeaderName"), ["x-ms-lease-id"]);
        }
    }
}

/// Bodies shorter than their Content-Length. One connection is dropped
/// outright mid-body; the others are half-closed, so the answer can be read.
async fn truncated_bodies(server: &TestServer, b: &Stored, acl_container: &str) {
    let [date, version] = date_and_version(server);
    let head = |path: &str, length: usize| {
        let length = length.to_string();
        request_head(
            server,
            "PUT",
            &format!("/{ACCOUNT}{path}"),
            &[
                (date.0, &date.1),
                (version.0, &version.1),
                ("Content-Length", &length),
            ],
            true,
        )
    };
    let block = format!("{}?comp=block&blockid={}", b.path(), enc(&block_id(3)));
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream
        .write_all(head(&block, 1000).as_bytes())
        .await
        .unwrap();
    stream.write_all(&[7u8; 100]).await.unwrap();
    drop(stream);

    let list = block_list_xml(&[("Latest", &block_id(1))]);
    let acl = "<SignedIdentifiers><SignedIdentifier><Id>x</Id></SignedIdentifier>";
    let cases = [
        (block, vec![7u8; 100], 1000),
        (
            format!("{}?comp=blocklist", b.path()),
            list.clone().into_bytes(),
            list.len() + 100,
        ),
        (
            format!("/{acl_container}?restype=container&comp=acl"),
            acl.as_bytes().to_vec(),
            acl.len() + 100,
        ),
    ];
    for (path, sent, length) in cases {
        let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
        stream
            .write_all(head(&path, length).as_bytes())
            .await
            .unwrap();
        stream.write_all(&sent).await.unwrap();
        stream.shutdown().await.unwrap();
        let mut bytes = Vec::new();
        answered(stream.read_to_end(&mut bytes)).await.unwrap();
        // docs/wire/requests.md#common-headers: 400 InvalidInput (code unverified).
        assert_raw_error(&parse_response(&bytes), 400, "InvalidInput", &path);
    }
}

/// Bytes that are not HTTP at all: actix answers 400 itself.
async fn binary_garbage(server: &TestServer) {
    let noise: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 256) as u8).collect();
    let r = exchange(server, noise, Vec::new()).await;
    assert_refused_by_http(r, 400, "4 KiB of noise");
    // A TLS ClientHello sent to the plain-HTTP port.
    let hello = b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03".to_vec();
    let r = exchange(server, hello, Vec::new()).await;
    assert_refused_by_http(r, 400, "a TLS ClientHello");
    let nul = format!("GET /{ACCOUNT}/\0?comp=list HTTP/1.1\r\nHost: x\r\n\r\n");
    let r = exchange(server, nul.into_bytes(), Vec::new()).await;
    assert_refused_by_http(r, 400, "a NUL in the request line");
}
