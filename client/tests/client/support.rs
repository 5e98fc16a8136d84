//! A server, a client on a manual clock kept in step with the server's, and
//! small helpers.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use stowage_client::{
    BlobServiceClient, ClientOptions, ConnectionString, ContainerClient, ManualClock, Metadata,
    RetryPolicy,
};
use stowage_tests::{TestServer, unique};

/// A running server and a client signing for its development account.
pub struct Env {
    pub server: TestServer,
    pub clock: Arc<ManualClock>,
    pub service: BlobServiceClient,
}

impl Env {
    pub async fn start() -> Env {
        Env::on(TestServer::start().await).await
    }

    /// On a server whose deleted containers stay restorable for `days`.
    pub async fn start_with_container_retention(days: u32) -> Env {
        Env::on(TestServer::start_with_container_retention(days).await).await
    }

    /// On a server with blob versioning on.
    pub async fn start_with_versioning() -> Env {
        Env::on(TestServer::start_with_versioning().await).await
    }

    /// On `server` (for a test that set it up itself).
    pub async fn on(server: TestServer) -> Env {
        let clock = Arc::new(ManualClock::new(server_time(&server).await));
        let service = client_for(&server.base, clock.clone());
        Env {
            server,
            clock,
            service,
        }
    }

    /// Moves both clocks, the server's and the client's, by `d`.
    pub fn advance(&self, d: Duration) {
        self.server.clock.advance(d);
        self.clock.advance(d);
    }

    /// The shared current time.
    pub fn now(&self) -> SystemTime {
        use stowage_client::Clock;
        self.clock.now()
    }

    /// A new, created container with a unique name.
    pub async fn container(&self, prefix: &str) -> ContainerClient {
        let container = self.service.container(&unique(prefix));
        container
            .create(&Metadata::new(), None)
            .await
            .expect("create container");
        container
    }
}

/// A client for the development account at `base` (`http://host:port`)
/// whose requests are dated by `clock`; retries back off without waiting.
pub fn client_for(base: &str, clock: Arc<ManualClock>) -> BlobServiceClient {
    let connection = ConnectionString::parse(&format!(
        "AccountName=devstoreaccount1;AccountKey={};BlobEndpoint={base}/devstoreaccount1",
        stowage_client::DEVELOPMENT_KEY
    ))
    .expect("connection string");
    let options = ClientOptions::default()
        .with_clock(clock)
        .with_retry_policy(RetryPolicy::default().with_initial_backoff(Duration::ZERO));
    BlobServiceClient::new(&connection, options).expect("client")
}

/// The server's clock, read from the Last-Modified of a container created
/// by the test crate's own client (which signs with the server's clock).
///
/// The `Date` response header cannot serve: it is the wall clock, not the
/// server's injected clock.
async fn server_time(server: &TestServer) -> SystemTime {
    let name = unique("clock");
    let response = server
        .client()
        .put(&format!("/{name}?restype=container"))
        .send()
        .await;
    assert_eq!(response.status, 201, "{}", response.text());
    let date = response.header("last-modified").expect("Last-Modified");
    httpdate::parse_http_date(&date).expect("an HTTP date")
}

/// Waits (a bounded number of short real-time polls) until `condition`
/// holds: for background tasks to act on a clock that was just advanced.
pub async fn eventually<F, Fut>(what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..500 {
        if condition().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// Bytes `0, 1, …, 250, 0, 1, …` of length `n`.
pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}
