//! Blob expiry (Set Blob Expiry, docs/wire/expiry.md): when an expiry
//! option makes a blob expire, and whether it has. Pure: the time is an
//! argument.

use std::time::{Duration, SystemTime};

/// The expiry a Set Blob Expiry request asks for (`x-ms-expiry-option`
/// with its `x-ms-expiry-time`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpiryOption {
    /// `NeverExpire`: the blob keeps no expiry time.
    NeverExpire,
    /// `RelativeToCreation`: this long after the blob's creation time.
    RelativeToCreation(Duration),
    /// `RelativeToNow`: this long after the request.
    RelativeToNow(Duration),
    /// `Absolute`: at this instant.
    Absolute(SystemTime),
}

impl ExpiryOption {
    /// The expiry time of a blob created at `created`, set at `now`; `None`
    /// for no expiry.
    pub fn expires_at(self, created: SystemTime, now: SystemTime) -> Option<SystemTime> {
        match self {
            ExpiryOption::NeverExpire => None,
            ExpiryOption::RelativeToCreation(d) => Some(created + d),
            ExpiryOption::RelativeToNow(d) => Some(now + d),
            ExpiryOption::Absolute(t) => Some(t),
        }
    }
}

/// A blob with expiry time `expires_at` is gone at `now`: from that instant
/// on, whether or not the collector has removed it yet.
pub(crate) fn is_expired(expires_at: Option<SystemTime>, now: SystemTime) -> bool {
    expires_at.is_some_and(|t| t <= now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn each_option_sets_its_expiry_time() {
        let s = Duration::from_secs;
        let created = UNIX_EPOCH + s(1_000);
        let now = UNIX_EPOCH + s(5_000);
        let at = UNIX_EPOCH + s(9_000);
        let cases = [
            (ExpiryOption::NeverExpire, None),
            (
                ExpiryOption::RelativeToCreation(s(60)),
                Some(created + s(60)),
            ),
            (ExpiryOption::RelativeToNow(s(60)), Some(now + s(60))),
            (ExpiryOption::Absolute(at), Some(at)),
        ];
        for (option, want) in cases {
            assert_eq!(option.expires_at(created, now), want, "{option:?}");
        }
    }

    #[test]
    fn a_blob_is_expired_from_its_expiry_time_on() {
        let t = UNIX_EPOCH + Duration::from_secs(100);
        let ns = Duration::from_nanos(1);
        let cases = [
            (None, t, false),
            (Some(t), t - ns, false),
            (Some(t), t, true),
            (Some(t), t + ns, true),
        ];
        for (expires_at, now, want) in cases {
            assert_eq!(is_expired(expires_at, now), want, "{expires_at:?} {now:?}");
        }
    }
}
