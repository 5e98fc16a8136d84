//! Access tiers: Set Blob Tier, and what a blob reports about its tier
//! (docs/wire/tiers.md).

use std::time::SystemTime;

use reqwest::Method;
use reqwest::header::HeaderMap;

use crate::properties::{header, header_date};
use crate::xml::Element;
use crate::{BlobClient, Conditions, Result};

/// The tiers of a block blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessTier {
    /// Online; the account default.
    Hot,
    /// Online.
    Cool,
    /// Online.
    Cold,
    /// Offline until rehydrated.
    Archive,
}

impl AccessTier {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessTier::Hot => "Hot",
            AccessTier::Cool => "Cool",
            AccessTier::Cold => "Cold",
            AccessTier::Archive => "Archive",
        }
    }
}

/// `x-ms-rehydrate-priority` of a move out of the archive tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RehydratePriority {
    /// The default.
    Standard,
    /// Faster (at the service).
    High,
}

impl RehydratePriority {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RehydratePriority::Standard => "Standard",
            RehydratePriority::High => "High",
        }
    }
}

/// How Set Blob Tier was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetTierOutcome {
    /// `200 OK`: the tier is in effect.
    Done,
    /// `202 Accepted`: a rehydration out of the archive tier is pending.
    Pending,
}

/// The tier details of a block blob beside its tier
/// ([`crate::BlobProperties::access_tier`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TierInfo {
    /// True when no tier was set and the account default is reported.
    pub inferred: bool,
    /// When Set Blob Tier last changed the tier.
    pub change_time: Option<SystemTime>,
    /// `rehydrate-pending-to-<tier>` while a rehydration is pending.
    pub archive_status: Option<String>,
    /// The priority of a pending rehydration.
    pub rehydrate_priority: Option<String>,
}

impl TierInfo {
    /// From the headers of Get Blob Properties.
    pub(crate) fn from_headers(headers: &HeaderMap) -> TierInfo {
        TierInfo {
            inferred: header(headers, "x-ms-access-tier-inferred") == Some("true"),
            change_time: header_date(headers, "x-ms-access-tier-change-time"),
            archive_status: header(headers, "x-ms-archive-status").map(str::to_owned),
            rehydrate_priority: header(headers, "x-ms-rehydrate-priority").map(str::to_owned),
        }
    }

    /// From a listing entry's `<Properties>`.
    pub(crate) fn from_listing(p: &Element) -> TierInfo {
        TierInfo {
            inferred: p.text_of("AccessTierInferred") == Some("true"),
            change_time: p
                .text_of("AccessTierChangeTime")
                .and_then(|v| httpdate::parse_http_date(v).ok()),
            archive_status: p.non_empty("ArchiveStatus"),
            rehydrate_priority: p.non_empty("RehydratePriority"),
        }
    }
}

impl BlobClient {
    /// Set Blob Tier on this blob (or, on a snapshot client, that
    /// snapshot). Only the lease id of `conditions` is sent.
    ///
    /// # Errors
    /// `404 BlobNotFound`, `400 AccessTierNotSupportedForBlobType` (append
    /// blobs), `409 BlobBeingRehydrated` (another target while a
    /// rehydration is pending), `409 BlobArchived` (an archived snapshot
    /// moved online), lease errors.
    pub async fn set_tier(
        &self,
        tier: AccessTier,
        priority: Option<RehydratePriority>,
        conditions: &Conditions,
    ) -> Result<SetTierOutcome> {
        let request = self
            .request(Method::PUT)
            .query("comp", "tier")
            .header("x-ms-access-tier", tier.as_str())
            .header_opt("x-ms-rehydrate-priority", priority.map(|p| p.as_str()))
            .header_opt(
                "x-ms-lease-id",
                conditions.lease_id.map(|id| id.to_string()),
            );
        let response = self.pipeline.send(request).await?;
        Ok(match response.status().as_u16() {
            202 => SetTierOutcome::Pending,
            _ => SetTierOutcome::Done,
        })
    }
}
