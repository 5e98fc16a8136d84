//! Container soft delete and Set Blob Expiry: listing deleted containers,
//! Restore Container, and a blob's expiry time
//! (docs/wire/containers.md#container-soft-delete, docs/wire/expiry.md).

use std::time::{Duration, SystemTime};

use reqwest::Method;

use crate::pipeline::{Request, encode_path};
use crate::properties::header_date;
use crate::service::transport;
use crate::xml::Element;
use crate::{BlobClient, BlobServiceClient, Conditions, ContainerClient, Result};

/// A soft-deleted container, as List Containers `include=deleted` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedContainer {
    /// The name it had.
    pub name: String,
    /// Which deletion of that name (for [`BlobServiceClient::restore_container`]).
    pub version: String,
    /// When it was deleted.
    pub deleted_time: Option<SystemTime>,
    /// Days left before it is removed for good.
    pub remaining_retention_days: Option<u32>,
}

impl DeletedContainer {
    fn from_listing(e: &Element) -> Option<DeletedContainer> {
        if e.text_of("Deleted") != Some("true") {
            return None;
        }
        let p = e.child("Properties");
        Some(DeletedContainer {
            name: e.text_of("Name").unwrap_or_default().to_owned(),
            version: e.text_of("Version").unwrap_or_default().to_owned(),
            deleted_time: p
                .and_then(|p| p.text_of("DeletedTime"))
                .and_then(|v| httpdate::parse_http_date(v).ok()),
            remaining_retention_days: p
                .and_then(|p| p.text_of("RemainingRetentionDays"))
                .and_then(|v| v.parse().ok()),
        })
    }
}

/// When a blob expires (`x-ms-expiry-option` with its `x-ms-expiry-time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobExpiry {
    /// Clears the expiry time.
    NeverExpire,
    /// This long after the blob's creation (whole milliseconds).
    RelativeToCreation(Duration),
    /// This long after the request (whole milliseconds).
    RelativeToNow(Duration),
    /// At this time (whole seconds).
    Absolute(SystemTime),
}

impl BlobExpiry {
    fn headers(self) -> (&'static str, Option<String>) {
        match self {
            BlobExpiry::NeverExpire => ("NeverExpire", None),
            BlobExpiry::RelativeToCreation(d) => {
                ("RelativeToCreation", Some(d.as_millis().to_string()))
            }
            BlobExpiry::RelativeToNow(d) => ("RelativeToNow", Some(d.as_millis().to_string())),
            BlobExpiry::Absolute(t) => ("Absolute", Some(httpdate::fmt_http_date(t))),
        }
    }
}

impl BlobServiceClient {
    /// Every soft-deleted container whose name starts with `prefix`, in
    /// listing order (all pages).
    ///
    /// # Errors
    /// Service and transport errors.
    pub async fn list_deleted_containers(&self, prefix: &str) -> Result<Vec<DeletedContainer>> {
        let mut out = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let request = Request::new(Method::GET, "/".to_owned())
                .query("comp", "list")
                .query("include", "deleted")
                .query("prefix", prefix)
                .query_opt("marker", marker.take());
            let response = self.pipeline.send(request).await?;
            let text = response.text().await.map_err(transport)?;
            let root = crate::xml::parse(&text)?;
            if let Some(containers) = root.child("Containers") {
                out.extend(
                    containers
                        .children
                        .iter()
                        .filter(|e| e.name == "Container")
                        .filter_map(DeletedContainer::from_listing),
                );
            }
            match root.non_empty("NextMarker") {
                Some(next) => marker = Some(next),
                None => return Ok(out),
            }
        }
    }

    /// Restore Container: brings the deleted container `name` of deletion
    /// `version` back under its name.
    ///
    /// # Errors
    /// `409 ContainerAlreadyExists` (a live container has the name), `404
    /// ContainerNotFound` (no such deletion, or its retention has passed).
    pub async fn restore_container(&self, name: &str, version: &str) -> Result<ContainerClient> {
        let request = Request::new(Method::PUT, format!("/{}", encode_path(name)))
            .query("restype", "container")
            .query("comp", "undelete")
            .header("x-ms-deleted-container-name", name)
            .header("x-ms-deleted-container-version", version);
        self.pipeline.send(request).await?;
        Ok(self.container(name))
    }
}

impl BlobClient {
    /// Set Blob Expiry on this blob. Only the lease id of `conditions` is
    /// sent.
    ///
    /// # Errors
    /// `404 BlobNotFound`, `400 InvalidHeaderValue` (a time already past),
    /// lease errors.
    pub async fn set_expiry(&self, expiry: BlobExpiry, conditions: &Conditions) -> Result<()> {
        let (option, time) = expiry.headers();
        let request = self
            .base_request(Method::PUT)
            .query("comp", "expiry")
            .header("x-ms-expiry-option", option)
            .header_opt("x-ms-expiry-time", time)
            .header_opt(
                "x-ms-lease-id",
                conditions.lease_id.map(|id| id.to_string()),
            );
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// The blob's expiry time (`x-ms-expiry-time` of Get Blob Properties),
    /// `None` when it has none.
    ///
    /// # Errors
    /// `404 BlobNotFound` (also once it has expired).
    pub async fn expiry_time(&self) -> Result<Option<SystemTime>> {
        let response = self.pipeline.send(self.request(Method::HEAD)).await?;
        Ok(header_date(response.headers(), "x-ms-expiry-time"))
    }
}
