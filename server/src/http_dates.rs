//! HTTP dates (docs/wire/requests.md#dates-and-times); ISO 8601 times come from
//! `stowage_blobstore::iso8601_7`.

use std::time::{SystemTime, UNIX_EPOCH};

/// RFC 1123, whole seconds, GMT: `Tue, 03 Sep 2024 10:15:07 GMT`.
pub(crate) fn http_date(t: SystemTime) -> String {
    // httpdate truncates to the second, as Last-Modified wants. Times before
    // 1970 cannot be formatted by it and never occur in our data.
    httpdate::fmt_http_date(t.max(UNIX_EPOCH))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_match_the_spec_examples() {
        let t = UNIX_EPOCH + Duration::new(1_725_358_507, 123_456_789);
        assert_eq!(http_date(t), "Tue, 03 Sep 2024 10:15:07 GMT");
    }
}
