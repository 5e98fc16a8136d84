//! Multi-step scenarios from the prose of docs/wire/leases.md#actions, and the
//! rounding of `x-ms-lease-time`.

use super::*;
use crate::fixtures::{A, B, Start, X, break_for, millis, secs, t0};
use crate::{Access, CheckOutcome, Clock, ManualClock, check};

const BLOB: Resource = Resource::Blob;

fn acquire(duration: LeaseDuration, proposed_id: Option<LeaseId>) -> LeaseAction {
    LeaseAction::Acquire {
        duration,
        proposed_id,
    }
}

fn ok(record: &LeaseRecord, action: LeaseAction, clock: &ManualClock) -> LeaseRecord {
    apply(record, &action, clock.now(), X, BLOB)
        .unwrap_or_else(|e| panic!("{action:?}: {e}"))
        .0
}

#[test]
fn releasing_an_expired_lease_succeeds_once_then_is_409() {
    let (clock, record) = Start::Expired.build();
    let released = ok(&record, LeaseAction::Release { id: A }, &clock);
    assert_eq!(released, LeaseRecord::default());
    assert_eq!(
        apply(
            &released,
            &LeaseAction::Release { id: A },
            clock.now(),
            X,
            BLOB
        ),
        Err(Error::LeaseIdMismatchWithLeaseOperation(BLOB))
    );
}

#[test]
fn renew_after_a_write_cleared_an_expired_lease_is_409_mismatch() {
    let (clock, record) = Start::Expired.build();
    // Renewable while nobody wrote...
    assert!(apply(&record, &LeaseAction::Renew { id: A }, clock.now(), X, BLOB).is_ok());
    // ...but a write without an id forgets the lease (docs/wire/leases.md#writes-to-a-leased-blob).
    let outcome = check(&record, None, Access::Write, BLOB, clock.now());
    assert_eq!(outcome, Ok(CheckOutcome::Clear));
    let written = LeaseRecord::default();
    assert_eq!(
        apply(
            &written,
            &LeaseAction::Renew { id: A },
            clock.now(),
            X,
            BLOB
        ),
        Err(Error::LeaseIdMismatchWithLeaseOperation(BLOB))
    );
}

#[test]
fn of_two_acquires_on_an_available_blob_exactly_one_wins() {
    let clock = ManualClock::new(t0());
    let first = acquire(LeaseDuration::Infinite, Some(A));
    let second = acquire(LeaseDuration::Infinite, Some(B));
    let record = ok(&LeaseRecord::default(), first, &clock);
    assert_eq!(
        apply(&record, &second, clock.now(), X, BLOB),
        Err(Error::LeaseAlreadyPresent)
    );
}

#[test]
fn when_the_break_period_ends_any_id_can_acquire() {
    let clock = ManualClock::new(t0());
    let mut record = ok(
        &LeaseRecord::default(),
        acquire(LeaseDuration::Infinite, Some(A)),
        &clock,
    );
    record = ok(&record, break_for(Some(10)), &clock);
    clock.advance(millis(9_999));
    assert_eq!(
        apply(
            &record,
            &acquire(LeaseDuration::Fixed(15), Some(B)),
            clock.now(),
            X,
            BLOB
        ),
        Err(Error::LeaseAlreadyPresent)
    );
    clock.advance(millis(1));
    let (taken, outcome) = apply(
        &record,
        &acquire(LeaseDuration::Fixed(15), Some(B)),
        clock.now(),
        X,
        BLOB,
    )
    .expect("broken lease can be taken");
    assert_eq!(outcome.lease_id, Some(B));
    assert_eq!(taken.state(clock.now()), LeaseState::Leased);
}

#[test]
fn reacquiring_with_the_holders_id_restarts_the_clock_with_the_new_duration() {
    let (clock, record) = Start::LeasedFixed.build();
    // 20 s were left of a 30 s lease; re-acquired for 15 s from now.
    let record = ok(&record, acquire(LeaseDuration::Fixed(15), Some(A)), &clock);
    assert_eq!(
        record.state(clock.now() + millis(14_999)),
        LeaseState::Leased
    );
    assert_eq!(record.state(clock.now() + secs(15)), LeaseState::Expired);
}

#[test]
fn change_keeps_the_expiry_and_the_new_id_holds_until_then() {
    let (clock, record) = Start::LeasedFixed.build();
    let changed = ok(
        &record,
        LeaseAction::Change {
            id: A,
            proposed_id: B,
        },
        &clock,
    );
    assert_eq!(changed.expires_at, record.expires_at);
    let at = |d| clock.now() + d;
    assert_eq!(
        check(&changed, Some(&B), Access::Write, BLOB, at(millis(19_999))),
        Ok(CheckOutcome::Keep)
    );
    assert_eq!(
        check(&changed, Some(&A), Access::Write, BLOB, clock.now()),
        Err(Error::LeaseIdMismatchWithBlobOperation)
    );
    assert_eq!(changed.state(at(secs(20))), LeaseState::Expired);
}

#[test]
fn a_generated_id_is_used_only_without_a_proposal() {
    let clock = ManualClock::new(t0());
    let (_, outcome) = apply(
        &LeaseRecord::default(),
        &acquire(LeaseDuration::Infinite, None),
        clock.now(),
        X,
        BLOB,
    )
    .expect("available");
    assert_eq!(outcome.lease_id, Some(X));
    let (_, outcome) = apply(
        &LeaseRecord::default(),
        &acquire(LeaseDuration::Infinite, Some(B)),
        clock.now(),
        X,
        BLOB,
    )
    .expect("available");
    assert_eq!(outcome.lease_id, Some(B));
}

/// `x-ms-lease-time` is rounded to the nearest second.
#[test]
fn break_lease_time_rounds_to_the_nearest_second() {
    // (time since acquiring a fixed 30 s lease, break period, lease time, state after)
    let cases: &[(u64, Option<i64>, u32, LeaseState)] = &[
        (10_400, None, 20, LeaseState::Breaking),     // r = 19.6 s
        (10_500, None, 20, LeaseState::Breaking),     // r = 19.5 s: half rounds up
        (10_600, None, 19, LeaseState::Breaking),     // r = 19.4 s
        (29_700, None, 0, LeaseState::Breaking),      // r = 0.3 s: still breaking, time 0
        (29_400, None, 1, LeaseState::Breaking),      // r = 0.6 s
        (20_400, Some(15), 10, LeaseState::Breaking), // min(15, 9.6) = 9.6
        (10_400, Some(15), 15, LeaseState::Breaking), // a whole period stays whole
        (29_700, Some(0), 0, LeaseState::Broken),
    ];
    for &(elapsed, period, time, state) in cases {
        let clock = ManualClock::new(t0());
        let record = ok(
            &LeaseRecord::default(),
            acquire(LeaseDuration::Fixed(30), Some(A)),
            &clock,
        );
        clock.advance(millis(elapsed));
        let (after, outcome) = apply(&record, &break_for(period), clock.now(), X, BLOB)
            .expect("leased lease can be broken");
        assert_eq!(outcome.lease_time, Some(time), "{elapsed} ms, {period:?}");
        assert_eq!(after.state(clock.now()), state, "{elapsed} ms, {period:?}");
    }
}

#[test]
fn a_longer_break_period_does_not_lengthen_a_running_break() {
    let (clock, record) = Start::Breaking.build();
    let (after, outcome) =
        apply(&record, &break_for(Some(60)), clock.now(), X, BLOB).expect("breaking");
    assert_eq!(after, record);
    assert_eq!(outcome.lease_time, Some(30));
}
