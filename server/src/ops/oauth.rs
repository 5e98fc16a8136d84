//! Get User Delegation Key (docs/wire/oauth.md): a key for signing user
//! delegation SAS, for the identity of the request's bearer token.

use std::time::{Duration, SystemTime};

use actix_web::{HttpResponse, web};
use stowage_blobstore::iso8601_7;

use super::service::collect_body;
use crate::auth::delegation::{self, KeyFields};
use crate::auth::sas::parse_sas_time;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::xml;

/// Largest `KeyInfo` body accepted.
const MAX_KEY_INFO_BODY: usize = 4 * 1024;
/// How far ahead a key may expire: seven days from now.
const MAX_KEY_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// The only service of a blob delegation key.
const BLOB_SERVICE: &str = "b";

pub(crate) async fn get_user_delegation_key(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    // Authorization lets only bearer requests this far.
    let identity = ctx
        .bearer
        .clone()
        .ok_or_else(|| ApiError::AuthenticationFailed("a bearer token is required".into()))?;
    let bytes = collect_body(body, MAX_KEY_INFO_BODY).await?;
    let info = xml::parse_key_info(&bytes)?;
    let now = ctx.state.clock.now();
    let (start, expiry) = key_window(info.start.as_deref(), info.expiry.as_deref(), now)?;
    let (start, expiry) = (seconds(start), seconds(expiry));
    let account_key = ctx
        .state
        .accounts
        .get(ctx.account())
        .and_then(|a| a.keys.first())
        .ok_or(ApiError::ResourceNotFound)?;
    let fields = KeyFields {
        oid: &identity.oid,
        tid: &identity.tid,
        start: &start,
        expiry: &expiry,
        service: BLOB_SERVICE,
        version: &ctx.version,
    };
    let value = delegation::key_value(account_key, ctx.account(), &fields);
    Ok(HttpResponse::Ok()
        .content_type("application/xml")
        .body(xml::user_delegation_key(&fields, &value)))
}

/// The key's validity from `Start` (now when absent) and `Expiry`: the
/// expiry must be after the start and now, and at most seven days from now.
///
/// # Errors
/// `InvalidXmlDocument` without `Expiry`; `InvalidXmlNodeValue` for a time
/// that does not parse or a window outside those bounds.
fn key_window(
    start: Option<&str>,
    expiry: Option<&str>,
    now: SystemTime,
) -> Result<(SystemTime, SystemTime), ApiError> {
    let parse = |t: &str| parse_sas_time(t).ok_or(ApiError::InvalidXmlNodeValue);
    let expiry = parse(expiry.ok_or(ApiError::InvalidXmlDocument)?)?;
    let start = match start.filter(|s| !s.is_empty()) {
        Some(s) => parse(s)?,
        None => now,
    };
    let latest = now + MAX_KEY_LIFETIME;
    if expiry <= start || expiry <= now || expiry > latest || start > latest {
        return Err(ApiError::InvalidXmlNodeValue);
    }
    Ok((start, expiry))
}

/// `YYYY-MM-DDThh:mm:ssZ`: the form the key's times are answered and
/// signed in.
fn seconds(t: SystemTime) -> String {
    let full = iso8601_7(t);
    format!("{}Z", &full[..19])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn key_windows() {
        let now = UNIX_EPOCH + Duration::from_secs(1_725_358_507); // 2024-09-03T10:15:07Z
        let ok = |s: Option<&str>, e: Option<&str>| {
            key_window(s, e, now).map(|(s, e)| (seconds(s), seconds(e)))
        };
        assert_eq!(
            ok(None, Some("2024-09-04T00:00:00Z")).unwrap(),
            ("2024-09-03T10:15:07Z".into(), "2024-09-04T00:00:00Z".into())
        );
        // Fractions are dropped from the answer.
        assert_eq!(
            ok(Some("2024-09-01"), Some("2024-09-10T10:15:06.5Z")).unwrap(),
            ("2024-09-01T00:00:00Z".into(), "2024-09-10T10:15:06Z".into())
        );
        let refused = |s: Option<&str>, e: Option<&str>| key_window(s, e, now).is_err();
        assert!(refused(None, None));
        assert!(refused(None, Some("tomorrow")));
        assert!(refused(Some("soon"), Some("2024-09-04")));
        assert!(refused(Some("2024-09-04"), Some("2024-09-04")));
        assert!(refused(None, Some("2024-09-03T10:15:07Z")));
        assert!(refused(None, Some("2024-09-10T10:15:08Z")));
        assert!(!refused(None, Some("2024-09-10T10:15:07Z")));
        assert!(!refused(
            Some("2024-09-01T00:00:00Z"),
            Some("2024-09-05T00:00:00Z")
        ));
    }
}
