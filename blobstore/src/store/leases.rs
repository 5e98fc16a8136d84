//! Lease Blob and Lease Container (docs/wire/leases.md#actions).

use stowage_leases::{ActionOutcome, LeaseAction, LeaseId, Resource};

use super::Store;
use crate::conditions::{self, ConditionKind, Conditions, Current};
use crate::meta;
use crate::{BlobName, ContainerName, Error, Result, Versioned};

/// Input of Lease Blob.
#[derive(Clone, Debug)]
pub struct LeaseBlobInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// The action with its parameters.
    pub action: LeaseAction,
    /// Conditional headers (all four).
    pub conditions: Conditions,
}

/// Input of Lease Container.
#[derive(Clone, Debug)]
pub struct LeaseContainerInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The action with its parameters.
    pub action: LeaseAction,
    /// Conditional headers (only the two date headers count).
    pub conditions: Conditions,
}

/// Output of a lease action: its outcome, and the resource's unchanged
/// ETag and Last-Modified.
#[derive(Clone, Debug)]
pub struct LeaseOutput {
    /// Lease id and lease time, as the action gives them.
    pub outcome: ActionOutcome,
    /// The resource's current ETag and Last-Modified (never changed by a lease).
    pub version: Versioned,
}

impl Store {
    /// Lease Blob: conditions, then the action, in one transaction.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, condition failures, lease refusals.
    pub async fn lease_blob(&self, input: LeaseBlobInput) -> Result<LeaseOutput> {
        let now = self.now();
        let generated = LeaseId::random();
        let store = self.clone();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again_reserved(move |tx| {
            // One statement on PostgreSQL (docs/cluster.md, "Round trips").
            let (_, row) = meta::container_and_blob(
                tx,
                &input.account,
                input.container.as_str(),
                input.blob.as_str(),
            )?;
            let now = store.judge_now(tx, now)?;
            let mut row = row.ok_or(Error::BlobNotFound)?;
            if row.committed {
                let current = Current {
                    etag: row.version.etag.as_str(),
                    last_modified: row.version.last_modified,
                };
                conditions::evaluate(&input.conditions, Some(current), ConditionKind::Write)?;
                super::tags::check_if_tags(
                    tx,
                    &input.conditions,
                    Some(row.id),
                    ConditionKind::Write,
                )?;
            }
            let (record, outcome) =
                stowage_leases::apply(&row.lease, &input.action, now, generated, Resource::Blob)?;
            row.lease = record;
            meta::update_blob_attributes(tx, &row)?;
            Ok(LeaseOutput {
                outcome,
                version: row.version,
            })
        })
        .await
    }

    /// Lease Container: date conditions, then the action, in one transaction.
    ///
    /// # Errors
    /// `ContainerNotFound`, condition failures, lease refusals.
    pub async fn lease_container(&self, input: LeaseContainerInput) -> Result<LeaseOutput> {
        let now = self.now();
        let generated = LeaseId::random();
        let store = self.clone();
        self.container_db(&input.account, input.container.as_str())
            .write_again_reserved(move |tx| {
                let row = meta::require_container(tx, &input.account, input.container.as_str())?;
                let now = store.judge_now(tx, now)?;
                let current = Current {
                    etag: row.version.etag.as_str(),
                    last_modified: row.version.last_modified,
                };
                conditions::evaluate(
                    &input.conditions,
                    Some(current),
                    ConditionKind::ContainerDates,
                )?;
                let (record, outcome) = stowage_leases::apply(
                    &row.lease,
                    &input.action,
                    now,
                    generated,
                    Resource::Container,
                )?;
                meta::update_container_lease(tx, row.id, &record)?;
                Ok(LeaseOutput {
                    outcome,
                    version: row.version,
                })
            })
            .await
    }
}
