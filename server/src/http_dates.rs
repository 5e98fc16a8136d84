//! Date formats of the wire (spec/00-overview.md §4.2).

use std::time::{SystemTime, UNIX_EPOCH};

/// RFC 1123, whole seconds, GMT: `Tue, 03 Sep 2024 10:15:07 GMT`.
pub(crate) fn http_date(t: SystemTime) -> String {
    // httpdate truncates to the second, as Last-Modified wants. Times before
    // 1970 cannot be formatted by it and never occur in our data.
    httpdate::fmt_http_date(t.max(UNIX_EPOCH))
}

/// ISO 8601 UTC with 7 fraction digits: `2024-09-03T10:15:07.1234567Z`.
pub(crate) fn iso8601_7(t: SystemTime) -> String {
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
    use std::time::Duration;

    #[test]
    fn formats_match_the_spec_examples() {
        let t = UNIX_EPOCH + Duration::new(1_725_358_507, 123_456_789);
        assert_eq!(http_date(t), "Tue, 03 Sep 2024 10:15:07 GMT");
        assert_eq!(iso8601_7(t), "2024-09-03T10:15:07.1234567Z");
        assert_eq!(iso8601_7(UNIX_EPOCH), "1970-01-01T00:00:00.0000000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(iso8601_7(leap), "2000-02-29T00:00:00.0000000Z");
    }
}
