//! Timings of the store's calls to its two backends, reported to whoever
//! watches the store (the server's metrics). The store measures at one
//! place for each backend: [`crate::meta::Db`] for the metadata database,
//! [`crate::extents::Extents`] for the object store.

use std::fmt::Debug;
use std::time::Duration;

/// A call to the metadata database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MetadataCall {
    /// A read transaction (on a read connection or the blocking pool),
    /// waiting for a connection included.
    Read,
    /// A write, from queueing to the commit of its group.
    Write,
}

impl MetadataCall {
    /// The label of this call in metrics.
    pub fn name(self) -> &'static str {
        match self {
            MetadataCall::Read => "read",
            MetadataCall::Write => "write",
        }
    }
}

/// A call to the object store that keeps the extents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectCall {
    /// One `put` of a whole extent (bodies up to one part).
    Put,
    /// The end of a multipart upload: its last part, flush and rename.
    CompleteMultipart,
    /// Opening a read of a range (until the first bytes can flow).
    Get,
    /// Deleting an extent.
    Delete,
    /// Listing the extents (at start-up).
    List,
}

impl ObjectCall {
    /// The label of this call in metrics.
    pub fn name(self) -> &'static str {
        match self {
            ObjectCall::Put => "put",
            ObjectCall::CompleteMultipart => "complete_multipart",
            ObjectCall::Get => "get",
            ObjectCall::Delete => "delete",
            ObjectCall::List => "list",
        }
    }
}

/// Receives the duration of every backend call of a store
/// ([`crate::StoreConfig::with_observer`]). Called on the request's thread:
/// it must be cheap and must not block.
pub trait StoreObserver: Send + Sync + Debug {
    /// A metadata database call took `elapsed`.
    fn metadata(&self, call: MetadataCall, elapsed: Duration);
    /// An object store call took `elapsed`.
    fn object_store(&self, call: ObjectCall, elapsed: Duration);
}
