//! The line format of log records inside a blob.
//!
//! One record per line: the timestamp (ISO 8601, 7 fraction digits), a tab,
//! the body with `\`, newline, carriage return and tab escaped. A line is
//! self-delimiting, so records can be appended in any batch size and read
//! back without an index.

use std::time::SystemTime;

use crate::timestamps::{iso8601, parse_iso8601};

/// One log record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// When it happened (by the writer's clock).
    pub timestamp: SystemTime,
    /// The text.
    pub body: String,
}

impl LogRecord {
    /// A record of `body` at `timestamp`.
    pub fn new(timestamp: SystemTime, body: impl Into<String>) -> LogRecord {
        LogRecord {
            timestamp,
            body: body.into(),
        }
    }
}

/// The record as one line, newline included.
pub(crate) fn encode(record: &LogRecord) -> String {
    let mut line = iso8601(record.timestamp);
    line.push('\t');
    for c in record.body.chars() {
        match c {
            '\\' => line.push_str("\\\\"),
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            '\t' => line.push_str("\\t"),
            c => line.push(c),
        }
    }
    line.push('\n');
    line
}

/// Every well-formed record of a blob's text, in order; other lines (a
/// foreign writer's, say) are skipped.
pub(crate) fn decode(text: &str) -> Vec<LogRecord> {
    text.lines().filter_map(decode_line).collect()
}

fn decode_line(line: &str) -> Option<LogRecord> {
    let (stamp, escaped) = line.split_once('\t')?;
    let timestamp = parse_iso8601(stamp)?;
    let mut body = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            body.push(c);
            continue;
        }
        match chars.next()? {
            '\\' => body.push('\\'),
            'n' => body.push('\n'),
            'r' => body.push('\r'),
            't' => body.push('\t'),
            _ => return None,
        }
    }
    Some(LogRecord { timestamp, body })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn records_survive_any_text() {
        let t = UNIX_EPOCH + Duration::from_nanos(1_725_358_507_123_456_700);
        let bodies = [
            "plain",
            "",
            "tab\there",
            "multi\nline\r\n",
            "back\\slash \\n literal",
            "ünï ✓",
        ];
        let records: Vec<LogRecord> = bodies.iter().map(|b| LogRecord::new(t, *b)).collect();
        let text: String = records.iter().map(encode).collect();
        assert_eq!(text.lines().count(), bodies.len());
        assert_eq!(decode(&text), records);
        assert_eq!(
            encode(&LogRecord::new(t, "a\nb")),
            "2024-09-03T10:15:07.1234567Z\ta\\nb\n"
        );
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let text =
            "garbage\n2024-09-03T10:15:07.0000000Z\tok\n2024-09-03T10:15:07Z\tbad \\x escape\n";
        let records = decode(text);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].body, "ok");
    }
}
