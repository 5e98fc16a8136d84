//! The per-request context every handler receives.

use std::sync::Arc;

use actix_web::HttpRequest;
use stowage_blobstore::{BlobName, ContainerName, Store};

use crate::error::ApiError;
use crate::headers::Headers;
use crate::state::AppState;
use crate::target::{Query, Target};

/// Everything a handler needs to know about its request.
#[derive(Debug)]
pub(crate) struct RequestContext {
    pub state: Arc<AppState>,
    pub req: HttpRequest,
    pub target: Target,
    pub query: Query,
    /// The `x-ms-version` the request is processed with.
    pub version: String,
    /// The `x-ms-meta-*` names exactly as sent (empty when unknown).
    pub meta_names: Vec<String>,
    /// What the request's shared access signature grants, for SAS requests.
    pub sas: Option<crate::auth::sas::SasGrant>,
    /// Who a verified OAuth bearer token names, for bearer requests.
    pub bearer: Option<crate::auth::bearer::BearerIdentity>,
}

impl RequestContext {
    pub(crate) fn headers(&self) -> Headers<'_> {
        Headers(self.req.headers())
    }

    /// The request's metadata, names in the case the client wrote them.
    pub(crate) fn metadata(&self) -> Result<stowage_blobstore::Metadata, ApiError> {
        self.headers().metadata(&self.meta_names)
    }

    pub(crate) fn store(&self) -> &Store {
        &self.state.store
    }

    pub(crate) fn account(&self) -> &str {
        &self.target.account
    }

    /// The addressed container, validated (docs/wire/requests.md#names).
    pub(crate) fn container(&self) -> Result<ContainerName, ApiError> {
        let name = self
            .target
            .container
            .as_deref()
            .ok_or(ApiError::InvalidUri)?;
        ContainerName::parse(name).map_err(|e| stowage_blobstore::Error::Name(e).into())
    }

    /// The addressed blob, validated (docs/wire/requests.md#names).
    pub(crate) fn blob(&self) -> Result<BlobName, ApiError> {
        let name = self.target.blob.as_deref().ok_or(ApiError::InvalidUri)?;
        BlobName::parse(name).map_err(|e| stowage_blobstore::Error::Name(e).into())
    }

    /// `?snapshot=`; writes addressed to a snapshot are refused by callers.
    pub(crate) fn snapshot(&self) -> Option<String> {
        self.query.get("snapshot").map(str::to_owned)
    }

    /// `?versionid=`: a previous (or the current) version of a blob.
    pub(crate) fn version_id(&self) -> Option<String> {
        self.query.get("versionid").map(str::to_owned)
    }

    /// Refuses a write addressed to a snapshot (docs/wire/errors.md#which-check-answers-first).
    pub(crate) fn forbid_snapshot(&self) -> Result<(), ApiError> {
        match self.query.get("snapshot") {
            Some(_) => Err(stowage_blobstore::Error::SnapshotOperation.into()),
            None => Ok(()),
        }
    }

    /// The client's address.
    pub(crate) fn client_ip(&self) -> Option<std::net::IpAddr> {
        self.req.peer_addr().map(|a| a.ip())
    }

    /// True when the request arrived over TLS.
    pub(crate) fn is_https(&self) -> bool {
        self.req.conn_data::<crate::handler::Secure>().is_some()
    }

    /// The listings' `ServiceEndpoint`: `http(s)://<host>/<account>/`
    /// path-style (`<account>-secondary` on the secondary endpoint), and
    /// `http(s)://<host>/` when the host names the account.
    pub(crate) fn service_endpoint(&self) -> String {
        let scheme = if self.is_https() { "https" } else { "http" };
        let info = self.req.connection_info();
        let host = info.host();
        let t = &self.target;
        match (t.host_style, t.secondary) {
            (true, _) => format!("{scheme}://{host}/"),
            (false, false) => format!("{scheme}://{host}/{}/", t.account),
            (false, true) => format!(
                "{scheme}://{host}/{}{}/",
                t.account,
                crate::target::SECONDARY_SUFFIX
            ),
        }
    }
}
