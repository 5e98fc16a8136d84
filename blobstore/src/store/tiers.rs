//! Set Blob Tier (docs/wire/tiers.md).

use stowage_leases::{Access, LeaseId, Resource};

use super::Store;
use crate::meta;
use crate::{
    AccessTier, BlobName, ContainerName, RehydratePriority, Result, SetTier, SetTierOutcome,
};

/// Input of Set Blob Tier.
#[derive(Clone, Debug)]
pub struct SetBlobTierInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// The blob.
    pub blob: BlobName,
    /// A snapshot id, to set that snapshot's tier.
    pub snapshot: Option<String>,
    /// A version id, to set that version's tier.
    pub version_id: Option<String>,
    /// `x-ms-access-tier`.
    pub tier: AccessTier,
    /// `x-ms-rehydrate-priority`.
    pub priority: Option<RehydratePriority>,
    /// `x-ms-lease-id`.
    pub lease_id: Option<LeaseId>,
    /// `x-ms-if-tags`, evaluated against the blob's tags.
    pub if_tags: Option<crate::tags::expr::TagCondition>,
}

impl Store {
    /// Set Blob Tier: changes the tier now, or starts a rehydration that
    /// completes after the configured delay. ETag and Last-Modified stay.
    ///
    /// # Errors
    /// `ContainerNotFound`, `BlobNotFound`, lease refusals, and the refusals
    /// of [`crate::TierRecord::set`].
    pub async fn set_blob_tier(&self, input: SetBlobTierInput) -> Result<SetTierOutcome> {
        let now = self.now();
        let delay = self.inner.config.rehydrate_delay;
        let store = self.clone();
        self.blob_db(
            &input.account,
            input.container.as_str(),
            input.blob.as_str(),
        )
        .write_again(move |tx| {
            let cid = meta::container_id(tx, &input.account, input.container.as_str())?;
            let now = store.judge_now(tx, now)?;
            let row = super::blobs::require_version(
                tx,
                cid,
                &input.blob,
                input.snapshot.as_deref(),
                input.version_id.as_deref(),
                now,
            )?;
            if row.is_base() {
                stowage_leases::check(
                    &row.lease,
                    input.lease_id.as_ref(),
                    Access::Write,
                    Resource::Blob,
                    now,
                )?;
            }
            let if_tags = crate::Conditions {
                if_tags: input.if_tags.clone(),
                ..crate::Conditions::default()
            };
            super::tags::check_if_tags(tx, &if_tags, Some(row.id), crate::ConditionKind::Write)?;
            let request = SetTier {
                tier: input.tier,
                priority: input.priority,
                blob_type: row.blob_type,
                snapshot: !row.is_base(),
            };
            let (tier, outcome) = row.tier.set(request, now, delay)?;
            if tier != row.tier {
                meta::set_tier(tx, row.id, &tier)?;
            }
            Ok(outcome)
        })
        .await
    }
}
