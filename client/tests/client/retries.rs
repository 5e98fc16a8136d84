//! Retries against a scripted HTTP server on the loopback interface: which
//! answers are retried, and how many times.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use stowage_client::{
    BlobServiceClient, ClientOptions, ConnectionString, Credentials, DeleteSnapshots, Error,
    ErrorCode, RetryPolicy,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Debug, Clone, Copy)]
enum Reply {
    /// Answer with this status and error code.
    Status(u16, &'static str),
    /// Read the request and never answer.
    Hang,
    /// Write exactly these bytes, then close.
    Raw(&'static str),
}

struct Scripted {
    base: String,
    requests: Arc<AtomicUsize>,
    /// Each request's head (request line and headers), lowercased.
    heads: Arc<Mutex<Vec<String>>>,
}

/// A server answering the n-th request with `script[n]` (then 500s).
async fn scripted(script: &[Reply]) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let script = Arc::new(Mutex::new(script.iter().copied().collect::<VecDeque<_>>()));
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let script = script.clone();
            let counter = counter.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                counter.fetch_add(1, Ordering::SeqCst);
                seen.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).to_lowercase());
                let reply = script
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or(Reply::Status(500, "InternalError"));
                match reply {
                    Reply::Hang => {
                        // Hold the connection open without answering.
                        std::future::pending::<()>().await;
                    }
                    Reply::Raw(bytes) => {
                        let _ = socket.write_all(bytes.as_bytes()).await;
                        let _ = socket.shutdown().await;
                    }
                    Reply::Status(status, code) => {
                        let answer = format!(
                            "HTTP/1.1 {status} Scripted\r\ncontent-length: 0\r\nx-ms-error-code: {code}\r\nx-ms-request-id: r\r\nconnection: close\r\n\r\n"
                        );
                        let _ = socket.write_all(answer.as_bytes()).await;
                        let _ = socket.shutdown().await;
                    }
                }
            });
        }
    });
    Scripted {
        base,
        requests,
        heads,
    }
}

fn client(base: &str, attempts: u32) -> BlobServiceClient {
    let connection = ConnectionString::new(
        &format!("{base}/devstoreaccount1"),
        Credentials::SharedKey {
            account: "devstoreaccount1".into(),
            key: b"key".to_vec(),
        },
    );
    let options = ClientOptions::default()
        .with_read_timeout(Duration::from_millis(300))
        .with_retry_policy(
            RetryPolicy::default()
                .with_max_attempts(attempts)
                .with_initial_backoff(Duration::ZERO)
                .with_jitter_seed(1),
        );
    BlobServiceClient::new(&connection, options).unwrap()
}

async fn delete(service: &BlobServiceClient) -> Result<(), Error> {
    service
        .container("c")
        .blob("b")
        .delete(DeleteSnapshots::None, &Default::default())
        .await
}

#[tokio::test]
async fn server_errors_are_retried_until_one_succeeds() {
    let server = scripted(&[
        Reply::Status(503, "ServerBusy"),
        Reply::Status(500, "InternalError"),
        Reply::Status(202, ""),
    ])
    .await;
    delete(&client(&server.base, 4)).await.unwrap();
    assert_eq!(server.requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    let table = [
        (412, "ConditionNotMet", ErrorCode::ConditionNotMet),
        (409, "LeaseAlreadyPresent", ErrorCode::LeaseAlreadyPresent),
        (404, "BlobNotFound", ErrorCode::BlobNotFound),
        (400, "InvalidHeaderValue", ErrorCode::InvalidHeaderValue),
        (403, "AuthenticationFailed", ErrorCode::AuthenticationFailed),
        (501, "NotImplemented", ErrorCode::NotImplemented),
    ];
    for (status, code, expected) in table {
        let server = scripted(&[Reply::Status(status, code), Reply::Status(202, "")]).await;
        let err = delete(&client(&server.base, 4)).await.unwrap_err();
        assert_eq!(err.status(), Some(status));
        assert_eq!(err.code(), Some(&expected));
        assert_eq!(
            server.requests.load(Ordering::SeqCst),
            1,
            "{status} was retried"
        );
    }
}

#[tokio::test]
async fn attempts_are_bounded() {
    let server = scripted(&[Reply::Status(503, "ServerBusy"); 10]).await;
    let err = delete(&client(&server.base, 3)).await.unwrap_err();
    assert_eq!(err.status(), Some(503));
    assert!(err.has_code(&ErrorCode::ServerBusy));
    assert_eq!(server.requests.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn refused_connections_are_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    match delete(&client(&base, 3)).await {
        Err(Error::Transport { attempts, .. }) => assert_eq!(attempts, 3),
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_timed_out_attempt_is_retried() {
    let server = scripted(&[Reply::Hang, Reply::Status(202, "")]).await;
    delete(&client(&server.base, 2)).await.unwrap();
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

const CUT_OFF: &str = "HTTP/1.1 200 OK\r\ncontent-length: 10\r\netag: \"0x1\"\r\nlast-modified: Tue, 03 Sep 2024 10:15:07 GMT\r\nx-ms-blob-type: BlockBlob\r\nconnection: close\r\n\r\n0123";
const REST: &str = "HTTP/1.1 206 Partial Content\r\ncontent-length: 6\r\ncontent-range: bytes 4-9/10\r\netag: \"0x1\"\r\nlast-modified: Tue, 03 Sep 2024 10:15:07 GMT\r\nx-ms-blob-type: BlockBlob\r\nconnection: close\r\n\r\n456789";

#[tokio::test]
async fn a_download_cut_off_mid_body_continues_from_the_next_byte_of_the_same_version() {
    let server = scripted(&[Reply::Raw(CUT_OFF), Reply::Raw(REST)]).await;
    let blob = client(&server.base, 3).container("c").blob("b");
    let bytes = blob.download_bytes().await.unwrap();
    assert_eq!(&bytes[..], b"0123456789");
    let heads = server.heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 2);
    assert!(!heads[0].contains("x-ms-range"), "{}", heads[0]);
    assert!(
        heads[1].contains("x-ms-range: bytes=4-9\r\n"),
        "{}",
        heads[1]
    );
    assert!(heads[1].contains("if-match: \"0x1\"\r\n"), "{}", heads[1]);
}

#[tokio::test]
async fn a_download_whose_blob_changed_before_the_continuation_fails() {
    let server = scripted(&[Reply::Raw(CUT_OFF), Reply::Status(412, "ConditionNotMet")]).await;
    let blob = client(&server.base, 3).container("c").blob("b");
    let err = blob.download_bytes().await.unwrap_err();
    assert!(err.has_code(&ErrorCode::ConditionNotMet), "{err}");
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_download_cut_off_without_retries_left_reports_the_break() {
    let server = scripted(&[Reply::Raw(CUT_OFF)]).await;
    let blob = client(&server.base, 1).container("c").blob("b");
    match blob.download_bytes().await {
        Err(Error::Transport { attempts: 1, .. }) => {}
        other => panic!("expected a transport error, got {other:?}"),
    }
}
