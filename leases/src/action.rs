//! The five lease actions and their transitions (docs/wire/leases.md#actions).

use std::time::{Duration, SystemTime};

use crate::{
    BreakPeriod, Error, LeaseDuration, LeaseId, LeaseRecord, LeaseState, Resource, Result,
};

/// One lease request, already validated (spec docs/wire/leases.md#request-headers): ids are GUIDs, the
/// duration and the break period are in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseAction {
    /// Take the lease, or re-take it with a new duration when `proposed_id`
    /// is the current holder's (docs/wire/leases.md#actions).
    Acquire {
        /// `x-ms-lease-duration`.
        duration: LeaseDuration,
        /// `x-ms-proposed-lease-id`: the id to use instead of a generated one.
        proposed_id: Option<LeaseId>,
    },
    /// Restart the lease's clock (docs/wire/leases.md#actions).
    Renew {
        /// `x-ms-lease-id`.
        id: LeaseId,
    },
    /// Give the held lease another id (docs/wire/leases.md#actions).
    Change {
        /// `x-ms-lease-id`: the current id.
        id: LeaseId,
        /// `x-ms-proposed-lease-id`: the new id.
        proposed_id: LeaseId,
    },
    /// Give the lease up (docs/wire/leases.md#actions).
    Release {
        /// `x-ms-lease-id`.
        id: LeaseId,
    },
    /// End the lease now or after a period, without knowing its id (docs/wire/leases.md#actions).
    Break {
        /// `x-ms-lease-break-period`.
        period: Option<BreakPeriod>,
    },
}

/// What a successful lease action answers besides its status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionOutcome {
    /// `x-ms-lease-id`: the granted, renewed or new id (acquire, renew, change).
    pub lease_id: Option<LeaseId>,
    /// `x-ms-lease-time` (break only): whole seconds until the lease is
    /// broken, rounded to the nearest second, `0` if it is broken now.
    pub lease_time: Option<u32>,
}

impl ActionOutcome {
    fn id(id: LeaseId) -> Self {
        Self {
            lease_id: Some(id),
            lease_time: None,
        }
    }

    fn time(seconds: u32) -> Self {
        Self {
            lease_id: None,
            lease_time: Some(seconds),
        }
    }
}

/// Apply one lease action (spec docs/wire/leases.md#actions). `generated_id` is used when acquire has
/// no proposed id (callers pass [`LeaseId::random()`]; tests pass a fixed
/// id), keeping this pure.
///
/// Returns the record to store and what to answer. The caller stores the
/// record in the same transaction in which it read `record`, with `now` read
/// once for the whole request (docs/wire/leases.md#time-and-concurrency).
///
/// # Errors
///
/// The 409 refusals of docs/wire/leases.md#actions; the stored record must then be left as it is.
pub fn apply(
    record: &LeaseRecord,
    action: &LeaseAction,
    now: SystemTime,
    generated_id: LeaseId,
    resource: Resource,
) -> Result<(LeaseRecord, ActionOutcome)> {
    let state = record.state(now);
    match *action {
        LeaseAction::Acquire {
            duration,
            proposed_id,
        } => acquire(record, state, duration, proposed_id, generated_id, now),
        LeaseAction::Renew { id } => renew(record, state, id, now, resource),
        LeaseAction::Change { id, proposed_id } => change(record, state, id, proposed_id, resource),
        LeaseAction::Release { id } => release(record, state, id, resource),
        LeaseAction::Break { period } => break_lease(record, state, period, now, resource),
    }
}

/// docs/wire/leases.md#actions.
fn acquire(
    record: &LeaseRecord,
    state: LeaseState,
    duration: LeaseDuration,
    proposed_id: Option<LeaseId>,
    generated_id: LeaseId,
    now: SystemTime,
) -> Result<(LeaseRecord, ActionOutcome)> {
    let id = match (state, proposed_id) {
        (LeaseState::Available | LeaseState::Expired | LeaseState::Broken, proposed) => {
            proposed.unwrap_or(generated_id)
        }
        // The holder re-acquiring: new duration, clock restarted.
        (LeaseState::Leased, Some(proposed)) if record.is_held_by(proposed) => proposed,
        (LeaseState::Breaking, Some(proposed)) if record.is_held_by(proposed) => {
            return Err(Error::LeaseIsBreakingAndCannotBeAcquired);
        }
        (LeaseState::Leased | LeaseState::Breaking, _) => return Err(Error::LeaseAlreadyPresent),
    };
    Ok((
        LeaseRecord::granted(id, duration, now),
        ActionOutcome::id(id),
    ))
}

/// docs/wire/leases.md#actions.
fn renew(
    record: &LeaseRecord,
    state: LeaseState,
    id: LeaseId,
    now: SystemTime,
    resource: Resource,
) -> Result<(LeaseRecord, ActionOutcome)> {
    if !record.is_held_by(id) {
        return Err(Error::LeaseIdMismatchWithLeaseOperation(resource));
    }
    match state {
        // An expired lease is renewable until someone writes or leases the
        // resource (which forgets the id): that is how its holder learns its
        // view is still current.
        LeaseState::Leased | LeaseState::Expired => {
            let duration = record.duration.unwrap_or(LeaseDuration::Infinite);
            Ok((
                LeaseRecord::granted(id, duration, now),
                ActionOutcome::id(id),
            ))
        }
        LeaseState::Breaking | LeaseState::Broken => Err(Error::LeaseIsBrokenAndCannotBeRenewed),
        LeaseState::Available => Err(Error::LeaseIdMismatchWithLeaseOperation(resource)),
    }
}

/// docs/wire/leases.md#actions.
fn change(
    record: &LeaseRecord,
    state: LeaseState,
    id: LeaseId,
    proposed_id: LeaseId,
    resource: Resource,
) -> Result<(LeaseRecord, ActionOutcome)> {
    match state {
        LeaseState::Available | LeaseState::Expired | LeaseState::Broken => {
            Err(Error::LeaseNotPresentWithLeaseOperation(resource))
        }
        LeaseState::Leased if record.is_held_by(id) => {
            let changed = LeaseRecord {
                id: Some(proposed_id),
                ..record.clone()
            };
            Ok((changed, ActionOutcome::id(proposed_id)))
        }
        // A retry of a change that already happened: succeed, change nothing.
        LeaseState::Leased if record.is_held_by(proposed_id) => {
            Ok((record.clone(), ActionOutcome::id(proposed_id)))
        }
        LeaseState::Breaking if record.is_held_by(id) => {
            Err(Error::LeaseIsBreakingAndCannotBeChanged)
        }
        LeaseState::Leased | LeaseState::Breaking => {
            Err(Error::LeaseIdMismatchWithLeaseOperation(resource))
        }
    }
}

/// docs/wire/leases.md#actions.
fn release(
    record: &LeaseRecord,
    state: LeaseState,
    id: LeaseId,
    resource: Resource,
) -> Result<(LeaseRecord, ActionOutcome)> {
    if state == LeaseState::Available || !record.is_held_by(id) {
        return Err(Error::LeaseIdMismatchWithLeaseOperation(resource));
    }
    Ok((LeaseRecord::default(), ActionOutcome::default()))
}

/// docs/wire/leases.md#actions.
fn break_lease(
    record: &LeaseRecord,
    state: LeaseState,
    period: Option<BreakPeriod>,
    now: SystemTime,
    resource: Resource,
) -> Result<(LeaseRecord, ActionOutcome)> {
    // When the lease would end by itself if nobody did anything: the expiry
    // of a fixed lease, the end of a running break; never for an infinite one.
    let natural_end = match state {
        LeaseState::Available => return Err(Error::LeaseNotPresentWithLeaseOperation(resource)),
        LeaseState::Broken => return Ok((record.clone(), ActionOutcome::time(0))),
        LeaseState::Expired => return Ok(broken_now(record)),
        LeaseState::Leased => record.expiry(),
        LeaseState::Breaking => record.break_at,
    };
    let break_at = match (period, natural_end) {
        (None, None) => return Ok(broken_now(record)),
        (None, Some(end)) => end,
        (Some(p), _) if p.seconds() == 0 => return Ok(broken_now(record)),
        // A period shortens a break that would end later, never lengthens it.
        (Some(p), end) => {
            let requested = now + p.as_duration();
            end.map_or(requested, |end| end.min(requested))
        }
    };
    let breaking = LeaseRecord {
        break_at: Some(break_at),
        ..record.clone()
    };
    let left = break_at.duration_since(now).unwrap_or(Duration::ZERO);
    Ok((breaking, ActionOutcome::time(rounded_seconds(left))))
}

fn broken_now(record: &LeaseRecord) -> (LeaseRecord, ActionOutcome) {
    let broken = LeaseRecord {
        break_at: None,
        broken: true,
        ..record.clone()
    };
    (broken, ActionOutcome::time(0))
}

/// Whole seconds, rounded to the nearest (half a second rounds up).
fn rounded_seconds(d: Duration) -> u32 {
    let seconds = d.as_secs() + u64::from(d.subsec_nanos() >= 500_000_000);
    u32::try_from(seconds).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod sequences;
#[cfg(test)]
mod tests;
