//! `healthcheck`: whether a server answers on its port, for the container
//! image's HEALTHCHECK (a distroless image has no shell or curl to ask).

use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::time::Duration;

/// How long the probe waits to connect, and then for the answer.
const TIMEOUT: Duration = Duration::from_secs(3);

/// Connects to `host:port` and sends a request; any answer (an HTTP
/// status line, or a TLS alert from a server with `--cert`) means the
/// server is up.
///
/// # Errors
/// No connection, or no answer within the timeout.
pub(crate) fn probe(host: &str, port: u16) -> std::io::Result<()> {
    let addr = (host, port).to_socket_addrs()?.next().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no address for {host}"),
        )
    })?;
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT)?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    stream.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut first = [0u8; 16];
    let n = stream.read(&mut first)?;
    if n == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the server closed the connection without answering",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_that_answers_is_healthy_and_a_closed_port_is_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut buf = [0u8; 256];
            let _ = conn.read(&mut buf).unwrap();
            conn.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").unwrap();
        });
        probe("127.0.0.1", port).unwrap();
        server.join().unwrap();
        // Nothing listens there any more.
        assert!(probe("127.0.0.1", port).is_err());
    }
}
