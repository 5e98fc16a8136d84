//! The clock of cluster mode: the node's clock corrected by how far it is
//! from the metadata database's clock, so that the nodes of a cluster read
//! (nearly) one time for leases, Last-Modified and expiry
//! (`docs/cluster.md`, "Time").

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::{Clock, Result};

/// `inner`'s time shifted by a fixed offset measured against the database.
#[derive(Debug)]
pub struct DatabaseClock {
    inner: Arc<dyn Clock>,
    /// Database time minus `inner`'s time, in nanoseconds.
    offset_nanos: i128,
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
        let before = inner.now();
        let row = client.query_one(
            "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)",
            &[],
        )?;
        let after = inner.now();
        let database_micros: i64 = row.get(0);
        Ok(DatabaseClock {
            offset_nanos: offset(database_micros, before, after),
            inner,
        })
    }

    /// How far the database's clock is ahead of the node's (negative when
    /// behind), in nanoseconds.
    pub fn offset_nanos(&self) -> i128 {
        self.offset_nanos
    }
}

impl Clock for DatabaseClock {
    fn now(&self) -> SystemTime {
        shift(self.inner.now(), self.offset_nanos)
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
}
