//! When to send a request again, and how long to wait first.
//!
//! Only failures that a second attempt can cure are retried: timeouts,
//! connection errors and server errors (5xx). A 4xx answer is the service's
//! decision about this request (a failed condition, a lease conflict, a bad
//! argument) and is returned at once, whatever the policy says. The waits
//! grow exponentially up to a cap; jitter spreads clients that failed
//! together, and its random source can be seeded so tests are repeatable.
//!
//! A write whose answer was lost may have landed: its retry then meets the
//! state the first attempt left. Conditions make that visible instead of
//! silent — a create-only Put Blob answers `409 BlobAlreadyExists`, an
//! append with `x-ms-blob-condition-appendpos` answers
//! `412 AppendPositionConditionNotMet` (the log writer checks the length and
//! carries on) — and lease acquires always propose their id, so a retried
//! acquire finds its own lease.
//!
//! Waits are taken with tokio's timer (real time), not the client's
//! [`Clock`](crate::Clock): a manual test clock must not be needed to get a
//! request through. Tests that provoke retries set the backoff to zero.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// What happened to one attempt, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The service answered with this status.
    Status(u16),
    /// No answer in time (connect or read timeout).
    Timeout,
    /// The connection could not be made or broke while sending.
    Connection,
    /// Any other local failure (a body that could not be read, …).
    Other,
}

/// Exponential backoff with bounded attempts and optional seeded jitter.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    jitter: Option<Arc<Mutex<SplitMix64>>>,
}

impl Default for RetryPolicy {
    /// Four attempts, waits of about 0.5 s, 1 s, 2 s (capped at 30 s), with
    /// jitter seeded from the system's random source.
    fn default() -> RetryPolicy {
        let seed = uuid::Uuid::new_v4().as_u64_pair().0;
        RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            jitter: Some(Arc::new(Mutex::new(SplitMix64(seed)))),
        }
    }
}

impl RetryPolicy {
    /// A policy that sends every request exactly once.
    pub fn no_retries() -> RetryPolicy {
        RetryPolicy::default().with_max_attempts(1)
    }

    /// At most `n` attempts in all (at least 1).
    pub fn with_max_attempts(mut self, n: u32) -> RetryPolicy {
        self.max_attempts = n.max(1);
        self
    }

    /// The wait before the first retry; each later one doubles it.
    pub fn with_initial_backoff(mut self, d: Duration) -> RetryPolicy {
        self.initial_backoff = d;
        self
    }

    /// The longest wait between two attempts.
    pub fn with_max_backoff(mut self, d: Duration) -> RetryPolicy {
        self.max_backoff = d;
        self
    }

    /// Jitter drawn from a generator seeded with `seed`: the same seed gives
    /// the same sequence of waits.
    pub fn with_jitter_seed(mut self, seed: u64) -> RetryPolicy {
        self.jitter = Some(Arc::new(Mutex::new(SplitMix64(seed))));
        self
    }

    /// Exact exponential waits, no jitter.
    pub fn without_jitter(mut self) -> RetryPolicy {
        self.jitter = None;
        self
    }

    /// The most attempts a request gets.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Whether an outcome is worth another attempt, ignoring the count.
    ///
    /// 5xx except 501 Not Implemented and 505 HTTP Version Not Supported,
    /// which say the same thing every time; timeouts and connection errors.
    /// Never a 1xx–4xx status.
    pub fn is_retryable(outcome: Outcome) -> bool {
        match outcome {
            Outcome::Status(status) => {
                (500..600).contains(&status) && status != 501 && status != 505
            }
            Outcome::Timeout | Outcome::Connection => true,
            Outcome::Other => false,
        }
    }

    /// Whether to send again after attempt number `attempt` (1-based) ended
    /// with `outcome`.
    pub fn should_retry(&self, attempt: u32, outcome: Outcome) -> bool {
        attempt < self.max_attempts && Self::is_retryable(outcome)
    }

    /// The wait before retry number `retry` (1 for the first retry).
    pub fn backoff(&self, retry: u32) -> Duration {
        let fraction = self.jitter.as_ref().map(|rng| {
            rng.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .next_fraction()
        });
        backoff_delay(self.initial_backoff, self.max_backoff, retry, fraction)
    }
}

/// `initial · 2^(retry−1)`, capped at `max`. With a jitter fraction `f` in
/// [0, 1) the wait is `d/2 + f·d/2` ("equal jitter": never less than half
/// the exponential wait, so retries still back off).
pub(crate) fn backoff_delay(
    initial: Duration,
    max: Duration,
    retry: u32,
    jitter: Option<f64>,
) -> Duration {
    let exponent = retry.saturating_sub(1).min(30);
    let base = initial.saturating_mul(1 << exponent).min(max);
    match jitter {
        None => base,
        Some(f) => base / 2 + base.div_f64(2.0).mul_f64(f.clamp(0.0, 1.0)),
    }
}

/// A tiny seeded generator (SplitMix64); good enough to spread retries.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn next_fraction(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_timeouts_connection_errors_and_transient_5xx_are_retried() {
        let table = [
            (Outcome::Status(200), false),
            (Outcome::Status(304), false),
            (Outcome::Status(400), false),
            (Outcome::Status(403), false),
            (Outcome::Status(404), false),
            (Outcome::Status(408), false),
            (Outcome::Status(409), false),
            (Outcome::Status(412), false),
            (Outcome::Status(416), false),
            (Outcome::Status(429), false),
            (Outcome::Status(500), true),
            (Outcome::Status(501), false),
            (Outcome::Status(502), true),
            (Outcome::Status(503), true),
            (Outcome::Status(504), true),
            (Outcome::Status(505), false),
            (Outcome::Timeout, true),
            (Outcome::Connection, true),
            (Outcome::Other, false),
        ];
        for (outcome, expected) in table {
            assert_eq!(RetryPolicy::is_retryable(outcome), expected, "{outcome:?}");
        }
    }

    #[test]
    fn attempts_are_bounded() {
        let policy = RetryPolicy::default().with_max_attempts(3);
        let table = [
            (1, Outcome::Status(503), true),
            (2, Outcome::Status(503), true),
            (3, Outcome::Status(503), false),
            (1, Outcome::Status(412), false),
            (2, Outcome::Timeout, true),
            (3, Outcome::Connection, false),
        ];
        for (attempt, outcome, expected) in table {
            assert_eq!(
                policy.should_retry(attempt, outcome),
                expected,
                "{attempt} {outcome:?}"
            );
        }
        assert!(!RetryPolicy::no_retries().should_retry(1, Outcome::Status(500)));
        assert_eq!(
            RetryPolicy::default().with_max_attempts(0).max_attempts(),
            1
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let ms = Duration::from_millis;
        let table = [
            (1, None, ms(100)),
            (2, None, ms(200)),
            (3, None, ms(400)),
            (5, None, ms(1000)),
            (40, None, ms(1000)),
            (1, Some(0.0), ms(50)),
            (1, Some(0.5), ms(75)),
            (3, Some(0.999), ms(399)),
        ];
        for (retry, jitter, expected) in table {
            let d = backoff_delay(ms(100), ms(1000), retry, jitter);
            assert_eq!(
                d.as_millis(),
                expected.as_millis(),
                "retry {retry} jitter {jitter:?}"
            );
        }
    }

    #[test]
    fn seeded_jitter_is_repeatable_and_stays_within_bounds() {
        let make = || {
            RetryPolicy::default()
                .with_initial_backoff(Duration::from_millis(100))
                .with_max_backoff(Duration::from_secs(10))
                .with_jitter_seed(42)
        };
        let (a, b) = (make(), make());
        let waits_a: Vec<Duration> = (1..=6).map(|r| a.backoff(r)).collect();
        let waits_b: Vec<Duration> = (1..=6).map(|r| b.backoff(r)).collect();
        assert_eq!(waits_a, waits_b);
        for (i, wait) in waits_a.iter().enumerate() {
            let base = Duration::from_millis(100 << i);
            assert!(
                *wait >= base / 2 && *wait <= base,
                "retry {}: {wait:?}",
                i + 1
            );
        }
        let other: Vec<Duration> = {
            let c = make().with_jitter_seed(7);
            (1..=6).map(|r| c.backoff(r)).collect()
        };
        assert_ne!(waits_a, other);
        let exact = make().without_jitter();
        assert_eq!(exact.backoff(2), Duration::from_millis(200));
    }
}
