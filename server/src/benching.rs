//! Entry points for the criterion benchmarks in `bench/`; not an API.
//!
//! The XML writers are `pub(crate)`, and the benchmarks are a separate
//! crate, so they reach them only through this module. Nothing in the
//! server calls it.
#![doc(hidden)]

use stowage_blobstore::ListBlobsOutput;

use crate::xml;

/// Renders the List Blobs document of `page`, with metadata, as the handler
/// does for `comp=list&include=metadata&maxresults=5000`; returns its size.
pub fn list_blobs_document(container: &str, page: &ListBlobsOutput) -> usize {
    let echo = xml::Echo {
        service_endpoint: "http://127.0.0.1:10000/devstoreaccount1/",
        max_results: Some("5000"),
        ..xml::Echo::default()
    };
    let include = xml::BlobInclude {
        metadata: true,
        copy: false,
        versions: false,
    };
    xml::list_blobs(&echo, container, page, include).len()
}
