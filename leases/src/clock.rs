//! The injected clock: the one place where Stowage reads the wall clock.
//!
//! Every decision that depends on time (Last-Modified, lease expiry, SAS
//! expiry) takes `now` as an argument; whoever calls it reads `now` once from
//! a [`Clock`] and passes the same instant everywhere in one request
//! (docs/wire/leases.md#time-and-concurrency). Tests use [`ManualClock`] and never sleep.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> SystemTime;

    /// Whether the clock is moved by hand (tests, benchmarks): what it
    /// reads is then the time for everything, even where a shared
    /// database's clock would otherwise decide.
    fn is_manual(&self) -> bool {
        false
    }
}

/// The real clock.
///
/// This is the only wall-clock read in the workspace: a grep for
/// `SystemTime::now` must find it here and nowhere else.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that only moves when told to, for tests and benchmarks.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<SystemTime>,
}

impl ManualClock {
    /// A clock that reads `start` until it is set or advanced.
    pub fn new(start: SystemTime) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock to `t` (which may be earlier than the current reading).
    pub fn set(&self, t: SystemTime) {
        *self.lock() = t;
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        let mut now = self.lock();
        *now += d;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SystemTime> {
        // The guarded value is a plain instant: a panic elsewhere while the
        // lock was held cannot have left it half-written.
        self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.lock()
    }

    fn is_manual(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn manual_clock_reads_what_it_was_given_and_moves_only_when_told() {
        let start = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let clock = ManualClock::new(start);
        assert_eq!(clock.now(), start);
        assert_eq!(clock.now(), start);
        clock.advance(Duration::from_millis(14_999));
        assert_eq!(clock.now(), start + Duration::from_millis(14_999));
        clock.set(start);
        assert_eq!(clock.now(), start);
    }

    #[test]
    fn clocks_are_usable_as_shared_trait_objects() {
        let clocks: Vec<std::sync::Arc<dyn Clock>> = vec![
            std::sync::Arc::new(SystemClock),
            std::sync::Arc::new(ManualClock::new(UNIX_EPOCH)),
        ];
        assert!(clocks[0].now() > UNIX_EPOCH);
        assert_eq!(clocks[1].now(), UNIX_EPOCH);
    }
}
