//! A round-robin HTTP proxy in front of the nodes of a test cluster
//! (docs/cluster.md#testing-a-cluster): every request goes to the next
//! node, whatever connection it came on, so that a client keeping its
//! connection alive still spreads its requests over all the nodes.
//!
//! Requests and answers pass through as they are (method, path, query,
//! headers with the case of their names, bodies streamed both ways), except the `expect` header, which
//! the proxy answers itself (HTTP/1.1 `100 Continue` once it reads the
//! body). A request for the manual test clock (`POST /_stowage/test-clock`)
//! goes to every node, so that their clocks move together. Requests under
//! [`CONTROL_PATH`] are the cluster's own, answered by whoever runs the
//! proxy ([`serve_with_control`]; the `stowage-test-cluster` launcher
//! restarts nodes this way).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The path of the test clock control of a node started with
/// `--testClock` (the server's `test_clock` module).
pub const TEST_CLOCK_PATH: &str = "/_stowage/test-clock";

/// The prefix of the paths that go to [`serve_with_control`]'s control
/// channel instead of a node.
pub const CONTROL_PATH: &str = "/_stowage/test-cluster/";

/// A request for the proxy's owner: the path and query after
/// [`CONTROL_PATH`], and where to send the answer (`Ok` is a `200` with
/// that text, `Err` a `500`).
pub type ControlRequest = (String, tokio::sync::oneshot::Sender<Result<String, String>>);

type Body = BoxBody<Bytes, hyper::Error>;

/// The proxy's state: the nodes and whose turn it is.
struct Nodes {
    addrs: Vec<SocketAddr>,
    next: AtomicUsize,
    client: Client<HttpConnector, Body>,
    control: Option<tokio::sync::mpsc::Sender<ControlRequest>>,
}

/// Serves `listener` until the returned future is dropped or the listener
/// fails, sending each request to the next of `nodes`.
///
/// # Panics
/// `nodes` is empty.
pub async fn serve(listener: tokio::net::TcpListener, nodes: Vec<SocketAddr>) {
    serve_with_control(listener, nodes, None).await;
}

/// [`serve`], and requests under [`CONTROL_PATH`] (any method, the body
/// ignored) sent to `control` and answered with what comes back; without
/// `control` they go to a node like any other.
///
/// # Panics
/// `nodes` is empty.
pub async fn serve_with_control(
    listener: tokio::net::TcpListener,
    nodes: Vec<SocketAddr>,
    control: Option<tokio::sync::mpsc::Sender<ControlRequest>>,
) {
    assert!(!nodes.is_empty(), "a proxy needs nodes");
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let nodes = Arc::new(Nodes {
        addrs: nodes,
        next: AtomicUsize::new(0),
        client: Client::builder(TokioExecutor::new())
            .http1_preserve_header_case(true)
            .http1_title_case_headers(false)
            .build(connector),
        control,
    });
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let _ = stream.set_nodelay(true);
        let nodes = nodes.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let nodes = nodes.clone();
                async move { Ok::<_, std::convert::Infallible>(nodes.forward(req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .preserve_header_case(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

impl Nodes {
    async fn forward(&self, req: Request<Incoming>) -> Response<Body> {
        if req.uri().path() == TEST_CLOCK_PATH {
            return self.broadcast(req).await;
        }
        if let (Some(control), Some(what)) =
            (&self.control, req.uri().path().strip_prefix(CONTROL_PATH))
        {
            let what = match req.uri().query() {
                Some(query) => format!("{what}?{query}"),
                None => what.to_owned(),
            };
            let (answer, answered) = tokio::sync::oneshot::channel();
            if control.send((what, answer)).await.is_err() {
                return text(StatusCode::SERVICE_UNAVAILABLE, "the cluster is stopping");
            }
            return match answered.await {
                Ok(Ok(body)) => text(StatusCode::OK, &body),
                Ok(Err(e)) => text(StatusCode::INTERNAL_SERVER_ERROR, &e),
                Err(_) => text(StatusCode::SERVICE_UNAVAILABLE, "the cluster is stopping"),
            };
        }
        let node = self.addrs[self.next.fetch_add(1, Ordering::Relaxed) % self.addrs.len()];
        let (mut parts, body) = req.into_parts();
        parts.headers.remove(hyper::header::EXPECT);
        parts.uri = to_node(&parts.uri, node);
        match self
            .client
            .request(Request::from_parts(parts, body.boxed()))
            .await
        {
            Ok(answer) => answer.map(BodyExt::boxed),
            Err(e) => bad_gateway(&format!("node {node}: {e}")),
        }
    }

    /// Sends a body-less request to every node; answers the last node's
    /// answer, or the first failure.
    async fn broadcast(&self, req: Request<Incoming>) -> Response<Body> {
        let (parts, _) = req.into_parts();
        let mut last = None;
        for &node in &self.addrs {
            let mut one = Request::builder()
                .method(parts.method.clone())
                .uri(to_node(&parts.uri, node));
            for (name, value) in &parts.headers {
                if name != hyper::header::CONTENT_LENGTH && name != hyper::header::EXPECT {
                    one = one.header(name, value);
                }
            }
            let one = one
                .body(Empty::new().map_err(|never| match never {}).boxed())
                .expect("a request built from a valid one");
            match self.client.request(one).await {
                Ok(answer) if answer.status().is_success() => last = Some(answer),
                Ok(answer) => return answer.map(BodyExt::boxed),
                Err(e) => return bad_gateway(&format!("node {node}: {e}")),
            }
        }
        last.expect("at least one node").map(BodyExt::boxed)
    }
}

/// `uri`'s path and query on `node`.
fn to_node(uri: &hyper::Uri, node: SocketAddr) -> hyper::Uri {
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    format!("http://{node}{path}")
        .parse()
        .expect("a node address and a request path make a URI")
}

fn bad_gateway(message: &str) -> Response<Body> {
    text(StatusCode::BAD_GATEWAY, message)
}

/// A `text/plain` answer.
fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut answer = Response::new(
        Full::new(Bytes::from(message.to_owned()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *answer.status_mut() = status;
    answer
}

/// A proxy running on a thread and runtime of its own (so that a test's
/// runtime may block without stopping it), stopped when dropped.
pub struct RoundRobin {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RoundRobin {
    /// Starts a proxy on an ephemeral port of 127.0.0.1 in front of `nodes`.
    ///
    /// # Panics
    /// No port, no thread, or no nodes.
    pub fn start(nodes: Vec<SocketAddr>) -> RoundRobin {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("proxy address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("roundrobin".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("proxy runtime");
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("proxy listener");
                    tokio::select! {
                        () = serve(listener, nodes) => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("proxy thread");
        RoundRobin {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Where the proxy listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
