//! The stored lease record and the state computed from it (docs/wire/leases.md#states).
//!
//! Only the record is stored. The state is a function of the record and
//! `now`, so a lease expires or finishes breaking without any timer: the
//! next request simply computes a different state (docs/wire/leases.md#actions).

use std::time::SystemTime;

use crate::{LeaseDuration, LeaseId};

/// The stored lease record (spec docs/wire/leases.md#states). The state is computed from it and
/// `now`; never stored.
///
/// `LeaseRecord::default()` is the record of a resource with no lease.
/// Records written by [`apply`](crate::apply) are always consistent: an id
/// and a duration together, `expires_at` exactly for fixed leases.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaseRecord {
    /// The lease id, or none when no lease is remembered.
    pub id: Option<LeaseId>,
    /// The duration the lease was acquired with.
    pub duration: Option<LeaseDuration>,
    /// For fixed leases: when the lease expires (acquired or renewed at + d).
    pub expires_at: Option<SystemTime>,
    /// Set by a break with a period: the instant the lease becomes broken.
    pub break_at: Option<SystemTime>,
    /// Set when a break completed immediately.
    pub broken: bool,
}

impl LeaseRecord {
    /// The lease's state at `now` (spec docs/wire/leases.md#states, second table).
    pub fn state(&self, now: SystemTime) -> LeaseState {
        if self.id.is_none() {
            return LeaseState::Available;
        }
        if self.broken {
            return LeaseState::Broken;
        }
        if let Some(break_at) = self.break_at {
            return if now < break_at {
                LeaseState::Breaking
            } else {
                LeaseState::Broken
            };
        }
        match self.expiry() {
            Some(expires_at) if now >= expires_at => LeaseState::Expired,
            _ => LeaseState::Leased,
        }
    }

    /// The lease properties that Get Blob, Get Blob Properties, Get
    /// Container Properties and the listings report at `now` (spec docs/wire/leases.md#states).
    pub fn properties(&self, now: SystemTime) -> LeaseProperties {
        let state = self.state(now);
        LeaseProperties {
            state,
            status: state.status(),
            duration: (state == LeaseState::Leased).then(|| self.duration_kind()),
        }
    }

    /// A freshly granted (or renewed) lease: `id` holds it for `duration`
    /// counted from `now`.
    pub(crate) fn granted(id: LeaseId, duration: LeaseDuration, now: SystemTime) -> LeaseRecord {
        LeaseRecord {
            id: Some(id),
            duration: Some(duration),
            expires_at: duration.expiry_from(now),
            break_at: None,
            broken: false,
        }
    }

    /// Whether `id` is the id this record remembers.
    pub(crate) fn is_held_by(&self, id: LeaseId) -> bool {
        self.id == Some(id)
    }

    /// When the lease expires by itself; `None` for a lease that never does.
    /// An infinite duration wins over a stray `expires_at`.
    pub(crate) fn expiry(&self) -> Option<SystemTime> {
        match self.duration {
            Some(LeaseDuration::Infinite) => None,
            Some(LeaseDuration::Fixed(_)) | None => self.expires_at,
        }
    }

    fn duration_kind(&self) -> LeaseDurationKind {
        match self.duration {
            Some(d) => d.kind(),
            None if self.expires_at.is_some() => LeaseDurationKind::Fixed,
            None => LeaseDurationKind::Infinite,
        }
    }
}

/// The state of a lease (`x-ms-lease-state`, `LeaseState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// No lease; nothing remembered.
    Available,
    /// The lock is held.
    Leased,
    /// A fixed lease ran out; its id is still remembered.
    Expired,
    /// The lease was broken and the break period is running; still locked.
    Breaking,
    /// The lease was broken and the period is over; its id is still remembered.
    Broken,
}

impl LeaseState {
    /// The wire value: `available`, `leased`, `expired`, `breaking` or `broken`.
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseState::Available => "available",
            LeaseState::Leased => "leased",
            LeaseState::Expired => "expired",
            LeaseState::Breaking => "breaking",
            LeaseState::Broken => "broken",
        }
    }

    /// Locked while leased or breaking, unlocked otherwise.
    pub fn status(self) -> LeaseStatus {
        match self {
            LeaseState::Leased | LeaseState::Breaking => LeaseStatus::Locked,
            LeaseState::Available | LeaseState::Expired | LeaseState::Broken => {
                LeaseStatus::Unlocked
            }
        }
    }
}

/// Whether the resource is locked (`x-ms-lease-status`, `LeaseStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseStatus {
    /// Leased or breaking.
    Locked,
    /// Available, expired or broken.
    Unlocked,
}

impl LeaseStatus {
    /// The wire value: `locked` or `unlocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseStatus::Locked => "locked",
            LeaseStatus::Unlocked => "unlocked",
        }
    }
}

/// The kind of duration a held lease has (`x-ms-lease-duration`, `LeaseDuration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseDurationKind {
    /// Acquired with `-1`.
    Infinite,
    /// Acquired with 15…60 seconds.
    Fixed,
}

impl LeaseDurationKind {
    /// The wire value: `infinite` or `fixed`.
    pub fn as_str(self) -> &'static str {
        match self {
            LeaseDurationKind::Infinite => "infinite",
            LeaseDurationKind::Fixed => "fixed",
        }
    }
}

/// The three lease properties a resource reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseProperties {
    /// `x-ms-lease-state`.
    pub state: LeaseState,
    /// `x-ms-lease-status`.
    pub status: LeaseStatus,
    /// `x-ms-lease-duration`: only while leased, absent otherwise (also while
    /// breaking, spec docs/wire/leases.md#states, unverified).
    pub duration: Option<LeaseDurationKind>,
}

impl LeaseProperties {
    /// What a resource without a lease, or a snapshot, reports:
    /// `available`, `unlocked`, no duration.
    pub const AVAILABLE: LeaseProperties = LeaseProperties {
        state: LeaseState::Available,
        status: LeaseStatus::Unlocked,
        duration: None,
    };
}

#[cfg(test)]
mod tests;
