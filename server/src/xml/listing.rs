//! The `EnumerationResults` documents of List Containers and List Blobs
//! (docs/wire/listing.md#list-containers, docs/wire/listing.md#list-blobs).

use base64::Engine as _;
use stowage_blobstore::{
    BlobListItem, BlobProperties, BlobType, ContainerProperties, LeaseState, ListBlobsOutput,
    ListContainersOutput, Metadata,
};

use super::{Document, XmlWriter};
use crate::http_dates::http_date;

/// The request parameters a listing echoes, as sent.
#[derive(Debug, Default)]
pub(crate) struct Echo<'a> {
    pub service_endpoint: &'a str,
    pub prefix: Option<&'a str>,
    pub marker: Option<&'a str>,
    pub max_results: Option<&'a str>,
    pub delimiter: Option<&'a str>,
}

fn echo(w: &mut XmlWriter, e: &Echo<'_>) {
    w.optional("Prefix", e.prefix);
    w.optional("Marker", e.marker);
    w.optional("MaxResults", e.max_results);
    w.optional("Delimiter", e.delimiter);
}

fn metadata(w: &mut XmlWriter, m: &Metadata) {
    if m.is_empty() {
        w.empty("Metadata");
        return;
    }
    w.open("Metadata");
    for (name, value) in m.pairs() {
        w.element(name, value);
    }
    w.close("Metadata");
}

fn lease(w: &mut XmlWriter, l: &stowage_blobstore::LeaseProperties) {
    w.element("LeaseStatus", l.status.as_str());
    w.element("LeaseState", l.state.as_str());
    if l.state == LeaseState::Leased {
        w.optional("LeaseDuration", l.duration.map(|d| d.as_str()));
    }
}

pub(crate) fn list_containers(
    e: &Echo<'_>,
    out: &ListContainersOutput,
    include_metadata: bool,
) -> Document {
    let mut w = XmlWriter::new();
    w.open_with(
        "EnumerationResults",
        &[("ServiceEndpoint", e.service_endpoint)],
    );
    echo(&mut w, e);
    if out.containers.is_empty() {
        w.empty("Containers");
    } else {
        w.open("Containers");
        for c in &out.containers {
            container(&mut w, c, include_metadata);
        }
        w.close("Containers");
    }
    let next = out
        .next_marker
        .as_ref()
        .map(|m| m.encode())
        .unwrap_or_default();
    w.element("NextMarker", &next);
    w.close("EnumerationResults");
    w.finish_document()
}

fn container(w: &mut XmlWriter, c: &ContainerProperties, include_metadata: bool) {
    w.open("Container");
    w.element("Name", &c.name);
    if let Some(d) = &c.deleted {
        w.element("Deleted", "true");
        w.element("Version", &d.version);
    }
    w.open("Properties");
    w.element("Last-Modified", &http_date(c.version.last_modified));
    // Quoted here, unlike List Blobs (docs/wire/listing.md#list-containers, unverified).
    w.element("Etag", &c.version.etag.quoted());
    if c.deleted.is_some() {
        // What the service lists for a deleted container's lease.
        w.element("LeaseStatus", "unlocked");
        w.element("LeaseState", "expired");
    } else {
        lease(w, &c.lease);
    }
    w.optional("PublicAccess", c.public_access.map(|p| p.as_str()));
    w.element("HasImmutabilityPolicy", "false");
    w.element("HasLegalHold", "false");
    w.element("DefaultEncryptionScope", &c.default_encryption_scope);
    w.element(
        "DenyEncryptionScopeOverride",
        if c.deny_encryption_scope_override {
            "true"
        } else {
            "false"
        },
    );
    if let Some(d) = &c.deleted {
        w.element("DeletedTime", &http_date(d.deleted_time));
        w.element(
            "RemainingRetentionDays",
            &d.remaining_retention_days.to_string(),
        );
    }
    w.close("Properties");
    if include_metadata {
        metadata(w, &c.metadata);
    }
    w.close("Container");
}

/// Which optional parts of each `<Blob>` a List Blobs request asked for.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlobInclude {
    pub metadata: bool,
    pub copy: bool,
    /// `include=versions`: `VersionId` and `IsCurrentVersion`.
    pub versions: bool,
}

pub(crate) fn list_blobs(
    e: &Echo<'_>,
    container: &str,
    out: &ListBlobsOutput,
    include: BlobInclude,
) -> Document {
    let mut w = XmlWriter::new();
    w.open_with(
        "EnumerationResults",
        &[
            ("ServiceEndpoint", e.service_endpoint),
            ("ContainerName", container),
        ],
    );
    echo(&mut w, e);
    if out.items.is_empty() {
        w.empty("Blobs");
    } else {
        w.open("Blobs");
        for item in &out.items {
            match item {
                BlobListItem::Blob {
                    properties,
                    committed,
                    has_versions_only,
                } => blob(&mut w, properties, *committed, *has_versions_only, include),
                BlobListItem::Prefix(name) => {
                    w.open("BlobPrefix")
                        .element("Name", name)
                        .close("BlobPrefix");
                }
            }
        }
        w.close("Blobs");
    }
    let next = out
        .next_marker
        .as_ref()
        .map(|m| m.encode())
        .unwrap_or_default();
    w.element("NextMarker", &next);
    w.close("EnumerationResults");
    w.finish_document()
}

fn blob(
    w: &mut XmlWriter,
    b: &BlobProperties,
    committed: bool,
    has_versions_only: bool,
    include: BlobInclude,
) {
    w.open("Blob");
    w.element("Name", &b.name);
    w.optional("Snapshot", b.snapshot.as_deref());
    if include.versions {
        w.optional("VersionId", b.version_id.as_deref());
        if let (Some(true), Some(_)) = (b.is_current_version, &b.version_id) {
            w.element("IsCurrentVersion", "true");
        }
    }
    if b.deleted.is_some() {
        w.element("Deleted", "true");
    }
    if has_versions_only {
        w.element("HasVersionsOnly", "true");
    }
    w.open("Properties");
    w.element("Creation-Time", &http_date(b.creation_time));
    if committed {
        w.element("Last-Modified", &http_date(b.version.last_modified));
        if let Some(at) = b.expires_on {
            w.element("Expiry-Time", &http_date(at));
        }
        w.element("Etag", b.version.etag.as_str());
    }
    w.element("Content-Length", &b.size.to_string());
    if committed {
        let c = &b.content;
        w.element("Content-Type", c.content_type.as_deref().unwrap_or(""));
        w.element(
            "Content-Encoding",
            c.content_encoding.as_deref().unwrap_or(""),
        );
        w.element(
            "Content-Language",
            c.content_language.as_deref().unwrap_or(""),
        );
        let md5 = c
            .content_md5
            .as_ref()
            .map(|m| base64::engine::general_purpose::STANDARD.encode(m))
            .unwrap_or_default();
        w.element("Content-MD5", &md5);
        w.element(
            "Content-Disposition",
            c.content_disposition.as_deref().unwrap_or(""),
        );
        w.element("Cache-Control", c.cache_control.as_deref().unwrap_or(""));
    }
    if let Some(page) = &b.page {
        w.element(
            "x-ms-blob-sequence-number",
            &page.sequence_number.to_string(),
        );
    }
    w.element("BlobType", b.blob_type.as_str());
    if b.snapshot.is_none() && b.is_current_version != Some(false) && b.deleted.is_none() {
        lease(w, &b.lease);
    }
    if let (true, Some(copy)) = (include.copy, &b.copy) {
        w.element("CopyId", &copy.id);
        w.element("CopyStatus", copy.status_str());
        w.element("CopySource", &copy.source);
        w.element("CopyProgress", &copy.progress);
        if !copy.pending {
            w.element("CopyCompletionTime", &http_date(copy.completion_time));
        }
        if let Some(description) = &copy.description {
            w.element("CopyStatusDescription", description);
        }
    }
    if let (true, Some(page)) = (include.copy, &b.page) {
        if page.incremental_copy {
            w.element("IncrementalCopy", "true");
        }
        w.optional(
            "CopyDestinationSnapshot",
            page.copy_destination_snapshot.as_deref(),
        );
    }
    w.element("ServerEncrypted", "true");
    if b.blob_type == BlobType::BlockBlob {
        let t = &b.tier;
        w.element("AccessTier", t.tier.as_str());
        if t.inferred {
            w.element("AccessTierInferred", "true");
        }
        if let Some(status) = t.archive_status() {
            w.element("ArchiveStatus", &status);
        }
        if let Some(at) = t.changed_at {
            w.element("AccessTierChangeTime", &http_date(at));
        }
        if let Some(p) = t.rehydrate_priority {
            w.element("RehydratePriority", p.as_str());
        }
    }
    // Only for a sealed append blob, like `x-ms-blob-sealed`: the
    // service's recorded listings give an open append blob no `<Sealed>`.
    if b.blob_type == BlobType::AppendBlob && b.sealed {
        w.element("Sealed", "true");
    }
    if let Some(d) = &b.deleted {
        w.element("DeletedTime", &http_date(d.deleted_time));
        w.element(
            "RemainingRetentionDays",
            &d.remaining_retention_days.to_string(),
        );
    }
    // Filled with `include=tags`, and only for a blob that has tags.
    if b.tag_count > 0 {
        w.element("TagCount", &b.tag_count.to_string());
    }
    w.close("Properties");
    if include.metadata && committed {
        metadata(w, &b.metadata);
    }
    if let Some(tags) = b.tags.as_ref().filter(|t| !t.is_empty()) {
        super::write_tags(w, tags);
    }
    w.close("Blob");
}
