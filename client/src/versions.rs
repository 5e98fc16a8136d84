//! Blob versions and blob soft delete (docs/wire/versions.md): Undelete
//! Blob, permanent deletes of a soft-deleted snapshot or version, and the
//! blob service's `DeleteRetentionPolicy`. Reading, deleting and copying a
//! version go through [`BlobClient::with_version`]; listings take
//! [`ListBlobsOptions::with_versions`](crate::ListBlobsOptions::with_versions)
//! and [`with_deleted`](crate::ListBlobsOptions::with_deleted).

use bytes::Bytes;
use reqwest::Method;

use crate::pipeline::Request;
use crate::properties::header;
use crate::service::transport;
use crate::xml::Element;
use crate::{BlobClient, BlobServiceClient, Conditions, Error, Result};

/// The blob service's soft-delete setting (`<DeleteRetentionPolicy>` of
/// Get/Set Blob Service Properties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeleteRetentionPolicy {
    /// Whether deleted blobs, snapshots and versions are kept.
    pub enabled: bool,
    /// How many days they are kept (1 to 365; required when enabled).
    pub days: Option<u32>,
    /// Whether `deletetype=permanent` may delete a soft-deleted snapshot or
    /// version before its retention ends.
    pub allow_permanent_delete: bool,
}

impl DeleteRetentionPolicy {
    /// Soft delete on, keeping what is deleted for `days`.
    pub fn days(days: u32) -> DeleteRetentionPolicy {
        DeleteRetentionPolicy {
            enabled: true,
            days: Some(days),
            allow_permanent_delete: false,
        }
    }

    /// Soft delete off.
    pub fn disabled() -> DeleteRetentionPolicy {
        DeleteRetentionPolicy::default()
    }

    /// Allows permanent deletes of soft-deleted snapshots and versions.
    pub fn with_permanent_delete(mut self) -> DeleteRetentionPolicy {
        self.allow_permanent_delete = true;
        self
    }

    fn from_element(e: &Element) -> DeleteRetentionPolicy {
        DeleteRetentionPolicy {
            enabled: e.text_of("Enabled").map(str::trim) == Some("true"),
            days: e.text_of("Days").and_then(|d| d.trim().parse().ok()),
            allow_permanent_delete: e.text_of("AllowPermanentDelete").map(str::trim)
                == Some("true"),
        }
    }

    /// The Set Blob Service Properties body that changes this policy only
    /// (elements left out keep their values).
    fn to_xml(self) -> String {
        let days = self
            .days
            .map(|d| format!("<Days>{d}</Days>"))
            .unwrap_or_default();
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>\
             <DeleteRetentionPolicy><Enabled>{}</Enabled>{days}\
             <AllowPermanentDelete>{}</AllowPermanentDelete></DeleteRetentionPolicy>\
             </StorageServiceProperties>",
            self.enabled, self.allow_permanent_delete
        )
    }
}

impl BlobServiceClient {
    /// The blob service's `DeleteRetentionPolicy` (Get Blob Service
    /// Properties); disabled when the answer has none.
    ///
    /// # Errors
    /// Service and transport errors.
    pub async fn delete_retention_policy(&self) -> Result<DeleteRetentionPolicy> {
        let request = Request::new(Method::GET, "/".to_owned())
            .query("restype", "service")
            .query("comp", "properties");
        let response = self.pipeline.send(request).await?;
        let text = response.text().await.map_err(transport)?;
        let root = crate::xml::parse(&text)?;
        if root.name != "StorageServiceProperties" {
            return Err(Error::InvalidResponse(format!(
                "expected StorageServiceProperties, got {}",
                root.name
            )));
        }
        Ok(root
            .child("DeleteRetentionPolicy")
            .map(DeleteRetentionPolicy::from_element)
            .unwrap_or_default())
    }

    /// Set Blob Service Properties with only `policy`: the other service
    /// properties (logging, metrics, CORS, …) are left as they are.
    ///
    /// # Errors
    /// `400 InvalidXmlNodeValue` for an enabled policy without `days` or
    /// with `days` outside 1..=365.
    pub async fn set_delete_retention_policy(&self, policy: &DeleteRetentionPolicy) -> Result<()> {
        let request = Request::new(Method::PUT, "/".to_owned())
            .query("restype", "service")
            .query("comp", "properties")
            .header("content-type", "application/xml")
            .body(Bytes::from(policy.to_xml()));
        self.pipeline.send(request).await?;
        Ok(())
    }
}

impl BlobClient {
    /// Undelete Blob: restores what is soft-deleted under this name
    /// (snapshots, previous versions, and the blob when versioning was off).
    ///
    /// # Errors
    /// `404 BlobNotFound` when the name has neither a blob nor anything
    /// soft-deleted.
    pub async fn undelete(&self) -> Result<()> {
        let request = self.base_request(Method::PUT).query("comp", "undelete");
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// Deletes this snapshot or version at once, soft-deleted or not
    /// (`deletetype=permanent`), when the service's policy allows permanent
    /// deletes. Returns whether the service deleted it permanently
    /// (`x-ms-delete-type-permanent`).
    ///
    /// # Errors
    /// `409 OperationNotAllowed` on the base blob or when the policy does
    /// not allow it; `404 BlobNotFound`.
    pub async fn delete_permanently(&self, conditions: &Conditions) -> Result<bool> {
        let request = conditions
            .apply(self.request(Method::DELETE))
            .query("deletetype", "permanent");
        let response = self.pipeline.send(request).await?;
        Ok(header(response.headers(), "x-ms-delete-type-permanent") != Some("false"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_reads_and_writes_its_elements() {
        let policy = DeleteRetentionPolicy::days(7).with_permanent_delete();
        let xml = policy.to_xml();
        assert!(xml.contains(
            "<DeleteRetentionPolicy><Enabled>true</Enabled><Days>7</Days>\
             <AllowPermanentDelete>true</AllowPermanentDelete></DeleteRetentionPolicy>"
        ));
        let root = crate::xml::parse(&xml).unwrap();
        let back =
            DeleteRetentionPolicy::from_element(root.child("DeleteRetentionPolicy").unwrap());
        assert_eq!(back, policy);
        let off = DeleteRetentionPolicy::disabled().to_xml();
        assert!(off.contains("<Enabled>false</Enabled><AllowPermanentDelete>"));
    }
}
