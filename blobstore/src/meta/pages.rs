//! SQL for page blobs: their own row (sequence number, incremental-copy
//! state) and their page map (see `pages::map`).

use super::sql::{Sql, SqlRow, vals};
use std::ops::Range;

use crate::Result;
use crate::pages::map::{Edit, Run};

/// What only a page blob has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PageRow {
    pub sequence_number: u64,
    pub incremental_copy: bool,
    pub copy_destination_snapshot: Option<String>,
    /// The source an incremental-copy destination is tied to:
    /// `account/container/blob`.
    pub incremental_source: Option<String>,
    /// The source snapshot its last incremental copy copied.
    pub incremental_source_snapshot: Option<String>,
}

/// The page row of `blob_id`, if it is a page blob.
pub(crate) fn page_row(conn: &dyn Sql, blob_id: i64) -> Result<Option<PageRow>> {
    conn.query_row(
        "SELECT sequence_number, incremental_copy, copy_destination_snapshot,
                incremental_source, incremental_source_snapshot
             FROM page_blobs WHERE blob_id = ?1",
        &vals![&blob_id],
        |r| {
            Ok(PageRow {
                sequence_number: r.get::<i64>(0)? as u64,
                incremental_copy: r.get(1)?,
                copy_destination_snapshot: r.get(2)?,
                incremental_source: r.get(3)?,
                incremental_source_snapshot: r.get(4)?,
            })
        },
    )
}

/// Writes (inserting or replacing) the page row of `blob_id`.
pub(crate) fn put_page_row(conn: &dyn Sql, blob_id: i64, row: &PageRow) -> Result<()> {
    conn.execute(
        "INSERT INTO page_blobs (blob_id, sequence_number, incremental_copy,
            copy_destination_snapshot, incremental_source, incremental_source_snapshot)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (blob_id) DO UPDATE SET sequence_number = ?2, incremental_copy = ?3,
            copy_destination_snapshot = ?4, incremental_source = ?5,
            incremental_source_snapshot = ?6",
        &vals![
            &blob_id,
            row.sequence_number as i64,
            &row.incremental_copy,
            &row.copy_destination_snapshot,
            &row.incremental_source,
            &row.incremental_source_snapshot
        ],
    )?;
    Ok(())
}

fn read_run(r: &dyn SqlRow) -> Result<Run> {
    Ok(Run {
        start: r.get::<i64>(0)? as u64,
        end: r.get::<i64>(1)? as u64,
        extent: r.get(2)?,
        at: r.get::<i64>(3)? as u64,
    })
}

/// The runs of `blob_id` that intersect `window`, in order. An index range
/// scan: the run that starts before the window and reaches into it, then
/// the runs that start inside it.
pub(crate) fn runs_in(conn: &dyn Sql, blob_id: i64, window: &Range<u64>) -> Result<Vec<Run>> {
    let mut out = Vec::new();
    for_each_run(conn, blob_id, window, |run| {
        out.push(run);
        Ok(true)
    })?;
    Ok(out)
}

/// Calls `f` on each run of `blob_id` that intersects `window`, in order,
/// until it returns false: a walk that holds one run at a time.
pub(crate) fn for_each_run<F>(
    conn: &dyn Sql,
    blob_id: i64,
    window: &Range<u64>,
    mut f: F,
) -> Result<()>
where
    F: FnMut(Run) -> Result<bool>,
{
    if window.is_empty() {
        return Ok(());
    }
    let before = conn.query_row(
        "SELECT start_at, end_at, extent, extent_at FROM page_ranges
             WHERE blob_id = ?1 AND start_at < ?2 ORDER BY start_at DESC LIMIT 1",
        &vals![&blob_id, window.start as i64],
        read_run,
    )?;
    if let Some(run) = before.filter(|r| r.end > window.start)
        && !f(run)?
    {
        return Ok(());
    }
    conn.each(
        "SELECT start_at, end_at, extent, extent_at FROM page_ranges
         WHERE blob_id = ?1 AND start_at >= ?2 AND start_at < ?3 ORDER BY start_at",
        &vals![blob_id, window.start as i64, window.end as i64],
        &mut |row| f(read_run(row)?),
    )
}

/// Applies `edit` to the page map of `blob_id`.
pub(crate) fn apply_edit(conn: &dyn Sql, blob_id: i64, edit: &Edit) -> Result<()> {
    for start in &edit.removed {
        conn.execute(
            "DELETE FROM page_ranges WHERE blob_id = ?1 AND start_at = ?2",
            &vals![&blob_id, *start as i64],
        )?;
    }
    for run in &edit.added {
        conn.execute(
            "INSERT INTO page_ranges (blob_id, start_at, end_at, extent, extent_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
            &vals![
                &blob_id,
                run.start as i64,
                run.end as i64,
                &run.extent,
                run.at as i64
            ],
        )?;
    }
    Ok(())
}

/// Removes the page map and page row of `blob_id`; returns the extents
/// the map read.
pub(crate) fn take_pages(conn: &dyn Sql, blob_id: i64) -> Result<Vec<String>> {
    let extents = conn.query_map(
        "SELECT DISTINCT extent FROM page_ranges WHERE blob_id = ?1",
        &vals![&blob_id],
        |r| r.get(0),
    )?;
    conn.execute_deferred(
        "DELETE FROM page_ranges WHERE blob_id = ?1",
        &vals![&blob_id],
    )?;
    conn.execute_deferred(
        "DELETE FROM page_blobs WHERE blob_id = ?1",
        &vals![&blob_id],
    )?;
    Ok(extents)
}

/// Copies the page map and page row of `from` to `to` (a snapshot, or a
/// copy): rows only, so both read the same extents.
pub(crate) fn share_pages(conn: &dyn Sql, from: i64, to: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO page_ranges (blob_id, start_at, end_at, extent, extent_at)
         SELECT ?2, start_at, end_at, extent, extent_at FROM page_ranges WHERE blob_id = ?1",
        &vals![&from, &to],
    )?;
    conn.execute(
        "INSERT INTO page_blobs (blob_id, sequence_number, incremental_copy,
            copy_destination_snapshot, incremental_source, incremental_source_snapshot)
         SELECT ?2, sequence_number, incremental_copy, copy_destination_snapshot,
            incremental_source, incremental_source_snapshot
         FROM page_blobs WHERE blob_id = ?1",
        &vals![&from, &to],
    )?;
    Ok(())
}

/// The extents of page blobs in container `container_id` (for Delete
/// Container).
pub(crate) fn container_page_extents(conn: &dyn Sql, container_id: i64) -> Result<Vec<String>> {
    conn.query_map(
        "SELECT DISTINCT p.extent FROM page_ranges p JOIN blobs b ON b.id = p.blob_id
             WHERE b.container_id = ?1",
        &vals![&container_id],
        |r| r.get(0),
    )
}

/// Sets the size of page blob `blob_id` (a resize).
pub(crate) fn set_blob_size(conn: &dyn Sql, blob_id: i64, size: u64) -> Result<()> {
    conn.execute(
        "UPDATE blobs SET size = ?2 WHERE id = ?1",
        &vals![&blob_id, size as i64],
    )?;
    Ok(())
}

/// Makes page blob `blob_id` a plain page blob: a Copy Blob destination
/// is not an incremental copy, even when its source was one.
pub(crate) fn clear_incremental_copy(conn: &dyn Sql, blob_id: i64) -> Result<()> {
    conn.execute(
        "UPDATE page_blobs SET incremental_copy = 0, copy_destination_snapshot = NULL,
            incremental_source = NULL, incremental_source_snapshot = NULL
         WHERE blob_id = ?1",
        &vals![&blob_id],
    )?;
    Ok(())
}
