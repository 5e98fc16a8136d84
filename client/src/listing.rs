//! List Containers and List Blobs (docs/wire/listing.md): options, pages, and
//! streams that follow `NextMarker` until it is empty.

use std::future::Future;
use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};

use crate::xml::{self, Element};
use crate::{BlobProperties, ContainerProperties, Error, Result};

/// What to list of the account's containers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListContainersOptions {
    /// Only names starting with this.
    pub prefix: Option<String>,
    /// Page size (the service caps it at 5000).
    pub max_results: Option<u32>,
    /// Whether each entry carries its metadata.
    pub include_metadata: bool,
}

impl ListContainersOptions {
    /// Only names starting with `prefix`.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// At most `n` entries per page.
    pub fn with_max_results(mut self, n: u32) -> Self {
        self.max_results = Some(n);
        self
    }

    /// Include each container's metadata.
    pub fn with_metadata(mut self) -> Self {
        self.include_metadata = true;
        self
    }
}

/// One container of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerItem {
    /// The container's name.
    pub name: String,
    /// Its properties (metadata only when asked for).
    pub properties: ContainerProperties,
}

/// One page of List Containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerPage {
    /// The containers, in name order.
    pub items: Vec<ContainerItem>,
    /// The marker for the next page, `None` on the last page.
    pub next_marker: Option<String>,
}

/// What to list of a container's blobs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListBlobsOptions {
    /// Only names starting with this.
    pub prefix: Option<String>,
    /// Group names by this delimiter into [`BlobEntry::Prefix`] entries.
    pub delimiter: Option<String>,
    /// Page size (the service caps it at 5000).
    pub max_results: Option<u32>,
    /// Include each blob's metadata.
    pub include_metadata: bool,
    /// Include snapshots (oldest first, before their base blob).
    pub include_snapshots: bool,
    /// Include copy properties.
    pub include_copy: bool,
    /// Include block blobs that have only uncommitted blocks.
    pub include_uncommitted: bool,
    /// Include previous versions (`include=versions`).
    pub include_versions: bool,
    /// Include soft-deleted blobs, snapshots and (with versions) versions
    /// (`include=deleted`).
    pub include_deleted: bool,
    /// Include the names that have only previous versions left, marked
    /// [`BlobItem::has_versions_only`] (`include=deletedwithversions`).
    pub include_deleted_with_versions: bool,
}

impl ListBlobsOptions {
    /// Only names starting with `prefix`.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Hierarchical listing with `delimiter` (usually `/`).
    pub fn with_delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = Some(delimiter.into());
        self
    }

    /// At most `n` entries per page.
    pub fn with_max_results(mut self, n: u32) -> Self {
        self.max_results = Some(n);
        self
    }

    /// Include metadata.
    pub fn with_metadata(mut self) -> Self {
        self.include_metadata = true;
        self
    }

    /// Include snapshots.
    pub fn with_snapshots(mut self) -> Self {
        self.include_snapshots = true;
        self
    }

    /// Include copy properties.
    pub fn with_copy(mut self) -> Self {
        self.include_copy = true;
        self
    }

    /// Include uncommitted-only blobs.
    pub fn with_uncommitted(mut self) -> Self {
        self.include_uncommitted = true;
        self
    }

    /// Include previous versions.
    pub fn with_versions(mut self) -> Self {
        self.include_versions = true;
        self
    }

    /// Include soft-deleted entries.
    pub fn with_deleted(mut self) -> Self {
        self.include_deleted = true;
        self
    }

    /// Include names whose current version was deleted but whose previous
    /// versions remain.
    pub fn with_deleted_with_versions(mut self) -> Self {
        self.include_deleted_with_versions = true;
        self
    }

    pub(crate) fn include(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.include_metadata {
            parts.push("metadata");
        }
        if self.include_snapshots {
            parts.push("snapshots");
        }
        if self.include_copy {
            parts.push("copy");
        }
        if self.include_uncommitted {
            parts.push("uncommittedblobs");
        }
        if self.include_versions {
            parts.push("versions");
        }
        if self.include_deleted {
            parts.push("deleted");
        }
        if self.include_deleted_with_versions {
            parts.push("deletedwithversions");
        }
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

/// One blob (or snapshot, or version) of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobItem {
    /// The blob's name.
    pub name: String,
    /// The snapshot id, for snapshot entries.
    pub snapshot: Option<String>,
    /// The version id (`<VersionId>`), when versioning is on; the same as
    /// [`BlobProperties::version_id`].
    pub version_id: Option<String>,
    /// Whether the entry is the blob's current version (`<IsCurrentVersion>`).
    pub is_current_version: bool,
    /// Whether the entry is soft-deleted (`<Deleted>`).
    pub deleted: bool,
    /// Whether the name has only previous versions left (`<HasVersionsOnly>`,
    /// with [`ListBlobsOptions::with_deleted_with_versions`]).
    pub has_versions_only: bool,
    /// Its properties (metadata only when asked for).
    pub properties: BlobProperties,
}

/// An entry of a blob listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobEntry {
    /// A blob or snapshot.
    Blob(Box<BlobItem>),
    /// A group of names sharing a prefix up to the delimiter (hierarchical
    /// listings only); list again with this prefix to descend.
    Prefix(String),
}

/// One page of List Blobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobPage {
    /// Blobs and prefixes, interleaved in listing order.
    pub entries: Vec<BlobEntry>,
    /// The marker for the next page, `None` on the last page.
    pub next_marker: Option<String>,
}

fn enumeration(text: &str) -> Result<Element> {
    let root = xml::parse(text)?;
    if root.name != "EnumerationResults" {
        return Err(Error::InvalidResponse(format!(
            "expected EnumerationResults, got {}",
            root.name
        )));
    }
    Ok(root)
}

pub(crate) fn parse_container_page(text: &str) -> Result<ContainerPage> {
    let root = enumeration(text)?;
    let items = root
        .child("Containers")
        .map(|c| {
            c.children
                .iter()
                .filter(|e| e.name == "Container")
                .map(|e| ContainerItem {
                    name: e.text_of("Name").unwrap_or_default().to_owned(),
                    properties: ContainerProperties::from_listing(e),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(ContainerPage {
        items,
        next_marker: root.non_empty("NextMarker"),
    })
}

pub(crate) fn parse_blob_page(text: &str) -> Result<BlobPage> {
    let root = enumeration(text)?;
    let entries = root
        .child("Blobs")
        .map(|b| {
            b.children
                .iter()
                .filter_map(|e| match e.name.as_str() {
                    "Blob" => Some(BlobEntry::Blob(Box::new(BlobItem {
                        name: e.text_of("Name").unwrap_or_default().to_owned(),
                        snapshot: e.non_empty("Snapshot"),
                        version_id: e.non_empty("VersionId"),
                        is_current_version: e.text_of("IsCurrentVersion") == Some("true"),
                        deleted: e.text_of("Deleted") == Some("true"),
                        has_versions_only: e.text_of("HasVersionsOnly") == Some("true"),
                        properties: BlobProperties::from_listing(e),
                    }))),
                    "BlobPrefix" => Some(BlobEntry::Prefix(
                        e.text_of("Name").unwrap_or_default().to_owned(),
                    )),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(BlobPage {
        entries,
        next_marker: root.non_empty("NextMarker"),
    })
}

/// A stream of every item of every page: `fetch(marker)` returns one page's
/// items and the next marker; the stream ends after a page without one.
pub(crate) fn paged<T, F, Fut>(fetch: F) -> BoxStream<'static, Result<T>>
where
    T: Send + 'static,
    F: Fn(Option<String>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(Vec<T>, Option<String>)>> + Send + 'static,
{
    let fetch = Arc::new(fetch);
    stream::try_unfold(Some(None::<String>), move |state| {
        let fetch = fetch.clone();
        async move {
            let Some(marker) = state else {
                return Ok::<_, Error>(None);
            };
            let (items, next) = fetch(marker).await?;
            Ok(Some((items, next.map(Some))))
        }
    })
    .map_ok(|items: Vec<T>| stream::iter(items.into_iter().map(Ok::<T, Error>)))
    .try_flatten()
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hierarchical_page_interleaves_blobs_and_prefixes() {
        // docs/wire/listing.md#a-worked-example, `delimiter=/&maxresults=2`.
        let doc = r#"<?xml version="1.0" encoding="utf-8"?>
<EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1/" ContainerName="data">
  <MaxResults>2</MaxResults>
  <Delimiter>/</Delimiter>
  <Blobs>
    <Blob>
      <Name>README.md</Name>
      <Properties>
        <Etag>0x8DCCB1A2B3C4D5E</Etag>
        <Content-Length>42</Content-Length>
        <BlobType>BlockBlob</BlobType>
      </Properties>
    </Blob>
    <BlobPrefix>
      <Name>logs/</Name>
    </BlobPrefix>
  </Blobs>
  <NextMarker>AQAAAGxvZ3Mv</NextMarker>
</EnumerationResults>"#;
        let page = parse_blob_page(doc).unwrap();
        assert_eq!(page.next_marker.as_deref(), Some("AQAAAGxvZ3Mv"));
        assert_eq!(page.entries.len(), 2);
        match &page.entries[0] {
            BlobEntry::Blob(b) => {
                assert_eq!(b.name, "README.md");
                assert_eq!(b.properties.content_length, 42);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(page.entries[1], BlobEntry::Prefix("logs/".into()));
    }

    #[test]
    fn an_empty_last_page_has_no_marker() {
        let doc = "<EnumerationResults><Containers /><NextMarker /></EnumerationResults>";
        let page = parse_container_page(doc).unwrap();
        assert!(page.items.is_empty());
        assert_eq!(page.next_marker, None);
    }

    #[test]
    fn include_lists_the_chosen_options() {
        assert_eq!(ListBlobsOptions::default().include(), None);
        let all = ListBlobsOptions::default()
            .with_metadata()
            .with_snapshots()
            .with_copy()
            .with_uncommitted()
            .with_versions()
            .with_deleted()
            .with_deleted_with_versions();
        assert_eq!(
            all.include().as_deref(),
            Some("metadata,snapshots,copy,uncommittedblobs,versions,deleted,deletedwithversions")
        );
    }

    #[test]
    fn version_and_deletion_fields_are_read() {
        // The shape of a List Blobs answer with include=versions,deleted
        // (https://learn.microsoft.com/en-us/rest/api/storageservices/list-blobs).
        let doc = r#"<EnumerationResults><Blobs>
  <Blob>
    <Name>a</Name>
    <VersionId>2024-09-03T10:15:07.1234567Z</VersionId>
    <Deleted>true</Deleted>
    <Properties>
      <Etag>0x1</Etag>
      <Content-Length>3</Content-Length>
      <DeletedTime>Tue, 03 Sep 2024 10:15:08 GMT</DeletedTime>
      <RemainingRetentionDays>7</RemainingRetentionDays>
    </Properties>
  </Blob>
  <Blob>
    <Name>a</Name>
    <VersionId>2024-09-03T10:15:08.0000000Z</VersionId>
    <IsCurrentVersion>true</IsCurrentVersion>
    <Properties><Etag>0x2</Etag></Properties>
  </Blob>
  <Blob>
    <Name>b</Name>
    <HasVersionsOnly>true</HasVersionsOnly>
    <Properties />
  </Blob>
</Blobs><NextMarker /></EnumerationResults>"#;
        let page = parse_blob_page(doc).unwrap();
        let items: Vec<&BlobItem> = page
            .entries
            .iter()
            .map(|e| match e {
                BlobEntry::Blob(b) => &**b,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            items[0].version_id.as_deref(),
            Some("2024-09-03T10:15:07.1234567Z")
        );
        assert!(items[0].deleted && !items[0].is_current_version);
        assert_eq!(items[0].properties.remaining_retention_days, Some(7));
        assert!(items[0].properties.deleted_time.is_some());
        assert!(items[1].is_current_version && !items[1].deleted);
        assert_eq!(items[1].properties.version_id, items[1].version_id);
        assert!(items[2].has_versions_only && items[2].version_id.is_none());
    }
}
