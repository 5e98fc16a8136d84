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

/// ISO 8601 UTC with 7 fraction digits (`2024-09-03T10:15:07.1234567Z`): the
/// form of snapshot ids and of ACL times on the wire.
pub fn iso8601_7(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let ticks = d.subsec_nanos() / 100;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, dd) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{dd:02}T{:02}:{:02}:{:02}.{ticks:07}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_matches_the_spec_examples() {
        let t = UNIX_EPOCH + Duration::new(1_725_358_507, 123_456_789);
        assert_eq!(iso8601_7(t), "2024-09-03T10:15:07.1234567Z");
        assert_eq!(iso8601_7(UNIX_EPOCH), "1970-01-01T00:00:00.0000000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(iso8601_7(leap), "2000-02-29T00:00:00.0000000Z");
    }

    #[test]
    fn round_trips_before_and_after_the_epoch() {
        for n in [0, 1, -1, 1_725_358_507_123_456_700, -86_400_000_000_000] {
            assert_eq!(to_nanos(from_nanos(n)), n);
        }
    }
}
