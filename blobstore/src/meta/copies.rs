//! SQL for copies from other hosts: the state of a copy is kept in the
//! copy columns of its destination row (status, description, progress).

use super::sql::{Sql, vals};

use crate::timestamps::to_nanos;
use crate::{CopyStatus, Result};

/// Records `progress` of the pending copy `copy_id` into row `blob_id`.
/// Returns false when that copy is no longer pending there (aborted,
/// replaced by another write): the fetch should stop.
pub(crate) fn record_copy_progress(
    conn: &dyn Sql,
    blob_id: i64,
    copy_id: &str,
    progress: &str,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE blobs SET copy_progress = ?3
             WHERE id = ?1 AND copy_id = ?2 AND copy_status = 'pending'",
        &vals![&blob_id, &copy_id, &progress],
    )?;
    Ok(n == 1)
}

/// Ends the copy of row `blob_id` without bytes: `status` (failed or
/// aborted), with `description`, at `now`.
pub(crate) fn end_copy(
    conn: &dyn Sql,
    blob_id: i64,
    status: CopyStatus,
    description: Option<&str>,
    now: std::time::SystemTime,
) -> Result<()> {
    conn.execute(
        "UPDATE blobs SET copy_status = ?2, copy_status_description = ?3,
            copy_completion_time = ?4
         WHERE id = ?1",
        &vals![&blob_id, status.as_str(), &description, to_nanos(now)],
    )?;
    Ok(())
}

/// Whether any copy is pending (read before [`fail_pending_copies`], which
/// writes).
pub(crate) fn any_pending_copy(conn: &dyn Sql) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM blobs WHERE copy_status = 'pending')",
        &[],
        |r| r.get(0),
    )?
    .ok_or_else(super::sql::no_rows)
}

/// Ends every pending copy as failed with `description` (a restart
/// interrupted them: the fetch that ran them is gone). Returns how many.
pub(crate) fn fail_pending_copies(
    conn: &dyn Sql,
    description: &str,
    now: std::time::SystemTime,
) -> Result<usize> {
    conn.execute(
        "UPDATE blobs SET copy_status = 'failed', copy_status_description = ?1,
                copy_completion_time = ?2
             WHERE copy_status = 'pending'",
        &vals![&description, to_nanos(now)],
    )
}

/// The blob row `id`, if it still exists (a copy checks its copy id on it:
/// a deleted row's id may be taken by another blob).
pub(crate) fn get_blob_by_id(conn: &dyn Sql, id: i64) -> Result<Option<super::BlobRow>> {
    conn.query_row(
        &format!(
            "SELECT {} FROM blobs WHERE id = ?1",
            super::blobs::BLOB_COLUMNS
        ),
        &vals![id],
        super::blobs::read_blob_row,
    )
}
