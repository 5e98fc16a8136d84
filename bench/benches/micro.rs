//! Criterion micro-benchmarks of Stowage's hot pure paths, through the
//! crates' public APIs: request parsing and routing, Shared Key verification
//! (the server's `auth::shared_key`), condition evaluation
//! (`stowage_blobstore::conditions`) and lease apply/check
//! (`stowage_leases`), plus the load generator's own signer for comparison.
//!
//! Routing is private to the server; it is measured through
//! `stowage_server::fuzzing::route_parts`, the fuzz targets' entry point,
//! which runs what the handler parses before dispatch (target, query,
//! credentials header, `Operation::parse`) and then the chosen operation's
//! headers, plus the fuzzer's assertions, so it is an upper bound. That
//! module is hidden and "not an API": if it changes, change this. Rendering a
//! 5,000-entry List Blobs page goes through `stowage_server::benching`, a
//! hidden module of the same kind, over a page listed from a real in-memory
//! store.
//!
//! `cargo bench -p stowage-bench --bench micro`; compare with a baseline by
//! `-- --save-baseline before` and later `-- --baseline before`.

use std::hint::black_box;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use stowage_bench::DEV_KEY;
use stowage_bench::signer::{SharedKey, SignInput};
use stowage_blobstore::conditions::{ConditionKind, Conditions, Current, EtagMatch, evaluate};
use stowage_leases::{
    Access, LeaseAction, LeaseDuration, LeaseId, LeaseRecord, Resource, apply, check,
};
use stowage_server::auth::shared_key::{RequestView, parse_authorization, verify};

const DATE: &str = "Tue, 03 Sep 2024 10:15:07 GMT";

/// A request as the server sees it: method, raw path, raw query, and
/// headers with lowercased names.
struct Signed {
    method: &'static str,
    path: String,
    raw_query: String,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
}

impl Signed {
    fn new(method: &'static str, path: &str, query: &[(&str, &str)], meta: usize) -> Self {
        let mut headers = vec![
            ("x-ms-date".to_owned(), DATE.to_owned()),
            ("x-ms-version".to_owned(), "2021-10-04".to_owned()),
            (
                "x-ms-client-request-id".to_owned(),
                "a3c1a4f2-6f57-4a44-9e8c-2a4d6f0e1b7d".to_owned(),
            ),
            (
                "user-agent".to_owned(),
                "azsdk-python-storage-blob/12.19.0".to_owned(),
            ),
        ];
        if method == "PUT" {
            headers.push(("content-length".to_owned(), "4096".to_owned()));
            headers.push((
                "content-type".to_owned(),
                "application/octet-stream".to_owned(),
            ));
            headers.push(("x-ms-blob-type".to_owned(), "BlockBlob".to_owned()));
        }
        for i in 0..meta {
            headers.push((format!("x-ms-meta-key{i:02}"), format!("value {i}")));
        }
        let raw_query = query
            .iter()
            .map(|(n, v)| format!("{n}={}", v.replace('/', "%2F")))
            .collect::<Vec<_>>()
            .join("&");
        Self {
            method,
            path: path.to_owned(),
            raw_query,
            query: query
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            headers,
        }
    }

    fn authorization(&self, key: &SharedKey) -> String {
        let query: Vec<(&str, &str)> = self
            .query
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        key.authorization(&SignInput {
            method: self.method,
            raw_path: &self.path,
            query: &query,
            headers: &headers,
        })
    }

    fn view(&self) -> RequestView<'_> {
        RequestView {
            method: self.method,
            raw_path: &self.path,
            raw_query: &self.raw_query,
            headers: &self.headers,
        }
    }
}

fn shared_key(c: &mut Criterion) {
    let key = SharedKey::new("devstoreaccount1", DEV_KEY).unwrap();
    let keys = vec![base64_decode(DEV_KEY)];
    let now = httpdate::parse_http_date(DATE).unwrap();
    let cases = [
        (
            "get-blob",
            Signed::new("GET", "/devstoreaccount1/photos/2024/09/cat.jpg", &[], 0),
        ),
        (
            "list-blobs",
            Signed::new(
                "GET",
                "/devstoreaccount1/photos",
                &[
                    ("restype", "container"),
                    ("comp", "list"),
                    ("prefix", "2024/"),
                    ("maxresults", "5000"),
                ],
                0,
            ),
        ),
        (
            "put-blob-16-meta",
            Signed::new("PUT", "/devstoreaccount1/photos/2024/09/cat.jpg", &[], 16),
        ),
    ];
    let mut group = c.benchmark_group("shared_key");
    group.throughput(Throughput::Elements(1));
    for (name, req) in &cases {
        let good = req.authorization(&key);
        group.bench_with_input(BenchmarkId::new("verify", name), req, |b, req| {
            b.iter(|| {
                let auth = parse_authorization(black_box(&good)).unwrap();
                verify(&req.view(), &auth, "devstoreaccount1", &keys, now).unwrap();
            })
        });
        // A wrong signature is tried against the primary form and every
        // alternative (docs/wire/auth.md#forms-stowage-also-accepts): the most a refusal costs.
        let bad = good.replace(':', ":AAAA");
        group.bench_with_input(BenchmarkId::new("refuse", name), req, |b, req| {
            b.iter(|| {
                let auth = parse_authorization(black_box(&bad)).unwrap();
                verify(&req.view(), &auth, "devstoreaccount1", &keys, now).unwrap_err();
            })
        });
        group.bench_with_input(BenchmarkId::new("loadgen-sign", name), req, |b, req| {
            b.iter(|| black_box(req.authorization(&key)))
        });
    }
    group.finish();
}

fn routing(c: &mut Criterion) {
    let key = SharedKey::new("devstoreaccount1", DEV_KEY).unwrap();
    let cases = [
        (
            "get-blob",
            "GET",
            "/devstoreaccount1/photos/2024/09/cat.jpg",
            Signed::new("GET", "/devstoreaccount1/photos/2024/09/cat.jpg", &[], 0),
        ),
        (
            "list-blobs",
            "GET",
            "/devstoreaccount1/photos?restype=container&comp=list&prefix=2024%2F&maxresults=5000",
            Signed::new(
                "GET",
                "/devstoreaccount1/photos",
                &[
                    ("restype", "container"),
                    ("comp", "list"),
                    ("prefix", "2024/"),
                    ("maxresults", "5000"),
                ],
                0,
            ),
        ),
        (
            "put-blob-16-meta",
            "PUT",
            "/devstoreaccount1/photos/2024/09/cat.jpg",
            Signed::new("PUT", "/devstoreaccount1/photos/2024/09/cat.jpg", &[], 16),
        ),
    ];
    let mut group = c.benchmark_group("routing");
    group.throughput(Throughput::Elements(1));
    for (name, method, target, req) in &cases {
        let mut headers = HeaderMap::new();
        for (n, v) in &req.headers {
            headers.append(
                HeaderName::from_bytes(n.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        headers.append(
            HeaderName::from_static("authorization"),
            HeaderValue::from_str(&req.authorization(&key)).unwrap(),
        );
        group.bench_with_input(BenchmarkId::new("route", name), &headers, |b, h| {
            b.iter(|| stowage_server::fuzzing::route_parts(method, black_box(target), h))
        });
    }
    group.finish();
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn conditions(c: &mut Criterion) {
    let modified = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
    let etag = "0x8DCCC1F2A3B4C5D";
    let current = Current {
        etag,
        last_modified: modified,
    };
    let tag = |t: &str| Some(EtagMatch::List(vec![t.to_owned()]));
    let cases: [(&str, Conditions, ConditionKind); 6] = [
        ("none-write", Conditions::default(), ConditionKind::Write),
        (
            "if-match-hit-write",
            Conditions {
                if_match: tag(etag),
                ..Conditions::default()
            },
            ConditionKind::Write,
        ),
        (
            "if-match-miss-write",
            Conditions {
                if_match: tag("0x8DCCC1F2A3B4C5E"),
                ..Conditions::default()
            },
            ConditionKind::Write,
        ),
        (
            "if-none-match-star-create",
            Conditions {
                if_none_match: Some(EtagMatch::Any),
                ..Conditions::default()
            },
            ConditionKind::Create,
        ),
        (
            "if-none-match-hit-read",
            Conditions {
                if_none_match: tag(etag),
                ..Conditions::default()
            },
            ConditionKind::Read,
        ),
        (
            "all-four-read",
            Conditions {
                if_match: tag(etag),
                if_none_match: tag("0x1"),
                if_modified_since: Some(modified - Duration::from_secs(60)),
                if_unmodified_since: Some(modified + Duration::from_secs(60)),
                if_tags: None,
            },
            ConditionKind::Read,
        ),
    ];
    let mut group = c.benchmark_group("conditions");
    group.throughput(Throughput::Elements(1));
    for (name, conditions, kind) in &cases {
        group.bench_with_input(BenchmarkId::new("evaluate", name), conditions, |b, cond| {
            b.iter(|| black_box(evaluate(black_box(cond), Some(current), *kind)).ok())
        });
    }
    group.bench_function("parse-three-etags", |b| {
        b.iter(|| {
            EtagMatch::parse(black_box(
                r#""0x8DCCC1F2A3B4C5D", "0x8DCCC1F2A3B4C5E", W/"0x1""#,
            ))
        })
    });
    group.finish();
}

fn leases(c: &mut Criterion) {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_725_358_507);
    let id = LeaseId::parse("a3c1a4f2-6f57-4a44-9e8c-2a4d6f0e1b7d").unwrap();
    let acquire = LeaseAction::Acquire {
        duration: LeaseDuration::Fixed(15),
        proposed_id: None,
    };
    let available = LeaseRecord::default();
    let (leased, _) = apply(&available, &acquire, now, id, Resource::Blob).unwrap();
    let mut group = c.benchmark_group("leases");
    group.throughput(Throughput::Elements(1));
    group.bench_function("apply/acquire-available", |b| {
        b.iter(|| apply(black_box(&available), &acquire, now, id, Resource::Blob).unwrap())
    });
    group.bench_function("apply/release-leased", |b| {
        let release = LeaseAction::Release { id };
        b.iter(|| apply(black_box(&leased), &release, now, id, Resource::Blob).unwrap())
    });
    group.bench_function("apply/renew-leased", |b| {
        let renew = LeaseAction::Renew { id };
        b.iter(|| apply(black_box(&leased), &renew, now, id, Resource::Blob).unwrap())
    });
    group.bench_function("check/write-with-id", |b| {
        b.iter(|| {
            check(
                black_box(&leased),
                Some(&id),
                Access::Write,
                Resource::Blob,
                now,
            )
            .unwrap()
        })
    });
    group.bench_function("check/write-without-id", |b| {
        b.iter(|| check(black_box(&leased), None, Access::Write, Resource::Blob, now).unwrap_err())
    });
    group.finish();
}

/// An in-memory store with one container, `listing`, holding `count` small
/// blobs named by `name`, each with a content type and two metadata pairs.
fn filled_store(
    runtime: &tokio::runtime::Runtime,
    count: usize,
    name: impl Fn(usize) -> String,
) -> stowage_blobstore::Store {
    use stowage_blobstore::{
        BlobName, BlobType, Conditions, ContainerName, ContentProperties, CreateContainerInput,
        Metadata, PutBlobInput, Store, StoreConfig, SystemClock,
    };
    runtime.block_on(async {
        let store = Store::open(StoreConfig::in_memory(), std::sync::Arc::new(SystemClock))
            .await
            .expect("an in-memory store");
        let container = ContainerName::parse("listing").expect("a container name");
        store
            .create_container(CreateContainerInput {
                account: "devstoreaccount1".into(),
                container: container.clone(),
                metadata: Metadata::default(),
                public_access: None,
                default_encryption_scope: None,
                deny_encryption_scope_override: false,
            })
            .await
            .expect("the container");
        let metadata = Metadata::from_pairs(vec![
            ("owner".into(), "alice".into()),
            ("source".into(), "loadgen & micro".into()),
        ])
        .expect("metadata");
        for i in 0..count {
            let data = bytes::Bytes::from(format!("blob {i}"));
            let input = PutBlobInput {
                account: "devstoreaccount1".into(),
                container: container.clone(),
                blob: BlobName::parse(&name(i)).expect("a blob name"),
                blob_type: BlobType::BlockBlob,
                content: ContentProperties {
                    content_type: Some("text/plain".into()),
                    ..ContentProperties::default()
                },
                transactional_md5: None,
                transactional_crc64: None,
                metadata: metadata.clone(),
                conditions: Conditions::default(),
                lease_id: None,
                content_length: data.len() as u64,
                access_tier: None,
                tags: Default::default(),
            };
            let body = futures::stream::iter([Ok::<_, std::io::Error>(data)]);
            store.put_blob(input, body).await.expect("a put");
        }
        store
    })
}

/// The first page (up to 5,000 entries) of `container`, flat or delimited by `/`.
fn first_page(
    runtime: &tokio::runtime::Runtime,
    store: &stowage_blobstore::Store,
    delimiter: Option<&str>,
) -> stowage_blobstore::ListBlobsOutput {
    use stowage_blobstore::{ContainerName, ListBlobsInput};
    runtime
        .block_on(store.list_blobs(ListBlobsInput {
            account: "devstoreaccount1".into(),
            container: ContainerName::parse("listing").expect("a container name"),
            prefix: String::new(),
            delimiter: delimiter.map(str::to_owned),
            marker: None,
            max_results: 5000,
            include_snapshots: false,
            include_uncommitted: false,
            include_tags: false,
            include_versions: false,
            include_deleted: false,
            include_deleted_with_versions: false,
        }))
        .expect("a listing")
}

/// Listing: rendering a page of 5,000 blobs, and the store's side of a flat
/// page of 5,000 and of a delimited page of 1,000 groups of ten (the
/// benchmarks' `list-10k` container, `d<i/10:05>/b<i:07>`).
fn listing(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let flat = filled_store(&runtime, 5000, |i| format!("logs/2026/11/{i:06}.log"));
    let page = first_page(&runtime, &flat, None);
    assert_eq!(page.items.len(), 5000);
    let size = stowage_server::benching::list_blobs_document("listing", &page);
    let mut group = c.benchmark_group("listing");
    group.throughput(Throughput::Bytes(size as u64));
    group.bench_function("render-list-blobs-5000", |b| {
        b.iter(|| stowage_server::benching::list_blobs_document("listing", black_box(&page)))
    });
    group.throughput(Throughput::Elements(5000));
    group.bench_function("store-flat-5000", |b| {
        b.iter(|| first_page(&runtime, &flat, None))
    });
    let grouped = filled_store(&runtime, 10_000, |i| format!("d{:05}/b{i:07}", i / 10));
    assert_eq!(first_page(&runtime, &grouped, Some("/")).items.len(), 1000);
    group.throughput(Throughput::Elements(1000));
    group.bench_function("store-delimited-1000-groups", |b| {
        b.iter(|| first_page(&runtime, &grouped, Some("/")))
    });
    group.finish();
}

criterion_group!(benches, routing, shared_key, conditions, leases, listing);
criterion_main!(benches);
