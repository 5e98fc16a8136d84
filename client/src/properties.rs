//! What the service reports about containers and blobs, read from response
//! headers (docs/wire/blobs.md, docs/wire/containers.md) or listing XML (docs/wire/listing.md).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::HeaderMap;

use crate::pipeline::Request;
use crate::xml::Element;
use crate::{Error, Etag, Metadata, Result};

/// The six content properties of a blob (docs/wire/requests.md#content-properties).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentProperties {
    /// `Content-Type` (the service defaults it to `application/octet-stream`).
    pub content_type: Option<String>,
    /// `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// `Content-Language`.
    pub content_language: Option<String>,
    /// `Content-Disposition`.
    pub content_disposition: Option<String>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// The stored MD5 of the whole blob (16 bytes).
    pub content_md5: Option<Vec<u8>>,
}

impl ContentProperties {
    /// Sets the content type.
    pub fn with_content_type(mut self, v: impl Into<String>) -> ContentProperties {
        self.content_type = Some(v.into());
        self
    }

    /// Sets the content encoding.
    pub fn with_content_encoding(mut self, v: impl Into<String>) -> ContentProperties {
        self.content_encoding = Some(v.into());
        self
    }

    /// Sets the content language.
    pub fn with_content_language(mut self, v: impl Into<String>) -> ContentProperties {
        self.content_language = Some(v.into());
        self
    }

    /// Sets the content disposition.
    pub fn with_content_disposition(mut self, v: impl Into<String>) -> ContentProperties {
        self.content_disposition = Some(v.into());
        self
    }

    /// Sets the cache control.
    pub fn with_cache_control(mut self, v: impl Into<String>) -> ContentProperties {
        self.cache_control = Some(v.into());
        self
    }

    /// Sets the stored MD5.
    pub fn with_content_md5(mut self, md5: [u8; 16]) -> ContentProperties {
        self.content_md5 = Some(md5.to_vec());
        self
    }

    /// Adds the `x-ms-blob-*` headers, which Put Blob, Put Block List and
    /// Set Blob Properties store (a property not sent is cleared).
    pub(crate) fn apply(&self, request: Request) -> Request {
        request
            .header_opt("x-ms-blob-content-type", self.content_type.clone())
            .header_opt("x-ms-blob-content-encoding", self.content_encoding.clone())
            .header_opt("x-ms-blob-content-language", self.content_language.clone())
            .header_opt(
                "x-ms-blob-content-disposition",
                self.content_disposition.clone(),
            )
            .header_opt("x-ms-blob-cache-control", self.cache_control.clone())
            .header_opt(
                "x-ms-blob-content-md5",
                self.content_md5.as_ref().map(|m| STANDARD.encode(m)),
            )
    }
}

/// The kind of blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobType {
    /// Written whole or from blocks.
    BlockBlob,
    /// Written by appending blocks.
    AppendBlob,
    /// Random-access pages.
    PageBlob,
    /// A kind this client does not know.
    Other(String),
}

impl BlobType {
    fn parse(s: &str) -> BlobType {
        match s {
            "BlockBlob" => BlobType::BlockBlob,
            "AppendBlob" => BlobType::AppendBlob,
            "PageBlob" => BlobType::PageBlob,
            other => BlobType::Other(other.to_owned()),
        }
    }
}

/// The lease state (docs/wire/leases.md#states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseState {
    /// No lease.
    Available,
    /// Locked by a lease.
    Leased,
    /// A fixed lease ran out.
    Expired,
    /// Broken, break period running: still locked.
    Breaking,
    /// Broken.
    Broken,
}

/// Whether the resource is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseStatus {
    /// Writes need the lease id.
    Locked,
    /// Writes need no lease id.
    Unlocked,
}

/// The kind of an active lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseDurationType {
    /// Never expires.
    Infinite,
    /// Expires unless renewed.
    Fixed,
}

/// Lease properties of a container or base blob.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeaseInfo {
    /// `x-ms-lease-state`.
    pub state: Option<LeaseState>,
    /// `x-ms-lease-status`.
    pub status: Option<LeaseStatus>,
    /// `x-ms-lease-duration`, only while leased.
    pub duration: Option<LeaseDurationType>,
}

impl LeaseInfo {
    fn parse(state: Option<&str>, status: Option<&str>, duration: Option<&str>) -> LeaseInfo {
        LeaseInfo {
            state: state.and_then(|s| match s {
                "available" => Some(LeaseState::Available),
                "leased" => Some(LeaseState::Leased),
                "expired" => Some(LeaseState::Expired),
                "breaking" => Some(LeaseState::Breaking),
                "broken" => Some(LeaseState::Broken),
                _ => None,
            }),
            status: status.and_then(|s| match s {
                "locked" => Some(LeaseStatus::Locked),
                "unlocked" => Some(LeaseStatus::Unlocked),
                _ => None,
            }),
            duration: duration.and_then(|s| match s {
                "infinite" => Some(LeaseDurationType::Infinite),
                "fixed" => Some(LeaseDurationType::Fixed),
                _ => None,
            }),
        }
    }
}

/// The state of a Copy Blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyStatus {
    /// Still copying (the real service, for large or remote sources).
    Pending,
    /// Done.
    Success,
    /// Aborted by Abort Copy Blob.
    Aborted,
    /// Failed.
    Failed,
    /// A status this client does not know.
    Other(String),
}

impl CopyStatus {
    pub(crate) fn parse(s: &str) -> CopyStatus {
        match s {
            "pending" => CopyStatus::Pending,
            "success" => CopyStatus::Success,
            "aborted" => CopyStatus::Aborted,
            "failed" => CopyStatus::Failed,
            other => CopyStatus::Other(other.to_owned()),
        }
    }
}

/// Copy properties of a blob that was a Copy Blob destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyProperties {
    /// `x-ms-copy-id`.
    pub id: String,
    /// `x-ms-copy-status`.
    pub status: CopyStatus,
    /// `x-ms-copy-source`.
    pub source: Option<String>,
    /// `x-ms-copy-progress` (`copied/total`).
    pub progress: Option<String>,
    /// `x-ms-copy-completion-time`.
    pub completion_time: Option<SystemTime>,
}

/// Anonymous read access of a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicAccess {
    /// Blobs and the listing may be read anonymously.
    Container,
    /// Blobs (not the listing) may be read anonymously.
    Blob,
}

impl PublicAccess {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PublicAccess::Container => "container",
            PublicAccess::Blob => "blob",
        }
    }

    fn parse(s: &str) -> Option<PublicAccess> {
        match s {
            "container" => Some(PublicAccess::Container),
            "blob" => Some(PublicAccess::Blob),
            _ => None,
        }
    }
}

/// Properties of a blob or snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobProperties {
    /// The version's ETag (empty for uncommitted-only blobs in a listing).
    pub etag: Etag,
    /// Last-Modified (the epoch for uncommitted-only blobs in a listing).
    pub last_modified: SystemTime,
    /// Creation time, when reported.
    pub creation_time: Option<SystemTime>,
    /// The whole blob's length in bytes (also on range reads).
    pub content_length: u64,
    /// The six content properties.
    pub content: ContentProperties,
    /// The blob type.
    pub blob_type: BlobType,
    /// Lease properties (base blobs only).
    pub lease: LeaseInfo,
    /// User metadata (from listings only with metadata included).
    pub metadata: Metadata,
    /// Number of appended blocks (append blobs).
    pub committed_block_count: Option<u64>,
    /// Copy properties, when the blob is a Copy Blob destination.
    pub copy: Option<CopyProperties>,
    /// The access tier of a block blob.
    pub access_tier: Option<String>,
    /// The rest of what a block blob reports about its tier.
    pub tier_info: crate::TierInfo,
    /// The sequence number of a page blob.
    pub sequence_number: Option<u64>,
    /// The version id (`x-ms-version-id`; in a listing, `<VersionId>`),
    /// when versioning is on.
    pub version_id: Option<String>,
    /// Whether this is the blob's current version (`x-ms-is-current-version`;
    /// in a listing, `<IsCurrentVersion>`).
    pub is_current_version: bool,
    /// When it was soft-deleted (listings with deleted blobs only).
    pub deleted_time: Option<SystemTime>,
    /// Whole days left before a soft-deleted entry is purged (listings
    /// with deleted blobs only).
    pub remaining_retention_days: Option<u32>,
}

/// Properties of a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerProperties {
    /// The container's ETag.
    pub etag: Etag,
    /// Last-Modified.
    pub last_modified: SystemTime,
    /// Lease properties.
    pub lease: LeaseInfo,
    /// Anonymous access, when public.
    pub public_access: Option<PublicAccess>,
    /// User metadata (from listings only with metadata included).
    pub metadata: Metadata,
}

/// A byte range to read: `start` through `end` inclusive, or to the end of
/// the blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// First byte.
    pub start: u64,
    /// Last byte (inclusive); `None` reads to the end.
    pub end: Option<u64>,
}

impl ByteRange {
    /// `len` bytes from `start` (`len` must be at least 1).
    pub fn new(start: u64, len: u64) -> ByteRange {
        ByteRange {
            start,
            end: Some(start + len.max(1) - 1),
        }
    }

    /// From `start` to the end of the blob.
    pub fn from(start: u64) -> ByteRange {
        ByteRange { start, end: None }
    }

    /// The `x-ms-range` value.
    pub(crate) fn header_value(&self) -> String {
        match self.end {
            Some(end) => format!("bytes={}-{end}", self.start),
            None => format!("bytes={}-", self.start),
        }
    }
}

/// The range a 206 answer carries (`Content-Range: bytes S-E/size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentRange {
    /// First byte returned.
    pub start: u64,
    /// Last byte returned (inclusive).
    pub end: u64,
    /// The whole blob's length.
    pub total: u64,
}

impl ContentRange {
    /// Parses `bytes S-E/size`.
    pub fn parse(s: &str) -> Option<ContentRange> {
        let rest = s.trim().strip_prefix("bytes ")?;
        let (range, total) = rest.split_once('/')?;
        let (start, end) = range.split_once('-')?;
        Some(ContentRange {
            start: start.trim().parse().ok()?,
            end: end.trim().parse().ok()?,
            total: total.trim().parse().ok()?,
        })
    }
}

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub(crate) fn header_etag(headers: &HeaderMap) -> Result<Etag> {
    header(headers, "etag")
        .map(Etag::new)
        .ok_or_else(|| Error::InvalidResponse("no ETag header".into()))
}

pub(crate) fn header_date(headers: &HeaderMap, name: &str) -> Option<SystemTime> {
    header(headers, name).and_then(|v| httpdate::parse_http_date(v).ok())
}

pub(crate) fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    header(headers, name).and_then(|v| v.trim().parse().ok())
}

fn owned(v: Option<&str>) -> Option<String> {
    v.filter(|s| !s.is_empty()).map(str::to_owned)
}

impl BlobProperties {
    /// From the headers of Get Blob or Get Blob Properties.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<BlobProperties> {
        let range = header(headers, "content-range").and_then(ContentRange::parse);
        let content_length = match range {
            Some(r) => r.total,
            None => header_u64(headers, "content-length").unwrap_or(0),
        };
        // A range read reports the stored whole-blob MD5 separately.
        let md5 = if range.is_some() {
            header(headers, "x-ms-blob-content-md5")
        } else {
            header(headers, "content-md5")
        };
        let copy = header(headers, "x-ms-copy-id").map(|id| CopyProperties {
            id: id.to_owned(),
            status: CopyStatus::parse(header(headers, "x-ms-copy-status").unwrap_or("")),
            source: owned(header(headers, "x-ms-copy-source")),
            progress: owned(header(headers, "x-ms-copy-progress")),
            completion_time: header_date(headers, "x-ms-copy-completion-time"),
        });
        Ok(BlobProperties {
            etag: header_etag(headers)?,
            last_modified: header_date(headers, "last-modified").unwrap_or(UNIX_EPOCH),
            creation_time: header_date(headers, "x-ms-creation-time"),
            content_length,
            content: ContentProperties {
                content_type: owned(header(headers, "content-type")),
                content_encoding: owned(header(headers, "content-encoding")),
                content_language: owned(header(headers, "content-language")),
                content_disposition: owned(header(headers, "content-disposition")),
                cache_control: owned(header(headers, "cache-control")),
                content_md5: md5.and_then(|m| STANDARD.decode(m).ok()),
            },
            blob_type: BlobType::parse(header(headers, "x-ms-blob-type").unwrap_or("")),
            lease: LeaseInfo::parse(
                header(headers, "x-ms-lease-state"),
                header(headers, "x-ms-lease-status"),
                header(headers, "x-ms-lease-duration"),
            ),
            metadata: Metadata::from_headers(headers),
            committed_block_count: header_u64(headers, "x-ms-blob-committed-block-count"),
            copy,
            access_tier: owned(header(headers, "x-ms-access-tier")),
            tier_info: crate::TierInfo::from_headers(headers),
            sequence_number: header_u64(headers, "x-ms-blob-sequence-number"),
            version_id: owned(header(headers, "x-ms-version-id")),
            is_current_version: header(headers, "x-ms-is-current-version") == Some("true"),
            deleted_time: None,
            remaining_retention_days: None,
        })
    }

    /// From a `<Blob>` entry's `<Properties>` and `<Metadata>`.
    pub(crate) fn from_listing(blob: &Element) -> BlobProperties {
        let empty = Element::default();
        let p = blob.child("Properties").unwrap_or(&empty);
        let date = |name: &str| {
            p.text_of(name)
                .and_then(|v| httpdate::parse_http_date(v).ok())
        };
        let copy = p.non_empty("CopyId").map(|id| CopyProperties {
            id,
            status: CopyStatus::parse(p.text_of("CopyStatus").unwrap_or("")),
            source: p.non_empty("CopySource"),
            progress: p.non_empty("CopyProgress"),
            completion_time: date("CopyCompletionTime"),
        });
        BlobProperties {
            etag: Etag::new(p.text_of("Etag").unwrap_or("")),
            last_modified: date("Last-Modified").unwrap_or(UNIX_EPOCH),
            creation_time: date("Creation-Time"),
            content_length: p
                .text_of("Content-Length")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            content: ContentProperties {
                content_type: p.non_empty("Content-Type"),
                content_encoding: p.non_empty("Content-Encoding"),
                content_language: p.non_empty("Content-Language"),
                content_disposition: p.non_empty("Content-Disposition"),
                cache_control: p.non_empty("Cache-Control"),
                content_md5: p
                    .non_empty("Content-MD5")
                    .and_then(|m| STANDARD.decode(m.trim()).ok()),
            },
            blob_type: BlobType::parse(p.text_of("BlobType").unwrap_or("")),
            lease: LeaseInfo::parse(
                p.text_of("LeaseState"),
                p.text_of("LeaseStatus"),
                p.text_of("LeaseDuration"),
            ),
            metadata: metadata_from_listing(blob),
            committed_block_count: None,
            copy,
            access_tier: p.non_empty("AccessTier"),
            tier_info: crate::TierInfo::from_listing(p),
            sequence_number: p
                .text_of("x-ms-blob-sequence-number")
                .and_then(|v| v.trim().parse().ok()),
            version_id: blob.non_empty("VersionId"),
            is_current_version: blob.text_of("IsCurrentVersion") == Some("true"),
            deleted_time: date("DeletedTime"),
            remaining_retention_days: p
                .text_of("RemainingRetentionDays")
                .and_then(|v| v.trim().parse().ok()),
        }
    }
}

impl ContainerProperties {
    /// From the headers of Get Container Properties.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<ContainerProperties> {
        Ok(ContainerProperties {
            etag: header_etag(headers)?,
            last_modified: header_date(headers, "last-modified").unwrap_or(UNIX_EPOCH),
            lease: LeaseInfo::parse(
                header(headers, "x-ms-lease-state"),
                header(headers, "x-ms-lease-status"),
                header(headers, "x-ms-lease-duration"),
            ),
            public_access: header(headers, "x-ms-blob-public-access").and_then(PublicAccess::parse),
            metadata: Metadata::from_headers(headers),
        })
    }

    /// From a `<Container>` entry.
    pub(crate) fn from_listing(container: &Element) -> ContainerProperties {
        let empty = Element::default();
        let p = container.child("Properties").unwrap_or(&empty);
        ContainerProperties {
            etag: Etag::new(p.text_of("Etag").unwrap_or("")),
            last_modified: p
                .text_of("Last-Modified")
                .and_then(|v| httpdate::parse_http_date(v).ok())
                .unwrap_or(UNIX_EPOCH),
            lease: LeaseInfo::parse(
                p.text_of("LeaseState"),
                p.text_of("LeaseStatus"),
                p.text_of("LeaseDuration"),
            ),
            public_access: p.text_of("PublicAccess").and_then(PublicAccess::parse),
            metadata: metadata_from_listing(container),
        }
    }
}

fn metadata_from_listing(entry: &Element) -> Metadata {
    entry
        .child("Metadata")
        .map(|m| {
            m.children
                .iter()
                .map(|c| (c.name.clone(), c.text.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_parse() {
        let table = [
            ("bytes 0-9/100", Some((0, 9, 100))),
            ("bytes 5-5/6", Some((5, 5, 6))),
            ("bytes */100", None),
            ("items 0-1/2", None),
        ];
        for (input, expected) in table {
            let parsed = ContentRange::parse(input).map(|r| (r.start, r.end, r.total));
            assert_eq!(parsed, expected, "{input}");
        }
    }

    #[test]
    fn byte_ranges_render_as_x_ms_range() {
        assert_eq!(ByteRange::new(0, 10).header_value(), "bytes=0-9");
        assert_eq!(ByteRange::new(7, 1).header_value(), "bytes=7-7");
        assert_eq!(ByteRange::from(512).header_value(), "bytes=512-");
    }

    #[test]
    fn listing_entries_read_properties_and_metadata() {
        let doc = crate::xml::parse(
            "<Blob><Name>a</Name><Properties><Last-Modified>Tue, 03 Sep 2024 10:15:07 GMT</Last-Modified>\
             <Etag>0x8D1</Etag><Content-Length>5120</Content-Length><Content-Type>text/plain</Content-Type>\
             <Content-Encoding /><Content-MD5 /><BlobType>AppendBlob</BlobType><LeaseStatus>locked</LeaseStatus>\
             <LeaseState>leased</LeaseState><LeaseDuration>infinite</LeaseDuration></Properties>\
             <Metadata><first>x</first></Metadata></Blob>",
        )
        .unwrap();
        let p = BlobProperties::from_listing(&doc);
        assert_eq!(p.etag, Etag::new("\"0x8D1\""));
        assert_eq!(p.content_length, 5120);
        assert_eq!(p.content.content_type.as_deref(), Some("text/plain"));
        assert_eq!(p.content.content_encoding, None);
        assert_eq!(p.blob_type, BlobType::AppendBlob);
        assert_eq!(p.lease.state, Some(LeaseState::Leased));
        assert_eq!(p.lease.duration, Some(LeaseDurationType::Infinite));
        assert_eq!(p.metadata.get("first"), Some("x"));
        assert_eq!(
            httpdate::fmt_http_date(p.last_modified),
            "Tue, 03 Sep 2024 10:15:07 GMT"
        );
    }
}
