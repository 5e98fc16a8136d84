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
