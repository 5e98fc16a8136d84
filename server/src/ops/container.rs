//! Container operations (docs/wire/containers.md#create-container).

use actix_web::HttpResponse;
use stowage_blobstore::{
    ConditionKind, ContainerName, CreateContainerInput, DeleteContainerInput, ListBlobsInput,
    PublicAccess, RestoreContainerInput, SetContainerAclInput, SetContainerMetadataInput,
    conditions,
};

use super::params;
use crate::error::ApiError;
use crate::request::RequestContext;
use crate::{response, xml};

fn public_access(ctx: &RequestContext) -> Result<Option<PublicAccess>, ApiError> {
    ctx.headers()
        .parse("x-ms-blob-public-access", PublicAccess::parse)
}

pub(crate) async fn create_container(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let input = CreateContainerInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        metadata: ctx.metadata()?,
        public_access: public_access(ctx)?,
        default_encryption_scope: h.get("x-ms-default-encryption-scope")?.map(str::to_owned),
        deny_encryption_scope_override: h.flag("x-ms-deny-encryption-scope-override")?,
    };
    let v = ctx.store().create_container(input).await?;
    let mut b = HttpResponse::Created();
    response::version(&mut b, &v);
    Ok(b.finish())
}

pub(crate) async fn get_container_properties(
    ctx: &RequestContext,
) -> Result<HttpResponse, ApiError> {
    let lease_id = ctx.headers().lease_id()?;
    let p = ctx
        .store()
        .get_container_properties(ctx.account(), &ctx.container()?, lease_id)
        .await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &p.version);
    response::metadata(&mut b, &p.metadata);
    response::lease(&mut b, &p.lease);
    if let Some(access) = p.public_access {
        b.insert_header(("x-ms-blob-public-access", access.as_str()));
    }
    b.insert_header(("x-ms-has-immutability-policy", "false"));
    b.insert_header(("x-ms-has-legal-hold", "false"));
    b.insert_header((
        "x-ms-default-encryption-scope",
        p.default_encryption_scope.as_str(),
    ));
    b.insert_header((
        "x-ms-deny-encryption-scope-override",
        if p.deny_encryption_scope_override {
            "true"
        } else {
            "false"
        },
    ));
    Ok(b.finish())
}

pub(crate) async fn get_container_metadata(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let lease_id = ctx.headers().lease_id()?;
    let p = ctx
        .store()
        .get_container_properties(ctx.account(), &ctx.container()?, lease_id)
        .await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &p.version);
    response::metadata(&mut b, &p.metadata);
    Ok(b.finish())
}

pub(crate) async fn set_container_metadata(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::ContainerModifiedSince)?;
    let input = SetContainerMetadataInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        metadata: ctx.metadata()?,
        conditions,
        lease_id: h.lease_id()?,
    };
    let v = ctx.store().set_container_metadata(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &v);
    Ok(b.finish())
}

pub(crate) async fn delete_container(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::ContainerDates)?;
    let input = DeleteContainerInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        conditions,
        lease_id: h.lease_id()?,
        retention: ctx
            .state
            .accounts
            .get(ctx.account())
            .and_then(|a| a.container_delete_retention()),
    };
    ctx.store().delete_container(input).await?;
    Ok(HttpResponse::Accepted().finish())
}

/// Restore Container (docs/wire/containers.md#restore-container): the
/// container named by `x-ms-deleted-container-name` and
/// `x-ms-deleted-container-version` comes back under the request's name.
pub(crate) async fn restore_container(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let name = h
        .get("x-ms-deleted-container-name")?
        .ok_or(ApiError::MissingRequiredHeader(
            "x-ms-deleted-container-name",
        ))?;
    let version =
        h.get("x-ms-deleted-container-version")?
            .ok_or(ApiError::MissingRequiredHeader(
                "x-ms-deleted-container-version",
            ))?;
    // A name no container can have names no deleted container either.
    let deleted_name =
        ContainerName::parse(name).map_err(|_| stowage_blobstore::Error::ContainerNotFound)?;
    let input = RestoreContainerInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        deleted_name,
        deleted_version: version.to_owned(),
    };
    ctx.store().restore_container(input).await?;
    Ok(HttpResponse::Created().finish())
}

/// The `include` options of List Blobs (docs/wire/listing.md#include-options).
const BLOB_INCLUDES: &[&str] = &[
    "snapshots",
    "metadata",
    "uncommittedblobs",
    "copy",
    "tags",
    "deleted",
    "versions",
    "deletedwithversions",
    "immutabilitypolicy",
    "legalhold",
    "permissions",
];

pub(crate) async fn list_blobs(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let q = &ctx.query;
    let include = params::include(q, BLOB_INCLUDES)?;
    let has = |o: &str| include.iter().any(|i| i == o);
    let delimiter = q.get("delimiter").filter(|d| !d.is_empty());
    if has("snapshots") && delimiter.is_some() {
        return Err(ApiError::InvalidQueryParameterValue {
            name: "include".into(),
            value: q.all("include").collect::<Vec<_>>().join(","),
        });
    }
    let container = ctx.container()?;
    let input = ListBlobsInput {
        account: ctx.account().to_owned(),
        container: container.clone(),
        prefix: q.get("prefix").unwrap_or_default().to_owned(),
        delimiter: delimiter.map(str::to_owned),
        marker: params::marker(q)?,
        max_results: params::max_results(q)?,
        include_snapshots: has("snapshots"),
        include_uncommitted: has("uncommittedblobs"),
        include_tags: has("tags"),
        include_versions: has("versions"),
        include_deleted: has("deleted"),
        include_deleted_with_versions: has("deletedwithversions"),
    };
    let out = ctx.store().list_blobs(input).await?;
    let endpoint = ctx.service_endpoint();
    let echo = xml::Echo {
        service_endpoint: &endpoint,
        prefix: q.get("prefix"),
        marker: q.get("marker"),
        max_results: q.get("maxresults"),
        delimiter: q.get("delimiter"),
    };
    let body = xml::list_blobs(
        &echo,
        container.as_str(),
        &out,
        xml::BlobInclude {
            metadata: has("metadata"),
            copy: has("copy"),
            versions: has("versions"),
        },
    );
    Ok(response::xml_document(&mut HttpResponse::Ok(), body))
}

pub(crate) async fn get_container_acl(ctx: &RequestContext) -> Result<HttpResponse, ApiError> {
    let lease_id = ctx.headers().lease_id()?;
    let acl = ctx
        .store()
        .get_container_acl(ctx.account(), &ctx.container()?, lease_id)
        .await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &acl.version);
    if let Some(access) = acl.public_access {
        b.insert_header(("x-ms-blob-public-access", access.as_str()));
    }
    Ok(b.content_type("application/xml")
        .body(xml::acl(&acl.policies)))
}

/// The largest Set Container ACL body accepted (five policies fit easily).
const MAX_ACL_BODY: usize = 16 * 1024;

pub(crate) async fn set_container_acl(
    ctx: &RequestContext,
    body: actix_web::web::Payload,
) -> Result<HttpResponse, ApiError> {
    let h = ctx.headers();
    let conditions = h.conditions()?;
    conditions::validate(&conditions, ConditionKind::ContainerDates)?;
    let bytes = super::service::collect_body(body, MAX_ACL_BODY).await?;
    let input = SetContainerAclInput {
        account: ctx.account().to_owned(),
        container: ctx.container()?,
        public_access: public_access(ctx)?,
        policies: xml::parse_acl(&bytes)?,
        conditions,
        lease_id: h.lease_id()?,
    };
    let v = ctx.store().set_container_acl(input).await?;
    let mut b = HttpResponse::Ok();
    response::version(&mut b, &v);
    Ok(b.finish())
}
