//! Put Block, Put Block List, Get Block List (docs/wire/blobs.md).

use actix_web::{HttpResponse, web};
use md5::{Digest, Md5};
use stowage_blobstore::{
    BlockId, BlockListType, ConditionKind, Crc64, GetBlockListInput, PutBlockInput,
    PutBlockListInput, conditions,
};

use super::blob::refuse_unsupported;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::{response, xml};

/// Put Block body limits by request version (docs/wire/requests.md#limits).
pub(crate) fn put_block_limit(version: &str) -> u64 {
    if version >= "2019-12-12" {
        4_194_304_000
    } else if version >= "2016-05-31" {
        100 * 1024 * 1024
    } else {
        4 * 1024 * 1024
    }
}

/// The largest Put Block List body accepted: 50,000 entries of the longest
/// id fit comfortably.
const MAX_BLOCK_LIST_BODY: usize = 8 * 1024 * 1024;

/// The `blockid` query parameter of Put Block (and Put Block From URL).
pub(crate) fn block_id(ctx: &RequestContext) -> Result<BlockId, ApiError> {
    let raw = ctx
        .query
        .get("blockid")
        .ok_or(ApiError::MissingRequiredQueryParameter("blockid"))?;
    BlockId::parse(raw).ok_or_else(|| ApiError::InvalidQueryParameterValue {
        name: "blockid".into(),
        value: raw.into(),
    })
}

pub(crate) async fn put_block(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let block_id = block_id(ctx)?;
    let h = ctx.headers();
    let content_length = h.content_length()?;
    let max = put_block_limit(&ctx.version);
    if content_length > max {
        return Err(ApiError::RequestBodyTooLarge { max });
    }
    let transactional = h.transactional()?;
    let input = PutBlockInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        block_id,
        transactional_md5: transactional.md5,
        transactional_crc64: transactional.crc64,
        lease_id: h.lease_id()?,
        content_length,
    };
    let out = ctx
        .store()
        .put_block(
            input,
            crate::body::streamed(body, crate::body::BODY_IDLE_TIMEOUT),
        )
        .await?;
    let mut b = HttpResponse::Created();
    let which = response::checksum_headers(&ctx.version, transactional.md5.is_some(), false);
    response::checksums(&mut b, which, &out.body_md5, out.body_crc64);
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

pub(crate) async fn put_block_list(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    h.content_length()?;
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let transactional = h.transactional()?;
    let bytes = super::service::collect_body(body, MAX_BLOCK_LIST_BODY).await?;
    let md5: [u8; 16] = Md5::digest(&bytes).into();
    if let Some(expected) = transactional.md5
        && expected != md5
    {
        return Err(stowage_blobstore::Error::Md5Mismatch {
            expected,
            computed: md5,
        }
        .into());
    }
    let crc64 = Crc64::of(&bytes);
    if let Some(expected) = transactional.crc64.filter(|&expected| expected != crc64) {
        return Err(stowage_blobstore::Error::Crc64Mismatch {
            expected: Some(expected),
            computed: Some(crc64),
        }
        .into());
    }
    let mut content = h.blob_content_headers()?;
    // Like Put Blob, a blob committed without a content type gets the
    // service's default.
    content
        .content_type
        .get_or_insert_with(|| crate::headers::DEFAULT_CONTENT_TYPE.to_owned());
    let input = PutBlockListInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        blocks: xml::parse_block_list(&bytes)?,
        content,
        metadata: ctx.metadata()?,
        conditions,
        lease_id: h.lease_id()?,
        access_tier: super::blob::access_tier(ctx)?,
        tags: ctx.headers().tags()?,
    };
    let (v, version_id) = ctx.store().put_block_list(input).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &v);
    response::version_id(&mut b, version_id.as_deref());
    // The checksums here are of the XML body, not of the blob: the MD5 as
    // always, the CRC64 when the request sent one.
    b.insert_header(("content-md5", response::md5_base64(&md5)));
    if transactional.crc64.is_some() {
        b.insert_header(("x-ms-content-crc64", response::crc64_base64(crc64)));
    }
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

pub(crate) async fn get_block_list(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    refuse_unsupported(ctx)?;
    let list_type = match ctx.query.get("blocklisttype") {
        None | Some("committed") => BlockListType::Committed,
        Some("uncommitted") => BlockListType::Uncommitted,
        Some("all") => BlockListType::All,
        Some(other) => {
            return Err(ApiError::InvalidQueryParameterValue {
                name: "blocklisttype".into(),
                value: other.into(),
            });
        }
    };
    let input = GetBlockListInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: ctx.snapshot(),
        list_type,
        lease_id: ctx.headers().lease_id()?,
        if_tags: ctx.headers().if_tags("x-ms-if-tags")?,
    };
    let out = ctx.store().get_block_list(input).await?;
    let mut b = HttpResponse::Ok();
    if let Some(v) = &out.version {
        response::version(&mut b, v);
    }
    b.insert_header(("x-ms-blob-content-length", out.size.to_string()));
    Ok(response::xml_document(&mut b, xml::block_list(&out)))
}
