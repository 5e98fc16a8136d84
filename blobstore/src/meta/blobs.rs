//! SQL for blob versions and their extents.

use super::sql::{Sql, SqlRow, vals};
use stowage_leases::LeaseRecord;

use super::{lease_columns, tier_columns};
use crate::timestamps::{from_nanos, to_nanos};
use crate::{
    BlobType, ContentProperties, CopyProperties, CopyStatus, Error, Etag, Metadata, Result,
    TierRecord, Versioned,
};

/// One extent of a blob version's content, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExtentRef {
    /// The extent ('' for an empty committed block, which has no object).
    pub extent: String,
    pub len: u64,
    /// The committed block this extent is, for blobs built by Put Block List.
    pub block_id: Option<String>,
}

/// A blob version as stored.
#[derive(Clone, Debug)]
pub(crate) struct BlobRow {
    pub id: i64,
    pub name: String,
    /// `None` for the base blob.
    pub snapshot: Option<String>,
    /// False for a block blob that has only uncommitted blocks.
    pub committed: bool,
    pub blob_type: BlobType,
    pub size: u64,
    pub version: Versioned,
    pub creation_time: std::time::SystemTime,
    pub content: ContentProperties,
    pub metadata: Metadata,
    pub committed_block_count: Option<u64>,
    pub tier: TierRecord,
    pub copy: Option<CopyProperties>,
    pub lease: LeaseRecord,
    /// A sealed append blob takes no more appends.
    pub sealed: bool,
    /// When Set Blob Expiry made the blob expire (base blobs only).
    pub expires_at: Option<std::time::SystemTime>,
    /// The version id of this row's content, when versioning gave it one.
    pub version_id: Option<String>,
    /// What a row outside the base blob and its live snapshots is (a
    /// previous version or a soft-deleted row); `None` for those two.
    pub hidden: Option<super::versions::Hidden>,
    /// The stored `snapshot` column: the snapshot id, or a hidden row's key
    /// (the listing key of the row, with `is_base`).
    pub key: String,
    /// When a soft-deleted row was deleted, and when it is purged.
    pub deleted: Option<(std::time::SystemTime, std::time::SystemTime)>,
}

impl BlobRow {
    /// True for the base blob (not a snapshot, previous version or
    /// soft-deleted row).
    pub(crate) fn is_base(&self) -> bool {
        self.snapshot.is_none() && self.hidden.is_none()
    }
}

/// Everything a new blob version is written with (content is in `extents`).
#[derive(Clone, Debug)]
pub(crate) struct NewBlob {
    pub name: String,
    pub snapshot: Option<String>,
    pub committed: bool,
    pub blob_type: BlobType,
    pub size: u64,
    pub version: Versioned,
    pub creation_time: std::time::SystemTime,
    pub content: ContentProperties,
    pub metadata: Metadata,
    pub committed_block_count: Option<u64>,
    pub tier: TierRecord,
    pub copy: Option<CopyProperties>,
    pub lease: LeaseRecord,
    pub extents: Vec<ExtentRef>,
    pub sealed: bool,
    /// The version id of the new content, when versioning gives it one.
    pub version_id: Option<String>,
}

pub(crate) const BLOB_COLUMNS: &str = "id, name, snapshot, committed, blob_type, size, etag,
    last_modified, creation_time, content_type, content_encoding, content_language, content_md5,
    cache_control, content_disposition, metadata, committed_block_count, access_tier,
    copy_id, copy_source, copy_progress, copy_completion_time,
    lease_id, lease_duration, lease_expires_at, lease_break_at, lease_broken, sealed,
    access_tier_changed_at, rehydrate_to, rehydrate_priority, rehydrate_done_at,
    version_id, deleted_at, purge_at, copy_status, copy_status_description, expires_at";

/// The column a new version is never written with: a new blob has no expiry
/// time (only Set Blob Expiry sets one).
const READ_ONLY_COLUMN: &str = ", expires_at";

pub(crate) fn read_blob_row(row: &dyn SqlRow) -> Result<BlobRow> {
    let key: String = row.get(2)?;
    let (snapshot, hidden) = super::versions::parse_key(key.clone());
    let blob_type: String = row.get(4)?;
    let md5: Option<Vec<u8>> = row.get(12)?;
    let deleted_at: Option<i64> = row.get(33)?;
    let purge_at: Option<i64> = row.get(34)?;
    Ok(BlobRow {
        id: row.get(0)?,
        name: row.get(1)?,
        snapshot,
        hidden,
        key,
        version_id: row.get(32)?,
        deleted: deleted_at.map(|d| (from_nanos(d), from_nanos(purge_at.unwrap_or(d)))),
        committed: row.get(3)?,
        blob_type: BlobType::parse(&blob_type)
            .ok_or_else(|| Error::Corrupt(format!("blob type {blob_type:?}")))?,
        size: row.get::<i64>(5)? as u64,
        version: Versioned {
            etag: Etag::from_stored(row.get(6)?),
            last_modified: from_nanos(row.get(7)?),
        },
        creation_time: from_nanos(row.get(8)?),
        content: ContentProperties {
            content_type: row.get(9)?,
            content_encoding: row.get(10)?,
            content_language: row.get(11)?,
            content_md5: md5,
            cache_control: row.get(13)?,
            content_disposition: row.get(14)?,
        },
        metadata: Metadata::decode(&row.get::<String>(15)?),
        committed_block_count: row.get::<Option<i64>>(16)?.map(|n| n as u64),
        tier: tier_columns::read(row, 17, 28)?,
        copy: match row.get::<Option<String>>(18)? {
            Some(id) => Some(CopyProperties {
                id,
                source: row.get(19)?,
                progress: row.get(20)?,
                completion_time: from_nanos(row.get(21)?),
                pending: false,
                status: match row.get::<Option<String>>(35)? {
                    None => CopyStatus::Success,
                    Some(s) => CopyStatus::parse(&s)
                        .ok_or_else(|| Error::Corrupt(format!("copy status {s:?}")))?,
                },
                description: row.get(36)?,
            }),
            None => None,
        },
        lease: lease_columns::read(row, 22)?,
        sealed: row.get(27)?,
        expires_at: row.get::<Option<i64>>(37)?.map(from_nanos),
    })
}

/// The six copy columns of `c` (the status is NULL for `success`, as
/// rows written before version 13 have it).
type CopyValues<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<i64>,
    Option<&'static str>,
    Option<&'a str>,
);

fn copy_values(c: &Option<CopyProperties>) -> CopyValues<'_> {
    match c {
        Some(c) => (
            Some(&c.id),
            Some(&c.source),
            Some(&c.progress),
            Some(to_nanos(c.completion_time)),
            (c.status != CopyStatus::Success).then(|| c.status.as_str()),
            c.description.as_deref(),
        ),
        None => (None, None, None, None, None, None),
    }
}

/// The base blob (`snapshot` = `None`) or one snapshot of `name`.
pub(crate) fn get_blob(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
    snapshot: Option<&str>,
) -> Result<Option<BlobRow>> {
    conn.query_row(
        &format!(
            "SELECT {BLOB_COLUMNS} FROM blobs
         WHERE container_id = ?1 AND name = ?2 AND is_base = ?3 AND snapshot = ?4"
        ),
        &vals![
            container_id,
            name,
            snapshot.is_none(),
            snapshot.unwrap_or("")
        ],
        read_blob_row,
    )
}

pub(crate) fn blob_extents(conn: &dyn Sql, blob_id: i64) -> Result<Vec<ExtentRef>> {
    conn.query_map(
        "SELECT extent, len, block_id FROM blob_extents WHERE blob_id = ?1 ORDER BY seq",
        &vals![blob_id],
        |r| {
            Ok(ExtentRef {
                extent: r.get(0)?,
                len: r.get::<i64>(1)? as u64,
                block_id: r.get(2)?,
            })
        },
    )
}

fn insert_extents(
    conn: &dyn Sql,
    blob_id: i64,
    first_seq: i64,
    extents: &[ExtentRef],
) -> Result<()> {
    for (i, e) in extents.iter().enumerate() {
        conn.execute_deferred(
            "INSERT INTO blob_extents (blob_id, seq, extent, len, block_id)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            &vals![
                &blob_id,
                first_seq + i as i64,
                &e.extent,
                e.len as i64,
                &e.block_id
            ],
        )?;
    }
    Ok(())
}

/// Appends one extent to the content of `blob_id` (Append Block). One
/// statement that finds its place itself, so nothing waits for it.
pub(crate) fn append_extent(conn: &dyn Sql, blob_id: i64, extent: &ExtentRef) -> Result<()> {
    conn.execute_deferred(
        "INSERT INTO blob_extents (blob_id, seq, extent, len, block_id)
         SELECT ?1, COALESCE(MAX(seq) + 1, 0), ?2, ?3, ?4 FROM blob_extents WHERE blob_id = ?1",
        &vals![
            &blob_id,
            &extent.extent,
            extent.len as i64,
            &extent.block_id
        ],
    )
}

/// Records the new size, block count and version of an append blob.
pub(crate) fn update_after_append(conn: &dyn Sql, row: &BlobRow) -> Result<()> {
    let lease = lease_columns::values(&row.lease);
    conn.execute_deferred(
        &format!(
            "UPDATE blobs SET size = ?2, committed_block_count = ?3, etag = ?4, last_modified = ?5,
            ({}) = (?6, ?7, ?8, ?9, ?10)
         WHERE id = ?1",
            lease_columns::COLUMNS
        ),
        &vals![
            &row.id,
            row.size as i64,
            row.committed_block_count.map(|n| n as i64),
            row.version.etag.as_str(),
            to_nanos(row.version.last_modified),
            &lease.0,
            &lease.1,
            &lease.2,
            &lease.3,
            &lease.4
        ],
    )?;
    Ok(())
}

/// Removes the content of `blob_id` (its extent list, or a page blob's
/// page map and page row) and returns the extents it read.
fn take_extents(conn: &dyn Sql, blob_id: i64) -> Result<Vec<String>> {
    let old = blob_extents(conn, blob_id)?;
    conn.execute_deferred(
        "DELETE FROM blob_extents WHERE blob_id = ?1",
        &vals![&blob_id],
    )?;
    let mut old: Vec<String> = old.into_iter().map(|e| e.extent).collect();
    old.extend(super::pages::take_pages(conn, blob_id)?);
    Ok(old)
}

/// Gives blob version `to` (which has no content yet) the content of
/// `from`, whatever its kind: the extent list, or a page blob's page map
/// and page row. Rows only: both versions read the same extents. Every
/// copy of content (snapshots, copies) goes through here, so a new kind
/// of content is shared by adding it here.
pub(crate) fn share_content(conn: &dyn Sql, from: i64, to: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO blob_extents (blob_id, seq, extent, len, block_id)
         SELECT ?2, seq, extent, len, block_id FROM blob_extents WHERE blob_id = ?1",
        &vals![&from, &to],
    )?;
    super::pages::share_pages(conn, from, to)
}

/// Inserts a new blob version and its extents.
pub(crate) fn insert_blob(conn: &dyn Sql, container_id: i64, b: &NewBlob) -> Result<i64> {
    insert_blob_as(conn, container_id, b, None)
}

/// [`insert_blob`], with the id `reserved` for it when there is one
/// (`meta::put_target`): then nothing waits for the insert's answer, and
/// the row and its extents are sent without waiting.
pub(crate) fn insert_blob_as(
    conn: &dyn Sql,
    container_id: i64,
    b: &NewBlob,
    reserved: Option<i64>,
) -> Result<i64> {
    let lease = lease_columns::values(&b.lease);
    let tier = tier_columns::values(&b.tier);
    let copy = copy_values(&b.copy);
    let insert = |id: &str, returning: &str| {
        format!(
            "INSERT INTO blobs ({id}container_id, is_base, {}) VALUES
         ({}?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
          ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, NULL, NULL,
          ?35, ?36){returning}",
            &BLOB_COLUMNS["id, ".len()..BLOB_COLUMNS.len() - READ_ONLY_COLUMN.len()],
            if id.is_empty() { "" } else { "?37, " },
        )
    };
    let mut values = vals![
        &container_id,
        b.snapshot.is_none(),
        &b.name,
        b.snapshot.as_deref().unwrap_or(""),
        &b.committed,
        b.blob_type.as_str(),
        b.size as i64,
        b.version.etag.as_str(),
        to_nanos(b.version.last_modified),
        to_nanos(b.creation_time),
        &b.content.content_type,
        &b.content.content_encoding,
        &b.content.content_language,
        b.content.content_md5.as_deref(),
        &b.content.cache_control,
        &b.content.content_disposition,
        b.metadata.encode(),
        b.committed_block_count.map(|n| n as i64),
        &tier.0,
        &copy.0,
        &copy.1,
        &copy.2,
        &copy.3,
        &lease.0,
        &lease.1,
        &lease.2,
        &lease.3,
        &lease.4,
        &b.sealed,
        &tier.1,
        &tier.2,
        &tier.3,
        &tier.4,
        &b.version_id,
        &copy.4,
        &copy.5
    ]
    .to_vec();
    let id = match reserved {
        Some(id) => {
            values.push(id.into());
            conn.execute_deferred(&insert("id, ", ""), &values)?;
            id
        }
        None => conn
            .query_row(&insert("", " RETURNING id"), &values, |r| r.get(0))?
            .ok_or_else(super::sql::no_rows)?,
    };
    insert_extents(conn, id, 0, &b.extents)?;
    Ok(id)
}

/// Replaces the base blob row `id` by `b` and returns the extents the old
/// version and the blob's uncommitted blocks referenced (all uncommitted
/// blocks are discarded by every content replacement, and so is an expiry
/// time: a rewritten blob does not expire).
pub(crate) fn replace_blob(conn: &dyn Sql, id: i64, b: &NewBlob) -> Result<Vec<String>> {
    // What the old content and the staged blocks refer to, in one
    // statement; the deletes after it wait for nothing.
    let old = conn.query_map(
        "SELECT extent FROM blob_extents WHERE blob_id = ?1
         UNION ALL SELECT DISTINCT extent FROM page_ranges WHERE blob_id = ?1
         UNION ALL SELECT extent FROM blocks WHERE blob_id = ?1",
        &vals![&id],
        |r| r.get(0),
    )?;
    for delete in [
        "DELETE FROM blob_extents WHERE blob_id = ?1",
        "DELETE FROM page_ranges WHERE blob_id = ?1",
        "DELETE FROM page_blobs WHERE blob_id = ?1",
        "DELETE FROM blocks WHERE blob_id = ?1",
        "DELETE FROM staged_counts WHERE blob_id = ?1",
    ] {
        conn.execute_deferred(delete, &vals![&id])?;
    }
    replace_attributes(conn, id, b)?;
    insert_extents(conn, id, 0, &b.extents)?;
    Ok(old)
}

/// Replaces everything of the base blob row `id` by `b` but its content
/// (a copy of a blob onto itself); returns the extents of its uncommitted
/// blocks, which are discarded.
pub(crate) fn replace_keeping_content(conn: &dyn Sql, id: i64, b: &NewBlob) -> Result<Vec<String>> {
    let old = super::blocks::take_blocks(conn, id)?;
    replace_attributes(conn, id, b)?;
    Ok(old)
}

fn replace_attributes(conn: &dyn Sql, id: i64, b: &NewBlob) -> Result<()> {
    let lease = lease_columns::values(&b.lease);
    let copy = copy_values(&b.copy);
    let tier = tier_columns::values(&b.tier);
    conn.execute_deferred(
        &format!(
            "UPDATE blobs SET committed = ?2, blob_type = ?3, size = ?4, etag = ?5,
            last_modified = ?6, content_type = ?7, content_encoding = ?8, content_language = ?9,
            content_md5 = ?10, cache_control = ?11, content_disposition = ?12, metadata = ?13,
            committed_block_count = ?14, access_tier = ?15,
            copy_id = ?16, copy_source = ?17, copy_progress = ?18, copy_completion_time = ?19,
            creation_time = ?20, sealed = ?26, version_id = ?31, expires_at = NULL,
            copy_status = ?32, copy_status_description = ?33,
            ({}) = (?21, ?22, ?23, ?24, ?25),
            ({}) = (?27, ?28, ?29, ?30)
         WHERE id = ?1",
            lease_columns::COLUMNS,
            tier_columns::CHANGE_COLUMNS,
        ),
        &vals![
            &id,
            &b.committed,
            b.blob_type.as_str(),
            b.size as i64,
            b.version.etag.as_str(),
            to_nanos(b.version.last_modified),
            &b.content.content_type,
            &b.content.content_encoding,
            &b.content.content_language,
            b.content.content_md5.as_deref(),
            &b.content.cache_control,
            &b.content.content_disposition,
            b.metadata.encode(),
            b.committed_block_count.map(|n| n as i64),
            &tier.0,
            &copy.0,
            &copy.1,
            &copy.2,
            &copy.3,
            to_nanos(b.creation_time),
            &lease.0,
            &lease.1,
            &lease.2,
            &lease.3,
            &lease.4,
            &b.sealed,
            &tier.1,
            &tier.2,
            &tier.3,
            &tier.4,
            &b.version_id,
            &copy.4,
            &copy.5
        ],
    )?;
    Ok(())
}

/// Writes the properties, metadata and lease of row `id` (content unchanged).
pub(crate) fn update_blob_attributes(conn: &dyn Sql, row: &BlobRow) -> Result<()> {
    let lease = lease_columns::values(&row.lease);
    let copy = copy_values(&row.copy);
    conn.execute_deferred(
        &format!(
            "UPDATE blobs SET etag = ?2, last_modified = ?3, content_type = ?4,
            content_encoding = ?5, content_language = ?6, content_md5 = ?7, cache_control = ?8,
            content_disposition = ?9, metadata = ?10,
            copy_id = ?11, copy_source = ?12, copy_progress = ?13, copy_completion_time = ?14,
            ({}) = (?15, ?16, ?17, ?18, ?19), version_id = ?20,
            copy_status = ?21, copy_status_description = ?22
         WHERE id = ?1",
            lease_columns::COLUMNS
        ),
        &vals![
            &row.id,
            row.version.etag.as_str(),
            to_nanos(row.version.last_modified),
            &row.content.content_type,
            &row.content.content_encoding,
            &row.content.content_language,
            row.content.content_md5.as_deref(),
            &row.content.cache_control,
            &row.content.content_disposition,
            row.metadata.encode(),
            &copy.0,
            &copy.1,
            &copy.2,
            &copy.3,
            &lease.0,
            &lease.1,
            &lease.2,
            &lease.3,
            &lease.4,
            &row.version_id,
            &copy.4,
            &copy.5
        ],
    )?;
    Ok(())
}

/// Writes the tier record of row `id` (Set Blob Tier: ETag and
/// Last-Modified stay as they are).
pub(crate) fn set_tier(conn: &dyn Sql, id: i64, tier: &TierRecord) -> Result<()> {
    let v = tier_columns::values(tier);
    conn.execute(
        &format!(
            "UPDATE blobs SET access_tier = ?2, ({}) = (?3, ?4, ?5, ?6) WHERE id = ?1",
            tier_columns::CHANGE_COLUMNS
        ),
        &vals![&id, &v.0, &v.1, &v.2, &v.3, &v.4],
    )?;
    Ok(())
}

/// Seals append blob `id` (its ETag and Last-Modified stay as they are).
pub(crate) fn seal_blob(conn: &dyn Sql, id: i64) -> Result<()> {
    conn.execute("UPDATE blobs SET sealed = 1 WHERE id = ?1", &vals![&id])?;
    Ok(())
}

/// Deletes one blob version with its uncommitted blocks; returns the
/// extents they referenced.
pub(crate) fn delete_blob_row(conn: &dyn Sql, id: i64) -> Result<Vec<String>> {
    let mut old = take_extents(conn, id)?;
    old.extend(super::blocks::take_blocks(conn, id)?);
    conn.execute("DELETE FROM blobs WHERE id = ?1", &vals![&id])?;
    Ok(old)
}

/// Deletes every snapshot of `name`; returns the extents they referenced.
pub(crate) fn delete_snapshots(
    conn: &dyn Sql,
    container_id: i64,
    name: &str,
) -> Result<Vec<String>> {
    let ids: Vec<i64> = conn.query_map(
        "SELECT id FROM blobs WHERE container_id = ?1 AND name = ?2 AND is_base = 0",
        &vals![&container_id, &name],
        |r| r.get(0),
    )?;
    let mut extents = Vec::new();
    for id in ids {
        extents.extend(delete_blob_row(conn, id)?);
    }
    Ok(extents)
}

/// Deletes base row `id` if it is an uncommitted-only blob with no blocks left.
pub(crate) fn delete_uncommitted_blob(conn: &dyn Sql, id: i64) -> Result<()> {
    conn.execute(
        "DELETE FROM blobs WHERE id = ?1 AND committed = 0
           AND NOT EXISTS (SELECT 1 FROM blocks WHERE blob_id = ?1)",
        &vals![&id],
    )?;
    Ok(())
}

/// Number of snapshots of `name`.
pub(crate) fn count_snapshots(conn: &dyn Sql, container_id: i64, name: &str) -> Result<u64> {
    let n: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM blobs WHERE container_id = ?1 AND name = ?2 AND is_base = 0",
            &vals![&container_id, &name],
            |r| r.get(0),
        )?
        .ok_or_else(super::sql::no_rows)?;
    Ok(n as u64)
}

/// The highest ETag stored anywhere (to seed the ETag generator).
pub(crate) fn highest_etag(conn: &dyn Sql) -> Result<Option<String>> {
    Ok(conn
        .query_value::<Option<String>>(
            "SELECT MAX(e) FROM (SELECT MAX(etag) AS e FROM blobs
                             UNION ALL SELECT MAX(etag) FROM containers) AS highest",
            &[],
        )?
        .flatten())
}
