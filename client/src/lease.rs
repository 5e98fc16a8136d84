//! Lease handles for blobs and containers (docs/wire/leases.md).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use uuid::Uuid;

use crate::pipeline::{Pipeline, Request};
use crate::properties::{header, header_u64};
use crate::{Conditions, Error, Result};

/// A lease id: a GUID, compared by value (so case and hyphenation do not
/// matter), written lowercase and hyphenated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeaseId(Uuid);

impl LeaseId {
    /// A new random id (UUID v4).
    pub fn new_random() -> LeaseId {
        LeaseId(Uuid::new_v4())
    }

    /// Parses any usual GUID form (hyphenated, 32 hex digits, in braces).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] when `s` is not a GUID.
    pub fn parse(s: &str) -> Result<LeaseId> {
        Uuid::parse_str(s.trim())
            .map(LeaseId)
            .map_err(|_| Error::InvalidInput(format!("`{s}` is not a lease id (GUID)")))
    }
}

impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.hyphenated())
    }
}

impl FromStr for LeaseId {
    type Err = Error;
    fn from_str(s: &str) -> Result<LeaseId> {
        LeaseId::parse(s)
    }
}

/// How long an acquired lease lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseDuration {
    /// Until released or broken.
    Infinite,
    /// 15 to 60 whole seconds, renewable.
    Fixed(Duration),
}

impl LeaseDuration {
    fn header_value(self) -> String {
        match self {
            LeaseDuration::Infinite => "-1".to_owned(),
            LeaseDuration::Fixed(d) => d.as_secs().to_string(),
        }
    }
}

/// A handle on the lease of one blob or container, holding the lease id it
/// acquires with and presents.
///
/// Acquire always proposes the handle's id (a random one unless given), so
/// that an acquire retried after a lost answer finds its own lease and
/// succeeds instead of failing with `LeaseAlreadyPresent`.
///
/// ```no_run
/// use std::time::Duration;
/// use stowage_client::{BlobServiceClient, Conditions, LeaseDuration, UploadOptions};
///
/// # async fn demo() -> stowage_client::Result<()> {
/// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
/// let container = service.container("state");
/// container.create_if_not_exists().await?;
/// let blob = container.blob("checkpoint");
/// blob.upload(&b"v1"[..], &UploadOptions::default()).await?;
///
/// let lease = blob.lease(None);
/// let id = lease.acquire(LeaseDuration::Fixed(Duration::from_secs(30))).await?;
/// // While the lease is held, writes must present its id...
/// let under_lease = UploadOptions::default().with_conditions(Conditions::new().with_lease(id));
/// blob.upload(&b"v2"[..], &under_lease).await?;
/// // ...and one without it is refused with 412 LeaseIdMissing.
/// assert!(blob.upload(&b"v3"[..], &UploadOptions::default()).await.is_err());
/// lease.renew().await?;
/// lease.release().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct LeaseClient {
    pipeline: Arc<Pipeline>,
    path: String,
    container: bool,
    id: LeaseId,
    conditions: Conditions,
}

impl LeaseClient {
    pub(crate) fn new(
        pipeline: Arc<Pipeline>,
        path: String,
        container: bool,
        id: Option<LeaseId>,
    ) -> LeaseClient {
        LeaseClient {
            pipeline,
            path,
            container,
            id: id.unwrap_or_else(LeaseId::new_random),
            conditions: Conditions::new(),
        }
    }

    /// Conditions every lease action of this handle carries (ETag
    /// conditions apply to blobs only; containers evaluate the dates).
    pub fn with_conditions(mut self, mut conditions: Conditions) -> LeaseClient {
        conditions.lease_id = None;
        self.conditions = conditions;
        self
    }

    /// The id this handle acquires with and presents.
    pub fn id(&self) -> LeaseId {
        self.id
    }

    fn request(&self, action: &str) -> Request {
        let request = Request::new(Method::PUT, self.path.clone()).query("comp", "lease");
        let request = if self.container {
            self.conditions
                .apply_dates(request.query("restype", "container"))
        } else {
            self.conditions.apply(request)
        };
        request.header("x-ms-lease-action", action)
    }

    /// Acquires the lease with this handle's id.
    ///
    /// # Errors
    /// `409 LeaseAlreadyPresent` when another id holds it; 404 when the
    /// target does not exist; 412 for a failed condition.
    pub async fn acquire(&self, duration: LeaseDuration) -> Result<LeaseId> {
        let request = self
            .request("acquire")
            .header("x-ms-lease-duration", duration.header_value())
            .header("x-ms-proposed-lease-id", self.id.to_string());
        let response = self.pipeline.send(request).await?;
        match header(response.headers(), "x-ms-lease-id") {
            Some(id) => LeaseId::parse(id),
            None => Ok(self.id),
        }
    }

    /// Renews the lease (restarts a fixed lease's time).
    ///
    /// # Errors
    /// `409 LeaseIdMismatchWithLeaseOperation` when another id holds it or
    /// none does; `409 LeaseIsBrokenAndCannotBeRenewed` after a break.
    pub async fn renew(&self) -> Result<()> {
        let request = self
            .request("renew")
            .header("x-ms-lease-id", self.id.to_string());
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// Changes the lease's id to `new_id`; the handle then holds `new_id`.
    ///
    /// # Errors
    /// 409 when this handle's id does not hold the lease.
    pub async fn change(&mut self, new_id: LeaseId) -> Result<()> {
        let request = self
            .request("change")
            .header("x-ms-lease-id", self.id.to_string())
            .header("x-ms-proposed-lease-id", new_id.to_string());
        self.pipeline.send(request).await?;
        self.id = new_id;
        Ok(())
    }

    /// Releases the lease: the target is available at once.
    ///
    /// # Errors
    /// `409 LeaseIdMismatchWithLeaseOperation` when this id does not hold it.
    pub async fn release(&self) -> Result<()> {
        let request = self
            .request("release")
            .header("x-ms-lease-id", self.id.to_string());
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// Breaks whatever lease is active (no id needed), after `period`
    /// (0–60 s) or, without one, when a fixed lease would end. Returns the
    /// time left until the lease is broken.
    ///
    /// # Errors
    /// `409 LeaseNotPresentWithLeaseOperation` when there is no lease.
    pub async fn break_lease(&self, period: Option<Duration>) -> Result<Duration> {
        let request = self.request("break").header_opt(
            "x-ms-lease-break-period",
            period.map(|p| p.as_secs().to_string()),
        );
        let response = self.pipeline.send(request).await?;
        Ok(Duration::from_secs(
            header_u64(response.headers(), "x-ms-lease-time").unwrap_or(0),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_ids_compare_by_value() {
        let a = LeaseId::parse("3F2504E0-4F89-11D3-9A0C-0305E82C3301").unwrap();
        let b = LeaseId::parse("3f2504e04f8911d39a0c0305e82c3301").unwrap();
        let c = LeaseId::parse("{3f2504e0-4f89-11d3-9a0c-0305e82c3301}").unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(a.to_string(), "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
        assert!(LeaseId::parse("not-a-guid").is_err());
    }

    #[test]
    fn durations_render_as_the_header_wants() {
        assert_eq!(LeaseDuration::Infinite.header_value(), "-1");
        assert_eq!(
            LeaseDuration::Fixed(Duration::from_secs(15)).header_value(),
            "15"
        );
    }
}
