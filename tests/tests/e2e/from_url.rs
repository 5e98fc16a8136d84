//! Put Block From URL, Append Block From URL and Put Blob From URL with
//! sources on this server: the bytes (ranges included) land as a body
//! would, the source must be readable (a SAS or a public container), and
//! each refusal carries the service's status and code.

use stowage_tests::{ACCOUNT, KEY, Response, TestServer, blob_sas, unique};

use super::blocks::{block_id, block_list_xml, data, elements, md5_b64};

const EXPIRY: &str = "2030-01-01T00:00:00Z";

/// A container holding `src` (private) with `body`, and the URL of that
/// blob with a read SAS.
async fn source(server: &TestServer, body: &[u8]) -> (String, String) {
    let c = unique("fromurl");
    let client = server.client();
    client.create_container(&c).await;
    assert_eq!(client.put_blob(&c, "src", body).await.status, 201);
    let sas = blob_sas(ACCOUNT, KEY, &c, "src", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT}/{c}/src?{sas}", server.base);
    (c, url)
}

async fn put_block_from_url(
    server: &TestServer,
    c: &str,
    n: u32,
    url: &str,
    range: Option<&str>,
) -> Response {
    let mut r = server
        .client()
        .put(&format!("/{c}/dst?comp=block&blockid={}", block_id(n)))
        .header("x-ms-copy-source", url);
    if let Some(range) = range {
        r = r.header("x-ms-source-range", range);
    }
    r.send().await
}

async fn commit(server: &TestServer, c: &str, ids: &[u32]) {
    let ids: Vec<String> = ids.iter().map(|n| block_id(*n)).collect();
    let entries: Vec<(&str, &str)> = ids.iter().map(|id| ("Latest", id.as_str())).collect();
    let r = server
        .client()
        .put(&format!("/{c}/dst?comp=blocklist"))
        .body(block_list_xml(&entries))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
}

async fn read(server: &TestServer, c: &str, blob: &str) -> Response {
    server.client().get(&format!("/{c}/{blob}")).send().await
}

/// Asserts `CannotVerifyCopySource` carrying the source's status and code.
fn assert_source_refused(r: &Response, status: u16, source_code: &str) {
    r.assert_error(status, "CannotVerifyCopySource");
    let text = r.text();
    assert_eq!(
        elements(&text, "CopySourceErrorCode"),
        [source_code],
        "{text}"
    );
}

#[tokio::test]
async fn put_block_from_url_stages_the_source_or_a_range_of_it() {
    let server = TestServer::start().await;
    // Larger than a blob kept inline, so the extents are files.
    let body = data(300_000, 7);
    let (c, url) = source(&server, &body).await;
    let r = put_block_from_url(&server, &c, 1, &url, Some("bytes=0-99999")).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5"), Some(md5_b64(&body[..100_000])));
    assert_eq!(
        r.header("x-ms-request-server-encrypted").as_deref(),
        Some("true")
    );
    assert!(r.header("x-ms-content-crc64").is_some());
    let r = put_block_from_url(&server, &c, 2, &url, Some("bytes=100000-")).await;
    assert_eq!(r.status, 201, "{}", r.text());
    // Without a range: the whole source as one block.
    let r = put_block_from_url(&server, &c, 3, &url, None).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let list = server
        .client()
        .get(&format!(
            "/{c}/dst?comp=blocklist&blocklisttype=uncommitted"
        ))
        .send()
        .await
        .text();
    assert_eq!(
        elements(&list, "Size"),
        ["100000", "200000", "300000"],
        "{list}"
    );
    commit(&server, &c, &[1, 2, 3]).await;
    let r = read(&server, &c, "dst").await;
    assert_eq!(r.status, 200);
    let mut want = body.clone();
    want.extend_from_slice(&body);
    assert_eq!(r.body.len(), want.len());
    assert!(r.body[..] == want[..], "the blob holds the ranges in order");
}

#[tokio::test]
async fn the_source_md5_is_checked_against_the_bytes_copied() {
    let server = TestServer::start().await;
    let (c, url) = source(&server, b"0123456789").await;
    let r = server
        .client()
        .put(&format!("/{c}/dst?comp=block&blockid={}", block_id(1)))
        .header("x-ms-copy-source", &url)
        .header("x-ms-source-range", "bytes=2-5")
        .header("x-ms-source-content-md5", &md5_b64(b"2345"))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5"), Some(md5_b64(b"2345")));
    let r = server
        .client()
        .put(&format!("/{c}/dst?comp=block&blockid={}", block_id(2)))
        .header("x-ms-copy-source", &url)
        .header("x-ms-source-content-md5", &md5_b64(b"not the source"))
        .send()
        .await;
    r.assert_error(400, "Md5Mismatch");
}

#[tokio::test]
async fn unreadable_sources_are_refused_with_the_sources_answer() {
    let server = TestServer::start().await;
    let (c, url) = source(&server, b"0123456789").await;
    // No SAS on a private container's blob, even in the same account.
    let bare = format!("{}/{ACCOUNT}/{c}/src", server.base);
    let r = put_block_from_url(&server, &c, 1, &bare, None).await;
    assert_source_refused(&r, 401, "NoAuthenticationInformation");
    // A SAS without read permission.
    let sas = blob_sas(ACCOUNT, KEY, &c, "src", "w", EXPIRY);
    let write_only = format!("{bare}?{sas}");
    let r = put_block_from_url(&server, &c, 1, &write_only, None).await;
    assert_source_refused(&r, 403, "AuthorizationPermissionMismatch");
    // A missing blob read with a valid SAS.
    let sas = blob_sas(ACCOUNT, KEY, &c, "gone", "r", EXPIRY);
    let missing = format!("{}/{ACCOUNT}/{c}/gone?{sas}", server.base);
    let r = put_block_from_url(&server, &c, 1, &missing, None).await;
    assert_source_refused(&r, 404, "BlobNotFound");
    // A range past the end of the source.
    let r = put_block_from_url(&server, &c, 1, &url, Some("bytes=10-20")).await;
    assert_source_refused(&r, 416, "InvalidRange");
    // A malformed range.
    let r = put_block_from_url(&server, &c, 1, &url, Some("bytes=5-2")).await;
    r.assert_error(400, "InvalidHeaderValue");
    // A source condition that does not hold.
    let r = server
        .client()
        .put(&format!("/{c}/dst?comp=block&blockid={}", block_id(1)))
        .header("x-ms-copy-source", &url)
        .header("x-ms-source-if-match", "\"0x8D000000000000\"")
        .send()
        .await;
    r.assert_error(412, "SourceConditionNotMet");
    // A body beside the source.
    let r = server
        .client()
        .put(&format!("/{c}/dst?comp=block&blockid={}", block_id(1)))
        .header("x-ms-copy-source", &url)
        .body(&b"abc"[..])
        .send()
        .await;
    r.assert_error(400, "InvalidHeaderValue");
    // Nothing was staged by any of them.
    let list = server
        .client()
        .get(&format!("/{c}/dst?comp=blocklist&blocklisttype=all"))
        .send()
        .await;
    list.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn append_block_from_url_appends_under_the_append_conditions() {
    let server = TestServer::start().await;
    let (c, url) = source(&server, b"0123456789").await;
    let client = server.client();
    let r = client
        .put(&format!("/{c}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201);
    let append = |range: &'static str, pos: Option<&'static str>| {
        let mut r = client
            .put(&format!("/{c}/log?comp=appendblock"))
            .header("x-ms-copy-source", &url)
            .header("x-ms-source-range", range);
        if let Some(pos) = pos {
            r = r.header("x-ms-blob-condition-appendpos", pos);
        }
        r.send()
    };
    let r = append("bytes=0-3", None).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-blob-append-offset").as_deref(), Some("0"));
    assert_eq!(
        r.header("x-ms-blob-committed-block-count").as_deref(),
        Some("1")
    );
    let r = append("bytes=8-9", Some("4")).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-blob-append-offset").as_deref(), Some("4"));
    append("bytes=0-0", Some("3"))
        .await
        .assert_error(412, "AppendPositionConditionNotMet");
    assert_eq!(&read(&server, &c, "log").await.body[..], b"012389");
    // A block blob is not an append blob.
    let r = client
        .put(&format!("/{c}/src?comp=appendblock"))
        .header("x-ms-copy-source", &url)
        .send()
        .await;
    r.assert_error(409, "InvalidBlobType");
}

#[tokio::test]
async fn put_blob_from_url_copies_bytes_and_by_default_the_content_properties() {
    let server = TestServer::start().await;
    let c = unique("fromurl");
    let client = server.client();
    client.create_container(&c).await;
    let r = client
        .put(&format!("/{c}/src"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("content-type", "text/csv")
        .header("content-language", "de")
        .header("x-ms-meta-origin", "source")
        .body(&b"a,b\n1,2\n"[..])
        .send()
        .await;
    assert_eq!(r.status, 201);
    let sas = blob_sas(ACCOUNT, KEY, &c, "src", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT}/{c}/src?{sas}", server.base);
    let put = |blob: &'static str| {
        client
            .put(&format!("/{c}/{blob}"))
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-copy-source", &url)
    };
    let r = put("copy").header("x-ms-meta-mine", "yes").send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5"), Some(md5_b64(b"a,b\n1,2\n")));
    let got = read(&server, &c, "copy").await;
    assert_eq!(&got.body[..], b"a,b\n1,2\n");
    assert_eq!(got.header("content-type").as_deref(), Some("text/csv"));
    assert_eq!(got.header("content-language").as_deref(), Some("de"));
    // The request's metadata, never the source's.
    assert_eq!(got.header("x-ms-meta-mine").as_deref(), Some("yes"));
    assert_eq!(got.header("x-ms-meta-origin"), None);
    // Without the source's properties: the defaults, or what was sent.
    let r = put("plain")
        .header("x-ms-copy-source-blob-properties", "false")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let got = read(&server, &c, "plain").await;
    assert_eq!(
        got.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
    assert_eq!(got.header("content-language"), None);
    // Destination conditions: If-None-Match * on an existing blob.
    put("copy")
        .header("if-none-match", "*")
        .send()
        .await
        .assert_error(409, "BlobAlreadyExists");
    // Only block blobs.
    let r = client
        .put(&format!("/{c}/append"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("x-ms-copy-source", &url)
        .send()
        .await;
    r.assert_error(400, "InvalidHeaderValue");
}

#[tokio::test]
async fn an_unreachable_source_on_another_host_is_404() {
    let server = TestServer::start().await;
    let (c, _) = source(&server, b"x").await;
    let r = put_block_from_url(&server, &c, 1, "http://192.0.2.1:9/acct/c/b", None).await;
    r.assert_error(404, "CannotVerifyCopySource");
}
