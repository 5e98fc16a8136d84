//! The examples find their server through the first argument or the
//! environment (`examples/common`), so they run against any port: the
//! resolution order, the connection string each value stands for, and a
//! client made from an endpoint on a random port reaching that server.

use std::sync::Arc;

use stowage_client::{BlobServiceClient, ClientOptions, ConnectionString, ManualClock, Metadata};
use stowage_tests::{TestServer, epoch, unique};

#[path = "../examples/common/mod.rs"]
#[allow(dead_code)] // `service()` reads the real process's arguments.
mod common;

#[test]
fn the_argument_wins_then_the_endpoint_then_the_connection_string() {
    let env = |endpoint: Option<&'static str>, conn: Option<&'static str>| {
        move |name: &str| match name {
            "STOWAGE_BLOB_ENDPOINT" => endpoint.map(str::to_owned),
            "AZURE_STORAGE_CONNECTION_STRING" => conn.map(str::to_owned),
            other => panic!("reads {other}"),
        }
    };
    const ARG: &str = "http://127.0.0.1:1/devstoreaccount1";
    // (first argument, STOWAGE_BLOB_ENDPOINT, AZURE_STORAGE_CONNECTION_STRING, value)
    type Row = [Option<&'static str>; 4];
    let table: [Row; 5] = [
        [Some(ARG), Some("E"), Some("C"), Some(ARG)],
        [None, Some("E"), Some("C"), Some("E")],
        [None, None, Some("C"), Some("C")],
        [None, None, None, None],
        [Some(ARG), None, None, Some(ARG)],
    ];
    for [arg, endpoint, conn, want] in table {
        let got = common::endpoint_value(arg.map(str::to_owned), env(endpoint, conn));
        assert_eq!(got.as_deref(), want, "{arg:?} {endpoint:?} {conn:?}");
    }
}

#[test]
fn each_value_stands_for_a_connection_string() {
    // Nothing (or blanks): the emulator's default.
    for value in [None, Some(""), Some("  ")] {
        let s = common::connection_string(value.map(str::to_owned));
        let parsed = ConnectionString::parse(&s).unwrap();
        assert_eq!(parsed, ConnectionString::development(), "{value:?}");
        assert_eq!(
            parsed.blob_endpoint(),
            "http://127.0.0.1:10000/devstoreaccount1"
        );
    }
    // An endpoint URL: that endpoint, its last segment as the account,
    // signed with the development key.
    for (value, endpoint) in [
        (
            "http://127.0.0.1:10010/devstoreaccount1",
            "http://127.0.0.1:10010/devstoreaccount1",
        ),
        ("http://localhost:9/acct2/", "http://localhost:9/acct2"),
    ] {
        let s = common::connection_string(Some(value.to_owned()));
        let parsed = ConnectionString::parse(&s).unwrap();
        assert_eq!(parsed.blob_endpoint(), endpoint, "{value}");
        let account = endpoint.rsplit('/').next().unwrap();
        assert!(s.contains(&format!("AccountName={account};")), "{s}");
        assert!(s.contains(stowage_client::DEVELOPMENT_KEY), "{s}");
    }
    // A value with `=` is a whole connection string, used as given.
    let whole = "AccountName=a;AccountKey=a2V5;BlobEndpoint=http://h:1/a";
    assert_eq!(common::connection_string(Some(whole.to_owned())), whole);
}

#[tokio::test]
async fn an_endpoint_on_any_port_reaches_that_server() {
    let server = TestServer::start().await;
    let endpoint = format!("{}/devstoreaccount1", server.base);
    assert!(!endpoint.contains(":10000/"), "{endpoint}");
    let value = common::endpoint_value(Some(endpoint), |_| None);
    let connection = ConnectionString::parse(&common::connection_string(value)).unwrap();
    // The test server's clock starts at a fixed instant; the client signs
    // with the same time.
    let options = ClientOptions::default().with_clock(Arc::new(ManualClock::new(epoch())));
    let service = BlobServiceClient::new(&connection, options).unwrap();
    let name = unique("example");
    service
        .container(&name)
        .create(&Metadata::new(), None)
        .await
        .expect("create through the example's endpoint");
    let r = server
        .client()
        .get(&format!("/{name}?restype=container"))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
}
