//! Who is asking: Shared Key (and Lite) for account holders, shared access
//! signatures, and anonymous access where a container's public access level
//! allows it (spec/40-auth.md).
//! Runs before everything else, so a refused request learns nothing about
//! what exists.

mod permissions;
pub mod sas;
pub mod shared_key;

use actix_web::HttpRequest;
use stowage_blobstore::{
    ContainerName, Error as StoreError, GetBlobInput, PublicAccess, iso8601_7,
};

use crate::error::ApiError;
use crate::ops::Operation;
use crate::request::RequestContext;
use crate::state::AppState;
use crate::target::Target;
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
    /// No credentials: limited to public containers.
    Anonymous,
}

/// Checks the request's credentials against the account named in the URL.
/// An `Authorization` header wins over a SAS in the query.
pub(crate) fn authenticate(
    req: &HttpRequest,
    target: &Target,
    state: &AppState,
) -> Result<Credentials, ApiError> {
    let Some(value) = req.headers().get("authorization") else {
        return match sas::parse_sas(req.query_string()) {
            Some(token) => Ok(Credentials::Sas(Box::new(token.map_err(sas_error)?))),
            None => Ok(Credentials::Anonymous),
        };
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::InvalidAuthenticationInfo)?;
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
    let verified = verify_shared_key(&view, value, &target.account, state);
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
        if verify_shared_key(&view, value, &target.account, state).is_ok() {
            return Ok(Credentials::AccountKey);
        }
    }
    verified?;
    Ok(Credentials::AccountKey)
}

/// `/<account>-secondary/rest` as `/<account>/rest`.
fn primary_path(raw_path: &str, account: &str) -> Option<String> {
    let rest = raw_path
        .strip_prefix('/')?
        .strip_prefix(account)?
        .strip_prefix(crate::target::SECONDARY_SUFFIX)?;
    Some(format!("/{account}{rest}"))
}

/// Verifies a Shared Key (or Lite) `Authorization` value for `view` against
/// `account`'s keys; also used for the sub-requests of a Blob Batch.
pub(crate) fn verify_shared_key(
    view: &RequestView<'_>,
    authorization: &str,
    account: &str,
    state: &AppState,
) -> Result<(), ApiError> {
    let auth = shared_key::parse_authorization(authorization).map_err(shared_key_error)?;
    let keys = state
        .accounts
        .get(account)
        .map(|a| a.keys.as_slice())
        .unwrap_or_default();
    shared_key::verify(view, &auth, account, keys, state.clock.now()).map_err(shared_key_error)
}

/// Decides whether the credentials allow `op`. Returns the SAS grant of a
/// SAS request (its response-header overrides apply to reads).
pub(crate) async fn authorize(
    op: Operation,
    ctx: &RequestContext,
    credentials: Credentials,
) -> Result<Option<SasGrant>, ApiError> {
    match credentials {
        Credentials::AccountKey => Ok(None),
        Credentials::Anonymous => authorize_anonymous(op, ctx).await.map(|()| None),
        Credentials::Sas(token) => authorize_sas(op, ctx, &token).await.map(Some),
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
    ctx: &RequestContext,
    token: &SasToken,
) -> Result<SasGrant, ApiError> {
    let target = &ctx.target;
    let resource = SasResource {
        account: &target.account,
        container: target.container.as_deref(),
        blob: target.blob.as_deref(),
        snapshot: ctx.query.get("snapshot").or(ctx.query.get("versionid")),
        https: ctx.is_https(),
    };
    let lease_break = ctx
        .req
        .headers()
        .get("x-ms-lease-action")
        .is_some_and(|v| v.as_bytes() == b"break");
    check_sas(op, ctx, token, &resource, lease_break).await
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
    check_sas(Operation::GetBlob, ctx, token, source, false)
        .await
        .map(|_| ())
}

async fn check_sas(
    op: Operation,
    ctx: &RequestContext,
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
        client_ip: ctx.req.peer_addr().map(|a| a.ip()),
        https: resource.https,
    };
    let grant = sas::verify_sas(token, &request, keys, policy.as_ref()).map_err(sas_error)?;
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
    if !grant.permissions.contains_any(need.letters) {
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
    ctx: &RequestContext,
    account: &str,
    container: &str,
    id: &str,
) -> Result<StoredPolicy, ApiError> {
    let not_found = || sas_error(SasError::PolicyNotFound);
    let name = ContainerName::parse(container).map_err(|_| not_found())?;
    let acl = ctx
        .store()
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
async fn blob_exists(ctx: &RequestContext) -> Result<bool, ApiError> {
    let input = GetBlobInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        blob: ctx.blob()?,
        snapshot: None,
        range: None,
        conditions: Default::default(),
        lease_id: None,
    };
    match ctx.store().get_blob_properties(input).await {
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
        | SasError::OutsideTimeWindow) => ApiError::AuthenticationFailed(other.to_string()),
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
/// (spec/40-auth.md §5). Anything else is answered as if the resource did not
/// exist.
async fn authorize_anonymous(op: Operation, ctx: &RequestContext) -> Result<(), ApiError> {
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
        .store()
        .get_container_properties(ctx.account(), &container, None)
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
