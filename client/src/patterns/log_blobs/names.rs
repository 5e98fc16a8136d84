//! Log blob names, hour prefixes and inverted ticks: pure functions.

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::timestamps::{Civil, from_unix_nanos, unix_nanos};

/// `<service>/YYYY/MM/DD/hhmm/NNNNNN.log`: the service, the UTC minute of
/// the blob's first record, and a sequence number unique within the hour.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogBlobName {
    /// The service writing the log (may itself contain `/`).
    pub service: String,
    /// The minute the blob was started (seconds are dropped).
    pub minute: SystemTime,
    /// Sequence within the hour, 0 to 999 999.
    pub sequence: u32,
}

impl LogBlobName {
    /// The name for a blob of `service` whose first record is at `first`.
    pub fn new(service: &str, first: SystemTime, sequence: u32) -> LogBlobName {
        LogBlobName {
            service: service.to_owned(),
            minute: truncate(first, 60),
            sequence,
        }
    }

    /// The start of the hour the blob belongs to.
    pub fn hour(&self) -> SystemTime {
        truncate(self.minute, 3600)
    }

    /// Parses a name written by [`fmt::Display`]; `None` for anything else.
    pub fn parse(name: &str) -> Option<LogBlobName> {
        let mut parts = name.rsplitn(6, '/');
        let file = parts.next()?;
        let hhmm = parts.next()?;
        let day = parts.next()?;
        let month = parts.next()?;
        let year = parts.next()?;
        let service = parts.next()?;
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        let seq = file.strip_suffix(".log")?;
        if !(digits(seq, 6)
            && digits(hhmm, 4)
            && digits(day, 2)
            && digits(month, 2)
            && digits(year, 4))
            || service.is_empty()
        {
            return None;
        }
        let minute = Civil {
            year: year.parse().ok()?,
            month: month.parse().ok()?,
            day: day.parse().ok()?,
            hour: hhmm[..2].parse().ok()?,
            minute: hhmm[2..].parse().ok()?,
            second: 0,
            ticks: 0,
        }
        .to_time()?;
        Some(LogBlobName {
            service: service.to_owned(),
            minute,
            sequence: seq.parse().ok()?,
        })
    }
}

impl fmt::Display for LogBlobName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = Civil::from_time(self.minute);
        write!(
            f,
            "{}/{:04}/{:02}/{:02}/{:02}{:02}/{:06}.log",
            self.service, c.year, c.month, c.day, c.hour, c.minute, self.sequence
        )
    }
}

/// `t` rounded down to a multiple of `seconds` since the epoch.
fn truncate(t: SystemTime, seconds: i128) -> SystemTime {
    let unit = seconds * 1_000_000_000;
    from_unix_nanos(unix_nanos(t).div_euclid(unit) * unit)
}

/// The start of `t`'s UTC hour.
pub fn hour_of(t: SystemTime) -> SystemTime {
    truncate(t, 3600)
}

/// `<service>/YYYY/MM/DD/hh`: the listing prefix of every blob of one hour.
pub fn hour_prefix(service: &str, t: SystemTime) -> String {
    let c = Civil::from_time(t);
    format!(
        "{service}/{:04}/{:02}/{:02}/{:02}",
        c.year, c.month, c.day, c.hour
    )
}

/// The prefixes of every hour that overlaps `[from, to)`, oldest first.
pub fn hour_prefixes(service: &str, from: SystemTime, to: SystemTime) -> Vec<String> {
    let mut prefixes = Vec::new();
    let mut hour = hour_of(from);
    while hour < to {
        prefixes.push(hour_prefix(service, hour));
        hour += Duration::from_secs(3600);
    }
    prefixes
}

/// .NET ticks (100 ns) from 0001-01-01 to the Unix epoch.
const EPOCH_TICKS: i128 = 621_355_968_000_000_000;
/// .NET `DateTime.MaxValue.Ticks` (9999-12-31T23:59:59.9999999Z).
const MAX_TICKS: i128 = 3_155_378_975_999_999_999;

/// .NET ticks of `t` (100 ns since 0001-01-01T00:00:00Z), clamped to the
/// range of `DateTime`.
pub fn ticks(t: SystemTime) -> u64 {
    (unix_nanos(t).div_euclid(100) + EPOCH_TICKS).clamp(0, MAX_TICKS) as u64
}

/// `DateTime.MaxValue.Ticks − ticks(t)`, as 19 zero-padded digits: keys
/// that sort newest first (the table-storage "log tail" pattern).
pub fn inverted_ticks(t: SystemTime) -> String {
    format!("{:019}", MAX_TICKS as u64 - ticks(t))
}

/// The instant an [`inverted_ticks`] key stands for (to 100 ns).
pub fn parse_inverted_ticks(s: &str) -> Option<SystemTime> {
    if s.len() != 19 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let inverted: i128 = s.parse().ok()?;
    if inverted > MAX_TICKS {
        return None;
    }
    Some(from_unix_nanos((MAX_TICKS - inverted - EPOCH_TICKS) * 100))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timestamps::parse_iso8601;

    fn at(s: &str) -> SystemTime {
        parse_iso8601(s).unwrap()
    }

    #[test]
    fn names_format_and_parse_back() {
        let table = [
            (
                "orders",
                "2024-09-03T10:15:07.5Z",
                0,
                "orders/2024/09/03/1015/000000.log",
            ),
            (
                "a/b",
                "2024-12-31T23:59:59Z",
                42,
                "a/b/2024/12/31/2359/000042.log",
            ),
            (
                "svc",
                "2000-02-29T00:00:00Z",
                999_999,
                "svc/2000/02/29/0000/999999.log",
            ),
        ];
        for (service, first, seq, text) in table {
            let name = LogBlobName::new(service, at(first), seq);
            assert_eq!(name.to_string(), text);
            assert_eq!(LogBlobName::parse(text), Some(name.clone()), "{text}");
            assert_eq!(hour_prefix(service, name.minute), text[..text.len() - 13]);
        }
    }

    #[test]
    fn other_names_do_not_parse() {
        for text in [
            "orders/2024/09/03/1015/000000.txt",
            "orders/2024/09/03/1015/00000.log",
            "2024/09/03/1015/000000.log",
            "orders/2024/13/03/1015/000000.log",
            "orders/2024/09/03/2460/000000.log",
            "orders/2024/9/03/1015/000000.log",
        ] {
            assert_eq!(LogBlobName::parse(text), None, "{text}");
        }
    }

    #[test]
    fn hour_prefixes_cover_the_range() {
        let table = [
            (
                "2024-09-03T10:15:00Z",
                "2024-09-03T10:45:00Z",
                vec!["s/2024/09/03/10"],
            ),
            (
                "2024-09-03T10:59:00Z",
                "2024-09-03T11:00:01Z",
                vec!["s/2024/09/03/10", "s/2024/09/03/11"],
            ),
            (
                "2024-09-03T10:00:00Z",
                "2024-09-03T11:00:00Z",
                vec!["s/2024/09/03/10"],
            ),
            (
                "2024-12-31T23:30:00Z",
                "2025-01-01T00:30:00Z",
                vec!["s/2024/12/31/23", "s/2025/01/01/00"],
            ),
            ("2024-09-03T10:00:00Z", "2024-09-03T10:00:00Z", vec![]),
        ];
        for (from, to, expected) in table {
            assert_eq!(
                hour_prefixes("s", at(from), at(to)),
                expected,
                "{from} {to}"
            );
        }
    }

    #[test]
    fn inverted_ticks_are_19_digits_and_sort_newest_first() {
        let table = [
            ("1970-01-01T00:00:00Z", "2534023007999999999"),
            ("2024-09-03T10:15:07Z", "2516769422929999999"),
            ("9999-12-31T23:59:59.9999999Z", "0000000000000000000"),
        ];
        for (time, key) in table {
            assert_eq!(inverted_ticks(at(time)), key, "{time}");
            assert_eq!(parse_inverted_ticks(key), Some(at(time)));
        }
        let older = inverted_ticks(at("2024-09-03T10:15:07Z"));
        let newer = inverted_ticks(at("2024-09-03T10:15:08Z"));
        assert!(newer < older);
        assert_eq!(ticks(at("1970-01-01T00:00:00Z")), 621_355_968_000_000_000);
        assert_eq!(parse_inverted_ticks("123"), None);
        assert_eq!(parse_inverted_ticks("9999999999999999999"), None);
    }
}
