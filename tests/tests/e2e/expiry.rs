//! Set Blob Expiry (docs/wire/expiry.md; issue 19): the expiry time on
//! reads and in listings, a blob gone at its time (on the injected clock,
//! before the collector runs), its space collected, and a rewrite that
//! clears the expiry.

use std::time::Duration;

use stowage_tests::{Client, TestServer, epoch, unique};

use super::blocks::extent_files;
use super::listing::text;

/// Past the collector's 30 s grace period.
const PAST_GRACE: Duration = Duration::from_secs(31);

async fn set_expiry(
    c: &Client,
    path: &str,
    option: &str,
    time: Option<&str>,
) -> stowage_tests::Response {
    let mut r = c
        .put(&format!("{path}?comp=expiry"))
        .header("x-ms-expiry-option", option);
    if let Some(t) = time {
        r = r.header("x-ms-expiry-time", t);
    }
    r.send().await
}

fn date(after: Duration) -> String {
    httpdate::fmt_http_date(epoch() + after)
}

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("expiry");
    c.create_container(&name).await;
    (c, name)
}

#[tokio::test]
async fn an_expiring_blob_shows_its_time_and_is_gone_at_it() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c.put_blob(&ctr, "b", &vec![7u8; 100 * 1024]).await;
    let path = format!("/{ctr}/b");

    let r = set_expiry(&c, &path, "RelativeToNow", Some("60000")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.body.is_empty());
    // ETag and Last-Modified are the blob's, unchanged.
    assert_eq!(r.etag(), put.etag());
    assert_eq!(r.header("last-modified"), put.header("last-modified"));

    let expiry = date(Duration::from_secs(60));
    for r in [c.head(&path).send().await, c.get(&path).send().await] {
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-ms-expiry-time"), Some(expiry.clone()));
        assert_eq!(r.etag(), put.etag());
    }
    let listed = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert_eq!(text(&listed, "Expiry-Time"), expiry);
    let order = super::listing::property_order(&listed);
    assert_eq!(
        order[..4],
        ["Creation-Time", "Last-Modified", "Expiry-Time", "Etag"]
    );

    // One second before, it is there; at its time, every read is 404 even
    // though the collector has not run.
    server.clock.advance(Duration::from_secs(59));
    assert_eq!(c.head(&path).send().await.status, 200);
    server.clock.advance(Duration::from_secs(1));
    c.get(&path).send().await.assert_error(404, "BlobNotFound");
    assert_eq!(c.head(&path).send().await.status, 404);
    c.get(&format!("{path}?comp=metadata"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let listed = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert!(listed.contains("<Blobs />"), "{listed}");
    set_expiry(&c, &path, "NeverExpire", None)
        .await
        .assert_error(404, "BlobNotFound");

    // The collector removes it; after the grace period its extent goes.
    assert_eq!(extent_files(&server).len(), 1);
    server.store.collect_garbage().await.expect("collect");
    server.clock.advance(PAST_GRACE);
    server.store.collect_garbage().await.expect("collect");
    assert!(extent_files(&server).is_empty());
}

#[tokio::test]
async fn each_option_sets_or_clears_the_expiry_time() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"data").await;
    let path = format!("/{ctr}/b");
    server.clock.advance(Duration::from_secs(10));
    let expiry = |c: Client, path: String| async move {
        c.head(&path).send().await.header("x-ms-expiry-time")
    };

    // Relative to creation: the blob was created at the epoch.
    let r = set_expiry(&c, &path, "RelativeToCreation", Some("3600000")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        expiry(c.clone(), path.clone()).await,
        Some(date(Duration::from_secs(3600)))
    );
    // The option's name is read in any case.
    let r = set_expiry(&c, &path, "relativetonow", Some("1000")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        expiry(c.clone(), path.clone()).await,
        Some(date(Duration::from_secs(11)))
    );
    let at = date(Duration::from_secs(86_400));
    let r = set_expiry(&c, &path, "Absolute", Some(&at)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(expiry(c.clone(), path.clone()).await, Some(at));
    let r = set_expiry(&c, &path, "NeverExpire", None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(expiry(c.clone(), path.clone()).await, None);
    server.clock.advance(Duration::from_secs(2 * 86_400));
    assert_eq!(c.head(&path).send().await.status, 200);
}

#[tokio::test]
async fn set_blob_expiry_refusals() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"data").await;
    let path = format!("/{ctr}/b");
    server.clock.advance(Duration::from_secs(100));

    let cases: [(&str, Option<&str>, u16, &str); 7] = [
        ("Sometime", Some("5"), 400, "InvalidHeaderValue"),
        ("RelativeToNow", None, 400, "MissingRequiredHeader"),
        ("RelativeToNow", Some("soon"), 400, "InvalidHeaderValue"),
        ("NeverExpire", Some("5"), 400, "InvalidHeaderValue"),
        ("Absolute", Some("tomorrow"), 400, "InvalidHeaderValue"),
        // A time that has passed, or is now.
        (
            "RelativeToCreation",
            Some("50000"),
            400,
            "InvalidHeaderValue",
        ),
        ("RelativeToNow", Some("0"), 400, "InvalidHeaderValue"),
    ];
    for (option, time, status, code) in cases {
        let r = set_expiry(&c, &path, option, time).await;
        assert_eq!(r.status, status, "{option} {time:?}: {}", r.text());
        r.assert_error(status, code);
    }
    let past = date(Duration::from_secs(50));
    let r = set_expiry(&c, &path, "Absolute", Some(&past)).await;
    r.assert_error(400, "InvalidHeaderValue");
    assert!(r.text().contains("x-ms-expiry-time"), "{}", r.text());
    let r = c.put(&format!("{path}?comp=expiry")).send().await;
    r.assert_error(400, "MissingRequiredHeader");
    let r = set_expiry(&c, &format!("/{ctr}/missing"), "NeverExpire", None).await;
    r.assert_error(404, "BlobNotFound");
    let r = set_expiry(&c, "/nosuchcontainer/b", "NeverExpire", None).await;
    r.assert_error(404, "ContainerNotFound");

    // A leased blob needs its lease id.
    let r = c
        .put(&format!("{path}?comp=lease"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let lease = r.header("x-ms-lease-id").expect("lease id");
    let r = set_expiry(&c, &path, "RelativeToNow", Some("1000")).await;
    r.assert_error(412, "LeaseIdMissing");
    let r = c
        .put(&format!("{path}?comp=expiry"))
        .header("x-ms-expiry-option", "RelativeToNow")
        .header("x-ms-expiry-time", "1000")
        .header("x-ms-lease-id", &lease)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn a_rewrite_clears_the_expiry_and_a_write_after_it_starts_afresh() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "rewritten", b"one").await;
    c.put_blob(&ctr, "expired", b"one").await;
    for name in ["rewritten", "expired"] {
        let r = set_expiry(&c, &format!("/{ctr}/{name}"), "RelativeToNow", Some("5000")).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Put Blob before the time: the new version does not expire.
    server.clock.advance(Duration::from_secs(1));
    c.put_blob(&ctr, "rewritten", b"two").await;
    let r = c.head(&format!("/{ctr}/rewritten")).send().await;
    assert_eq!(r.header("x-ms-expiry-time"), None);

    // Put Blob after the time: a new blob, created now, with If-None-Match
    // `*` met since the old one is gone.
    server.clock.advance(Duration::from_secs(10));
    assert_eq!(
        c.get(&format!("/{ctr}/rewritten")).send().await.text(),
        "two"
    );
    let r = c
        .put(&format!("/{ctr}/expired"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("if-none-match", "*")
        .body(b"two".to_vec())
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.head(&format!("/{ctr}/expired")).send().await;
    assert_eq!(
        r.header("x-ms-creation-time"),
        Some(date(Duration::from_secs(11)))
    );
    assert_eq!(r.header("x-ms-expiry-time"), None);
}
