//! Copy sources for tests: HTTP servers on loopback that answer the way a
//! test needs.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A loopback HTTP source that declares 1 MiB, sends 1 KiB and then holds
/// the connection open: a copy from it stays pending. Returns the URL of
/// `path` on it (any path answers the same). Runs on the calling runtime.
pub async fn stalling_source(path: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n";
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&[7u8; 1024]).await;
                let _ = socket.read(&mut buf).await;
            });
        }
    });
    format!("http://{addr}/{path}")
}
