//! The tier columns of a blob version: `access_tier` and the four that
//! schema version 8 added for tier changes and rehydration.

use super::sql::SqlRow;

use crate::timestamps::{from_nanos, to_nanos};
use crate::{AccessTier, Error, RehydratePriority, Rehydration, Result, TierRecord};

/// The columns after `access_tier`, in the order [`values`] gives them
/// (from its second value on).
pub(crate) const CHANGE_COLUMNS: &str =
    "access_tier_changed_at, rehydrate_to, rehydrate_priority, rehydrate_done_at";

fn tier(s: &str) -> Result<AccessTier> {
    AccessTier::parse(s).ok_or_else(|| Error::Corrupt(format!("access tier {s:?}")))
}

/// Reads the record from `access_tier` at `tier_at` and the four
/// [`CHANGE_COLUMNS`] starting at `first`.
pub(crate) fn read(row: &dyn SqlRow, tier_at: usize, first: usize) -> Result<TierRecord> {
    let explicit: Option<String> = row.get(tier_at)?;
    let changed_at: Option<i64> = row.get(first)?;
    let to: Option<String> = row.get(first + 1)?;
    let priority: Option<String> = row.get(first + 2)?;
    let done_at: Option<i64> = row.get(first + 3)?;
    let rehydration = match (to, done_at) {
        (Some(to), Some(done_at)) => Some(Rehydration {
            to: tier(&to)?,
            priority: priority
                .as_deref()
                .and_then(RehydratePriority::parse)
                .unwrap_or(RehydratePriority::Standard),
            done_at: from_nanos(done_at),
        }),
        _ => None,
    };
    Ok(TierRecord {
        tier: explicit.as_deref().map(tier).transpose()?,
        changed_at: changed_at.map(from_nanos),
        rehydration,
    })
}

/// `access_tier` then the [`CHANGE_COLUMNS`] values of `record`.
pub(crate) type TierValues = (
    Option<&'static str>,
    Option<i64>,
    Option<&'static str>,
    Option<&'static str>,
    Option<i64>,
);

pub(crate) fn values(record: &TierRecord) -> TierValues {
    let r = record.rehydration.as_ref();
    (
        record.tier.map(AccessTier::as_str),
        record.changed_at.map(to_nanos),
        r.map(|r| r.to.as_str()),
        r.map(|r| r.priority.as_str()),
        r.map(|r| to_nanos(r.done_at)),
    )
}
