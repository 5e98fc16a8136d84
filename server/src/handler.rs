//! The one route: every request goes through [`handle`], which parses,
//! authenticates, dispatches, and adds the headers every response carries.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::http::{Method, StatusCode};
use actix_web::{App, HttpRequest, HttpResponse, web};

use crate::auth::{self, Credentials};
use crate::error::ApiError;
use crate::header_case::{CaseIo, Connection, LocalAddr};
use crate::ops::{self, Operation, RouteKey};
use crate::request::RequestContext;
use crate::state::AppState;
use crate::target::{Level, Query, Target};
use crate::transport::Transport;
use crate::{version, xml};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The longest `x-ms-client-request-id` (docs/wire/requests.md#common-headers, docs/wire/requests.md#limits).
const MAX_CLIENT_REQUEST_ID: usize = 1024;

/// How long an idle keep-alive connection stays open.
const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// How long a client may take to finish the TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Blocking threads per worker.
const BLOCKING_THREADS: usize = 8;

/// Serves `state` on `listener` with `workers` worker threads, over TLS
/// when `tls` is given (`--cert` / `--key`).
///
/// Each accepted connection is wrapped in the metadata-name case layer
/// (`header_case`) before actix-http sees it; otherwise this is
/// what `actix_web::HttpServer` does.
///
/// # Errors
/// The listener cannot be used.
pub fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    workers: usize,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> std::io::Result<Server> {
    serve_until(listener, state, workers, tls, CancellationToken::new())
}

/// [`serve`], and once `shutdown` is cancelled every connection closes as
/// soon as no request is under way on it: at once for idle keep-alive
/// connections, after its answer for a request in flight. Cancel it when
/// the server is asked to stop gracefully, which otherwise waits for idle
/// keep-alive connections until they time out.
///
/// # Errors
/// The listener cannot be used.
pub fn serve_until(
    listener: TcpListener,
    state: Arc<AppState>,
    workers: usize,
    tls: Option<Arc<rustls::ServerConfig>>,
    shutdown: CancellationToken,
) -> std::io::Result<Server> {
    use actix_http::error::DispatchError;
    use actix_http::{HttpService, Protocol};
    use actix_service::{IntoServiceFactory as _, ServiceFactoryExt as _, fn_service, map_config};
    use actix_web::dev::AppConfig;

    let data = web::Data::from(state);
    let addr = listener.local_addr()?;
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let server = actix_server::Server::build()
        .workers(workers.max(1))
        // Blocking work (SQLite reads, file reads and writes) queues for a
        // few threads instead of growing hundreds, each with its own stack
        // and malloc arena: there are only four read connections to wait
        // for anyway.
        .worker_max_blocking_threads(BLOCKING_THREADS)
        .listen("stowage", listener, move || {
            let app = App::new()
                .app_data(data.clone())
                .default_service(web::to(handle));
            let http = HttpService::build()
                .local_addr(addr)
                // A client must send a complete request head within this
                // time; bodies have their own idle timeout (crate::body).
                .client_request_timeout(Duration::from_secs(30))
                .keep_alive(KEEP_ALIVE)
                .client_disconnect_timeout(Duration::from_secs(5))
                .on_connect_ext(|io: &CaseIo<Transport>, ext| {
                    ext.insert(io.connection());
                    if let Ok(local) = io.get_ref().local_addr() {
                        ext.insert(LocalAddr(local));
                    }
                    if io.get_ref().is_tls() {
                        ext.insert(Secure);
                    }
                })
                .finish(map_config(
                    app.into_factory()
                        .map_err(|e: actix_web::Error| e.error_response()),
                    |_| AppConfig::default(),
                ));
            let acceptor = acceptor.clone();
            // Made here, on the worker's thread, once per worker.
            let config = actix_http::ServiceConfig::default();
            let shutdown = shutdown.clone();
            fn_service(move |io: actix_rt::net::TcpStream| {
                let acceptor = acceptor.clone();
                let config = config.clone();
                let shutdown = shutdown.clone();
                async move {
                    let peer = io.peer_addr().ok();
                    let _ = io.set_nodelay(true);
                    let transport = match acceptor {
                        None => Transport::Plain(io),
                        Some(a) => {
                            let tls = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, a.accept(io))
                                .await
                                .map_err(|_| DispatchError::SlowRequestTimeout)?
                                .map_err(DispatchError::Io)?;
                            Transport::Tls(Box::new(tls))
                        }
                    };
                    Ok::<_, DispatchError>((
                        CaseIo::new(transport, config, shutdown),
                        Protocol::Http1,
                        peer,
                    ))
                }
            })
            .and_then(http)
        })?
        .run();
    Ok(server)
}

/// Marks a connection that arrived over TLS (connection data).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Secure;

async fn handle(req: HttpRequest, body: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    let started = std::time::Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    let state = state.into_inner();
    if let Some(clock) = &state.test_clock
        && req.path() == crate::test_clock::PATH
    {
        return crate::test_clock::answer(&req, clock);
    }
    // Every time on the answer comes from the injected clock (Date, and the
    // error body's Time line), so a server under a test clock is consistent.
    let now = state.clock.now();
    state.observe.request_arrived(&req, &request_id);
    let meta_names = req
        .conn_data::<std::rc::Rc<Connection>>()
        .and_then(|c| c.next_request_names());
    let (result, version, account, op) = process(&req, body, state.clone(), meta_names).await;
    let mut failure = None;
    let mut response = match result {
        Ok(r) => r,
        Err(e) => {
            if state.observe.debug_log {
                failure = Some(describe(&e));
            }
            error_response(&req, &e, &request_id, now)
        }
    };
    let headers = response.headers_mut();
    let mut set = |name: &'static str, value: &str| {
        if let Ok(v) = actix_web::http::header::HeaderValue::from_str(value) {
            headers.insert(actix_web::http::header::HeaderName::from_static(name), v);
        }
    };
    set("date", &crate::http_dates::http_date(now));
    set("x-ms-request-id", &request_id);
    set("x-ms-version", &version);
    set("server", concat!("Stowage/", env!("CARGO_PKG_VERSION")));
    if let Some(id) = req.headers().get("x-ms-client-request-id") {
        headers.insert(
            actix_web::http::header::HeaderName::from_static("x-ms-client-request-id"),
            id.clone(),
        );
    }
    // Last, so that an `ExposedHeaders` prefix sees every header; on error
    // answers too, or a browser could not show the page why it failed.
    if req.method() != Method::OPTIONS
        && let Some(account) = &account
    {
        ops::cors::add_actual_headers(&req, &state, account, &mut response).await;
    }
    if state.observe.any() {
        let operation = crate::observe::operation_label(op);
        state.observe.request_answered(
            &req,
            &response,
            crate::observe::Finished {
                request_id: &request_id,
                account: account.as_deref(),
                operation,
                arrived: now,
                started,
                failure,
            },
        );
    }
    response
}

/// An error with its causes, for the debug log.
fn describe(e: &ApiError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The operation a request that failed before its dispatch would have
/// been, for metrics and logs; `None` when it names none.
fn operation_of(req: &HttpRequest, level: Level) -> Option<Operation> {
    let query = Query::parse(req.query_string()).ok()?;
    Operation::parse(RouteKey {
        method: req.method(),
        level,
        restype: query.get("restype"),
        comp: query.get("comp"),
        has_blob_type: req.headers().contains_key("x-ms-blob-type"),
        has_copy_source: req.headers().contains_key("x-ms-copy-source"),
    })
    .ok()
}

/// Parse, authenticate, dispatch. Returns the version to report with the
/// answer, the addressed account once the path named one, and the
/// operation the request names (for metrics and logs), if it names one.
async fn process(
    req: &HttpRequest,
    body: web::Payload,
    state: Arc<AppState>,
    meta_names: Option<Vec<String>>,
) -> (
    Result<HttpResponse, ApiError>,
    String,
    Option<String>,
    Option<Operation>,
) {
    let mut account = None;
    let mut level = None;
    let mut operation = None;
    // Read as bytes: a value that is not visible ASCII is a malformed
    // version to refuse, not an absent one.
    let requested = req
        .headers()
        .get("x-ms-version")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    // A SAS request without x-ms-version is processed with its api-version,
    // else its signed version (docs/wire/requests.md#service-version).
    let sas_version = || {
        let q = Query::parse(req.query_string()).ok()?;
        q.get("api-version").or(q.get("sv")).map(str::to_owned)
    };
    let version = requested
        .clone()
        .or_else(sas_version)
        .filter(|v| version::is_acceptable(v))
        .unwrap_or_else(|| version::OLDEST.to_owned());
    let result = async {
        let host_account = if state.product_style_urls {
            crate::target::host_account(req.connection_info().host(), |a| {
                state.accounts.get(a).is_some()
            })
        } else {
            None
        };
        let target = Target::resolve(host_account.as_deref(), req.path())?;
        account = Some(target.account.clone());
        level = Some(target.level());
        // A preflight carries no credentials and is answered from the
        // service's CORS rules alone (docs/wire/cors.md).
        if req.method() == Method::OPTIONS {
            return ops::cors::preflight_blob_request(req, &state, &target.account).await;
        }
        let credentials = auth::authenticate(req, &target, &state)?;
        let bearer = credentials.bearer_identity();
        if matches!(credentials, Credentials::Anonymous)
            && state.accounts.get(&target.account).is_none()
        {
            return Err(ApiError::ResourceNotFound);
        }
        if let Some(v) = &requested
            && !version::is_acceptable(v)
        {
            return Err(ApiError::InvalidHeaderValue {
                name: "x-ms-version".into(),
                value: v.clone(),
            });
        }
        if let Some(id) = req.headers().get("x-ms-client-request-id")
            && id.len() > MAX_CLIENT_REQUEST_ID
        {
            return Err(ApiError::InvalidHeaderValue {
                name: "x-ms-client-request-id".into(),
                value: String::from_utf8_lossy(id.as_bytes()).into_owned(),
            });
        }
        // The connection layer's private header is the server's own; taken
        // from a client it could rename another request's metadata.
        if let Some(v) = req.headers().get(crate::header_case::NAMES_HEADER) {
            return Err(ApiError::InvalidHeaderValue {
                name: crate::header_case::NAMES_HEADER.into(),
                value: String::from_utf8_lossy(v.as_bytes()).into_owned(),
            });
        }
        let query = Query::parse(req.query_string())?;
        if let Some(t) = query.get("timeout")
            && t.parse::<u64>().map_or(true, |n| n == 0)
        {
            return Err(ApiError::InvalidQueryParameterValue {
                name: "timeout".into(),
                value: t.into(),
            });
        }
        let op = Operation::parse(RouteKey {
            method: req.method(),
            level: target.level(),
            restype: query.get("restype"),
            comp: query.get("comp"),
            has_blob_type: req.headers().contains_key("x-ms-blob-type"),
            has_copy_source: req.headers().contains_key("x-ms-copy-source"),
        })?;
        operation = Some(op);
        let mut ctx = RequestContext {
            state: state.clone(),
            req: req.clone(),
            target,
            query,
            version: version.clone(),
            meta_names: meta_names.unwrap_or_default(),
            sas: None,
            bearer,
        };
        ctx.sas = auth::authorize(op, &ctx, credentials).await?;
        if ctx.target.secondary && !op.is_read() {
            return Err(ApiError::WriteToSecondary);
        }
        ops::dispatch(op, &ctx, body).await
    }
    .await;
    // Only requests that stopped before the dispatch table parse again.
    let operation = operation.or_else(|| level.and_then(|l| operation_of(req, l)));
    (result, version, account, operation)
}

fn error_response(
    req: &HttpRequest,
    error: &ApiError,
    request_id: &str,
    now: std::time::SystemTime,
) -> HttpResponse {
    let answer = error.answer();
    if answer.status.is_server_error() {
        tracing::error!(request_id, error = %error, source = ?std::error::Error::source(error), "request failed");
    } else {
        tracing::debug!(request_id, code = answer.code, "request refused");
    }
    let mut b = HttpResponse::build(answer.status);
    b.insert_header(("x-ms-error-code", answer.code));
    if let ApiError::Store(stowage_blobstore::Error::InvalidRange { size }) = error {
        b.insert_header(("content-range", format!("bytes */{size}")));
    }
    if let ApiError::InvalidBearerToken {
        challenge: Some(challenge),
        ..
    } = error
    {
        b.insert_header(("www-authenticate", challenge.as_str()));
    }
    if req.method() == Method::HEAD || answer.status == StatusCode::NOT_MODIFIED {
        return b.finish();
    }
    let body = xml::error_body(
        answer.code,
        &answer.message,
        request_id,
        &stowage_blobstore::iso8601_7(now),
        &answer.details,
    );
    b.content_type("application/xml").body(body)
}
