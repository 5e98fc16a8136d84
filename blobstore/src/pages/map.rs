//! The page map of a page blob, as pure functions over sorted runs.
//!
//! A run says that the bytes `[start, end)` of the blob are the bytes at
//! `at..at + (end - start)` of one extent. Runs of one blob never overlap,
//! and are kept sorted by `start`; what no run covers reads as zeros. A
//! write adds a run and trims or splits the runs it overlaps (later writes
//! win). A clear adds a *clear run*: no extent (`extent` empty), read as
//! zeros and not listed as a page range, but remembered, because the
//! service's diff against an earlier snapshot lists every page cleared
//! since as a `ClearRange`, even one that held nothing then. A clear run's
//! `at - start` is an id of the clear that made it, so two maps that share
//! it (a snapshot taken after the clear) read it as unchanged. Nothing here reads or writes storage: the
//! metadata layer loads the runs a change touches, asks these functions
//! for the edit, and applies it.

use std::ops::Range;

/// Bytes `[start, end)` of a blob, read from `extent` at offset `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub start: u64,
    pub end: u64,
    pub extent: String,
    pub at: u64,
}

impl Run {
    /// A clear run over `range`, made by the clear with id `clear`.
    pub(crate) fn cleared(range: Range<u64>, clear: u64) -> Run {
        Run {
            start: range.start,
            end: range.end,
            extent: String::new(),
            at: range.start + clear,
        }
    }

    /// True for a clear run (zeros, no extent).
    pub(crate) fn is_clear(&self) -> bool {
        self.extent.is_empty()
    }

    /// The part of the run inside `window`, if any.
    pub(crate) fn clip(&self, window: &Range<u64>) -> Option<Run> {
        let start = self.start.max(window.start);
        let end = self.end.min(window.end);
        (start < end).then(|| Run {
            start,
            end,
            extent: self.extent.clone(),
            at: self.at + (start - self.start),
        })
    }

    /// True when byte `pos` of the blob comes from the same extent byte in
    /// both runs (the content is shared, so it is unchanged).
    fn same_source(&self, other: &Run, pos: u64) -> bool {
        self.extent == other.extent
            && self.at + (pos - self.start) == other.at + (pos - other.start)
    }
}

/// What a write or clear does to the stored runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Edit {
    /// The `start` of every run to delete.
    pub removed: Vec<u64>,
    /// The runs to insert (after the deletes).
    pub added: Vec<Run>,
    /// The extents of the deleted runs: candidates for garbage once the
    /// edit is applied (an extent still used elsewhere is kept).
    pub released: Vec<String>,
}

/// The edit that makes `range` read as `new` (a write; `None` for a clear,
/// after which it reads as zeros). `overlapping` are the stored runs that
/// intersect `range`, in order.
pub(crate) fn overwrite(overlapping: &[Run], range: Range<u64>, new: Option<Run>) -> Edit {
    let mut edit = Edit::default();
    for run in overlapping {
        if run.end <= range.start || run.start >= range.end {
            continue;
        }
        edit.removed.push(run.start);
        edit.released.push(run.extent.clone());
        if run.start < range.start {
            edit.added.push(Run {
                start: run.start,
                end: range.start,
                extent: run.extent.clone(),
                at: run.at,
            });
        }
        if run.end > range.end {
            edit.added.push(Run {
                start: range.end,
                end: run.end,
                extent: run.extent.clone(),
                at: run.at + (range.end - run.start),
            });
        }
    }
    if let Some(new) = new {
        edit.added.push(new);
    }
    edit.added.sort_by_key(|r| r.start);
    edit.released.sort();
    edit.released.dedup();
    edit
}

/// What a stretch of a diff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Written (or rewritten) since the earlier map: `<PageRange>`.
    Written,
    /// Cleared since the earlier map (whatever it held there), or written
    /// there and gone since: `<ClearRange>`.
    Cleared,
}

/// The stretches where `new` differs from `old` (both sorted, non
/// overlapping), in order, touching stretches of one kind merged. A byte
/// that both maps read from the same extent byte is unchanged: snapshots
/// share extents, so what was not written since reads the same.
pub(crate) fn diff(old: &[Run], new: &[Run]) -> Vec<(Range<u64>, Change)> {
    let mut out: Vec<(Range<u64>, Change)> = Vec::new();
    let mut push = |range: Range<u64>, change: Change| match out.last_mut() {
        Some((last, c)) if *c == change && last.end == range.start => last.end = range.end,
        _ => out.push((range, change)),
    };
    let (mut i, mut j) = (0, 0);
    let mut pos = 0u64;
    loop {
        // Skip runs that end at or before `pos`.
        while i < old.len() && old[i].end <= pos {
            i += 1;
        }
        while j < new.len() && new[j].end <= pos {
            j += 1;
        }
        let (o, n) = (old.get(i), new.get(j));
        if o.is_none() && n.is_none() {
            break;
        }
        // Where the next stretch starts: at `pos` if a run covers it.
        let start = [o, n]
            .iter()
            .flatten()
            .map(|r| r.start.max(pos))
            .min()
            .unwrap_or(pos);
        let o_here = o.filter(|r| r.start <= start);
        let n_here = n.filter(|r| r.start <= start);
        // The stretch ends where some run starts or ends.
        let mut end = u64::MAX;
        for r in [o, n].into_iter().flatten() {
            end = end.min(if r.start > start { r.start } else { r.end });
        }
        match (o_here, n_here) {
            (Some(a), Some(b)) if a.same_source(b, start) => {}
            (_, Some(b)) if b.is_clear() => push(start..end, Change::Cleared),
            (_, Some(_)) => push(start..end, Change::Written),
            (Some(a), None) if !a.is_clear() => push(start..end, Change::Cleared),
            (Some(_), None) | (None, None) => {}
        }
        pos = end;
    }
    out
}

/// One stretch of a read of a page blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stretch {
    /// Bytes of an extent (`range` relative to the extent).
    Data { extent: String, range: Range<u64> },
    /// Bytes no run covers: zeros.
    Zeros(u64),
}

/// The stretches that make up `span` of a blob whose runs inside it are
/// `runs` (sorted, already clipped or not).
pub(crate) fn layout(runs: &[Run], span: &Range<u64>) -> Vec<Stretch> {
    let mut out = Vec::new();
    let mut pos = span.start;
    for run in runs
        .iter()
        .filter(|r| !r.is_clear())
        .filter_map(|r| r.clip(span))
    {
        if run.start > pos {
            out.push(Stretch::Zeros(run.start - pos));
        }
        out.push(Stretch::Data {
            extent: run.extent,
            range: run.at..run.at + (run.end - run.start),
        });
        pos = run.end;
    }
    if pos < span.end {
        out.push(Stretch::Zeros(span.end - pos));
    }
    out
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
