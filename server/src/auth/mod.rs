//! Who is asking: Shared Key (and Lite) for account holders, anonymous access
//! where a container's public access level allows it (spec/40-auth.md).
//! Runs before everything else, so a refused request learns nothing about
//! what exists.

pub mod sas;
pub mod shared_key;

use actix_web::HttpRequest;
use stowage_blobstore::PublicAccess;

use crate::error::ApiError;
use crate::ops::Operation;
use crate::request::RequestContext;
use crate::state::AppState;
use crate::target::Target;
use shared_key::{RequestView, SharedKeyError};

/// The authenticated party of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Principal {
    /// Signed with the account key: may do everything on the account.
    AccountKey,
    /// No credentials: limited to public containers.
    Anonymous,
}

/// Checks the request's credentials against the account named in the URL.
pub(crate) fn authenticate(
    req: &HttpRequest,
    target: &Target,
    state: &AppState,
) -> Result<Principal, ApiError> {
    let Some(value) = req.headers().get("authorization") else {
        if req.query_string().split('&').any(|p| p.starts_with("sig=")) {
            // Shared access signatures arrive with the issue "Who gets in".
            return Err(ApiError::AuthenticationFailed(
                "Shared access signatures are not supported by this server yet.".into(),
            ));
        }
        return Ok(Principal::Anonymous);
    };
    let value = value
        .to_str()
        .map_err(|_| ApiError::InvalidAuthenticationInfo)?;
    let auth = shared_key::parse_authorization(value).map_err(shared_key_error)?;
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
    let keys = state
        .accounts
        .get(&target.account)
        .map(|a| a.keys.as_slice())
        .unwrap_or_default();
    shared_key::verify(&view, &auth, &target.account, keys, state.clock.now())
        .map_err(shared_key_error)?;
    Ok(Principal::AccountKey)
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
pub(crate) async fn authorize_anonymous(
    op: Operation,
    ctx: &RequestContext,
) -> Result<(), ApiError> {
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
