//! REST operations: [`Operation`] names each one the way the REST reference
//! does, [`Operation::parse`] picks it from a request (docs/wire/requests.md#which-operation-a-request-is), and [`dispatch`] calls its handler.

mod append;
mod batch;
pub(crate) mod batch_body;
mod blob;
mod block;
mod container;
mod copy;
mod copy_remote;
pub(crate) mod cors;
mod expiry;
mod from_url;
mod lease;
mod oauth;
mod pages;
mod params;
mod service;
mod tags;
mod tiers;

use actix_web::HttpResponse;
use actix_web::http::Method;

use crate::error::ApiError;
use crate::request::RequestContext;
use crate::target::Level;

/// Every operation of the dispatch table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operation {
    ListContainers,
    SetBlobServiceProperties,
    GetBlobServiceProperties,
    GetBlobServiceStats,
    GetAccountInformation,
    GetUserDelegationKey,
    CreateContainer,
    GetContainerProperties,
    GetContainerMetadata,
    SetContainerMetadata,
    GetContainerAcl,
    SetContainerAcl,
    DeleteContainer,
    RestoreContainer,
    LeaseContainer,
    ListBlobs,
    PutBlob,
    CopyBlob,
    PutBlobFromUrl,
    GetBlob,
    GetBlobProperties,
    SetBlobProperties,
    GetBlobMetadata,
    SetBlobMetadata,
    DeleteBlob,
    UndeleteBlob,
    SnapshotBlob,
    AbortCopyBlob,
    LeaseBlob,
    PutBlock,
    PutBlockFromUrl,
    PutBlockList,
    GetBlockList,
    AppendBlock,
    AppendBlockFromUrl,
    SealAppendBlob,
    PutPage,
    UploadPagesFromUrl,
    GetPageRanges,
    IncrementalCopyBlob,
    SetBlobTags,
    GetBlobTags,
    SetBlobTier,
    SetBlobExpiry,
    FindBlobsByTags,
    FindBlobsByTagsInContainer,
    BlobBatch,
    CorsPreflight,
}

/// `comp` values of the service that Stowage does not implement.
const NOT_IMPLEMENTED_COMP: &[&str] = &["query", "rename", "immutabilitypolicies", "legalhold"];

/// Every `comp` value the service knows (docs/wire/requests.md#which-operation-a-request-is).
const KNOWN_COMP: &[&str] = &[
    "batch",
    "list",
    "metadata",
    "acl",
    "lease",
    "properties",
    "block",
    "blocklist",
    "appendblock",
    "seal",
    "snapshot",
    "copy",
    "page",
    "pagelist",
    "incrementalcopy",
    "tags",
    "blobs",
    "stats",
    "userdelegationkey",
    "tier",
    "undelete",
    "expiry",
];

/// The facts of a request that choose its operation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RouteKey<'a> {
    pub method: &'a Method,
    pub level: Level,
    pub restype: Option<&'a str>,
    pub comp: Option<&'a str>,
    pub has_blob_type: bool,
    pub has_copy_source: bool,
}

impl Operation {
    /// Picks the operation, or the service's error for a request that
    /// matches none (docs/wire/requests.md#which-operation-a-request-is).
    pub(crate) fn parse(k: RouteKey<'_>) -> Result<Operation, ApiError> {
        use Operation::*;
        let m = k.method;
        if m == Method::OPTIONS {
            return Ok(CorsPreflight);
        }
        let bad = |name: &str, value: &str| ApiError::InvalidQueryParameterValue {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        if let Some(r) = k.restype
            && !matches!(r, "container" | "service" | "account")
        {
            return Err(bad("restype", r));
        }
        if let Some(c) = k.comp {
            if NOT_IMPLEMENTED_COMP.contains(&c.to_ascii_lowercase().as_str()) {
                return Err(ApiError::NotImplemented);
            }
            if !KNOWN_COMP.contains(&c) {
                return Err(bad("comp", c));
            }
        }
        let get = m == Method::GET;
        let head = m == Method::HEAD;
        let put = m == Method::PUT;
        let delete = m == Method::DELETE;
        let verb = |op: Operation, allowed: bool| {
            if allowed {
                Ok(op)
            } else {
                Err(ApiError::UnsupportedHttpVerb)
            }
        };
        match (k.restype, k.comp) {
            (Some("account"), Some("properties")) => {
                return verb(GetAccountInformation, get || head);
            }
            (Some("account"), _) => return Err(ApiError::InvalidUri),
            _ => {}
        }
        match k.level {
            Level::Account => match (k.restype, k.comp) {
                (None, Some("list")) => verb(ListContainers, get),
                (None, Some("blobs")) => verb(FindBlobsByTags, get),
                // `/<account>?restype=container&comp=batch` without a
                // container is how the JS SDK sends an account-level batch
                // to a path-style URL: served as the account scope.
                (None | Some("container"), Some("batch")) => verb(BlobBatch, m == Method::POST),
                (Some("service"), Some("properties")) if put => Ok(SetBlobServiceProperties),
                (Some("service"), Some("properties")) => verb(GetBlobServiceProperties, get),
                (Some("service"), Some("stats")) => verb(GetBlobServiceStats, get),
                (Some("service"), Some("userdelegationkey")) => {
                    verb(GetUserDelegationKey, m == Method::POST)
                }
                _ => Err(ApiError::InvalidUri),
            },
            Level::Container => match (k.restype, k.comp) {
                (Some("container"), None) if put => Ok(CreateContainer),
                (Some("container"), None) if get || head => Ok(GetContainerProperties),
                (Some("container"), None) => verb(DeleteContainer, delete),
                (Some("container"), Some("metadata")) if put => Ok(SetContainerMetadata),
                (Some("container"), Some("metadata")) => verb(GetContainerMetadata, get || head),
                (Some("container"), Some("acl")) if put => Ok(SetContainerAcl),
                (Some("container"), Some("acl")) => verb(GetContainerAcl, get || head),
                (Some("container"), Some("lease")) => verb(LeaseContainer, put),
                (Some("container"), Some("list")) => verb(ListBlobs, get),
                (Some("container"), Some("blobs")) => verb(FindBlobsByTagsInContainer, get),
                (Some("container"), Some("batch")) => verb(BlobBatch, m == Method::POST),
                (Some("container"), Some("undelete")) => verb(RestoreContainer, put),
                (Some("container"), Some(_)) => Err(ApiError::UnsupportedHttpVerb),
                _ => Err(ApiError::InvalidUri),
            },
            Level::Blob => match k.comp {
                None if put => match (k.has_blob_type, k.has_copy_source) {
                    (true, false) => Ok(PutBlob),
                    (false, true) => Ok(CopyBlob),
                    (true, true) => Ok(PutBlobFromUrl),
                    (false, false) => Err(ApiError::MissingRequiredHeader("x-ms-blob-type")),
                },
                None if get => Ok(GetBlob),
                None if head => Ok(GetBlobProperties),
                None => verb(DeleteBlob, delete),
                Some("properties") => verb(SetBlobProperties, put),
                Some("metadata") if put => Ok(SetBlobMetadata),
                Some("metadata") => verb(GetBlobMetadata, get || head),
                Some("snapshot") => verb(SnapshotBlob, put),
                Some("copy") => verb(AbortCopyBlob, put),
                Some("lease") => verb(LeaseBlob, put),
                Some("block") if k.has_copy_source => verb(PutBlockFromUrl, put),
                Some("appendblock") if k.has_copy_source => verb(AppendBlockFromUrl, put),
                Some("page") if k.has_copy_source => verb(UploadPagesFromUrl, put),
                Some("block") => verb(PutBlock, put),
                Some("blocklist") if put => Ok(PutBlockList),
                Some("blocklist") => verb(GetBlockList, get),
                Some("appendblock") => verb(AppendBlock, put),
                Some("seal") => verb(SealAppendBlob, put),
                Some("page") => verb(PutPage, put),
                Some("pagelist") => verb(GetPageRanges, get),
                Some("incrementalcopy") => verb(IncrementalCopyBlob, put),
                Some("tags") if put => Ok(SetBlobTags),
                Some("tags") => verb(GetBlobTags, get),
                Some("tier") => verb(SetBlobTier, put),
                Some("expiry") => verb(SetBlobExpiry, put),
                Some("undelete") => verb(UndeleteBlob, put),
                Some(_) => Err(ApiError::UnsupportedHttpVerb),
            },
        }
    }
}

impl Operation {
    /// True for the operations that change nothing, the only ones the
    /// read-only secondary endpoint serves.
    pub(crate) fn is_read(self) -> bool {
        use Operation::*;
        match self {
            ListContainers
            | GetBlobServiceProperties
            | GetBlobServiceStats
            | GetAccountInformation
            | GetContainerProperties
            | GetContainerMetadata
            | GetContainerAcl
            | ListBlobs
            | GetBlob
            | GetBlobProperties
            | GetBlobMetadata
            | GetBlockList
            | GetPageRanges
            | GetBlobTags
            | FindBlobsByTags
            | FindBlobsByTagsInContainer
            | CorsPreflight => true,
            SetBlobServiceProperties
            | CreateContainer
            | SetContainerMetadata
            | SetContainerAcl
            | DeleteContainer
            | RestoreContainer
            | LeaseContainer
            | PutBlob
            | CopyBlob
            | PutBlobFromUrl
            | SetBlobProperties
            | SetBlobMetadata
            | DeleteBlob
            | UndeleteBlob
            | SnapshotBlob
            | AbortCopyBlob
            | LeaseBlob
            | PutBlock
            | PutBlockFromUrl
            | PutBlockList
            | AppendBlock
            | AppendBlockFromUrl
            | PutPage
            | UploadPagesFromUrl
            | IncrementalCopyBlob
            | SetBlobTags
            | SealAppendBlob
            | SetBlobTier
            | SetBlobExpiry
            | BlobBatch
            | GetUserDelegationKey => false,
        }
    }
}

/// Calls the handler of `op`. Operations whose issue has not landed answer
/// `501 NotImplemented` like any other operation Stowage does not serve.
pub(crate) async fn dispatch(
    op: Operation,
    ctx: &RequestContext,
    body: actix_web::web::Payload,
) -> Result<HttpResponse, ApiError> {
    use Operation::*;
    match op {
        ListContainers => service::list_containers(ctx).await,
        SetBlobServiceProperties => service::set_blob_service_properties(ctx, body).await,
        GetBlobServiceProperties => service::get_blob_service_properties(ctx).await,
        GetBlobServiceStats => service::get_blob_service_stats(ctx),
        GetAccountInformation => service::get_account_information(ctx).await,
        GetUserDelegationKey => oauth::get_user_delegation_key(ctx, body).await,
        CreateContainer => container::create_container(ctx).await,
        GetContainerProperties => container::get_container_properties(ctx).await,
        GetContainerMetadata => container::get_container_metadata(ctx).await,
        SetContainerMetadata => container::set_container_metadata(ctx).await,
        DeleteContainer => container::delete_container(ctx).await,
        RestoreContainer => container::restore_container(ctx).await,
        ListBlobs => container::list_blobs(ctx).await,
        LeaseContainer => lease::lease_container(ctx).await,
        PutBlob => blob::put_blob(ctx, body).await,
        GetBlob => blob::get_blob(ctx).await,
        GetBlobProperties => blob::get_blob_properties(ctx).await,
        SetBlobProperties => blob::set_blob_properties(ctx).await,
        GetBlobMetadata => blob::get_blob_metadata(ctx).await,
        SetBlobMetadata => blob::set_blob_metadata(ctx).await,
        DeleteBlob => blob::delete_blob(ctx).await,
        UndeleteBlob => blob::undelete_blob(ctx).await,
        LeaseBlob => lease::lease_blob(ctx).await,
        PutBlock => block::put_block(ctx, body).await,
        PutBlockFromUrl => from_url::put_block_from_url(ctx).await,
        PutBlockList => block::put_block_list(ctx, body).await,
        GetBlockList => block::get_block_list(ctx).await,
        AppendBlock => append::append_block(ctx, body).await,
        AppendBlockFromUrl => from_url::append_block_from_url(ctx).await,
        PutBlobFromUrl => from_url::put_blob_from_url(ctx).await,
        SealAppendBlob => append::seal_append_blob(ctx).await,
        SnapshotBlob => copy::snapshot_blob(ctx).await,
        CopyBlob => copy::copy_blob(ctx).await,
        AbortCopyBlob => copy::abort_copy_blob(ctx).await,
        BlobBatch => batch::blob_batch(ctx, body).await,
        SetBlobTier => tiers::set_blob_tier(ctx).await,
        SetBlobExpiry => expiry::set_blob_expiry(ctx).await,
        GetContainerAcl => container::get_container_acl(ctx).await,
        SetContainerAcl => container::set_container_acl(ctx, body).await,
        CorsPreflight => cors::preflight_blob_request(&ctx.req, &ctx.state, ctx.account()).await,
        SetBlobTags => tags::set_blob_tags(ctx, body).await,
        GetBlobTags => tags::get_blob_tags(ctx).await,
        FindBlobsByTags | FindBlobsByTagsInContainer => tags::find_blobs_by_tags(ctx).await,
        PutPage => pages::put_page(ctx, body).await,
        UploadPagesFromUrl => pages::upload_pages_from_url(ctx).await,
        IncrementalCopyBlob => pages::incremental_copy_blob(ctx).await,
        GetPageRanges => pages::get_page_ranges(ctx).await,
    }
}

#[cfg(test)]
mod tests;
