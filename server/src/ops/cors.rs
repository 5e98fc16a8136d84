//! Preflight Blob Request, and the CORS headers every other answer gets
//! (`docs/wire/cors.md`;
//! <https://learn.microsoft.com/en-us/rest/api/storageservices/preflight-blob-request>).
//!
//! The decisions are [`crate::cors`]'s; this reads the account's rules and
//! puts the decision on the wire.

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse};
use stowage_blobstore::ServiceSnapshot;

use crate::cors::{self, Actual, CorsRule, Preflight};
use crate::error::ApiError;
use crate::state::AppState;

/// The account's CORS rules, in order; none when its service properties
/// were never set or the account is not configured (not even looked up:
/// the store remembers every account it is asked about). `seen` is the
/// document the request's own read returned, when it did
/// ([`remember_service_properties`]): then nothing more is read.
async fn rules(
    state: &AppState,
    account: &str,
    seen: Option<ServiceSnapshot>,
) -> Result<Vec<CorsRule>, ApiError> {
    if state.accounts.get(account).is_none() {
        return Ok(Vec::new());
    }
    let doc = match seen {
        Some(ServiceSnapshot(doc)) => doc,
        None => state.store.get_service_properties(account).await?,
    };
    Ok(doc
        .map(|doc| crate::xml::cors_rules(&doc))
        .unwrap_or_default())
}

/// Keeps the service properties a handler's read returned with its answer,
/// for [`add_actual_headers`]: in cluster mode Get Blob and Get Blob
/// Properties read them in the same snapshot as the blob, which saves the
/// request a round trip to the database.
pub(crate) fn remember_service_properties(
    response: &mut HttpResponse,
    seen: Option<ServiceSnapshot>,
) {
    if let Some(seen) = seen {
        response.extensions_mut().insert(seen);
    }
}

/// A header as text; absent, empty or not visible ASCII counts as absent.
fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// `OPTIONS` on any path of the account. Needs no credentials: browsers
/// send none with a preflight, and the reference lists the operation as
/// anonymous. The rules are the service's, so the addressed container or
/// blob need not exist.
pub(crate) async fn preflight_blob_request(
    req: &HttpRequest,
    state: &AppState,
    account: &str,
) -> Result<HttpResponse, ApiError> {
    let origin = header(req, "origin").ok_or(ApiError::MissingCorsHeader("Origin"))?;
    let method = header(req, "access-control-request-method")
        .ok_or(ApiError::MissingCorsHeader("Access-Control-Request-Method"))?;
    let p = Preflight {
        origin,
        method,
        headers: header(req, "access-control-request-headers"),
    };
    let rules = rules(state, account, None).await?;
    let headers = cors::preflight(&rules, &p).ok_or(ApiError::CorsPreflightFailure)?;
    let mut b = HttpResponse::Ok();
    for (name, value) in headers {
        b.insert_header((name, value));
    }
    Ok(b.finish())
}

/// Adds the CORS headers of an actual request's answer, success or error.
/// Only requests with an `Origin`, and GET and HEAD (which may get
/// `Vary: Origin` without one), look at the rules.
pub(crate) async fn add_actual_headers(
    req: &HttpRequest,
    state: &AppState,
    account: &str,
    response: &mut HttpResponse,
) {
    let method = req.method().as_str();
    let origin = header(req, "origin");
    if origin.is_none() && !matches!(method, "GET" | "HEAD") {
        return;
    }
    let seen = response.extensions().get::<ServiceSnapshot>().cloned();
    let rules = match rules(state, account, seen).await {
        Ok(r) => r,
        Err(e) => {
            tracing::debug!(error = %e, "CORS rules unavailable");
            return;
        }
    };
    if rules.is_empty() {
        return;
    }
    let mut names: Vec<String> = Vec::new();
    for name in response.headers().keys() {
        let name = name.as_str();
        if name != crate::header_case::NAMES_HEADER && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let headers = cors::actual(&rules, &Actual { origin, method }, &names);
    let map = response.headers_mut();
    for (name, value) in headers {
        let Ok(value) = HeaderValue::from_str(&value) else {
            continue;
        };
        let name = HeaderName::from_static(name);
        if name == actix_web::http::header::VARY {
            map.append(name, value);
        } else {
            map.insert(name, value);
        }
    }
}
