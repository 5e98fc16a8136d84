//! What a workload measured: latencies, counts, and the CPU time and peak
//! resident memory of the server (read from `/proc/<pid>`) and of the load
//! generator itself during the timed phase.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// What a workload's timed phase did.
#[derive(Debug, Default)]
pub struct Tally {
    /// Operations completed (what `ops_per_s` counts).
    pub ops: u64,
    /// HTTP requests sent, when an operation takes several.
    pub requests: u64,
    /// Body bytes moved (sent or received).
    pub bytes: u64,
    /// Listed entries, for listings.
    pub items: u64,
    /// One latency per operation.
    pub latencies: Vec<Duration>,
    /// Anything worth knowing beside the numbers (conflicts, retries).
    pub note: String,
}

/// One JSON line of `loadgen`'s output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The workload's name, e.g. `put-4k`.
    pub workload: String,
    /// The `--label` given (which server this was), e.g. `stowage`.
    pub server: String,
    /// The `--round` given.
    pub round: u32,
    /// Whether every check held.
    pub ok: bool,
    /// Concurrent clients.
    pub concurrency: usize,
    /// Operations completed.
    pub ops: u64,
    /// HTTP requests sent.
    pub requests: u64,
    /// Body bytes moved.
    pub bytes: u64,
    /// Listed entries (listings only).
    pub items: u64,
    /// Wall time of the timed phase.
    pub seconds: f64,
    /// Median latency of one operation, milliseconds.
    pub median_ms: f64,
    /// 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Operations per second.
    pub ops_per_s: f64,
    /// Body bytes per second, in MB (10^6 bytes).
    pub mb_per_s: f64,
    /// Listed entries per second.
    pub items_per_s: f64,
    /// The server's user+system CPU seconds during the timed phase.
    pub server_cpu_s: Option<f64>,
    /// The server's peak resident set during the timed phase, MiB.
    pub server_peak_rss_mib: Option<f64>,
    /// The load generator's own CPU seconds during the timed phase.
    pub client_cpu_s: Option<f64>,
    /// Remarks (conflicts, retries, page counts).
    pub note: String,
    /// Why the workload failed.
    pub error: Option<String>,
    /// Statements the metadata database ran per operation during the timed
    /// phase (`pg_stat_statements`; with `--db-stats`).
    #[serde(default)]
    pub db_statements_per_op: Option<f64>,
    /// Round trips to the metadata database per operation during the timed
    /// phase, from the same counts ([`DbCounts::round_trips`]).
    #[serde(default)]
    pub db_round_trips_per_op: Option<f64>,
}

/// Measures a timed phase: wall time, and CPU and peak RSS of the server
/// (when its pid is known) and of this process.
pub struct Meter {
    db: Option<String>,
    server_pid: Option<u32>,
    start: Instant,
    server_cpu: Option<f64>,
    client_cpu: Option<f64>,
}

/// What a [`Meter`] saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct Measured {
    /// Wall time.
    pub seconds: f64,
    /// Server CPU seconds.
    pub server_cpu_s: Option<f64>,
    /// Server peak RSS, MiB.
    pub server_peak_rss_mib: Option<f64>,
    /// Load generator CPU seconds.
    pub client_cpu_s: Option<f64>,
    /// What the metadata database ran (with `--db-stats`).
    pub db: Option<DbCounts>,
}

/// Statement counts of a PostgreSQL metadata database over a timed phase,
/// from `pg_stat_statements` (which counts BEGIN and COMMIT when
/// `pg_stat_statements.track_utility` is on, as in `bench/run`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DbCounts {
    /// Every statement.
    pub statements: u64,
    /// BEGIN statements.
    pub begins: u64,
    /// COMMIT statements.
    pub commits: u64,
    /// ROLLBACK statements.
    pub rollbacks: u64,
    /// Statements sent without waiting for their answers (marked
    /// `/* deferred */` by the server): their answers come with the next
    /// statement or the COMMIT.
    pub deferred: u64,
}

impl DbCounts {
    /// The round trips a server waited for, as Stowage sends statements: a
    /// transaction's BEGIN (and a write's lock) travel with its first
    /// statement, a read's COMMIT and any ROLLBACK are not waited for. So
    /// every statement is one, except BEGIN, COMMIT and ROLLBACK, plus one
    /// per committed write (its COMMIT is waited for; it took the lock,
    /// counted as a statement), minus one per rolled-back write (its lock
    /// went with its first statement), minus the deferred statements, which
    /// travel with the next statement waited for. `pg_stat_statements` does
    /// not see Parse messages: a statement prepared during the phase is one
    /// round trip more, which a warm server does not pay. It also keeps one
    /// text per statement shape: a statement sent both ways is counted as
    /// whichever it was first (Stowage sends each shape one way).
    pub fn round_trips(&self) -> u64 {
        (self.statements)
            .saturating_sub(self.begins + self.commits + 2 * self.rollbacks + self.deferred)
    }

    /// Empties the statistics of the database at `url`.
    fn reset(url: &str) -> anyhow::Result<()> {
        let mut client = postgres::Client::connect(url, postgres::NoTls)?;
        client.batch_execute("SELECT pg_stat_statements_reset()")?;
        Ok(())
    }

    /// The counts of the database at `url` since its reset.
    fn read(url: &str) -> anyhow::Result<DbCounts> {
        let mut client = postgres::Client::connect(url, postgres::NoTls)?;
        let row = client.query_one(
            "SELECT COALESCE(SUM(calls), 0)::BIGINT,
                COALESCE(SUM(calls) FILTER (WHERE query ILIKE 'BEGIN%'), 0)::BIGINT,
                COALESCE(SUM(calls) FILTER (WHERE query ILIKE 'COMMIT%'), 0)::BIGINT,
                COALESCE(SUM(calls) FILTER (WHERE query ILIKE 'ROLLBACK%'), 0)::BIGINT,
                COALESCE(SUM(calls) FILTER (WHERE query LIKE '/* deferred */%'), 0)::BIGINT
             FROM pg_stat_statements
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND query NOT ILIKE '%pg_stat_statements%'",
            &[],
        )?;
        let n = |i: usize| row.get::<_, i64>(i).max(0) as u64;
        Ok(DbCounts {
            statements: n(0),
            begins: n(1),
            commits: n(2),
            rollbacks: n(3),
            deferred: n(4),
        })
    }
}

impl Meter {
    /// Starts measuring. The server's peak RSS counter (VmHWM) is reset to
    /// its current RSS, so the peak read at the end is this phase's.
    ///
    /// With `db` (a PostgreSQL connection string), also counts the
    /// statements that database runs during the phase.
    ///
    /// # Panics
    ///
    /// When the database's statistics cannot be reset.
    pub fn start(server_pid: Option<u32>, db: Option<&str>) -> Self {
        if let Some(url) = db {
            // The synchronous client blocks: off the async workers.
            tokio::task::block_in_place(|| DbCounts::reset(url))
                .expect("resetting pg_stat_statements (--db-stats)");
        }
        if let Some(pid) = server_pid {
            // Writing 5 to clear_refs resets VmHWM (proc(5)); without the
            // right to do so the peak is the process's lifetime peak.
            let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
        }
        Self {
            db: db.map(str::to_owned),
            server_pid,
            server_cpu: server_pid.and_then(|p| cpu_seconds(&p.to_string())),
            client_cpu: cpu_seconds("self"),
            start: Instant::now(),
        }
    }

    /// Stops measuring.
    ///
    /// # Panics
    ///
    /// When the database's statistics cannot be read.
    pub fn stop(self) -> Measured {
        let seconds = self.start.elapsed().as_secs_f64();
        let db = self.db.as_deref().map(|url| {
            tokio::task::block_in_place(|| DbCounts::read(url))
                .expect("reading pg_stat_statements (--db-stats)")
        });
        let pid = self.server_pid.map(|p| p.to_string());
        let now_server = pid.as_deref().and_then(cpu_seconds);
        Measured {
            seconds,
            server_cpu_s: self.server_cpu.zip(now_server).map(|(a, b)| b - a),
            server_peak_rss_mib: pid.as_deref().and_then(peak_rss_mib),
            client_cpu_s: self.client_cpu.zip(cpu_seconds("self")).map(|(a, b)| b - a),
            db,
        }
    }
}

/// utime + stime of `/proc/<pid>/stat`, in seconds (USER_HZ is 100 on Linux).
fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; fields restart after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// VmHWM of `/proc/<pid>/status`, in MiB.
fn peak_rss_mib(pid: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The median and 99th percentile, in milliseconds (0 for no samples).
pub fn percentiles(latencies: &mut [Duration]) -> (f64, f64) {
    if latencies.is_empty() {
        return (0.0, 0.0);
    }
    latencies.sort_unstable();
    let n = latencies.len();
    let median = latencies[n / 2];
    let p99 = latencies[(n * 99).div_ceil(100).saturating_sub(1)];
    (median.as_secs_f64() * 1000.0, p99.as_secs_f64() * 1000.0)
}

impl Record {
    /// The line for a workload that completed.
    pub fn completed(workload: &str, concurrency: usize, mut tally: Tally, m: Measured) -> Self {
        let (median_ms, p99_ms) = percentiles(&mut tally.latencies);
        let per_s = |x: u64| {
            if m.seconds > 0.0 {
                x as f64 / m.seconds
            } else {
                0.0
            }
        };
        Self {
            workload: workload.to_owned(),
            server: String::new(),
            round: 0,
            ok: true,
            concurrency,
            ops: tally.ops,
            requests: tally.requests,
            bytes: tally.bytes,
            items: tally.items,
            seconds: m.seconds,
            median_ms,
            p99_ms,
            ops_per_s: per_s(tally.ops),
            mb_per_s: per_s(tally.bytes) / 1e6,
            items_per_s: per_s(tally.items),
            server_cpu_s: m.server_cpu_s,
            server_peak_rss_mib: m.server_peak_rss_mib,
            client_cpu_s: m.client_cpu_s,
            note: tally.note,
            error: None,
            db_statements_per_op: m
                .db
                .filter(|_| tally.ops > 0)
                .map(|d| d.statements as f64 / tally.ops as f64),
            db_round_trips_per_op: m
                .db
                .filter(|_| tally.ops > 0)
                .map(|d| d.round_trips() as f64 / tally.ops as f64),
        }
    }

    /// The line for a workload that failed.
    pub fn failed(workload: &str, concurrency: usize, error: &anyhow::Error) -> Self {
        let mut r = Self::completed(workload, concurrency, Tally::default(), Measured::default());
        r.ok = false;
        r.error = Some(format!("{error:#}"));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_one_to_a_hundred() {
        let mut l: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        assert_eq!(percentiles(&mut l), (51.0, 99.0));
        assert_eq!(percentiles(&mut []), (0.0, 0.0));
    }

    #[test]
    fn this_process_has_cpu_time_and_a_peak() {
        assert!(cpu_seconds("self").is_some());
        assert!(peak_rss_mib("self").unwrap() > 0.0);
    }
}
