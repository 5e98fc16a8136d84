//! How much the store holds, for metrics.

use crate::meta;
use crate::{Result, Store, StoreUsage};

impl Store {
    /// Counts containers, blobs and bytes by account, extents, garbage and
    /// active leases. Aggregate queries over the whole database: for a
    /// metrics refresh now and then, not for every request.
    ///
    /// # Errors
    /// Database failures.
    pub async fn usage(&self) -> Result<StoreUsage> {
        let now = self.now();
        self.inner
            .db
            .call(move |conn| meta::store_usage(conn, now))
            .await
    }
}
