//! Smoke tests of the harness itself: a signed round trip, and the common
//! response headers.

use stowage_tests::{TestServer, unique};

#[tokio::test]
async fn a_signed_round_trip_through_the_real_server() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("basics");
    c.create_container(&name).await;
    c.put_blob(&name, "a/b.txt", b"hello").await;
    let r = c.get(&format!("/{name}/a/b.txt")).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..], b"hello");
    assert!(r.header("x-ms-request-id").is_some());
    assert_eq!(
        r.header("x-ms-version").as_deref(),
        Some(stowage_tests::client_version())
    );
    // Date comes from the server's (injected) clock.
    assert_eq!(
        r.header("date").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT")
    );
}

#[tokio::test]
async fn a_bad_signature_is_403_authentication_failed() {
    let server = TestServer::start().await;
    let r = server
        .client()
        .get("/?comp=list")
        .header("authorization", "SharedKey devstoreaccount1:AAAA")
        .anonymous()
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
}

/// Shared Key Lite (docs/wire/auth.md#shared-key-lite), signed here with the server's own
/// string-to-sign (what is under test is that the server accepts the scheme
/// end to end; the canonical form has its own unit tests and vectors).
#[tokio::test]
async fn shared_key_lite_is_accepted_and_a_bad_lite_signature_is_403() {
    use base64::Engine as _;
    use stowage_server::auth::shared_key::{RequestView, Scheme, sign, string_to_sign};
    let server = TestServer::start().await;
    let date = httpdate::fmt_http_date(stowage_blobstore::Clock::now(&*server.clock));
    let headers = vec![
        ("x-ms-date".to_owned(), date.clone()),
        (
            "x-ms-version".to_owned(),
            stowage_tests::client_version().to_owned(),
        ),
    ];
    let view = RequestView {
        method: "GET",
        raw_path: "/devstoreaccount1/",
        raw_query: "comp=list",
        headers: &headers,
    };
    let sts = string_to_sign(
        &view,
        "devstoreaccount1",
        Scheme::SharedKeyLite,
        stowage_tests::client_version(),
    )
    .unwrap();
    let key = base64::engine::general_purpose::STANDARD
        .decode(stowage_tests::KEY)
        .unwrap();
    for (signature, status) in [(sign(&key, &sts), 200), ("AAAA".to_owned(), 403)] {
        let r = server
            .client()
            .get("/?comp=list")
            .header("x-ms-date", &date)
            .header(
                "authorization",
                &format!("SharedKeyLite devstoreaccount1:{signature}"),
            )
            .anonymous()
            .send()
            .await;
        assert_eq!(r.status, status, "{}", r.text());
    }
}

/// Get Account Information answers at every scope the REST reference lists:
/// the account, a container and a blob URL (neither need exist), GET and
/// HEAD, with the same three headers.
#[tokio::test]
async fn get_account_information_answers_at_account_container_and_blob_scopes() {
    let server = stowage_tests::TestServer::start().await;
    let c = server.client();
    for path in [
        "/?restype=account&comp=properties",
        "/no-such-container?restype=account&comp=properties",
        "/no-such-container/no/such/blob?restype=account&comp=properties",
    ] {
        for r in [c.get(path).send().await, c.head(path).send().await] {
            assert_eq!(r.status, 200, "{path}: {}", r.text());
            assert_eq!(r.header("x-ms-sku-name").as_deref(), Some("Standard_RAGRS"));
            assert_eq!(r.header("x-ms-account-kind").as_deref(), Some("StorageV2"));
            assert_eq!(r.header("x-ms-is-hns-enabled").as_deref(), Some("false"));
        }
    }
    // Another verb is refused.
    let r = c
        .put("/no-such-container?restype=account&comp=properties")
        .send()
        .await;
    r.assert_error(405, "UnsupportedHttpVerb");
}

/// `--loose` ignores the headers of features Stowage does not implement, as
/// the emulator's loose mode does; without it they answer 501.
#[tokio::test]
async fn loose_mode_ignores_unsupported_headers_that_strict_mode_refuses() {
    for (loose, want) in [(false, 501), (true, 201)] {
        let server = if loose {
            TestServer::start_loose().await
        } else {
            TestServer::start_in_memory().await
        };
        let c = server.client();
        let name = unique("loose");
        c.create_container(&name).await;
        let r = c
            .put(&format!("/{name}/b"))
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-encryption-scope", "scope1")
            .body(&b"x"[..])
            .send()
            .await;
        assert_eq!(r.status, want, "loose={loose}: {}", r.text());
        if !loose {
            r.assert_error(501, "NotImplemented");
        }
    }
}
