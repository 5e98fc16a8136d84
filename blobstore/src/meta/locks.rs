//! What a write transaction locks in cluster mode (`docs/cluster.md`,
//! "Consistency"): transaction-level advisory locks in three levels, taken
//! in one order by every transaction, so that no two can wait for each
//! other.
//!
//! 1. The cluster key: shared by every scoped write, exclusive for a write
//!    that needs the whole store (the collector's sweep, admin commands,
//!    any write not given a scope).
//! 2. A container key (a hash of account and container): shared by the
//!    writes of its blobs, exclusive for the writes of the container
//!    itself (create, delete, restore, ACL, lease, metadata).
//! 3. A blob key (a hash of account, container and name; a name's
//!    snapshots and versions share it): exclusive.
//!
//! Within a level the keys are taken in ascending order, and the levels
//! have disjoint key ranges, so the order is one total order on key
//! numbers. Two names whose hashes collide share a lock: their writes are
//! serialized, which costs time, never correctness.
//!
//! SQLite ignores the scope: its single writer thread serializes writes.

/// The cluster key: "stowage!" in ASCII, as a big-endian integer (the
/// write lock every write transaction took before there were scopes).
pub(crate) const CLUSTER_KEY: i64 = i64::from_be_bytes(*b"stowage!");

/// What a write transaction locks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The whole store: the cluster key, exclusive. What a write not given
    /// a scope takes, so that nothing unaudited runs beside another write.
    #[default]
    Store,
    /// One container's own row (and what hangs off it), exclusive: every
    /// write of its blobs waits, and waits for it.
    Container { account: String, container: String },
    /// Some blobs, exclusive, each with its container shared: the blob a
    /// write changes and, for a copy, the blob it refers to.
    Blobs(Vec<BlobKey>),
}

/// A blob's name in its container and account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BlobKey {
    pub(crate) account: String,
    pub(crate) container: String,
    pub(crate) name: String,
}

/// How a key is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mode {
    Shared,
    Exclusive,
}

impl Scope {
    /// One container, exclusive.
    pub(crate) fn container(account: &str, container: &str) -> Scope {
        Scope::Container {
            account: account.to_owned(),
            container: container.to_owned(),
        }
    }

    /// One blob, exclusive (its container shared).
    pub(crate) fn blob(account: &str, container: &str, name: &str) -> Scope {
        Scope::Blobs(vec![BlobKey::new(account, container, name)])
    }

    /// Two blobs, each `(account, container, name)`, exclusive: the target
    /// of a copy and its source (their order does not matter: the keys
    /// are sorted).
    pub(crate) fn blobs(a: (&str, &str, &str), b: (&str, &str, &str)) -> Scope {
        Scope::Blobs(vec![
            BlobKey::new(a.0, a.1, a.2),
            BlobKey::new(b.0, b.1, b.2),
        ])
    }

    /// The keys to take, in the order to take them.
    pub(crate) fn keys(&self) -> Vec<(i64, Mode)> {
        match self {
            Scope::Store => vec![(CLUSTER_KEY, Mode::Exclusive)],
            Scope::Container { account, container } => vec![
                (CLUSTER_KEY, Mode::Shared),
                (container_key(account, container), Mode::Exclusive),
            ],
            Scope::Blobs(blobs) => {
                let mut containers: Vec<i64> = blobs
                    .iter()
                    .map(|b| container_key(&b.account, &b.container))
                    .collect();
                let mut names: Vec<i64> = blobs.iter().map(BlobKey::key).collect();
                for keys in [&mut containers, &mut names] {
                    keys.sort_unstable();
                    keys.dedup();
                }
                std::iter::once((CLUSTER_KEY, Mode::Shared))
                    .chain(containers.into_iter().map(|k| (k, Mode::Shared)))
                    .chain(names.into_iter().map(|k| (k, Mode::Exclusive)))
                    .collect()
            }
        }
    }

    /// The statement that takes the keys, in order, then reads the
    /// database's clock (microseconds since the epoch) once they are all
    /// granted. One statement: PostgreSQL evaluates a select list from
    /// left to right.
    pub(crate) fn lock_statement(&self) -> String {
        let mut columns: Vec<String> = self
            .keys()
            .into_iter()
            .map(|(key, mode)| match mode {
                Mode::Shared => format!("pg_advisory_xact_lock_shared({key})"),
                Mode::Exclusive => format!("pg_advisory_xact_lock({key})"),
            })
            .collect();
        columns.push(CLOCK_COLUMN.to_owned());
        format!("SELECT {}", columns.join(", "))
    }
}

/// The database's clock, read when the locks before it are granted.
pub(crate) const CLOCK_COLUMN: &str =
    "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)";

impl BlobKey {
    pub(crate) fn new(account: &str, container: &str, name: &str) -> BlobKey {
        BlobKey {
            account: account.to_owned(),
            container: container.to_owned(),
            name: name.to_owned(),
        }
    }

    fn key(&self) -> i64 {
        blob_key(&self.account, &self.container, &self.name)
    }
}

/// A container's key: in `[2^62, 2^63)`, never the cluster key.
pub(crate) fn container_key(account: &str, container: &str) -> i64 {
    let h = fnv1a(&[account, container]);
    let key = ((h >> 2) | (1 << 62)) as i64;
    if key == CLUSTER_KEY { key ^ 1 } else { key }
}

/// A blob's key: negative (the top bit set), so below every container key.
pub(crate) fn blob_key(account: &str, container: &str, name: &str) -> i64 {
    (fnv1a(&[account, container, name]) | (1 << 63)) as i64
}

/// FNV-1a, 64 bits, over the parts each followed by a zero byte (no name
/// holds one): the same on every node and every build, unlike the
/// standard library's hasher.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_key_spells_stowage() {
        assert_eq!(CLUSTER_KEY, 8319396970186106145);
    }

    #[test]
    fn keys_come_in_one_order() {
        let c = |a: &str, c: &str| container_key(a, c);
        let b = |a: &str, c: &str, n: &str| blob_key(a, c, n);
        let (s, x) = (Mode::Shared, Mode::Exclusive);
        let mut two_blobs = [b("acct", "c", "x"), b("acct", "c", "y")];
        two_blobs.sort_unstable();
        let mut two_containers = [c("acct", "c1"), c("acct", "c2")];
        two_containers.sort_unstable();
        let cases: Vec<(Scope, Vec<(i64, Mode)>)> = vec![
            (Scope::Store, vec![(CLUSTER_KEY, x)]),
            (
                Scope::container("acct", "c"),
                vec![(CLUSTER_KEY, s), (c("acct", "c"), x)],
            ),
            (
                Scope::blob("acct", "c", "x"),
                vec![
                    (CLUSTER_KEY, s),
                    (c("acct", "c"), s),
                    (b("acct", "c", "x"), x),
                ],
            ),
            // A copy y -> x and x -> y take the same keys in the same order.
            (
                Scope::blobs(("acct", "c", "y"), ("acct", "c", "x")),
                vec![
                    (CLUSTER_KEY, s),
                    (c("acct", "c"), s),
                    (two_blobs[0], x),
                    (two_blobs[1], x),
                ],
            ),
            (
                Scope::blobs(("acct", "c", "x"), ("acct", "c", "y")),
                vec![
                    (CLUSTER_KEY, s),
                    (c("acct", "c"), s),
                    (two_blobs[0], x),
                    (two_blobs[1], x),
                ],
            ),
            // A copy of a blob onto itself takes its key once.
            (
                Scope::blobs(("acct", "c", "x"), ("acct", "c", "x")),
                vec![
                    (CLUSTER_KEY, s),
                    (c("acct", "c"), s),
                    (b("acct", "c", "x"), x),
                ],
            ),
            // Across containers: both containers shared, sorted.
            (Scope::blobs(("acct", "c2", "x"), ("acct", "c1", "x")), {
                let mut names = [b("acct", "c1", "x"), b("acct", "c2", "x")];
                names.sort_unstable();
                vec![
                    (CLUSTER_KEY, s),
                    (two_containers[0], s),
                    (two_containers[1], s),
                    (names[0], x),
                    (names[1], x),
                ]
            }),
        ];
        for (scope, want) in cases {
            assert_eq!(scope.keys(), want, "{scope:?}");
            // Levels in order: the key numbers ascend after the cluster key.
            let keys = scope.keys();
            let levels: Vec<u8> = keys.iter().map(|(k, _)| level(*k)).collect();
            assert!(levels.windows(2).all(|w| w[0] <= w[1]), "{scope:?}");
        }
    }

    fn level(key: i64) -> u8 {
        if key == CLUSTER_KEY {
            0
        } else if key >= 1 << 62 {
            1
        } else {
            assert!(key < 0, "{key}");
            2
        }
    }

    #[test]
    fn keys_differ_by_every_part_and_stay_in_their_level() {
        let names = [
            ("a", "c", "x"),
            ("a", "c", "y"),
            ("a", "d", "x"),
            ("b", "c", "x"),
            // The zero byte keeps the parts apart.
            ("a", "cx", ""),
            ("ac", "x", ""),
        ];
        let mut blobs: Vec<i64> = names.iter().map(|(a, c, n)| blob_key(a, c, n)).collect();
        blobs.sort_unstable();
        blobs.dedup();
        assert_eq!(blobs.len(), names.len());
        for (a, c, n) in names {
            assert_eq!(level(blob_key(a, c, n)), 2);
            assert_eq!(level(container_key(a, c)), 1);
            assert_ne!(container_key(a, c), CLUSTER_KEY);
        }
        assert_ne!(container_key("a", "cx"), container_key("ac", "x"));
        // Stable across builds: a known value.
        assert_eq!(fnv1a(&[""]), 0xaf63_bd4c_8601_b7df);
    }

    #[test]
    fn the_lock_statement_takes_the_keys_then_reads_the_clock() {
        let c = container_key("acct", "c");
        let b = blob_key("acct", "c", "x");
        assert_eq!(
            Scope::blob("acct", "c", "x").lock_statement(),
            format!(
                "SELECT pg_advisory_xact_lock_shared({CLUSTER_KEY}), \
                 pg_advisory_xact_lock_shared({c}), pg_advisory_xact_lock({b}), {CLOCK_COLUMN}"
            )
        );
        assert_eq!(
            Scope::Store.lock_statement(),
            format!("SELECT pg_advisory_xact_lock({CLUSTER_KEY}), {CLOCK_COLUMN}")
        );
    }
}
