//! The invariant no table can list: whatever sequence of lease actions,
//! guarded writes and clock advances happens, there are never two holders.
//! A holder is an id with which a write is allowed (`check` with
//! `Access::Write` succeeds).

use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use crate::fixtures::{A, B, C, t0};
use crate::{
    Access, ActionOutcome, BreakPeriod, CheckOutcome, Clock, Error, LeaseAction, LeaseDuration,
    LeaseId, LeaseRecord, LeaseState, LeaseStatus, ManualClock, Resource, apply, check,
};

const POOL: [LeaseId; 3] = [A, B, C];

#[derive(Clone, Debug)]
enum Step {
    Advance(Duration),
    Act(LeaseAction),
    /// A guarded write presenting this id (or none).
    Write(Option<LeaseId>),
}

fn id() -> impl Strategy<Value = LeaseId> {
    prop::sample::select(POOL.to_vec())
}

fn duration() -> impl Strategy<Value = LeaseDuration> {
    prop_oneof![
        Just(LeaseDuration::Infinite),
        (15u32..=60).prop_map(LeaseDuration::Fixed),
    ]
}

fn period() -> impl Strategy<Value = Option<BreakPeriod>> {
    prop::option::of((0i64..=60).prop_map(|s| BreakPeriod::from_seconds(s).expect("0..=60")))
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        // Mostly short steps, so that sequences stay inside leases and
        // breaks, sometimes long ones that outlast any of them.
        3 => (0u64..5_000).prop_map(|ms| Step::Advance(Duration::from_millis(ms))),
        1 => (0u64..70_000).prop_map(|ms| Step::Advance(Duration::from_millis(ms))),
        3 => (duration(), prop::option::of(id()))
            .prop_map(|(duration, proposed_id)| Step::Act(LeaseAction::Acquire { duration, proposed_id })),
        2 => id().prop_map(|id| Step::Act(LeaseAction::Renew { id })),
        2 => (id(), id()).prop_map(|(id, proposed_id)| Step::Act(LeaseAction::Change { id, proposed_id })),
        1 => id().prop_map(|id| Step::Act(LeaseAction::Release { id })),
        2 => period().prop_map(|period| Step::Act(LeaseAction::Break { period })),
        2 => prop::option::of(id()).prop_map(Step::Write),
    ]
}

/// The ids among `known` that may write at `now`.
fn holders(record: &LeaseRecord, known: &[LeaseId], now: SystemTime) -> Vec<LeaseId> {
    known
        .iter()
        .copied()
        .filter(|id| check(record, Some(id), Access::Write, Resource::Blob, now).is_ok())
        .collect()
}

/// At most one holder, and blobs and containers agree on it. While there is
/// one the resource is locked and nobody writes without the id; while there
/// is none it is unlocked and a write without an id goes through.
fn assert_one_holder_at_most(
    record: &LeaseRecord,
    known: &[LeaseId],
    now: SystemTime,
) -> Result<(), TestCaseError> {
    let holders = holders(record, known, now);
    prop_assert!(
        holders.len() <= 1,
        "two holders {:?} of {:?}",
        holders,
        record
    );
    let container_holders: Vec<LeaseId> = known
        .iter()
        .copied()
        .filter(|id| check(record, Some(id), Access::Write, Resource::Container, now).is_ok())
        .collect();
    prop_assert_eq!(&holders, &container_holders);
    let status = record.properties(now).status;
    let anonymous = check(record, None, Access::Write, Resource::Blob, now);
    if holders.is_empty() {
        prop_assert_eq!(status, LeaseStatus::Unlocked, "{:?}", record);
        prop_assert!(anonymous.is_ok(), "{:?}", record);
    } else {
        prop_assert_eq!(status, LeaseStatus::Locked, "{:?}", record);
        prop_assert_eq!(anonymous, Err(Error::LeaseIdMissing(Resource::Blob)));
    }
    Ok(())
}

/// What a successful action must leave: the answered id as sole holder after
/// acquire, renew and change; nothing after release; after a break either
/// broken now (time 0, no holder) or still breaking under the same holder.
fn assert_answer(
    action: &LeaseAction,
    record: &LeaseRecord,
    outcome: ActionOutcome,
    holders: Vec<LeaseId>,
    now: SystemTime,
) -> Result<(), TestCaseError> {
    match action {
        LeaseAction::Acquire { .. } | LeaseAction::Renew { .. } | LeaseAction::Change { .. } => {
            prop_assert!(outcome.lease_id.is_some());
            prop_assert_eq!(holders, outcome.lease_id.into_iter().collect::<Vec<_>>());
        }
        LeaseAction::Release { .. } => {
            prop_assert_eq!(record.state(now), LeaseState::Available);
        }
        LeaseAction::Break { .. } => {
            let time = outcome.lease_time;
            match record.state(now) {
                LeaseState::Broken => {
                    prop_assert_eq!(time, Some(0));
                    prop_assert!(holders.is_empty());
                }
                LeaseState::Breaking => {
                    prop_assert!(time.is_some_and(|t| t <= 60), "{:?}", time);
                    prop_assert_eq!(holders, record.id.into_iter().collect::<Vec<_>>());
                }
                other => prop_assert!(false, "break left {:?}", other),
            }
        }
    }
    Ok(())
}

fn run_sequence(steps: Vec<Step>) -> Result<(), TestCaseError> {
    let clock = ManualClock::new(t0());
    let mut record = LeaseRecord::default();
    let mut known = POOL.to_vec();
    for (n, step) in (0u128..).zip(steps) {
        let now = clock.now();
        match step {
            Step::Advance(d) => clock.advance(d),
            Step::Act(action) => {
                // A fresh generated id per request, as LeaseId::random() gives.
                let generated = LeaseId::from_u128(0x9000 + n);
                known.push(generated);
                // A refusal stores nothing.
                if let Ok((next, outcome)) = apply(&record, &action, now, generated, Resource::Blob)
                {
                    record = next;
                    let holders = holders(&record, &known, now);
                    assert_answer(&action, &record, outcome, holders, now)?;
                }
            }
            Step::Write(presented) => {
                let allowed = check(
                    &record,
                    presented.as_ref(),
                    Access::Write,
                    Resource::Blob,
                    now,
                );
                if allowed == Ok(CheckOutcome::Clear) {
                    record = LeaseRecord::default();
                }
            }
        }
        assert_one_holder_at_most(&record, &known, clock.now())?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_sequences_never_give_two_holders(steps in prop::collection::vec(step(), 1..40)) {
        run_sequence(steps)?;
    }
}
