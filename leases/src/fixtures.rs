//! Starting states for the test tables, each reached the way a client gets
//! there: lease actions under a [`ManualClock`], never by sleeping and never
//! by writing record fields by hand.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{
    BreakPeriod, Clock, LeaseAction, LeaseDuration, LeaseId, LeaseRecord, LeaseState, ManualClock,
    Resource, apply,
};

/// The current holder in every non-available starting state.
pub(crate) const A: LeaseId = LeaseId::from_u128(0xaaaa_aaaa_aaaa_4aaa_8aaa_aaaa_aaaa_aaaa);
/// Another id.
pub(crate) const B: LeaseId = LeaseId::from_u128(0xbbbb_bbbb_bbbb_4bbb_8bbb_bbbb_bbbb_bbbb);
/// A third id.
pub(crate) const C: LeaseId = LeaseId::from_u128(0xcccc_cccc_cccc_4ccc_8ccc_cccc_cccc_cccc);
/// What the "server" generates when acquire proposes no id.
pub(crate) const X: LeaseId = LeaseId::from_u128(0x1111_2222_3333_4444_8555_6666_7777_8888);

/// The instant every test starts at.
pub(crate) fn t0() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_700_000_000)
}

pub(crate) fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

pub(crate) fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// A starting state of the tables. The five states of docs/wire/leases.md#states, with
/// leased split into fixed and infinite (break answers differently) and
/// broken reached both ways (flag and elapsed period).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// Nothing ever leased.
    Available,
    /// Leased (A), fixed 30 s, acquired 10 s ago: r = 20 s.
    LeasedFixed,
    /// Leased (A), infinite.
    LeasedInfinite,
    /// Breaking (A): infinite lease broken with period 40 s, 10 s ago: q = 30 s.
    Breaking,
    /// Broken (A): infinite lease broken without a period.
    BrokenNow,
    /// Broken (A): fixed 30 s lease broken with period 10 s, 11 s ago.
    BrokenElapsed,
    /// Expired (A): fixed 30 s lease acquired 40 s ago.
    Expired,
}

impl Start {
    pub(crate) const ALL: [Start; 7] = [
        Start::Available,
        Start::LeasedFixed,
        Start::LeasedInfinite,
        Start::Breaking,
        Start::BrokenNow,
        Start::BrokenElapsed,
        Start::Expired,
    ];

    /// The state the record computes to at the clock's reading.
    pub(crate) fn state(self) -> LeaseState {
        match self {
            Start::Available => LeaseState::Available,
            Start::LeasedFixed | Start::LeasedInfinite => LeaseState::Leased,
            Start::Breaking => LeaseState::Breaking,
            Start::BrokenNow | Start::BrokenElapsed => LeaseState::Broken,
            Start::Expired => LeaseState::Expired,
        }
    }

    /// The clock and the record of this starting state.
    pub(crate) fn build(self) -> (ManualClock, LeaseRecord) {
        let clock = ManualClock::new(t0());
        let mut record = LeaseRecord::default();
        let mut act = |clock: &ManualClock, action: LeaseAction| {
            record = apply(&record, &action, clock.now(), X, Resource::Blob)
                .unwrap_or_else(|e| panic!("building {self:?}: {action:?}: {e}"))
                .0;
        };
        match self {
            Start::Available => {}
            Start::LeasedFixed => {
                act(&clock, acquire_a(LeaseDuration::Fixed(30)));
                clock.advance(secs(10));
            }
            Start::LeasedInfinite => {
                act(&clock, acquire_a(LeaseDuration::Infinite));
                clock.advance(secs(10));
            }
            Start::Breaking => {
                act(&clock, acquire_a(LeaseDuration::Infinite));
                act(&clock, break_for(Some(40)));
                clock.advance(secs(10));
            }
            Start::BrokenNow => {
                act(&clock, acquire_a(LeaseDuration::Infinite));
                act(&clock, break_for(None));
                clock.advance(secs(10));
            }
            Start::BrokenElapsed => {
                act(&clock, acquire_a(LeaseDuration::Fixed(30)));
                act(&clock, break_for(Some(10)));
                clock.advance(secs(11));
            }
            Start::Expired => {
                act(&clock, acquire_a(LeaseDuration::Fixed(30)));
                clock.advance(secs(40));
            }
        }
        (clock, record)
    }
}

fn acquire_a(duration: LeaseDuration) -> LeaseAction {
    LeaseAction::Acquire {
        duration,
        proposed_id: Some(A),
    }
}

/// A break with the given period in seconds (`None`: no period).
pub(crate) fn break_for(seconds: Option<i64>) -> LeaseAction {
    LeaseAction::Break {
        period: seconds.map(|s| BreakPeriod::from_seconds(s).expect("valid test period")),
    }
}

/// How long until the record's state changes by itself: the time left on a
/// fixed lease or in a break; `None` when it never does.
pub(crate) fn time_left(record: &LeaseRecord, now: SystemTime) -> Option<Duration> {
    let end = match record.state(now) {
        LeaseState::Leased => record.expiry()?,
        LeaseState::Breaking => record.break_at?,
        LeaseState::Available | LeaseState::Expired | LeaseState::Broken => return None,
    };
    Some(end.duration_since(now).expect("end is after now"))
}

#[test]
fn every_start_is_the_state_it_claims() {
    for start in Start::ALL {
        let (clock, record) = start.build();
        assert_eq!(record.state(clock.now()), start.state(), "{start:?}");
        let expected_left = match start {
            Start::LeasedFixed => Some(secs(20)),
            Start::Breaking => Some(secs(30)),
            _ => None,
        };
        assert_eq!(time_left(&record, clock.now()), expected_left, "{start:?}");
        assert_eq!(record.id.is_some(), start != Start::Available, "{start:?}");
        if start != Start::Available {
            assert!(record.is_held_by(A), "{start:?}");
        }
    }
}
