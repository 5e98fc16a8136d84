//! Page blobs: the rules that do not touch storage (docs/wire/pages.md).
//!
//! The page map itself is in `map`; sequence-number conditions and
//! actions, and the checks on sizes and page ranges, are here.

pub(crate) mod map;

use std::ops::Range;

use crate::conditions::SequenceNumberConditions;
use crate::{Error, Result};

/// Pages are 512 bytes; every size and written range is a multiple.
pub const PAGE_SIZE: u64 = 512;
/// The largest page blob the service takes: 8 TiB.
pub const MAX_PAGE_BLOB_SIZE: u64 = 8 * 1024 * 1024 * 1024 * 1024;
/// The most bytes one Put Page (update) writes.
pub const MAX_PUT_PAGE: u64 = 4 * 1024 * 1024;
/// The largest sequence number: 2^63 - 1.
pub const MAX_SEQUENCE_NUMBER: u64 = i64::MAX as u64;

/// True for a valid page blob size (`x-ms-blob-content-length`).
pub fn valid_size(size: u64) -> bool {
    size.is_multiple_of(PAGE_SIZE) && size <= MAX_PAGE_BLOB_SIZE
}

/// True for a range a page write may name: starts and ends on a page
/// boundary, and is not empty.
pub fn aligned(range: &Range<u64>) -> bool {
    range.start.is_multiple_of(PAGE_SIZE)
        && range.end.is_multiple_of(PAGE_SIZE)
        && range.start < range.end
}

/// Checks Put Page's sequence-number conditions against `current`.
///
/// # Errors
/// `SequenceNumberConditionNotMet` when one fails.
pub(crate) fn check_sequence(conditions: &SequenceNumberConditions, current: u64) -> Result<()> {
    if conditions.holds(current) {
        Ok(())
    } else {
        Err(Error::SequenceNumberConditionNotMet)
    }
}

/// `x-ms-sequence-number-action` with its `x-ms-blob-sequence-number`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequenceNumberAction {
    /// The larger of the current number and this one.
    Max(u64),
    /// This number.
    Update(u64),
    /// One more than the current number.
    Increment,
}

impl SequenceNumberAction {
    /// The sequence number after the action.
    ///
    /// # Errors
    /// `SequenceNumberIncrementTooLarge` when an increment would pass the
    /// largest sequence number.
    pub fn apply(self, current: u64) -> Result<u64> {
        match self {
            SequenceNumberAction::Max(v) => Ok(current.max(v)),
            SequenceNumberAction::Update(v) => Ok(v),
            SequenceNumberAction::Increment if current >= MAX_SEQUENCE_NUMBER => {
                Err(Error::SequenceNumberIncrementTooLarge)
            }
            SequenceNumberAction::Increment => Ok(current + 1),
        }
    }
}

/// The marker of a Get Page Ranges page: where the next page starts.
pub fn encode_marker(offset: u64) -> String {
    format!("p{offset}")
}

/// Reads a marker made by [`encode_marker`].
pub fn decode_marker(marker: &str) -> Option<u64> {
    marker.strip_prefix('p')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        for (size, ok) in [
            (0, true),
            (512, true),
            (511, false),
            (1000, false),
            (MAX_PAGE_BLOB_SIZE, true),
            (MAX_PAGE_BLOB_SIZE + 512, false),
        ] {
            assert_eq!(valid_size(size), ok, "{size}");
        }
    }

    #[test]
    fn alignment() {
        for (r, ok) in [
            (0..512, true),
            (512..2048, true),
            (0..0, false),
            (1..513, false),
            (0..511, false),
            (0..1000, false),
        ] {
            assert_eq!(aligned(&r), ok, "{r:?}");
        }
    }

    #[test]
    fn sequence_actions_table() {
        use SequenceNumberAction::*;
        for (action, current, want) in [
            (Max(5), 3, Some(5)),
            (Max(2), 3, Some(3)),
            (Update(2), 3, Some(2)),
            (Increment, 3, Some(4)),
            (Increment, MAX_SEQUENCE_NUMBER, None),
        ] {
            assert_eq!(action.apply(current).ok(), want, "{action:?} at {current}");
        }
    }

    #[test]
    fn markers_round_trip() {
        assert_eq!(decode_marker(&encode_marker(4096)), Some(4096));
        assert_eq!(decode_marker("junk"), None);
    }
}
