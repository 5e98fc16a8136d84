//! Block blob operations (docs/wire/blobs.md; content properties
//! and checksums docs/wire/requests.md#content-properties; ETags docs/wire/requests.md#etag-and-last-modified): Put Blob, Get Blob
//! whole and ranged, Get Blob Properties, Set Blob Properties, Get / Set
//! Blob Metadata, Delete Blob.

use std::time::Duration;

use base64::Engine as _;
use md5::{Digest, Md5};
use stowage_tests::{Client, Response, TestServer, unique};

fn md5_b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(Md5::digest(data))
}

/// `n` bytes that differ from position to position.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

async fn setup(c: &Client) -> String {
    let name = unique("blobs");
    c.create_container(&name).await;
    name
}

fn meta_headers(r: &Response) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(k, _)| k.as_str().starts_with("x-ms-meta-"))
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    m.sort();
    m
}

// ---------------------------------------------------------------------------
// Put Blob and Get Blob

#[tokio::test]
async fn put_blob_is_201_with_etag_last_modified_and_the_computed_md5() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = b"hello, stowage";
    let r = c
        .put(&format!("/{name}/hello.txt"))
        .header("x-ms-blob-type", "BlockBlob")
        .body(&data[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(r.body.is_empty());
    let etag = r.etag();
    assert!(
        etag.len() == 20 && etag.starts_with("\"0x") && etag.ends_with('"'),
        "{etag}"
    );
    assert!(
        etag[3..19]
            .chars()
            .all(|ch| ch.is_ascii_digit() || ('A'..='F').contains(&ch)),
        "{etag}"
    );
    assert_eq!(
        r.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT")
    );
    // Returned even though the client sent none.
    assert_eq!(r.header("content-md5"), Some(md5_b64(data)));
    assert_eq!(
        r.header("x-ms-request-server-encrypted").as_deref(),
        Some("true")
    );
}

#[tokio::test]
async fn get_blob_returns_the_bytes_and_every_property_header() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = pattern(1000);
    let put = c.put_blob(&name, "dir/data.bin", &data).await;
    let r = c.get(&format!("/{name}/dir/data.bin")).send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(&r.body[..], &data[..]);
    let expected = [
        ("content-length", Some("1000".to_owned())),
        ("content-type", Some("application/octet-stream".to_owned())),
        ("content-md5", Some(md5_b64(&data))),
        ("accept-ranges", Some("bytes".to_owned())),
        ("etag", Some(put.etag())),
        ("last-modified", put.header("last-modified")),
        (
            "x-ms-creation-time",
            Some("Tue, 03 Sep 2024 10:15:07 GMT".to_owned()),
        ),
        ("x-ms-blob-type", Some("BlockBlob".to_owned())),
        ("x-ms-lease-status", Some("unlocked".to_owned())),
        ("x-ms-lease-state", Some("available".to_owned())),
        ("x-ms-server-encrypted", Some("true".to_owned())),
        ("content-range", None),
        ("content-encoding", None),
        ("content-language", None),
        ("content-disposition", None),
        ("cache-control", None),
        ("x-ms-blob-content-md5", None),
        ("x-ms-blob-committed-block-count", None),
    ];
    for (header, value) in expected {
        assert_eq!(r.header(header), value, "{header}");
    }
}

#[tokio::test]
async fn an_empty_block_blob_reads_back_empty() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let put = c.put_blob(&name, "empty", b"").await;
    assert_eq!(put.header("content-md5"), Some(md5_b64(b"")));
    let r = c.get(&format!("/{name}/empty")).send().await;
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-length").as_deref(), Some("0"));
    assert_eq!(r.header("content-md5"), Some(md5_b64(b"")));
}

#[tokio::test]
async fn blob_names_with_spaces_slashes_and_unicode_round_trip() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    // (path as sent, percent-encoded where needed)
    let names = [
        "dir/hello%20world.txt",
        "a/b/c/d.txt",
        "%E5%90%8D%E5%89%8D/%C3%BC.txt",
        "(quote)'s+plus",
        "trailing.",
    ];
    for (i, blob) in names.iter().enumerate() {
        let data = format!("blob {i}");
        c.put_blob(&name, blob, data.as_bytes()).await;
        let r = c.get(&format!("/{name}/{blob}")).send().await;
        assert_eq!(r.status, 200, "{blob}: {}", r.text());
        assert_eq!(r.text(), data, "{blob}");
    }
}

#[tokio::test]
async fn blob_names_are_validated() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let max_segments = vec!["a"; 254].join("/");
    let too_many_segments = vec!["a"; 255].join("/");
    let e_acute = "%C3%A9";
    // (name as sent, expected code or None when accepted)
    let cases: Vec<(String, Option<&str>)> = vec![
        ("x".repeat(1024), None),
        ("x".repeat(1025), Some("OutOfRangeInput")),
        // Stowage counts Unicode scalar values (docs/wire/requests.md#names).
        (e_acute.repeat(1024), None),
        (e_acute.repeat(1025), Some("OutOfRangeInput")),
        (max_segments, None),
        (too_many_segments, Some("InvalidResourceName")),
        ("ctl%01char".to_owned(), Some("InvalidResourceName")),
        ("nul%00char".to_owned(), Some("InvalidResourceName")),
        ("del%7Fchar".to_owned(), Some("InvalidResourceName")),
        ("nonchar%EF%BF%BF".to_owned(), Some("InvalidResourceName")),
        ("private%EE%80%80".to_owned(), Some("InvalidResourceName")),
    ];
    for (blob, code) in cases {
        let r = c
            .put(&format!("/{name}/{blob}"))
            .header("x-ms-blob-type", "BlockBlob")
            .body(&b"x"[..])
            .send()
            .await;
        let shown = &blob[..blob.len().min(40)];
        match code {
            None => assert_eq!(r.status, 201, "{shown}: {}", r.text()),
            Some(code) => {
                assert_eq!(r.status, 400, "{shown}: {}", r.text());
                r.assert_error(400, code);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Content properties (docs/wire/requests.md#content-properties)

#[tokio::test]
async fn standard_content_headers_are_stored_as_properties() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let r = c
        .put(&format!("/{name}/page.html"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-type", "text/html; charset=utf-8")
        .header("content-encoding", "identity")
        .header("content-language", "en-GB")
        .header("cache-control", "max-age=60")
        .header(
            "x-ms-blob-content-disposition",
            "attachment; filename=\"p.html\"",
        )
        .body(&b"<p>hi</p>"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    for method in ["GET", "HEAD"] {
        let g = c
            .request(method, &format!("/{name}/page.html"))
            .send()
            .await;
        assert_eq!(g.status, 200);
        let expected = [
            ("content-type", "text/html; charset=utf-8"),
            ("content-encoding", "identity"),
            ("content-language", "en-GB"),
            ("cache-control", "max-age=60"),
            ("content-disposition", "attachment; filename=\"p.html\""),
        ];
        for (header, value) in expected {
            assert_eq!(
                g.header(header).as_deref(),
                Some(value),
                "{method} {header}"
            );
        }
    }
}

#[tokio::test]
async fn x_ms_blob_headers_win_over_the_standard_headers() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    // (standard header, x-ms-blob twin, response header)
    let pairs = [
        ("content-type", "x-ms-blob-content-type", "content-type"),
        (
            "content-encoding",
            "x-ms-blob-content-encoding",
            "content-encoding",
        ),
        (
            "content-language",
            "x-ms-blob-content-language",
            "content-language",
        ),
        ("cache-control", "x-ms-blob-cache-control", "cache-control"),
    ];
    for (standard, twin, response) in pairs {
        let blob = format!("b-{standard}");
        let r = c
            .put(&format!("/{name}/{blob}"))
            .header("x-ms-blob-type", "BlockBlob")
            .header(standard, "from-standard")
            .header(twin, "from-twin")
            .body(&b"x"[..])
            .send()
            .await;
        assert_eq!(r.status, 201, "{standard}: {}", r.text());
        let g = c.head(&format!("/{name}/{blob}")).send().await;
        assert_eq!(
            g.header(response).as_deref(),
            Some("from-twin"),
            "{standard}"
        );
    }
}

#[tokio::test]
async fn a_malformed_md5_header_is_400_invalid_md5() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    for header in ["content-md5", "x-ms-blob-content-md5"] {
        for bad in ["not base64!", "AAAA", &md5_b64(b"x")[..20]] {
            let r = c
                .put(&format!("/{name}/b"))
                .header("x-ms-blob-type", "BlockBlob")
                .header(header, bad)
                .body(&b"x"[..])
                .send()
                .await;
            assert_eq!(r.status, 400, "{header}: {bad}: {}", r.text());
            r.assert_error(400, "InvalidMd5");
        }
    }
    // Set Blob Properties stores any length, but not what is not base64
    // (set_blob_properties_stores_an_md5_of_any_length_as_given).
    c.put_blob(&name, "b", b"x").await;
    let r = c
        .put(&format!("/{name}/b?comp=properties"))
        .header("x-ms-blob-content-md5", "not base64!")
        .send()
        .await;
    r.assert_error(400, "InvalidMd5");
}

#[tokio::test]
async fn x_ms_blob_content_length_on_a_block_blob_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-length", "512")
        .body(&b"x"[..])
        .send()
        .await;
    // docs/wire/blobs.md#put-blob: code unverified.
    assert_eq!(r.status, 400, "{}", r.text());
    r.assert_error(400, "InvalidHeaderValue");
}

// ---------------------------------------------------------------------------
// Transactional Content-MD5 (docs/wire/requests.md#transactional-checksums)

#[tokio::test]
async fn a_matching_content_md5_is_accepted_and_stored() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = b"checked bytes";
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", &md5_b64(data))
        .body(&data[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(g.header("content-md5"), Some(md5_b64(data)));
}

#[tokio::test]
async fn a_content_md5_mismatch_is_400_md5_mismatch_and_stores_nothing() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let r = c
        .put(&format!("/{name}/new"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", &md5_b64(b"other bytes"))
        .body(&b"the bytes"[..])
        .send()
        .await;
    r.assert_error(400, "Md5Mismatch");
    c.get(&format!("/{name}/new"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn a_content_md5_mismatch_over_an_existing_blob_keeps_the_old_version() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let old = c.put_blob(&name, "b", b"old content").await;
    server.clock.advance(Duration::from_secs(1));
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", &md5_b64(b"not it"))
        .header("x-ms-meta-new", "1")
        .body(&b"new content"[..])
        .send()
        .await;
    r.assert_error(400, "Md5Mismatch");
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(&g.body[..], b"old content");
    assert_eq!(g.etag(), old.etag());
    assert_eq!(g.header("x-ms-meta-new"), None);
}

// ---------------------------------------------------------------------------
// Append blob creation through Put Blob

#[tokio::test]
async fn put_blob_with_append_blob_type_creates_an_empty_append_blob() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let r = c
        .put(&format!("/{name}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("x-ms-blob-content-type", "text/plain")
        .header("x-ms-meta-kind", "log")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let h = c.head(&format!("/{name}/log")).send().await;
    assert_eq!(h.status, 200);
    assert_eq!(h.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
    assert_eq!(h.header("content-length").as_deref(), Some("0"));
    assert_eq!(
        h.header("x-ms-blob-committed-block-count").as_deref(),
        Some("0")
    );
    assert_eq!(h.header("content-type").as_deref(), Some("text/plain"));
    assert_eq!(h.header("x-ms-meta-kind").as_deref(), Some("log"));
    // No MD5 is computed for append blobs.
    assert_eq!(h.header("content-md5"), None);
    // And no access tier: that is for block blobs.
    assert_eq!(h.header("x-ms-access-tier"), None);
}

#[tokio::test]
async fn an_append_blob_put_with_a_body_is_400_and_stores_nothing() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let r = c
        .put(&format!("/{name}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .body(&b"not allowed"[..])
        .send()
        .await;
    // docs/wire/blobs.md#put-blob: 400, code unverified.
    assert_eq!(r.status, 400, "{}", r.text());
    r.assert_error(400, "InvalidHeaderValue");
    c.head(&format!("/{name}/log"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn put_blob_replaces_a_blob_of_another_type_and_the_new_type_wins() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    // An append blob over a block blob.
    c.put_blob(&name, "b", b"block bytes").await;
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
    assert_eq!(r.header("content-length").as_deref(), Some("0"));
    assert_eq!(
        r.header("x-ms-blob-committed-block-count").as_deref(),
        Some("0")
    );
    // A block blob over an append blob.
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .body(&b"x"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-ms-blob-type").as_deref(), Some("BlockBlob"));
    assert_eq!(r.text(), "x");
}

#[tokio::test]
async fn put_blob_of_another_type_still_honours_conditions_and_leases() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let etag = c.put_blob(&name, "b", b"keep").await.etag();
    // A condition that fails: 412, nothing replaced.
    c.put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("if-none-match", "*")
        .send()
        .await
        .assert_error(409, "BlobAlreadyExists");
    c.put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("if-match", "\"0x1\"")
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    // A leased blob: without the lease id, 412 LeaseIdMissing.
    let r = c
        .put(&format!("/{name}/b?comp=lease"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let lease = r.header("x-ms-lease-id").unwrap();
    c.put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await
        .assert_error(412, "LeaseIdMissing");
    let r = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(r.header("x-ms-blob-type").as_deref(), Some("BlockBlob"));
    assert_eq!(r.etag(), etag);
    assert_eq!(r.text(), "keep");
    // With the lease id and a matching If-Match it is replaced, and the
    // lease stays.
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("x-ms-lease-id", &lease)
        .header("if-match", &etag)
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(r.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
    assert_eq!(r.header("x-ms-lease-state").as_deref(), Some("leased"));
}

#[tokio::test]
async fn put_blob_checks_x_ms_blob_content_md5_against_the_body_before_content_md5() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let wrong = md5_b64(b"other bytes");
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-md5", &wrong)
        .body(&b"payload"[..])
        .send()
        .await;
    r.assert_error(400, "Md5Mismatch");
    c.head(&format!("/{name}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    // Both headers: x-ms-blob-content-md5 takes precedence, so a wrong one
    // fails beside a right Content-MD5, and a wrong Content-MD5 beside a
    // right one is not looked at.
    let right = md5_b64(b"payload");
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", &wrong)
        .header("x-ms-blob-content-md5", &right)
        .body(&b"payload"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5").as_deref(), Some(right.as_str()));
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", &right)
        .header("x-ms-blob-content-md5", &wrong)
        .body(&b"payload"[..])
        .send()
        .await;
    r.assert_error(400, "Md5Mismatch");
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-md5", &right)
        .header("x-ms-blob-content-md5", &right)
        .body(&b"payload"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5").as_deref(), Some(right.as_str()));
    let r = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(r.header("content-md5").as_deref(), Some(right.as_str()));
}

#[tokio::test]
async fn set_blob_properties_stores_an_md5_of_any_length_as_given() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"payload").await;
    for value in [
        "AAAA",
        "c2hvcnQ=",
        "dGhpcnR5LXR3by1ieXRlcy1vZi1ub3QtcmVhbGx5LW1kNQ==",
    ] {
        let r = c
            .put(&format!("/{name}/b?comp=properties"))
            .header("x-ms-blob-content-md5", value)
            .send()
            .await;
        assert_eq!(r.status, 200, "{value}: {}", r.text());
        let r = c.head(&format!("/{name}/b")).send().await;
        assert_eq!(r.header("content-md5").as_deref(), Some(value));
    }
    c.put(&format!("/{name}/b?comp=properties"))
        .header("x-ms-blob-content-md5", "not base64!")
        .send()
        .await
        .assert_error(400, "InvalidMd5");
}

#[tokio::test]
async fn set_blob_properties_without_content_headers_clears_them_all() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let r = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-type", "text/plain")
        .header("content-encoding", "identity")
        .header("content-language", "en")
        .header("cache-control", "no-cache")
        .header("x-ms-blob-content-disposition", "inline")
        .body(&b"payload"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.put(&format!("/{name}/b?comp=properties")).send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    for (verb, get) in [
        ("HEAD", c.head(&format!("/{name}/b")).send().await),
        ("GET", c.get(&format!("/{name}/b")).send().await),
    ] {
        assert_eq!(get.status, 200, "{verb}");
        for h in [
            "content-type",
            "content-encoding",
            "content-language",
            "cache-control",
            "content-disposition",
            "content-md5",
        ] {
            assert_eq!(get.header(h), None, "{verb} {h}");
        }
    }
    let list = c
        .get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await;
    assert!(
        list.text().contains("<Content-Type />")
            || list.text().contains("<Content-Type></Content-Type>"),
        "{}",
        list.text()
    );
    // A blob created without a content type gets the service's default.
    c.put_blob(&name, "plain", b"x").await;
    let r = c.head(&format!("/{name}/plain")).send().await;
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
}

#[tokio::test]
async fn delete_blob_answers_x_ms_delete_type_permanent_true() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"x").await;
    let r = c.delete(&format!("/{name}/b")).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(
        r.header("x-ms-delete-type-permanent").as_deref(),
        Some("true")
    );
    // Before version 2017-07-29 the header did not exist.
    c.put_blob(&name, "b", b"x").await;
    let r = c
        .delete(&format!("/{name}/b"))
        .without("x-ms-version")
        .header("x-ms-version", "2017-04-17")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.header("x-ms-delete-type-permanent"), None);
}

#[tokio::test]
async fn delete_blob_with_if_none_match_star_deletes_an_existing_blob() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let etag = c.put_blob(&name, "b", b"x").await.etag();
    // A listed ETag that matches still fails.
    c.delete(&format!("/{name}/b"))
        .header("if-none-match", &etag)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    let r = c
        .delete(&format!("/{name}/b"))
        .header("if-none-match", "*")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    c.head(&format!("/{name}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    // On a missing blob: 404 first.
    c.delete(&format!("/{name}/b"))
        .header("if-none-match", "*")
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

// ---------------------------------------------------------------------------
// Ranges (docs/wire/blobs.md#get-blob)

/// Request headers of one table row.
type Headers = &'static [(&'static str, &'static str)];

#[tokio::test]
async fn ranged_reads_follow_the_range_table() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = pattern(100);
    c.put_blob(&name, "b", &data).await;
    // (headers, expected: Some((start, end inclusive)) for a 206, None for a full 200)
    let cases: &[(Headers, Option<(usize, usize)>)] = &[
        (&[("range", "bytes=0-9")], Some((0, 9))),
        (&[("range", "bytes=90-")], Some((90, 99))),
        (&[("range", "bytes=95-200")], Some((95, 99))),
        (&[("range", "bytes=0-99")], Some((0, 99))),
        (&[("range", "bytes=0-")], Some((0, 99))),
        (&[("range", "bytes=99-99")], Some((99, 99))),
        (&[("range", "bytes=0-0")], Some((0, 0))),
        (&[("x-ms-range", "bytes=10-19")], Some((10, 19))),
        (&[("x-ms-range", "bytes=50-")], Some((50, 99))),
        // x-ms-range wins when both are sent.
        (
            &[("range", "bytes=0-0"), ("x-ms-range", "bytes=50-59")],
            Some((50, 59)),
        ),
        (
            &[("range", "bytes=0-0"), ("x-ms-range", "bytes=50-")],
            Some((50, 99)),
        ),
        // Forms that are ignored: a full 200.
        (&[("range", "bytes=-5")], None),
        (&[("range", "bytes=9-5")], None),
        (&[("range", "bytes=0-1,4-5")], None),
        (&[("range", "bytes=a-b")], None),
        (&[("range", "items=0-9")], None),
        (&[("range", "bytes=")], None),
        (&[("x-ms-range", "bytes=-5")], None),
    ];
    for (headers, expected) in cases {
        let mut request = c.get(&format!("/{name}/b"));
        for (h, v) in *headers {
            request = request.header(h, v);
        }
        let r = request.send().await;
        match expected {
            Some((s, e)) => {
                assert_eq!(r.status, 206, "{headers:?}: {}", r.text());
                assert_eq!(&r.body[..], &data[*s..=*e], "{headers:?}");
                assert_eq!(
                    r.header("content-range"),
                    Some(format!("bytes {s}-{e}/100")),
                    "{headers:?}"
                );
                assert_eq!(
                    r.header("content-length"),
                    Some((e - s + 1).to_string()),
                    "{headers:?}"
                );
                // Range reads carry the whole-blob MD5 as x-ms-blob-content-md5.
                assert_eq!(r.header("x-ms-blob-content-md5"), Some(md5_b64(&data)));
                assert_eq!(r.header("content-md5"), None, "{headers:?}");
            }
            None => {
                assert_eq!(r.status, 200, "{headers:?}: {}", r.text());
                assert_eq!(&r.body[..], &data[..], "{headers:?}");
                assert_eq!(r.header("content-range"), None, "{headers:?}");
                assert_eq!(r.header("content-md5"), Some(md5_b64(&data)));
            }
        }
    }
}

#[tokio::test]
async fn range_past_the_end_is_416_invalid_range() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", &pattern(100)).await;
    for (header, value) in [
        ("range", "bytes=100-"),
        ("range", "bytes=100-200"),
        ("range", "bytes=1000-1001"),
        ("x-ms-range", "bytes=100-"),
        ("x-ms-range", "bytes=150-160"),
    ] {
        let r = c
            .get(&format!("/{name}/b"))
            .header(header, value)
            .send()
            .await;
        r.assert_error(416, "InvalidRange");
        assert_eq!(
            r.header("content-range").as_deref(),
            Some("bytes */100"),
            "{header}: {value}"
        );
    }
}

#[tokio::test]
async fn any_range_on_an_empty_blob_is_416_invalid_range() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "empty", b"").await;
    for (header, value) in [
        ("range", "bytes=0-"),
        ("range", "bytes=0-0"),
        ("x-ms-range", "bytes=0-33554431"),
    ] {
        let r = c
            .get(&format!("/{name}/empty"))
            .header(header, value)
            .send()
            .await;
        r.assert_error(416, "InvalidRange");
        assert_eq!(r.header("content-range").as_deref(), Some("bytes */0"));
    }
    // Without a range it is an ordinary empty 200 (how SDKs download it).
    let r = c.get(&format!("/{name}/empty")).send().await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn range_get_content_md5_returns_the_md5_of_the_range() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = pattern(1000);
    c.put_blob(&name, "b", &data).await;
    let r = c
        .get(&format!("/{name}/b"))
        .header("x-ms-range", "bytes=100-199")
        .header("x-ms-range-get-content-md5", "true")
        .send()
        .await;
    assert_eq!(r.status, 206, "{}", r.text());
    assert_eq!(&r.body[..], &data[100..200]);
    assert_eq!(r.header("content-md5"), Some(md5_b64(&data[100..200])));
    assert_eq!(r.header("x-ms-blob-content-md5"), Some(md5_b64(&data)));
}

#[tokio::test]
async fn range_get_content_md5_without_a_range_is_400() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"data").await;
    let r = c
        .get(&format!("/{name}/b"))
        .header("x-ms-range-get-content-md5", "true")
        .send()
        .await;
    // docs/wire/requests.md#transactional-checksums: 400, code unverified.
    assert_eq!(r.status, 400, "{}", r.text());
    r.assert_error(400, "InvalidHeaderValue");
    // `false` asks for nothing.
    let r = c
        .get(&format!("/{name}/b"))
        .header("x-ms-range-get-content-md5", "false")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn range_get_content_md5_over_4_mib_is_400() {
    let data = pattern(4 * 1024 * 1024 + 10);
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "big", &data).await;
    let r = c
        .get(&format!("/{name}/big"))
        .header("x-ms-range", "bytes=0-4194304")
        .header("x-ms-range-get-content-md5", "true")
        .send()
        .await;
    assert_eq!(r.status, 400, "{}", r.text());
    r.assert_error(400, "InvalidHeaderValue");
    // Exactly 4 MiB is allowed.
    let r = c
        .get(&format!("/{name}/big"))
        .header("x-ms-range", "bytes=0-4194303")
        .header("x-ms-range-get-content-md5", "true")
        .send()
        .await;
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-md5"), Some(md5_b64(&data[..4194304])));
}

// ---------------------------------------------------------------------------
// Get Blob Properties (HEAD)

#[tokio::test]
async fn head_reports_the_whole_size_and_has_no_body() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = pattern(12345);
    let put = c.put_blob(&name, "b", &data).await;
    let r = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-length").as_deref(), Some("12345"));
    assert_eq!(r.header("content-md5"), Some(md5_b64(&data)));
    assert_eq!(r.etag(), put.etag());
    assert_eq!(r.header("x-ms-blob-type").as_deref(), Some("BlockBlob"));
    assert_eq!(r.header("x-ms-access-tier").as_deref(), Some("Hot"));
    assert_eq!(
        r.header("x-ms-access-tier-inferred").as_deref(),
        Some("true")
    );
    assert_eq!(r.header("x-ms-server-encrypted").as_deref(), Some("true"));
    assert_eq!(
        r.header("x-ms-creation-time").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT")
    );
}

#[tokio::test]
async fn head_ignores_range_headers() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", &pattern(100)).await;
    for (header, value) in [("range", "bytes=0-9"), ("x-ms-range", "bytes=500-")] {
        let r = c
            .head(&format!("/{name}/b"))
            .header(header, value)
            .send()
            .await;
        assert_eq!(r.status, 200, "{header}");
        assert_eq!(r.header("content-length").as_deref(), Some("100"));
        assert_eq!(r.header("content-range"), None);
    }
    // Even on an empty blob, where the same range on a GET is a 416.
    c.put_blob(&name, "empty", b"").await;
    let r = c
        .head(&format!("/{name}/empty"))
        .header("x-ms-range", "bytes=0-")
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length").as_deref(), Some("0"));
}

// ---------------------------------------------------------------------------
// Set Blob Properties (docs/wire/blobs.md#set-blob-properties)

#[tokio::test]
async fn set_blob_properties_sets_what_is_sent_and_clears_what_is_absent() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let data = b"some content";
    let put = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/plain")
        .header("x-ms-blob-content-encoding", "identity")
        .header("x-ms-blob-content-language", "en")
        .header("x-ms-blob-cache-control", "no-cache")
        .header("x-ms-blob-content-disposition", "inline")
        .header("x-ms-meta-keep", "me")
        .body(&data[..])
        .send()
        .await;
    assert_eq!(put.status, 201);
    server.clock.advance(Duration::from_secs(1));
    let set = c
        .put(&format!("/{name}/b?comp=properties"))
        .header("x-ms-blob-content-type", "application/json")
        .header("x-ms-blob-cache-control", "max-age=5")
        .send()
        .await;
    assert_eq!(set.status, 200, "{}", set.text());
    assert_ne!(set.etag(), put.etag());
    assert_eq!(
        set.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:08 GMT")
    );
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(&g.body[..], data, "content is kept");
    assert_eq!(g.etag(), set.etag());
    let expected = [
        ("content-type", Some("application/json")),
        ("cache-control", Some("max-age=5")),
        ("content-encoding", None),
        ("content-language", None),
        ("content-disposition", None),
        ("content-md5", None),
        ("x-ms-meta-keep", Some("me")),
    ];
    for (header, value) in expected {
        assert_eq!(g.header(header).as_deref(), value, "{header}");
    }
    // Nothing sent: every property cleared, the content type included (no
    // `Content-Type` at all, as the service answers).
    let set = c.put(&format!("/{name}/b?comp=properties")).send().await;
    assert_eq!(set.status, 200);
    let h = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(h.header("content-type"), None);
    assert_eq!(h.header("cache-control"), None);
    assert_eq!(h.header("content-length").as_deref(), Some("12"));
}

#[tokio::test]
async fn set_blob_properties_can_store_a_content_md5() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"abc").await;
    let md5 = md5_b64(b"abc");
    let r = c
        .put(&format!("/{name}/b?comp=properties"))
        .header("x-ms-blob-content-md5", &md5)
        .send()
        .await;
    assert_eq!(r.status, 200);
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(g.header("content-md5"), Some(md5));
}

// ---------------------------------------------------------------------------
// Metadata (docs/wire/blobs.md#get-blob-metadata, docs/wire/blobs.md#set-blob-metadata)

#[tokio::test]
async fn blob_metadata_is_set_by_put_blob_and_read_by_get_head_and_comp_metadata() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let put = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-meta-owner", "alice")
        .header("x-ms-meta-tier", "gold")
        .body(&b"x"[..])
        .send()
        .await;
    assert_eq!(put.status, 201);
    let expected = vec![
        ("x-ms-meta-owner".to_owned(), "alice".to_owned()),
        ("x-ms-meta-tier".to_owned(), "gold".to_owned()),
    ];
    for (method, path) in [
        ("GET", format!("/{name}/b")),
        ("HEAD", format!("/{name}/b")),
        ("GET", format!("/{name}/b?comp=metadata")),
        ("HEAD", format!("/{name}/b?comp=metadata")),
    ] {
        let r = c.request(method, &path).send().await;
        assert_eq!(r.status, 200, "{method} {path}");
        assert_eq!(meta_headers(&r), expected, "{method} {path}");
        assert_eq!(r.etag(), put.etag());
    }
    let r = c.get(&format!("/{name}/b?comp=metadata")).send().await;
    assert!(r.body.is_empty());
}

#[tokio::test]
async fn set_blob_metadata_replaces_the_set_and_keeps_content_and_properties() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let put = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/plain")
        .header("x-ms-meta-old", "1")
        .body(&b"content"[..])
        .send()
        .await;
    assert_eq!(put.status, 201);
    server.clock.advance(Duration::from_secs(1));
    let set = c
        .put(&format!("/{name}/b?comp=metadata"))
        .header("x-ms-meta-new", "2")
        .send()
        .await;
    assert_eq!(set.status, 200, "{}", set.text());
    assert_ne!(set.etag(), put.etag());
    assert_eq!(
        set.header("x-ms-request-server-encrypted").as_deref(),
        Some("true")
    );
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(
        meta_headers(&g),
        [("x-ms-meta-new".to_owned(), "2".to_owned())]
    );
    assert_eq!(&g.body[..], b"content");
    assert_eq!(g.header("content-type").as_deref(), Some("text/plain"));
    assert_eq!(g.header("content-md5"), Some(md5_b64(b"content")));
    assert_eq!(g.header("last-modified"), set.header("last-modified"));
    // None sent clears the set.
    let cleared = c.put(&format!("/{name}/b?comp=metadata")).send().await;
    assert_eq!(cleared.status, 200);
    let g = c.head(&format!("/{name}/b")).send().await;
    assert!(meta_headers(&g).is_empty());
}

#[tokio::test]
async fn bad_blob_metadata_is_refused_and_stores_nothing() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "existing", b"x").await;
    let cases = [
        ("x-ms-meta-", "v", "EmptyMetadataKey"),
        ("x-ms-meta-9lives", "v", "InvalidMetadata"),
        ("x-ms-meta-has-dash", "v", "InvalidMetadata"),
    ];
    for (header, value, code) in cases {
        let r = c
            .put(&format!("/{name}/new"))
            .header("x-ms-blob-type", "BlockBlob")
            .header(header, value)
            .body(&b"x"[..])
            .send()
            .await;
        r.assert_error(400, code);
        let r = c
            .put(&format!("/{name}/existing?comp=metadata"))
            .header(header, value)
            .send()
            .await;
        r.assert_error(400, code);
    }
    let big = "v".repeat(8200);
    let r = c
        .put(&format!("/{name}/existing?comp=metadata"))
        .header("x-ms-meta-big", &big)
        .send()
        .await;
    r.assert_error(400, "MetadataTooLarge");
    c.head(&format!("/{name}/new"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

// ---------------------------------------------------------------------------
// Delete and missing blobs

#[tokio::test]
async fn delete_blob_is_202_and_the_blob_is_gone() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"x").await;
    let r = c.delete(&format!("/{name}/b")).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert!(r.body.is_empty());
    c.get(&format!("/{name}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    c.delete(&format!("/{name}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let xml = c
        .get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert!(xml.contains("<Blobs />"), "{xml}");
}

#[tokio::test]
async fn operations_on_a_missing_blob_are_404_blob_not_found() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let path = format!("/{name}/missing");
    let cases = [
        c.get(&path),
        c.head(&path),
        c.get(&format!("{path}?comp=metadata")),
        c.head(&format!("{path}?comp=metadata")),
        c.put(&format!("{path}?comp=metadata"))
            .header("x-ms-meta-a", "b"),
        c.put(&format!("{path}?comp=properties")),
        c.delete(&path),
        c.get(&path).header("x-ms-range", "bytes=0-1"),
    ];
    for request in cases {
        let r = request.send().await;
        r.assert_error(404, "BlobNotFound");
    }
    // A HEAD error has no body.
    assert!(c.head(&path).send().await.body.is_empty());
}

// ---------------------------------------------------------------------------
// Overwrites and versions

#[tokio::test]
async fn an_overwrite_replaces_content_properties_and_metadata_and_keeps_creation_time() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let first = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/plain")
        .header("x-ms-blob-content-language", "en")
        .header("x-ms-meta-first", "1")
        .body(&b"first version"[..])
        .send()
        .await;
    assert_eq!(first.status, 201);
    server.clock.advance(Duration::from_secs(5));
    let second = c
        .put(&format!("/{name}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-meta-second", "2")
        .body(&b"second"[..])
        .send()
        .await;
    assert_eq!(second.status, 201);
    assert_ne!(second.etag(), first.etag());
    let g = c.get(&format!("/{name}/b")).send().await;
    assert_eq!(&g.body[..], b"second");
    assert_eq!(g.header("content-length").as_deref(), Some("6"));
    assert_eq!(
        g.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
    assert_eq!(g.header("content-language"), None);
    assert_eq!(g.header("content-md5"), Some(md5_b64(b"second")));
    assert_eq!(
        meta_headers(&g),
        [("x-ms-meta-second".to_owned(), "2".to_owned())]
    );
    assert_eq!(
        g.header("x-ms-creation-time").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT"),
        "creation time is kept"
    );
    assert_eq!(
        g.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:12 GMT")
    );
}

#[tokio::test]
async fn a_blob_recreated_after_delete_gets_a_new_creation_time() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"1").await;
    assert_eq!(c.delete(&format!("/{name}/b")).send().await.status, 202);
    server.clock.advance(Duration::from_secs(60));
    c.put_blob(&name, "b", b"2").await;
    let h = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(
        h.header("x-ms-creation-time").as_deref(),
        Some("Tue, 03 Sep 2024 10:16:07 GMT")
    );
}

#[tokio::test]
async fn etag_and_last_modified_change_on_every_write_and_not_on_reads() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let path = format!("/{name}/b");
    let mut seen: Vec<String> = Vec::new();
    let mut modified: Vec<String> = Vec::new();
    let writes: Vec<(&str, stowage_tests::Request)> = vec![
        (
            "put",
            c.put(&path)
                .header("x-ms-blob-type", "BlockBlob")
                .body(&b"1"[..]),
        ),
        (
            "set properties",
            c.put(&format!("{path}?comp=properties"))
                .header("x-ms-blob-content-type", "text/plain"),
        ),
        (
            "set metadata",
            c.put(&format!("{path}?comp=metadata"))
                .header("x-ms-meta-a", "1"),
        ),
        (
            "same metadata again",
            c.put(&format!("{path}?comp=metadata"))
                .header("x-ms-meta-a", "1"),
        ),
        (
            "overwrite with the same bytes",
            c.put(&path)
                .header("x-ms-blob-type", "BlockBlob")
                .body(&b"1"[..]),
        ),
    ];
    for (what, write) in writes {
        server.clock.advance(Duration::from_secs(1));
        let r = write.send().await;
        assert!(r.status == 200 || r.status == 201, "{what}: {}", r.text());
        let etag = r.etag();
        assert!(!seen.contains(&etag), "{what}: ETag {etag} reused");
        let lm = r.header("last-modified").unwrap();
        assert!(!modified.contains(&lm), "{what}: Last-Modified {lm} reused");
        seen.push(etag.clone());
        modified.push(lm.clone());

        // Reads, later, leave both alone.
        server.clock.advance(Duration::from_secs(1));
        let reads = [
            c.get(&path),
            c.head(&path),
            c.get(&format!("{path}?comp=metadata")),
            c.get(&path).header("x-ms-range", "bytes=0-0"),
            c.get(&format!("/{name}?restype=container&comp=list")),
        ];
        for read in reads {
            assert!(read.send().await.status < 300, "{what}");
        }
        let h = c.head(&path).send().await;
        assert_eq!(h.etag(), etag, "after reads following {what}");
        assert_eq!(h.header("last-modified"), Some(lm), "{what}");
    }
}

#[tokio::test]
async fn two_writes_in_the_same_clock_tick_get_different_etags() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let a = c.put_blob(&name, "b", b"1").await.etag();
    let b = c.put_blob(&name, "b", b"2").await.etag();
    let other = c.put_blob(&name, "other", b"1").await.etag();
    assert_ne!(a, b);
    assert_ne!(b, other);
    assert_ne!(a, other);
}

#[tokio::test]
async fn a_write_to_one_blob_leaves_the_others_and_the_container_alone() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let container_etag = c
        .get(&format!("/{name}?restype=container"))
        .send()
        .await
        .etag();
    let other = c.put_blob(&name, "other", b"o").await;
    c.put_blob(&name, "b", b"1").await;
    c.put_blob(&name, "b", b"2").await;
    assert_eq!(
        c.head(&format!("/{name}/other")).send().await.etag(),
        other.etag()
    );
    assert_eq!(
        c.get(&format!("/{name}?restype=container"))
            .send()
            .await
            .etag(),
        container_etag
    );
}

#[tokio::test]
async fn put_blob_to_a_snapshot_url_is_400_invalid_operation() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "b", b"x").await;
    let r = c
        .put(&format!("/{name}/b?snapshot=2024-09-03T10:15:07.0000000Z"))
        .header("x-ms-blob-type", "BlockBlob")
        .body(&b"y"[..])
        .send()
        .await;
    // docs/wire/errors.md#which-check-answers-first: code unverified.
    assert_eq!(r.status, 400, "{}", r.text());
    r.assert_error(400, "InvalidOperation");
}

// ---------------------------------------------------------------------------
// Names on the wire (docs/wire/requests.md#addressing)

#[tokio::test]
async fn a_blob_name_is_percent_decoded_exactly_once_and_plus_is_literal() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    c.put_blob(&name, "x%2525y", b"percent").await;
    c.put_blob(&name, "a+b", b"plus").await;
    c.put_blob(&name, "dir%2Ffile", b"slash").await;
    // (path as sent, expected bytes or None for 404)
    let cases: &[(&str, Option<&[u8]>)] = &[
        ("x%2525y", Some(b"percent")),
        ("x%25y", None),
        ("a+b", Some(b"plus")),
        ("a%2Bb", Some(b"plus")),
        ("a%20b", None),
        ("dir/file", Some(b"slash")),
        ("dir%2Ffile", Some(b"slash")),
    ];
    for (path, expected) in cases {
        let r = c.get(&format!("/{name}/{path}")).send().await;
        match expected {
            Some(bytes) => {
                assert_eq!(r.status, 200, "{path}: {}", r.text());
                assert_eq!(&r.body[..], *bytes, "{path}");
            }
            None => r.assert_error(404, "BlobNotFound"),
        }
    }
    let xml = c
        .get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert_eq!(
        super::listing::texts(&xml, "Name"),
        ["a+b", "dir/file", "x%25y"]
    );
}

#[tokio::test]
async fn blob_metadata_names_keep_their_case_in_headers_and_listings() {
    use super::errors::{date_and_version, raw};
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    let path = format!("/{}/{name}/b", stowage_tests::ACCOUNT);
    let [date, version] = date_and_version(&server);
    let r = raw(
        &server,
        "PUT",
        &path,
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("x-ms-blob-type", "BlockBlob"),
            ("Content-Length", "1"),
            ("x-ms-meta-CamelCase", "v1"),
            ("X-MS-META-UPPER", "v2"),
        ],
        b"x",
        true,
    )
    .await;
    assert_eq!(r.status, 201, "{}\n{}", r.head, r.text());
    for (method, query) in [("GET", ""), ("HEAD", ""), ("GET", "?comp=metadata")] {
        let [date, version] = date_and_version(&server);
        let r = raw(
            &server,
            method,
            &format!("{path}{query}"),
            &[(date.0, &date.1), (version.0, &version.1)],
            b"",
            true,
        )
        .await;
        assert_eq!(r.status, 200, "{method}{query}");
        let lines = r.header_lines();
        assert!(lines.contains(&"x-ms-meta-CamelCase: v1"), "{}", r.head);
        assert!(lines.contains(&"x-ms-meta-UPPER: v2"), "{}", r.head);
    }
    let xml = c
        .get(&format!(
            "/{name}?restype=container&comp=list&include=metadata"
        ))
        .send()
        .await
        .text();
    assert_eq!(super::listing::texts(&xml, "CamelCase"), ["v1"]);
    assert_eq!(super::listing::texts(&xml, "UPPER"), ["v2"]);
}

// ---------------------------------------------------------------------------
// Limits and tiers

#[tokio::test]
async fn a_put_blob_over_the_version_limit_is_413_before_the_body_is_sent() {
    use super::errors::{parse_response, request_head};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    // (x-ms-version, limit in bytes; docs/wire/requests.md#limits)
    let cases = [
        ("2015-02-21", 64u64 * 1024 * 1024),
        ("2019-10-10", 256 * 1024 * 1024),
        ("2019-12-12", 5_242_880_000),
    ];
    for (version, limit) in cases {
        let date = httpdate::fmt_http_date(stowage_blobstore::Clock::now(&*server.clock));
        let length = (limit + 1).to_string();
        let head = request_head(
            &server,
            "PUT",
            &format!("/{}/{name}/big", stowage_tests::ACCOUNT),
            &[
                ("x-ms-date", &date),
                ("x-ms-version", version),
                ("x-ms-blob-type", "BlockBlob"),
                ("Content-Length", &length),
            ],
            true,
        );
        let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        // Not one byte of the body is sent: the answer must not wait for it.
        let mut bytes = Vec::new();
        tokio::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut bytes))
            .await
            .expect("answered without the body")
            .unwrap();
        let r = parse_response(&bytes);
        assert_eq!(r.status, 413, "{version}: {}\n{}", r.head, r.text());
        assert_eq!(
            r.header("x-ms-error-code").as_deref(),
            Some("RequestBodyTooLarge")
        );
        assert_eq!(
            super::listing::texts(&r.text(), "MaxLimit"),
            [limit.to_string()],
            "{version}"
        );
    }
    c.head(&format!("/{name}/big"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn an_explicit_access_tier_is_stored_and_reported_without_inferred() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = setup(&c).await;
    for tier in ["Hot", "Cool", "Cold"] {
        let r = c
            .put(&format!("/{name}/{tier}"))
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-access-tier", tier)
            .body(&b"x"[..])
            .send()
            .await;
        assert_eq!(r.status, 201, "{tier}: {}", r.text());
        let h = c.head(&format!("/{name}/{tier}")).send().await;
        assert_eq!(h.header("x-ms-access-tier").as_deref(), Some(tier));
        assert_eq!(h.header("x-ms-access-tier-inferred"), None, "{tier}");
    }
    let xml = c
        .get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert_eq!(
        super::listing::texts(&xml, "AccessTier"),
        ["Cold", "Cool", "Hot"]
    );
    assert!(super::listing::texts(&xml, "AccessTierInferred").is_empty());
    let r = c
        .put(&format!("/{name}/archive"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-access-tier", "Frozen")
        .body(&b"x"[..])
        .send()
        .await;
    r.assert_error(400, "InvalidHeaderValue");
}
