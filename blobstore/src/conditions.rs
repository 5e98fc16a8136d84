//! Conditional requests (docs/wire/conditions.md): `If-Match`, `If-None-Match`,
//! `If-Modified-Since` and `If-Unmodified-Since`, their Copy Blob twins
//! `x-ms-source-if-*`, the Append Block conditions and the page blob
//! sequence-number conditions.
//!
//! Everything here is pure: no IO, no clock, no HTTP. The HTTP layer parses
//! the headers into [`Conditions`] and calls [`validate`] while it parses, so
//! that a `400` for a disallowed combination comes before any existence check
//! (check order of docs/wire/errors.md#which-check-answers-first). The store calls [`evaluate`]
//! inside the metadata transaction that performs the write, against the row
//! it read in that transaction: there is no window between the check and the
//! write, so of two writers presenting the same `If-Match` ETag exactly one
//! wins (docs/wire/conditions.md#one-transaction).
//!
//! `x-ms-if-tags` rides along in [`Conditions::if_tags`]; it is independent
//! of the four headers and must hold as well. [`evaluate_tags`] checks it
//! against the blob's tags, which the store reads only when the header was
//! sent (docs/wire/tags.md).

use std::time::{SystemTime, UNIX_EPOCH};

/// A parsed `If-Match` / `If-None-Match` value (docs/wire/conditions.md#parsing-the-headers):
/// `*` or a list of entity tags.
///
/// Tags are stored unquoted: surrounding whitespace is trimmed and one pair
/// of double quotes is stripped. A weak tag keeps its `W/` prefix (and its
/// quotes), so it never equals a Stowage ETag: there are no weak ETags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtagMatch {
    /// `*`: any current version of the resource.
    Any,
    /// One or more entity tags, unquoted, in the order sent.
    List(Vec<String>),
}

impl EtagMatch {
    /// Parses a header value: `*`, or entity tags separated by commas, each
    /// quoted (`"0x8D9F0A1B2C3D4E5"`) or bare (`0x8D9F0A1B2C3D4E5`).
    ///
    /// Returns `None` for an empty or blank value (and for one made only of
    /// commas), which the caller treats as an absent header. A repeated
    /// header is passed in joined with commas by the caller (docs/wire/conditions.md#parsing-the-headers).
    ///
    /// Deliberate choices (unverified against the service):
    /// * commas inside double quotes do not split, so `"a,b"` is one tag;
    /// * empty list elements (`"a",,"b"`) are skipped, as RFC 9110 §5.6.1
    ///   asks of recipients;
    /// * a bare `*` anywhere in the list makes the whole value `*` (a repeated
    ///   header may join `*` with tags; `*` already covers every tag);
    /// * a quoted `"*"` is the entity tag `*`, not the wildcard (RFC 9110
    ///   §13.1.1), and so matches no Stowage ETag.
    pub fn parse(header_value: &str) -> Option<EtagMatch> {
        let elements: Vec<&str> = split_list(header_value)
            .into_iter()
            .filter(|e| !e.is_empty())
            .collect();
        if elements.is_empty() {
            return None;
        }
        if elements.contains(&"*") {
            return Some(EtagMatch::Any);
        }
        let tags = elements.into_iter().map(|e| unquote(e).to_owned());
        Some(EtagMatch::List(tags.collect()))
    }

    /// Whether `etag` (unquoted) is matched: always for `*`, else when it is
    /// in the list. Comparison is exact and case-sensitive (docs/wire/conditions.md#parsing-the-headers).
    pub fn matches(&self, etag: &str) -> bool {
        match self {
            EtagMatch::Any => true,
            EtagMatch::List(tags) => tags.iter().any(|t| t == etag),
        }
    }

    fn has_several_tags(&self) -> bool {
        matches!(self, EtagMatch::List(tags) if tags.len() > 1)
    }
}

/// Splits a header list at commas that are not inside double quotes and trims
/// each element.
fn split_list(value: &str) -> Vec<&str> {
    let mut elements = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    // Byte offsets are char boundaries here: `"` and `,` are ASCII and never
    // part of a multi-byte UTF-8 sequence.
    for (i, b) in value.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => {
                elements.push(value[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    elements.push(value[start..].trim());
    elements
}

/// Strips one pair of surrounding double quotes, if there is one.
fn unquote(tag: &str) -> &str {
    tag.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(tag)
}

/// The four standard conditional headers of one request, already parsed
/// (or, for Copy Blob's source, the four `x-ms-source-if-*` headers).
///
/// A date the HTTP layer cannot parse is dropped there, as if the header were
/// absent (docs/wire/conditions.md#parsing-the-headers, observed service behaviour); a date header holding more than
/// one date is the HTTP layer's `400` as well.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    /// `If-Match`.
    pub if_match: Option<EtagMatch>,
    /// `If-None-Match`.
    pub if_none_match: Option<EtagMatch>,
    /// `If-Modified-Since`.
    pub if_modified_since: Option<SystemTime>,
    /// `If-Unmodified-Since`.
    pub if_unmodified_since: Option<SystemTime>,
    /// `x-ms-if-tags` (or `x-ms-source-if-tags`): not counted by
    /// [`Conditions::is_empty`] nor by [`validate`]'s combination rules.
    pub if_tags: Option<crate::tags::expr::TagCondition>,
}

impl Conditions {
    /// True when none of the four headers is present.
    pub fn is_empty(&self) -> bool {
        self.if_match.is_none()
            && self.if_none_match.is_none()
            && self.if_modified_since.is_none()
            && self.if_unmodified_since.is_none()
    }
}

/// What the conditions are compared against: the current version of the
/// target (or of the copy source).
#[derive(Clone, Copy, Debug)]
pub struct Current<'a> {
    /// The resource's ETag, unquoted.
    pub etag: &'a str,
    /// The resource's Last-Modified at full precision; it is compared at
    /// whole seconds (docs/wire/conditions.md#parsing-the-headers).
    pub last_modified: SystemTime,
}

/// How an operation evaluates conditions (docs/wire/conditions.md#which-operations-evaluate-which-headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionKind {
    /// Get Blob, Get Blob Properties, Get Blob Metadata and Get Page Ranges
    /// (whether Get Page Ranges may answer 304 is unverified): docs/wire/conditions.md#reads, any
    /// combination, an unmet `If-None-Match` / `If-Modified-Since` is `304`,
    /// and `If-None-Match: *` on an existing target is
    /// `400 UnsatisfiableCondition` (the behaviour of service versions
    /// 2016-05-31 and later, which Stowage applies to every version).
    Read,
    /// Put Blob, Put Block List and Copy Blob's destination: docs/wire/conditions.md#writes, and the
    /// target may be absent (for Put Block List a blob with only uncommitted
    /// blocks counts as absent, docs/wire/conditions.md#create-only). `If-None-Match: *` on an existing
    /// target is `409 BlobAlreadyExists`.
    Create,
    /// Set Blob Properties, Set Blob Metadata, Delete Blob, Append Block,
    /// Put Page, Snapshot Blob and Lease Blob: docs/wire/conditions.md#writes, and `If-None-Match: *` on
    /// an existing target is `412 ConditionNotMet` (the documented rule, docs/wire/conditions.md#create-only).
    Write,
    /// Delete Container, Lease Container and Set Container ACL: only
    /// `If-Modified-Since` and `If-Unmodified-Since` are evaluated; the ETag
    /// headers are ignored (docs/wire/errors.md#which-check-answers-first, COND2).
    ContainerDates,
    /// Set Container Metadata: only `If-Modified-Since` is evaluated; the
    /// other three headers are ignored.
    ContainerModifiedSince,
    /// Copy Blob's `x-ms-source-if-*` conditions against the source: docs/wire/conditions.md#copy-source-conditions,
    /// with the combination rules of docs/wire/conditions.md#writes; `*` in
    /// `x-ms-source-if-none-match` never holds.
    Source,
}

/// Why the conditions refuse a request. The comments give the answer the
/// HTTP layer maps each one to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionFailure {
    /// `304 Not Modified` (reads only, docs/wire/conditions.md#reads).
    NotModified,
    /// `412 ConditionNotMet`.
    ConditionNotMet,
    /// `412 SourceConditionNotMet`: a Copy Blob source condition (docs/wire/conditions.md#copy-source-conditions; the
    /// code is unverified, emulators answer `ConditionNotMet`).
    SourceConditionNotMet,
    /// `409 BlobAlreadyExists`: `If-None-Match: *` on an existing target of
    /// a [`ConditionKind::Create`] operation (docs/wire/conditions.md#create-only).
    BlobAlreadyExists,
    /// `400 UnsatisfiableCondition`: `If-None-Match: *` on an existing target
    /// of a read (docs/wire/conditions.md#reads).
    UnsatisfiableCondition,
    /// `400 MultipleConditionHeadersNotSupported`: a combination docs/wire/conditions.md#writes does not
    /// allow, or more than one ETag in `If-Match` / `If-None-Match` of a write.
    MultipleConditionHeadersNotSupported,
}

/// Checks what needs no resource: the header combinations of docs/wire/conditions.md#writes and the
/// one-ETag rule of writes. The HTTP layer calls it while parsing, so that
/// its `400` comes before any existence check (docs/wire/errors.md#which-check-answers-first);
/// [`evaluate`] calls it again.
///
/// * [`ConditionKind::Read`]: any combination and any number of ETags (docs/wire/conditions.md#reads).
/// * [`ConditionKind::Create`], [`ConditionKind::Write`],
///   [`ConditionKind::Source`]: none, one header, `If-Match` +
///   `If-Unmodified-Since`, or `If-None-Match` + `If-Modified-Since`; and
///   at most one ETag per list (`*` counts as one).
/// * [`ConditionKind::ContainerDates`]: the two date headers together are a
///   pair docs/wire/conditions.md#writes does not allow; the ETag headers are ignored, whatever they
///   hold.
/// * [`ConditionKind::ContainerModifiedSince`]: only `If-Modified-Since`
///   counts, so nothing can be refused.
///
/// # Errors
///
/// [`ConditionFailure::MultipleConditionHeadersNotSupported`].
pub fn validate(conditions: &Conditions, kind: ConditionKind) -> Result<(), ConditionFailure> {
    let c = conditions;
    let allowed = match kind {
        ConditionKind::Read | ConditionKind::ContainerModifiedSince => true,
        ConditionKind::ContainerDates => {
            c.if_modified_since.is_none() || c.if_unmodified_since.is_none()
        }
        ConditionKind::Create | ConditionKind::Write | ConditionKind::Source => {
            let pairs_allowed = match (
                c.if_match.is_some(),
                c.if_unmodified_since.is_some(),
                c.if_none_match.is_some(),
                c.if_modified_since.is_some(),
            ) {
                // Nothing from the second pair: none, If-Match,
                // If-Unmodified-Since, or both.
                (_, _, false, false) => true,
                // Nothing from the first pair: If-None-Match,
                // If-Modified-Since, or both.
                (false, false, _, _) => true,
                // Anything mixing the two pairs.
                _ => false,
            };
            let several_tags = [&c.if_match, &c.if_none_match]
                .into_iter()
                .flatten()
                .any(EtagMatch::has_several_tags);
            pairs_allowed && !several_tags
        }
    };
    if allowed {
        Ok(())
    } else {
        Err(ConditionFailure::MultipleConditionHeadersNotSupported)
    }
}

/// Evaluates `x-ms-if-tags` against the target's tags (empty when the
/// target is absent): `412 ConditionNotMet` when false, or
/// `412 SourceConditionNotMet` for a Copy Blob source.
///
/// # Errors
///
/// The [`ConditionFailure`] the request must be answered with.
pub fn evaluate_tags(
    conditions: &Conditions,
    tags: &crate::Tags,
    kind: ConditionKind,
) -> Result<(), ConditionFailure> {
    match &conditions.if_tags {
        Some(c) if !c.matches(tags) => Err(if kind == ConditionKind::Source {
            ConditionFailure::SourceConditionNotMet
        } else {
            ConditionFailure::ConditionNotMet
        }),
        _ => Ok(()),
    }
}

/// Evaluates the conditions of an operation of `kind` against the current
/// target, `None` when it is absent. Calls [`validate`] first.
///
/// Only [`ConditionKind::Create`] meets an absent target in practice: the
/// other operations answer 404 before this point (docs/wire/conditions.md#which-operations-evaluate-which-headers). Given `None` anyway,
/// every kind uses the "target absent" column of docs/wire/conditions.md#writes (`If-Match` fails,
/// everything else holds, except that `*` in `x-ms-source-if-none-match`
/// never holds, docs/wire/conditions.md#copy-source-conditions) rather than panicking; a read then follows docs/wire/conditions.md#reads with those
/// outcomes.
///
/// # Errors
///
/// The [`ConditionFailure`] the request must be answered with.
pub fn evaluate(
    conditions: &Conditions,
    current: Option<Current<'_>>,
    kind: ConditionKind,
) -> Result<(), ConditionFailure> {
    validate(conditions, kind)?;
    let c = conditions;
    match kind {
        ConditionKind::Read => evaluate_read(c, current),
        ConditionKind::Create | ConditionKind::Write | ConditionKind::Source => {
            evaluate_write(c, current, kind)
        }
        ConditionKind::ContainerDates => {
            evaluate_dates(c.if_modified_since, c.if_unmodified_since, current)
        }
        ConditionKind::ContainerModifiedSince => evaluate_dates(c.if_modified_since, None, current),
    }
}

/// docs/wire/conditions.md#reads: A guards the read (412), B decides between the body and 304.
fn evaluate_read(c: &Conditions, current: Option<Current<'_>>) -> Result<(), ConditionFailure> {
    if c.if_none_match == Some(EtagMatch::Any) && current.is_some() {
        return Err(ConditionFailure::UnsatisfiableCondition);
    }
    let a = c.if_match.as_ref().is_none_or(|m| if_match(m, current))
        && c.if_unmodified_since
            .is_none_or(|d| unmodified_since(d, current));
    let b = (c.if_none_match.is_none() && c.if_modified_since.is_none())
        || c.if_none_match
            .as_ref()
            .is_some_and(|m| if_none_match(m, current))
        || c.if_modified_since
            .is_some_and(|d| modified_since(d, current));
    if !a {
        Err(ConditionFailure::ConditionNotMet)
    } else if !b {
        Err(ConditionFailure::NotModified)
    } else {
        Ok(())
    }
}

/// docs/wire/conditions.md#writes (and docs/wire/conditions.md#copy-source-conditions for the source). After [`validate`] the headers present are
/// none, one, `If-Match` + `If-Unmodified-Since`, or `If-None-Match` +
/// `If-Modified-Since`; of a pair only the ETag header is evaluated (docs/wire/conditions.md#writes).
fn evaluate_write(
    c: &Conditions,
    current: Option<Current<'_>>,
    kind: ConditionKind,
) -> Result<(), ConditionFailure> {
    let holds = if let Some(m) = &c.if_match {
        // If-Unmodified-Since, if present, is ignored.
        if_match(m, current)
    } else if let Some(m) = &c.if_none_match {
        // If-Modified-Since, if present, is ignored.
        match (m, kind, current) {
            // docs/wire/conditions.md#copy-source-conditions: on a source `*` never holds, not even on an absent one
            // (which is answered 404 before this point anyway).
            (EtagMatch::Any, ConditionKind::Source, _) => false,
            (EtagMatch::Any, ConditionKind::Create, Some(_)) => {
                return Err(ConditionFailure::BlobAlreadyExists);
            }
            // Write with `*` on an existing target fails here: 412 (docs/wire/conditions.md#create-only).
            _ => if_none_match(m, current),
        }
    } else if let Some(d) = c.if_modified_since {
        modified_since(d, current)
    } else if let Some(d) = c.if_unmodified_since {
        unmodified_since(d, current)
    } else {
        true
    };
    match (holds, kind) {
        (true, _) => Ok(()),
        (false, ConditionKind::Source) => Err(ConditionFailure::SourceConditionNotMet),
        (false, _) => Err(ConditionFailure::ConditionNotMet),
    }
}

/// The container kinds: every date given must hold.
fn evaluate_dates(
    if_modified_since: Option<SystemTime>,
    if_unmodified_since: Option<SystemTime>,
    current: Option<Current<'_>>,
) -> Result<(), ConditionFailure> {
    let holds = if_modified_since.is_none_or(|d| modified_since(d, current))
        && if_unmodified_since.is_none_or(|d| unmodified_since(d, current));
    if holds {
        Ok(())
    } else {
        Err(ConditionFailure::ConditionNotMet)
    }
}

// The four tests of docs/wire/conditions.md#parsing-the-headers, with the "target absent" column of docs/wire/conditions.md#writes for `None`.

fn if_match(m: &EtagMatch, current: Option<Current<'_>>) -> bool {
    current.is_some_and(|c| m.matches(c.etag))
}

/// For `*` this gives the generic answer (fails on an existing target,
/// holds on an absent one); the kinds that treat `*` specially decide
/// before calling it.
fn if_none_match(m: &EtagMatch, current: Option<Current<'_>>) -> bool {
    current.is_none_or(|c| !m.matches(c.etag))
}

fn modified_since(date: SystemTime, current: Option<Current<'_>>) -> bool {
    current.is_none_or(|c| whole_seconds(c.last_modified) > whole_seconds(date))
}

fn unmodified_since(date: SystemTime, current: Option<Current<'_>>) -> bool {
    current.is_none_or(|c| whole_seconds(c.last_modified) <= whole_seconds(date))
}

/// Seconds since the UNIX epoch, rounded down (also before the epoch), as an
/// HTTP date shows a time. Both sides of a date test are rounded: the
/// resource's Last-Modified has sub-second precision, while a header date has
/// whole seconds (docs/wire/conditions.md#parsing-the-headers); rounding the header side too only matters for callers
/// that build a `SystemTime` themselves, and makes them see what the header
/// would have said. `i128` so that no `SystemTime` can overflow.
fn whole_seconds(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(after) => i128::from(after.as_secs()),
        Err(e) => {
            let before = e.duration();
            -i128::from(before.as_secs()) - i128::from(before.subsec_nanos() > 0)
        }
    }
}

/// Append Block conditions (docs/wire/conditions.md#append-conditions), already parsed as
/// integers by the HTTP layer (anything else is its `400 InvalidHeaderValue`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AppendConditions {
    /// `x-ms-blob-condition-appendpos`: the blob's length must equal it.
    pub append_position: Option<u64>,
    /// `x-ms-blob-condition-maxsize`: the length after the append must not
    /// exceed it.
    pub max_size: Option<u64>,
}

/// Why Append Block conditions refuse an append; both answer `412`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendConditionFailure {
    /// `412 AppendPositionConditionNotMet`: the length differs from the
    /// append position.
    AppendPositionConditionNotMet,
    /// `412 MaxBlobSizeConditionNotMet`: the append would take the blob past
    /// the maximum size (or it is past it already).
    MaxBlobSizeConditionNotMet,
}

impl AppendConditions {
    /// Checks an append of `block_length` bytes to a blob of
    /// `current_length` bytes, the append position first (docs/wire/conditions.md#append-conditions). Runs in the
    /// transaction that appends, so two appenders presenting the same
    /// position cannot both succeed.
    ///
    /// # Errors
    ///
    /// The first condition that does not hold.
    pub fn check(
        &self,
        current_length: u64,
        block_length: u64,
    ) -> Result<(), AppendConditionFailure> {
        if self.append_position.is_some_and(|p| current_length != p) {
            return Err(AppendConditionFailure::AppendPositionConditionNotMet);
        }
        // A sum beyond u64 is beyond every maximum.
        let new_length = current_length.checked_add(block_length);
        if self
            .max_size
            .is_some_and(|m| new_length.is_none_or(|n| n > m))
        {
            return Err(AppendConditionFailure::MaxBlobSizeConditionNotMet);
        }
        Ok(())
    }
}

/// Put Page's sequence-number conditions (docs/wire/conditions.md#sequence-number-conditions). When
/// they do not hold the answer is `412 SequenceNumberConditionNotMet`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SequenceNumberConditions {
    /// `x-ms-if-sequence-number-le`: the blob's sequence number must be ≤ it.
    pub le: Option<u64>,
    /// `x-ms-if-sequence-number-lt`: the blob's sequence number must be < it.
    pub lt: Option<u64>,
    /// `x-ms-if-sequence-number-eq`: the blob's sequence number must equal it.
    pub eq: Option<u64>,
}

impl SequenceNumberConditions {
    /// Whether every condition given holds for the blob's `sequence_number`
    /// (all of them when several are sent; true when none is).
    pub fn holds(&self, sequence_number: u64) -> bool {
        let s = sequence_number;
        self.le.is_none_or(|v| s <= v)
            && self.lt.is_none_or(|v| s < v)
            && self.eq.is_none_or(|v| s == v)
    }
}

#[cfg(test)]
#[path = "conditions_tests.rs"]
mod tests;
