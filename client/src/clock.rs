//! The client's own clock: the instant a request is dated with, and the
//! sleeps the patterns take between renewals, flushes and retries.
//!
//! Shared Key requests carry `x-ms-date`, which the service accepts only
//! within 15 minutes of its own clock (docs/wire/auth.md#shared-key); lease renewals
//! and log flushes wait for intervals. Both read this trait, so a test can
//! run the client on a [`ManualClock`] kept in step with a server's manual
//! clock and never sleep for a lease to expire.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime};

use tokio::sync::watch;

/// A future that completes once a [`Clock`] has moved past a deadline.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A source of the current time that can also wait.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> SystemTime;

    /// A future that completes once this clock reads at least
    /// `now() + duration`.
    fn sleep(&self, duration: Duration) -> Sleep;
}

/// The wall clock, with tokio's timer for sleeping.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that moves only when told to; sleepers wake when it is advanced
/// or set past their deadline.
#[derive(Debug)]
pub struct ManualClock {
    now: watch::Sender<SystemTime>,
}

impl ManualClock {
    /// A clock that reads `start` until it is set or advanced.
    pub fn new(start: SystemTime) -> ManualClock {
        let (now, _) = watch::channel(start);
        ManualClock { now }
    }

    /// Moves the clock to `t` (which may be earlier than the current reading).
    pub fn set(&self, t: SystemTime) {
        self.now.send_replace(t);
    }

    /// Moves the clock forward by `d`, waking every sleeper whose deadline
    /// has been reached.
    pub fn advance(&self, d: Duration) {
        self.now.send_modify(|now| *now += d);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.now.borrow()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        let mut rx = self.now.subscribe();
        let deadline = *rx.borrow() + duration;
        Box::pin(async move {
            loop {
                if *rx.borrow_and_update() >= deadline {
                    return;
                }
                if rx.changed().await.is_err() {
                    // The clock is gone and will never move again.
                    std::future::pending::<()>().await;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[tokio::test]
    async fn manual_sleep_completes_only_when_the_clock_reaches_the_deadline() {
        let clock = std::sync::Arc::new(ManualClock::new(UNIX_EPOCH));
        let mut sleep = clock.sleep(Duration::from_secs(10));
        clock.advance(Duration::from_secs(9));
        assert!(futures::poll!(&mut sleep).is_pending());
        clock.advance(Duration::from_secs(1));
        assert!(futures::poll!(&mut sleep).is_ready());
        assert_eq!(clock.now(), UNIX_EPOCH + Duration::from_secs(10));
    }

    #[tokio::test]
    async fn zero_sleep_is_ready_at_once() {
        let clock = ManualClock::new(UNIX_EPOCH);
        let mut sleep = clock.sleep(Duration::ZERO);
        assert!(futures::poll!(&mut sleep).is_ready());
    }
}
