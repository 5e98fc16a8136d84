//! HTTPS with `--cert` / `--key`: a certificate generated in the test, the
//! real binary, and a client that trusts only that certificate.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::SystemTime;

use stowage_server::auth::shared_key::{RequestView, Scheme, sign, string_to_sign};

const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const VERSION: &str = "2025-11-05";

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn signed(
    client: &reqwest::Client,
    base: &str,
    method: reqwest::Method,
    path: &str,
    extra: &[(&str, &str)],
    body: &'static [u8],
) -> reqwest::RequestBuilder {
    let mut headers: Vec<(String, String)> = vec![
        (
            "x-ms-date".into(),
            httpdate::fmt_http_date(SystemTime::now()),
        ),
        ("x-ms-version".into(), VERSION.into()),
        ("content-length".into(), body.len().to_string()),
    ];
    headers.extend(extra.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    let (raw_path, raw_query) = path.split_once('?').unwrap_or((path, ""));
    let view = RequestView {
        method: method.as_str(),
        raw_path,
        raw_query,
        headers: &headers,
    };
    let sts = string_to_sign(&view, "devstoreaccount1", Scheme::SharedKey, VERSION).unwrap();
    use base64::Engine as _;
    let key = base64::engine::general_purpose::STANDARD
        .decode(KEY)
        .unwrap();
    let mut rb = client.request(method, format!("{base}{path}"));
    for (n, v) in &headers {
        rb = rb.header(n, v);
    }
    rb.header(
        "authorization",
        format!("SharedKey devstoreaccount1:{}", sign(&key, &sts)),
    )
    .body(body)
}

#[tokio::test]
async fn serves_https_with_the_given_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert_path = dir.path().join("cert.pem");
    let key_path = dir.path().join("key.pem");
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_stowage-server"))
        .args([
            "--blobPort",
            "0",
            "--inMemoryPersistence",
            "--silent",
            "--cert",
        ])
        .arg(&cert_path)
        .arg("--key")
        .arg(&key_path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Server(child);
    let origin = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(origin.starts_with("https://127.0.0.1:"), "{line}");
    let base = origin.replace("127.0.0.1", "localhost");
    let port = origin.rsplit(':').next().unwrap().to_owned();

    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).unwrap())
        .build()
        .unwrap();
    let put = reqwest::Method::PUT;
    let r = signed(
        &client,
        &base,
        put.clone(),
        "/devstoreaccount1/tls?restype=container",
        &[],
        b"",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 201);
    let r = signed(
        &client,
        &base,
        put,
        "/devstoreaccount1/tls/hello.txt",
        &[("x-ms-blob-type", "BlockBlob")],
        b"over tls",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 201);
    let r = signed(
        &client,
        &base,
        reqwest::Method::GET,
        "/devstoreaccount1/tls/hello.txt",
        &[],
        b"",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(&r.bytes().await.unwrap()[..], b"over tls");
    let r = signed(
        &client,
        &base,
        reqwest::Method::GET,
        "/devstoreaccount1/tls?restype=container&comp=list",
        &[],
        b"",
    )
    .send()
    .await
    .unwrap();
    let body = r.text().await.unwrap();
    assert!(
        body.contains("ServiceEndpoint=\"https://localhost:"),
        "{body}"
    );

    // Plain HTTP on the TLS port gets no HTTP answer.
    let plain = reqwest::Client::new()
        .get(format!(
            "http://127.0.0.1:{port}/devstoreaccount1?comp=list"
        ))
        .send()
        .await;
    assert!(plain.is_err() || plain.unwrap().status() != 200);
}
