//! Blob index tags: Set Blob Tags, Get Blob Tags and Find Blobs by Tags at
//! account and container scope (docs/wire/tags.md).

use actix_web::{HttpResponse, web};
use md5::{Digest, Md5};
use stowage_blobstore::{
    ContainerName, Crc64, Filter, FindBlobsByTagsInput, GetBlobTagsInput, SetBlobTagsInput,
};

use super::params;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;
use crate::xml;

/// The largest Set Blob Tags body accepted: ten tags of the longest keys
/// and values, escaped, fit several times over.
const MAX_TAGS_BODY: usize = 64 * 1024;

pub(crate) async fn set_blob_tags(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    h.content_length()?;
    let transactional = h.transactional()?;
    let if_tags = h.if_tags("x-ms-if-tags")?;
    let bytes = super::service::collect_body(body, MAX_TAGS_BODY).await?;
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
    let input = SetBlobTagsInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: ctx.snapshot(),
        version_id: ctx.version_id(),
        tags: xml::parse_tags(&bytes)?,
        if_tags,
        lease_id: h.lease_id()?,
    };
    ctx.store().set_blob_tags(input).await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(crate) async fn get_blob_tags(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let input = GetBlobTagsInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: ctx.snapshot(),
        version_id: ctx.version_id(),
        if_tags: h.if_tags("x-ms-if-tags")?,
        lease_id: h.lease_id()?,
    };
    let tags = ctx.store().get_blob_tags(input).await?;
    Ok(response::xml_document(
        &mut HttpResponse::Ok(),
        xml::tags_document(&tags),
    ))
}

/// Find Blobs by Tags, across the account (`GET /?comp=blobs`) or in one
/// container (`restype=container&comp=blobs`).
pub(crate) async fn find_blobs_by_tags(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let q = &ctx.query;
    let where_ = q.get("where").unwrap_or_default();
    let filter = Filter::parse(where_).map_err(|e| ApiError::InvalidWhere {
        value: where_.to_owned(),
        reason: e.to_string(),
    })?;
    let container: Option<ContainerName> = match ctx.target.container {
        Some(_) => Some(ctx.container()?),
        None => None,
    };
    if container.is_some() && filter.container.is_some() {
        return Err(ApiError::InvalidWhere {
            value: where_.to_owned(),
            reason: "Error parsing query: Cannot have container in both uri and query".into(),
        });
    }
    let marker = q.get("marker").filter(|m| !m.is_empty());
    if let Some(m) = marker
        && !stowage_blobstore::is_find_marker(m)
    {
        return Err(ApiError::InvalidQueryParameterValue {
            name: "marker".into(),
            value: m.into(),
        });
    }
    let input = FindBlobsByTagsInput {
        account: ctx.account().to_owned(),
        container,
        filter,
        marker: marker.map(str::to_owned),
        max_results: params::max_results(q)?,
    };
    let out = ctx.store().find_blobs_by_tags(input).await?;
    let body = xml::find_blobs(&ctx.service_endpoint(), where_, &out);
    Ok(response::xml_document(&mut HttpResponse::Ok(), body))
}
