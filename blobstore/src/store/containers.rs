//! Container operations (docs/wire/containers.md).

use crate::meta::sql::Sql;
use std::time::Duration;

use stowage_leases::{Access, LeaseId, Resource};

use super::{Store, container_properties};
use crate::conditions::{self, ConditionKind, Conditions, Current};
use crate::meta::{self, ContainerRow, NewContainer};
use crate::{
    AccessPolicy, ContainerAcl, ContainerName, ContainerProperties, Metadata, PublicAccess, Result,
    Versioned,
};

/// Input of Create Container.
#[derive(Clone, Debug)]
pub struct CreateContainerInput {
    /// The account.
    pub account: String,
    /// The new container's name.
    pub container: ContainerName,
    /// Its metadata.
    pub metadata: Metadata,
    /// Its public access level.
    pub public_access: Option<PublicAccess>,
    /// `x-ms-default-encryption-scope`; stored and echoed, no effect.
    pub default_encryption_scope: Option<String>,
    /// `x-ms-deny-encryption-scope-override`; stored and echoed, no effect.
    pub deny_encryption_scope_override: bool,
}

/// Input of Set Container Metadata.
#[derive(Clone, Debug)]
pub struct SetContainerMetadataInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The new metadata (replaces the old set).
    pub metadata: Metadata,
    /// Conditional headers (only If-Modified-Since counts).
    pub conditions: Conditions,
    /// `x-ms-lease-id`, checked when sent.
    pub lease_id: Option<LeaseId>,
}

/// Input of Delete Container.
#[derive(Clone, Debug)]
pub struct DeleteContainerInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// Conditional headers (only the two date headers count).
    pub conditions: Conditions,
    /// `x-ms-lease-id`, required while the container is leased.
    pub lease_id: Option<LeaseId>,
    /// How long the container stays restorable (container soft delete);
    /// `None` deletes it for good at once.
    pub retention: Option<Duration>,
}

/// Input of Restore Container.
#[derive(Clone, Debug)]
pub struct RestoreContainerInput {
    /// The account.
    pub account: String,
    /// The name to restore the container as (the request's path).
    pub container: ContainerName,
    /// `x-ms-deleted-container-name`: the name the container had.
    pub deleted_name: ContainerName,
    /// `x-ms-deleted-container-version`: which deletion of that name.
    pub deleted_version: String,
}

/// Input of Set Container ACL.
#[derive(Clone, Debug)]
pub struct SetContainerAclInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The new public access level (`None`: private).
    pub public_access: Option<PublicAccess>,
    /// The new stored access policies (replace the old ones).
    pub policies: Vec<AccessPolicy>,
    /// Conditional headers (only the two date headers count).
    pub conditions: Conditions,
    /// `x-ms-lease-id`, checked when sent.
    pub lease_id: Option<LeaseId>,
}

/// The default encryption scope the service reports.
const ACCOUNT_ENCRYPTION_KEY: &str = "$account-encryption-key";

fn current(row: &ContainerRow) -> Current<'_> {
    Current {
        etag: row.version.etag.as_str(),
        last_modified: row.version.last_modified,
    }
}

/// The checks of a container write, in its transaction and in the spec's
/// order: the container exists, the conditions of `kind` hold, and the lease
/// rule of `access` allows the presented id. Also returns the time the
/// write judges by ([`Store::judge_now`] of `now`).
fn checked_container(
    tx: &dyn Sql,
    (account, container): (&str, &ContainerName),
    conds: &Conditions,
    kind: ConditionKind,
    (lease_id, access): (Option<&LeaseId>, Access),
    (store, now): (&Store, std::time::SystemTime),
) -> Result<(ContainerRow, std::time::SystemTime)> {
    let row = meta::require_container(tx, account, container.as_str())?;
    let now = store.judge_now(tx, now)?;
    conditions::evaluate(conds, Some(current(&row)), kind)?;
    stowage_leases::check(&row.lease, lease_id, access, Resource::Container, now)?;
    Ok((row, now))
}

impl Store {
    /// Create Container.
    ///
    /// # Errors
    /// `ContainerAlreadyExists`; database failures.
    pub async fn create_container(&self, input: CreateContainerInput) -> Result<Versioned> {
        let now = self.now();
        let version = Versioned {
            etag: self.inner.etags.next(now),
            last_modified: now,
        };
        let new = NewContainer {
            account: input.account,
            name: input.container.as_str().to_owned(),
            version: version.clone(),
            metadata: input.metadata,
            public_access: input.public_access,
            default_encryption_scope: input
                .default_encryption_scope
                .unwrap_or_else(|| ACCOUNT_ENCRYPTION_KEY.to_owned()),
            deny_encryption_scope_override: input.deny_encryption_scope_override,
        };
        self.container_db(&new.account, &new.name)
            .write_again(move |tx| meta::insert_container(tx, &new))
            .await?;
        Ok(version)
    }

    /// Get Container Properties (also Get Container Metadata): checks a
    /// presented lease id with the read rule of docs/wire/leases.md#leased-containers.
    ///
    /// # Errors
    /// `ContainerNotFound`; lease refusals; database failures.
    pub async fn get_container_properties(
        &self,
        account: &str,
        container: &ContainerName,
        lease_id: Option<LeaseId>,
    ) -> Result<ContainerProperties> {
        let now = self.now();
        let (account, name) = (account.to_owned(), container.as_str().to_owned());
        self.inner
            .db
            .read_now(move |conn| {
                let row = meta::require_container(conn, &account, &name)?;
                stowage_leases::check(
                    &row.lease,
                    lease_id.as_ref(),
                    Access::Read,
                    Resource::Container,
                    now,
                )?;
                Ok(container_properties(row, now))
            })
            .await
    }

    /// Set Container Metadata.
    ///
    /// # Errors
    /// `ContainerNotFound`, `ConditionNotMet`, lease refusals, database failures.
    pub async fn set_container_metadata(
        &self,
        input: SetContainerMetadataInput,
    ) -> Result<Versioned> {
        let now = self.now();
        let store = self.clone();
        self.container_db(&input.account, input.container.as_str())
            .write_again(move |tx| {
                let (row, now) = checked_container(
                    tx,
                    (&input.account, &input.container),
                    &input.conditions,
                    ConditionKind::ContainerModifiedSince,
                    (input.lease_id.as_ref(), Access::Read),
                    (&store, now),
                )?;
                let version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                meta::update_container_metadata(tx, row.id, &version, &input.metadata)?;
                Ok(version)
            })
            .await
    }

    /// Get Container ACL.
    ///
    /// # Errors
    /// `ContainerNotFound`, lease refusals.
    pub async fn get_container_acl(
        &self,
        account: &str,
        container: &ContainerName,
        lease_id: Option<LeaseId>,
    ) -> Result<ContainerAcl> {
        let now = self.now();
        let (account, name) = (account.to_owned(), container.as_str().to_owned());
        self.inner
            .db
            .call(move |conn| {
                let row = meta::require_container(conn, &account, &name)?;
                stowage_leases::check(
                    &row.lease,
                    lease_id.as_ref(),
                    Access::Read,
                    Resource::Container,
                    now,
                )?;
                Ok(ContainerAcl {
                    public_access: row.public_access,
                    policies: meta::container_policies(conn, row.id)?,
                    version: row.version,
                })
            })
            .await
    }

    /// Set Container ACL: replaces the public access level and the policies.
    ///
    /// # Errors
    /// `ContainerNotFound`, `ConditionNotMet`, lease refusals.
    pub async fn set_container_acl(&self, input: SetContainerAclInput) -> Result<Versioned> {
        let now = self.now();
        let store = self.clone();
        self.container_db(&input.account, input.container.as_str())
            .write_again(move |tx| {
                let (row, now) = checked_container(
                    tx,
                    (&input.account, &input.container),
                    &input.conditions,
                    ConditionKind::ContainerDates,
                    (input.lease_id.as_ref(), Access::Read),
                    (&store, now),
                )?;
                let version = Versioned {
                    etag: store.inner.etags.next(now),
                    last_modified: now,
                };
                meta::set_container_acl(
                    tx,
                    row.id,
                    &version,
                    input.public_access,
                    &input.policies,
                )?;
                Ok(version)
            })
            .await
    }

    /// Delete Container: the container, its blobs, snapshots and blocks;
    /// with a retention, the container is soft-deleted instead and stays
    /// restorable until the retention has passed
    /// (docs/wire/containers.md#container-soft-delete).
    ///
    /// # Errors
    /// `ContainerNotFound`, `ConditionNotMet`, lease refusals, database failures.
    pub async fn delete_container(&self, input: DeleteContainerInput) -> Result<()> {
        let now = self.now();
        let store = self.clone();
        self.container_db(&input.account, input.container.as_str())
            .write_again_reserved(move |tx| {
                let (row, now) = checked_container(
                    tx,
                    (&input.account, &input.container),
                    &input.conditions,
                    ConditionKind::ContainerDates,
                    (input.lease_id.as_ref(), Access::Write),
                    (&store, now),
                )?;
                if let Some(retention) = input.retention {
                    // The ETag sequence is unique and increasing, so each
                    // deletion of a name gets a version of its own.
                    let etag = store.inner.etags.next(now);
                    let info = meta::DeletedInfo {
                        version: etag.as_str().trim_start_matches("0x").to_owned(),
                        deleted_at: now,
                        purge_at: now + retention,
                    };
                    return meta::soft_delete_container(tx, row.id, &row.name, &info);
                }
                let extents = meta::delete_container(tx, row.id)?;
                meta::collect_unreferenced(tx, &extents, now)
            })
            .await
    }

    /// Restore Container: brings a soft-deleted container back, with its
    /// blobs, metadata and ACL, under the name of the request
    /// (docs/wire/containers.md#restore-container).
    ///
    /// # Errors
    /// `ContainerAlreadyExists` when a live container has that name;
    /// `ContainerNotFound` when no soft-deleted container has the name and
    /// version given, or its retention has passed; database failures.
    pub async fn restore_container(&self, input: RestoreContainerInput) -> Result<()> {
        let now = self.now();
        // The whole store: it changes two names (the deleted container's
        // and the one it takes), and two restores of one deleted container
        // under two names must not both succeed.
        self.inner
            .db
            .write_again(move |tx| {
                let account = input.account.as_str();
                let deleted = meta::find_deleted_container(
                    tx,
                    account,
                    input.deleted_name.as_str(),
                    &input.deleted_version,
                )?;
                let id = match deleted {
                    Some((id, purge_at)) if purge_at > now => id,
                    _ => return Err(crate::Error::ContainerNotFound),
                };
                if meta::get_container(tx, account, input.container.as_str())?.is_some() {
                    return Err(crate::Error::ContainerAlreadyExists);
                }
                meta::restore_container(tx, id, account, input.container.as_str())
            })
            .await
    }

    /// Purges up to `limit` soft-deleted containers whose retention has
    /// passed at `now`, with everything in them; returns how many.
    pub(crate) async fn purge_deleted_containers(
        &self,
        now: std::time::SystemTime,
        limit: usize,
    ) -> Result<usize> {
        self.inner
            .db
            .write_again_reserved(move |tx| {
                let due = meta::containers_due_for_purge(tx, now, limit)?;
                for &id in &due {
                    let extents = meta::delete_container(tx, id)?;
                    meta::collect_unreferenced(tx, &extents, now)?;
                }
                Ok(due.len())
            })
            .await
    }
}
