//! Typed conditions (docs/wire/conditions.md): ETag and date conditions, and
//! the lease id a request presents, which the service checks alongside them.

use std::fmt;
use std::time::SystemTime;

use crate::LeaseId;
use crate::pipeline::Request;

/// An entity tag, kept without quotes.
///
/// Headers carry ETags quoted (`"0x8D…"`) and List Blobs carries them bare;
/// both forms parse to the same value, so they compare equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Etag(String);

impl Etag {
    /// An ETag from either form; surrounding quotes and whitespace are
    /// removed.
    pub fn new(s: &str) -> Etag {
        let s = s.trim();
        let s = s
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s);
        Etag(s.to_owned())
    }

    /// The bare value.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The quoted form used in headers.
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

impl fmt::Display for Etag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Etag {
    fn from(s: &str) -> Etag {
        Etag::new(s)
    }
}

/// The value of an `If-Match` / `If-None-Match` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EtagCondition {
    /// `*`: any existing version.
    Any,
    /// One specific version.
    Etag(Etag),
}

impl EtagCondition {
    fn header_value(&self) -> String {
        match self {
            EtagCondition::Any => "*".to_owned(),
            EtagCondition::Etag(e) => e.quoted(),
        }
    }
}

/// Conditions a request must meet, plus the lease id it presents.
///
/// The service accepts only some combinations on writes (docs/wire/conditions.md#writes: one header, If-Match with If-Unmodified-Since, or If-None-Match
/// with If-Modified-Since); this type sends what it is given and lets the
/// service judge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conditions {
    /// `If-Match`.
    pub if_match: Option<EtagCondition>,
    /// `If-None-Match`.
    pub if_none_match: Option<EtagCondition>,
    /// `If-Modified-Since` (compared at whole seconds).
    pub if_modified_since: Option<SystemTime>,
    /// `If-Unmodified-Since` (compared at whole seconds).
    pub if_unmodified_since: Option<SystemTime>,
    /// `x-ms-lease-id`: required for writes to a leased blob, optional for
    /// reads (docs/wire/leases.md#writes-to-a-leased-blob).
    pub lease_id: Option<LeaseId>,
    /// `x-ms-if-tags` (`x-ms-source-if-tags` as a Copy Blob source
    /// condition): an expression over the blob's index tags, such as
    /// `"state" = 'ready' AND "rank" >= '05'`.
    pub if_tags: Option<String>,
}

impl Conditions {
    /// No conditions.
    pub fn new() -> Conditions {
        Conditions::default()
    }

    /// Only if the resource's ETag is `etag`.
    pub fn with_if_match(mut self, etag: Etag) -> Conditions {
        self.if_match = Some(EtagCondition::Etag(etag));
        self
    }

    /// Only if the resource exists (`If-Match: *`).
    pub fn with_if_exists(mut self) -> Conditions {
        self.if_match = Some(EtagCondition::Any);
        self
    }

    /// Only if the resource's ETag is not `etag`.
    pub fn with_if_none_match(mut self, etag: Etag) -> Conditions {
        self.if_none_match = Some(EtagCondition::Etag(etag));
        self
    }

    /// Only if the resource does not exist (`If-None-Match: *`): a
    /// create-only write, refused with `409 BlobAlreadyExists`.
    pub fn with_if_not_exists(mut self) -> Conditions {
        self.if_none_match = Some(EtagCondition::Any);
        self
    }

    /// Only if modified after `t`.
    pub fn with_if_modified_since(mut self, t: SystemTime) -> Conditions {
        self.if_modified_since = Some(t);
        self
    }

    /// Only if not modified after `t`.
    pub fn with_if_unmodified_since(mut self, t: SystemTime) -> Conditions {
        self.if_unmodified_since = Some(t);
        self
    }

    /// Only when the blob's tags meet `expression` (`x-ms-if-tags`).
    pub fn with_if_tags(mut self, expression: impl Into<String>) -> Conditions {
        self.if_tags = Some(expression.into());
        self
    }

    /// Presents the lease id `id`.
    pub fn with_lease(mut self, id: LeaseId) -> Conditions {
        self.lease_id = Some(id);
        self
    }

    /// Adds every header (ETag and date conditions, lease id).
    pub(crate) fn apply(&self, request: Request) -> Request {
        self.apply_dates(request)
            .header_opt(
                "if-match",
                self.if_match.as_ref().map(EtagCondition::header_value),
            )
            .header_opt(
                "if-none-match",
                self.if_none_match.as_ref().map(EtagCondition::header_value),
            )
            .header_opt("x-ms-if-tags", self.if_tags.clone())
    }

    /// Adds only the date conditions and the lease id: container operations
    /// evaluate nothing else (docs/wire/errors.md#which-check-answers-first, COND2).
    pub(crate) fn apply_dates(&self, request: Request) -> Request {
        request
            .header_opt(
                "if-modified-since",
                self.if_modified_since.map(httpdate::fmt_http_date),
            )
            .header_opt(
                "if-unmodified-since",
                self.if_unmodified_since.map(httpdate::fmt_http_date),
            )
            .header_opt("x-ms-lease-id", self.lease_id.map(|id| id.to_string()))
    }

    /// Adds the conditions as Copy Blob source conditions
    /// (`x-ms-source-if-*`, docs/wire/conditions.md#copy-source-conditions); the lease id is ignored.
    pub(crate) fn apply_source(&self, request: Request) -> Request {
        request
            .header_opt(
                "x-ms-source-if-match",
                self.if_match.as_ref().map(EtagCondition::header_value),
            )
            .header_opt(
                "x-ms-source-if-none-match",
                self.if_none_match.as_ref().map(EtagCondition::header_value),
            )
            .header_opt(
                "x-ms-source-if-modified-since",
                self.if_modified_since.map(httpdate::fmt_http_date),
            )
            .header_opt(
                "x-ms-source-if-unmodified-since",
                self.if_unmodified_since.map(httpdate::fmt_http_date),
            )
            .header_opt("x-ms-source-if-tags", self.if_tags.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_compare_equal_quoted_or_bare() {
        let table = [
            ("\"0x8D9F0A1B2C3D4E5\"", "0x8D9F0A1B2C3D4E5"),
            ("0x8D9F0A1B2C3D4E5", "0x8D9F0A1B2C3D4E5"),
            (" \"0xA\" ", "0xA"),
            ("W/\"0xA\"", "W/\"0xA\""),
        ];
        for (input, bare) in table {
            let etag = Etag::new(input);
            assert_eq!(etag.as_str(), bare, "{input}");
            assert_eq!(Etag::new(&etag.quoted()), etag);
        }
    }
}
