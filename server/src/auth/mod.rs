//! Who is asking: Shared Key (and Lite) for account holders, shared access
//! signatures (user delegation SAS included), OAuth bearer tokens with
//! `--oauth basic` (docs/wire/oauth.md), and anonymous access where a
//! container's public access level allows it (docs/wire/auth.md).
//! Runs before everything else, so a refused request learns nothing about
//! what exists.

pub mod bearer;
pub mod delegation;
mod permissions;
pub mod sas;
pub mod shared_key;

use std::net::IpAddr;

use actix_web::HttpRequest;
use stowage_blobstore::{
    BlobName, ContainerName, Error as StoreError, GetBlobInput, PublicAccess, iso8601_7,
};

use crate::error::ApiError;
use crate::ops::Operation;
use crate::request::RequestContext;
use crate::state::AppState;
use crate::target::{Query, Target};
use bearer::{BearerError, BearerIdentity};
use permissions::{ResourceType, ServiceScope};
use sas::{SasError, SasGrant, SasKind, SasRequest, SasToken, SignedResource, StoredPolicy};
use shared_key::{RequestView, SharedKeyError};

/// The credentials a request presents, checked as far as they can be
/// without knowing the operation.
#[derive(Debug)]
pub(crate) enum Credentials {
    /// Signed with the account key (verified): may do everything on the account.
    AccountKey,
    /// A shared access signature, verified by [`authorize`] once the
    /// operation is known.
    Sas(Box<SasToken>),
    /// A bearer token that passed [`bearer::verify_bearer`]: may do
    /// everything on the account (roles are not emulated).
    Bearer(BearerIdentity),
    /// No credentials: limited to public containers.
    Anonymous,
}

impl Credentials {
    /// The identity of a bearer request.
    pub(crate) fn bearer_identity(&self) -> Option<BearerIdentity> {
        match self {
            Credentials::Bearer(identity) => Some(identity.clone()),
            _ => None,
        }
    }
}

/// The detail of Get User Delegation Key asked without a bearer token.
const BEARER_REQUIRED: &str = "Only authentication scheme Bearer is supported";

/// The first version whose refused bearer tokens are answered with a
/// challenge (`401` and `WWW-Authenticate`); older ones get `403`.
const BEARER_CHALLENGE_VERSION: &str = "2019-12-12";

/// The token of an `Authorization: Bearer <token>` value.
fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once([' ', '\t'])?;
    scheme.eq_ignore_ascii_case("Bearer").then(|| token.trim())
}

/// Checks the request's credentials against the account named in the URL.
/// An `Authorization` header wins over a SAS in the query.
pub(crate) fn authenticate(
    req: &HttpRequest,
    target: &Target,
    state: &AppState,
) -> Result<Credentials, ApiError> {
    let Some(authorization) = req.headers().get("authorization") else {
        return unsigned_credentials(req.query_string());
    };
    let Ok(authorization) = authorization.to_str() else {
        return Err(ApiError::InvalidAuthenticationInfo);
    };
    if state.oauth
        && bearer_token(authorization).is_some()
        && req.conn_data::<crate::handler::Secure>().is_none()
    {
        return Err(ApiError::InvalidBearerToken {
            detail: BearerError::NotHttps.to_string(),
            challenge: None,
        });
    }
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let view = RequestView {
        method: req.method().as_str(),
        raw_path: req.uri().path(),
        raw_query: req.query_string(),
        headers: &headers,
    };
    let verified = authenticate_view(&view, "", &target.account, state);
    // On the path-style secondary endpoint clients sign the path as sent
    // (`/devstoreaccount1-secondary/...`) or, as the emulator also accepts,
    // with the primary account's name in it.
    if verified.is_err()
        && target.secondary
        && !target.host_style
        && let Some(primary_path) = primary_path(view.raw_path, &target.account)
    {
        let view = RequestView {
            raw_path: &primary_path,
            ..view
        };
        if let Ok(credentials) = authenticate_view(&view, "", &target.account, state) {
            return Ok(credentials);
        }
    }
    verified
}

/// `/<account>-secondary/rest` as `/<account>/rest`.
fn primary_path(raw_path: &str, account: &str) -> Option<String> {
    let rest = raw_path
        .strip_prefix('/')?
        .strip_prefix(account)?
        .strip_prefix(crate::target::SECONDARY_SUFFIX)?;
    Some(format!("/{account}{rest}"))
}

/// [`authenticate`] for a request given as its signed parts: a top-level
/// request, or a Blob Batch sub-request, which is processed with the
/// batch's version when it has no `x-ms-version` of its own
/// (`inherited_version`; `""` for a top-level request).
pub(crate) fn authenticate_view(
    view: &RequestView<'_>,
    inherited_version: &str,
    account: &str,
    state: &AppState,
) -> Result<Credentials, ApiError> {
    let authorization = view
        .headers
        .iter()
        .find(|(n, _)| n == "authorization")
        .map(|(_, v)| v.as_str());
    let Some(authorization) = authorization else {
        return unsigned_credentials(view.raw_query);
    };
    if state.oauth
        && let Some(token) = bearer_token(authorization)
    {
        let version = view
            .headers
            .iter()
            .find(|(n, _)| n == "x-ms-version")
            .map_or(inherited_version, |(_, v)| v.as_str());
        return authenticate_bearer(token, account, version, state);
    }
    let auth = shared_key::parse_authorization(authorization).map_err(shared_key_error)?;
    let keys = state
        .accounts
        .get(account)
        .map(|a| a.keys.as_slice())
        .unwrap_or_default();
    let now = state.clock.now();
    shared_key::verify_with_version(view, &auth, account, keys, now, inherited_version)
        .map_err(shared_key_error)?;
    Ok(Credentials::AccountKey)
}

/// Checks a bearer token for `account`; a refusal carries the challenge
/// from version 2019-12-12 on (and when no version is given).
fn authenticate_bearer(
    token: &str,
    account: &str,
    version: &str,
    state: &AppState,
) -> Result<Credentials, ApiError> {
    if state.accounts.get(account).is_none() {
        return Err(ApiError::ResourceNotFound);
    }
    bearer::verify_bearer(token, account, state.clock.now())
        .map(Credentials::Bearer)
        .map_err(|e| {
            let challenge = (version.is_empty() || version >= BEARER_CHALLENGE_VERSION)
                .then(|| bearer::challenge(bearer::token_tenant(token).as_deref()));
            ApiError::InvalidBearerToken {
                detail: e.to_string(),
                challenge,
            }
        })
}

/// The credentials of a request without `Authorization`: a SAS in its
/// query, or none.
fn unsigned_credentials(raw_query: &str) -> Result<Credentials, ApiError> {
    match sas::parse_sas(raw_query) {
        Some(token) => Ok(Credentials::Sas(Box::new(token.map_err(sas_error)?))),
        None => Ok(Credentials::Anonymous),
    }
}

/// What authorization reads of a request: what it addresses and from where
/// it came. A Blob Batch sub-request has its own target and query, and the
/// batch's connection.
pub(crate) struct AuthScope<'a> {
    pub state: &'a AppState,
    pub target: &'a Target,
    pub query: &'a Query,
    /// `x-ms-lease-action: break` (a SAS may break a lease with `d`).
    pub lease_break: bool,
    pub client_ip: Option<IpAddr>,
    pub https: bool,
}

impl AuthScope<'_> {
    fn container(&self) -> Result<ContainerName, ApiError> {
        let name = self
            .target
            .container
            .as_deref()
            .ok_or(ApiError::InvalidUri)?;
        ContainerName::parse(name).map_err(|e| StoreError::Name(e).into())
    }

    fn blob(&self) -> Result<BlobName, ApiError> {
        let name = self.target.blob.as_deref().ok_or(ApiError::InvalidUri)?;
        BlobName::parse(name).map_err(|e| StoreError::Name(e).into())
    }
}

/// Decides whether the credentials allow `op`. Returns the SAS grant of a
/// SAS request (its response-header overrides apply to reads).
pub(crate) async fn authorize(
    op: Operation,
    ctx: &RequestContext,
    credentials: Credentials,
) -> Result<Option<SasGrant>, ApiError> {
    authorize_scope(op, &request_scope(ctx), credentials).await
}

/// The scope of a top-level request.
fn request_scope(ctx: &RequestContext) -> AuthScope<'_> {
    AuthScope {
        state: &ctx.state,
        target: &ctx.target,
        query: &ctx.query,
        lease_break: ctx
            .req
            .headers()
            .get("x-ms-lease-action")
            .is_some_and(|v| v.as_bytes() == b"break"),
        client_ip: ctx.client_ip(),
        https: ctx.is_https(),
    }
}

/// [`authorize`] for a request described by `scope` (also a Blob Batch
/// sub-request).
pub(crate) async fn authorize_scope(
    op: Operation,
    scope: &AuthScope<'_>,
    credentials: Credentials,
) -> Result<Option<SasGrant>, ApiError> {
    if op == Operation::GetUserDelegationKey && !matches!(credentials, Credentials::Bearer(_)) {
        return Err(ApiError::AuthenticationFailed(BEARER_REQUIRED.to_owned()));
    }
    match credentials {
        Credentials::AccountKey | Credentials::Bearer(_) => Ok(None),
        Credentials::Anonymous => authorize_anonymous(op, scope).await.map(|()| None),
        Credentials::Sas(token) => authorize_sas(op, scope, &token).await.map(Some),
    }
}

/// The resource a shared access signature is used on: the request's own
/// target, or the source named by `x-ms-copy-source`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SasResource<'a> {
    pub account: &'a str,
    pub container: Option<&'a str>,
    pub blob: Option<&'a str>,
    pub snapshot: Option<&'a str>,
    pub https: bool,
}

async fn authorize_sas(
    op: Operation,
    ctx: &AuthScope<'_>,
    token: &SasToken,
) -> Result<SasGrant, ApiError> {
    let target = ctx.target;
    let resource = SasResource {
        account: &target.account,
        container: target.container.as_deref(),
        blob: target.blob.as_deref(),
        snapshot: ctx.query.get("snapshot").or(ctx.query.get("versionid")),
        https: ctx.https,
    };
    check_sas(op, ctx, token, &resource, ctx.lease_break).await
}

/// Checks that the SAS of a copy source lets its holder read that blob.
///
/// # Errors
/// As for a Get Blob request carrying that SAS.
pub(crate) async fn authorize_copy_source(
    ctx: &RequestContext,
    token: &SasToken,
    source: &SasResource<'_>,
) -> Result<(), ApiError> {
    check_sas(
        Operation::GetBlob,
        &request_scope(ctx),
        token,
        source,
        false,
    )
    .await
    .map(|_| ())
}

async fn check_sas(
    op: Operation,
    ctx: &AuthScope<'_>,
    token: &SasToken,
    resource: &SasResource<'_>,
    lease_break: bool,
) -> Result<SasGrant, ApiError> {
    let keys = ctx
        .state
        .accounts
        .get(resource.account)
        .map(|a| a.keys.as_slice())
        .unwrap_or_default();
    let policy = match (&token.si, resource.container) {
        (Some(id), Some(container)) => {
            Some(stored_policy(ctx, resource.account, container, id).await?)
        }
        (Some(_), None) => return Err(sas_error(SasError::PolicyNotFound)),
        (None, _) => None,
    };
    let request = SasRequest {
        account: resource.account,
        container: resource.container,
        blob: resource.blob,
        snapshot: resource.snapshot,
        now: ctx.state.clock.now(),
        client_ip: ctx.client_ip,
        https: resource.https,
    };
    let grant = sas::verify_sas(token, &request, keys, policy.as_ref()).map_err(sas_error)?;
    if op == Operation::BlobBatch {
        // A valid signature for the batch's URL lets the batch in; each
        // sub-request is then authorized on its own credentials.
        return Ok(grant);
    }
    let need =
        permissions::sas_need(op, lease_break).ok_or(ApiError::AuthorizationPermissionMismatch)?;
    match grant.kind {
        SasKind::Account => {
            let types = grant.resource_types.unwrap_or_default();
            let covered = match need.resource_type {
                ResourceType::Service => types.service,
                ResourceType::Container => types.container,
                ResourceType::Object => types.object,
            };
            if !covered {
                return Err(ApiError::AuthorizationResourceTypeMismatch);
            }
        }
        SasKind::Service => {
            let allowed = match need.service_scope {
                ServiceScope::None => false,
                ServiceScope::Container => grant.resource == Some(SignedResource::Container),
                ServiceScope::Any => true,
            };
            if !allowed {
                return Err(ApiError::AuthorizationPermissionMismatch);
            }
        }
    }
    let letters = match op {
        Operation::DeleteBlob => permissions::delete_blob_letters(
            ctx.query.get("versionid").is_some(),
            ctx.query.get("deletetype") == Some("permanent"),
        ),
        _ => need.letters,
    };
    if !grant.permissions.contains_any(letters) {
        return Err(ApiError::AuthorizationPermissionMismatch);
    }
    if need.create_only_needs_absent && !grant.permissions.contains('w') && blob_exists(ctx).await?
    {
        return Err(ApiError::AuthorizationPermissionMismatch);
    }
    Ok(grant)
}

/// The stored access policy `id` of the container, as the SAS checks read it.
async fn stored_policy(
    ctx: &AuthScope<'_>,
    account: &str,
    container: &str,
    id: &str,
) -> Result<StoredPolicy, ApiError> {
    let not_found = || sas_error(SasError::PolicyNotFound);
    let name = ContainerName::parse(container).map_err(|_| not_found())?;
    let acl = ctx
        .state
        .store
        .get_container_acl(account, &name, None)
        .await
        .map_err(|_| not_found())?;
    let p = acl
        .policies
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(not_found)?;
    Ok(StoredPolicy {
        start: p.start.map(iso8601_7),
        expiry: p.expiry.map(iso8601_7),
        permission: p.permission,
    })
}

/// Whether the addressed blob exists (committed), for the `c`-only rule.
async fn blob_exists(ctx: &AuthScope<'_>) -> Result<bool, ApiError> {
    let input = GetBlobInput {
        account: ctx.target.account.clone(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: None,
        version_id: None,
        range: None,
        conditions: Default::default(),
        lease_id: None,
    };
    match ctx.state.store.get_blob_properties(input).await {
        Ok(_) => Ok(true),
        Err(StoreError::BlobNotFound | StoreError::ContainerNotFound) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

fn sas_error(e: SasError) -> ApiError {
    match e {
        SasError::PolicyFieldConflict(field) => ApiError::InvalidQueryParameterValue {
            name: field.to_owned(),
            value: String::new(),
        },
        SasError::SourceIpMismatch(ip) => ApiError::AuthorizationSourceIpMismatch(ip),
        SasError::ProtocolMismatch => ApiError::AuthorizationProtocolMismatch,
        SasError::ServiceMismatch => ApiError::AuthorizationServiceMismatch,
        SasError::EncryptionScopeNotSupported => ApiError::NotImplemented,
        other @ (SasError::Malformed(_)
        | SasError::UnsupportedKind
        | SasError::PolicyNotFound
        | SasError::SignatureMismatch { .. }
        | SasError::OutsideTimeWindow
        | SasError::KeyOutsideTimeWindow) => ApiError::AuthenticationFailed(other.to_string()),
    }
}

fn shared_key_error(e: SharedKeyError) -> ApiError {
    match e {
        SharedKeyError::Malformed => ApiError::InvalidAuthenticationInfo,
        SharedKeyError::DuplicateSignedHeader(name) => ApiError::InvalidHeaderValue {
            name,
            value: String::new(),
        },
        other => ApiError::AuthenticationFailed(other.to_string()),
    }
}

/// What an anonymous request may do: read blobs of a `blob` or `container`
/// container, list and read the properties of a `container` container
/// (docs/wire/auth.md#anonymous-access). Anything else is answered as if the resource did not
/// exist.
async fn authorize_anonymous(op: Operation, ctx: &AuthScope<'_>) -> Result<(), ApiError> {
    use Operation::*;
    let needs = match op {
        GetBlob | GetBlobProperties | GetBlobMetadata | GetPageRanges => PublicAccess::Blob,
        GetBlockList
            if ctx
                .query
                .get("blocklisttype")
                .is_none_or(|t| t == "committed") =>
        {
            PublicAccess::Blob
        }
        GetContainerProperties | GetContainerMetadata | ListBlobs => PublicAccess::Container,
        _ => return Err(ApiError::ResourceNotFound),
    };
    let container = ctx.container().map_err(|_| ApiError::ResourceNotFound)?;
    let props = ctx
        .state
        .store
        .get_container_properties(&ctx.target.account, &container, None)
        .await
        .map_err(|_| ApiError::ResourceNotFound)?;
    match (props.public_access, needs) {
        (Some(PublicAccess::Container), _) | (Some(PublicAccess::Blob), PublicAccess::Blob) => {
            Ok(())
        }
        _ => Err(ApiError::ResourceNotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::primary_path;

    #[test]
    fn secondary_paths_as_the_primary_signs_them() {
        let cases = [
            ("/acct-secondary/c/b", Some("/acct/c/b")),
            ("/acct-secondary/", Some("/acct/")),
            ("/acct-secondary", Some("/acct")),
            ("/acct/c/b", None),
            ("/other-secondary/c", None),
            ("acct-secondary/c", None),
        ];
        for (path, expected) in cases {
            assert_eq!(primary_path(path, "acct").as_deref(), expected, "{path}");
        }
    }
}
