//! Page blob operations (docs/wire/pages.md): Put Blob of a page blob, Put
//! Page (update and clear), Get Page Ranges (and its diff form), and the
//! page-blob forms of Set Blob Properties (resize, sequence number).

use std::ops::Range;

use actix_web::{HttpResponse, web};
use stowage_blobstore::conditions::SequenceNumberConditions;
use stowage_blobstore::pages::{self, MAX_PUT_PAGE, MAX_SEQUENCE_NUMBER, SequenceNumberAction};
use stowage_blobstore::{
    BlobName, BlobType, ByteRange, ConditionKind, ContainerName, CopySource, CreatePageBlobInput,
    Error as StoreError, GetPageRangesInput, IncrementalCopyBlobInput, PageWrite, PutBlobInput,
    PutPageInput, SetPageBlobPropertiesInput, conditions,
};

use super::blob::{access_tier, refuse_unsupported};
use crate::error::ApiError;
use crate::headers::Headers;
use crate::request::RequestContext;
use crate::{response, xml};

fn invalid(name: &str, value: &str) -> ApiError {
    ApiError::InvalidHeaderValue {
        name: name.into(),
        value: value.into(),
    }
}

/// The most ranges one Get Page Ranges answer with `maxresults` holds.
const MAX_PAGE_RANGES: usize = 10_000;

/// A sequence number: 0 to 2^63 - 1.
fn sequence_number(v: &str) -> Option<u64> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n <= MAX_SEQUENCE_NUMBER)
}

/// `x-ms-blob-content-length` of a page blob: a multiple of 512, at most
/// 8 TiB.
fn page_blob_size(h: Headers<'_>) -> Result<Option<u64>, ApiError> {
    h.parse("x-ms-blob-content-length", |v| {
        v.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| pages::valid_size(*n))
    })
}

/// `x-ms-if-sequence-number-le`, `-lt` and `-eq`.
fn sequence_conditions(h: Headers<'_>) -> Result<SequenceNumberConditions, ApiError> {
    Ok(SequenceNumberConditions {
        le: h.parse("x-ms-if-sequence-number-le", sequence_number)?,
        lt: h.parse("x-ms-if-sequence-number-lt", sequence_number)?,
        eq: h.parse("x-ms-if-sequence-number-eq", sequence_number)?,
    })
}

/// The pages a Put Page names (`x-ms-range` wins over `Range`): both ends
/// given, on page boundaries, else `416 InvalidPageRange`.
fn page_range(h: Headers<'_>) -> Result<Range<u64>, ApiError> {
    let value = match h.get("x-ms-range")? {
        Some(v) => v,
        None => h
            .get("range")?
            .ok_or(ApiError::MissingRequiredHeader("Range"))?,
    };
    let range = match ByteRange::parse(value) {
        Some(ByteRange {
            start,
            end: Some(end),
        }) => start..end + 1,
        _ => return Err(StoreError::InvalidPageRange.into()),
    };
    if !pages::aligned(&range) {
        return Err(StoreError::InvalidPageRange.into());
    }
    Ok(range)
}

/// Put Blob with `x-ms-blob-type: PageBlob`: no body, a size, an optional
/// sequence number.
pub(crate) async fn put_page_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let content_length = h.content_length()?;
    if content_length != 0 {
        return Err(invalid("Content-Length", &content_length.to_string()));
    }
    if h.has("x-ms-access-tier") {
        // Page blob tiers (P4 ... P80) are for premium accounts only.
        return Err(StoreError::AccessTierNotSupportedForBlobType.into());
    }
    let size =
        page_blob_size(h)?.ok_or(ApiError::MissingRequiredHeader("x-ms-blob-content-length"))?;
    let sequence_number = h
        .parse("x-ms-blob-sequence-number", sequence_number)?
        .unwrap_or(0);
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let _ = access_tier(ctx)?;
    let input = CreatePageBlobInput {
        put: PutBlobInput {
            account: ctx.account().to_owned(),
            container: ctx.container()?,
            blob: ctx.blob()?,
            blob_type: BlobType::PageBlob,
            content: h.put_empty_blob_content()?,
            transactional_md5: None,
            transactional_crc64: None,
            metadata: ctx.metadata()?,
            conditions,
            lease_id: h.lease_id()?,
            content_length: 0,
            access_tier: None,
            tags: h.tags()?,
        },
        size,
        sequence_number,
    };
    let (version, version_id) = ctx.store().create_page_blob(input).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &version);
    response::version_id(&mut b, version_id.as_deref());
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// Put Page (`comp=page`): `x-ms-page-write: update` writes the body into
/// the pages named; `clear` empties them.
pub(crate) async fn put_page(
    ctx: &RequestContext,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let write = h.require("x-ms-page-write", |v| {
        match v.trim().to_ascii_lowercase().as_str() {
            "update" => Some(PageWrite::Update),
            "clear" => Some(PageWrite::Clear),
            _ => None,
        }
    })?;
    let content_length = h.content_length()?;
    let range = page_range(h)?;
    match write {
        PageWrite::Update => {
            if content_length > MAX_PUT_PAGE {
                return Err(ApiError::RequestBodyTooLarge { max: MAX_PUT_PAGE });
            }
            if content_length != range.end - range.start {
                return Err(StoreError::InvalidPageRange.into());
            }
        }
        PageWrite::Clear => {
            if content_length != 0 {
                return Err(invalid("Content-Length", &content_length.to_string()));
            }
        }
    }
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let transactional = h.transactional()?;
    let input = PutPageInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        write,
        range,
        conditions,
        sequence: sequence_conditions(h)?,
        lease_id: h.lease_id()?,
        transactional_md5: transactional.md5,
        transactional_crc64: transactional.crc64,
    };
    let stream = crate::body::streamed(body, crate::body::BODY_IDLE_TIMEOUT);
    let out = ctx.store().put_page(input, stream).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    if let Some((md5, crc64)) = &out.body_sums {
        let which = response::checksum_headers(&ctx.version, transactional.md5.is_some(), false);
        response::checksums(&mut b, which, md5, *crc64);
    }
    b.insert_header(("x-ms-blob-sequence-number", out.sequence_number.to_string()));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// Get Page Ranges (`comp=pagelist`), with `prevsnapshot` the diff form.
pub(crate) async fn get_page_ranges(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    if ctx.query.get("prevsnapshoturl").is_some() || h.has("x-ms-previous-snapshot-url") {
        // The diff against a snapshot URL is for managed disks only.
        return Err(ApiError::NotImplemented);
    }
    let range = match h.range()? {
        Some(r) => {
            let end = r.end.map_or(u64::MAX, |e| e.saturating_add(1));
            Some(r.start..end)
        }
        None => None,
    };
    let max_results = match ctx.query.get("maxresults") {
        None => None,
        Some(v) => match v.trim().parse::<i64>() {
            // The reference: above 10,000, at most 10,000 come back.
            Ok(n) if n > 0 => Some((n as usize).min(MAX_PAGE_RANGES)),
            Ok(_) => {
                return Err(ApiError::OutOfRangeQueryParameterValue {
                    name: "maxresults".into(),
                    value: v.into(),
                });
            }
            Err(_) => {
                return Err(ApiError::InvalidQueryParameterValue {
                    name: "maxresults".into(),
                    value: v.into(),
                });
            }
        },
    };
    let marker =
        match ctx.query.get("marker") {
            None | Some("") => None,
            Some(m) => Some(pages::decode_marker(m).ok_or_else(|| {
                ApiError::InvalidQueryParameterValue {
                    name: "marker".into(),
                    value: m.into(),
                }
            })?),
        };
    let input = GetPageRangesInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: ctx.snapshot(),
        range,
        prev_snapshot: ctx.query.get("prevsnapshot").map(str::to_owned),
        conditions: h.conditions()?,
        lease_id: h.lease_id()?,
        max_results,
        marker,
    };
    let out = ctx.store().get_page_ranges(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-blob-content-length", out.size.to_string()));
    let next = out.next_marker.map(pages::encode_marker);
    Ok(response::xml_document(
        &mut b,
        xml::page_list(&out.ranges, next.as_deref()),
    ))
}

/// True when a Set Blob Properties request is the page-blob form: it
/// resizes or changes the sequence number.
pub(crate) fn is_page_properties(h: Headers<'_>) -> bool {
    h.has("x-ms-blob-content-length") || h.has("x-ms-sequence-number-action")
}

/// Set Blob Properties with `x-ms-blob-content-length` (resize) or
/// `x-ms-sequence-number-action`. Content properties change only when the
/// request sends some (docs/wire/pages.md#set-blob-properties-on-a-page-blob).
pub(crate) async fn set_page_blob_properties(
    ctx: &RequestContext,
) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let size = page_blob_size(h)?;
    let given = h.parse("x-ms-blob-sequence-number", sequence_number)?;
    let action = match h.get("x-ms-sequence-number-action")? {
        None => None,
        Some(v) => Some(match (v.trim().to_ascii_lowercase().as_str(), given) {
            ("max", Some(n)) => SequenceNumberAction::Max(n),
            ("update", Some(n)) => SequenceNumberAction::Update(n),
            ("increment", None) => SequenceNumberAction::Increment,
            ("max" | "update", None) => {
                return Err(ApiError::MissingRequiredHeader("x-ms-blob-sequence-number"));
            }
            ("increment", Some(n)) => {
                return Err(invalid("x-ms-blob-sequence-number", &n.to_string()));
            }
            _ => return Err(invalid("x-ms-sequence-number-action", v)),
        }),
    };
    let content_sent = [
        "x-ms-blob-content-type",
        "x-ms-blob-content-encoding",
        "x-ms-blob-content-language",
        "x-ms-blob-content-md5",
        "x-ms-blob-cache-control",
        "x-ms-blob-content-disposition",
    ]
    .iter()
    .any(|n| h.has(n));
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let input = SetPageBlobPropertiesInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        content: if content_sent {
            Some(h.blob_content_headers()?)
        } else {
            None
        },
        size,
        sequence: action,
        conditions,
        sequence_conditions: sequence_conditions(h)?,
        lease_id: h.lease_id()?,
    };
    let out = ctx.store().set_page_blob_properties(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-blob-sequence-number", out.sequence_number.to_string()));
    Ok(b.finish())
}

/// Upload Pages From URL (`comp=page`, `x-ms-page-write: update`, with
/// `x-ms-copy-source`): the pages named by `x-ms-range` get the bytes of
/// `x-ms-source-range` of the source, read as Put Block From URL reads its
/// source, under the conditions of Put Page.
pub(crate) async fn upload_pages_from_url(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    match h.get("x-ms-page-write")? {
        None => return Err(ApiError::MissingRequiredHeader("x-ms-page-write")),
        Some(v) if v.trim().eq_ignore_ascii_case("update") => {}
        Some(v) => return Err(invalid("x-ms-page-write", v)),
    }
    let range = page_range(h)?;
    let len = range.end - range.start;
    if len > MAX_PUT_PAGE {
        return Err(ApiError::RequestBodyTooLarge { max: MAX_PUT_PAGE });
    }
    let source_range = super::from_url::source_range(ctx)?
        .ok_or(ApiError::MissingRequiredHeader("x-ms-source-range"))?;
    let mismatch = || {
        invalid(
            "x-ms-source-range",
            h.get("x-ms-source-range").ok().flatten().unwrap_or(""),
        )
    };
    if source_range.end.map(|e| e + 1 - source_range.start) != Some(len) {
        return Err(mismatch());
    }
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let mut source = super::from_url::open_source(ctx, Some(source_range), MAX_PUT_PAGE).await?;
    if source.length != len {
        // The source ends before the range does.
        return Err(mismatch());
    }
    let input = PutPageInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        write: PageWrite::Update,
        range,
        conditions,
        sequence: sequence_conditions(h)?,
        lease_id: h.lease_id()?,
        transactional_md5: source.md5,
        transactional_crc64: source.crc64,
    };
    let body = std::mem::replace(&mut source.body, Box::pin(futures::stream::empty()));
    let out = ctx.store().put_page(input, body).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    if let Some((md5, crc64)) = &out.body_sums {
        let which = response::checksum_headers(&ctx.version, source.md5.is_some(), false);
        response::checksums(&mut b, which, md5, *crc64);
    }
    b.insert_header(("x-ms-blob-sequence-number", out.sequence_number.to_string()));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// Incremental Copy Blob (`comp=incrementalcopy`): the source must be a
/// snapshot of a page blob. The copy completes before the answer, so the
/// status is `success` at once (docs/wire/pages.md#incremental-copy-blob).
pub(crate) async fn incremental_copy_blob(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let (header, url) = match super::copy::copy_source_url(ctx)? {
        (header, super::copy::CopySourceUrl::Local(url)) => (header, url),
        (header, super::copy::CopySourceUrl::Remote(url)) => {
            return super::copy_remote::incremental_copy_from_remote(ctx, header, url).await;
        }
    };
    let access = super::copy::source_access(ctx, &url, false).await?;
    let not_found = |_| ApiError::Store(StoreError::CannotVerifyCopySource);
    let source = CopySource {
        access,
        container: ContainerName::parse(&url.container).map_err(not_found)?,
        blob: BlobName::parse(&url.blob).map_err(not_found)?,
        account: url.account,
        snapshot: url.snapshot,
        version_id: url.version_id,
    };
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let input = IncrementalCopyBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        source,
        source_header: header.to_owned(),
        conditions,
        lease_id: h.lease_id()?,
    };
    let out = ctx.store().incremental_copy_blob(input).await?;
    let mut b = HttpResponse::Accepted();
    response::version(&mut b, &out.version);
    b.insert_header(("x-ms-copy-id", out.copy_id));
    b.insert_header(("x-ms-copy-status", "success"));
    Ok(b.finish())
}
