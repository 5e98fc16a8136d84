//! Append Block (docs/wire/blobs.md#append-block).

use actix_web::{HttpResponse, web};
use stowage_blobstore::{
    AppendBlockInput, AppendConditions, ConditionKind, SealAppendBlobInput, conditions,
};

use super::blob::refuse_unsupported;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;

/// Append Block body limits by request version (docs/wire/requests.md#limits).
pub(crate) fn append_block_limit(version: &str) -> u64 {
    if version >= "2022-11-02" {
        100 * 1024 * 1024
    } else {
        4 * 1024 * 1024
    }
}

pub(crate) async fn append_block(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let content_length = h.content_length()?;
    if content_length == 0 {
        return Err(ApiError::InvalidHeaderValue {
            name: "Content-Length".into(),
            value: "0".into(),
        });
    }
    let max = append_block_limit(&ctx.version);
    if content_length > max {
        return Err(ApiError::RequestBodyTooLarge { max });
    }
    let append = append_conditions(ctx)?;
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let transactional = h.transactional()?;
    let input = AppendBlockInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        conditions,
        append,
        lease_id: h.lease_id()?,
        transactional_md5: transactional.md5,
        transactional_crc64: transactional.crc64,
        content_length,
    };
    let out = ctx
        .store()
        .append_block(
            input,
            crate::body::streamed(body, crate::body::BODY_IDLE_TIMEOUT),
        )
        .await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    let which = response::checksum_headers(&ctx.version, transactional.md5.is_some(), false);
    response::checksums(&mut b, which, &out.body_md5, out.body_crc64);
    b.insert_header(("x-ms-blob-append-offset", out.offset.to_string()));
    b.insert_header((
        "x-ms-blob-committed-block-count",
        out.committed_block_count.to_string(),
    ));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// `x-ms-blob-condition-appendpos` and `x-ms-blob-condition-maxsize`.
pub(crate) fn append_conditions(ctx: &RequestContext) -> Result<AppendConditions, ApiError> {
    let h = ctx.headers();
    let integer = |v: &str| v.trim().parse::<u64>().ok();
    Ok(AppendConditions {
        append_position: h.parse("x-ms-blob-condition-appendpos", integer)?,
        max_size: h.parse("x-ms-blob-condition-maxsize", integer)?,
    })
}

/// Append Blob Seal (`comp=seal`): 200 with the blob's new ETag and
/// Last-Modified (unchanged when it was sealed already) and
/// `x-ms-blob-sealed: true` (docs/wire/blobs.md#append-blob-seal).
pub(crate) async fn seal_append_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = SealAppendBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        conditions,
        append: append_conditions(ctx)?,
        lease_id: h.lease_id()?,
    };
    let v = ctx.store().seal_append_blob(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &v);
    b.insert_header(("x-ms-blob-sealed", "true"));
    Ok(b.finish())
}
