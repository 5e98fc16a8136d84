//! Blob operations (docs/wire/blobs.md).

use actix_web::{HttpResponse, web};
use futures::TryStreamExt;
use md5::{Digest, Md5};
use stowage_blobstore::{
    AccessTier, BlobType, ConditionKind, Crc64, DeleteBlobInput, DeleteSnapshots, EtagMatch,
    GetBlobInput, PutBlobInput, SetBlobMetadataInput, SetBlobPropertiesInput, UndeleteBlobInput,
    conditions,
};

use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;

/// Put Blob body limits by request version (docs/wire/requests.md#limits).
fn put_blob_limit(version: &str) -> u64 {
    if version >= "2019-12-12" {
        5_242_880_000
    } else if version >= "2016-05-31" {
        256 * 1024 * 1024
    } else {
        64 * 1024 * 1024
    }
}

/// The largest range for which `x-ms-range-get-content-md5` and
/// `x-ms-range-get-content-crc64` are honoured.
const RANGE_SUM_MAX: u64 = 4 * 1024 * 1024;

/// Headers of features Stowage does not serve: refused rather than ignored,
/// unless the server runs with `--loose`, which ignores them as the
/// emulator's loose mode does.
pub(crate) fn refuse_unsupported(ctx: &RequestContext) -> Result<(), ApiError> {
    if ctx.state.loose {
        return Ok(());
    }
    let h = ctx.headers();
    for name in [
        "x-ms-encryption-key",
        "x-ms-encryption-key-sha256",
        "x-ms-encryption-algorithm",
        "x-ms-encryption-scope",
    ] {
        if h.has(name) {
            return Err(ApiError::NotImplemented);
        }
    }
    Ok(())
}

/// `x-ms-access-tier` of a write that creates a blob: Hot, Cool, Cold or
/// Archive, for block blobs only.
pub(crate) fn access_tier(ctx: &RequestContext) -> Result<Option<AccessTier>, ApiError> {
    ctx.headers().parse("x-ms-access-tier", AccessTier::parse)
}

pub(crate) async fn put_blob(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let blob_type = h.require("x-ms-blob-type", BlobType::parse)?;
    let content_length = h.content_length()?;
    match blob_type {
        BlobType::BlockBlob => {
            if h.has("x-ms-blob-content-length") {
                return Err(ApiError::InvalidHeaderValue {
                    name: "x-ms-blob-content-length".into(),
                    value: h
                        .get("x-ms-blob-content-length")?
                        .unwrap_or_default()
                        .into(),
                });
            }
            let max = put_blob_limit(&ctx.version);
            if content_length > max {
                return Err(ApiError::RequestBodyTooLarge { max });
            }
        }
        BlobType::AppendBlob => {
            if h.has("x-ms-access-tier") {
                return Err(stowage_blobstore::Error::AccessTierNotSupportedForBlobType.into());
            }
            if content_length != 0 {
                return Err(ApiError::InvalidHeaderValue {
                    name: "Content-Length".into(),
                    value: content_length.to_string(),
                });
            }
        }
        BlobType::PageBlob => return super::pages::put_page_blob(ctx).await,
    }
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let mut transactional = h.transactional()?;
    if blob_type == BlobType::BlockBlob && h.has("x-ms-blob-content-md5") {
        // x-ms-blob-content-md5 takes precedence: it is the MD5 checked
        // against the body (as the blob's stored MD5), and Content-MD5 beside
        // it is not (docs/wire/blobs.md#put-blob).
        transactional.md5 = None;
    }
    let input = PutBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        blob_type,
        content: match blob_type {
            BlobType::BlockBlob => h.put_blob_content()?,
            _ => h.put_empty_blob_content()?,
        },
        transactional_md5: transactional.md5,
        transactional_crc64: transactional.crc64,
        metadata: ctx.metadata()?,
        conditions,
        lease_id: h.lease_id()?,
        content_length,
        access_tier: access_tier(ctx)?,
        tags: h.tags()?,
    };
    let stream = crate::body::streamed(body, crate::body::BODY_IDLE_TIMEOUT);
    let out = ctx.store().put_blob(input, stream).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    response::version_id(&mut b, out.version_id.as_deref());
    if blob_type == BlobType::BlockBlob {
        let which = response::checksum_headers(&ctx.version, transactional.md5.is_some(), true);
        response::checksums(&mut b, which, &out.body_md5, out.body_crc64);
    }
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

fn get_input(ctx: &RequestContext, with_range: bool) -> Result<GetBlobInput, ApiError> {
    let h = ctx.headers();
    Ok(GetBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: ctx.snapshot(),
        version_id: ctx.version_id(),
        range: if with_range { h.range()? } else { None },
        conditions: h.conditions()?,
        lease_id: h.lease_id()?,
    })
}

pub(crate) async fn get_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    refuse_unsupported(ctx)?;
    let input = get_input(ctx, true)?;
    let want_md5 = ctx.headers().flag("x-ms-range-get-content-md5")?;
    let want_crc64 = ctx.headers().flag("x-ms-range-get-content-crc64")?;
    if want_md5 && want_crc64 {
        return Err(ApiError::BothCrc64AndMd5RangeHeaderPresent);
    }
    // The header that asked for a range checksum, when one did.
    let range_sum = match (want_md5, want_crc64) {
        (true, _) => Some("x-ms-range-get-content-md5"),
        (_, true) => Some("x-ms-range-get-content-crc64"),
        _ => None,
    };
    if let Some(name) = range_sum
        && input.range.is_none()
    {
        return Err(ApiError::InvalidHeaderValue {
            name: name.into(),
            value: "true".into(),
        });
    }
    let mut out = ctx.store().get_blob(input).await?;
    let service = out.service_properties.take();
    let p = &out.properties;
    let mut b = match &out.range {
        Some(_) => HttpResponse::PartialContent(),
        None => HttpResponse::Ok(),
    };
    response::blob_properties(&mut b, p);
    response::sas_overrides(&mut b, ctx.sas.as_ref());
    let len = match &out.range {
        Some(r) => {
            b.insert_header((
                "content-range",
                format!("bytes {}-{}/{}", r.start, r.end - 1, p.size),
            ));
            if let Some(md5) = &p.content.content_md5 {
                b.insert_header(("x-ms-blob-content-md5", response::md5_base64(md5)));
            }
            r.end - r.start
        }
        None => {
            if let Some(md5) = &p.content.content_md5 {
                b.insert_header(("content-md5", response::md5_base64(md5)));
            }
            p.size
        }
    };
    let body = out.body.map_err(|e| {
        tracing::error!(error = %e, "blob stream failed");
        std::io::Error::other(e)
    });
    if let Some(name) = range_sum {
        if len > RANGE_SUM_MAX {
            return Err(ApiError::InvalidHeaderValue {
                name: name.into(),
                value: "true".into(),
            });
        }
        // At most 4 MiB: hashed before the reply, as the header goes first.
        let bytes: Vec<bytes::Bytes> = body
            .try_collect()
            .await
            .map_err(|e| ApiError::Store(stowage_blobstore::Error::Io(e)))?;
        if want_md5 {
            let mut md5 = Md5::new();
            bytes.iter().for_each(|c| md5.update(c));
            b.insert_header(("content-md5", response::md5_base64(&md5.finalize())));
        } else {
            let mut crc = Crc64::new();
            bytes.iter().for_each(|c| crc.update(c));
            b.insert_header(("x-ms-content-crc64", response::crc64_base64(crc.finish())));
        }
        let res = b.no_chunking(len).streaming(futures::stream::iter(
            bytes.into_iter().map(Ok::<_, std::io::Error>),
        ));
        let mut res = response::drop_default_content_type(res, p, ctx.sas.as_ref());
        super::cors::remember_service_properties(&mut res, service);
        return Ok(res);
    }
    let res = b.no_chunking(len).streaming(body);
    let mut res = response::drop_default_content_type(res, p, ctx.sas.as_ref());
    super::cors::remember_service_properties(&mut res, service);
    Ok(res)
}

pub(crate) async fn get_blob_properties(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    refuse_unsupported(ctx)?;
    let (p, service) = ctx
        .store()
        .get_blob_properties_with_service(get_input(ctx, false)?)
        .await?;
    let mut b = HttpResponse::Ok();
    response::blob_properties(&mut b, &p);
    response::sas_overrides(&mut b, ctx.sas.as_ref());
    if let Some(md5) = &p.content.content_md5 {
        b.insert_header(("content-md5", response::md5_base64(md5)));
    }
    if p.blob_type == BlobType::BlockBlob {
        response::tier(&mut b, &p.tier);
    }
    // A HEAD answer carries the length a GET would return, and no body.
    let res = b
        .no_chunking(p.size)
        .streaming(futures::stream::empty::<Result<bytes::Bytes, std::io::Error>>());
    let mut res = response::drop_default_content_type(res, &p, ctx.sas.as_ref());
    super::cors::remember_service_properties(&mut res, service);
    Ok(res)
}

pub(crate) async fn get_blob_metadata(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    refuse_unsupported(ctx)?;
    let p = ctx
        .store()
        .get_blob_properties(get_input(ctx, false)?)
        .await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &p.version);
    response::metadata(&mut b, &p.metadata);
    Ok(b.finish())
}

pub(crate) async fn set_blob_properties(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    if super::pages::is_page_properties(h) {
        return super::pages::set_page_blob_properties(ctx).await;
    }
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = SetBlobPropertiesInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        content: h.blob_content_headers()?,
        conditions,
        lease_id: h.lease_id()?,
    };
    let v = ctx.store().set_blob_properties(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &v);
    Ok(b.finish())
}

pub(crate) async fn set_blob_metadata(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = SetBlobMetadataInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        metadata: ctx.metadata()?,
        conditions,
        lease_id: h.lease_id()?,
    };
    let (v, version_id) = ctx.store().set_blob_metadata(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &v);
    response::version_id(&mut b, version_id.as_deref());
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

pub(crate) async fn delete_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    refuse_unsupported(ctx)?;
    let mut input = delete_input(
        ctx.account(),
        ctx.container()?,
        ctx.blob()?,
        ctx.snapshot(),
        ctx.headers(),
    )?;
    input.version_id = ctx.version_id();
    input.permanent = match ctx.query.get("deletetype") {
        None => false,
        Some("permanent") => true,
        Some(other) => {
            return Err(ApiError::InvalidQueryParameterValue {
                name: "deletetype".into(),
                value: other.into(),
            });
        }
    };
    let permanent = ctx.store().delete_blob(input).await?;
    let mut b = HttpResponse::Accepted();
    // Whether the blob is gone or soft-deleted (docs/wire/versions.md).
    // The header came with version 2017-07-29; clients of that version and
    // later (the old Rust SDK among them) refuse an answer without it.
    if ctx.version.as_str() >= "2017-07-29" {
        b.insert_header((
            "x-ms-delete-type-permanent",
            if permanent { "true" } else { "false" },
        ));
    }
    Ok(b.finish())
}

/// Undelete Blob (docs/wire/versions.md#undelete-blob).
pub(crate) async fn undelete_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    let input = UndeleteBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
    };
    ctx.store().undelete_blob(input).await?;
    Ok(HttpResponse::Ok().finish())
}

/// The typed input of Delete Blob from its headers (also used for the
/// Delete Blob sub-requests of a Blob Batch).
pub(crate) fn delete_input(
    account: &str,
    container: stowage_blobstore::ContainerName,
    blob: stowage_blobstore::BlobName,
    snapshot: Option<String>,
    h: crate::headers::Headers<'_>,
) -> Result<DeleteBlobInput, ApiError> {
    let delete_snapshots = h.parse("x-ms-delete-snapshots", |v| match v {
        "include" => Some(DeleteSnapshots::Include),
        "only" => Some(DeleteSnapshots::Only),
        _ => None,
    })?;
    if snapshot.is_some() && delete_snapshots.is_some() {
        return Err(stowage_blobstore::Error::SnapshotOperation.into());
    }
    let mut conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    // The service does not read `If-None-Match: *` on Delete Blob as "only
    // if absent": it deletes an existing blob (202), while a listed ETag
    // that matches still answers 412. `*` is therefore a condition that
    // always holds here.
    if conditions.if_none_match == Some(EtagMatch::Any) {
        conditions.if_none_match = None;
    }
    Ok(DeleteBlobInput {
        account: account.to_owned(),
        container,
        blob,
        snapshot,
        delete_snapshots,
        conditions,
        lease_id: h.lease_id()?,
        version_id: None,
        permanent: false,
    })
}
