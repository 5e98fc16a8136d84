//! Blob Batch: the URL forms, sub-requests signed as the SDKs sign them,
//! SAS-authorized batches, and how a batch that cannot run is answered.

use stowage_blobstore::Clock;
use stowage_tests::{
    ACCOUNT, KEY, Response, TestServer, account_sas, container_sas, shared_key_signature,
    string_to_sign, unique,
};

const BOUNDARY: &str = "batch_e2e";

/// One sub-request of a batch body.
struct Sub {
    method: &'static str,
    target: String,
    headers: Vec<(String, String)>,
}

/// A Delete Blob sub-request signed with the account key as the Python SDK
/// signs it: `Content-Length: 0` and no `x-ms-version` of its own.
fn signed_delete(server: &TestServer, target: &str) -> Sub {
    let mut headers = vec![
        ("content-length".to_owned(), "0".to_owned()),
        (
            "x-ms-date".to_owned(),
            httpdate::fmt_http_date(server.clock.now()),
        ),
    ];
    let sts = string_to_sign("DELETE", target, &headers);
    let sig = shared_key_signature(KEY, &sts);
    headers.push(("authorization".into(), format!("SharedKey {ACCOUNT}:{sig}")));
    Sub {
        method: "DELETE",
        target: target.to_owned(),
        headers,
    }
}

/// A Set Blob Tier sub-request for blob path `blob` signed with the
/// account key.
fn signed_tier(server: &TestServer, blob: &str, tier: &str) -> Sub {
    let target = format!("{blob}?comp=tier");
    let mut headers = vec![
        ("content-length".to_owned(), "0".to_owned()),
        ("x-ms-access-tier".to_owned(), tier.to_owned()),
        (
            "x-ms-date".to_owned(),
            httpdate::fmt_http_date(server.clock.now()),
        ),
    ];
    let sts = string_to_sign("PUT", &target, &headers);
    let sig = shared_key_signature(KEY, &sts);
    headers.push(("authorization".into(), format!("SharedKey {ACCOUNT}:{sig}")));
    Sub {
        method: "PUT",
        target,
        headers,
    }
}

/// A sub-request without an `Authorization` header (a SAS in its target,
/// or nothing).
fn unsigned(method: &'static str, target: &str) -> Sub {
    Sub {
        method,
        target: target.to_owned(),
        headers: vec![("content-length".to_owned(), "0".to_owned())],
    }
}

fn batch_body(subs: &[Sub]) -> String {
    let mut out = String::new();
    for (i, sub) in subs.iter().enumerate() {
        out.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: {i}\r\n\r\n{} {} HTTP/1.1\r\n",
            sub.method, sub.target
        ));
        for (n, v) in &sub.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        out.push_str("\r\n\r\n");
    }
    out.push_str(&format!("--{BOUNDARY}--\r\n"));
    out
}

/// One part of a batch answer.
#[derive(Debug)]
struct Part {
    content_id: Option<String>,
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Part {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts the part's status and error code, and that its XML body
    /// names the code.
    fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.header("x-ms-error-code")),
            (status, Some(code)),
            "{self:?}"
        );
        assert!(
            self.body.contains(&format!("<Code>{code}</Code>")),
            "{self:?}"
        );
    }
}

/// Asserts a `202 Accepted` multipart answer and splits it into its parts.
fn answer_parts(r: &Response) -> Vec<Part> {
    assert_eq!(r.status, 202, "{}", r.text());
    let content_type = r.header("content-type").expect("a Content-Type");
    let boundary = content_type
        .strip_prefix("multipart/mixed; boundary=")
        .expect("a multipart answer");
    assert!(boundary.starts_with("batchresponse_"), "{content_type}");
    let text = r.text();
    let body = text
        .strip_suffix(&format!("--{boundary}--\r\n"))
        .expect("the closing delimiter");
    body.split(&format!("--{boundary}\r\n"))
        .skip(1)
        .map(|part| {
            let (mime, http) = part.split_once("\r\n\r\n").expect("MIME headers");
            let content_id = mime
                .lines()
                .find_map(|l| l.strip_prefix("Content-ID: "))
                .map(str::to_owned);
            let (head, body) = http.split_once("\r\n\r\n").unwrap_or((http, ""));
            let mut lines = head.split("\r\n");
            let status_line = lines.next().expect("a status line");
            let status = status_line
                .strip_prefix("HTTP/1.1 ")
                .and_then(|s| s.get(..3))
                .and_then(|s| s.parse().ok())
                .expect("HTTP/1.1 status");
            let headers = lines
                .map(|l| {
                    let (n, v) = l.split_once(": ").expect("a header line");
                    (n.to_owned(), v.to_owned())
                })
                .collect();
            Part {
                content_id,
                status,
                headers,
                body: body.trim_end().to_owned(),
            }
        })
        .collect()
}

async fn post_batch(server: &TestServer, path: &str, body: String, sign: bool) -> Response {
    let mut request = server
        .client()
        .request("POST", path)
        .header(
            "content-type",
            &format!("multipart/mixed; boundary={BOUNDARY}"),
        )
        .body(body);
    if !sign {
        request = request.anonymous();
    }
    request.send().await
}

async fn blob_status(server: &TestServer, container: &str, blob: &str) -> u16 {
    server
        .client()
        .head(&format!("/{container}/{blob}"))
        .send()
        .await
        .status
}

/// The JS SDK's account-level batch on a path-style URL:
/// `POST /devstoreaccount1?restype=container&comp=batch`, no trailing slash
/// and no container. It is the account scope: parts may name any container.
#[tokio::test]
async fn account_batch_on_the_account_path_with_restype_container() {
    let server = TestServer::start().await;
    let client = server.client();
    let (c1, c2) = (unique("batch-a"), unique("batch-b"));
    for c in [&c1, &c2] {
        client.create_container(c).await;
        client.put_blob(c, "x", b"data").await;
    }
    let subs = [
        signed_delete(&server, &format!("/{ACCOUNT}/{c1}/x")),
        signed_delete(&server, &format!("/{c2}/x")),
    ];
    let r = post_batch(
        &server,
        "?restype=container&comp=batch",
        batch_body(&subs),
        true,
    )
    .await;
    assert!(r.header("x-ms-request-id").is_some());
    let parts = answer_parts(&r);
    assert_eq!(parts.len(), 2);
    for (i, part) in parts.iter().enumerate() {
        assert_eq!(part.status, 202, "{part:?}");
        assert_eq!(part.content_id.as_deref(), Some(i.to_string().as_str()));
        assert_eq!(part.header("x-ms-delete-type-permanent"), Some("true"));
        assert_eq!(part.header("x-ms-version"), Some(stowage_tests::VERSION));
        assert!(part.header("x-ms-request-id").is_some());
    }
    assert_eq!(blob_status(&server, &c1, "x").await, 404);
    assert_eq!(blob_status(&server, &c2, "x").await, 404);

    // The same batch on the account URL with the trailing slash, and
    // without restype, is the same account scope.
    for path in ["/?restype=container&comp=batch", "?comp=batch"] {
        client.put_blob(&c1, "y", b"data").await;
        let subs = [signed_delete(&server, &format!("/{ACCOUNT}/{c1}/y"))];
        let r = post_batch(&server, path, batch_body(&subs), true).await;
        assert_eq!(answer_parts(&r)[0].status, 202, "{path}");
        assert_eq!(blob_status(&server, &c1, "y").await, 404, "{path}");
    }
}

/// A part signed without its own `x-ms-version` verifies with the batch's
/// version; a part signed for another blob fails alone.
#[tokio::test]
async fn parts_without_their_own_version_verify_with_the_batch_version() {
    let server = TestServer::start().await;
    let client = server.client();
    let c = unique("batch-sig");
    client.create_container(&c).await;
    client.put_blob(&c, "a", b"1").await;
    client.put_blob(&c, "b", b"2").await;
    client.put_blob(&c, "n", b"3").await;
    let mut forged = signed_delete(&server, &format!("/{ACCOUNT}/{c}/a"));
    forged.target = format!("/{ACCOUNT}/{c}/b");
    // The .NET SDK writes the part's path without its leading `/` and signs
    // the path with it.
    let mut dotnet = signed_delete(&server, &format!("/{ACCOUNT}/{c}/n"));
    dotnet.target = format!("{ACCOUNT}/{c}/n");
    let subs = [
        signed_delete(&server, &format!("/{ACCOUNT}/{c}/a")),
        forged,
        dotnet,
    ];
    let r = post_batch(
        &server,
        &format!("/{c}?restype=container&comp=batch"),
        batch_body(&subs),
        true,
    )
    .await;
    let parts = answer_parts(&r);
    assert_eq!(parts[0].status, 202, "{:?}", parts[0]);
    parts[1].assert_error(403, "AuthenticationFailed");
    assert_eq!(parts[1].content_id.as_deref(), Some("1"));
    assert_eq!(parts[2].status, 202, "{:?}", parts[2]);
    assert_eq!(blob_status(&server, &c, "a").await, 404);
    assert_eq!(blob_status(&server, &c, "b").await, 200);
    assert_eq!(blob_status(&server, &c, "n").await, 404);
}

/// A container-scoped batch under a container SAS (`sr=c`): the batch URL
/// and every part carry the SAS, as the SDKs send them; the parts run with
/// the SAS's permissions.
#[tokio::test]
async fn container_sas_batch_runs_its_parts() {
    let server = TestServer::start().await;
    let client = server.client();
    let c = unique("batch-csas");
    client.create_container(&c).await;
    for blob in ["a", "b"] {
        client.put_blob(&c, blob, b"data").await;
    }
    let sas = container_sas(&c, "rd");
    let subs = [
        unsigned("DELETE", &format!("/{ACCOUNT}/{c}/a?{sas}")),
        unsigned("DELETE", &format!("/{c}/b?{sas}")),
    ];
    let path = format!("/{c}?restype=container&comp=batch&{sas}");
    let r = post_batch(&server, &path, batch_body(&subs), false).await;
    let parts = answer_parts(&r);
    assert_eq!(parts.len(), 2);
    for part in &parts {
        assert_eq!(part.status, 202, "{part:?}");
    }
    assert_eq!(blob_status(&server, &c, "a").await, 404);
    assert_eq!(blob_status(&server, &c, "b").await, 404);

    // Without `d`, the batch is let in and each part is refused alone.
    client.put_blob(&c, "a", b"data").await;
    let read_only = container_sas(&c, "rl");
    let subs = [unsigned("DELETE", &format!("/{ACCOUNT}/{c}/a?{read_only}"))];
    let path = format!("/{c}?restype=container&comp=batch&{read_only}");
    let r = post_batch(&server, &path, batch_body(&subs), false).await;
    answer_parts(&r)[0].assert_error(403, "AuthorizationPermissionMismatch");
    assert_eq!(blob_status(&server, &c, "a").await, 200);

    // A part with no credentials at all is answered as an anonymous
    // Delete Blob is.
    let subs = [unsigned("DELETE", &format!("/{ACCOUNT}/{c}/a"))];
    let r = post_batch(&server, &path, batch_body(&subs), false).await;
    answer_parts(&r)[0].assert_error(404, "ResourceNotFound");
    assert_eq!(blob_status(&server, &c, "a").await, 200);

    // A container SAS does not open the account-level batch.
    let r = post_batch(
        &server,
        &format!("?restype=container&comp=batch&{sas}"),
        batch_body(&subs),
        false,
    )
    .await;
    r.assert_error(403, "AuthenticationFailed");

    // Nor another container's batch.
    let other = unique("batch-other");
    client.create_container(&other).await;
    let r = post_batch(
        &server,
        &format!("/{other}?restype=container&comp=batch&{sas}"),
        batch_body(&subs),
        false,
    )
    .await;
    r.assert_error(403, "AuthenticationFailed");

    // An expired SAS on the batch refuses it as a whole (the service's
    // live tests expect 403 AuthenticationFailed).
    server
        .clock
        .advance(std::time::Duration::from_secs(24 * 3600));
    let subs = [unsigned("DELETE", &format!("/{ACCOUNT}/{c}/a?{sas}"))];
    let path = format!("/{c}?restype=container&comp=batch&{sas}");
    let r = post_batch(&server, &path, batch_body(&subs), false).await;
    r.assert_error(403, "AuthenticationFailed");
    assert_eq!(blob_status(&server, &c, "a").await, 200);
}

/// An account SAS opens batches at both scopes; parts need `d` and the
/// object resource type.
#[tokio::test]
async fn account_sas_batch_at_account_and_container_scope() {
    let server = TestServer::start().await;
    let client = server.client();
    let c = unique("batch-asas");
    client.create_container(&c).await;
    let sas = account_sas("rwdl", "sco");
    for path in [
        format!("?comp=batch&{sas}"),
        format!("?restype=container&comp=batch&{sas}"),
        format!("/{c}?restype=container&comp=batch&{sas}"),
    ] {
        client.put_blob(&c, "a", b"data").await;
        let subs = [unsigned("DELETE", &format!("/{ACCOUNT}/{c}/a?{sas}"))];
        let r = post_batch(&server, &path, batch_body(&subs), false).await;
        assert_eq!(answer_parts(&r)[0].status, 202, "{path}");
        assert_eq!(blob_status(&server, &c, "a").await, 404, "{path}");
    }

    client.put_blob(&c, "a", b"data").await;
    let containers_only = account_sas("rwdl", "sc");
    let subs = [unsigned(
        "DELETE",
        &format!("/{ACCOUNT}/{c}/a?{containers_only}"),
    )];
    let r = post_batch(
        &server,
        &format!("?comp=batch&{containers_only}"),
        batch_body(&subs),
        false,
    )
    .await;
    answer_parts(&r)[0].assert_error(403, "AuthorizationResourceTypeMismatch");
    assert_eq!(blob_status(&server, &c, "a").await, 200);
}

/// A batch that cannot run as a whole is answered `202 Accepted` with a
/// single part, without a Content-ID, carrying the error; no part runs.
#[tokio::test]
async fn a_batch_that_cannot_run_is_one_failed_part() {
    let server = TestServer::start().await;
    let client = server.client();
    let c = unique("batch-bad");
    client.create_container(&c).await;
    client.put_blob(&c, "a", b"data").await;
    let path = format!("/{c}?restype=container&comp=batch");
    let delete_a = || signed_delete(&server, &format!("/{ACCOUNT}/{c}/a"));

    let single = |r: &Response| {
        let parts = answer_parts(r);
        assert_eq!(parts.len(), 1, "{parts:?}");
        let part = parts.into_iter().next().unwrap();
        assert_eq!(part.content_id, None);
        part
    };

    // A body that is not a batch.
    let r = post_batch(&server, &path, "not a batch".into(), true).await;
    single(&r).assert_error(400, "InvalidInput");
    // A batch of no part (the SDKs' live tests expect 400 InvalidInput).
    let r = post_batch(&server, &path, format!("--{BOUNDARY}--\r\n"), true).await;
    single(&r).assert_error(400, "InvalidInput");
    // No closing delimiter.
    let body = batch_body(&[delete_a()]);
    let unclosed = body
        .trim_end_matches(&format!("--{BOUNDARY}--\r\n"))
        .to_owned();
    let r = post_batch(&server, &path, unclosed, true).await;
    single(&r).assert_error(400, "InvalidInput");
    // A Content-Type without a boundary.
    let r = client
        .request("POST", &path)
        .header("content-type", "multipart/mixed")
        .body(batch_body(&[delete_a()]))
        .send()
        .await;
    let part = single(&r);
    part.assert_error(400, "InvalidHeaderValue");
    assert!(part.body.contains("<HeaderName>Content-Type</HeaderName>"));
    // Two boundaries are refused the same way.
    let r = client
        .request("POST", &path)
        .header("content-type", "multipart/mixed; boundary=a; boundary=b")
        .body(batch_body(&[delete_a()]))
        .send()
        .await;
    single(&r).assert_error(400, "InvalidHeaderValue");
    // No Content-Type at all: the whole request is refused.
    let r = client
        .request("POST", &path)
        .body(batch_body(&[delete_a()]))
        .send()
        .await;
    r.assert_error(400, "MissingRequiredHeader");
    // More than 256 parts.
    let many: Vec<Sub> = (0..257).map(|_| delete_a()).collect();
    let r = post_batch(&server, &path, batch_body(&many), true).await;
    single(&r).assert_error(400, "ExceedsMaxBatchRequestCount");
    // Delete Blob and Set Blob Tier in one batch.
    let mut tier = unsigned("PUT", &format!("/{ACCOUNT}/{c}/a?comp=tier"));
    tier.headers
        .push(("x-ms-access-tier".into(), "Cool".into()));
    let r = post_batch(&server, &path, batch_body(&[delete_a(), tier]), true).await;
    single(&r).assert_error(400, "AllBatchSubRequestsShouldBeSameApi");

    assert_eq!(blob_status(&server, &c, "a").await, 200);

    // A part that is not a Delete Blob or Set Blob Tier fails alone.
    let get = unsigned("GET", &format!("/{ACCOUNT}/{c}/a"));
    let r = post_batch(&server, &path, batch_body(&[get, delete_a()]), true).await;
    let parts = answer_parts(&r);
    parts[0].assert_error(400, "InvalidInput");
    assert_eq!(parts[1].status, 202);
    // So does a part outside the batch's container.
    let r = post_batch(
        &server,
        &path,
        batch_body(&[signed_delete(&server, &format!("/{ACCOUNT}/other/a"))]),
        true,
    )
    .await;
    answer_parts(&r)[0].assert_error(400, "InvalidInput");
}

/// Set Blob Tier parts at account scope (any container) and container
/// scope: each part answers 200, or 202 for a rehydration, or its own error.
#[tokio::test]
async fn set_blob_tier_batches_at_account_and_container_scope() {
    let server = TestServer::start().await;
    let client = server.client();
    let (c1, c2) = (unique("tier-a"), unique("tier-b"));
    for c in [&c1, &c2] {
        client.create_container(c).await;
        client.put_blob(c, "x", b"data").await;
    }
    let subs = [
        signed_tier(&server, &format!("/{ACCOUNT}/{c1}/x"), "Cool"),
        signed_tier(&server, &format!("/{c2}/x"), "Archive"),
        signed_tier(&server, &format!("/{ACCOUNT}/{c1}/missing"), "Cool"),
    ];
    let r = post_batch(&server, "?comp=batch", batch_body(&subs), true).await;
    let parts = answer_parts(&r);
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0].status, 200, "{:?}", parts[0]);
    assert_eq!(parts[0].header("x-ms-delete-type-permanent"), None);
    assert_eq!(parts[1].status, 200, "{:?}", parts[1]);
    parts[2].assert_error(404, "BlobNotFound");
    let tier = |c: String| {
        let client = server.client();
        async move {
            client
                .head(&format!("/{c}/x"))
                .send()
                .await
                .header("x-ms-access-tier")
        }
    };
    assert_eq!(tier(c1.clone()).await.as_deref(), Some("Cool"));
    assert_eq!(tier(c2.clone()).await.as_deref(), Some("Archive"));

    // Container scope: the archived blob rehydrates (202); a part for
    // another container fails alone.
    let subs = [
        signed_tier(&server, &format!("/{ACCOUNT}/{c2}/x"), "Hot"),
        signed_tier(&server, &format!("/{ACCOUNT}/{c1}/x"), "Hot"),
    ];
    let r = post_batch(
        &server,
        &format!("/{c2}?restype=container&comp=batch"),
        batch_body(&subs),
        true,
    )
    .await;
    let parts = answer_parts(&r);
    assert_eq!(parts[0].status, 202, "{:?}", parts[0]);
    parts[1].assert_error(400, "InvalidInput");
    assert_eq!(tier(c1.clone()).await.as_deref(), Some("Cool"));
    let head = client.head(&format!("/{c2}/x")).send().await;
    assert_eq!(
        head.header("x-ms-archive-status").as_deref(),
        Some("rehydrate-pending-to-hot")
    );
}
