//! The From-URL writes: Put Block From URL, Append Block From URL and Put
//! Blob From URL (docs/wire/from-url.md). Their bytes come from a source
//! blob named by `x-ms-copy-source`, authorized as Copy Blob From URL
//! authorizes its source (a SAS in the URL or a public container), read as
//! Get Blob reads it and streamed into the same write path a request body
//! takes: the source is never held whole in memory.
//!
//! A source on this server (any of its accounts) is read in-process; a
//! source on another host is read by the fetcher, its own refusal answered
//! as `CannotVerifyCopySource` with its status.

use actix_web::HttpResponse;
use futures::TryStreamExt;
use stowage_blobstore::conditions::{self, Current};
use stowage_blobstore::{
    AppendBlockInput, BlobName, BlobType, ByteRange, ConditionKind, Conditions, ContainerName,
    ContentProperties, GetBlobInput, PutBlobInput, PutBlockInput,
};

use super::blob::refuse_unsupported;
use super::copy::{CopySourceUrl, copy_source_url, source_access, source_refused};
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::response;

/// The largest source Put Blob From URL copies (5000 MiB).
const PUT_BLOB_FROM_URL_MAX: u64 = 5000 * 1024 * 1024;

/// The bytes of a source, opened.
pub(super) struct Source {
    /// The source's content properties (of the version read).
    pub(super) content: ContentProperties,
    /// How many bytes the body yields.
    pub(super) length: u64,
    /// The bytes, as a request body stream.
    pub(super) body: futures::stream::BoxStream<'static, std::io::Result<bytes::Bytes>>,
    /// `x-ms-source-content-md5`, checked against the bytes by the write.
    pub(super) md5: Option<[u8; 16]>,
    /// `x-ms-source-content-crc64`, checked likewise.
    pub(super) crc64: Option<u64>,
}

/// The source's own refusal of the read, as the service reports it:
/// `CannotVerifyCopySource` with the source's status and code.
fn source_read_error(e: stowage_blobstore::Error) -> ApiError {
    use stowage_blobstore::Error as E;
    match e {
        E::BlobNotFound => source_refused(404, "BlobNotFound"),
        E::ContainerNotFound => source_refused(404, "ContainerNotFound"),
        E::InvalidRange { .. } => source_refused(416, "InvalidRange"),
        other => ApiError::Store(other),
    }
}

/// `x-ms-source-range`, when `ranged` operations allow it: `bytes=start-end`
/// (an open end reads to the end of the source).
pub(super) fn source_range(ctx: &RequestContext) -> Result<Option<ByteRange>, ApiError> {
    let Some(v) = ctx.headers().get("x-ms-source-range")? else {
        return Ok(None);
    };
    ByteRange::parse(v)
        .map(Some)
        .ok_or_else(|| ApiError::InvalidHeaderValue {
            name: "x-ms-source-range".into(),
            value: v.into(),
        })
}

/// Checks what every From-URL write shares (no body, the source URL and its
/// authorization, the source conditions) and opens the source's bytes:
/// `range` of them when given, at most `max`.
pub(super) async fn open_source(
    ctx: &RequestContext,
    range: Option<ByteRange>,
    max: u64,
) -> Result<Source, ApiError> {
    let h = ctx.headers();
    let sent = h.content_length()?;
    if sent != 0 {
        return Err(ApiError::InvalidHeaderValue {
            name: "Content-Length".into(),
            value: sent.to_string(),
        });
    }
    let md5 = h.md5("x-ms-source-content-md5")?;
    let crc64 = h.crc64("x-ms-source-content-crc64")?;
    if md5.is_some() && crc64.is_some() {
        return Err(ApiError::BothCrc64AndMd5HeaderPresent);
    }
    let source_conditions = h.source_conditions()?;
    conditions::validate(&source_conditions, ConditionKind::Source)?;
    let url = match copy_source_url(ctx)? {
        (_, CopySourceUrl::Local(url)) => url,
        (_, CopySourceUrl::Remote(url)) => {
            let opened =
                super::copy_remote::open_remote_source(ctx, url, range, max, &source_conditions)
                    .await?;
            return Ok(Source {
                content: crate::fetch::source_content(&opened.headers),
                length: opened.length,
                body: opened.body,
                md5,
                crc64,
            });
        }
    };
    source_access(ctx, &url, true).await?;
    let container = ContainerName::parse(&url.container)
        .map_err(|_| source_refused(404, "ContainerNotFound"))?;
    let blob = BlobName::parse(&url.blob).map_err(|_| source_refused(404, "BlobNotFound"))?;
    let out = ctx
        .store()
        .get_blob(GetBlobInput {
            account: url.account,
            container,
            blob,
            snapshot: url.snapshot,
            version_id: url.version_id,
            range,
            conditions: Conditions::default(),
            lease_id: None,
        })
        .await
        .map_err(source_read_error)?;
    // The conditions are evaluated on the version the read pinned, so the
    // bytes copied are those of the version the conditions saw.
    let version = &out.properties.version;
    conditions::evaluate(
        &source_conditions,
        Some(Current {
            etag: version.etag.as_str(),
            last_modified: version.last_modified,
        }),
        ConditionKind::Source,
    )?;
    let length = out
        .range
        .as_ref()
        .map_or(out.properties.size, |r| r.end - r.start);
    if length > max {
        return Err(ApiError::RequestBodyTooLarge { max });
    }
    Ok(Source {
        content: out.properties.content,
        length,
        body: Box::pin(out.body.map_err(std::io::Error::other)),
        md5,
        crc64,
    })
}

/// The checksum headers of a From-URL write: as for a body write, with
/// `x-ms-source-content-md5` in the place of `Content-MD5`.
fn checksums(
    ctx: &RequestContext,
    b: &mut actix_web::HttpResponseBuilder,
    source: &Source,
    md5_always: bool,
    md5: &[u8; 16],
    crc64: u64,
) {
    let which = response::checksum_headers(&ctx.version, source.md5.is_some(), md5_always);
    response::checksums(b, which, md5, crc64);
}

/// Put Block From URL (`comp=block` with `x-ms-copy-source`): stages the
/// source's bytes, or `x-ms-source-range` of them, as a block.
pub(crate) async fn put_block_from_url(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let block_id = super::block::block_id(ctx)?;
    let h = ctx.headers();
    let lease_id = h.lease_id()?;
    let max = super::block::put_block_limit(&ctx.version);
    let mut source = open_source(ctx, source_range(ctx)?, max).await?;
    let input = PutBlockInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        block_id,
        transactional_md5: source.md5,
        transactional_crc64: source.crc64,
        lease_id,
        content_length: source.length,
    };
    let body = std::mem::replace(&mut source.body, Box::pin(futures::stream::empty()));
    let out = ctx.store().put_block_from_url(input, body).await?;
    let mut b = HttpResponse::Created();
    // The block's MD5 is always answered, sent or not (the reference: "computed
    // by Blob Storage"; the SDKs' own tests read it back).
    checksums(ctx, &mut b, &source, true, &out.body_md5, out.body_crc64);
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// Append Block From URL (`comp=appendblock` with `x-ms-copy-source`):
/// appends the source's bytes, or `x-ms-source-range` of them, under the
/// same conditions as Append Block.
pub(crate) async fn append_block_from_url(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let append = super::append::append_conditions(ctx)?;
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Write)?;
    let lease_id = h.lease_id()?;
    let max = super::append::append_block_limit(&ctx.version);
    let mut source = open_source(ctx, source_range(ctx)?, max).await?;
    if source.length == 0 {
        // An append of nothing, as Append Block with an empty body.
        return Err(ApiError::InvalidHeaderValue {
            name: "x-ms-source-range".into(),
            value: h.get("x-ms-source-range")?.unwrap_or_default().into(),
        });
    }
    let input = AppendBlockInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        conditions,
        append,
        lease_id,
        transactional_md5: source.md5,
        transactional_crc64: source.crc64,
        content_length: source.length,
    };
    let body = std::mem::replace(&mut source.body, Box::pin(futures::stream::empty()));
    let out = ctx.store().append_block_from_url(input, body).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    checksums(ctx, &mut b, &source, false, &out.body_md5, out.body_crc64);
    b.insert_header(("x-ms-blob-append-offset", out.offset.to_string()));
    b.insert_header((
        "x-ms-blob-committed-block-count",
        out.committed_block_count.to_string(),
    ));
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

/// The content properties of Put Blob From URL: those sent, and for each
/// one not sent the source's when `x-ms-copy-source-blob-properties` is
/// true (the default). The MD5 is always the one the write computes.
fn from_url_content(
    sent: ContentProperties,
    source: &ContentProperties,
    copy_source_properties: bool,
    content_type_sent: bool,
) -> ContentProperties {
    if !copy_source_properties {
        return ContentProperties {
            content_md5: None,
            ..sent
        };
    }
    let or = |mine: Option<String>, theirs: &Option<String>| mine.or_else(|| theirs.clone());
    ContentProperties {
        content_type: if content_type_sent {
            sent.content_type
        } else {
            source.content_type.clone().or(sent.content_type)
        },
        content_encoding: or(sent.content_encoding, &source.content_encoding),
        content_language: or(sent.content_language, &source.content_language),
        content_md5: None,
        cache_control: or(sent.cache_control, &source.cache_control),
        content_disposition: or(sent.content_disposition, &source.content_disposition),
    }
}

/// Put Blob From URL (`x-ms-blob-type` with `x-ms-copy-source`): creates or
/// replaces a block blob with the source's bytes, synchronously.
pub(crate) async fn put_blob_from_url(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    ctx.forbid_snapshot()?;
    refuse_unsupported(ctx)?;
    let h = ctx.headers();
    let blob_type = h.require("x-ms-blob-type", BlobType::parse)?;
    if blob_type != BlobType::BlockBlob {
        return Err(ApiError::InvalidHeaderValue {
            name: "x-ms-blob-type".into(),
            value: h.get("x-ms-blob-type")?.unwrap_or_default().into(),
        });
    }
    let copy_properties = h
        .parse("x-ms-copy-source-blob-properties", |v| {
            match v.trim().to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }
        })?
        .unwrap_or(true);
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::Create)?;
    let sent_content = h.put_blob_content()?;
    let content_type_sent = h.has("x-ms-blob-content-type") || h.has("content-type");
    let metadata = ctx.metadata()?;
    let lease_id = h.lease_id()?;
    let access_tier = super::blob::access_tier(ctx)?;
    let tags = h.tags()?;
    let mut source = open_source(ctx, None, PUT_BLOB_FROM_URL_MAX).await?;
    let content = from_url_content(
        sent_content,
        &source.content,
        copy_properties,
        content_type_sent,
    );
    let input = PutBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        blob_type,
        content,
        transactional_md5: source.md5,
        transactional_crc64: source.crc64,
        metadata,
        conditions,
        lease_id,
        content_length: source.length,
        access_tier,
        tags,
    };
    let body = std::mem::replace(&mut source.body, Box::pin(futures::stream::empty()));
    let out = ctx.store().put_blob_from_url(input, body).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &out.version);
    response::version_id(&mut b, out.version_id.as_deref());
    checksums(ctx, &mut b, &source, true, &out.body_md5, out.body_crc64);
    b.insert_header(("x-ms-request-server-encrypted", "true"));
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(content_type: Option<&str>, encoding: Option<&str>) -> ContentProperties {
        ContentProperties {
            content_type: content_type.map(str::to_owned),
            content_encoding: encoding.map(str::to_owned),
            content_md5: Some(vec![1; 16]),
            ..ContentProperties::default()
        }
    }

    #[test]
    fn put_blob_from_url_content_properties() {
        let source = props(Some("text/csv"), Some("gzip"));
        // (sent, copy source properties, content type sent) -> (type, encoding)
        let cases = [
            (
                props(Some("application/octet-stream"), None),
                true,
                false,
                Some("text/csv"),
                Some("gzip"),
            ),
            (
                props(Some("text/plain"), None),
                true,
                true,
                Some("text/plain"),
                Some("gzip"),
            ),
            (
                props(Some("text/plain"), Some("br")),
                true,
                true,
                Some("text/plain"),
                Some("br"),
            ),
            (
                props(Some("application/octet-stream"), None),
                false,
                false,
                Some("application/octet-stream"),
                None,
            ),
        ];
        for (sent, copy, type_sent, want_type, want_encoding) in cases {
            let got = from_url_content(sent, &source, copy, type_sent);
            assert_eq!(got.content_type.as_deref(), want_type);
            assert_eq!(got.content_encoding.as_deref(), want_encoding);
            assert_eq!(got.content_md5, None, "the write computes the MD5");
        }
    }
}
