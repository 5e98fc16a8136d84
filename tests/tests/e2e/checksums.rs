//! CRC64 (`x-ms-content-crc64`, CRC-64/NVME) on Put Blob, Put Block,
//! Put Block List and Append Block, and `x-ms-range-get-content-crc64` on
//! ranged reads.

use base64::Engine as _;
use stowage_blobstore::Crc64;
use stowage_tests::{Client, Response, TestServer, unique};

use super::blocks::md5_b64;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn crc64_b64(data: &[u8]) -> String {
    b64(&Crc64::to_bytes(Crc64::of(data)))
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("crc");
    c.create_container(&name).await;
    (c, name)
}

/// A PUT of `body` at `path` with `headers`.
async fn put(c: &Client, path: &str, body: &[u8], headers: &[(&str, &str)]) -> Response {
    let mut r = c.put(path).body(body.to_vec());
    for (n, v) in headers {
        r = r.header(n, v);
    }
    r.send().await
}

const BLOCK: (&str, &str) = ("x-ms-blob-type", "BlockBlob");

/// `400 Crc64Mismatch` whose body names both CRCs as the service's does:
/// `UserSpecifiedCrc` (what was sent) and `ServerCalculatedCrc` (of
/// `body`), each as the header encodes it.
fn assert_crc64_mismatch(r: &Response, sent: &str, body: &[u8]) {
    r.assert_error(400, "Crc64Mismatch");
    let text = r.text();
    assert!(
        text.contains(&format!("<UserSpecifiedCrc>{sent}</UserSpecifiedCrc>")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "<ServerCalculatedCrc>{}</ServerCalculatedCrc>",
            crc64_b64(body)
        )),
        "{text}"
    );
}

#[tokio::test]
async fn the_crc_is_the_azure_sdks_crc64() {
    // "Hello World!" is 208604604655264165 in the Azure Storage SDKs' tests.
    assert_eq!(
        crc64_b64(b"Hello World!"),
        b64(&208_604_604_655_264_165u64.to_le_bytes())
    );
}

#[tokio::test]
async fn put_blob_validates_and_returns_crc64() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let data = pattern(100_000);
    let good = crc64_b64(&data);
    let r = put(
        &c,
        &format!("/{ctr}/ok"),
        &data,
        &[BLOCK, ("x-ms-content-crc64", &good)],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-content-crc64"), Some(good.clone()));
    assert_eq!(r.header("content-md5"), Some(md5_b64(&data)));
    // Not sent: returned all the same, with the MD5.
    let r = put(&c, &format!("/{ctr}/plain"), b"abc", &[BLOCK]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-content-crc64"), Some(crc64_b64(b"abc")));
    assert_eq!(r.header("content-md5"), Some(md5_b64(b"abc")));
    // A wrong CRC stores nothing.
    let bad = crc64_b64(b"other");
    for body in [&b"small"[..], &data[..]] {
        let r = put(
            &c,
            &format!("/{ctr}/bad"),
            body,
            &[BLOCK, ("x-ms-content-crc64", &bad)],
        )
        .await;
        assert_crc64_mismatch(&r, &bad, body);
    }
    let r = c.head(&format!("/{ctr}/bad")).send().await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn malformed_and_conflicting_crc64_headers_are_refused() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let path = format!("/{ctr}/b");
    // Seven bytes, not base64: InvalidHeaderValue naming the header.
    for value in ["AQIDBAUGBw==", "%%%"] {
        let r = put(&c, &path, b"abc", &[BLOCK, ("x-ms-content-crc64", value)]).await;
        r.assert_error(400, "InvalidHeaderValue");
        assert!(
            r.text()
                .contains("<HeaderName>x-ms-content-crc64</HeaderName>"),
            "{}",
            r.text()
        );
    }
    // Nine bytes: no CRC matches.
    let r = put(
        &c,
        &path,
        b"abc",
        &[BLOCK, ("x-ms-content-crc64", "AQIDBAUGBwgJ")],
    )
    .await;
    r.assert_error(400, "Crc64Mismatch");
    // Both checksums, even right ones.
    let both = [
        BLOCK,
        ("content-md5", &md5_b64(b"abc")),
        ("x-ms-content-crc64", &crc64_b64(b"abc")),
    ];
    let r = put(&c, &path, b"abc", &both).await;
    r.assert_error(400, "BothCrc64AndMd5HeaderPresent");
    let r = put(
        &c,
        &format!("{path}?comp=block&blockid=YQ=="),
        b"abc",
        &both[1..],
    )
    .await;
    r.assert_error(400, "BothCrc64AndMd5HeaderPresent");
    assert_eq!(c.head(&path).send().await.status, 404);
}

#[tokio::test]
async fn put_block_answers_with_one_checksum_by_what_was_sent() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let data = pattern(300_000);
    let path = format!("/{ctr}/b?comp=block&blockid=");
    // Nothing sent: the CRC64, no MD5.
    let r = put(&c, &format!("{path}YQ=="), &data, &[]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-content-crc64"), Some(crc64_b64(&data)));
    assert_eq!(r.header("content-md5"), None);
    // A CRC64 sent and right.
    let r = put(
        &c,
        &format!("{path}Yg=="),
        &data,
        &[("x-ms-content-crc64", &crc64_b64(&data))],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-content-crc64"), Some(crc64_b64(&data)));
    // An MD5 sent: the MD5 only.
    let r = put(
        &c,
        &format!("{path}Yw=="),
        &data,
        &[("content-md5", &md5_b64(&data))],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5"), Some(md5_b64(&data)));
    assert_eq!(r.header("x-ms-content-crc64"), None);
    // Versions from 2026-10-06 answer with both.
    let r = c
        .put(&format!("{path}ZA=="))
        .without("x-ms-version")
        .header("x-ms-version", "2026-10-06")
        .header("content-md5", &md5_b64(&data))
        .body(data.clone())
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("content-md5"), Some(md5_b64(&data)));
    assert_eq!(r.header("x-ms-content-crc64"), Some(crc64_b64(&data)));
    // A wrong CRC stages nothing.
    let r = put(
        &c,
        &format!("{path}ZQ=="),
        &data,
        &[("x-ms-content-crc64", &crc64_b64(b"x"))],
    )
    .await;
    assert_crc64_mismatch(&r, &crc64_b64(b"x"), &data);
    let r = c
        .get(&format!(
            "/{ctr}/b?comp=blocklist&blocklisttype=uncommitted"
        ))
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.text().contains("<Name>ZA==</Name>") && !r.text().contains("ZQ=="),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn put_block_list_checks_the_crc64_of_its_body() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = put(
        &c,
        &format!("/{ctr}/b?comp=block&blockid=YQ=="),
        b"abc",
        &[],
    )
    .await;
    assert_eq!(r.status, 201);
    let list =
        b"<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><Latest>YQ==</Latest></BlockList>";
    let path = format!("/{ctr}/b?comp=blocklist");
    let r = put(
        &c,
        &path,
        list,
        &[("x-ms-content-crc64", &crc64_b64(b"nope"))],
    )
    .await;
    assert_crc64_mismatch(&r, &crc64_b64(b"nope"), list);
    let r = put(&c, &path, list, &[("x-ms-content-crc64", &crc64_b64(list))]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-content-crc64"), Some(crc64_b64(list)));
    assert_eq!(r.header("content-md5"), Some(md5_b64(list)));
}

#[tokio::test]
async fn append_block_validates_and_returns_crc64() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = put(
        &c,
        &format!("/{ctr}/log"),
        b"",
        &[("x-ms-blob-type", "AppendBlob")],
    )
    .await;
    assert_eq!(r.status, 201);
    let path = format!("/{ctr}/log?comp=appendblock");
    let r = put(&c, &path, b"one", &[]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-content-crc64"), Some(crc64_b64(b"one")));
    assert_eq!(r.header("content-md5"), None);
    let r = put(
        &c,
        &path,
        b"two",
        &[("x-ms-content-crc64", &crc64_b64(b"one"))],
    )
    .await;
    assert_crc64_mismatch(&r, &crc64_b64(b"one"), b"two");
    let r = put(
        &c,
        &path,
        b"two",
        &[("x-ms-content-crc64", &crc64_b64(b"two"))],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-blob-append-offset").as_deref(), Some("3"));
    let r = c.get(&format!("/{ctr}/log")).send().await;
    assert_eq!(&r.body[..], b"onetwo");
}

#[tokio::test]
async fn range_get_content_crc64_answers_the_ranges_crc() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let data = pattern(4 * 1024 * 1024 + 10);
    let r = put(&c, &format!("/{ctr}/big"), &data, &[BLOCK]).await;
    assert_eq!(r.status, 201);
    let get = |range: Option<&'static str>, headers: Vec<(&'static str, &'static str)>| {
        let mut r = c.get(&format!("/{ctr}/big"));
        if let Some(range) = range {
            r = r.header("x-ms-range", range);
        }
        for (n, v) in headers {
            r = r.header(n, v);
        }
        r.send()
    };
    let r = get(
        Some("bytes=100-199"),
        vec![("x-ms-range-get-content-crc64", "true")],
    )
    .await;
    assert_eq!(r.status, 206, "{}", r.text());
    assert_eq!(&r.body[..], &data[100..200]);
    assert_eq!(
        r.header("x-ms-content-crc64"),
        Some(crc64_b64(&data[100..200]))
    );
    assert_eq!(r.header("content-md5"), None);
    // Exactly 4 MiB is allowed; one byte more, or no range, is not.
    let r = get(
        Some("bytes=0-4194303"),
        vec![("x-ms-range-get-content-crc64", "true")],
    )
    .await;
    assert_eq!(r.status, 206);
    assert_eq!(
        r.header("x-ms-content-crc64"),
        Some(crc64_b64(&data[..4 * 1024 * 1024]))
    );
    for range in [Some("bytes=0-4194304"), None] {
        let r = get(range, vec![("x-ms-range-get-content-crc64", "true")]).await;
        r.assert_error(400, "InvalidHeaderValue");
        assert!(
            r.text().contains("x-ms-range-get-content-crc64"),
            "{}",
            r.text()
        );
    }
    // Both flags at once.
    let r = get(
        Some("bytes=0-9"),
        vec![
            ("x-ms-range-get-content-crc64", "true"),
            ("x-ms-range-get-content-md5", "true"),
        ],
    )
    .await;
    r.assert_error(400, "BothCrc64AndMd5RangeHeaderPresent");
}

/// The header checks of Put Blob hold on Put Block and Append Block too: a
/// value that is not eight bytes of base64 is `400 InvalidHeaderValue`
/// naming the header, nine bytes match no CRC (`400 Crc64Mismatch`), and
/// both checksums at once are `400 BothCrc64AndMd5HeaderPresent`; nothing
/// is staged or appended.
#[tokio::test]
async fn crc64_header_errors_on_put_block_and_append_block() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = put(
        &c,
        &format!("/{ctr}/log"),
        b"",
        &[("x-ms-blob-type", "AppendBlob")],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let md5 = md5_b64(b"abc");
    let crc = crc64_b64(b"abc");
    for path in [
        format!("/{ctr}/b?comp=block&blockid=YQ=="),
        format!("/{ctr}/log?comp=appendblock"),
    ] {
        for value in ["AQIDBAUGBw==", "%%%"] {
            let r = put(&c, &path, b"abc", &[("x-ms-content-crc64", value)]).await;
            r.assert_error(400, "InvalidHeaderValue");
            assert!(
                r.text()
                    .contains("<HeaderName>x-ms-content-crc64</HeaderName>"),
                "{path}: {}",
                r.text()
            );
        }
        let r = put(&c, &path, b"abc", &[("x-ms-content-crc64", "AQIDBAUGBwgJ")]).await;
        r.assert_error(400, "Crc64Mismatch");
        // Refused before the body is read: no CRC to name.
        assert!(!r.text().contains("ServerCalculatedCrc"), "{}", r.text());
        let r = put(
            &c,
            &path,
            b"abc",
            &[("content-md5", &md5), ("x-ms-content-crc64", &crc)],
        )
        .await;
        r.assert_error(400, "BothCrc64AndMd5HeaderPresent");
    }
    let r = c
        .get(&format!("/{ctr}/b?comp=blocklist&blocklisttype=all"))
        .send()
        .await;
    r.assert_error(404, "BlobNotFound");
    let r = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length").as_deref(), Some("0"));
    assert_eq!(
        r.header("x-ms-blob-committed-block-count").as_deref(),
        Some("0")
    );
}
