//! Extents pinned by readers that are still streaming them.
//!
//! A GET pins the extents of the version it reads in the same critical
//! section that reads the version's row; the collector skips pinned extents.
//! So a reader always gets the whole version it started on, even if the blob
//! is overwritten or deleted while it streams (docs/architecture.md#garbage-and-read-pins).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
pub(crate) struct Pins {
    counts: Mutex<HashMap<String, usize>>,
}

impl Pins {
    pub(crate) fn pin(self: &Arc<Self>, extents: Vec<String>) -> PinGuard {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        for e in &extents {
            *counts.entry(e.clone()).or_default() += 1;
        }
        PinGuard {
            pins: Arc::clone(self),
            extents,
        }
    }

    pub(crate) fn is_pinned(&self, extent: &str) -> bool {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.contains_key(extent)
    }
}

/// Unpins its extents when dropped (when the response body is finished or
/// abandoned).
#[derive(Debug)]
pub(crate) struct PinGuard {
    pins: Arc<Pins>,
    extents: Vec<String>,
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        let mut counts = self.pins.counts.lock().unwrap_or_else(|e| e.into_inner());
        for e in &self.extents {
            if let Some(n) = counts.get_mut(e) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(e);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_count_per_reader_and_release_on_drop() {
        let pins = Arc::new(Pins::default());
        let a = pins.pin(vec!["x".into(), "y".into()]);
        let b = pins.pin(vec!["x".into()]);
        assert!(pins.is_pinned("x") && pins.is_pinned("y"));
        drop(a);
        assert!(pins.is_pinned("x"));
        assert!(!pins.is_pinned("y"));
        drop(b);
        assert!(!pins.is_pinned("x"));
    }
}
