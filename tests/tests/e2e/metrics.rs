//! Metrics and request logs (docs/operations.md): a known sequence of
//! requests, then the scrape of `/metrics` counts exactly those; a failed
//! request is found in the access log by its `x-ms-request-id` (plain and
//! JSON); the debug log shows each request's headers with the Shared Key
//! signature and SAS signatures redacted.

use std::time::Duration;

use stowage_server::observe::AccessLogFormat;
use stowage_tests::{ACCOUNT, KEY, TestServer, blob_sas};

/// The value of the sample `series` (name and labels exactly as the
/// scrape writes them), if the scrape has it.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.parse().ok()
    })
}

async fn scrape(server: &TestServer) -> String {
    let url = server.metrics_url.as_deref().expect("metrics");
    let r = reqwest::get(url).await.expect("scrape");
    assert_eq!(r.status(), 200);
    let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    r.text().await.expect("scrape body")
}

fn requests(operation: &str, class: &str, code: &str) -> String {
    format!(
        "stowage_requests_total{{operation=\"{operation}\",status_class=\"{class}\",error_code=\"{code}\"}}"
    )
}

#[tokio::test]
async fn a_scrape_counts_a_known_sequence_of_requests() {
    let server = TestServer::start_observed(AccessLogFormat::Plain).await;
    let client = server.client();
    client.create_container("box").await;
    let small = vec![7u8; 4096];
    let large = vec![9u8; 100 * 1024];
    let etag = client.put_blob("box", "small", &small).await.etag();
    client.put_blob("box", "large", &large).await;
    for _ in 0..2 {
        let r = client.get("/box/small").send().await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(client.get("/box/large").send().await.status, 200);
    client
        .get("/box/missing")
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    client
        .put("/box/small")
        .header("x-ms-blob-type", "BlockBlob")
        .header("if-none-match", &etag)
        .body(small.clone())
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    assert_eq!(client.head("/box/small").send().await.status, 200);
    let lease = client
        .put("/box/large?comp=lease")
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .send()
        .await;
    assert_eq!(lease.status, 201, "{}", lease.text());
    // No credentials: refused before the dispatch, still named.
    client
        .get("/box/small")
        .anonymous()
        .send()
        .await
        .assert_error(404, "ResourceNotFound");

    let text = scrape(&server).await;
    let table: &[(String, f64)] = &[
        (requests("CreateContainer", "2xx", ""), 1.0),
        (requests("PutBlob", "2xx", ""), 2.0),
        (requests("PutBlob", "4xx", "ConditionNotMet"), 1.0),
        (requests("GetBlob", "2xx", ""), 3.0),
        (requests("GetBlob", "4xx", "BlobNotFound"), 1.0),
        (requests("GetBlob", "4xx", "ResourceNotFound"), 1.0),
        (requests("GetBlobProperties", "2xx", ""), 1.0),
        (requests("LeaseBlob", "2xx", ""), 1.0),
        (
            "stowage_request_duration_seconds_count{operation=\"GetBlob\"}".into(),
            5.0,
        ),
        (
            "stowage_request_duration_seconds_count{operation=\"PutBlob\"}".into(),
            3.0,
        ),
        // Both bodies and the refused one (its body was sent).
        (
            "stowage_ingress_bytes_total{operation=\"PutBlob\"}".into(),
            (4096 + 100 * 1024 + 4096) as f64,
        ),
        (
            "stowage_egress_bytes_total{operation=\"GetBlob\"}".into(),
            // Two small reads, one large, and the two error bodies.
            f64::NAN,
        ),
        (
            "stowage_containers{account=\"devstoreaccount1\"}".into(),
            1.0,
        ),
        ("stowage_blobs{account=\"devstoreaccount1\"}".into(), 2.0),
        (
            "stowage_blob_bytes{account=\"devstoreaccount1\"}".into(),
            (4096 + 100 * 1024) as f64,
        ),
        ("stowage_active_leases{resource=\"blob\"}".into(), 1.0),
        ("stowage_active_leases{resource=\"container\"}".into(), 0.0),
        // The large blob is the one extent outside the database... and the
        // small one is an inline extent: both are referred to.
        ("stowage_extents".into(), 2.0),
        ("stowage_garbage_extents".into(), 0.0),
        (
            "stowage_object_store_duration_seconds_count{call=\"put\"}".into(),
            1.0,
        ),
        (
            "stowage_object_store_duration_seconds_count{call=\"get\"}".into(),
            1.0,
        ),
    ];
    for (series, want) in table {
        let got = sample(&text, series).unwrap_or_else(|| panic!("{series} missing:\n{text}"));
        if want.is_nan() {
            assert!(got > (2 * 4096 + 100 * 1024) as f64, "{series}: {got}");
        } else {
            assert_eq!(got, *want, "{series}\n{text}");
        }
    }
    for call in ["read", "write"] {
        let series = format!("stowage_metadata_duration_seconds_count{{call=\"{call}\"}}");
        assert!(
            sample(&text, &series).unwrap_or(0.0) > 0.0,
            "{series}:\n{text}"
        );
    }
    assert!(text.ends_with("# EOF\n"));

    // The store's contents are counted at most every 15 s of the server's
    // clock: a new blob shows once the clock has moved on.
    client.put_blob("box", "third", b"abc").await;
    let blobs = "stowage_blobs{account=\"devstoreaccount1\"}";
    assert_eq!(sample(&scrape(&server).await, blobs), Some(2.0));
    server.clock.advance(Duration::from_secs(15));
    let text = scrape(&server).await;
    assert_eq!(sample(&text, blobs), Some(3.0));
    assert_eq!(sample(&text, &requests("PutBlob", "2xx", "")), Some(3.0));
}

/// Makes a request that fails with 404, returns its `x-ms-request-id`, and
/// the access log's lines.
async fn failed_request_and_log(server: &TestServer) -> (String, Vec<String>) {
    let client = server.client();
    client.create_container("box").await;
    client.put_blob("box", "b", b"hello").await;
    let r = client
        .get("/box/missing")
        .header("x-ms-client-request-id", "find me")
        .send()
        .await;
    r.assert_error(404, "BlobNotFound");
    let id = r.header("x-ms-request-id").expect("a request id");
    let log = std::fs::read_to_string(server.log_path("access.log")).expect("access log");
    (id, log.lines().map(str::to_owned).collect())
}

#[tokio::test]
async fn a_failed_request_is_found_in_the_plain_access_log_by_its_request_id() {
    let server = TestServer::start_observed(AccessLogFormat::Plain).await;
    let (id, lines) = failed_request_and_log(&server).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    let found: Vec<&String> = lines.iter().filter(|l| l.contains(&id)).collect();
    assert_eq!(found.len(), 1, "{lines:?}");
    let fields: Vec<&str> = found[0].split(' ').collect();
    assert_eq!(
        fields.len(),
        12,
        "time account operation status code in out latency id client-id method path: {}",
        found[0]
    );
    assert_eq!(fields[0], "2024-09-03T10:15:07.0000000Z");
    assert_eq!(
        &fields[1..6],
        [ACCOUNT, "GetBlob", "404", "BlobNotFound", "0"]
    );
    assert!(fields[6].parse::<u64>().unwrap() > 0, "an error body");
    assert!(fields[7].ends_with("ms"));
    assert_eq!(fields[8], id);
    assert_eq!(fields[9], "find%20me");
    assert_eq!(
        &fields[10..],
        ["GET", &format!("/{ACCOUNT}/box/missing") as &str]
    );
    // The successful put: no error code, its body counted in.
    let put: Vec<&str> = lines[1].split(' ').collect();
    assert_eq!(&put[2..7], ["PutBlob", "201", "-", "5", "0"]);
}

#[tokio::test]
async fn a_failed_request_is_found_in_the_json_access_log_by_its_request_id() {
    let server = TestServer::start_observed(AccessLogFormat::Json).await;
    let (id, lines) = failed_request_and_log(&server).await;
    assert_eq!(lines.len(), 3, "{lines:?}");
    let records: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let found: Vec<&serde_json::Value> = records.iter().filter(|r| r["request_id"] == id).collect();
    assert_eq!(found.len(), 1, "{lines:?}");
    let r = found[0];
    assert_eq!(r["time"], "2024-09-03T10:15:07.0000000Z");
    assert_eq!(r["account"], ACCOUNT);
    assert_eq!(r["operation"], "GetBlob");
    assert_eq!(r["status"], 404);
    assert_eq!(r["error_code"], "BlobNotFound");
    assert_eq!(r["client_request_id"], "find me");
    assert_eq!(r["method"], "GET");
    assert_eq!(r["path"], format!("/{ACCOUNT}/box/missing"));
    assert!(r["latency_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(records[1]["operation"], "PutBlob");
    assert_eq!(records[1]["error_code"], serde_json::Value::Null);
    assert_eq!(records[1]["bytes_in"], 5);
}

#[tokio::test]
async fn the_debug_log_shows_headers_and_errors_but_no_credentials() {
    let server = TestServer::start_observed(AccessLogFormat::Plain).await;
    let client = server.client();
    client.create_container("box").await;
    client.put_blob("box", "b", b"hello").await;
    let sas = blob_sas(ACCOUNT, KEY, "box", "b", "r", "2024-09-04T00:00:00Z");
    let sig = sas.split("sig=").nth(1).expect("a signature").to_owned();
    let r = client
        .get(&format!("/box/b?{sas}"))
        .anonymous()
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let failed = client.get("/box/missing").send().await;
    failed.assert_error(404, "BlobNotFound");
    let id = failed.header("x-ms-request-id").unwrap();

    let log = std::fs::read_to_string(server.log_path("debug.log")).expect("debug log");
    // The failed request: its headers going in, its answer and why.
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(&id)).collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].contains("request"), "{}", lines[0]);
    assert!(lines[0].contains("x-ms-version: "), "{}", lines[0]);
    assert!(
        lines[0].contains(&format!("authorization: SharedKey {ACCOUNT}:REDACTED")),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("answer") && lines[1].contains("status=404"));
    assert!(
        lines[1].contains("x-ms-error-code: BlobNotFound"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("error="), "{}", lines[1]);
    // The SAS request is there, its signature is not.
    assert!(log.contains("sig=REDACTED"), "{log}");
    let decoded = percent_encoding::percent_decode_str(&sig)
        .decode_utf8()
        .unwrap()
        .into_owned();
    for secret in [sig.as_str(), decoded.as_str(), KEY] {
        assert!(!log.contains(secret), "{secret} in the debug log");
    }
    // No Shared Key signature in clear on any request.
    for (i, _) in log.match_indices("SharedKey ") {
        let rest = &log[i..];
        assert!(
            rest.starts_with(&format!("SharedKey {ACCOUNT}:REDACTED")),
            "{}",
            &rest[..rest.len().min(80)]
        );
    }
}
