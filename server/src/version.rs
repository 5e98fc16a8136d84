//! `x-ms-version` (docs/wire/requests.md#service-version): every well-formed `YYYY-MM-DD`
//! from 2009-09-19 on is accepted, including dates newer than any version we
//! know — SDK releases move ahead of any fixed list.

/// The oldest service version.
pub(crate) const OLDEST: &str = "2009-09-19";

/// True for a well-formed version Stowage accepts.
pub(crate) fn is_acceptable(v: &str) -> bool {
    let b = v.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return false;
    }
    let month: u32 = v[5..7].parse().unwrap_or(0);
    let day: u32 = v[8..10].parse().unwrap_or(0);
    (1..=12).contains(&month) && (1..=31).contains(&day) && v >= OLDEST
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_table() {
        for ok in ["2009-09-19", "2021-10-04", "2026-10-06", "2031-01-01"] {
            assert!(is_acceptable(ok), "{ok}");
        }
        for bad in [
            "2009-09-18",
            "2021-13-01",
            "2021-10-00",
            "21-10-04",
            "2021/10/04",
            "",
            "latest",
        ] {
            assert!(!is_acceptable(bad), "{bad}");
        }
    }
}
