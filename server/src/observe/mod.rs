//! What the server tells its operators: Prometheus metrics
//! ([`metrics`]), the access log ([`access`]) and the debug log of each
//! request's headers, with credentials redacted (`redact`). All of it is
//! off unless asked for (docs/operations.md).

pub mod access;
pub mod metrics;
mod redact;

use std::net::TcpListener;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use actix_web::body::{BodySize, MessageBody as _};
use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use tracing::Dispatch;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

pub use access::{ACCESS_TARGET, AccessLayer, AccessLogFormat, BatchedWriter};
pub use metrics::Metrics;

use crate::state::AppState;
use access::AccessRecord;

/// The `tracing` target of the debug log's request and answer events.
pub const HTTP_TARGET: &str = "stowage::http";

/// What a server reports, and where.
#[derive(Clone, Debug, Default)]
pub struct Observe {
    /// Counted per request and served by [`serve_metrics`]; `None` without
    /// `--metricsPort`.
    pub metrics: Option<Arc<Metrics>>,
    /// Where access-log and debug events are sent (see [`log_dispatch`]);
    /// `None` when neither log is on.
    pub log: Option<Dispatch>,
    /// Emit one access-log event per request.
    pub access_log: bool,
    /// Emit each request's and answer's headers as debug events.
    pub debug_log: bool,
}

/// Where the logs go: the sinks of [`log_dispatch`].
#[derive(Default)]
pub struct LogSinks {
    /// The console (standard error) and its filter, e.g. `info`.
    pub console: Option<tracing_subscriber::EnvFilter>,
    /// The debug log (`--debug FILE`): every event at debug level and
    /// above, the request and answer headers among them.
    pub debug: Option<Box<dyn std::io::Write + Send>>,
    /// The access log (`--accessLog`) and its format.
    pub access: Option<(Box<dyn std::io::Write + Send>, AccessLogFormat)>,
}

/// A `tracing` dispatcher writing to `sinks`. Access-log events go to the
/// access log only.
pub fn log_dispatch(sinks: LogSinks) -> Dispatch {
    type Boxed = Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;
    let mut layers: Vec<Boxed> = Vec::new();
    let not_access = |m: &tracing::Metadata<'_>| m.target() != ACCESS_TARGET;
    if let Some(filter) = sinks.console {
        layers.push(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter)
                .with_filter(tracing_subscriber::filter::filter_fn(not_access))
                .boxed(),
        );
    }
    if let Some(out) = sinks.debug {
        layers.push(
            tracing_subscriber::fmt::layer()
                .with_writer(std::sync::Mutex::new(out))
                .with_ansi(false)
                .with_filter(tracing_subscriber::filter::LevelFilter::DEBUG)
                .with_filter(tracing_subscriber::filter::filter_fn(not_access))
                .boxed(),
        );
    }
    if let Some((out, format)) = sinks.access {
        layers.push(
            AccessLayer::new(format, out)
                .with_filter(tracing_subscriber::filter::filter_fn(|m| {
                    m.target() == ACCESS_TARGET
                }))
                .boxed(),
        );
    }
    Dispatch::new(tracing_subscriber::registry().with(layers))
}

/// Emits `r` as an access-log event (to the current dispatcher).
pub(crate) fn emit_access(r: &AccessRecord) {
    tracing::info!(
        target: ACCESS_TARGET,
        time = r.time.as_str(),
        account = r.account.as_deref(),
        operation = r.operation.as_str(),
        status = r.status,
        error_code = r.error_code.as_deref(),
        bytes_in = r.bytes_in,
        bytes_out = r.bytes_out,
        latency_ms = r.latency_ms,
        request_id = r.request_id.as_str(),
        client_request_id = r.client_request_id.as_deref(),
        method = r.method.as_str(),
        path = r.path.as_str(),
    );
}

/// The label of a request's operation in metrics and logs: the REST
/// operation's name as the reference spells it (`PutBlob`,
/// `GetBlobProperties`), `Unknown` for a request that names none.
pub(crate) fn operation_label(op: Option<crate::ops::Operation>) -> &'static str {
    /// More than the dispatch table has operations.
    const SLOTS: usize = 128;
    static NAMES: [OnceLock<&'static str>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    let Some(op) = op else { return "Unknown" };
    let slot = op as usize;
    // The dispatch table's variants are named as the REST reference names
    // its operations; each name is made once and kept for the process.
    let name = || -> &'static str { Box::leak(format!("{op:?}").into_boxed_str()) };
    match NAMES.get(slot) {
        Some(cell) => cell.get_or_init(name),
        None => name(),
    }
}

/// Headers as the debug log shows them: `name: value` pairs joined by
/// `; `, credentials redacted.
fn header_text(headers: &actix_web::http::header::HeaderMap) -> String {
    let mut pairs: Vec<String> = headers
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes());
            format!("{name}: {}", redact::redact_header(name.as_str(), &value))
        })
        .collect();
    pairs.sort();
    pairs.join("; ")
}

/// What the handler knows of a request once its answer is ready.
pub(crate) struct Finished<'a> {
    pub request_id: &'a str,
    pub account: Option<&'a str>,
    /// The REST operation's name, `Unknown` when the request named none.
    pub operation: &'static str,
    /// When the request arrived (the server's clock, for the log's time).
    pub arrived: SystemTime,
    /// When the request arrived (for its latency).
    pub started: Instant,
    /// The error the request failed with, as the debug log tells it.
    pub failure: Option<String>,
}

impl Observe {
    /// Whether anything is recorded per request.
    pub(crate) fn any(&self) -> bool {
        self.metrics.is_some() || self.access_log || self.debug_log
    }

    /// Logs the request's line and headers (debug log only).
    pub(crate) fn request_arrived(&self, req: &HttpRequest, request_id: &str) {
        if !self.debug_log {
            return;
        }
        let Some(log) = &self.log else { return };
        let target = match req.uri().path_and_query() {
            Some(pq) => redact::redact_url(pq.as_str()).into_owned(),
            None => req.path().to_owned(),
        };
        let headers = header_text(req.headers());
        tracing::dispatcher::with_default(log, || {
            tracing::debug!(
                target: HTTP_TARGET,
                request_id,
                method = %req.method(),
                target = %target,
                headers = %headers,
                "request"
            );
        });
    }

    /// Counts and logs one answered request.
    pub(crate) fn request_answered(
        &self,
        req: &HttpRequest,
        response: &HttpResponse,
        f: Finished<'_>,
    ) {
        let latency = f.started.elapsed();
        let status = response.status().as_u16();
        let error_code = response
            .headers()
            .get("x-ms-error-code")
            .and_then(|v| v.to_str().ok());
        let bytes_in = content_length(req.headers()).unwrap_or(0);
        let bytes_out = if req.method() == Method::HEAD {
            0
        } else {
            match response.body().size() {
                BodySize::Sized(n) => n,
                BodySize::Stream => content_length(response.headers()).unwrap_or(0),
                BodySize::None => 0,
            }
        };
        if let Some(m) = &self.metrics {
            m.record(&metrics::RequestSample {
                operation: f.operation,
                status,
                error_code,
                bytes_in,
                bytes_out,
                latency,
            });
        }
        let Some(log) = &self.log else { return };
        tracing::dispatcher::with_default(log, || {
            if self.debug_log {
                tracing::debug!(
                    target: HTTP_TARGET,
                    request_id = f.request_id,
                    status,
                    error = f.failure.as_deref(),
                    headers = %header_text(response.headers()),
                    "answer"
                );
            }
            if self.access_log {
                emit_access(&AccessRecord {
                    time: stowage_blobstore::iso8601_7(f.arrived),
                    account: f.account.map(str::to_owned),
                    operation: f.operation.to_owned(),
                    status: u64::from(status),
                    error_code: error_code.map(str::to_owned),
                    bytes_in,
                    bytes_out,
                    latency_ms: millis(latency),
                    request_id: f.request_id.to_owned(),
                    client_request_id: req
                        .headers()
                        .get("x-ms-client-request-id")
                        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
                    method: req.method().to_string(),
                    path: req.path().to_owned(),
                });
            }
        });
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn content_length(headers: &actix_web::http::header::HeaderMap) -> Option<u64> {
    headers
        .get(actix_web::http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

async fn scrape(state: web::Data<AppState>) -> HttpResponse {
    match &state.observe.metrics {
        Some(m) => HttpResponse::Ok()
            .content_type(metrics::CONTENT_TYPE)
            .body(m.render(&state.store, state.clock.now()).await),
        None => HttpResponse::NotFound().finish(),
    }
}

/// Serves `GET /metrics` of `state` on `listener` (one worker thread).
///
/// # Errors
/// The listener cannot be used.
pub fn serve_metrics(
    listener: TcpListener,
    state: Arc<AppState>,
) -> std::io::Result<actix_web::dev::Server> {
    let data = web::Data::from(state);
    Ok(actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .app_data(data.clone())
            .route("/metrics", web::get().to(scrape))
    })
    .workers(1)
    .disable_signals()
    .listen(listener)?
    .run())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Operation, RouteKey};
    use crate::target::Level;

    #[test]
    fn operation_labels_come_from_the_dispatch_table() {
        // method, level, restype, comp, x-ms-blob-type given, label
        type Row = (
            &'static str,
            Level,
            Option<&'static str>,
            Option<&'static str>,
            bool,
            &'static str,
        );
        let table: &[Row] = &[
            ("PUT", Level::Blob, None, None, true, "PutBlob"),
            ("GET", Level::Blob, None, None, false, "GetBlob"),
            ("HEAD", Level::Blob, None, None, false, "GetBlobProperties"),
            ("DELETE", Level::Blob, None, None, false, "DeleteBlob"),
            ("PUT", Level::Blob, None, Some("block"), false, "PutBlock"),
            (
                "PUT",
                Level::Blob,
                None,
                Some("blocklist"),
                false,
                "PutBlockList",
            ),
            ("PUT", Level::Blob, None, Some("lease"), false, "LeaseBlob"),
            (
                "PUT",
                Level::Container,
                Some("container"),
                None,
                false,
                "CreateContainer",
            ),
            (
                "GET",
                Level::Container,
                Some("container"),
                Some("list"),
                false,
                "ListBlobs",
            ),
            (
                "GET",
                Level::Account,
                None,
                Some("list"),
                false,
                "ListContainers",
            ),
            (
                "GET",
                Level::Account,
                Some("service"),
                Some("properties"),
                false,
                "GetBlobServiceProperties",
            ),
            ("OPTIONS", Level::Blob, None, None, false, "CorsPreflight"),
        ];
        for &(method, level, restype, comp, has_blob_type, want) in table {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let op = Operation::parse(RouteKey {
                method: &method,
                level,
                restype,
                comp,
                has_blob_type,
                has_copy_source: false,
            })
            .unwrap();
            assert_eq!(operation_label(Some(op)), want);
        }
        assert_eq!(operation_label(None), "Unknown");
    }

    #[test]
    fn debug_headers_are_sorted_and_redacted() {
        let req = actix_web::test::TestRequest::default()
            .insert_header(("x-ms-version", "2021-08-06"))
            .insert_header(("authorization", "SharedKey acct:c2VjcmV0"))
            .insert_header(("x-ms-copy-source", "http://h/a/c/b?sv=1&sig=c2VjcmV0"))
            .to_http_request();
        let text = header_text(req.headers());
        assert_eq!(
            text,
            "authorization: SharedKey acct:REDACTED; x-ms-copy-source: http://h/a/c/b?sv=1&sig=REDACTED; x-ms-version: 2021-08-06"
        );
    }
}
