//! SQL for containers.

use std::time::SystemTime;

use stowage_leases::LeaseRecord;

use super::lease_columns;
use super::sql::{Sql, SqlRow, vals};
use crate::timestamps::{from_nanos, to_nanos};
use crate::{AccessPolicy, Error, Etag, Metadata, PublicAccess, Result, Versioned};

/// A container as stored.
#[derive(Clone, Debug)]
pub(crate) struct ContainerRow {
    pub id: i64,
    pub name: String,
    pub version: Versioned,
    pub metadata: Metadata,
    pub public_access: Option<PublicAccess>,
    pub default_encryption_scope: String,
    pub deny_encryption_scope_override: bool,
    pub lease: LeaseRecord,
    /// Set while the container is soft-deleted.
    pub deleted: Option<super::DeletedInfo>,
}

/// What Create Container stores.
#[derive(Clone, Debug)]
pub(crate) struct NewContainer {
    pub account: String,
    pub name: String,
    pub version: Versioned,
    pub metadata: Metadata,
    pub public_access: Option<PublicAccess>,
    pub default_encryption_scope: String,
    pub deny_encryption_scope_override: bool,
}

/// A soft-deleted container answers with the name it had (its stored
/// `name` is the key of `meta::deleted_containers`).
const SELECT: &str = "SELECT id, COALESCE(deleted_name, name), etag, last_modified, metadata,
    public_access, default_encryption_scope, deny_encryption_scope_override,
    lease_id, lease_duration, lease_expires_at, lease_break_at, lease_broken,
    deleted_version, deleted_at, purge_at
    FROM containers";

fn read_row(row: &dyn SqlRow) -> Result<ContainerRow> {
    let public: Option<String> = row.get(5)?;
    Ok(ContainerRow {
        id: row.get(0)?,
        name: row.get(1)?,
        version: Versioned {
            etag: Etag::from_stored(row.get(2)?),
            last_modified: from_nanos(row.get(3)?),
        },
        metadata: Metadata::decode(&row.get::<String>(4)?),
        public_access: public.as_deref().and_then(PublicAccess::parse),
        default_encryption_scope: row.get(6)?,
        deny_encryption_scope_override: row.get(7)?,
        lease: lease_columns::read(row, 8)?,
        deleted: super::deleted_containers::read_deleted(row, 13)?,
    })
}

pub(crate) fn get_container(
    conn: &dyn Sql,
    account: &str,
    name: &str,
) -> Result<Option<ContainerRow>> {
    conn.query_row(
        &format!("{SELECT} WHERE account = ?1 AND name = ?2"),
        &vals![account, name],
        read_row,
    )
}

/// Like [`get_container`], failing with `ContainerNotFound`.
pub(crate) fn require_container(conn: &dyn Sql, account: &str, name: &str) -> Result<ContainerRow> {
    get_container(conn, account, name)?.ok_or(Error::ContainerNotFound)
}

pub(crate) fn container_id(conn: &dyn Sql, account: &str, name: &str) -> Result<i64> {
    conn.query_value(
        "SELECT id FROM containers WHERE account = ?1 AND name = ?2",
        &vals![account, name],
    )?
    .ok_or(Error::ContainerNotFound)
}

pub(crate) fn insert_container(conn: &dyn Sql, c: &NewContainer) -> Result<()> {
    let inserted = conn.execute(
        "INSERT INTO containers (account, name, etag, last_modified, metadata, public_access,
            default_encryption_scope, deny_encryption_scope_override)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING",
        &vals![
            &c.account,
            &c.name,
            c.version.etag.as_str(),
            to_nanos(c.version.last_modified),
            &c.metadata.encode(),
            c.public_access.map(PublicAccess::as_str),
            &c.default_encryption_scope,
            c.deny_encryption_scope_override,
        ],
    )?;
    if inserted == 0 {
        return Err(Error::ContainerAlreadyExists);
    }
    Ok(())
}

pub(crate) fn update_container_metadata(
    conn: &dyn Sql,
    id: i64,
    version: &Versioned,
    metadata: &Metadata,
) -> Result<()> {
    conn.execute(
        "UPDATE containers SET etag = ?2, last_modified = ?3, metadata = ?4 WHERE id = ?1",
        &vals![
            id,
            version.etag.as_str(),
            to_nanos(version.last_modified),
            &metadata.encode()
        ],
    )?;
    Ok(())
}

pub(crate) fn update_container_lease(conn: &dyn Sql, id: i64, lease: &LeaseRecord) -> Result<()> {
    let v = lease_columns::values(lease);
    conn.execute(
        &format!(
            "UPDATE containers SET ({}) = (?2, ?3, ?4, ?5, ?6) WHERE id = ?1",
            lease_columns::COLUMNS
        ),
        &vals![id, &v.0, v.1, v.2, v.3, v.4],
    )?;
    Ok(())
}

/// The stored access policies of a container, in order.
pub(crate) fn container_policies(conn: &dyn Sql, id: i64) -> Result<Vec<AccessPolicy>> {
    conn.query_map(
        "SELECT id, start, expiry, permission FROM container_policies
         WHERE container_id = ?1 ORDER BY seq",
        &vals![id],
        |r| {
            Ok(AccessPolicy {
                id: r.get(0)?,
                start: r.get::<Option<i64>>(1)?.map(from_nanos),
                expiry: r.get::<Option<i64>>(2)?.map(from_nanos),
                permission: r.get(3)?,
            })
        },
    )
}

/// Replaces the ACL: public access, policies, and the container's version.
pub(crate) fn set_container_acl(
    conn: &dyn Sql,
    id: i64,
    version: &Versioned,
    public_access: Option<PublicAccess>,
    policies: &[AccessPolicy],
) -> Result<()> {
    conn.execute(
        "UPDATE containers SET etag = ?2, last_modified = ?3, public_access = ?4 WHERE id = ?1",
        &vals![
            id,
            version.etag.as_str(),
            to_nanos(version.last_modified),
            public_access.map(PublicAccess::as_str)
        ],
    )?;
    conn.execute(
        "DELETE FROM container_policies WHERE container_id = ?1",
        &vals![id],
    )?;
    for (seq, p) in policies.iter().enumerate() {
        conn.execute(
            "INSERT INTO container_policies (container_id, seq, id, start, expiry, permission)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            &vals![
                id,
                seq as i64,
                &p.id,
                p.start.map(to_nanos),
                p.expiry.map(to_nanos),
                &p.permission
            ],
        )?;
    }
    Ok(())
}

/// Deletes the container and everything in it; returns the extents its blobs
/// referenced, for the caller to turn into garbage where nothing else uses them.
pub(crate) fn delete_container(conn: &dyn Sql, id: i64) -> Result<Vec<String>> {
    let mut extents: Vec<String> = conn.query_map(
        "SELECT e.extent FROM blob_extents e JOIN blobs b ON b.id = e.blob_id
             WHERE b.container_id = ?1
             UNION
             SELECT k.extent FROM blocks k JOIN blobs b ON b.id = k.blob_id
             WHERE b.container_id = ?1",
        &vals![id],
        |r| r.get(0),
    )?;
    extents.extend(super::pages::container_page_extents(conn, id)?);
    conn.execute("DELETE FROM containers WHERE id = ?1", &vals![id])?;
    Ok(extents)
}

/// One page of containers after `after` (exclusive) whose names start with
/// `prefix`, at most `limit` rows, in order of their stored names (a
/// soft-deleted container, listed only with `deleted_before`, right after
/// the live container of its name; its purge time must be after that
/// instant).
pub(crate) fn list_containers(
    conn: &dyn Sql,
    account: &str,
    prefix: &str,
    after: Option<&str>,
    limit: usize,
    deleted_before: Option<SystemTime>,
) -> Result<Vec<ContainerRow>> {
    let lower = match after {
        Some(a) if a >= prefix => a.to_owned(),
        _ => String::new(),
    };
    let upper = crate::listing::successor(prefix);
    // Without `deleted_before` no purge time is late enough.
    let shown_after = deleted_before.map_or(i64::MAX, to_nanos);
    conn.query_map(
        &format!(
            "{SELECT} WHERE account = ?1 AND name >= ?2 AND name > ?3
            AND (?4 IS NULL OR name < ?4)
            AND (deleted_at IS NULL OR purge_at > ?6)
         ORDER BY name LIMIT ?5"
        ),
        &vals![account, prefix, &lower, &upper, limit as i64, shown_after],
        read_row,
    )
}
