//! The account-level client: where every other client comes from.

use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::Method;

use crate::listing::{self, ContainerItem, ContainerPage, ListContainersOptions};
use crate::pipeline::{ClientOptions, Pipeline, Request};
use crate::{Clock, ConnectionString, ContainerClient, Result};

/// A client for one storage account's blob service.
///
/// Cheap to clone: clones share one connection pool, retry policy and
/// clock.
///
/// ```no_run
/// use futures::TryStreamExt;
/// use stowage_client::{BlobServiceClient, ListContainersOptions};
///
/// # async fn demo() -> stowage_client::Result<()> {
/// // The emulator's development account on 127.0.0.1:10000.
/// let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
/// service.container("invoices").create_if_not_exists().await?;
/// // Every container whose name starts with "inv", page after page.
/// let names: Vec<String> = service
///     .list_containers(ListContainersOptions::default().with_prefix("inv"))
///     .map_ok(|c| c.name)
///     .try_collect()
///     .await?;
/// assert!(names.contains(&"invoices".to_owned()));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct BlobServiceClient {
    pub(crate) pipeline: Arc<Pipeline>,
}

impl BlobServiceClient {
    /// A client from a connection string, with default options.
    ///
    /// # Errors
    /// [`Error::InvalidConnectionString`](crate::Error::InvalidConnectionString)
    /// when the string cannot be used.
    pub fn from_connection_string(s: &str) -> Result<BlobServiceClient> {
        BlobServiceClient::new(&ConnectionString::parse(s)?, ClientOptions::default())
    }

    /// A client for `connection` with `options` (retry policy, clock,
    /// timeouts).
    ///
    /// # Errors
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) when the HTTP
    /// client cannot be built.
    pub fn new(connection: &ConnectionString, options: ClientOptions) -> Result<BlobServiceClient> {
        Ok(BlobServiceClient {
            pipeline: Arc::new(Pipeline::new(connection, options)?),
        })
    }

    /// The blob endpoint (`http://127.0.0.1:10000/devstoreaccount1`, …).
    pub fn endpoint(&self) -> &str {
        self.pipeline.endpoint()
    }

    /// The clock requests are dated with.
    pub fn clock(&self) -> Arc<dyn Clock> {
        self.pipeline.clock().clone()
    }

    /// A client for the container `name` (nothing is sent).
    pub fn container(&self, name: &str) -> ContainerClient {
        ContainerClient::new(self.pipeline.clone(), name)
    }

    /// One page of List Containers, starting at `marker`.
    ///
    /// # Errors
    /// Service and transport errors.
    pub async fn list_containers_page(
        &self,
        options: &ListContainersOptions,
        marker: Option<&str>,
    ) -> Result<ContainerPage> {
        let request = Request::new(Method::GET, "/".to_owned())
            .query("comp", "list")
            .query_opt("prefix", options.prefix.clone())
            .query_opt("marker", marker)
            .query_opt("maxresults", options.max_results.map(|n| n.to_string()))
            .query_opt("include", options.include_metadata.then_some("metadata"));
        let response = self.pipeline.send(request).await?;
        let text = response.text().await.map_err(transport)?;
        listing::parse_container_page(&text)
    }

    /// Every container, page after page.
    pub fn list_containers(
        &self,
        options: ListContainersOptions,
    ) -> BoxStream<'static, Result<ContainerItem>> {
        let client = self.clone();
        listing::paged(move |marker| {
            let client = client.clone();
            let options = options.clone();
            async move {
                let page = client
                    .list_containers_page(&options, marker.as_deref())
                    .await?;
                Ok((page.items, page.next_marker))
            }
        })
    }
}

/// A body that broke off while being read.
pub(crate) fn transport(source: reqwest::Error) -> crate::Error {
    crate::Error::Transport {
        attempts: 1,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_development_client_points_at_the_emulator_endpoint() {
        let service =
            BlobServiceClient::from_connection_string("UseDevelopmentStorage=true").unwrap();
        assert_eq!(service.endpoint(), crate::DEVELOPMENT_ENDPOINT);
        let blob = service.container("c").blob("a b/c");
        assert_eq!(
            blob.url(),
            "http://127.0.0.1:10000/devstoreaccount1/c/a%20b/c"
        );
        assert_eq!(
            blob.with_snapshot("2024-09-03T10:15:07.1234567Z").url(),
            "http://127.0.0.1:10000/devstoreaccount1/c/a%20b/c?snapshot=2024-09-03T10%3A15%3A07.1234567Z"
        );
        assert!(BlobServiceClient::from_connection_string("nonsense").is_err());
    }
}
