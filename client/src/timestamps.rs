//! Calendar arithmetic on `SystemTime` (UTC), for the patterns' names and
//! metadata: no time-zone database, no dependency, proleptic Gregorian
//! calendar (H. Hinnant's days-from-civil algorithms).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A UTC instant broken into calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
    /// 100-nanosecond units within the second (0..10^7).
    pub(crate) ticks: u32,
}

/// Nanoseconds since the Unix epoch (negative before it).
pub(crate) fn unix_nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// The instant `nanos` after (or before) the Unix epoch.
pub(crate) fn from_unix_nanos(nanos: i128) -> SystemTime {
    let magnitude = Duration::new(
        (nanos.unsigned_abs() / 1_000_000_000) as u64,
        (nanos.unsigned_abs() % 1_000_000_000) as u32,
    );
    if nanos >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

impl Civil {
    pub(crate) fn from_time(t: SystemTime) -> Civil {
        let nanos = unix_nanos(t);
        let secs = nanos.div_euclid(1_000_000_000) as i64;
        let sub = nanos.rem_euclid(1_000_000_000) as u32;
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem / 60 % 60,
            second: rem % 60,
            ticks: sub / 100,
        }
    }

    /// The instant, or `None` for fields out of range.
    pub(crate) fn to_time(self) -> Option<SystemTime> {
        let valid = (1..=12).contains(&self.month)
            && (1..=31).contains(&self.day)
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && self.ticks < 10_000_000;
        if !valid {
            return None;
        }
        let days = days_from_civil(self.year, self.month, self.day);
        // Refuse days that roll over into the next month (31 April).
        if civil_from_days(days) != (self.year, self.month, self.day) {
            return None;
        }
        let secs = days * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second);
        Some(from_unix_nanos(
            i128::from(secs) * 1_000_000_000 + i128::from(self.ticks) * 100,
        ))
    }
}

/// `YYYY-MM-DDThh:mm:ss.fffffffZ` (7 fraction digits, as the service
/// writes snapshot ids).
pub(crate) fn iso8601(t: SystemTime) -> String {
    let c = Civil::from_time(t);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second, c.ticks
    )
}

/// Parses `YYYY-MM-DDThh:mm:ss[.f{1,7}]Z`.
pub(crate) fn parse_iso8601(s: &str) -> Option<SystemTime> {
    let s = s.trim().strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let year: i64 = d.next()?.parse().ok()?;
    let month: u32 = d.next()?.parse().ok()?;
    let day: u32 = d.next()?.parse().ok()?;
    let (hms, fraction) = match time.split_once('.') {
        Some((hms, f)) => (hms, f),
        None => (time, ""),
    };
    let mut t = hms.splitn(3, ':');
    let hour: u32 = t.next()?.parse().ok()?;
    let minute: u32 = t.next()?.parse().ok()?;
    let second: u32 = t.next()?.parse().ok()?;
    if fraction.len() > 7 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ticks = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<7}").parse().ok()?
    };
    Civil {
        year,
        month,
        day,
        hour,
        minute,
        second,
        ticks,
    }
    .to_time()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_fields_round_trip() {
        let table = [
            (0i128, "1970-01-01T00:00:00.0000000Z"),
            (1_725_358_507_123_456_700, "2024-09-03T10:15:07.1234567Z"),
            (951_782_400_000_000_000, "2000-02-29T00:00:00.0000000Z"),
            (-1_000_000_000, "1969-12-31T23:59:59.0000000Z"),
            (253_402_300_799_999_999_900, "9999-12-31T23:59:59.9999999Z"),
        ];
        for (nanos, text) in table {
            let t = from_unix_nanos(nanos);
            assert_eq!(iso8601(t), text);
            assert_eq!(parse_iso8601(text), Some(t), "{text}");
            assert_eq!(Civil::from_time(t).to_time(), Some(t));
        }
    }

    #[test]
    fn parsing_accepts_short_fractions_and_refuses_nonsense() {
        let base = from_unix_nanos(1_725_358_507_000_000_000);
        let table = [
            ("2024-09-03T10:15:07Z", Some(base)),
            (
                "2024-09-03T10:15:07.5Z",
                Some(base + Duration::from_millis(500)),
            ),
            ("2024-09-03T10:15:07", None),
            ("2024-02-30T00:00:00Z", None),
            ("2024-09-03T24:00:00Z", None),
            ("2024-09-03T10:15:07.12345678Z", None),
            ("garbage", None),
        ];
        for (text, expected) in table {
            assert_eq!(parse_iso8601(text), expected, "{text}");
        }
    }
}
