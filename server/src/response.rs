//! Building responses: the headers that many operations share.

use actix_web::body::SizedStream;
use actix_web::{HttpResponse, HttpResponseBuilder};
use base64::Engine as _;
use stowage_blobstore::{
    BlobProperties, BlobType, LeaseProperties, LeaseState, Metadata, Versioned,
};

use crate::http_dates::http_date;
use crate::xml::Document;

/// Finishes `b` with an XML document as its body. A listing page can be
/// megabytes; it goes out piece by piece (actix copies each piece into its
/// write buffer as it takes it), never as one more copy of the whole page.
pub(crate) fn xml_document(b: &mut HttpResponseBuilder, doc: Document) -> HttpResponse {
    let len = doc.len() as u64;
    let pieces = doc
        .into_pieces()
        .into_iter()
        .map(Ok::<_, std::convert::Infallible>);
    b.content_type("application/xml")
        .body(SizedStream::new(len, futures::stream::iter(pieces)))
}

/// `ETag` (quoted) and `Last-Modified`.
pub(crate) fn version(b: &mut HttpResponseBuilder, v: &Versioned) {
    b.insert_header(("etag", v.etag.quoted()));
    b.insert_header(("last-modified", http_date(v.last_modified)));
}

/// `x-ms-version-id` of a write that made a new version (versioning on).
pub(crate) fn version_id(b: &mut HttpResponseBuilder, id: Option<&str>) {
    if let Some(id) = id {
        b.insert_header(("x-ms-version-id", id));
    }
}

/// One `x-ms-meta-<name>` per pair. actix writes header names lowercase;
/// the exact names travel in a private header that the connection layer
/// turns back into the names' case and removes ([`crate::header_case`]).
pub(crate) fn metadata(b: &mut HttpResponseBuilder, m: &Metadata) {
    if m.is_empty() {
        return;
    }
    for (name, value) in m.pairs() {
        b.append_header((format!("x-ms-meta-{name}"), value.as_str()));
    }
    let names: Vec<&str> = m.pairs().iter().map(|(n, _)| n.as_str()).collect();
    b.insert_header((crate::header_case::NAMES_HEADER, names.join(",")));
}

/// `x-ms-lease-status`, `-state`, and `-duration` while leased.
pub(crate) fn lease(b: &mut HttpResponseBuilder, l: &LeaseProperties) {
    b.insert_header(("x-ms-lease-status", l.status.as_str()));
    b.insert_header(("x-ms-lease-state", l.state.as_str()));
    if l.state == LeaseState::Leased
        && let Some(d) = l.duration
    {
        b.insert_header(("x-ms-lease-duration", d.as_str()));
    }
}

/// The first version whose writes answer with `x-ms-content-crc64`.
const CRC64_FROM: &str = "2019-02-02";
/// The first version whose writes answer with both checksums when the
/// request sent `Content-MD5`.
const BOTH_CHECKSUMS_FROM: &str = "2026-10-06";

/// Which checksums of a request body an answer carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChecksumHeaders {
    /// `Content-MD5`.
    pub md5: bool,
    /// `x-ms-content-crc64`.
    pub crc64: bool,
}

/// The checksums a body write (Put Block, Append Block) answers with: from
/// 2019-02-02 on, `Content-MD5` only when the request sent one, else the
/// CRC64 the server computed; from 2026-10-06 on, both when the request
/// sent `Content-MD5`. Put Blob of a block blob always answers with the
/// MD5 (`md5_always`), which is also the blob's stored MD5.
pub(crate) fn checksum_headers(version: &str, md5_sent: bool, md5_always: bool) -> ChecksumHeaders {
    if version < CRC64_FROM {
        return ChecksumHeaders {
            md5: true,
            crc64: false,
        };
    }
    ChecksumHeaders {
        md5: md5_sent || md5_always,
        crc64: !md5_sent || version >= BOTH_CHECKSUMS_FROM,
    }
}

/// Base64 of a CRC64 as `x-ms-content-crc64` carries it.
pub(crate) fn crc64_base64(crc: u64) -> String {
    base64::engine::general_purpose::STANDARD.encode(stowage_blobstore::Crc64::to_bytes(crc))
}

/// Inserts the checksum headers `which` selects.
pub(crate) fn checksums(
    b: &mut HttpResponseBuilder,
    which: ChecksumHeaders,
    md5: &[u8; 16],
    crc64: u64,
) {
    if which.md5 {
        b.insert_header(("content-md5", md5_base64(md5)));
    }
    if which.crc64 {
        b.insert_header(("x-ms-content-crc64", crc64_base64(crc64)));
    }
}

/// Base64 of an MD5.
pub(crate) fn md5_base64(md5: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(md5)
}

/// The tier headers of Get Blob Properties for a block blob
/// (docs/wire/tiers.md).
pub(crate) fn tier(b: &mut HttpResponseBuilder, t: &stowage_blobstore::TierProperties) {
    b.insert_header(("x-ms-access-tier", t.tier.as_str()));
    if t.inferred {
        b.insert_header(("x-ms-access-tier-inferred", "true"));
    }
    if let Some(at) = t.changed_at {
        b.insert_header(("x-ms-access-tier-change-time", http_date(at)));
    }
    if let Some(status) = t.archive_status() {
        b.insert_header(("x-ms-archive-status", status));
    }
    if let Some(p) = t.rehydrate_priority {
        b.insert_header(("x-ms-rehydrate-priority", p.as_str()));
    }
}

/// The properties headers of Get Blob and Get Blob Properties
/// (docs/wire/blobs.md#get-blob, docs/wire/blobs.md#get-blob-properties), without length and range headers.
pub(crate) fn blob_properties(b: &mut HttpResponseBuilder, p: &BlobProperties) {
    version(b, &p.version);
    let c = &p.content;
    // A content type cleared by Set Blob Properties reads back as no header
    // at all, as the service answers.
    for (name, value) in [
        ("content-type", &c.content_type),
        ("content-encoding", &c.content_encoding),
        ("content-language", &c.content_language),
        ("content-disposition", &c.content_disposition),
        ("cache-control", &c.cache_control),
    ] {
        if let Some(v) = value {
            b.insert_header((name, v.as_str()));
        }
    }
    b.insert_header(("accept-ranges", "bytes"));
    b.insert_header(("x-ms-creation-time", http_date(p.creation_time)));
    if let Some(at) = p.expires_on {
        b.insert_header(("x-ms-expiry-time", http_date(at)));
    }
    b.insert_header(("x-ms-blob-type", p.blob_type.as_str()));
    metadata(b, &p.metadata);
    lease(b, &p.lease);
    if p.blob_type == BlobType::AppendBlob {
        b.insert_header((
            "x-ms-blob-committed-block-count",
            p.committed_block_count.unwrap_or(0).to_string(),
        ));
    }
    // Only a sealed append blob says so: the reference includes the header
    // "if the blob is sealed", and the service's SDK live tests find no
    // header on an append blob that is not.
    if p.blob_type == BlobType::AppendBlob && p.sealed {
        b.insert_header(("x-ms-blob-sealed", "true"));
    }
    if let Some(page) = &p.page {
        b.insert_header((
            "x-ms-blob-sequence-number",
            page.sequence_number.to_string(),
        ));
        if page.incremental_copy {
            b.insert_header(("x-ms-incremental-copy", "true"));
        }
        if let Some(s) = &page.copy_destination_snapshot {
            b.insert_header(("x-ms-copy-destination-snapshot", s.as_str()));
        }
    }
    b.insert_header(("x-ms-server-encrypted", "true"));
    version_id(b, p.version_id.as_deref());
    if let Some(current) = p.is_current_version {
        b.insert_header((
            "x-ms-is-current-version",
            if current { "true" } else { "false" },
        ));
    }
    // Only a blob with tags says how many (docs/wire/tags.md).
    if p.tag_count > 0 {
        b.insert_header(("x-ms-tag-count", p.tag_count.to_string()));
    }
    if let Some(copy) = &p.copy {
        b.insert_header(("x-ms-copy-id", copy.id.as_str()));
        b.insert_header(("x-ms-copy-status", copy.status_str()));
        b.insert_header(("x-ms-copy-source", copy.source.as_str()));
        b.insert_header(("x-ms-copy-progress", copy.progress.as_str()));
        if !copy.pending {
            b.insert_header(("x-ms-copy-completion-time", http_date(copy.completion_time)));
        }
        if let Some(description) = &copy.description {
            b.insert_header(("x-ms-copy-status-description", description.as_str()));
        }
    }
    if let Some(snapshot) = &p.snapshot {
        b.insert_header(("x-ms-snapshot", snapshot.as_str()));
    }
}

/// actix's `streaming` adds `Content-Type: application/octet-stream` to an
/// answer without one; a blob whose content type was cleared (Set Blob
/// Properties without `x-ms-blob-content-type`) answers with none, as the
/// service does, unless a SAS override names one.
pub(crate) fn drop_default_content_type(
    mut res: actix_web::HttpResponse,
    p: &BlobProperties,
    sas: Option<&crate::auth::sas::SasGrant>,
) -> actix_web::HttpResponse {
    let named =
        p.content.content_type.is_some() || sas.is_some_and(|g| g.overrides.content_type.is_some());
    if !named {
        res.headers_mut()
            .remove(actix_web::http::header::CONTENT_TYPE);
    }
    res
}

/// A service SAS's response-header overrides (`rscc`, `rscd`, `rsce`, `rscl`,
/// `rsct`) replace the stored values in the answer (docs/wire/auth.md#response-header-overrides).
pub(crate) fn sas_overrides(b: &mut HttpResponseBuilder, sas: Option<&crate::auth::sas::SasGrant>) {
    let Some(o) = sas.map(|g| &g.overrides) else {
        return;
    };
    for (name, value) in [
        ("cache-control", &o.cache_control),
        ("content-disposition", &o.content_disposition),
        ("content-encoding", &o.content_encoding),
        ("content-language", &o.content_language),
        ("content-type", &o.content_type),
    ] {
        if let Some(v) = value {
            b.insert_header((name, v.as_str()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_headers_by_version_and_request() {
        let both = ChecksumHeaders {
            md5: true,
            crc64: true,
        };
        let md5 = ChecksumHeaders {
            md5: true,
            crc64: false,
        };
        let crc64 = ChecksumHeaders {
            md5: false,
            crc64: true,
        };
        // (version, MD5 sent, MD5 always, answer)
        let table = [
            ("2018-11-09", false, false, md5),
            ("2018-11-09", true, false, md5),
            ("2019-02-02", false, false, crc64),
            ("2019-02-02", true, false, md5),
            ("2025-11-05", false, false, crc64),
            ("2025-11-05", true, false, md5),
            ("2025-11-05", false, true, both),
            ("2025-11-05", true, true, md5),
            ("2026-10-06", true, false, both),
            ("2026-10-06", false, false, crc64),
        ];
        for (version, sent, always, expected) in table {
            assert_eq!(
                checksum_headers(version, sent, always),
                expected,
                "{version} sent {sent} always {always}"
            );
        }
    }

    #[test]
    fn crc64_travels_least_significant_byte_first() {
        assert_eq!(crc64_base64(0x0807_0605_0403_0201), "AQIDBAUGBwg=");
    }
}
