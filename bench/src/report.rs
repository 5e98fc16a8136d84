//! The side-by-side table `bench/run` prints: for each workload, the median
//! over rounds of its headline rate on the baseline (Azurite) and on the
//! candidate (Stowage), their ratio, median latencies, and each server's
//! peak RSS and CPU seconds.

use std::fmt::Write as _;

use crate::stats::Record;

/// The rate a workload is judged by, and its unit.
pub fn headline(workload: &str) -> (&'static str, fn(&Record) -> f64) {
    if workload.starts_with("list-") {
        ("entries/s", |r| r.items_per_s)
    } else if matches!(
        workload,
        "block-upload" | "put-64m" | "put-1g" | "get-large" | "copy-remote" | "copy-source-get"
    ) {
        ("MB/s", |r| r.mb_per_s)
    } else {
        ("ops/s", |r| r.ops_per_s)
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// One server's numbers for one workload.
struct Cell {
    rate: Option<f64>,
    p50_ms: Option<f64>,
    peak_rss: Option<f64>,
    cpu_s: Option<f64>,
    rounds: usize,
    failed: usize,
}

fn cell(records: &[Record], workload: &str, server: &str) -> Cell {
    let (_, rate) = headline(workload);
    let mine: Vec<&Record> = records
        .iter()
        .filter(|r| r.workload == workload && r.server == server)
        .collect();
    let ok: Vec<&&Record> = mine.iter().filter(|r| r.ok).collect();
    Cell {
        rate: median(ok.iter().map(|r| rate(r)).collect()),
        p50_ms: median(ok.iter().map(|r| r.median_ms).collect()),
        peak_rss: ok
            .iter()
            .filter_map(|r| r.server_peak_rss_mib)
            .reduce(f64::max),
        cpu_s: median(ok.iter().filter_map(|r| r.server_cpu_s).collect()),
        rounds: ok.len(),
        failed: mine.len() - ok.len(),
    }
}

fn num(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

fn rate_text(c: &Cell) -> String {
    match (c.failed, c.rounds) {
        (0, _) => num(c.rate),
        (f, 0) => format!("FAIL×{f}"),
        (f, _) => format!("{} (FAIL×{f})", num(c.rate)),
    }
}

/// The markdown table for `records`, comparing `baseline` with `candidate`
/// (the records' `server` labels). Workloads appear in first-seen order.
pub fn table(records: &[Record], baseline: &str, candidate: &str) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let (b, c) = (baseline, candidate);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| workload | unit | {b} | {c} | {c}/{b} | p50 ms {b} | p50 ms {c} \
         | peak RSS MiB {b} | peak RSS MiB {c} | CPU s {b} | CPU s {c} | rounds |"
    );
    let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for w in &workloads {
        let (unit, _) = headline(w);
        let (x, y) = (cell(records, w, b), cell(records, w, c));
        let ratio = match (x.rate, y.rate) {
            (Some(x), Some(y)) if x > 0.0 && y >= x => format!("{:.1}×", y / x),
            (Some(x), Some(y)) if x > 0.0 => format!("{:.3}×", y / x),
            _ => "—".into(),
        };
        let _ = writeln!(
            out,
            "| {w} | {unit} | {} | {} | {ratio} | {} | {} | {} | {} | {} | {} | {}/{} |",
            rate_text(&x),
            rate_text(&y),
            num(x.p50_ms),
            num(y.p50_ms),
            num(x.peak_rss),
            num(y.peak_rss),
            num(x.cpu_s),
            num(y.cpu_s),
            x.rounds + x.failed,
            y.rounds + y.failed,
        );
    }
    let peak = |server: &str| {
        num(records
            .iter()
            .filter(|r| r.server == server)
            .filter_map(|r| r.server_peak_rss_mib)
            .reduce(f64::max))
    };
    let _ = writeln!(
        out,
        "\nPeak RSS over all workloads: {b} {} MiB, {c} {} MiB.",
        peak(b),
        peak(c)
    );
    let (small, large) = (cell(records, "list-10k", c), cell(records, "list-1m", c));
    if let (Some(s), Some(l)) = (small.p50_ms, large.p50_ms) {
        let _ = writeln!(
            out,
            "{c} List Blobs page (5000 entries): {l:.1} ms over 1,000,000 blobs, \
             {s:.1} ms over 10,000 ({:.2}×; the target is at most 2×).",
            l / s
        );
    }
    for server in [b, c] {
        if let Some(line) = staged_blocks_line(records, server) {
            let _ = writeln!(out, "{line}");
        }
    }
    for r in records.iter().filter(|r| !r.ok) {
        let _ = writeln!(
            out,
            "FAILED {} on {} (round {}): {}",
            r.workload,
            r.server,
            r.round,
            r.error.as_deref().unwrap_or("?")
        );
    }
    out
}

/// One column per server in `servers` (the records' labels): for each
/// workload the median rate over rounds, the median p50 and p99 in
/// milliseconds, and the metadata database's round trips and statements
/// per operation where they were counted. Workloads in first-seen order.
pub fn columns(records: &[Record], servers: &[String]) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "| workload | unit | {} |", servers.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "--:|".repeat(servers.len()));
    for w in &workloads {
        let (unit, _) = headline(w);
        let cells: Vec<String> = servers
            .iter()
            .map(|s| {
                let c = cell(records, w, s);
                if c.rounds + c.failed == 0 {
                    return "—".into();
                }
                let ok: Vec<&Record> = records
                    .iter()
                    .filter(|r| r.workload == *w && r.server == *s && r.ok)
                    .collect();
                let p99 = median(ok.iter().map(|r| r.p99_ms).collect());
                let trips = median(ok.iter().filter_map(|r| r.db_round_trips_per_op).collect());
                let statements = median(ok.iter().filter_map(|r| r.db_statements_per_op).collect());
                let mut text = format!("{} ({} / {} ms)", rate_text(&c), num(c.p50_ms), num(p99));
                if let (Some(t), Some(n)) = (trips, statements) {
                    let _ = write!(text, " {t:.1} rt, {n:.1} st");
                }
                text
            })
            .collect();
        let _ = writeln!(out, "| {w} | {unit} | {} |", cells.join(" | "));
    }
    for r in records.iter().filter(|r| !r.ok) {
        let _ = writeln!(
            out,
            "FAILED {} on {} (round {}): {}",
            r.workload,
            r.server,
            r.round,
            r.error.as_deref().unwrap_or("?")
        );
    }
    out
}

/// `server`'s Put Block latencies with nothing and with 50,000 blocks
/// staged on the blob, side by side (medians over rounds).
fn staged_blocks_line(records: &[Record], server: &str) -> Option<String> {
    let latencies = |workload: &str| {
        let ok: Vec<&Record> = records
            .iter()
            .filter(|r| r.workload == workload && r.server == server && r.ok)
            .collect();
        Some((
            median(ok.iter().map(|r| r.median_ms).collect())?,
            median(ok.iter().map(|r| r.p99_ms).collect())?,
        ))
    };
    let (empty, full) = (latencies("put-block-0")?, latencies("put-block-50k")?);
    Some(format!(
        "{server} Put Block p50/p99: {:.2}/{:.2} ms with 0 blocks staged, \
         {:.2}/{:.2} ms with 50,000 ({:.2}× at p50).",
        empty.0,
        empty.1,
        full.0,
        full.1,
        full.0 / empty.0
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Measured, Tally};

    fn rec(workload: &str, server: &str, ops: u64, seconds: f64) -> Record {
        let tally = Tally {
            ops,
            ..Tally::default()
        };
        let m = Measured {
            seconds,
            server_peak_rss_mib: Some(ops as f64),
            ..Measured::default()
        };
        let mut r = Record::completed(workload, 32, tally, m);
        r.server = server.into();
        r
    }

    #[test]
    fn medians_ratio_and_failures() {
        let mut failed = rec("put-4k", "s", 0, 0.0);
        failed.ok = false;
        failed.error = Some("wrong bytes".into());
        let records = vec![
            rec("put-4k", "a", 100, 1.0),
            rec("put-4k", "a", 300, 1.0),
            rec("put-4k", "a", 200, 1.0),
            rec("put-4k", "s", 2000, 1.0),
            failed,
        ];
        let t = table(&records, "a", "s");
        assert!(
            t.contains("| put-4k | ops/s | 200 | 2000 (FAIL×1) | 10.0× |"),
            "{t}"
        );
        assert!(
            t.contains("FAILED put-4k on s (round 0): wrong bytes"),
            "{t}"
        );
        assert_eq!(median(vec![1.0, 4.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn one_column_per_server_with_round_trips() {
        let mut pg = rec("head", "pg", 400, 1.0);
        pg.median_ms = 1.5;
        pg.p99_ms = 9.0;
        pg.db_round_trips_per_op = Some(3.0);
        pg.db_statements_per_op = Some(4.0);
        let records = vec![rec("head", "a", 100, 1.0), pg];
        let t = columns(&records, &["a".into(), "pg".into(), "absent".into()]);
        assert!(
            t.starts_with("| workload | unit | a | pg | absent |\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "| head | ops/s | 100 (0.00 / 0.00 ms) | 400 (1.50 / 9.00 ms) 3.0 rt, 4.0 st | — |"
            ),
            "{t}"
        );
    }

    #[test]
    fn put_block_latencies_side_by_side() {
        let latency = |workload: &str, p50: f64, p99: f64| {
            let mut r = rec(workload, "s", 10, 1.0);
            r.median_ms = p50;
            r.p99_ms = p99;
            r
        };
        let records = vec![
            latency("put-block-0", 0.5, 2.0),
            latency("put-block-50k", 1.0, 3.0),
        ];
        let t = table(&records, "a", "s");
        assert!(
            t.contains(
                "s Put Block p50/p99: 0.50/2.00 ms with 0 blocks staged, \
                 1.00/3.00 ms with 50,000 (2.00× at p50)."
            ),
            "{t}"
        );
        assert!(!t.contains("a Put Block"), "{t}");
    }
}
