//! The two lengths a client asks for: a lease duration and a break period.

use std::time::{Duration, SystemTime};

use crate::{Error, LeaseDurationKind, Result};

/// How long an acquired lease lasts (`x-ms-lease-duration`, docs/wire/leases.md#request-headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseDuration {
    /// Never expires; ends only by release or break (`-1` on the wire).
    Infinite,
    /// Expires this many seconds (15…60) after it was acquired or renewed.
    Fixed(u32),
}

impl LeaseDuration {
    /// Shortest fixed duration, in seconds.
    pub const MIN_FIXED_SECONDS: u32 = 15;
    /// Longest fixed duration, in seconds.
    pub const MAX_FIXED_SECONDS: u32 = 60;

    /// The duration a client asked for: `-1` is infinite, 15…60 is fixed.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLeaseDuration`] for any other number.
    pub fn from_seconds(s: i64) -> Result<Self> {
        if s == -1 {
            return Ok(LeaseDuration::Infinite);
        }
        match u32::try_from(s) {
            Ok(s) if (Self::MIN_FIXED_SECONDS..=Self::MAX_FIXED_SECONDS).contains(&s) => {
                Ok(LeaseDuration::Fixed(s))
            }
            _ => Err(Error::InvalidLeaseDuration),
        }
    }

    /// The wire value: `-1` for infinite, else the seconds.
    /// `LeaseDuration::from_seconds(d.to_seconds()) == Ok(d)`.
    pub fn to_seconds(self) -> i64 {
        match self {
            LeaseDuration::Infinite => -1,
            LeaseDuration::Fixed(s) => i64::from(s),
        }
    }

    /// Whether the lease is fixed or infinite, as properties report it.
    pub fn kind(self) -> LeaseDurationKind {
        match self {
            LeaseDuration::Infinite => LeaseDurationKind::Infinite,
            LeaseDuration::Fixed(_) => LeaseDurationKind::Fixed,
        }
    }

    /// When a lease of this duration, granted or renewed at `now`, expires;
    /// `None` for infinite.
    pub(crate) fn expiry_from(self, now: SystemTime) -> Option<SystemTime> {
        match self {
            LeaseDuration::Infinite => None,
            LeaseDuration::Fixed(s) => Some(now + Duration::from_secs(u64::from(s))),
        }
    }
}

/// How long a break waits before the lease is broken
/// (`x-ms-lease-break-period`, 0…60 seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakPeriod(u32);

impl BreakPeriod {
    /// Longest break period, in seconds.
    pub const MAX_SECONDS: u32 = 60;

    /// The break period a client asked for.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidBreakPeriod`] outside 0…60.
    pub fn from_seconds(s: i64) -> Result<Self> {
        match u32::try_from(s) {
            Ok(s) if s <= Self::MAX_SECONDS => Ok(BreakPeriod(s)),
            _ => Err(Error::InvalidBreakPeriod),
        }
    }

    /// The period in seconds.
    pub fn seconds(self) -> u32 {
        self.0
    }

    pub(crate) fn as_duration(self) -> Duration {
        Duration::from_secs(u64::from(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_duration_accepts_minus_one_and_15_to_60_only() {
        let cases: &[(i64, Result<LeaseDuration>)] = &[
            (i64::MIN, Err(Error::InvalidLeaseDuration)),
            (-2, Err(Error::InvalidLeaseDuration)),
            (-1, Ok(LeaseDuration::Infinite)),
            (0, Err(Error::InvalidLeaseDuration)),
            (1, Err(Error::InvalidLeaseDuration)),
            (14, Err(Error::InvalidLeaseDuration)),
            (15, Ok(LeaseDuration::Fixed(15))),
            (37, Ok(LeaseDuration::Fixed(37))),
            (60, Ok(LeaseDuration::Fixed(60))),
            (61, Err(Error::InvalidLeaseDuration)),
            (i64::from(u32::MAX) + 15, Err(Error::InvalidLeaseDuration)),
            (i64::MAX, Err(Error::InvalidLeaseDuration)),
        ];
        for (seconds, expected) in cases {
            assert_eq!(
                LeaseDuration::from_seconds(*seconds),
                *expected,
                "{seconds}"
            );
            if let Ok(d) = expected {
                assert_eq!(d.to_seconds(), *seconds);
            }
        }
    }

    #[test]
    fn lease_duration_kind_and_expiry() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        assert_eq!(LeaseDuration::Infinite.kind(), LeaseDurationKind::Infinite);
        assert_eq!(LeaseDuration::Fixed(15).kind(), LeaseDurationKind::Fixed);
        assert_eq!(LeaseDuration::Infinite.expiry_from(t), None);
        assert_eq!(
            LeaseDuration::Fixed(15).expiry_from(t),
            Some(t + Duration::from_secs(15))
        );
    }

    #[test]
    fn break_period_accepts_0_to_60_only() {
        let cases: &[(i64, Option<u32>)] = &[
            (i64::MIN, None),
            (-1, None),
            (0, Some(0)),
            (1, Some(1)),
            (15, Some(15)),
            (60, Some(60)),
            (61, None),
            (i64::from(u32::MAX) + 1, None),
            (i64::MAX, None),
        ];
        for (seconds, expected) in cases {
            let got = BreakPeriod::from_seconds(*seconds);
            match expected {
                Some(s) => {
                    let period = got.unwrap_or_else(|e| panic!("{seconds}: {e}"));
                    assert_eq!(period.seconds(), *s);
                    assert_eq!(period.as_duration(), Duration::from_secs(u64::from(*s)));
                }
                None => assert_eq!(got, Err(Error::InvalidBreakPeriod), "{seconds}"),
            }
        }
    }
}
