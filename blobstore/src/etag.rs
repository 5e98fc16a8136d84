//! ETags: `0x` followed by 16 uppercase hex digits, unique per resource version.

use std::fmt;
use std::sync::Mutex;
use std::time::SystemTime;

use crate::timestamps::to_nanos;

/// An entity tag as stored and compared: unquoted (`0x08DCCB1A2B3C4D5E`).
/// Headers quote it; List Blobs XML does not (docs/wire/requests.md#etag-and-last-modified).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Etag(String);

impl Etag {
    /// The unquoted value.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value in double quotes, as the `ETag` header carries it.
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }

    pub(crate) fn from_stored(s: String) -> Etag {
        Etag(s)
    }
}

impl fmt::Display for Etag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Hands out strictly increasing ETags. The value is the 100 ns tick count
/// since 1601 (the service's ETags look like Windows file times), bumped by
/// one whenever two writes fall into the same tick or the clock goes back, so
/// that no two versions of anything ever share an ETag.
#[derive(Debug)]
pub(crate) struct EtagGenerator {
    last: Mutex<u64>,
}

/// 100 ns ticks between 1601-01-01 and 1970-01-01.
const EPOCH_DIFFERENCE_TICKS: i64 = 116_444_736_000_000_000;

impl EtagGenerator {
    /// Starts above every ETag already handed out (`highest` is the largest
    /// stored one, if any).
    pub(crate) fn new(highest: Option<&str>) -> EtagGenerator {
        let last = highest
            .and_then(|s| s.strip_prefix("0x"))
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .unwrap_or(0);
        EtagGenerator {
            last: Mutex::new(last),
        }
    }

    /// Makes every later ETag compare above `value` (an imported ETag's).
    pub(crate) fn observe(&self, value: u64) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        *last = value.max(*last);
    }

    pub(crate) fn next(&self, now: SystemTime) -> Etag {
        let ticks = (to_nanos(now) / 100 + EPOCH_DIFFERENCE_TICKS).max(0) as u64;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        *last = ticks.max(*last + 1);
        Etag(format!("0x{:016X}", *last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn two_etags_in_the_same_tick_differ_and_increase() {
        let g = EtagGenerator::new(None);
        let t = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
        let a = g.next(t);
        let b = g.next(t);
        assert_ne!(a, b);
        assert!(b.as_str() > a.as_str());
        assert_eq!(a.as_str().len(), 18);
        assert!(a.as_str().starts_with("0x"));
    }

    #[test]
    fn restarts_above_the_highest_stored_etag() {
        let g = EtagGenerator::new(Some("0xFFFFFFFFFFFFFF00"));
        let e = g.next(UNIX_EPOCH);
        assert_eq!(e.as_str(), "0xFFFFFFFFFFFFFF01");
    }

    #[test]
    fn a_clock_going_back_still_gives_a_new_etag() {
        let g = EtagGenerator::new(None);
        let t = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
        let a = g.next(t);
        let b = g.next(t - Duration::from_secs(60));
        assert!(b.as_str() > a.as_str());
    }

    #[test]
    fn quoted_form_wraps_in_double_quotes() {
        let e = Etag::from_stored("0x01".into());
        assert_eq!(e.quoted(), "\"0x01\"");
    }
}
