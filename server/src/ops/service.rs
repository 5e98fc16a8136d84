//! Service operations (docs/wire/listing.md#list-containers).

use actix_web::{HttpResponse, web};
use stowage_blobstore::ListContainersInput;

use super::params;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::{response, xml};

/// Largest XML request body accepted (Set Blob Service Properties).
const MAX_XML_BODY: usize = 64 * 1024;

pub(crate) async fn list_containers(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let include = params::include(&ctx.query, &["metadata", "system", "deleted"])?;
    let input = ListContainersInput {
        account: ctx.account().to_owned(),
        prefix: ctx.query.get("prefix").unwrap_or_default().to_owned(),
        marker: params::marker(&ctx.query)?,
        max_results: params::max_results(&ctx.query)?,
        include_deleted: include.iter().any(|i| i == "deleted"),
    };
    let out = ctx.store().list_containers(input).await?;
    let endpoint = ctx.service_endpoint();
    let echo = xml::Echo {
        service_endpoint: &endpoint,
        prefix: ctx.query.get("prefix"),
        marker: ctx.query.get("marker"),
        max_results: ctx.query.get("maxresults"),
        delimiter: None,
    };
    let body = xml::list_containers(&echo, &out, include.iter().any(|i| i == "metadata"));
    Ok(response::xml_document(&mut HttpResponse::Ok(), body))
}

/// Collects an XML request body of at most `max` bytes; a longer one is
/// refused as soon as it passes the limit, and one that stalls for the
/// body idle timeout fails like any upload that stalls.
pub(crate) async fn collect_body(body: web::Payload, max: usize) -> Result<Vec<u8>, ApiError> {
    crate::body::collect(
        crate::body::streamed(body, crate::body::BODY_IDLE_TIMEOUT),
        max,
    )
    .await
}

pub(crate) async fn set_blob_service_properties(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    ctx.headers().content_length()?;
    let bytes = collect_body(body, MAX_XML_BODY).await?;
    let update = std::str::from_utf8(&bytes).map_err(|_| ApiError::InvalidXmlDocument)?;
    let stored = ctx
        .store()
        .get_service_properties(ctx.account())
        .await?
        .map_or_else(xml::default_service_properties, |d| d.to_string());
    let merged = xml::merge_service_properties(&stored, update)?;
    // Soft delete takes effect: the policy is checked before anything is
    // stored, and kept where deletes read it.
    let retention = xml::delete_retention(&merged)?;
    ctx.store()
        .set_delete_retention(ctx.account(), retention)
        .await?;
    ctx.store()
        .set_service_properties(ctx.account(), merged)
        .await?;
    Ok(HttpResponse::Accepted().finish())
}

pub(crate) async fn get_blob_service_properties(
    ctx: &RequestContext,
) -> Result<HttpResponse, ApiError> {
    let doc = ctx
        .store()
        .get_service_properties(ctx.account())
        .await?
        .map_or_else(xml::default_service_properties, |d| d.to_string());
    Ok(HttpResponse::Ok().content_type("application/xml").body(doc))
}

pub(crate) async fn get_account_information(
    _ctx: &RequestContext,
) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok()
        .insert_header(("x-ms-sku-name", "Standard_RAGRS"))
        .insert_header(("x-ms-account-kind", "StorageV2"))
        .insert_header(("x-ms-is-hns-enabled", "false"))
        .finish())
}

/// Get Blob Service Stats: answered on the secondary endpoint only, where
/// the emulated replication is always live and in sync up to now; on the
/// primary the `comp=stats` value is refused as the emulator refuses it.
pub(crate) fn get_blob_service_stats(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    if !ctx.target.secondary {
        return Err(ApiError::InvalidQueryParameterValue {
            name: "comp".into(),
            value: "stats".into(),
        });
    }
    let body = xml::service_stats(&crate::http_dates::http_date(ctx.state.clock.now()));
    Ok(HttpResponse::Ok()
        .content_type("application/xml")
        .body(body))
}
