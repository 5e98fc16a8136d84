//! How Copy Blob and Copy Blob From URL may read their source: a SAS in
//! `x-ms-copy-source` is checked, another configured account's blob is read
//! with one (an archived one is refused as its read would be), Copy Blob
//! From URL needs one even in the same account, and the account may be
//! named in the source's host.

use stowage_tests::{ACCOUNT, ACCOUNT2, KEY, KEY2, Response, TestServer, blob_sas, unique};

use super::blocks::{elements, md5_b64};

const EXPIRY: &str = "2030-01-01T00:00:00Z";

/// Containers `src` (private, in `account`) with blob `b`, and `dst` in the
/// development account.
async fn setup(server: &TestServer, account: &str, key: &str) -> (String, String) {
    let (src, dst) = (unique("src"), unique("dst"));
    let owner = server.client().as_account(account, key);
    owner.create_container(&src).await;
    owner.put_blob(&src, "b", b"the source").await;
    server.client().create_container(&dst).await;
    (src, dst)
}

/// Copy Blob (or Copy Blob From URL with `sync`) to `dst/copy` from `source`.
async fn copy(server: &TestServer, dst: &str, source: &str, sync: bool) -> Response {
    let mut r = server
        .client()
        .put(&format!("/{dst}/copy"))
        .header("x-ms-copy-source", source);
    if sync {
        r = r.header("x-ms-requires-sync", "true");
    }
    r.send().await
}

async fn copied(server: &TestServer, dst: &str) -> Option<Vec<u8>> {
    let r = server.client().get(&format!("/{dst}/copy")).send().await;
    (r.status == 200).then(|| r.body.to_vec())
}

/// Asserts the service's refusal of an unreadable source: `status`
/// CannotVerifyCopySource carrying the source's own status and code.
fn assert_source_refused(r: &Response, status: u16, source_code: &str) {
    r.assert_error(status, "CannotVerifyCopySource");
    let text = r.text();
    assert_eq!(
        elements(&text, "CopySourceStatusCode"),
        [status.to_string().as_str()],
        "{text}"
    );
    assert_eq!(
        elements(&text, "CopySourceErrorCode"),
        [source_code],
        "{text}"
    );
}

#[tokio::test]
async fn a_read_sas_lets_both_copies_read_another_accounts_private_blob() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT2, KEY2).await;
    let sas = blob_sas(ACCOUNT2, KEY2, &src, "b", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT2}/{src}/b?{sas}", server.base);
    for sync in [false, true] {
        let r = copy(&server, &dst, &url, sync).await;
        assert_eq!(r.status, 202, "sync={sync}: {}", r.text());
        assert_eq!(r.header("x-ms-copy-status").as_deref(), Some("success"));
        assert_eq!(r.header("content-md5"), None, "sync={sync}");
        assert_eq!(
            copied(&server, &dst).await.as_deref(),
            Some(&b"the source"[..])
        );
    }
}

#[tokio::test]
async fn without_a_sas_another_accounts_private_blob_cannot_be_read() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT2, KEY2).await;
    let url = format!("{}/{ACCOUNT2}/{src}/b", server.base);
    copy(&server, &dst, &url, false)
        .await
        .assert_error(404, "CannotVerifyCopySource");
    let r = copy(&server, &dst, &url, true).await;
    assert_source_refused(&r, 401, "NoAuthenticationInformation");
    assert_eq!(copied(&server, &dst).await, None);
}

#[tokio::test]
async fn a_source_sas_without_read_permission_is_403_cannot_verify_copy_source() {
    let server = TestServer::start_with_accounts(true).await;
    let (other, dst) = setup(&server, ACCOUNT2, KEY2).await;
    let (own, _) = setup(&server, ACCOUNT, KEY).await;
    // In the same account too: a SAS on the source is checked even where
    // the copy would not need one.
    for (account, key, src) in [(ACCOUNT2, KEY2, &other), (ACCOUNT, KEY, &own)] {
        let sas = blob_sas(account, key, src, "b", "w", EXPIRY);
        let url = format!("{}/{account}/{src}/b?{sas}", server.base);
        for sync in [false, true] {
            let r = copy(&server, &dst, &url, sync).await;
            assert_source_refused(&r, 403, "AuthorizationPermissionMismatch");
        }
    }
    assert_eq!(copied(&server, &dst).await, None);
}

#[tokio::test]
async fn a_source_sas_with_a_wrong_signature_is_403_cannot_verify_copy_source() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT2, KEY2).await;
    // Signed with the development account's key, not the source account's.
    let sas = blob_sas(ACCOUNT2, KEY, &src, "b", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT2}/{src}/b?{sas}", server.base);
    let r = copy(&server, &dst, &url, false).await;
    assert_source_refused(&r, 403, "AuthenticationFailed");
}

#[tokio::test]
async fn a_missing_source_read_with_a_sas_is_404_cannot_verify_copy_source() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT2, KEY2).await;
    let sas = blob_sas(ACCOUNT2, KEY2, &src, "missing", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT2}/{src}/missing?{sas}", server.base);
    copy(&server, &dst, &url, false)
        .await
        .assert_error(404, "CannotVerifyCopySource");
}

/// Another account's archived blob cannot be read, so a copy of it is
/// refused as the read was: `409 CannotVerifyCopySource` carrying the
/// source's `409 BlobArchived`. In the same account the copy reads the
/// blob itself and answers `409 BlobArchived` (without a tier to rehydrate
/// to).
#[tokio::test]
async fn an_archived_source_in_another_account_is_409_cannot_verify_copy_source() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT2, KEY2).await;
    let owner = server.client().as_account(ACCOUNT2, KEY2);
    let r = owner
        .put(&format!("/{src}/b?comp=tier"))
        .header("x-ms-access-tier", "Archive")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let sas = blob_sas(ACCOUNT2, KEY2, &src, "b", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT2}/{src}/b?{sas}", server.base);
    for sync in [false, true] {
        let r = copy(&server, &dst, &url, sync).await;
        assert_source_refused(&r, 409, "BlobArchived");
        assert_eq!(
            elements(&r.text(), "CopySourceErrorMessage"),
            ["This operation is not permitted on an archived blob."]
        );
    }
    assert_eq!(copied(&server, &dst).await, None);

    let (own, _) = setup(&server, ACCOUNT, KEY).await;
    let r = server
        .client()
        .put(&format!("/{own}/b?comp=tier"))
        .header("x-ms-access-tier", "Archive")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let url = format!("{}/{ACCOUNT}/{own}/b", server.base);
    copy(&server, &dst, &url, false)
        .await
        .assert_error(409, "BlobArchived");
}

#[tokio::test]
async fn copy_blob_from_url_needs_source_authorization_in_the_same_account() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT, KEY).await;
    let plain = format!("{}/{ACCOUNT}/{src}/b", server.base);
    // The asynchronous copy reads its own account with the request's key.
    let r = copy(&server, &dst, &plain, false).await;
    assert_eq!(r.status, 202, "{}", r.text());
    // Copy Blob From URL does not.
    let r = copy(&server, &dst, &plain, true).await;
    assert_source_refused(&r, 401, "NoAuthenticationInformation");
    // With a read SAS it does.
    let sas = blob_sas(ACCOUNT, KEY, &src, "b", "r", EXPIRY);
    let r = copy(&server, &dst, &format!("{plain}?{sas}"), true).await;
    assert_eq!(r.status, 202, "{}", r.text());
    // So does a public container.
    let r = server
        .client()
        .put(&format!("/{src}?restype=container&comp=acl"))
        .header("x-ms-blob-public-access", "blob")
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = copy(&server, &dst, &plain, true).await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn copy_blob_from_url_returns_content_md5_only_when_the_source_md5_was_sent() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT, KEY).await;
    let sas = blob_sas(ACCOUNT, KEY, &src, "b", "r", EXPIRY);
    let url = format!("{}/{ACCOUNT}/{src}/b?{sas}", server.base);
    let sync = |md5: Option<String>| {
        let mut r = server
            .client()
            .put(&format!("/{dst}/copy"))
            .header("x-ms-copy-source", &url)
            .header("x-ms-requires-sync", "true");
        if let Some(m) = md5 {
            r = r.header("x-ms-source-content-md5", &m);
        }
        r.send()
    };
    let r = sync(None).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.header("content-md5"), None);
    let right = md5_b64(b"the source");
    let r = sync(Some(right.clone())).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.header("content-md5"), Some(right));
    let r = sync(Some(md5_b64(b"something else"))).await;
    r.assert_error(400, "Md5Mismatch");
}

#[tokio::test]
async fn a_source_url_with_the_account_in_the_host_is_this_server() {
    let server = TestServer::start_with_accounts(true).await;
    let (src, dst) = setup(&server, ACCOUNT, KEY).await;
    // What `az storage blob copy start --source-container` sends.
    let url = format!("https://{ACCOUNT}.blob.core.windows.net/{src}/b");
    let r = copy(&server, &dst, &url, false).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(
        copied(&server, &dst).await.as_deref(),
        Some(&b"the source"[..])
    );
    let r = server.client().head(&format!("/{dst}/copy")).send().await;
    assert_eq!(r.header("x-ms-copy-source"), Some(url));

    // A product-style URL of another account, on this server's port.
    let (src2, dst2) = setup(&server, ACCOUNT2, KEY2).await;
    let sas = blob_sas(ACCOUNT2, KEY2, &src2, "b", "r", EXPIRY);
    let url = format!(
        "http://{ACCOUNT2}.blob.localhost:{}/{src2}/b?{sas}",
        server.addr().port()
    );
    let r = copy(&server, &dst2, &url, false).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(
        copied(&server, &dst2).await.as_deref(),
        Some(&b"the source"[..])
    );
}
