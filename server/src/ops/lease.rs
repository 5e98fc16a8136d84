//! Lease Blob and Lease Container (docs/wire/leases.md#lease-blob, docs/wire/leases.md#request-headers, docs/wire/leases.md#actions).

use actix_web::HttpResponse;
use stowage_blobstore::{
    BreakPeriod, ConditionKind, LeaseAction, LeaseBlobInput, LeaseContainerInput, LeaseDuration,
    LeaseId, LeaseOutput, conditions,
};

use crate::error::ApiError;
use crate::headers::Headers;
use crate::request::RequestContext;
use crate::response;

fn invalid(name: &str, value: &str) -> ApiError {
    ApiError::InvalidHeaderValue {
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

fn guid(h: Headers<'_>, name: &'static str) -> Result<Option<LeaseId>, ApiError> {
    h.parse(name, |v| LeaseId::parse(v.trim()).ok())
}

fn required_guid(h: Headers<'_>, name: &'static str) -> Result<LeaseId, ApiError> {
    guid(h, name)?.ok_or(ApiError::MissingRequiredHeader(name))
}

/// The lease action with its parameters, validated before any state is read
/// (docs/wire/leases.md#request-headers). Headers of other actions are ignored.
pub(crate) fn parse_action(h: Headers<'_>) -> Result<LeaseAction, ApiError> {
    let action = h
        .get("x-ms-lease-action")?
        .ok_or(ApiError::MissingRequiredHeader("x-ms-lease-action"))?;
    match action {
        "acquire" => {
            let raw = h
                .get("x-ms-lease-duration")?
                .ok_or(ApiError::MissingRequiredHeader("x-ms-lease-duration"))?;
            let duration = raw
                .trim()
                .parse::<i64>()
                .ok()
                .and_then(|s| LeaseDuration::from_seconds(s).ok())
                .ok_or_else(|| invalid("x-ms-lease-duration", raw))?;
            Ok(LeaseAction::Acquire {
                duration,
                proposed_id: guid(h, "x-ms-proposed-lease-id")?,
            })
        }
        "renew" => Ok(LeaseAction::Renew {
            id: required_guid(h, "x-ms-lease-id")?,
        }),
        "change" => Ok(LeaseAction::Change {
            id: required_guid(h, "x-ms-lease-id")?,
            proposed_id: required_guid(h, "x-ms-proposed-lease-id")?,
        }),
        "release" => Ok(LeaseAction::Release {
            id: required_guid(h, "x-ms-lease-id")?,
        }),
        "break" => {
            let period = match h.get("x-ms-lease-break-period")? {
                None => None,
                Some(raw) => Some(
                    raw.trim()
                        .parse::<i64>()
                        .ok()
                        .and_then(|s| BreakPeriod::from_seconds(s).ok())
                        .ok_or_else(|| invalid("x-ms-lease-break-period", raw))?,
                ),
            };
            Ok(LeaseAction::Break { period })
        }
        other => Err(invalid("x-ms-lease-action", other)),
    }
}

fn respond(action: &LeaseAction, out: &LeaseOutput) -> HttpResponse {
    let mut b = match action {
        LeaseAction::Acquire { .. } => HttpResponse::Created(),
        LeaseAction::Break { .. } => HttpResponse::Accepted(),
        _ => HttpResponse::Ok(),
    };
    response::version(&mut b, &out.version);
    if let Some(id) = out.outcome.lease_id {
        b.insert_header(("x-ms-lease-id", id.to_string()));
    }
    if let Some(t) = out.outcome.lease_time {
        b.insert_header(("x-ms-lease-time", t.to_string()));
    }
    b.finish()
}

pub(crate) async fn lease_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    let h = ctx.headers();
    let action = parse_action(h)?;
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = LeaseBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        action,
        conditions,
    };
    let out = ctx.store().lease_blob(input).await?;
    Ok(respond(&action, &out))
}

pub(crate) async fn lease_container(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let action = parse_action(h)?;
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::ContainerDates)?;
    let input = LeaseContainerInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        action,
        conditions,
    };
    let out = ctx.store().lease_container(input).await?;
    Ok(respond(&action, &out))
}
