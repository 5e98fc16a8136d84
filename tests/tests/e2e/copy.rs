//! Copy Blob within this server and Abort Copy Blob (docs/wire/blobs.md#copy-blob, docs/wire/blobs.md#abort-copy-blob; docs/wire/conditions.md#create-only, docs/wire/conditions.md#copy-source-conditions; docs/wire/leases.md#writes-to-a-leased-blob;
//! docs/wire/listing.md#blob-properties-in-a-listing).

use std::time::Duration;

use stowage_blobstore::Clock as _;
use stowage_tests::{ACCOUNT, Client, Response, TestServer, unique};

use super::blocks::{
    LEASE_A, LEASE_B, acquire_lease, blob_entries, block_id, data, elements, enc, extent_bytes,
    extent_files, list, stage,
};

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("copy");
    c.create_container(&name).await;
    (c, name)
}

/// The URL of blob `blob` in `container` on this server.
fn source_url(server: &TestServer, container: &str, blob: &str) -> String {
    format!("{}/{ACCOUNT}/{container}/{blob}", server.base)
}

/// Copy Blob to `/container/blob` from `source` with extra headers; the
/// response unchecked.
async fn copy_with(
    c: &Client,
    container: &str,
    blob: &str,
    source: &str,
    headers: &[(&str, &str)],
) -> Response {
    let mut request = c
        .put(&format!("/{container}/{blob}"))
        .header("x-ms-copy-source", source);
    for (n, v) in headers {
        request = request.header(n, v);
    }
    request.send().await
}

/// Copy Blob; asserts 202 and returns the response.
async fn copy(c: &Client, container: &str, blob: &str, source: &str) -> Response {
    let r = copy_with(c, container, blob, source, &[]).await;
    assert_eq!(r.status, 202, "copy blob: {}", r.text());
    r
}

fn is_lower_uuid(s: &str) -> bool {
    let groups: Vec<usize> = s.split('-').map(str::len).collect();
    groups == [8, 4, 4, 4, 12]
        && s.chars()
            .all(|ch| ch == '-' || ch.is_ascii_digit() || ('a'..='f').contains(&ch))
}

/// Puts `blob` with content properties and metadata; returns the response.
async fn put_source(c: &Client, container: &str, blob: &str, body: &[u8]) -> Response {
    let r = c
        .put(&format!("/{container}/{blob}"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/csv")
        .header("x-ms-blob-content-language", "de")
        .header("x-ms-blob-cache-control", "max-age=60")
        .header("x-ms-blob-content-disposition", "inline")
        .header("x-ms-blob-content-encoding", "identity")
        .header("x-ms-meta-source", "yes")
        .header("x-ms-meta-kind", "csv")
        .body(body.to_vec())
        .send()
        .await;
    assert_eq!(r.status, 201, "put source: {}", r.text());
    r
}

async fn get_bytes(c: &Client, path: &str) -> Vec<u8> {
    let r = c.get(path).send().await;
    assert_eq!(r.status, 200, "get {path}: {}", r.text());
    r.body.to_vec()
}

#[tokio::test]
async fn copy_blob_within_the_account_completes_at_once() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let body = b"a,b,c\n1,2,3\n";
    let src = put_source(&c, &ctr, "src.csv", body).await;
    server.clock.advance(Duration::from_secs(5));
    let url = source_url(&server, &ctr, "src.csv");
    let r = copy(&c, &ctr, "dst.csv", &url).await;
    assert!(r.body.is_empty());
    let copy_id = r.header("x-ms-copy-id").expect("x-ms-copy-id");
    assert!(is_lower_uuid(&copy_id), "{copy_id}");
    assert_eq!(r.header("x-ms-copy-status").as_deref(), Some("success"));
    assert!(r.header("etag").is_some());
    assert_ne!(r.etag(), src.etag());
    let now = httpdate::fmt_http_date(server.clock.now());
    assert_eq!(r.header("last-modified"), Some(now.clone()));

    let get = c.get(&format!("/{ctr}/dst.csv")).send().await;
    assert_eq!(get.status, 200);
    assert_eq!(&get.body[..], body);
    assert_eq!(get.etag(), r.etag());
    let head = c.head(&format!("/{ctr}/dst.csv")).send().await;
    for response in [&get, &head] {
        for (name, value) in [
            ("content-type", "text/csv"),
            ("content-language", "de"),
            ("cache-control", "max-age=60"),
            ("content-disposition", "inline"),
            ("content-encoding", "identity"),
            ("x-ms-meta-source", "yes"),
            ("x-ms-meta-kind", "csv"),
            ("x-ms-blob-type", "BlockBlob"),
            ("x-ms-copy-id", copy_id.as_str()),
            ("x-ms-copy-status", "success"),
            ("x-ms-copy-source", url.as_str()),
            ("x-ms-copy-progress", "12/12"),
            ("x-ms-copy-completion-time", now.as_str()),
            ("x-ms-creation-time", now.as_str()),
        ] {
            assert_eq!(response.header(name).as_deref(), Some(value), "{name}");
        }
    }
    // The stored MD5 of the source travels with the content.
    assert_eq!(head.header("content-md5"), src.header("content-md5"));
    assert_eq!(head.header("content-length").as_deref(), Some("12"));

    // The source is untouched and has no copy properties.
    let source = c.head(&format!("/{ctr}/src.csv")).send().await;
    assert_eq!(source.etag(), src.etag());
    assert_eq!(source.header("x-ms-copy-id"), None);
}

#[tokio::test]
async fn list_blobs_include_copy_shows_the_copy_properties() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "a-src", b"12345").await;
    let url = source_url(&server, &ctr, "a-src");
    let r = copy(&c, &ctr, "b-dst", &url).await;
    let copy_id = r.header("x-ms-copy-id").expect("copy id");

    let entries = blob_entries(&list(&c, &ctr, "&include=copy").await);
    assert_eq!(entries.len(), 2);
    let (name, _, src) = &entries[0];
    assert_eq!(name, "a-src");
    assert!(!src.contains("<CopyId>"), "{src}");
    let (name, _, dst) = &entries[1];
    assert_eq!(name, "b-dst");
    assert_eq!(elements(dst, "CopyId"), [copy_id.as_str()]);
    assert_eq!(elements(dst, "CopyStatus"), ["success"]);
    assert_eq!(elements(dst, "CopySource"), [url.as_str()]);
    assert_eq!(elements(dst, "CopyProgress"), ["5/5"]);
    assert_eq!(
        elements(dst, "CopyCompletionTime"),
        [httpdate::fmt_http_date(server.clock.now())]
    );
    assert!(!dst.contains("CopyStatusDescription"), "{dst}");

    let plain = list(&c, &ctr, "").await;
    assert!(!plain.contains("<CopyId>"), "{plain}");
}

#[tokio::test]
async fn copy_blob_with_metadata_gives_the_destination_exactly_that_metadata() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    put_source(&c, &ctr, "src", b"content").await;
    let r = copy_with(
        &c,
        &ctr,
        "dst",
        &source_url(&server, &ctr, "src"),
        &[("x-ms-meta-only", "this")],
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let head = c.head(&format!("/{ctr}/dst")).send().await;
    assert_eq!(head.header("x-ms-meta-only").as_deref(), Some("this"));
    assert_eq!(head.header("x-ms-meta-source"), None);
    assert_eq!(head.header("x-ms-meta-kind"), None);
    // The content properties still come from the source.
    assert_eq!(head.header("content-type").as_deref(), Some("text/csv"));
}

#[tokio::test]
async fn copy_blob_across_containers_and_onto_itself() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let other = unique("copy-dst");
    c.create_container(&other).await;
    c.put_blob(&ctr, "src", b"across").await;
    copy(&c, &other, "dst", &source_url(&server, &ctr, "src")).await;
    assert_eq!(get_bytes(&c, &format!("/{other}/dst")).await, b"across");

    // Onto itself: allowed; rewrites metadata and discards uncommitted blocks.
    stage(&c, &ctr, "src", &block_id(1), b"staged").await;
    let r = copy_with(
        &c,
        &ctr,
        "src",
        &source_url(&server, &ctr, "src"),
        &[("x-ms-meta-again", "1")],
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let head = c.head(&format!("/{ctr}/src")).send().await;
    assert_eq!(head.header("x-ms-meta-again").as_deref(), Some("1"));
    assert_eq!(get_bytes(&c, &format!("/{ctr}/src")).await, b"across");
    let blocks = c
        .get(&format!(
            "/{ctr}/src?comp=blocklist&blocklisttype=uncommitted"
        ))
        .send()
        .await;
    assert!(
        blocks.text().contains("<UncommittedBlocks />"),
        "{}",
        blocks.text()
    );
}

#[tokio::test]
async fn copy_blob_discards_the_destinations_uncommitted_blocks_and_keeps_its_snapshots() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"new").await;
    c.put_blob(&ctr, "dst", b"old").await;
    let snap = c.put(&format!("/{ctr}/dst?comp=snapshot")).send().await;
    assert_eq!(snap.status, 201);
    let snap_id = snap.header("x-ms-snapshot").expect("snapshot id");
    stage(&c, &ctr, "dst", &block_id(1), b"staged").await;
    copy(&c, &ctr, "dst", &source_url(&server, &ctr, "src")).await;
    let blocks = c
        .get(&format!(
            "/{ctr}/dst?comp=blocklist&blocklisttype=uncommitted"
        ))
        .send()
        .await;
    assert!(
        blocks.text().contains("<UncommittedBlocks />"),
        "{}",
        blocks.text()
    );
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"new");
    assert_eq!(
        get_bytes(&c, &format!("/{ctr}/dst?snapshot={}", enc(&snap_id))).await,
        b"old"
    );
}

#[tokio::test]
async fn copy_blob_of_an_append_blob_makes_an_append_blob() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201);
    for line in ["one\n", "two\n"] {
        let r = c
            .put(&format!("/{ctr}/log?comp=appendblock"))
            .body(line)
            .send()
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    copy(&c, &ctr, "log-copy", &source_url(&server, &ctr, "log")).await;
    let head = c.head(&format!("/{ctr}/log-copy")).send().await;
    assert_eq!(head.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
    assert_eq!(
        head.header("x-ms-blob-committed-block-count").as_deref(),
        Some("2")
    );
    // The copy is an append blob of its own.
    let r = c
        .put(&format!("/{ctr}/log-copy?comp=appendblock"))
        .body("three\n")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        get_bytes(&c, &format!("/{ctr}/log-copy")).await,
        b"one\ntwo\nthree\n"
    );
    assert_eq!(get_bytes(&c, &format!("/{ctr}/log")).await, b"one\ntwo\n");
    // Over a block blob it is refused.
    c.put_blob(&ctr, "block", b"x").await;
    copy_with(&c, &ctr, "block", &source_url(&server, &ctr, "log"), &[])
        .await
        .assert_error(409, "InvalidBlobType");
}

#[tokio::test]
async fn copying_a_snapshot_over_its_base_promotes_it() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"the good version").await;
    let snap = c.put(&format!("/{ctr}/b?comp=snapshot")).send().await;
    assert_eq!(snap.status, 201);
    let id = snap.header("x-ms-snapshot").expect("snapshot id");
    server.clock.advance(Duration::from_secs(1));
    c.put_blob(&ctr, "b", b"a bad overwrite").await;

    let url = format!("{}?snapshot={}", source_url(&server, &ctr, "b"), enc(&id));
    let r = copy(&c, &ctr, "b", &url).await;
    assert_eq!(
        get_bytes(&c, &format!("/{ctr}/b")).await,
        b"the good version"
    );
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.header("x-ms-copy-source"), Some(url));
    assert_eq!(head.etag(), r.etag());
    // The snapshot is still there.
    assert_eq!(
        get_bytes(&c, &format!("/{ctr}/b?snapshot={}", enc(&id))).await,
        b"the good version"
    );
}

#[tokio::test]
async fn copy_from_a_missing_source_of_the_same_account_is_404_as_a_read_of_it() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"x").await;
    stage(&c, &ctr, "pending", &block_id(1), b"x").await;
    let sources = [
        (
            "missing blob",
            source_url(&server, &ctr, "missing"),
            404,
            "BlobNotFound",
        ),
        (
            "missing container",
            source_url(&server, &unique("nosuch"), "b"),
            404,
            "ContainerNotFound",
        ),
        (
            "uncommitted only",
            source_url(&server, &ctr, "pending"),
            404,
            "BlobNotFound",
        ),
        (
            "missing snapshot",
            format!(
                "{}?snapshot={}",
                source_url(&server, &ctr, "b"),
                enc("2024-09-03T10:15:07.0000000Z")
            ),
            404,
            "BlobNotFound",
        ),
    ];
    for (what, url, status, code) in sources {
        let r = copy_with(&c, &ctr, "dst", &url, &[]).await;
        assert_eq!(r.code().as_deref(), Some(code), "{what}");
        r.assert_error(status, code);
    }
    c.head(&format!("/{ctr}/dst"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn copy_from_an_unreachable_host_is_404_cannot_verify_copy_source() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"x").await;
    let other_port = if server.addr().port() == 65535 {
        1
    } else {
        server.addr().port() + 1
    };
    let sources = [
        format!("http://example.invalid/{ACCOUNT}/{ctr}/b"),
        format!("https://other.blob.core.windows.net/acct/{ctr}/b"),
        format!("http://127.0.0.1:{other_port}/{ACCOUNT}/{ctr}/b"),
    ];
    for url in sources {
        let r = copy_with(&c, &ctr, "dst", &url, &[]).await;
        assert_eq!(r.code().as_deref(), Some("CannotVerifyCopySource"), "{url}");
        r.assert_error(404, "CannotVerifyCopySource");
    }
}

#[tokio::test]
async fn copy_from_localhost_with_this_port_is_this_server() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"local").await;
    let url = format!(
        "http://localhost:{}/{ACCOUNT}/{ctr}/b",
        server.addr().port()
    );
    copy(&c, &ctr, "dst", &url).await;
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"local");
}

#[tokio::test]
async fn an_unparseable_copy_source_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let port = server.addr().port();
    let sources = [
        "not a url".to_owned(),
        format!("ftp://127.0.0.1:{port}/{ACCOUNT}/{ctr}/b"),
        format!("http://127.0.0.1:{port}/{ACCOUNT}/{ctr}"),
        "http://127.0.0.1:notaport/a/c/b".to_owned(),
    ];
    for url in sources {
        let r = copy_with(&c, &ctr, "dst", &url, &[]).await;
        assert_eq!(r.code().as_deref(), Some("InvalidHeaderValue"), "{url}");
        r.assert_error(400, "InvalidHeaderValue");
        assert!(
            r.text()
                .contains("<HeaderName>x-ms-copy-source</HeaderName>"),
            "{url}: {}",
            r.text()
        );
    }
}

#[tokio::test]
async fn failed_source_conditions_are_412_source_condition_not_met() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let src = c.put_blob(&ctr, "src", b"content").await;
    let etag = src.etag();
    let modified = src.header("last-modified").expect("last-modified");
    let before = httpdate::fmt_http_date(server.clock.now() - Duration::from_secs(60));
    let after = httpdate::fmt_http_date(server.clock.now() + Duration::from_secs(60));
    server.clock.advance(Duration::from_secs(120));
    let url = source_url(&server, &ctr, "src");
    // docs/wire/conditions.md#copy-source-conditions: Stowage answers SourceConditionNotMet.
    let failing = [
        ("x-ms-source-if-match", "\"0x0000000000000001\"".to_owned()),
        ("x-ms-source-if-none-match", etag.clone()),
        ("x-ms-source-if-none-match", "*".to_owned()),
        ("x-ms-source-if-modified-since", modified.clone()),
        ("x-ms-source-if-modified-since", after.clone()),
        ("x-ms-source-if-unmodified-since", before.clone()),
    ];
    for (name, value) in &failing {
        let r = copy_with(&c, &ctr, "dst", &url, &[(name, value)]).await;
        assert_eq!(
            (r.status, r.code().as_deref()),
            (412, Some("SourceConditionNotMet")),
            "{name}: {value}"
        );
        r.assert_error(412, "SourceConditionNotMet");
    }
    c.head(&format!("/{ctr}/dst"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let passing = [
        ("x-ms-source-if-match", etag.clone()),
        ("x-ms-source-if-match", "*".to_owned()),
        (
            "x-ms-source-if-none-match",
            "\"0x0000000000000001\"".to_owned(),
        ),
        ("x-ms-source-if-modified-since", before),
        ("x-ms-source-if-unmodified-since", modified),
        ("x-ms-source-if-unmodified-since", after),
    ];
    for (name, value) in &passing {
        let r = copy_with(&c, &ctr, "dst", &url, &[(name, value)]).await;
        assert_eq!(r.status, 202, "{name}: {value}: {}", r.text());
    }
}

#[tokio::test]
async fn source_conditions_are_checked_before_destination_conditions() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"new").await;
    c.put_blob(&ctr, "dst", b"old").await;
    let r = copy_with(
        &c,
        &ctr,
        "dst",
        &source_url(&server, &ctr, "src"),
        &[
            ("x-ms-source-if-match", "\"0x0000000000000001\""),
            ("if-match", "\"0x0000000000000001\""),
        ],
    )
    .await;
    r.assert_error(412, "SourceConditionNotMet");
}

#[tokio::test]
async fn copy_blob_addressed_to_a_snapshot_is_400_invalid_operation() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"new").await;
    c.put_blob(&ctr, "dst", b"old").await;
    let snap = c.put(&format!("/{ctr}/dst?comp=snapshot")).send().await;
    let id = snap.header("x-ms-snapshot").expect("snapshot id");
    let r = c
        .put(&format!("/{ctr}/dst?snapshot={}", enc(&id)))
        .header("x-ms-copy-source", &source_url(&server, &ctr, "src"))
        .send()
        .await;
    r.assert_error(400, "InvalidOperation");
}

#[tokio::test]
async fn a_copy_source_over_2_kib_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let long = format!("{}?{}", source_url(&server, &ctr, "src"), "a".repeat(2048));
    let r = copy_with(&c, &ctr, "dst", &long, &[]).await;
    r.assert_error(400, "InvalidHeaderValue");
}

#[tokio::test]
async fn copy_over_an_existing_blob_keeps_its_creation_time() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "dst", b"old").await;
    let created = httpdate::fmt_http_date(server.clock.now());
    server.clock.advance(Duration::from_secs(10));
    c.put_blob(&ctr, "src", b"new").await;
    copy(&c, &ctr, "dst", &source_url(&server, &ctr, "src")).await;
    let head = c.head(&format!("/{ctr}/dst")).send().await;
    assert_eq!(head.header("x-ms-creation-time"), Some(created));
    assert_eq!(
        head.header("last-modified"),
        Some(httpdate::fmt_http_date(server.clock.now()))
    );
}

#[tokio::test]
async fn destination_if_none_match_star_on_an_existing_blob_is_409_blob_already_exists() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"new").await;
    let dst = c.put_blob(&ctr, "dst", b"old").await;
    let url = source_url(&server, &ctr, "src");
    copy_with(&c, &ctr, "dst", &url, &[("if-none-match", "*")])
        .await
        .assert_error(409, "BlobAlreadyExists");
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"old");
    // A destination that does not exist yet is created.
    let r = copy_with(&c, &ctr, "fresh", &url, &[("if-none-match", "*")]).await;
    assert_eq!(r.status, 202, "{}", r.text());
    // Other destination conditions are checked against the destination.
    copy_with(
        &c,
        &ctr,
        "dst",
        &url,
        &[("if-match", "\"0x0000000000000001\"")],
    )
    .await
    .assert_error(412, "ConditionNotMet");
    let r = copy_with(&c, &ctr, "dst", &url, &[("if-match", &dst.etag())]).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"new");
}

#[tokio::test]
async fn a_leased_destination_needs_its_lease_id() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"new").await;
    c.put_blob(&ctr, "dst", b"old").await;
    acquire_lease(&c, &format!("/{ctr}/dst"), LEASE_A, -1).await;
    let url = source_url(&server, &ctr, "src");
    copy_with(&c, &ctr, "dst", &url, &[])
        .await
        .assert_error(412, "LeaseIdMissing");
    copy_with(&c, &ctr, "dst", &url, &[("x-ms-lease-id", LEASE_B)])
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"old");
    let r = copy_with(&c, &ctr, "dst", &url, &[("x-ms-lease-id", LEASE_A)]).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"new");
    // The lease is kept.
    let head = c.head(&format!("/{ctr}/dst")).send().await;
    assert_eq!(head.header("x-ms-lease-state").as_deref(), Some("leased"));
    assert_eq!(
        head.header("x-ms-lease-duration").as_deref(),
        Some("infinite")
    );

    // A lease id for a destination that does not exist.
    copy_with(&c, &ctr, "absent", &url, &[("x-ms-lease-id", LEASE_A)])
        .await
        .assert_error(412, "LeaseNotPresentWithBlobOperation");
}

#[tokio::test]
async fn a_destination_with_a_fixed_lease_is_412_infinite_lease_duration_required() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"new").await;
    c.put_blob(&ctr, "dst", b"old").await;
    acquire_lease(&c, &format!("/{ctr}/dst"), LEASE_A, 30).await;
    let url = source_url(&server, &ctr, "src");
    copy_with(&c, &ctr, "dst", &url, &[("x-ms-lease-id", LEASE_A)])
        .await
        .assert_error(412, "InfiniteLeaseDurationRequired");
    copy_with(&c, &ctr, "dst", &url, &[])
        .await
        .assert_error(412, "LeaseIdMissing");
    assert_eq!(get_bytes(&c, &format!("/{ctr}/dst")).await, b"old");
    // Once the fixed lease has expired the copy needs no lease id.
    server.clock.advance(Duration::from_secs(31));
    let r = copy_with(&c, &ctr, "dst", &url, &[]).await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn a_leased_source_needs_no_lease_id() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"leased source").await;
    acquire_lease(&c, &format!("/{ctr}/src"), LEASE_A, -1).await;
    copy(&c, &ctr, "dst", &source_url(&server, &ctr, "src")).await;
    assert_eq!(
        get_bytes(&c, &format!("/{ctr}/dst")).await,
        b"leased source"
    );
}

#[tokio::test]
async fn set_blob_properties_put_blob_and_put_block_list_remove_the_copy_properties() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"x").await;
    let url = source_url(&server, &ctr, "src");
    let destinations = ["by-properties", "by-put", "by-block-list"];
    for dst in destinations {
        copy(&c, &ctr, dst, &url).await;
        let head = c.head(&format!("/{ctr}/{dst}")).send().await;
        assert!(head.header("x-ms-copy-id").is_some());
    }
    let r = c
        .put(&format!("/{ctr}/by-properties?comp=properties"))
        .header("x-ms-blob-content-type", "text/plain")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    c.put_blob(&ctr, "by-put", b"y").await;
    let r = c
        .put(&format!("/{ctr}/by-block-list?comp=blocklist"))
        .body("<BlockList />")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    for dst in destinations {
        let head = c.head(&format!("/{ctr}/{dst}")).send().await;
        for name in [
            "x-ms-copy-id",
            "x-ms-copy-status",
            "x-ms-copy-source",
            "x-ms-copy-progress",
            "x-ms-copy-completion-time",
        ] {
            assert_eq!(head.header(name), None, "{dst}: {name}");
        }
    }
    let listing = list(&c, &ctr, "&include=copy").await;
    assert_eq!(elements(&listing, "CopyId").len(), 0, "{listing}");
}

#[tokio::test]
async fn abort_copy_blob_is_409_no_pending_copy_operation() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "src", b"x").await;
    let r = copy(&c, &ctr, "dst", &source_url(&server, &ctr, "src")).await;
    let copy_id = r.header("x-ms-copy-id").expect("copy id");
    let abort = |path: String| c.put(&path).header("x-ms-copy-action", "abort");

    abort(format!("/{ctr}/dst?comp=copy&copyid={copy_id}"))
        .send()
        .await
        .assert_error(409, "NoPendingCopyOperation");
    let r = abort(format!("/{ctr}/dst?comp=copy")).send().await;
    r.assert_error(400, "MissingRequiredQueryParameter");
    assert!(
        r.text()
            .contains("<QueryParameterName>copyid</QueryParameterName>"),
        "{}",
        r.text()
    );
    c.put(&format!("/{ctr}/dst?comp=copy&copyid={copy_id}"))
        .send()
        .await
        .assert_error(400, "MissingRequiredHeader");
    c.put(&format!("/{ctr}/dst?comp=copy&copyid={copy_id}"))
        .header("x-ms-copy-action", "pause")
        .send()
        .await
        .assert_error(400, "InvalidHeaderValue");
    abort(format!("/{ctr}/missing?comp=copy&copyid={copy_id}"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");

    // The destination is unchanged.
    let head = c.head(&format!("/{ctr}/dst")).send().await;
    assert_eq!(head.header("x-ms-copy-status").as_deref(), Some("success"));
}

#[tokio::test]
async fn copying_shares_extents_with_the_source() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let content = data(512 * 1024, 3);
    c.put_blob(&ctr, "src", &content).await;
    let files = extent_files(&server);
    let bytes = extent_bytes(&server);
    assert_eq!(files.len(), 1);
    let url = source_url(&server, &ctr, "src");
    for i in 0..3 {
        copy(&c, &ctr, &format!("dst-{i}"), &url).await;
    }
    assert_eq!(extent_files(&server), files, "copies wrote no extent");
    assert_eq!(extent_bytes(&server), bytes);
    // Overwriting and deleting the source leaves the copies intact.
    c.put_blob(&ctr, "src", b"replaced").await;
    let r = c.delete(&format!("/{ctr}/src")).send().await;
    assert_eq!(r.status, 202);
    server.clock.advance(Duration::from_secs(31));
    while server.store.collect_garbage().await.expect("gc") > 0 {}
    assert_eq!(extent_files(&server), files);
    for i in 0..3 {
        let got = get_bytes(&c, &format!("/{ctr}/dst-{i}")).await;
        assert!(got == content, "dst-{i}");
    }
}
