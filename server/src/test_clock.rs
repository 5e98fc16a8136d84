//! TEST ONLY: moving the clock of a server started with `--testClock` (or
//! `STOWAGE_TEST_CLOCK=1`), so that suites driving the real binary (the
//! Python SDK tests) can let a rehydration or a lease expire without
//! sleeping. Without that flag the server has no manual clock, the handler
//! never calls `answer`, and this path is an ordinary (invalid) blob URL.
//!
//! `POST /_stowage/test-clock?advance=<seconds>` moves the clock forward
//! and answers `200` with the new time (ISO 8601) as the body. Nothing is
//! authenticated: the mode is for throw-away test servers only.

use std::time::Duration;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse};
use stowage_blobstore::{Clock, ManualClock, iso8601_7};

use crate::target::Query;

/// The path of the clock control.
pub const PATH: &str = "/_stowage/test-clock";

/// Serves the clock control.
pub(crate) fn answer(req: &HttpRequest, clock: &ManualClock) -> HttpResponse {
    if req.method() != Method::POST {
        return HttpResponse::MethodNotAllowed().finish();
    }
    let seconds = Query::parse(req.query_string())
        .ok()
        .and_then(|q| q.get("advance").and_then(|v| v.parse::<f64>().ok()))
        .filter(|s| s.is_finite() && *s >= 0.0);
    match seconds {
        Some(s) => {
            clock.advance(Duration::from_secs_f64(s));
            HttpResponse::Ok().body(iso8601_7(clock.now()))
        }
        None => HttpResponse::BadRequest().body("advance=<seconds> is required"),
    }
}
