//! The Prometheus metrics (`--metricsPort`): request counters and
//! latencies recorded by the handler, backend latencies recorded by the
//! store, and what the store holds, counted now and then
//! (docs/operations.md#metrics).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use stowage_blobstore::{MetadataCall, ObjectCall, Store, StoreObserver, StoreUsage};

/// How long a count of what the store holds is reused: the counts are
/// aggregate queries over the whole database, so a scrape every second
/// must not run them every second.
pub const USAGE_MAX_AGE: Duration = Duration::from_secs(15);

/// The media type of the answer (the OpenMetrics text format, which
/// Prometheus reads).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    operation: &'static str,
    status_class: &'static str,
    error_code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AccountLabels {
    account: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    call: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabels {
    resource: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// 100 µs to about 6.5 s.
fn request_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 17))
}

/// 10 µs to about 0.65 s.
fn backend_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.00001, 2.0, 17))
}

/// `2xx`, `3xx`, `4xx`, `5xx` (and `1xx`, which the server never sends).
pub(crate) fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// One finished request, as the metrics count it.
#[derive(Clone, Debug)]
pub(crate) struct RequestSample<'a> {
    pub operation: &'static str,
    pub status: u16,
    pub error_code: Option<&'a str>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub latency: Duration,
}

/// Every metric of one server, and the registry that renders them.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Histograms<OperationLabels>,
    ingress: Family<OperationLabels, Counter>,
    egress: Family<OperationLabels, Counter>,
    containers: Family<AccountLabels, Gauge>,
    blobs: Family<AccountLabels, Gauge>,
    blob_bytes: Family<AccountLabels, Gauge>,
    extents: Gauge,
    garbage: Gauge,
    leases: Family<ResourceLabels, Gauge>,
    backends: Arc<BackendTimings>,
    /// The last count of the store's contents.
    counted: tokio::sync::Mutex<Counted>,
}

/// When the store's contents were last counted (the store's clock), and
/// every account a count has shown.
#[derive(Debug, Default)]
struct Counted {
    at: Option<SystemTime>,
    accounts: BTreeSet<String>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// The backend latencies, which the store reports ([`StoreObserver`]).
#[derive(Debug)]
struct BackendTimings {
    metadata: Histograms<CallLabels>,
    objects: Histograms<CallLabels>,
}

impl StoreObserver for BackendTimings {
    fn metadata(&self, call: MetadataCall, elapsed: Duration) {
        self.metadata
            .get_or_create(&CallLabels { call: call.name() })
            .observe(elapsed.as_secs_f64());
    }

    fn object_store(&self, call: ObjectCall, elapsed: Duration) {
        self.objects
            .get_or_create(&CallLabels { call: call.name() })
            .observe(elapsed.as_secs_f64());
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric registered, at zero.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Histograms::<OperationLabels>::new_with_constructor(request_histogram);
        let ingress = Family::<OperationLabels, Counter>::default();
        let egress = Family::<OperationLabels, Counter>::default();
        let containers = Family::<AccountLabels, Gauge>::default();
        let blobs = Family::<AccountLabels, Gauge>::default();
        let blob_bytes = Family::<AccountLabels, Gauge>::default();
        let extents = Gauge::default();
        let garbage = Gauge::default();
        let leases = Family::<ResourceLabels, Gauge>::default();
        let backends = Arc::new(BackendTimings {
            metadata: Histograms::new_with_constructor(backend_histogram),
            objects: Histograms::new_with_constructor(backend_histogram),
        });
        let r = &mut registry;
        r.register(
            "stowage_requests",
            "Requests answered, by REST operation, status class and x-ms-error-code",
            requests.clone(),
        );
        r.register(
            "stowage_request_duration_seconds",
            "Time from a request's arrival until its answer's head is ready, by REST operation",
            latency.clone(),
        );
        r.register(
            "stowage_ingress_bytes",
            "Request body bytes (Content-Length), by REST operation",
            ingress.clone(),
        );
        r.register(
            "stowage_egress_bytes",
            "Answer body bytes, by REST operation",
            egress.clone(),
        );
        r.register(
            "stowage_containers",
            "Containers, by account",
            containers.clone(),
        );
        r.register(
            "stowage_blobs",
            "Committed blobs (snapshots excluded), by account",
            blobs.clone(),
        );
        r.register(
            "stowage_blob_bytes",
            "Sizes of committed blobs and snapshots added up, by account",
            blob_bytes.clone(),
        );
        r.register(
            "stowage_extents",
            "Extents referred to by a blob, snapshot or staged block",
            extents.clone(),
        );
        r.register(
            "stowage_garbage_extents",
            "Unreferenced extents waiting for the garbage collector",
            garbage.clone(),
        );
        r.register(
            "stowage_active_leases",
            "Leases held or breaking, by resource (container, blob)",
            leases.clone(),
        );
        r.register(
            "stowage_metadata_duration_seconds",
            "Metadata database calls, by call (read, write)",
            backends.metadata.clone(),
        );
        r.register(
            "stowage_object_store_duration_seconds",
            "Object store calls, by call (put, complete_multipart, get, delete, list)",
            backends.objects.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            ingress,
            egress,
            containers,
            blobs,
            blob_bytes,
            extents,
            garbage,
            leases,
            backends,
            counted: tokio::sync::Mutex::new(Counted::default()),
        }
    }

    /// What the store should report its backend timings to
    /// ([`stowage_blobstore::StoreConfig::with_observer`]).
    pub fn store_observer(&self) -> Arc<dyn StoreObserver> {
        self.backends.clone()
    }

    /// Counts one finished request.
    pub(crate) fn record(&self, s: &RequestSample<'_>) {
        let operation = OperationLabels {
            operation: s.operation,
        };
        self.requests
            .get_or_create(&RequestLabels {
                operation: s.operation,
                status_class: status_class(s.status),
                error_code: s.error_code.unwrap_or_default().to_owned(),
            })
            .inc();
        self.latency
            .get_or_create(&operation)
            .observe(s.latency.as_secs_f64());
        if s.bytes_in > 0 {
            self.ingress.get_or_create(&operation).inc_by(s.bytes_in);
        }
        if s.bytes_out > 0 {
            self.egress.get_or_create(&operation).inc_by(s.bytes_out);
        }
    }

    fn set_usage(&self, usage: &StoreUsage, known: &mut BTreeSet<String>) {
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        // An account whose last container went away reads 0, not its old
        // counts: every account seen once stays, at 0.
        for gone in known
            .iter()
            .filter(|k| !usage.accounts.iter().any(|a| &a.account == *k))
        {
            let labels = AccountLabels {
                account: gone.clone(),
            };
            self.containers.get_or_create(&labels).set(0);
            self.blobs.get_or_create(&labels).set(0);
            self.blob_bytes.get_or_create(&labels).set(0);
        }
        known.extend(usage.accounts.iter().map(|a| a.account.clone()));
        for a in &usage.accounts {
            let labels = AccountLabels {
                account: a.account.clone(),
            };
            self.containers
                .get_or_create(&labels)
                .set(as_i64(a.containers));
            self.blobs.get_or_create(&labels).set(as_i64(a.blobs));
            self.blob_bytes.get_or_create(&labels).set(as_i64(a.bytes));
        }
        self.extents.set(as_i64(usage.extents));
        self.garbage.set(as_i64(usage.garbage));
        self.leases
            .get_or_create(&ResourceLabels {
                resource: "container",
            })
            .set(as_i64(usage.leased_containers));
        self.leases
            .get_or_create(&ResourceLabels { resource: "blob" })
            .set(as_i64(usage.leased_blobs));
    }

    /// The metrics in the OpenMetrics text format, after counting what
    /// `store` holds if the last count is older than [`USAGE_MAX_AGE`] at
    /// `now`. A count that fails leaves the previous values (and is
    /// logged).
    pub async fn render(&self, store: &Store, now: SystemTime) -> String {
        let mut counted = self.counted.lock().await;
        let stale = counted.at.is_none_or(|t| {
            now.duration_since(t)
                .map_or(true, |age| age >= USAGE_MAX_AGE)
        });
        if stale {
            match store.usage().await {
                Ok(usage) => {
                    self.set_usage(&usage, &mut counted.accounts);
                    counted.at = Some(now);
                }
                Err(e) => tracing::warn!(error = %e, "counting the store for metrics failed"),
            }
        }
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        let table = [
            (200, "2xx"),
            (201, "2xx"),
            (206, "2xx"),
            (304, "3xx"),
            (400, "4xx"),
            (404, "4xx"),
            (412, "4xx"),
            (500, "5xx"),
            (503, "5xx"),
        ];
        for (status, class) in table {
            assert_eq!(status_class(status), class, "{status}");
        }
    }

    #[tokio::test]
    async fn a_request_shows_up_under_its_labels() {
        let m = Metrics::new();
        let sample = RequestSample {
            operation: "GetBlob",
            status: 404,
            error_code: Some("BlobNotFound"),
            bytes_in: 0,
            bytes_out: 215,
            latency: Duration::from_millis(3),
        };
        m.record(&sample);
        m.record(&sample);
        m.record(&RequestSample {
            operation: "PutBlob",
            status: 201,
            error_code: None,
            bytes_in: 4096,
            bytes_out: 0,
            latency: Duration::from_millis(1),
        });
        let store = Store::open(
            stowage_blobstore::StoreConfig::in_memory(),
            Arc::new(stowage_blobstore::SystemClock),
        )
        .await
        .unwrap();
        let text = m.render(&store, SystemTime::now()).await;
        for line in [
            "stowage_requests_total{operation=\"GetBlob\",status_class=\"4xx\",error_code=\"BlobNotFound\"} 2",
            "stowage_requests_total{operation=\"PutBlob\",status_class=\"2xx\",error_code=\"\"} 1",
            "stowage_ingress_bytes_total{operation=\"PutBlob\"} 4096",
            "stowage_egress_bytes_total{operation=\"GetBlob\"} 430",
            "stowage_request_duration_seconds_count{operation=\"GetBlob\"} 2",
            "stowage_extents 0",
            "stowage_garbage_extents 0",
            "stowage_active_leases{resource=\"blob\"} 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"));
    }
}
