//! Enforcement of a presented lease id on a guarded operation
//! (docs/wire/leases.md#writes-to-a-leased-blob for blobs, docs/wire/leases.md#leased-containers for containers).

use std::time::SystemTime;

use crate::{Error, LeaseId, LeaseRecord, LeaseState, Resource, Result};

/// Which rule an operation follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// The write rule (LEASE-W, docs/wire/leases.md#writes-to-a-leased-blob): a leased resource needs its id.
    /// Blob writes and deletes, and Delete Container (docs/wire/leases.md#leased-containers).
    Write,
    /// The read rule (LEASE-R, docs/wire/leases.md#reads-of-a-leased-blob): no id is always fine, a sent id is
    /// checked. Blob reads, and the other container operations that accept
    /// `x-ms-lease-id` (docs/wire/leases.md#leased-containers).
    Read,
}

/// What the caller does with the lease record when the operation may go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckOutcome {
    /// Leave the record as it is.
    Keep,
    /// A write without an id on an expired or broken lease: the lease is
    /// forgotten, and the caller must store `LeaseRecord::default()` together
    /// with the write (docs/wire/leases.md#writes-to-a-leased-blob), so that the old id can no longer renew or
    /// release.
    Clear,
}

/// Enforcement of a presented lease id on a guarded operation (spec docs/wire/leases.md#writes-to-a-leased-blob, docs/wire/leases.md#leased-containers).
///
/// `presented` is the request's `x-ms-lease-id`, if any. The caller runs
/// this inside the transaction that performs the operation, with the same
/// `now` as every other check of the request.
///
/// # Errors
///
/// The 412 refusals of docs/wire/leases.md#writes-to-a-leased-blob, docs/wire/leases.md#reads-of-a-leased-blob and docs/wire/leases.md#leased-containers: [`Error::LeaseIdMissing`],
/// [`Error::LeaseLost`], and the blob or container variants of "no lease"
/// and "id mismatch", picked by `resource`.
pub fn check(
    record: &LeaseRecord,
    presented: Option<&LeaseId>,
    access: Access,
    resource: Resource,
    now: SystemTime,
) -> Result<CheckOutcome> {
    let state = record.state(now);
    let Some(&id) = presented else {
        return match (access, state) {
            (Access::Read, _) | (Access::Write, LeaseState::Available) => Ok(CheckOutcome::Keep),
            (Access::Write, LeaseState::Leased | LeaseState::Breaking) => {
                Err(Error::LeaseIdMissing(resource))
            }
            (Access::Write, LeaseState::Expired | LeaseState::Broken) => Ok(CheckOutcome::Clear),
        };
    };
    // With an id, reads and writes answer alike.
    match state {
        LeaseState::Available => Err(not_present(resource)),
        LeaseState::Leased | LeaseState::Breaking if record.is_held_by(id) => {
            Ok(CheckOutcome::Keep)
        }
        LeaseState::Leased | LeaseState::Breaking => Err(mismatch(resource)),
        // docs/wire/leases.md#writes-to-a-leased-blob says LeaseLost for every id once the lease expired or broke
        // (partly unverified). Emulators answer LeaseNotPresentWithBlobOperation
        // for the expired case; the service answers LeaseLost, and so do we.
        LeaseState::Expired | LeaseState::Broken => Err(Error::LeaseLost(resource)),
    }
}

fn not_present(resource: Resource) -> Error {
    match resource {
        Resource::Blob => Error::LeaseNotPresentWithBlobOperation,
        Resource::Container => Error::LeaseNotPresentWithContainerOperation,
    }
}

fn mismatch(resource: Resource) -> Error {
    match resource {
        Resource::Blob => Error::LeaseIdMismatchWithBlobOperation,
        Resource::Container => Error::LeaseIdMismatchWithContainerOperation,
    }
}

#[cfg(test)]
mod tests;
