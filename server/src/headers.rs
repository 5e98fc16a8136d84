//! Typed readers for request headers: one parser per header kind, and one
//! generic helper that turns a bad value into `InvalidHeaderValue` naming
//! the header.

use actix_web::http::header::HeaderMap;
use base64::Engine as _;
use stowage_blobstore::{
    ByteRange, Conditions, ContentProperties, EtagMatch, LeaseId, Metadata, TagCondition, Tags,
};

use crate::error::ApiError;

/// The content type the service gives a blob created without one.
pub(crate) const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// The request headers, with typed accessors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Headers<'a>(pub &'a HeaderMap);

fn invalid(name: &str, value: &str) -> ApiError {
    ApiError::InvalidHeaderValue {
        name: name.to_owned(),
        value: value.to_owned(),
    }
}

impl<'a> Headers<'a> {
    /// The value of `name` as text; a value that is not visible ASCII/UTF-8
    /// is `InvalidHeaderValue`.
    pub(crate) fn get(&self, name: &str) -> Result<Option<&'a str>, ApiError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(v) => v
                .to_str()
                .map(Some)
                .map_err(|_| invalid(name, &String::from_utf8_lossy(v.as_bytes()))),
        }
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Parses `name` with `parse`; `None` from `parse` is `InvalidHeaderValue`.
    pub(crate) fn parse<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, ApiError> {
        match self.get(name)? {
            None => Ok(None),
            Some(v) => parse(v).map(Some).ok_or_else(|| invalid(name, v)),
        }
    }

    /// Like [`Headers::parse`], for a header the operation requires.
    pub(crate) fn require<T>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, ApiError> {
        self.parse(name, parse)?
            .ok_or(ApiError::MissingRequiredHeader(name))
    }

    /// `Content-Length`, required on body-carrying PUTs (411 when missing).
    pub(crate) fn content_length(&self) -> Result<u64, ApiError> {
        self.parse("content-length", |v| v.trim().parse::<u64>().ok())?
            .ok_or(ApiError::MissingContentLength)
    }

    /// The four standard conditional headers (docs/wire/conditions.md#parsing-the-headers). An
    /// unparseable date is ignored as the service does; a date header given
    /// twice is `MultipleConditionHeadersNotSupported`.
    pub(crate) fn conditions(&self) -> Result<Conditions, ApiError> {
        self.conditions_with_names([
            "if-match",
            "if-none-match",
            "if-modified-since",
            "if-unmodified-since",
            "x-ms-if-tags",
        ])
    }

    /// The Copy Blob source conditions (`x-ms-source-if-*`).
    pub(crate) fn source_conditions(&self) -> Result<Conditions, ApiError> {
        self.conditions_with_names([
            "x-ms-source-if-match",
            "x-ms-source-if-none-match",
            "x-ms-source-if-modified-since",
            "x-ms-source-if-unmodified-since",
            "x-ms-source-if-tags",
        ])
    }

    fn conditions_with_names(&self, names: [&str; 5]) -> Result<Conditions, ApiError> {
        let [if_match, if_none_match, modified, unmodified, if_tags] = names;
        Ok(Conditions {
            if_match: self.etag_list(if_match)?,
            if_none_match: self.etag_list(if_none_match)?,
            if_modified_since: self.date_condition(modified)?,
            if_unmodified_since: self.date_condition(unmodified)?,
            if_tags: self.if_tags(if_tags)?,
        })
    }

    /// A tag condition header (`x-ms-if-tags`, `x-ms-source-if-tags`); one
    /// that does not parse is `400 InvalidHeaderValue` (docs/wire/tags.md).
    pub(crate) fn if_tags(&self, name: &str) -> Result<Option<TagCondition>, ApiError> {
        let Some(v) = self.get(name)? else {
            return Ok(None);
        };
        TagCondition::parse(v)
            .map(Some)
            .map_err(|_| invalid(name, v))
    }

    /// `x-ms-tags` (Put Blob, Put Block List, Copy Blob): a tag set in
    /// query-string form, `k1=v1&k2=v2`, percent-encoded; absent is no tags.
    ///
    /// # Errors
    /// The tag rules' codes (`TagsTooLarge`, `EmptyTagName`, ...).
    pub(crate) fn tags(&self) -> Result<Tags, ApiError> {
        let Some(v) = self.get("x-ms-tags")? else {
            return Ok(Tags::default());
        };
        let mut pairs = Vec::new();
        for part in v.split('&').filter(|p| !p.is_empty()) {
            let (k, val) = part.split_once('=').unwrap_or((part, ""));
            pairs.push((query_decode(k), query_decode(val)));
        }
        Ok(Tags::new(pairs).map_err(stowage_blobstore::Error::from)?)
    }

    fn etag_list(&self, name: &str) -> Result<Option<EtagMatch>, ApiError> {
        let mut values = Vec::new();
        for v in self.0.get_all(name) {
            values.push(
                v.to_str()
                    .map_err(|_| invalid(name, &String::from_utf8_lossy(v.as_bytes())))?,
            );
        }
        if values.is_empty() {
            return Ok(None);
        }
        // A repeated header is one comma-joined list (docs/wire/conditions.md#parsing-the-headers).
        Ok(EtagMatch::parse(&values.join(",")))
    }

    fn date_condition(&self, name: &str) -> Result<Option<std::time::SystemTime>, ApiError> {
        let mut all = self.0.get_all(name);
        let Some(first) = all.next() else {
            return Ok(None);
        };
        if all.next().is_some() {
            return Err(stowage_blobstore::Error::Condition(
                stowage_blobstore::ConditionFailure::MultipleConditionHeadersNotSupported,
            )
            .into());
        }
        Ok(first
            .to_str()
            .ok()
            .and_then(|s| httpdate::parse_http_date(s.trim()).ok()))
    }

    /// `x-ms-lease-id`.
    pub(crate) fn lease_id(&self) -> Result<Option<LeaseId>, ApiError> {
        self.parse("x-ms-lease-id", |v| LeaseId::parse(v.trim()).ok())
    }

    /// The `x-ms-meta-*` headers as validated metadata (docs/wire/requests.md#metadata).
    /// `exact` holds the names as the client wrote them (the header map only
    /// has them lowercased); a name missing there is kept lowercase.
    pub(crate) fn metadata(&self, exact: &[String]) -> Result<Metadata, ApiError> {
        let mut pairs = Vec::new();
        for (name, value) in self.0.iter() {
            let Some(lower) = name.as_str().strip_prefix("x-ms-meta-") else {
                continue;
            };
            let key = exact
                .iter()
                .find(|e| e.eq_ignore_ascii_case(lower))
                .map_or(lower, String::as_str);
            let value = value.to_str().map_err(|_| {
                stowage_blobstore::Error::Metadata(stowage_blobstore::MetadataError::Invalid(
                    key.to_owned(),
                ))
            })?;
            pairs.push((key.to_owned(), value.trim().to_owned()));
        }
        // The header map forgets the order; the raw head remembers it.
        pairs.sort_by_key(|(k, _)| exact.iter().position(|e| e == k).unwrap_or(usize::MAX));
        Metadata::from_pairs(pairs).map_err(|e| stowage_blobstore::Error::Metadata(e).into())
    }

    /// An MD5 header: base64 of exactly 16 bytes, else `InvalidMd5`.
    pub(crate) fn md5(&self, name: &str) -> Result<Option<[u8; 16]>, ApiError> {
        match self.get(name)? {
            None => Ok(None),
            Some(v) => decode_md5(v).map(Some).ok_or(ApiError::InvalidMd5),
        }
    }

    /// A CRC64 header: base64 of the CRC's 8 bytes, least significant first.
    /// Fewer bytes or bad base64: `InvalidHeaderValue`; more than 8 bytes
    /// can match no CRC: `Crc64Mismatch`, before the body is read.
    pub(crate) fn crc64(&self, name: &str) -> Result<Option<u64>, ApiError> {
        let Some(v) = self.get(name)? else {
            return Ok(None);
        };
        match decode_crc64(v) {
            Crc64Header::Value(crc) => Ok(Some(crc)),
            Crc64Header::TooLong => Err(stowage_blobstore::Error::Crc64Mismatch {
                expected: None,
                computed: None,
            }
            .into()),
            Crc64Header::Invalid => Err(ApiError::InvalidHeaderValue {
                name: name.to_owned(),
                value: v.to_owned(),
            }),
        }
    }

    /// The transactional checksums of a request body: `Content-MD5` and
    /// `x-ms-content-crc64`, at most one of them.
    pub(crate) fn transactional(&self) -> Result<Transactional, ApiError> {
        if self.has("content-md5") && self.has("x-ms-content-crc64") {
            return Err(ApiError::BothCrc64AndMd5HeaderPresent);
        }
        Ok(Transactional {
            md5: self.md5("content-md5")?,
            crc64: self.crc64("x-ms-content-crc64")?,
        })
    }

    /// The content properties of Put Blob: each `x-ms-blob-*` header, else its
    /// standard twin (docs/wire/requests.md#content-properties). A blob created without a
    /// content type gets `application/octet-stream`, as the service stores.
    pub(crate) fn put_blob_content(&self) -> Result<ContentProperties, ApiError> {
        // Of a block blob, the engine checks x-ms-blob-content-md5 and
        // Content-MD5 against the body, so whichever is stored is the
        // body's MD5.
        let md5 = match self.md5("x-ms-blob-content-md5")? {
            Some(m) => Some(m.to_vec()),
            None => self.md5("content-md5")?.map(|m| m.to_vec()),
        };
        self.put_content(md5)
    }

    /// The content properties of Put Blob of an append or page blob: as
    /// [`Headers::put_blob_content`], except that `x-ms-blob-content-md5`,
    /// with no body to check it against, is stored as given, of any length,
    /// as Set Blob Properties stores it (docs/wire/blobs.md#put-blob).
    pub(crate) fn put_empty_blob_content(&self) -> Result<ContentProperties, ApiError> {
        let md5 = match self.blob_md5_as_given()? {
            Some(m) => Some(m),
            None => self.md5("content-md5")?.map(|m| m.to_vec()),
        };
        self.put_content(md5)
    }

    fn put_content(&self, content_md5: Option<Vec<u8>>) -> Result<ContentProperties, ApiError> {
        let either = |blob: &str, standard: &str| -> Result<Option<String>, ApiError> {
            Ok(match self.get(blob)? {
                Some(v) => Some(v.to_owned()),
                None => self.get(standard)?.map(str::to_owned),
            })
        };
        Ok(ContentProperties {
            content_type: Some(
                either("x-ms-blob-content-type", "content-type")?
                    .unwrap_or_else(|| DEFAULT_CONTENT_TYPE.to_owned()),
            ),
            content_encoding: either("x-ms-blob-content-encoding", "content-encoding")?,
            content_language: either("x-ms-blob-content-language", "content-language")?,
            content_md5,
            cache_control: either("x-ms-blob-cache-control", "cache-control")?,
            content_disposition: self
                .get("x-ms-blob-content-disposition")?
                .map(str::to_owned),
        })
    }

    /// `x-ms-blob-content-md5` as given: any length; only a value that is
    /// not base64 is refused (`400 InvalidMd5`).
    fn blob_md5_as_given(&self) -> Result<Option<Vec<u8>>, ApiError> {
        match self.get("x-ms-blob-content-md5")? {
            None => Ok(None),
            Some(v) => base64::engine::general_purpose::STANDARD
                .decode(v.trim())
                .map(Some)
                .map_err(|_| ApiError::InvalidMd5),
        }
    }

    /// The content properties of Set Blob Properties and Put Block List: only
    /// the `x-ms-blob-*` headers; absent ones are cleared (Content-Type
    /// included). `x-ms-blob-content-md5` is checked against nothing here, so
    /// it is stored as given, of any length, as the service stores it; only
    /// a value that is not base64 is refused.
    pub(crate) fn blob_content_headers(&self) -> Result<ContentProperties, ApiError> {
        let own = |name: &str| -> Result<Option<String>, ApiError> {
            Ok(self.get(name)?.map(str::to_owned))
        };
        Ok(ContentProperties {
            content_type: own("x-ms-blob-content-type")?,
            content_encoding: own("x-ms-blob-content-encoding")?,
            content_language: own("x-ms-blob-content-language")?,
            content_md5: self.blob_md5_as_given()?,
            cache_control: own("x-ms-blob-cache-control")?,
            content_disposition: own("x-ms-blob-content-disposition")?,
        })
    }

    /// The requested range: `x-ms-range` wins over `Range`; a form the
    /// service ignores gives `None` (a full read).
    pub(crate) fn range(&self) -> Result<Option<ByteRange>, ApiError> {
        let value = match self.get("x-ms-range")? {
            Some(v) => Some(v),
            None => self.get("range")?,
        };
        Ok(value.and_then(ByteRange::parse))
    }

    /// A `true`/`false` header; absent is `false`.
    pub(crate) fn flag(&self, name: &str) -> Result<bool, ApiError> {
        Ok(self.optional_flag(name)?.unwrap_or(false))
    }

    /// A `true`/`false` header; absent is `None`.
    pub(crate) fn optional_flag(&self, name: &str) -> Result<Option<bool>, ApiError> {
        self.parse(name, |v| match v.trim() {
            "true" | "True" | "TRUE" => Some(true),
            "false" | "False" | "FALSE" => Some(false),
            _ => None,
        })
    }
}

/// The transactional checksums a request sent for its body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Transactional {
    /// `Content-MD5`.
    pub md5: Option<[u8; 16]>,
    /// `x-ms-content-crc64`.
    pub crc64: Option<u64>,
}

/// What a CRC64 header holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Crc64Header {
    /// Exactly 8 bytes: the CRC.
    Value(u64),
    /// More than 8 bytes: well-formed, but no CRC equals it.
    TooLong,
    /// Not base64, or fewer than 8 bytes.
    Invalid,
}

/// Reads a CRC64 header value (padding optional, as the service takes it).
pub(crate) fn decode_crc64(value: &str) -> Crc64Header {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
    let v = value.trim();
    let Ok(bytes) = STANDARD.decode(v).or_else(|_| STANDARD_NO_PAD.decode(v)) else {
        return Crc64Header::Invalid;
    };
    match <[u8; 8]>::try_from(bytes.as_slice()) {
        Ok(b) => Crc64Header::Value(u64::from_le_bytes(b)),
        Err(_) if bytes.len() > 8 => Crc64Header::TooLong,
        Err(_) => Crc64Header::Invalid,
    }
}

/// Base64 of exactly 16 bytes.
pub(crate) fn decode_md5(value: &str) -> Option<[u8; 16]> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .ok()?;
    <[u8; 16]>::try_from(bytes).ok()
}

/// Decodes one component of a query string (`+` is a space, `%XX` a byte).
fn query_decode(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (n, v) in pairs {
            m.append(
                HeaderName::from_bytes(n.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        m
    }

    #[test]
    fn crc64_headers_are_eight_bytes_least_significant_first() {
        let table = [
            ("AQIDBAUGBwg=", Crc64Header::Value(0x0807_0605_0403_0201)),
            ("AQIDBAUGBwg", Crc64Header::Value(0x0807_0605_0403_0201)),
            (" AAAAAAAAAAA= ", Crc64Header::Value(0)),
            ("AQIDBAUGBwgJ", Crc64Header::TooLong),
            ("AQIDBAUGBw==", Crc64Header::Invalid),
            ("", Crc64Header::Invalid),
            ("not base64!", Crc64Header::Invalid),
        ];
        for (value, expected) in table {
            assert_eq!(decode_crc64(value), expected, "{value:?}");
        }
    }

    #[test]
    fn md5_and_crc64_together_are_refused_first() {
        let m = map(&[("content-md5", "bad"), ("x-ms-content-crc64", "bad")]);
        let e = Headers(&m).transactional().unwrap_err();
        assert_eq!(e.answer().code, "BothCrc64AndMd5HeaderPresent");
        let m = map(&[("x-ms-content-crc64", "AQIDBAUGBw==")]);
        let e = Headers(&m).transactional().unwrap_err();
        assert_eq!(e.answer().code, "InvalidHeaderValue");
        let m = map(&[("x-ms-content-crc64", "AQIDBAUGBwgJ")]);
        let e = Headers(&m).transactional().unwrap_err();
        assert_eq!(e.answer().code, "Crc64Mismatch");
        let m = map(&[("x-ms-content-crc64", "AQIDBAUGBwg=")]);
        let t = Headers(&m).transactional().unwrap();
        assert_eq!(t.crc64, Some(0x0807_0605_0403_0201));
    }

    #[test]
    fn conditions_parse_lists_dates_and_ignore_bad_dates() {
        let m = map(&[
            ("if-match", "\"0x1\""),
            ("if-match", "0x2"),
            ("if-modified-since", "Tue, 03 Sep 2024 10:15:07 GMT"),
            ("if-unmodified-since", "not a date"),
        ]);
        let c = Headers(&m).conditions().unwrap();
        assert_eq!(
            c.if_match,
            Some(EtagMatch::List(vec!["0x1".into(), "0x2".into()]))
        );
        assert!(c.if_modified_since.is_some());
        assert_eq!(c.if_unmodified_since, None);
    }

    #[test]
    fn a_repeated_date_header_is_refused() {
        let m = map(&[
            ("if-modified-since", "Tue, 03 Sep 2024 10:15:07 GMT"),
            ("if-modified-since", "Tue, 03 Sep 2024 10:15:08 GMT"),
        ]);
        let e = Headers(&m).conditions().unwrap_err();
        assert_eq!(e.answer().code, "MultipleConditionHeadersNotSupported");
    }

    #[test]
    fn put_blob_content_prefers_x_ms_blob_headers() {
        let m = map(&[
            ("content-type", "text/plain"),
            ("x-ms-blob-content-type", "text/markdown"),
            ("content-encoding", "gzip"),
            ("x-ms-blob-content-disposition", "inline"),
        ]);
        let c = Headers(&m).put_blob_content().unwrap();
        assert_eq!(c.content_type.as_deref(), Some("text/markdown"));
        assert_eq!(c.content_encoding.as_deref(), Some("gzip"));
        assert_eq!(c.content_disposition.as_deref(), Some("inline"));
        assert_eq!(c.cache_control, None);
    }

    #[test]
    fn md5_must_be_sixteen_bytes_of_base64() {
        assert!(decode_md5("1B2M2Y8AsgTpgAmY7PhCfg==").is_some());
        assert!(decode_md5("AAAA").is_none());
        assert!(decode_md5("not base64").is_none());
        let m = map(&[("content-md5", "AAAA")]);
        let e = Headers(&m).md5("content-md5").unwrap_err();
        assert_eq!(e.answer().code, "InvalidMd5");
    }

    #[test]
    fn metadata_headers_are_collected_and_validated() {
        let m = map(&[("x-ms-meta-owner", " alice "), ("x-ms-meta-", "v")]);
        assert_eq!(
            Headers(&m).metadata(&[]).unwrap_err().answer().code,
            "EmptyMetadataKey"
        );
        let m = map(&[("x-ms-meta-owner", " alice "), ("x-ms-meta-other", "x")]);
        let md = Headers(&m).metadata(&["Owner".to_owned()]).unwrap();
        assert_eq!(
            md.pairs(),
            [
                ("Owner".to_owned(), "alice".to_owned()),
                ("other".to_owned(), "x".to_owned())
            ]
        );
        let twice = map(&[("x-ms-meta-owner", "a"), ("x-ms-meta-owner", "b")]);
        let names = ["Owner".to_owned(), "owner".to_owned()];
        assert_eq!(
            Headers(&twice).metadata(&names).unwrap_err().answer().code,
            "InvalidMetadata"
        );
    }

    #[test]
    fn x_ms_range_wins_over_range() {
        let m = map(&[("range", "bytes=0-1"), ("x-ms-range", "bytes=5-9")]);
        assert_eq!(
            Headers(&m).range().unwrap(),
            Some(ByteRange {
                start: 5,
                end: Some(9)
            })
        );
    }
}
