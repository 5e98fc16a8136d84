//! The state table of docs/wire/leases.md#states, the exposed properties of docs/wire/leases.md#states,
//! and the time transitions of docs/wire/leases.md#actions and docs/wire/leases.md#actions under a manual clock.

use super::*;
use crate::fixtures::{A, Start, X, break_for, millis, secs, t0};
use crate::{Clock, LeaseAction, ManualClock, Resource, apply};

#[test]
fn state_is_computed_from_the_record_as_in_3_1() {
    let t = t0();
    let fixed = |expires_at| LeaseRecord {
        id: Some(A),
        duration: Some(LeaseDuration::Fixed(15)),
        expires_at: Some(expires_at),
        ..LeaseRecord::default()
    };
    let infinite = LeaseRecord {
        id: Some(A),
        duration: Some(LeaseDuration::Infinite),
        ..LeaseRecord::default()
    };
    let cases: Vec<(&str, LeaseRecord, LeaseState)> = vec![
        ("no id", LeaseRecord::default(), LeaseState::Available),
        (
            "no id, leftovers ignored",
            LeaseRecord {
                broken: true,
                ..fixed(t + secs(1))
            }
            .without_id(),
            LeaseState::Available,
        ),
        ("infinite", infinite.clone(), LeaseState::Leased),
        ("now < expires_at", fixed(t + millis(1)), LeaseState::Leased),
        ("now = expires_at", fixed(t), LeaseState::Expired),
        ("now > expires_at", fixed(t - secs(1)), LeaseState::Expired),
        (
            "now < break_at",
            LeaseRecord {
                break_at: Some(t + millis(1)),
                ..infinite.clone()
            },
            LeaseState::Breaking,
        ),
        (
            "now < break_at, past expiry",
            LeaseRecord {
                break_at: Some(t + millis(1)),
                ..fixed(t - secs(1))
            },
            LeaseState::Breaking,
        ),
        (
            "now = break_at",
            LeaseRecord {
                break_at: Some(t),
                ..infinite.clone()
            },
            LeaseState::Broken,
        ),
        (
            "broken flag",
            LeaseRecord {
                broken: true,
                ..fixed(t + secs(10))
            },
            LeaseState::Broken,
        ),
    ];
    for (name, record, state) in cases {
        assert_eq!(record.state(t), state, "{name}");
    }
}

impl LeaseRecord {
    fn without_id(self) -> LeaseRecord {
        LeaseRecord { id: None, ..self }
    }
}

#[test]
fn properties_of_each_state_as_in_3() {
    use LeaseDurationKind::{Fixed, Infinite};
    let cases: &[(Start, &str, &str, Option<LeaseDurationKind>)] = &[
        (Start::Available, "available", "unlocked", None),
        (Start::LeasedFixed, "leased", "locked", Some(Fixed)),
        (Start::LeasedInfinite, "leased", "locked", Some(Infinite)),
        (Start::Breaking, "breaking", "locked", None),
        (Start::BrokenNow, "broken", "unlocked", None),
        (Start::BrokenElapsed, "broken", "unlocked", None),
        (Start::Expired, "expired", "unlocked", None),
    ];
    for &(start, state, status, duration) in cases {
        let (clock, record) = start.build();
        let properties = record.properties(clock.now());
        assert_eq!(properties.state.as_str(), state, "{start:?}");
        assert_eq!(properties.status.as_str(), status, "{start:?}");
        assert_eq!(properties.duration, duration, "{start:?}");
    }
    assert_eq!(LeaseDurationKind::Fixed.as_str(), "fixed");
    assert_eq!(LeaseDurationKind::Infinite.as_str(), "infinite");
    assert_eq!(
        LeaseRecord::default().properties(t0()),
        LeaseProperties::AVAILABLE
    );
}

fn acquired(duration: LeaseDuration, clock: &ManualClock) -> LeaseRecord {
    let acquire = LeaseAction::Acquire {
        duration,
        proposed_id: Some(A),
    };
    apply(
        &LeaseRecord::default(),
        &acquire,
        clock.now(),
        X,
        Resource::Blob,
    )
    .expect("available")
    .0
}

#[test]
fn a_fixed_15_s_lease_is_leased_at_14_999_s_and_expired_at_15_s() {
    let clock = ManualClock::new(t0());
    let record = acquired(LeaseDuration::Fixed(15), &clock);
    clock.advance(millis(14_999));
    assert_eq!(record.state(clock.now()), LeaseState::Leased);
    assert_eq!(record.properties(clock.now()).status, LeaseStatus::Locked);
    clock.advance(millis(1));
    assert_eq!(record.state(clock.now()), LeaseState::Expired);
    assert_eq!(record.properties(clock.now()).status, LeaseStatus::Unlocked);
    assert_eq!(record.properties(clock.now()).duration, None);
}

#[test]
fn a_break_with_period_10_is_breaking_at_9_999_s_and_broken_at_10_s() {
    for duration in [LeaseDuration::Infinite, LeaseDuration::Fixed(60)] {
        let clock = ManualClock::new(t0());
        let record = acquired(duration, &clock);
        let (record, _) = apply(
            &record,
            &break_for(Some(10)),
            clock.now(),
            X,
            Resource::Blob,
        )
        .expect("leased");
        clock.advance(millis(9_999));
        assert_eq!(
            record.state(clock.now()),
            LeaseState::Breaking,
            "{duration:?}"
        );
        assert_eq!(record.properties(clock.now()).status, LeaseStatus::Locked);
        clock.advance(millis(1));
        assert_eq!(
            record.state(clock.now()),
            LeaseState::Broken,
            "{duration:?}"
        );
        assert_eq!(record.properties(clock.now()).status, LeaseStatus::Unlocked);
    }
}

#[test]
fn an_infinite_lease_never_expires() {
    let clock = ManualClock::new(t0());
    let record = acquired(LeaseDuration::Infinite, &clock);
    for _ in 0..4 {
        clock.advance(secs(10 * 365 * 24 * 3600));
        assert_eq!(record.state(clock.now()), LeaseState::Leased);
    }
}

#[test]
fn available_broken_and_expired_stay_put_as_time_passes() {
    for start in [
        Start::Available,
        Start::BrokenNow,
        Start::BrokenElapsed,
        Start::Expired,
    ] {
        let (clock, record) = start.build();
        for step in [millis(1), secs(60), secs(365 * 24 * 3600)] {
            clock.advance(step);
            assert_eq!(record.state(clock.now()), start.state(), "{start:?}");
        }
    }
}

#[test]
fn a_renewed_lease_counts_its_duration_from_the_renewal() {
    let clock = ManualClock::new(t0());
    let record = acquired(LeaseDuration::Fixed(15), &clock);
    clock.advance(secs(10));
    let (record, _) = apply(
        &record,
        &LeaseAction::Renew { id: A },
        clock.now(),
        X,
        Resource::Blob,
    )
    .expect("leased");
    clock.advance(millis(14_999));
    assert_eq!(record.state(clock.now()), LeaseState::Leased);
    clock.advance(millis(1));
    assert_eq!(record.state(clock.now()), LeaseState::Expired);
}
