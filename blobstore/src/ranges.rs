//! Byte ranges of Get Blob (docs/wire/blobs.md#get-blob): parsed by the HTTP
//! layer, resolved here against the blob's size.

use std::ops::Range;

/// A requested range: `bytes=start-end` or `bytes=start-`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteRange {
    /// First byte wanted.
    pub start: u64,
    /// Last byte wanted (inclusive), or `None` for "to the end".
    pub end: Option<u64>,
}

impl ByteRange {
    /// Parses `bytes=S-E` or `bytes=S-`. Every other form (suffix ranges,
    /// several ranges, S > E, garbage) gives `None`, and the read is a full
    /// read, as the service treats them (docs/wire/blobs.md#get-blob).
    pub fn parse(value: &str) -> Option<ByteRange> {
        let spec = value.trim().strip_prefix("bytes=")?;
        let (s, e) = spec.split_once('-')?;
        let start = parse_digits(s)?;
        if e.is_empty() {
            return Some(ByteRange { start, end: None });
        }
        let end = parse_digits(e)?;
        (start <= end).then_some(ByteRange {
            start,
            end: Some(end),
        })
    }

    /// The byte range to return for a blob of `size` bytes, or `None` when it
    /// is unsatisfiable (`416 InvalidRange`: the start is at or past the end,
    /// which includes every range on an empty blob).
    pub fn resolve(&self, size: u64) -> Option<Range<u64>> {
        if self.start >= size {
            return None;
        }
        let last = self.end.map_or(size - 1, |e| e.min(size - 1));
        Some(self.start..last + 1)
    }
}

fn parse_digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let r = |start, end| Some(ByteRange { start, end });
        let cases = [
            ("bytes=0-0", r(0, Some(0))),
            ("bytes=0-33554431", r(0, Some(33_554_431))),
            ("bytes=10-", r(10, None)),
            (" bytes=5-9 ", r(5, Some(9))),
            ("bytes=-5", None),
            ("bytes=9-5", None),
            ("bytes=0-1,4-5", None),
            ("bytes=a-b", None),
            ("bytes=+1-2", None),
            ("items=0-1", None),
            ("bytes=", None),
            ("bytes=99999999999999999999-", None),
            ("", None),
        ];
        for (input, expected) in cases {
            assert_eq!(ByteRange::parse(input), expected, "{input:?}");
        }
    }

    #[test]
    fn resolve_table() {
        let r = |start, end| ByteRange { start, end };
        let cases = [
            (r(0, Some(0)), 10, Some(0..1)),
            (r(0, Some(99)), 10, Some(0..10)),
            (r(9, None), 10, Some(9..10)),
            (r(10, None), 10, None),
            (r(10, Some(20)), 10, None),
            (r(0, None), 0, None),
            (r(0, Some(0)), 0, None),
            (r(3, Some(5)), 10, Some(3..6)),
        ];
        for (range, size, expected) in cases {
            assert_eq!(range.resolve(size), expected, "{range:?} of {size}");
        }
    }

    #[test]
    fn parse_never_panics_on_odd_bytes() {
        for s in [
            "bytes=-",
            "bytes=--",
            "bytes=1--2",
            "bytes=\u{0}-1",
            "bytes=１-2",
        ] {
            let _ = ByteRange::parse(s);
        }
    }
}
