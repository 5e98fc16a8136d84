//! The clock of cluster mode: the node's clock corrected by how far it is
//! from the metadata database's clock, so that the nodes of a cluster read
//! (nearly) one time for leases, Last-Modified and expiry
//! (`docs/cluster.md`, "Time").

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Clock, Result};

/// How often [`DatabaseClock::keep_measuring`] measures the offset again:
/// a node's clock that drifts or is stepped is corrected within this time.
pub const REMEASURE_EVERY: Duration = Duration::from_secs(10);

/// `inner`'s time shifted by an offset measured against the database, and
/// measured again from time to time ([`DatabaseClock::keep_measuring`]).
#[derive(Debug)]
pub struct DatabaseClock {
    inner: Arc<dyn Clock>,
    url: String,
    /// Database time minus `inner`'s time, in nanoseconds (an `i64` holds
    /// 292 years either way).
    offset_nanos: AtomicI64,
}

impl DatabaseClock {
    /// Measures the offset of `inner` from the clock of the PostgreSQL
    /// database at `url` (its `clock_timestamp()`, halfway through the
    /// query's round trip). Blocks: call it off the async runtime.
    ///
    /// # Errors
    /// The database cannot be reached.
    pub fn measure(url: &str, inner: Arc<dyn Clock>) -> Result<DatabaseClock> {
        let mut client = postgres::Client::connect(url, postgres::NoTls)?;
        let offset_nanos = AtomicI64::new(measure_offset(&mut client, inner.as_ref())?);
        Ok(DatabaseClock {
            offset_nanos,
            inner,
            url: url.to_owned(),
        })
    }

    /// Measures the offset again over `client` (a connection to the same
    /// database), so that a node whose own clock drifted or was stepped
    /// since the last measure reads the database's time again.
    ///
    /// # Errors
    /// The query fails.
    pub fn remeasure(&self, client: &mut postgres::Client) -> Result<()> {
        let offset = measure_offset(client, self.inner.as_ref())?;
        self.offset_nanos.store(offset, Ordering::Relaxed);
        Ok(())
    }

    /// Measures the offset again every `every`, on a thread of its own with
    /// a connection of its own, for as long as the clock is in use. A
    /// failed measure (the database restarting) keeps the last offset and
    /// reconnects at the next turn.
    pub fn keep_measuring(self: &Arc<Self>, every: Duration) {
        let clock = Arc::downgrade(self);
        let url = self.url.clone();
        let spawned = std::thread::Builder::new()
            .name("stowage-db-clock".into())
            .spawn(move || {
                let mut client = None;
                loop {
                    std::thread::sleep(every);
                    let Some(clock) = clock.upgrade() else { return };
                    if client.is_none() {
                        client = postgres::Client::connect(&url, postgres::NoTls).ok();
                    }
                    if let Some(c) = client.as_mut()
                        && let Err(e) = clock.remeasure(c)
                    {
                        tracing::warn!("measuring the metadata database's clock: {e}");
                        client = None;
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("the database clock is measured once only: {e}");
        }
    }

    /// How far the database's clock is ahead of the node's (negative when
    /// behind), in nanoseconds.
    pub fn offset_nanos(&self) -> i128 {
        i128::from(self.offset_nanos.load(Ordering::Relaxed))
    }
}

/// How many readings of the database's clock one measure takes; the one
/// with the shortest round trip gives the offset.
const SAMPLES: usize = 5;

/// The offset of `inner` from the clock of the database behind `client`:
/// its `clock_timestamp()`, halfway through the query's round trip. The
/// statement is prepared first (a first query's Parse would otherwise fall
/// inside the round trip and move its middle), and of [`SAMPLES`]
/// readings the one with the shortest round trip counts: its middle is the
/// closest to the instant the database read its clock. Nodes on one
/// machine, whose clocks are one, then agree to within tens of
/// microseconds, not the milliseconds a round trip takes on a loaded
/// machine.
fn measure_offset(client: &mut postgres::Client, inner: &dyn Clock) -> Result<i64> {
    let statement =
        client.prepare("SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)")?;
    let mut readings = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let before = inner.now();
        let row = client.query_one(&statement, &[])?;
        let after = inner.now();
        readings.push((row.get::<_, i64>(0), before, after));
    }
    let offset = best_offset(&readings);
    Ok(offset.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
}

/// One reading of the database's clock: its time in µs since the epoch,
/// and the local times before and after the query.
type Reading = (i64, SystemTime, SystemTime);

/// The offset given by the reading with the shortest round trip (the first
/// of equals).
fn best_offset(readings: &[Reading]) -> i128 {
    readings
        .iter()
        .min_by_key(|(_, before, after)| nanos(*after) - nanos(*before))
        .map_or(0, |&(db, before, after)| offset(db, before, after))
}

impl Clock for DatabaseClock {
    fn now(&self) -> SystemTime {
        shift(self.inner.now(), self.offset_nanos())
    }
}

fn nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// The offset of a database reading of `database_micros` (since the
/// epoch) taken between the local readings `before` and `after`.
fn offset(database_micros: i64, before: SystemTime, after: SystemTime) -> i128 {
    let local = (nanos(before) + nanos(after)) / 2;
    i128::from(database_micros) * 1000 - local
}

fn shift(t: SystemTime, offset_nanos: i128) -> SystemTime {
    let magnitude =
        Duration::from_nanos(offset_nanos.unsigned_abs().min(u128::from(u64::MAX)) as u64);
    if offset_nanos >= 0 {
        t + magnitude
    } else {
        t - magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_is_taken_at_the_middle_of_the_round_trip() {
        let at = |ms: u64| UNIX_EPOCH + Duration::from_millis(ms);
        let cases = [
            // (database µs, before, after, offset ns)
            (10_000_000, at(10_000), at(10_000), 0),
            (10_000_000, at(9_000), at(9_002), 999_000_000),
            (10_000_000, at(11_000), at(11_000), -1_000_000_000),
            (0, at(0), at(4), -2_000_000),
        ];
        for (db, before, after, want) in cases {
            assert_eq!(offset(db, before, after), want, "{db} {before:?} {after:?}");
        }
    }

    #[test]
    fn the_reading_with_the_shortest_round_trip_counts() {
        let at = |ms: u64| UNIX_EPOCH + Duration::from_millis(ms);
        let cases: [(&[Reading], i128); 4] = [
            // A slow first reading (10 ms) is off by 4 ms; the fast one is right.
            (
                &[
                    (10_006_000, at(10_000), at(10_010)),
                    (10_020_000, at(10_020), at(10_020)),
                ],
                0,
            ),
            (&[(10_000_000, at(9_000), at(9_002))], 999_000_000),
            // Equal round trips: the first.
            (&[(5_000, at(0), at(2)), (9_000, at(4), at(6))], 4_000_000),
            (&[], 0),
        ];
        for (readings, want) in cases {
            assert_eq!(best_offset(readings), want, "{readings:?}");
        }
    }

    #[test]
    fn a_shift_moves_either_way() {
        let t = UNIX_EPOCH + Duration::from_secs(100);
        assert_eq!(
            shift(t, 2_000_000_000),
            UNIX_EPOCH + Duration::from_secs(102)
        );
        assert_eq!(
            shift(t, -2_000_000_000),
            UNIX_EPOCH + Duration::from_secs(98)
        );
        assert_eq!(shift(t, 0), t);
    }

    /// Over a clock stopped in 2024, the database clock reads the
    /// database's time (this decade, not 2024's September).
    #[test]
    fn it_reads_the_database_time() {
        let pg = crate::testing::TempPostgres::start().unwrap();
        let stopped = UNIX_EPOCH + Duration::from_secs(1_725_358_507);
        let manual = Arc::new(crate::ManualClock::new(stopped));
        let clock = DatabaseClock::measure(&pg.url("postgres"), manual.clone()).unwrap();
        assert!(clock.offset_nanos() > 0);
        let read = clock.now();
        assert!(read > stopped + Duration::from_secs(86_400), "{read:?}");
        // It moves with the inner clock.
        manual.advance(Duration::from_secs(5));
        assert_eq!(clock.now(), read + Duration::from_secs(5));
    }

    /// The node's own clock jumps an hour ahead (drift, a step): until the
    /// offset is measured again the node is an hour off, then it reads the
    /// database's time again.
    #[test]
    fn a_new_measure_corrects_a_node_clock_that_moved() {
        let pg = crate::testing::TempPostgres::start().unwrap();
        let url = pg.url("postgres");
        let manual = Arc::new(crate::ManualClock::new(
            UNIX_EPOCH + Duration::from_secs(1_725_358_507),
        ));
        let clock = DatabaseClock::measure(&url, manual.clone()).unwrap();
        let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let database_now = |db: &mut postgres::Client| {
            let micros: i64 = db
                .query_one(
                    "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)",
                    &[],
                )
                .unwrap()
                .get(0);
            UNIX_EPOCH + Duration::from_micros(micros as u64)
        };
        let off = |a: SystemTime, b: SystemTime| {
            a.duration_since(b)
                .unwrap_or_else(|e| e.duration())
                .as_secs_f64()
        };
        manual.advance(Duration::from_secs(3600));
        assert!(off(clock.now(), database_now(&mut db)) > 3500.0);
        clock.remeasure(&mut db).unwrap();
        assert!(off(clock.now(), database_now(&mut db)) < 60.0);
    }
}
