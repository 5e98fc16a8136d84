//! Conversions between `SystemTime` and the integer nanoseconds stored in SQLite.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Nanoseconds since the UNIX epoch, as stored in the metadata database
/// (an `i64` covers the years 1678 to 2262).
pub fn to_nanos(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// The inverse of [`to_nanos`].
pub fn from_nanos(n: i64) -> SystemTime {
    if n >= 0 {
        UNIX_EPOCH + Duration::from_nanos(n as u64)
    } else {
        UNIX_EPOCH - Duration::from_nanos(n.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_before_and_after_the_epoch() {
        for n in [0, 1, -1, 1_725_358_507_123_456_700, -86_400_000_000_000] {
            assert_eq!(to_nanos(from_nanos(n)), n);
        }
    }
}
