//! The five lease columns shared by containers and blobs.

use stowage_leases::{LeaseDuration, LeaseId, LeaseRecord};

use super::sql::SqlRow;
use crate::timestamps::{from_nanos, to_nanos};
use crate::{Error, Result};

/// Column list in the order [`read`] expects and [`values`] produces.
pub(crate) const COLUMNS: &str =
    "lease_id, lease_duration, lease_expires_at, lease_break_at, lease_broken";

/// Reads the lease record from five consecutive columns starting at `first`.
pub(crate) fn read(row: &dyn SqlRow, first: usize) -> Result<LeaseRecord> {
    let id: Option<String> = row.get(first)?;
    let duration: Option<i64> = row.get(first + 1)?;
    let expires: Option<i64> = row.get(first + 2)?;
    let break_at: Option<i64> = row.get(first + 3)?;
    let broken: bool = row.get(first + 4)?;
    Ok(LeaseRecord {
        id: id
            .map(|s| LeaseId::parse(&s).map_err(|_| Error::Corrupt(format!("lease id {s:?}"))))
            .transpose()?,
        duration: duration
            .map(|d| {
                LeaseDuration::from_seconds(d)
                    .map_err(|_| Error::Corrupt(format!("lease duration {d}")))
            })
            .transpose()?,
        expires_at: expires.map(from_nanos),
        break_at: break_at.map(from_nanos),
        broken,
    })
}

/// The values to store for `record`, in [`COLUMNS`] order.
pub(crate) type LeaseValues = (Option<String>, Option<i64>, Option<i64>, Option<i64>, bool);

pub(crate) fn values(record: &LeaseRecord) -> LeaseValues {
    (
        record.id.map(|id| id.to_string()),
        record.duration.map(|d| match d {
            LeaseDuration::Infinite => -1,
            LeaseDuration::Fixed(s) => i64::from(s),
        }),
        record.expires_at.map(to_nanos),
        record.break_at.map(to_nanos),
        record.broken,
    )
}
