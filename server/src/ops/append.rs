//! Append Block (spec/10-operations.md §B15).

use actix_web::{HttpResponse, web};
use stowage_blobstore::{AppendBlockInput, AppendConditions, ConditionKind, conditions};

use super::blob::refuse_unsupported;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;

/// Append Block body limits by request version (spec/00-overview.md §10).
fn append_block_limit(version: &str) -> u64 {
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
    let integer = |v: &str| v.trim().parse::<u64>().ok();
    let append = AppendConditions {
        append_position: h.parse("x-ms-blob-condition-appendpos", integer)?,
        max_size: h.parse("x-ms-blob-condition-maxsize", integer)?,
    };
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = AppendBlockInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        conditions,
        append,
        lease_id: h.lease_id()?,
        transactional_md5: h.md5("content-md5")?,
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
    b.insert_header(("content-md5", response::md5_base64(&out.body_md5)));
    b.insert_header(("x-ms-blob-append-offset", out.offset.to_string()));
    b.insert_header((
        "x-ms-blob-committed-block-count",
        out.committed_block_count.to_string(),
    ));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}
