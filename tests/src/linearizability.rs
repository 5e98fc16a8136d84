//! A linearizability checker for compare-and-set registers that can be
//! leased, in the manner of Porcupine and Knossos: given a recorded history
//! of operations (each with the instants it was invoked and answered), it
//! searches for one order of the operations that respects real time (an
//! operation answered before another was invoked comes first) and in which
//! every operation, applied to one register after the other, gives the
//! answer that was recorded.
//!
//! Keys are independent registers, so each key is checked alone (a history
//! is linearizable iff every key's sub-history is). The search is Wing and
//! Gong's depth-first search with Lowe's memo of (operations done, state)
//! pairs already explored. Every write puts a value no other write puts, so
//! a value identifies the write (and so the ETag) a reader saw: an If-Match
//! write is recorded as a compare-and-set against the value the client read
//! with that ETag.
//!
//! A register also has a blob's lease, infinite leases only (so that no
//! time is involved): acquire, renew, release and break, with the answers
//! of the service's lease table, and writes without a lease id refused
//! while the blob is leased.
//!
//! An operation whose answer never came (a timeout, a dropped connection)
//! has no return instant: it may take effect at any time after its
//! invocation, or never, and any answer is allowed for it.

use std::collections::{BTreeMap, HashSet};

/// A register's value: `None` while the blob does not exist.
pub type Value = Option<u64>;

/// A blob's lease (infinite leases: none expires, a break is immediate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lease {
    /// No lease.
    #[default]
    Available,
    /// Held with this id.
    Leased(u64),
    /// Broken; the id is still known (a release with it succeeds).
    Broken(u64),
}

/// A register's state: its value and its lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct State {
    /// The blob's content.
    pub value: Value,
    /// The blob's lease.
    pub lease: Lease,
}

impl State {
    /// `value`, not leased.
    pub fn of(value: Value) -> State {
        State {
            value,
            lease: Lease::Available,
        }
    }
}

/// What a client asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Get Blob.
    Read,
    /// Put Blob without conditions.
    Write(u64),
    /// Put Blob with `If-Match` the ETag of the version holding `expect`.
    Cas {
        /// The value the client read with the ETag it sent.
        expect: u64,
        /// The value written.
        new: u64,
    },
    /// Put Blob with `If-None-Match: *`.
    Create(u64),
    /// Lease Blob `acquire` (infinite) with this proposed id.
    Acquire(u64),
    /// Lease Blob `renew` with this id.
    Renew(u64),
    /// Lease Blob `release` with this id.
    Release(u64),
    /// Lease Blob `break` with a break period of 0.
    Break,
}

/// What the client was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A read's answer (`None`: 404).
    Read(Value),
    /// The write or lease action was applied.
    Ok,
    /// The write's condition failed (412 / 409), or the lease refused it.
    Failed,
    /// No answer: may have been applied or not.
    Unknown,
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The register (blob) it acts on.
    pub key: String,
    pub op: Op,
    pub outcome: Outcome,
    /// When it was invoked (any clock all clients share; only the order
    /// of instants matters).
    pub invoke: u64,
    /// When it was answered; `None` when it never was.
    pub ret: Option<u64>,
}

/// Why a history is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The register whose operations admit no order.
    pub key: String,
    /// How many of its operations the longest order found could place.
    pub placed: usize,
    /// How many operations the key has.
    pub total: usize,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "key {:?} is not linearizable: at most {} of its {} operations can be ordered",
            self.key, self.placed, self.total
        )
    }
}

/// What `op` does in `state`: the state after it, when it applies, or
/// `None` when it is refused (a failed condition, a lease refusing it).
fn apply(state: State, op: Op) -> Option<State> {
    let leased = matches!(state.lease, Lease::Leased(_));
    // A write without a lease id is refused on a leased blob; one that
    // succeeds forgets a broken lease.
    let write = |value: u64| {
        (!leased).then_some(State {
            value: Some(value),
            lease: Lease::Available,
        })
    };
    let exists = state.value.is_some();
    let lease = |lease: Lease| Some(State { lease, ..state });
    match op {
        Op::Read => Some(state),
        Op::Write(v) => write(v),
        Op::Cas { expect, new } if state.value == Some(expect) => write(new),
        Op::Cas { .. } => None,
        Op::Create(v) if !exists => write(v),
        Op::Create(_) => None,
        _ if !exists => None,
        Op::Acquire(id) => match state.lease {
            Lease::Available | Lease::Broken(_) => lease(Lease::Leased(id)),
            Lease::Leased(held) if held == id => Some(state),
            Lease::Leased(_) => None,
        },
        Op::Renew(id) => (state.lease == Lease::Leased(id)).then_some(state),
        Op::Release(id) => match state.lease {
            Lease::Leased(held) | Lease::Broken(held) if held == id => lease(Lease::Available),
            _ => None,
        },
        Op::Break => match state.lease {
            Lease::Available => None,
            Lease::Leased(held) => lease(Lease::Broken(held)),
            Lease::Broken(_) => Some(state),
        },
    }
}

/// The register's next state after `op` answered `outcome` in state
/// `state`, or `None` when that answer is impossible there.
pub fn step(state: State, op: Op, outcome: Outcome) -> Option<State> {
    if op == Op::Read {
        return match outcome {
            Outcome::Read(v) if v == state.value => Some(state),
            Outcome::Unknown => Some(state),
            _ => None,
        };
    }
    match (apply(state, op), outcome) {
        (Some(next), Outcome::Ok | Outcome::Unknown) => Some(next),
        (None, Outcome::Failed | Outcome::Unknown) => Some(state),
        _ => None,
    }
}

/// Checks `history`, every key starting absent.
///
/// # Errors
/// The first key (in key order) whose operations admit no linearization.
pub fn check(history: &[Operation]) -> Result<(), Violation> {
    let mut by_key: BTreeMap<&str, Vec<&Operation>> = BTreeMap::new();
    for op in history {
        by_key.entry(op.key.as_str()).or_default().push(op);
    }
    for (key, ops) in by_key {
        let mut search = Search::new(&ops);
        if !search.run(State::default()) {
            return Err(Violation {
                key: key.to_owned(),
                placed: search.deepest,
                total: ops.len(),
            });
        }
    }
    Ok(())
}

/// The search over one key's operations.
struct Search<'a> {
    ops: Vec<&'a Operation>,
    done: Vec<bool>,
    placed: usize,
    deepest: usize,
    seen: HashSet<(Vec<u64>, State)>,
}

impl<'a> Search<'a> {
    fn new(ops: &[&'a Operation]) -> Search<'a> {
        let mut ops = ops.to_vec();
        ops.sort_by_key(|o| o.invoke);
        Search {
            done: vec![false; ops.len()],
            ops,
            placed: 0,
            deepest: 0,
            seen: HashSet::new(),
        }
    }

    fn key(&self, state: State) -> (Vec<u64>, State) {
        let mut bits = vec![0u64; self.done.len().div_ceil(64)];
        for (i, d) in self.done.iter().enumerate() {
            if *d {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        (bits, state)
    }

    /// True when the operations not yet placed can all be placed after
    /// the ones placed, starting from `state`.
    fn run(&mut self, state: State) -> bool {
        if self.placed == self.ops.len() {
            return true;
        }
        if !self.seen.insert(self.key(state)) {
            return false;
        }
        // An operation may come next only if it was invoked before every
        // operation still to place was answered.
        let first_return = (0..self.ops.len())
            .filter(|&i| !self.done[i])
            .filter_map(|i| self.ops[i].ret)
            .min()
            .unwrap_or(u64::MAX);
        for i in 0..self.ops.len() {
            if self.done[i] {
                continue;
            }
            let op = self.ops[i];
            if op.invoke > first_return {
                // Sorted by invocation: none after this can come next.
                break;
            }
            let Some(next) = step(state, op.op, op.outcome) else {
                continue;
            };
            self.done[i] = true;
            self.placed += 1;
            self.deepest = self.deepest.max(self.placed);
            let ok = self.run(next);
            self.done[i] = false;
            self.placed -= 1;
            if ok {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(key: &str, op: Op, outcome: Outcome, invoke: u64, ret: u64) -> Operation {
        Operation {
            key: key.into(),
            op,
            outcome,
            invoke,
            ret: Some(ret),
        }
    }

    fn lost(key: &str, o: Op, invoke: u64) -> Operation {
        Operation {
            key: key.into(),
            op: o,
            outcome: Outcome::Unknown,
            invoke,
            ret: None,
        }
    }

    use Op::*;
    use Outcome::{Failed, Ok as Done};

    fn read(v: Value) -> Outcome {
        Outcome::Read(v)
    }

    #[test]
    fn step_follows_the_register() {
        let table: &[(Value, Op, Outcome, Option<Value>)] = &[
            (None, Read, read(None), Some(None)),
            (None, Read, read(Some(1)), None),
            (Some(1), Write(2), Done, Some(Some(2))),
            (Some(1), Write(2), Failed, None),
            (Some(1), Cas { expect: 1, new: 2 }, Done, Some(Some(2))),
            (Some(1), Cas { expect: 1, new: 2 }, Failed, None),
            (Some(3), Cas { expect: 1, new: 2 }, Failed, Some(Some(3))),
            (Some(3), Cas { expect: 1, new: 2 }, Done, None),
            (None, Cas { expect: 1, new: 2 }, Failed, Some(None)),
            (None, Create(5), Done, Some(Some(5))),
            (None, Create(5), Failed, None),
            (Some(1), Create(5), Failed, Some(Some(1))),
            (Some(1), Create(5), Done, None),
            (
                Some(1),
                Cas { expect: 1, new: 2 },
                Outcome::Unknown,
                Some(Some(2)),
            ),
            (
                Some(3),
                Cas { expect: 1, new: 2 },
                Outcome::Unknown,
                Some(Some(3)),
            ),
        ];
        for (state, o, outcome, want) in table {
            assert_eq!(
                step(State::of(*state), *o, *outcome),
                want.map(State::of),
                "{state:?} {o:?} {outcome:?}"
            );
        }
    }

    fn at(value: u64, lease: Lease) -> State {
        State {
            value: Some(value),
            lease,
        }
    }

    /// The lease table of the service (infinite leases), and writes
    /// without a lease id on a leased blob.
    #[test]
    fn step_follows_the_lease_table() {
        use Lease::{Available, Broken, Leased};
        let table: &[(State, Op, Outcome, Option<State>)] = &[
            (at(1, Available), Acquire(7), Done, Some(at(1, Leased(7)))),
            (at(1, Available), Acquire(7), Failed, None),
            (State::of(None), Acquire(7), Failed, Some(State::of(None))),
            (State::of(None), Acquire(7), Done, None),
            (at(1, Leased(7)), Acquire(7), Done, Some(at(1, Leased(7)))),
            (at(1, Leased(7)), Acquire(8), Failed, Some(at(1, Leased(7)))),
            (at(1, Leased(7)), Acquire(8), Done, None),
            (at(1, Broken(7)), Acquire(8), Done, Some(at(1, Leased(8)))),
            (at(1, Leased(7)), Renew(7), Done, Some(at(1, Leased(7)))),
            (at(1, Leased(7)), Renew(8), Failed, Some(at(1, Leased(7)))),
            (at(1, Broken(7)), Renew(7), Failed, Some(at(1, Broken(7)))),
            (at(1, Available), Renew(7), Done, None),
            (at(1, Leased(7)), Release(7), Done, Some(at(1, Available))),
            (at(1, Broken(7)), Release(7), Done, Some(at(1, Available))),
            (at(1, Leased(7)), Release(8), Failed, Some(at(1, Leased(7)))),
            (at(1, Available), Release(7), Done, None),
            (at(1, Leased(7)), Break, Done, Some(at(1, Broken(7)))),
            (at(1, Broken(7)), Break, Done, Some(at(1, Broken(7)))),
            (at(1, Available), Break, Failed, Some(at(1, Available))),
            (at(1, Available), Break, Done, None),
            (at(1, Leased(7)), Write(2), Failed, Some(at(1, Leased(7)))),
            (at(1, Leased(7)), Write(2), Done, None),
            (at(1, Broken(7)), Write(2), Done, Some(at(2, Available))),
            (
                at(1, Leased(7)),
                Cas { expect: 1, new: 2 },
                Failed,
                Some(at(1, Leased(7))),
            ),
            (
                at(1, Leased(7)),
                Read,
                read(Some(1)),
                Some(at(1, Leased(7))),
            ),
            (
                at(1, Leased(7)),
                Acquire(8),
                Outcome::Unknown,
                Some(at(1, Leased(7))),
            ),
            (
                at(1, Leased(7)),
                Release(7),
                Outcome::Unknown,
                Some(at(1, Available)),
            ),
        ];
        for (state, o, outcome, want) in table {
            assert_eq!(
                step(*state, *o, *outcome),
                *want,
                "{state:?} {o:?} {outcome:?}"
            );
        }
    }

    /// Lease histories with and without a linearization: what a store that
    /// decided lease actions outside one transaction would record.
    #[test]
    fn lease_histories_are_checked() {
        let good: Vec<(&str, Vec<Operation>)> = vec![
            (
                "two acquires race, one wins",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 10),
                    op("k", Acquire(8), Failed, 3, 9),
                    op("k", Renew(7), Done, 11, 12),
                ],
            ),
            (
                "a break lets another acquire",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 3),
                    op("k", Break, Done, 4, 5),
                    op("k", Acquire(8), Done, 6, 7),
                    op("k", Release(7), Failed, 8, 9),
                ],
            ),
            (
                "an unanswered release may have happened",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 3),
                    lost("k", Release(7), 4),
                    op("k", Write(2), Done, 5, 6),
                ],
            ),
        ];
        for (name, history) in good {
            assert_eq!(check(&history), Ok(()), "{name}");
        }
        let bad: Vec<(&str, Vec<Operation>)> = vec![
            (
                "two acquires with different ids both succeed",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 10),
                    op("k", Acquire(8), Done, 3, 9),
                ],
            ),
            (
                "a write without the lease id succeeds on a leased blob",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 3),
                    op("k", Write(2), Done, 4, 5),
                ],
            ),
            (
                "a renew succeeds after the lease was broken",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 3),
                    op("k", Break, Done, 4, 5),
                    op("k", Renew(7), Done, 6, 7),
                ],
            ),
            (
                "a released lease is renewed",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 3),
                    op("k", Release(7), Done, 4, 5),
                    op("k", Renew(7), Done, 6, 7),
                ],
            ),
            (
                "an acquire is refused on a blob nobody leased",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Failed, 2, 3),
                ],
            ),
            (
                "a break of a held lease is refused",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Acquire(7), Done, 2, 3),
                    op("k", Break, Failed, 4, 5),
                ],
            ),
        ];
        for (name, history) in bad {
            assert!(check(&history).is_err(), "{name} passed");
        }
    }

    /// Histories that have a linearization.
    #[test]
    fn linearizable_histories_pass() {
        let table: Vec<(&str, Vec<Operation>)> = vec![
            ("empty", vec![]),
            (
                "sequential",
                vec![
                    op("k", Create(1), Done, 0, 1),
                    op("k", Read, read(Some(1)), 2, 3),
                    op("k", Cas { expect: 1, new: 2 }, Done, 4, 5),
                    op("k", Cas { expect: 1, new: 3 }, Failed, 6, 7),
                    op("k", Read, read(Some(2)), 8, 9),
                ],
            ),
            (
                "overlapping writes, read sees the later order",
                vec![
                    op("k", Write(1), Done, 0, 10),
                    op("k", Write(2), Done, 1, 9),
                    op("k", Read, read(Some(1)), 11, 12),
                ],
            ),
            (
                "two creates race, one wins",
                vec![
                    op("k", Create(1), Failed, 0, 10),
                    op("k", Create(2), Done, 0, 10),
                    op("k", Read, read(Some(2)), 11, 12),
                ],
            ),
            (
                "two CAS from one read, one wins",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    op("k", Cas { expect: 1, new: 2 }, Done, 2, 10),
                    op("k", Cas { expect: 1, new: 3 }, Failed, 3, 9),
                    op("k", Read, read(Some(2)), 11, 12),
                ],
            ),
            (
                "a read concurrent with a create sees either",
                vec![
                    op("k", Create(1), Done, 0, 10),
                    op("k", Read, read(None), 1, 2),
                    op("k", Read, read(Some(1)), 3, 4),
                ],
            ),
            (
                "an unanswered CAS took effect",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    lost("k", Cas { expect: 1, new: 2 }, 2),
                    op("k", Read, read(Some(2)), 5, 6),
                ],
            ),
            (
                "an unanswered CAS did not",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    lost("k", Cas { expect: 1, new: 2 }, 2),
                    op("k", Read, read(Some(1)), 5, 6),
                ],
            ),
            (
                "keys are independent",
                vec![
                    op("a", Create(1), Done, 0, 1),
                    op("b", Create(2), Done, 0, 1),
                    op("a", Read, read(Some(1)), 2, 3),
                    op("b", Read, read(Some(2)), 2, 3),
                ],
            ),
        ];
        for (name, history) in table {
            assert_eq!(check(&history), Ok(()), "{name}");
        }
    }

    /// Histories that have none; each is what a broken store would record.
    #[test]
    fn non_linearizable_histories_are_caught() {
        let table: Vec<(&str, Vec<Operation>)> = vec![
            (
                "stale read after a completed write",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    op("k", Write(2), Done, 2, 3),
                    op("k", Read, read(Some(1)), 4, 5),
                ],
            ),
            (
                "two CAS from one read both succeed (lost update)",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    op("k", Cas { expect: 1, new: 2 }, Done, 2, 10),
                    op("k", Cas { expect: 1, new: 3 }, Done, 3, 9),
                ],
            ),
            (
                "two creates both succeed",
                vec![
                    op("k", Create(1), Done, 0, 10),
                    op("k", Create(2), Done, 1, 9),
                ],
            ),
            (
                "a create fails on a blob that does not exist",
                vec![
                    op("k", Create(1), Failed, 0, 1),
                    op("k", Read, read(None), 2, 3),
                ],
            ),
            (
                "a read goes back in time",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    op("k", Write(2), Done, 2, 20),
                    op("k", Read, read(Some(2)), 3, 4),
                    op("k", Read, read(Some(1)), 5, 6),
                ],
            ),
            (
                "a CAS fails while its value is current",
                vec![
                    op("k", Write(1), Done, 0, 1),
                    op("k", Cas { expect: 1, new: 2 }, Failed, 2, 3),
                    op("k", Read, read(Some(1)), 4, 5),
                ],
            ),
            (
                "a read sees a value never written",
                vec![op("k", Read, read(Some(9)), 0, 1)],
            ),
            (
                "only one key is broken",
                vec![
                    op("a", Create(1), Done, 0, 1),
                    op("b", Create(2), Done, 0, 1),
                    op("b", Create(3), Done, 2, 3),
                ],
            ),
        ];
        for (name, history) in table {
            assert!(check(&history).is_err(), "{name} passed");
        }
        let err = check(&[
            op("a", Create(1), Done, 0, 1),
            op("b", Create(2), Done, 0, 1),
            op("b", Create(3), Done, 2, 3),
        ])
        .unwrap_err();
        assert_eq!((err.key.as_str(), err.placed, err.total), ("b", 1, 2));
    }

    /// Many concurrent operations that do linearize are checked quickly
    /// (the memo keeps the search from exploring every interleaving).
    #[test]
    fn a_long_concurrent_history_is_checked() {
        // Eight clients in rounds: in each round all read the current value
        // concurrently, then all try a CAS from it concurrently; exactly one
        // wins each round.
        let mut history = Vec::new();
        let mut t = 0;
        let mut value = 0;
        history.push(op("k", Write(0), Done, t, t + 1));
        t += 2;
        for round in 1..=40u64 {
            for _ in 0..8 {
                history.push(op("k", Read, read(Some(value)), t, t + 8));
            }
            t += 10;
            for c in 0..8u64 {
                let new = round * 100 + c;
                let outcome = if c == round % 8 { Done } else { Failed };
                history.push(op("k", Cas { expect: value, new }, outcome, t + c, t + 20));
            }
            value = round * 100 + round % 8;
            t += 30;
        }
        assert_eq!(check(&history), Ok(()));
        // The same with two winners in one round is caught.
        let i = history
            .iter()
            .position(|o| o.outcome == Failed)
            .expect("a failed CAS");
        history[i].outcome = Done;
        assert!(check(&history).is_err());
    }
}
