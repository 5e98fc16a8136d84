//! Request addressing: product-style URLs (the account in the host name),
//! `--disableProductStyleUrl`, the read-only secondary endpoint and Get Blob
//! Service Stats.

use stowage_blobstore::Clock as _;
use stowage_tests::{
    ACCOUNT, ACCOUNT2, KEY, KEY2, TestServer, client_version, shared_key_signature, string_to_sign,
    unique,
};

use super::blocks::elements;

/// `<account>.blob.localhost:<port>`, the product-style host of `account`.
fn host(server: &TestServer, account: &str) -> String {
    format!("{account}.blob.localhost:{}", server.addr().port())
}

#[tokio::test]
async fn a_host_whose_first_label_is_an_account_names_the_account() {
    let server = TestServer::start_with_accounts(true).await;
    let c = server.client().host_style(&host(&server, ACCOUNT));
    let ctr = unique("host");
    let r = c.put(&format!("/{ctr}?restype=container")).send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    c.put_blob(&ctr, "dir/b.txt", b"product style").await;
    let r = c.get(&format!("/{ctr}/dir/b.txt")).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..], b"product style");
    // The same blob path-style: one account, two spellings.
    let r = server
        .client()
        .get(&format!("/{ctr}/dir/b.txt"))
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..], b"product style");
    // Listings name the host as the service endpoint.
    let r = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await;
    assert_eq!(r.status, 200);
    let text = r.text();
    let endpoint = format!("http://{}/", host(&server, ACCOUNT));
    assert!(
        text.contains(&format!("ServiceEndpoint=\"{endpoint}\"")),
        "{text}"
    );
    assert_eq!(elements(&text, "Name"), ["dir/b.txt"]);
}

#[tokio::test]
async fn each_configured_account_has_its_own_host() {
    let server = TestServer::start_with_accounts(true).await;
    let ctr = unique("second");
    let second = server
        .client()
        .as_account(ACCOUNT2, KEY2)
        .host_style(&host(&server, ACCOUNT2));
    let r = second
        .put(&format!("/{ctr}?restype=container"))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    // The container is the second account's, not the development account's.
    let r = server
        .client()
        .as_account(ACCOUNT2, KEY2)
        .get(&format!("/{ctr}?restype=container"))
        .send()
        .await;
    assert_eq!(r.status, 200);
    server
        .client()
        .get(&format!("/{ctr}?restype=container"))
        .send()
        .await
        .assert_error(404, "ContainerNotFound");
    // The development account's key does not sign for the second account's host.
    server
        .client()
        .host_style(&host(&server, ACCOUNT2))
        .get(&format!("/{ctr}?restype=container"))
        .send()
        .await
        .assert_error(403, "AuthenticationFailed");
}

#[tokio::test]
async fn hosts_that_name_no_account_stay_path_style() {
    let server = TestServer::start_with_accounts(true).await;
    let ctr = unique("path");
    let port = server.addr().port();
    for h in [
        format!("stowage.internal:{port}"),
        format!("host.docker.internal:{port}"),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
    ] {
        let c = server
            .client()
            .host_style(&h)
            .with_prefix(&format!("/{ACCOUNT}"));
        let r = c.get(&format!("/{ctr}?restype=container")).send().await;
        r.assert_error(404, "ContainerNotFound");
    }
}

#[tokio::test]
async fn disable_product_style_url_reads_the_account_from_the_path_only() {
    let server = TestServer::start_with_accounts(false).await;
    let ctr = unique("flag");
    let h = host(&server, ACCOUNT);
    // Path-style through the account's host name works.
    let c = server
        .client()
        .host_style(&h)
        .with_prefix(&format!("/{ACCOUNT}"));
    let r = c.put(&format!("/{ctr}?restype=container")).send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    // Without the account in the path the container name is read as the
    // account: the development account's signature does not match it.
    let r = server
        .client()
        .host_style(&h)
        .get(&format!("/{ctr}?restype=container"))
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
}

#[tokio::test]
async fn the_secondary_endpoint_reads_the_primary_and_refuses_writes() {
    let server = TestServer::start_with_accounts(true).await;
    let c = server.client();
    let ctr = unique("sec");
    c.create_container(&ctr).await;
    c.put_blob(&ctr, "b", b"replicated").await;
    let secondary = c.with_prefix(&format!("/{ACCOUNT}-secondary"));
    let by_host = c.host_style(&host(&server, &format!("{ACCOUNT}-secondary")));
    for s in [&secondary, &by_host] {
        let r = s.get(&format!("/{ctr}/b")).send().await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(&r.body[..], b"replicated");
        let r = s
            .get(&format!("/{ctr}?restype=container&comp=list"))
            .send()
            .await;
        assert_eq!(r.status, 200);
        assert_eq!(elements(&r.text(), "Name"), ["b"]);
        for r in [
            s.put(&format!("/{ctr}/b"))
                .header("x-ms-blob-type", "BlockBlob")
                .body(&b"new"[..])
                .send()
                .await,
            s.put(&format!("/{}?restype=container", unique("sec")))
                .send()
                .await,
            s.delete(&format!("/{ctr}/b")).send().await,
            s.put(&format!("/{ctr}/b?comp=metadata"))
                .header("x-ms-meta-a", "b")
                .send()
                .await,
        ] {
            r.assert_error(403, "InsufficientAccountPermissions");
        }
    }
    // Nothing was written.
    let r = c.get(&format!("/{ctr}/b")).send().await;
    assert_eq!(&r.body[..], b"replicated");
    assert_eq!(r.header("x-ms-meta-a"), None);
}

#[tokio::test]
async fn secondary_listings_name_the_secondary_endpoint() {
    let server = TestServer::start_with_accounts(true).await;
    let c = server.client();
    let r = c
        .with_prefix(&format!("/{ACCOUNT}-secondary"))
        .get("/?comp=list")
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert!(
        r.text().contains(&format!(
            "ServiceEndpoint=\"{}/{ACCOUNT}-secondary/\"",
            server.base
        )),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn get_blob_service_stats_on_the_secondary_is_live_and_in_sync() {
    let server = TestServer::start_with_accounts(true).await;
    let c = server.client();
    let now = httpdate::fmt_http_date(server.clock.now());
    let expected = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication>\
         <Status>live</Status><LastSyncTime>{now}</LastSyncTime>\
         </GeoReplication></StorageServiceStats>"
    );
    let secondary = c.with_prefix(&format!("/{ACCOUNT}-secondary"));
    let by_host = c.host_style(&host(&server, &format!("{ACCOUNT}-secondary")));
    for s in [&secondary, &by_host] {
        let r = s.get("/?restype=service&comp=stats").send().await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("content-type").as_deref(), Some("application/xml"));
        assert_eq!(r.text(), expected);
        s.put("/?restype=service&comp=stats")
            .send()
            .await
            .assert_error(405, "UnsupportedHttpVerb");
    }
    // The primary endpoint has no stats.
    let r = c.get("/?restype=service&comp=stats").send().await;
    r.assert_error(400, "InvalidQueryParameterValue");
    assert_eq!(elements(&r.text(), "QueryParameterName"), ["comp"]);
    assert_eq!(elements(&r.text(), "QueryParameterValue"), ["stats"]);
}

#[tokio::test]
async fn the_secondary_accepts_signatures_over_either_spelling_of_the_path() {
    let server = TestServer::start_with_accounts(true).await;
    let c = server.client();
    let ctr = unique("signed");
    c.create_container(&ctr).await;
    let secondary = c.with_prefix(&format!("/{ACCOUNT}-secondary"));
    let date = httpdate::fmt_http_date(server.clock.now());
    let headers = vec![
        ("x-ms-version".to_owned(), client_version().to_owned()),
        ("x-ms-date".to_owned(), date.clone()),
    ];
    let path = "?restype=container";
    // As sent (`/devstoreaccount1-secondary/<ctr>`), and with the primary
    // account's name in the path (`/devstoreaccount1/<ctr>`).
    for (signed_path, status) in [
        (format!("/{ACCOUNT}-secondary/{ctr}{path}"), 200),
        (format!("/{ACCOUNT}/{ctr}{path}"), 200),
        (format!("/{ACCOUNT}/other{path}"), 403),
    ] {
        let sig = shared_key_signature(KEY, &string_to_sign("GET", &signed_path, &headers));
        let r = secondary
            .get(&format!("/{ctr}{path}"))
            .header("x-ms-date", &date)
            .header("authorization", &format!("SharedKey {ACCOUNT}:{sig}"))
            .anonymous()
            .send()
            .await;
        assert_eq!(r.status, status, "{signed_path}: {}", r.text());
    }
}

#[tokio::test]
async fn a_backslash_in_a_blob_name_is_read_as_a_slash() {
    let server = TestServer::start().await;
    let c = server.client();
    let ctr = unique("backslash");
    c.create_container(&ctr).await;
    // `%5C` (a raw `\` is turned into `/` by the URL parser of the test's
    // HTTP client before it is sent, as by browsers and the JS SDK).
    for (sent, body) in [("dir%5Cone", "1"), ("dir%5ctwo", "2")] {
        let r = c
            .put(&format!("/{ctr}/{sent}"))
            .header("x-ms-blob-type", "BlockBlob")
            .body(body.to_owned())
            .send()
            .await;
        assert_eq!(r.status, 201, "{sent}: {}", r.text());
    }
    for (name, body) in [("dir/one", "1"), ("dir/two", "2")] {
        let r = c.get(&format!("/{ctr}/{name}")).send().await;
        assert_eq!(r.status, 200, "{name}");
        assert_eq!(r.text(), body);
    }
    let list = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert_eq!(elements(&list, "Name"), ["dir/one", "dir/two"], "{list}");
}
