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
///
/// In cluster mode several nodes hand out ETags for the same blobs, each
/// from its own counter: there the low [`NODE_BITS`] bits of every ETag are
/// the node's number (unique among the nodes of a cluster) and the counter
/// runs in the bits above, in steps of 2^[`NODE_BITS`] ticks, so two nodes
/// never hand out the same value (docs/cluster.md#time).
#[derive(Debug)]
pub(crate) struct EtagGenerator {
    /// The last value handed out, without the node bits when `node` is set.
    last: Mutex<u64>,
    node: Option<u64>,
}

/// The low bits of a cluster node's ETags that hold its number.
pub(crate) const NODE_BITS: u32 = 12;

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
            node: None,
        }
    }

    /// The generator of cluster node number `node` (only its low
    /// [`NODE_BITS`] bits count): its ETags end in those bits.
    pub(crate) fn for_node(self, node: u64) -> EtagGenerator {
        let last = self.last.into_inner().unwrap_or_else(|e| e.into_inner());
        EtagGenerator {
            last: Mutex::new(last >> NODE_BITS),
            node: Some(node & ((1 << NODE_BITS) - 1)),
        }
    }

    /// Makes every later ETag compare above `value` (an imported ETag's).
    pub(crate) fn observe(&self, value: u64) {
        let value = match self.node {
            Some(_) => value >> NODE_BITS,
            None => value,
        };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        *last = value.max(*last);
    }

    pub(crate) fn next(&self, now: SystemTime) -> Etag {
        let ticks = (to_nanos(now) / 100 + EPOCH_DIFFERENCE_TICKS).max(0) as u64;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match self.node {
            None => {
                *last = ticks.max(*last + 1);
                Etag(format!("0x{:016X}", *last))
            }
            Some(node) => {
                *last = (ticks >> NODE_BITS).max(*last + 1);
                Etag(format!("0x{:016X}", (*last << NODE_BITS) | node))
            }
        }
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
    fn two_nodes_in_the_same_tick_hand_out_different_etags() {
        let t = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
        let a = EtagGenerator::new(Some("0x08DCCB1A2B3C4D5E")).for_node(1);
        let b = EtagGenerator::new(Some("0x08DCCB1A2B3C4D5E")).for_node(2);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            assert!(seen.insert(a.next(t)));
            assert!(seen.insert(b.next(t)));
        }
        // Still increasing, above the highest stored one, ending in the node.
        let (x, y) = (a.next(t), a.next(t));
        assert!(y.as_str() > x.as_str());
        assert!(x.as_str() > "0x08DCCB1A2B3C4D5E");
        assert!(x.as_str().ends_with("001"), "{x}");
    }

    #[test]
    fn a_node_number_keeps_only_its_low_bits() {
        let t = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
        let e = EtagGenerator::new(None)
            .for_node((1 << NODE_BITS) + 5)
            .next(t);
        assert!(e.as_str().ends_with("005"), "{e}");
    }

    #[test]
    fn quoted_form_wraps_in_double_quotes() {
        let e = Etag::from_stored("0x01".into());
        assert_eq!(e.quoted(), "\"0x01\"");
    }
}
