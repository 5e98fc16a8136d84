//! Every cell of docs/wire/leases.md#actions, one table per action, run for
//! blobs and containers, plus the sequences the spec's prose describes.

use std::time::Duration;

use super::*;
use crate::fixtures::{A, B, C, Start, X, break_for, millis, secs, time_left};
use crate::{Clock, ManualClock};
use Start::{Available, Breaking, BrokenElapsed, BrokenNow, Expired, LeasedFixed, LeasedInfinite};

/// What a cell expects.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Success leaving this state, this remembered id, (when given) this
    /// duration, this much time before the state changes by itself, and
    /// this answer.
    Ok {
        state: LeaseState,
        id: Option<LeaseId>,
        duration: Option<LeaseDuration>,
        left: Option<Duration>,
        outcome: ActionOutcome,
    },
    /// Success that stores the record exactly as it was, with this answer.
    Unchanged(ActionOutcome),
    /// A refusal; the record stays as it was.
    Err(Error),
}

/// Leased by `id` for `duration`, `left` seconds to go (`None`: infinite);
/// answers `x-ms-lease-id: id`.
fn leased(id: LeaseId, duration: LeaseDuration, left: Option<u64>) -> Expect {
    Expect::Ok {
        state: LeaseState::Leased,
        id: Some(id),
        duration: Some(duration),
        left: left.map(secs),
        outcome: ActionOutcome::id(id),
    }
}

/// Leased by `id` for `duration`, with the clock restarted at `now`.
fn granted(id: LeaseId, duration: LeaseDuration) -> Expect {
    let left = match duration {
        LeaseDuration::Infinite => None,
        LeaseDuration::Fixed(s) => Some(u64::from(s)),
    };
    leased(id, duration, left)
}

fn available() -> Expect {
    Expect::Ok {
        state: LeaseState::Available,
        id: None,
        duration: None,
        left: None,
        outcome: ActionOutcome::default(),
    }
}

/// Broken (A), answering `x-ms-lease-time: 0`.
fn broken() -> Expect {
    Expect::Ok {
        state: LeaseState::Broken,
        id: Some(A),
        duration: None,
        left: None,
        outcome: ActionOutcome::time(0),
    }
}

/// Breaking (A) for `s` more seconds, answering `x-ms-lease-time: s`.
fn breaking(s: u32) -> Expect {
    Expect::Ok {
        state: LeaseState::Breaking,
        id: Some(A),
        duration: None,
        left: Some(secs(u64::from(s))),
        outcome: ActionOutcome::time(s),
    }
}

fn err(e: Error) -> Expect {
    Expect::Err(e)
}

/// Runs every cell, for blobs and containers.
fn run(table: impl Fn(Resource) -> Vec<(Start, LeaseAction, Expect)>) {
    for resource in [Resource::Blob, Resource::Container] {
        for (start, action, expect) in table(resource) {
            run_cell(start, action, expect, resource);
        }
    }
}

fn run_cell(start: Start, action: LeaseAction, expect: Expect, resource: Resource) {
    let (clock, record) = start.build();
    let now = clock.now();
    let before = record.clone();
    let cell = format!("{resource:?} {start:?} {action:?}");
    let got = apply(&record, &action, now, X, resource);
    assert_eq!(record, before, "{cell}: apply must not touch its input");
    match expect {
        Expect::Err(e) => {
            assert_eq!(got, Err(e), "{cell}");
            assert_eq!(record.state(now), start.state(), "{cell}");
        }
        Expect::Unchanged(outcome) => {
            assert_eq!(got, Ok((before, outcome)), "{cell}");
        }
        Expect::Ok {
            state,
            id,
            duration,
            left,
            outcome,
        } => {
            let (after, got_outcome) = got.unwrap_or_else(|e| panic!("{cell}: {e:?}"));
            assert_eq!(got_outcome, outcome, "{cell}");
            assert_eq!(after.state(now), state, "{cell}: {after:?}");
            assert_eq!(after.id, id, "{cell}");
            if duration.is_some() {
                assert_eq!(after.duration, duration, "{cell}");
            }
            if matches!(action, LeaseAction::Break { .. }) {
                // A break changes when the lease ends, not what it was.
                assert_eq!(after.duration, before.duration, "{cell}");
                assert_eq!(after.expires_at, before.expires_at, "{cell}");
            }
            assert_eq!(time_left(&after, now), left, "{cell}: {after:?}");
            if let Some(left) = left {
                assert_runs_out(&after, &clock, left, &cell);
            }
        }
    }
}

/// The state holds until 1 ms before `left` runs out and changes exactly then.
fn assert_runs_out(record: &LeaseRecord, clock: &ManualClock, left: Duration, cell: &str) {
    let now = clock.now();
    let state = record.state(now);
    let next = match state {
        LeaseState::Leased => LeaseState::Expired,
        LeaseState::Breaking => LeaseState::Broken,
        other => panic!("{cell}: {other:?} does not run out"),
    };
    assert_eq!(record.state(now + left - millis(1)), state, "{cell}");
    assert_eq!(record.state(now + left), next, "{cell}");
}

const DURATIONS: [LeaseDuration; 3] = [
    LeaseDuration::Fixed(15),
    LeaseDuration::Fixed(60),
    LeaseDuration::Infinite,
];

#[test]
fn acquire_table_4_1() {
    for d in DURATIONS {
        let acquire = |proposed_id| LeaseAction::Acquire {
            duration: d,
            proposed_id,
        };
        run(|_| {
            let present = err(Error::LeaseAlreadyPresent);
            let is_breaking = err(Error::LeaseIsBreakingAndCannotBeAcquired);
            vec![
                // no proposed id
                (Available, acquire(None), granted(X, d)),
                (LeasedFixed, acquire(None), present),
                (LeasedInfinite, acquire(None), present),
                (Breaking, acquire(None), present),
                (BrokenNow, acquire(None), granted(X, d)),
                (BrokenElapsed, acquire(None), granted(X, d)),
                (Expired, acquire(None), granted(X, d)),
                // proposed A (the current or last holder)
                (Available, acquire(Some(A)), granted(A, d)),
                (LeasedFixed, acquire(Some(A)), granted(A, d)),
                (LeasedInfinite, acquire(Some(A)), granted(A, d)),
                (Breaking, acquire(Some(A)), is_breaking),
                (BrokenNow, acquire(Some(A)), granted(A, d)),
                (BrokenElapsed, acquire(Some(A)), granted(A, d)),
                (Expired, acquire(Some(A)), granted(A, d)),
                // proposed B
                (Available, acquire(Some(B)), granted(B, d)),
                (LeasedFixed, acquire(Some(B)), present),
                (LeasedInfinite, acquire(Some(B)), present),
                (Breaking, acquire(Some(B)), present),
                (BrokenNow, acquire(Some(B)), granted(B, d)),
                (BrokenElapsed, acquire(Some(B)), granted(B, d)),
                (Expired, acquire(Some(B)), granted(B, d)),
            ]
        });
    }
}

#[test]
fn renew_table_4_2() {
    let renew = |id| LeaseAction::Renew { id };
    let fixed = LeaseDuration::Fixed(30);
    let infinite = LeaseDuration::Infinite;
    run(|r| {
        let mismatch = err(Error::LeaseIdMismatchWithLeaseOperation(r));
        let is_broken = err(Error::LeaseIsBrokenAndCannotBeRenewed);
        vec![
            // I = A: expiry = now + d, infinite stays infinite
            (Available, renew(A), mismatch),
            (LeasedFixed, renew(A), granted(A, fixed)),
            (LeasedInfinite, renew(A), granted(A, infinite)),
            (Breaking, renew(A), is_broken),
            (BrokenNow, renew(A), is_broken),
            (BrokenElapsed, renew(A), is_broken),
            (Expired, renew(A), granted(A, fixed)),
            // I = B
            (Available, renew(B), mismatch),
            (LeasedFixed, renew(B), mismatch),
            (LeasedInfinite, renew(B), mismatch),
            (Breaking, renew(B), mismatch),
            (BrokenNow, renew(B), mismatch),
            (BrokenElapsed, renew(B), mismatch),
            (Expired, renew(B), mismatch),
        ]
    });
}

#[test]
fn change_table_4_3() {
    let change = |id, proposed_id| LeaseAction::Change { id, proposed_id };
    let fixed = LeaseDuration::Fixed(30);
    let infinite = LeaseDuration::Infinite;
    run(|r| {
        let not_present = err(Error::LeaseNotPresentWithLeaseOperation(r));
        let mismatch = err(Error::LeaseIdMismatchWithLeaseOperation(r));
        let retried = Expect::Unchanged(ActionOutcome::id(A));
        let is_breaking = err(Error::LeaseIsBreakingAndCannotBeChanged);
        vec![
            // I = A, P = B: same duration and expiry
            (Available, change(A, B), not_present),
            (LeasedFixed, change(A, B), leased(B, fixed, Some(20))),
            (LeasedInfinite, change(A, B), leased(B, infinite, None)),
            (Breaking, change(A, B), is_breaking),
            (BrokenNow, change(A, B), not_present),
            (BrokenElapsed, change(A, B), not_present),
            (Expired, change(A, B), not_present),
            // I = B, P = A: the retry of a change that already happened
            (Available, change(B, A), not_present),
            (LeasedFixed, change(B, A), retried),
            (LeasedInfinite, change(B, A), retried),
            (Breaking, change(B, A), mismatch),
            (BrokenNow, change(B, A), not_present),
            (BrokenElapsed, change(B, A), not_present),
            (Expired, change(B, A), not_present),
            // I = B, P = C
            (Available, change(B, C), not_present),
            (LeasedFixed, change(B, C), mismatch),
            (LeasedInfinite, change(B, C), mismatch),
            (Breaking, change(B, C), mismatch),
            (BrokenNow, change(B, C), not_present),
            (BrokenElapsed, change(B, C), not_present),
            (Expired, change(B, C), not_present),
            // I = A, P = A (not in the spec's table): a change to itself
            (LeasedFixed, change(A, A), retried),
            (Breaking, change(A, A), is_breaking),
        ]
    });
}

#[test]
fn release_table_4_4() {
    let release = |id| LeaseAction::Release { id };
    run(|r| {
        let mismatch = err(Error::LeaseIdMismatchWithLeaseOperation(r));
        vec![
            // I = A
            (Available, release(A), mismatch),
            (LeasedFixed, release(A), available()),
            (LeasedInfinite, release(A), available()),
            (Breaking, release(A), available()),
            (BrokenNow, release(A), available()),
            (BrokenElapsed, release(A), available()),
            (Expired, release(A), available()),
            // I = B
            (Available, release(B), mismatch),
            (LeasedFixed, release(B), mismatch),
            (LeasedInfinite, release(B), mismatch),
            (Breaking, release(B), mismatch),
            (BrokenNow, release(B), mismatch),
            (BrokenElapsed, release(B), mismatch),
            (Expired, release(B), mismatch),
        ]
    });
}

/// The starting states give r = 20 s (fixed) and q = 30 s (breaking), so
/// p = 10 is shorter than both and p = 60 longer than both.
#[test]
fn break_table_4_5() {
    let none = break_for(None);
    let p0 = break_for(Some(0));
    let p10 = break_for(Some(10));
    let p60 = break_for(Some(60));
    run(|r| {
        let not_present = err(Error::LeaseNotPresentWithLeaseOperation(r));
        vec![
            // no period
            (Available, none, not_present),
            (LeasedInfinite, none, broken()),
            (LeasedFixed, none, breaking(20)),
            (Breaking, none, Expect::Unchanged(ActionOutcome::time(30))),
            (BrokenNow, none, broken()),
            (BrokenElapsed, none, broken()),
            (Expired, none, broken()),
            // p = 0
            (Available, p0, not_present),
            (LeasedInfinite, p0, broken()),
            (LeasedFixed, p0, broken()),
            (Breaking, p0, broken()),
            (BrokenNow, p0, broken()),
            (BrokenElapsed, p0, broken()),
            (Expired, p0, broken()),
            // p > 0, shorter than r and q
            (Available, p10, not_present),
            (LeasedInfinite, p10, breaking(10)),
            (LeasedFixed, p10, breaking(10)),
            (Breaking, p10, breaking(10)),
            (BrokenNow, p10, broken()),
            (BrokenElapsed, p10, broken()),
            (Expired, p10, broken()),
            // p > 0, longer than r and q: min(p, r), min(p, q)
            (Available, p60, not_present),
            (LeasedInfinite, p60, breaking(60)),
            (LeasedFixed, p60, breaking(20)),
            (Breaking, p60, breaking(30)),
            (BrokenNow, p60, broken()),
            (BrokenElapsed, p60, broken()),
            (Expired, p60, broken()),
        ]
    });
}
