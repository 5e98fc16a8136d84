//! Copies from other hosts (docs/wire/copy.md): a source that is a raw
//! HTTP server on loopback, so the test sees exactly what the fetcher
//! sends, and a second Stowage server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use stowage_tests::{ACCOUNT, Client, Response, TestServer, unique};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the raw source answers.
#[derive(Clone, Copy)]
enum Answer {
    /// `200` with this body and an ETag.
    Body(&'static [u8]),
    /// `200` declaring 1 MiB, sends 1 KiB, then holds the connection open.
    Stall,
    /// As `Stall`, the answer naming this `x-ms-blob-type`.
    StallAs(&'static str),
}

/// A one-route HTTP source on loopback; returns its base URL and the head
/// of every request it received.
async fn raw_source(answer: Answer) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                log.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).into_owned());
                match answer {
                    Answer::Body(body) => {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nETag: \"v1\"\r\n\
                             Content-Type: text/plain\r\nConnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = socket.write_all(head.as_bytes()).await;
                        let _ = socket.write_all(body).await;
                    }
                    Answer::Stall | Answer::StallAs(_) => {
                        let kind = match answer {
                            Answer::StallAs(kind) => format!("x-ms-blob-type: {kind}\r\n"),
                            _ => String::new(),
                        };
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n{kind}\r\n");
                        let _ = socket.write_all(head.as_bytes()).await;
                        let _ = socket.write_all(&[7u8; 1024]).await;
                        // Held until the fetcher lets go (abort, restart).
                        let _ = socket.read(&mut buf).await;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), seen)
}

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("rcopy");
    c.create_container(&name).await;
    (c, name)
}

/// Get Blob Properties once the copy is no longer pending (the fetch runs
/// on its own; this waits for it, it does not wait for time to pass).
async fn until_copy_ends(c: &Client, path: &str) -> Response {
    for _ in 0..2000 {
        let r = c.head(path).send().await;
        if r.header("x-ms-copy-status").as_deref() != Some("pending") {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{path}: the copy is still pending");
}

async fn until_progress(c: &Client, path: &str, progress: &str) {
    for _ in 0..2000 {
        let r = c.head(path).send().await;
        if r.header("x-ms-copy-progress").as_deref() == Some(progress) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{path}: progress never reached {progress}");
}

#[tokio::test]
async fn the_sas_and_the_bearer_token_reach_the_source() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let (base, seen) = raw_source(Answer::Body(b"hello from elsewhere")).await;
    let source = format!("{base}/c/b.txt?sv=2021-08-06&sig=abc%2Bdef");
    let r = c
        .put(&format!("/{ctr}/dst"))
        .header("x-ms-copy-source", &source)
        .header("x-ms-copy-source-authorization", "Bearer token-123")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.header("x-ms-copy-status").as_deref(), Some("pending"));
    let p = until_copy_ends(&c, &format!("/{ctr}/dst")).await;
    assert_eq!(p.header("x-ms-copy-status").as_deref(), Some("success"));
    assert_eq!(p.header("x-ms-copy-progress").as_deref(), Some("20/20"));
    assert_eq!(p.header("content-type").as_deref(), Some("text/plain"));
    assert_eq!(
        c.get(&format!("/{ctr}/dst")).send().await.body,
        &b"hello from elsewhere"[..]
    );
    let heads = seen.lock().unwrap().clone();
    assert_eq!(heads.len(), 1, "one GET: {heads:?}");
    let head = heads[0].to_ascii_lowercase();
    assert!(
        heads[0].starts_with("GET /c/b.txt?sv=2021-08-06&sig=abc%2Bdef HTTP/1.1\r\n"),
        "{}",
        heads[0]
    );
    assert!(
        head.contains("\r\nauthorization: bearer token-123\r\n"),
        "{head}"
    );
}

#[tokio::test]
async fn only_http_and_https_sources_are_read() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let data_file = format!("file://{}/metadata.sqlite", server.data_dir().display());
    for source in [
        data_file.as_str(),
        "file:///etc/passwd",
        "ftp://127.0.0.1/a/b/c",
    ] {
        let r = c
            .put(&format!("/{ctr}/dst"))
            .header("x-ms-copy-source", source)
            .send()
            .await;
        r.assert_error(400, "InvalidHeaderValue");
        assert!(r.text().contains("x-ms-copy-source"), "{}", r.text());
    }
    let r = c.head(&format!("/{ctr}/dst")).send().await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_sync_copy_checks_source_conditions_against_the_sources_etag() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let (base, _) = raw_source(Answer::Body(b"abc")).await;
    let path = format!("/{ctr}/dst");
    let r = c
        .put(&path)
        .header("x-ms-copy-source", &format!("{base}/x"))
        .header("x-ms-requires-sync", "true")
        .header("x-ms-source-if-match", "\"v2\"")
        .send()
        .await;
    r.assert_error(412, "SourceConditionNotMet");
    let r = c
        .put(&path)
        .header("x-ms-copy-source", &format!("{base}/x"))
        .header("x-ms-requires-sync", "true")
        .header("x-ms-source-if-match", "\"v1\"")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.header("x-ms-copy-status").as_deref(), Some("success"));
    assert_eq!(c.get(&path).send().await.body, &b"abc"[..]);
}

#[tokio::test]
async fn a_copy_from_another_stowage_server() {
    let source_server = TestServer::start().await;
    let src = source_server.client();
    let src_ctr = unique("pub");
    let r = src
        .put(&format!("/{src_ctr}?restype=container"))
        .header("x-ms-blob-public-access", "blob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    src.put_blob(&src_ctr, "big", &data).await;
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let url = format!("{}/{ACCOUNT}/{src_ctr}/big", source_server.base);
    let r = c
        .put(&format!("/{ctr}/dst"))
        .header("x-ms-copy-source", &url)
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let p = until_copy_ends(&c, &format!("/{ctr}/dst")).await;
    assert_eq!(p.header("x-ms-copy-status").as_deref(), Some("success"));
    assert_eq!(p.header("x-ms-copy-source").as_deref(), Some(url.as_str()));
    // The destination carries the source's Content-MD5.
    let source_md5 = src.head(&format!("/{src_ctr}/big")).send().await;
    assert!(source_md5.header("content-md5").is_some());
    assert_eq!(p.header("content-md5"), source_md5.header("content-md5"));
    assert_eq!(c.get(&format!("/{ctr}/dst")).send().await.body, data);
    // A missing blob there: its status and code, synchronously.
    let r = c
        .put(&format!("/{ctr}/dst2"))
        .header(
            "x-ms-copy-source",
            &format!("{}/{ACCOUNT}/{src_ctr}/none", source_server.base),
        )
        .send()
        .await;
    r.assert_error(404, "CannotVerifyCopySource");
    assert!(
        r.text()
            .contains("<CopySourceErrorCode>BlobNotFound</CopySourceErrorCode>"),
        "{}",
        r.text()
    );
}

/// The single-node rule: a restart ends the copies it interrupted. A node
/// starting in cluster mode leaves pending copies alone, since another node
/// may be running them (docs/cluster.md), so this test keeps to a
/// single-node store even when the module runs on PostgreSQL.
#[tokio::test]
async fn a_restart_ends_a_pending_copy_failed() {
    let server = TestServer::start_in(tempfile::tempdir().unwrap(), |c| c, None).await;
    let (c, ctr) = setup(&server).await;
    let (base, _) = raw_source(Answer::Stall).await;
    let path = format!("/{ctr}/dst");
    let r = c
        .put(&path)
        .header("x-ms-copy-source", &format!("{base}/slow"))
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    until_progress(&c, &path, "1024/1048576").await;
    let server = server.restart().await;
    let c = server.client();
    let p = c.head(&path).send().await;
    assert_eq!(p.status, 200);
    assert_eq!(p.header("x-ms-copy-status").as_deref(), Some("failed"));
    assert_eq!(p.header("content-length").as_deref(), Some("0"));
    let why = p.header("x-ms-copy-status-description").unwrap_or_default();
    assert!(why.contains("server restarted"), "{why}");
    // Nothing pending: an abort is refused.
    let id = p.header("x-ms-copy-id").unwrap();
    let r = c
        .put(&format!("{path}?comp=copy&copyid={id}"))
        .header("x-ms-copy-action", "abort")
        .send()
        .await;
    r.assert_error(409, "NoPendingCopyOperation");
}

#[tokio::test]
async fn a_copy_from_another_stowage_keeps_a_page_or_append_blob_type() {
    let source_server = TestServer::start().await;
    let src = source_server.client();
    let src_ctr = unique("pub");
    let r = src
        .put(&format!("/{src_ctr}?restype=container"))
        .header("x-ms-blob-public-access", "blob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    // A page blob of 4 pages, the second written, sequence number 5.
    let r = src
        .put(&format!("/{src_ctr}/pages"))
        .header("x-ms-blob-type", "PageBlob")
        .header("x-ms-blob-content-length", "2048")
        .header("x-ms-blob-sequence-number", "5")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = src
        .put(&format!("/{src_ctr}/pages?comp=page"))
        .header("x-ms-page-write", "update")
        .header("x-ms-range", "bytes=512-1023")
        .body(vec![7u8; 512])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    // An append blob of two blocks.
    let r = src
        .put(&format!("/{src_ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    for block in [&b"one,"[..], b"two"] {
        let r = src
            .put(&format!("/{src_ctr}/log?comp=appendblock"))
            .body(block.to_vec())
            .send()
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }

    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let copy = |blob: &'static str, dest: &'static str| {
        let url = format!("{}/{ACCOUNT}/{src_ctr}/{blob}", source_server.base);
        let c = c.clone();
        let path = format!("/{ctr}/{dest}");
        async move {
            let r = c.put(&path).header("x-ms-copy-source", &url).send().await;
            assert_eq!(r.status, 202, "{}", r.text());
            let p = until_copy_ends(&c, &path).await;
            assert_eq!(p.header("x-ms-copy-status").as_deref(), Some("success"));
            p
        }
    };
    let p = copy("pages", "pages-copy").await;
    assert_eq!(p.header("x-ms-blob-type").as_deref(), Some("PageBlob"));
    assert_eq!(p.header("x-ms-blob-sequence-number").as_deref(), Some("5"));
    assert_eq!(p.header("content-length").as_deref(), Some("2048"));
    let mut want = vec![0u8; 2048];
    want[512..1024].fill(7);
    assert_eq!(c.get(&format!("/{ctr}/pages-copy")).send().await.body, want);
    // A page blob: Put Page works on it.
    let r = c
        .put(&format!("/{ctr}/pages-copy?comp=page"))
        .header("x-ms-page-write", "update")
        .header("x-ms-range", "bytes=0-511")
        .body(vec![1u8; 512])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());

    let p = copy("log", "log-copy").await;
    assert_eq!(p.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
    assert_eq!(
        p.header("x-ms-blob-committed-block-count").as_deref(),
        Some("2")
    );
    let r = c
        .put(&format!("/{ctr}/log-copy?comp=appendblock"))
        .body(b",three".to_vec())
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        c.get(&format!("/{ctr}/log-copy")).send().await.body,
        &b"one,two,three"[..]
    );

    // An existing destination of another type: 409 InvalidBlobType.
    c.put_blob(&ctr, "block", b"x").await;
    let r = c
        .put(&format!("/{ctr}/block"))
        .header(
            "x-ms-copy-source",
            &format!("{}/{ACCOUNT}/{src_ctr}/pages", source_server.base),
        )
        .send()
        .await;
    r.assert_error(409, "InvalidBlobType");
}

#[tokio::test]
async fn page_and_append_writes_to_a_pending_copy_are_refused() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    for (kind, write) in [("AppendBlob", "appendblock"), ("PageBlob", "page")] {
        let (base, _) = raw_source(Answer::StallAs(kind)).await;
        let path = format!("/{ctr}/{kind}");
        let r = c
            .put(&path)
            .header("x-ms-copy-source", &format!("{base}/slow"))
            .send()
            .await;
        assert_eq!(r.status, 202, "{}", r.text());
        until_progress(&c, &path, "1024/1048576").await;
        let p = c.head(&path).send().await;
        assert_eq!(p.header("x-ms-blob-type").as_deref(), Some(kind));
        let mut w = c.put(&format!("{path}?comp={write}")).body(vec![1u8; 512]);
        if write == "page" {
            w = w
                .header("x-ms-page-write", "update")
                .header("x-ms-range", "bytes=0-511");
        }
        w.send().await.assert_error(409, "PendingCopyOperation");
        let id = p.header("x-ms-copy-id").unwrap();
        let r = c
            .put(&format!("{path}?comp=copy&copyid={id}"))
            .header("x-ms-copy-action", "abort")
            .send()
            .await;
        assert_eq!(r.status, 204, "{}", r.text());
    }
}
