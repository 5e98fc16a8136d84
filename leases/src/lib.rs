//! The lease state machine of Stowage: blob and container leases as pure data
//! (docs/wire/leases.md).
//!
//! A lease is stored as a [`LeaseRecord`] (id, duration, expiry, break time);
//! its [`LeaseState`] is computed from that record and `now`, so nothing
//! ever runs on a timer. [`apply`] turns a record and one [`LeaseAction`]
//! into the next record and the answer; [`check`] decides whether an
//! operation that presents a lease id (or none) may touch the resource.
//!
//! What this crate refuses to know: HTTP (headers, status codes: the server
//! maps each [`Error`] to its answer), storage (the caller reads and writes
//! the record in its own transaction), and the time of day (every function
//! takes `now`; the only wall-clock read in the workspace is
//! [`SystemClock`]). No IO, no async.
//!
//! ```
//! use std::time::Duration;
//! use stowage_leases::{
//!     apply, check, Access, Clock, Error, LeaseAction, LeaseDuration, LeaseId, LeaseRecord,
//!     LeaseState, ManualClock, Resource,
//! };
//!
//! let clock = ManualClock::new(std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000));
//! let acquire = LeaseAction::Acquire { duration: LeaseDuration::Fixed(15), proposed_id: None };
//! let (record, outcome) =
//!     apply(&LeaseRecord::default(), &acquire, clock.now(), LeaseId::random(), Resource::Blob)?;
//! let id = outcome.lease_id.expect("acquire answers the granted id");
//!
//! // Writing without the id is refused while the lease is held...
//! let refused = check(&record, None, Access::Write, Resource::Blob, clock.now());
//! assert_eq!(refused, Err(Error::LeaseIdMissing(Resource::Blob)));
//! assert!(check(&record, Some(&id), Access::Write, Resource::Blob, clock.now()).is_ok());
//!
//! // ...and the lease expires by itself, without a timer.
//! clock.advance(Duration::from_secs(15));
//! assert_eq!(record.state(clock.now()), LeaseState::Expired);
//! # Ok::<(), Error>(())
//! ```

#![warn(missing_docs)]

mod action;
mod check;
mod clock;
mod duration;
mod error;
mod id;
mod record;

#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod invariants;

pub use action::{ActionOutcome, LeaseAction, apply};
pub use check::{Access, CheckOutcome, check};
pub use clock::{Clock, ManualClock, SystemClock};
pub use duration::{BreakPeriod, LeaseDuration};
pub use error::{Error, Resource, Result};
pub use id::LeaseId;
pub use record::{LeaseDurationKind, LeaseProperties, LeaseRecord, LeaseState, LeaseStatus};
