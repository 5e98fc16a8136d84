//! Set Blob Tier (docs/wire/tiers.md): one blob or snapshot at a time, and
//! as a Blob Batch sub-request.

use actix_web::HttpResponse;
use stowage_blobstore::{
    AccessTier, BlobName, ContainerName, RehydratePriority, SetBlobTierInput, SetTierOutcome,
};

use crate::error::ApiError;
use crate::headers::Headers;
use crate::request::RequestContext;

pub(crate) async fn set_blob_tier(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    super::blob::refuse_unsupported(ctx)?;
    let mut input = set_blob_tier_input(
        ctx.account(),
        ctx.container()?,
        ctx.blob()?,
        ctx.snapshot(),
        ctx.headers(),
    )?;
    input.version_id = ctx.version_id();
    Ok(match ctx.store().set_blob_tier(input).await? {
        SetTierOutcome::Done => HttpResponse::Ok().finish(),
        SetTierOutcome::Pending => HttpResponse::Accepted().finish(),
    })
}

/// The typed input of Set Blob Tier from its headers (also used for the
/// Set Blob Tier sub-requests of a Blob Batch).
pub(crate) fn set_blob_tier_input(
    account: &str,
    container: ContainerName,
    blob: BlobName,
    snapshot: Option<String>,
    h: Headers<'_>,
) -> Result<SetBlobTierInput, ApiError> {
    Ok(SetBlobTierInput {
        account: account.to_owned(),
        container,
        blob,
        snapshot,
        version_id: None,
        tier: h.require("x-ms-access-tier", AccessTier::parse)?,
        priority: h.parse("x-ms-rehydrate-priority", RehydratePriority::parse)?,
        lease_id: h.lease_id()?,
        if_tags: h.conditions()?.if_tags,
    })
}

/// The outcome of a Set Blob Tier as a status code (a batch sub-response).
pub(crate) fn status(outcome: SetTierOutcome) -> (u16, &'static str) {
    match outcome {
        SetTierOutcome::Done => (200, "OK"),
        SetTierOutcome::Pending => (202, "Accepted"),
    }
}
