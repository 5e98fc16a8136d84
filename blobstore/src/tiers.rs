//! Access tiers of block blobs: the record stored with each blob version,
//! the state computed from it at a given time, and the rules of Set Blob
//! Tier (docs/wire/tiers.md). Pure: no IO, and the time is an argument.
//!
//! Like a lease, a rehydration is data (target tier, priority, the time it
//! completes), never a timer: at any `now` the record says whether the
//! blob is still archived, still rehydrating, or already in its new tier.

use std::time::{Duration, SystemTime};

use crate::{BlobType, Error, Result};

/// The tiers of a block blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessTier {
    /// Online, the default of the account.
    Hot,
    /// Online.
    Cool,
    /// Online.
    Cold,
    /// Offline: the content cannot be read or changed until rehydrated.
    Archive,
}

impl AccessTier {
    /// The service's spelling (`x-ms-access-tier`, `<AccessTier>`).
    pub fn as_str(self) -> &'static str {
        match self {
            AccessTier::Hot => "Hot",
            AccessTier::Cool => "Cool",
            AccessTier::Cold => "Cold",
            AccessTier::Archive => "Archive",
        }
    }

    /// Parses the service's spelling (case-sensitive).
    pub fn parse(s: &str) -> Option<AccessTier> {
        [
            AccessTier::Hot,
            AccessTier::Cool,
            AccessTier::Cold,
            AccessTier::Archive,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }

    /// The lower-case name used in `rehydrate-pending-to-<tier>`.
    fn lower(self) -> &'static str {
        match self {
            AccessTier::Hot => "hot",
            AccessTier::Cool => "cool",
            AccessTier::Cold => "cold",
            AccessTier::Archive => "archive",
        }
    }
}

/// `x-ms-rehydrate-priority`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RehydratePriority {
    /// The default.
    Standard,
    /// Faster at the service; the same delay in Stowage.
    High,
}

impl RehydratePriority {
    /// The service's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RehydratePriority::Standard => "Standard",
            RehydratePriority::High => "High",
        }
    }

    /// Parses the service's spelling (case-sensitive).
    pub fn parse(s: &str) -> Option<RehydratePriority> {
        [RehydratePriority::Standard, RehydratePriority::High]
            .into_iter()
            .find(|p| p.as_str() == s)
    }
}

/// A rehydration out of the archive tier that was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rehydration {
    /// The online tier the blob moves to.
    pub to: AccessTier,
    /// The priority asked for (raised from Standard to High on request).
    pub priority: RehydratePriority,
    /// When the blob is online in `to`.
    pub done_at: SystemTime,
}

/// The tier data stored with a blob version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierRecord {
    /// The tier set explicitly; `None` is the account default (Hot,
    /// reported as inferred).
    pub tier: Option<AccessTier>,
    /// When Set Blob Tier last changed the tier.
    pub changed_at: Option<SystemTime>,
    /// A rehydration asked for (the tier stays Archive until it is done).
    pub rehydration: Option<Rehydration>,
}

/// What the service reports about a blob's tier at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TierProperties {
    /// `x-ms-access-tier`.
    pub tier: AccessTier,
    /// `x-ms-access-tier-inferred: true` when no tier was set explicitly.
    pub inferred: bool,
    /// `x-ms-access-tier-change-time`.
    pub changed_at: Option<SystemTime>,
    /// The target of a pending rehydration (`x-ms-archive-status`).
    pub rehydrating_to: Option<AccessTier>,
    /// `x-ms-rehydrate-priority` of a pending rehydration.
    pub rehydrate_priority: Option<RehydratePriority>,
}

impl TierProperties {
    /// `x-ms-archive-status`: `rehydrate-pending-to-<tier>` while a
    /// rehydration is pending.
    pub fn archive_status(&self) -> Option<String> {
        self.rehydrating_to
            .map(|t| format!("rehydrate-pending-to-{}", t.lower()))
    }
}

/// How a Set Blob Tier was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetTierOutcome {
    /// The tier is in effect now (`200 OK`).
    Done,
    /// A rehydration is pending (`202 Accepted`).
    Pending,
}

/// One Set Blob Tier request, as the rules need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetTier {
    /// The tier asked for.
    pub tier: AccessTier,
    /// `x-ms-rehydrate-priority`, if sent.
    pub priority: Option<RehydratePriority>,
    /// The blob's type.
    pub blob_type: BlobType,
    /// True when the request names a snapshot.
    pub snapshot: bool,
}

impl TierRecord {
    /// The record of a blob written with `x-ms-access-tier` (or without).
    pub fn written(tier: Option<AccessTier>) -> TierRecord {
        TierRecord {
            tier,
            changed_at: None,
            rehydration: None,
        }
    }

    /// The record as it stands at `now`: a rehydration whose time has come
    /// is complete, and the blob is in its new tier since then.
    pub fn settled(self, now: SystemTime) -> TierRecord {
        match self.rehydration {
            Some(r) if r.done_at <= now => TierRecord {
                tier: Some(r.to),
                changed_at: Some(r.done_at),
                rehydration: None,
            },
            _ => self,
        }
    }

    /// What Get Blob Properties and List Blobs report at `now`.
    pub fn properties(self, now: SystemTime) -> TierProperties {
        let s = self.settled(now);
        TierProperties {
            tier: s.tier.unwrap_or(AccessTier::Hot),
            inferred: s.tier.is_none(),
            changed_at: s.changed_at,
            rehydrating_to: s.rehydration.map(|r| r.to),
            rehydrate_priority: s.rehydration.map(|r| r.priority),
        }
    }

    /// The refusal of an operation that reads or changes the content or
    /// the properties of an offline blob: `BlobBeingRehydrated` while a
    /// rehydration is pending, `BlobArchived` in the archive tier.
    ///
    /// # Errors
    /// As above.
    pub fn check_online(self, now: SystemTime) -> Result<()> {
        let s = self.settled(now);
        match (s.tier, s.rehydration) {
            (_, Some(_)) => Err(Error::BlobBeingRehydrated),
            (Some(AccessTier::Archive), None) => Err(Error::BlobArchived),
            _ => Ok(()),
        }
    }

    /// Applies Set Blob Tier at `now`; a rehydration takes `delay`.
    ///
    /// # Errors
    /// `AccessTierNotSupportedForBlobType` for anything but a block blob;
    /// `BlobBeingRehydrated` for a change of target (or back to Archive)
    /// while a rehydration is pending; `BlobArchived` for an archived
    /// snapshot moved online (the service rehydrates only base blobs).
    pub fn set(
        self,
        req: SetTier,
        now: SystemTime,
        delay: Duration,
    ) -> Result<(TierRecord, SetTierOutcome)> {
        if req.blob_type != BlobType::BlockBlob {
            return Err(Error::AccessTierNotSupportedForBlobType);
        }
        let s = self.settled(now);
        let archived = s.tier == Some(AccessTier::Archive);
        match (s.rehydration, req.tier) {
            (Some(r), to) if to == r.to => {
                // The same request again: only a raise of the priority counts.
                let priority = req.priority.map_or(r.priority, |p| p.max(r.priority));
                let rehydration = Some(Rehydration { priority, ..r });
                Ok((TierRecord { rehydration, ..s }, SetTierOutcome::Pending))
            }
            (Some(_), _) => Err(Error::BlobBeingRehydrated),
            (None, AccessTier::Archive) if archived => Ok((s, SetTierOutcome::Done)),
            (None, to) if archived => {
                if req.snapshot {
                    return Err(Error::BlobArchived);
                }
                let rehydration = Some(Rehydration {
                    to,
                    priority: req.priority.unwrap_or(RehydratePriority::Standard),
                    done_at: now + delay,
                });
                Ok((TierRecord { rehydration, ..s }, SetTierOutcome::Pending))
            }
            (None, to) if s.tier == Some(to) => Ok((s, SetTierOutcome::Done)),
            (None, to) => Ok((
                TierRecord {
                    tier: Some(to),
                    changed_at: Some(now),
                    rehydration: None,
                },
                SetTierOutcome::Done,
            )),
        }
    }
}

#[cfg(test)]
#[path = "tiers_tests.rs"]
mod tests;
