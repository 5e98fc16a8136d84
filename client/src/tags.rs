//! Blob index tags: Set / Get Blob Tags and Find Blobs by Tags at account
//! and container scope, with the `x-ms-if-tags` condition in
//! [`Conditions::with_if_tags`](crate::Conditions::with_if_tags).

use std::collections::BTreeMap;

use bytes::Bytes;
use reqwest::Method;

use crate::pipeline::Request;
use crate::service::transport;
use crate::xml::{self, Element};
use crate::{BlobClient, BlobServiceClient, Conditions, ContainerClient, Result};

/// A blob's index tags: at most 10, keys case-sensitive and unique. The
/// service checks the rules; this type only holds the pairs, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags(BTreeMap<String, String>);

impl Tags {
    /// No tags.
    pub fn new() -> Tags {
        Tags::default()
    }

    /// Builder form of [`Tags::insert`].
    pub fn with(mut self, key: impl Into<String>, value: impl Into<String>) -> Tags {
        self.insert(key, value);
        self
    }

    /// Sets `key` and returns its previous value.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<String>) -> Option<String> {
        self.0.insert(key.into(), value.into())
    }

    /// The value of `key` (case-sensitive).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// The pairs, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many tags.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `x-ms-tags` form: `k1=v1&k2=v2`, percent-encoded.
    pub(crate) fn header_value(&self) -> String {
        let enc = |s: &str| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        self.iter()
            .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn document(&self) -> String {
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet>");
        for (k, v) in self.iter() {
            s.push_str(&format!(
                "<Tag><Key>{}</Key><Value>{}</Value></Tag>",
                xml::escape_text(k),
                xml::escape_text(v)
            ));
        }
        s.push_str("</TagSet></Tags>");
        s
    }

    fn from_element(tags: Option<&Element>) -> Tags {
        let mut out = Tags::new();
        let set = tags.and_then(|t| t.child("TagSet"));
        for tag in set.iter().flat_map(|s| s.children.iter()) {
            if let Some(k) = tag.text_of("Key") {
                out.insert(k, tag.text_of("Value").unwrap_or_default());
            }
        }
        out
    }
}

impl<K: Into<String>, V: Into<String>, const N: usize> From<[(K, V); N]> for Tags {
    fn from(pairs: [(K, V); N]) -> Tags {
        let mut t = Tags::new();
        for (k, v) in pairs {
            t.insert(k, v);
        }
        t
    }
}

/// One blob found by Find Blobs by Tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedBlob {
    /// Its container.
    pub container: String,
    /// Its name.
    pub name: String,
    /// Its tags that the expression names.
    pub tags: Tags,
}

/// One page of Find Blobs by Tags.
#[derive(Debug, Clone, Default)]
pub struct TaggedBlobPage {
    /// The blobs of this page.
    pub blobs: Vec<TaggedBlob>,
    /// The marker of the next page, when there may be one.
    pub next_marker: Option<String>,
}

fn parse_page(text: &str) -> Result<TaggedBlobPage> {
    let root = xml::parse(text)?;
    let blobs = root
        .child("Blobs")
        .map(|b| {
            b.children
                .iter()
                .filter(|c| c.name == "Blob")
                .map(|b| TaggedBlob {
                    container: b.text_of("ContainerName").unwrap_or_default().to_owned(),
                    name: b.text_of("Name").unwrap_or_default().to_owned(),
                    tags: Tags::from_element(b.child("Tags")),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(TaggedBlobPage {
        blobs,
        next_marker: root.non_empty("NextMarker"),
    })
}

fn find_request(
    path: String,
    container: bool,
    expression: &str,
    marker: Option<&str>,
    max_results: Option<u32>,
) -> Request {
    let request = Request::new(Method::GET, path);
    let request = if container {
        request.query("restype", "container")
    } else {
        request
    };
    request
        .query("comp", "blobs")
        .query("where", expression)
        .query_opt("marker", marker)
        .query_opt("maxresults", max_results.map(|n| n.to_string()))
}

impl BlobClient {
    /// Set Blob Tags: replaces the tags of the blob (or, on a snapshot
    /// client, of that snapshot). The ETag and Last-Modified do not change.
    /// Of `conditions`, only the tag condition and the lease id apply.
    ///
    /// # Errors
    /// `404 BlobNotFound`; `400 TagsTooLarge`, `EmptyTagName`, `InvalidTag`;
    /// `412 ConditionNotMet`.
    pub async fn set_tags(&self, tags: &Tags, conditions: &Conditions) -> Result<()> {
        let request = self
            .request(Method::PUT)
            .query("comp", "tags")
            .header("content-type", "application/xml; charset=utf-8")
            .header_opt("x-ms-if-tags", conditions.if_tags.clone())
            .header_opt(
                "x-ms-lease-id",
                conditions.lease_id.map(|id| id.to_string()),
            )
            .body(Bytes::from(tags.document()));
        self.pipeline.send(request).await?;
        Ok(())
    }

    /// Get Blob Tags.
    ///
    /// # Errors
    /// `404 BlobNotFound`; `412 ConditionNotMet`.
    pub async fn get_tags(&self, conditions: &Conditions) -> Result<Tags> {
        let request = self
            .request(Method::GET)
            .query("comp", "tags")
            .header_opt("x-ms-if-tags", conditions.if_tags.clone())
            .header_opt(
                "x-ms-lease-id",
                conditions.lease_id.map(|id| id.to_string()),
            );
        let response = self.pipeline.send(request).await?;
        let text = response.text().await.map_err(transport)?;
        let root = xml::parse(&text)?;
        Ok(Tags::from_element(Some(&root)))
    }
}

impl BlobServiceClient {
    /// Find Blobs by Tags across the account: one page of the base blobs
    /// whose tags meet `expression` (`"k" = 'v' AND "n" >= '1'`, with
    /// `@container = 'name'` to narrow it).
    ///
    /// # Errors
    /// `400 InvalidQueryParameterValue` for an expression the service
    /// cannot read.
    pub async fn find_blobs_by_tags(
        &self,
        expression: &str,
        marker: Option<&str>,
        max_results: Option<u32>,
    ) -> Result<TaggedBlobPage> {
        let request = find_request("/".to_owned(), false, expression, marker, max_results);
        let response = self.pipeline.send(request).await?;
        parse_page(&response.text().await.map_err(transport)?)
    }
}

impl ContainerClient {
    /// Find Blobs by Tags in this container: one page.
    ///
    /// # Errors
    /// `404 ContainerNotFound`; `400 InvalidQueryParameterValue`.
    pub async fn find_blobs_by_tags(
        &self,
        expression: &str,
        marker: Option<&str>,
        max_results: Option<u32>,
    ) -> Result<TaggedBlobPage> {
        let request = find_request(self.path(), true, expression, marker, max_results);
        let response = self.pipeline.send(request).await?;
        parse_page(&response.text().await.map_err(transport)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_document_forms() {
        let t = Tags::from([("project", "a b"), ("path", "x/y")]);
        assert_eq!(t.header_value(), "path=x%2Fy&project=a%20b");
        assert!(
            t.document()
                .contains("<Tag><Key>project</Key><Value>a b</Value></Tag>")
        );
    }

    #[test]
    fn pages_parse() {
        let page = parse_page(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"x\">\
             <Where>\"k\" = 'v'</Where><Blobs><Blob><Name>b</Name><ContainerName>c</ContainerName>\
             <Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags></Blob></Blobs>\
             <NextMarker>abc</NextMarker></EnumerationResults>",
        )
        .unwrap();
        assert_eq!(
            page.blobs,
            vec![TaggedBlob {
                container: "c".into(),
                name: "b".into(),
                tags: Tags::from([("k", "v")]),
            }]
        );
        assert_eq!(page.next_marker.as_deref(), Some("abc"));
    }
}
