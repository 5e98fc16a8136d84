//! Table locks: pessimistic access to a table through a lease on one lock
//! blob per table, with a fencing token.
//!
//! The lock blob (`<table>.lock`, created on first use together with its
//! container) is leased for a fixed duration and renewed in the background
//! at a shorter interval. The fencing token is a counter in the metadata of
//! a second blob, `<table>.fence`, that this pattern never deletes, so
//! tokens keep growing for the life of the container even when someone
//! deletes the lock blob (which would otherwise start the count again at
//! 1, below a stale holder's token). On acquiring, the new holder adds one
//! to the counter with `If-Match` on the counter's ETag (retrying when
//! another writer got there first), then writes the token into the lock
//! blob's metadata **under its lease**; only a holder whose lease
//! outlived its increment succeeds, so of the holders that got a lock each
//! one's token is greater than every earlier holder's. A table engine that
//! records the highest token it has seen can refuse a writer presenting an
//! older one — a holder that paused past its lease (GC, network partition)
//! and does not know it lost it yet.
//!
//! Why a blob and not the container's metadata: Set Container Metadata
//! takes no `If-Match` (only `If-Modified-Since` and a lease), so two
//! increments could not be told apart, and the container's 8 KiB of
//! metadata would bound the number of tables. A lock blob written by an
//! earlier version (token in its own metadata, no counter) is counted
//! from: the counter starts above the larger of the two.
//!
//! A holder learns it lost the lease at its next renewal at the latest:
//! when the service refuses the renewal (the lease was broken, expired and
//! taken, or the blob deleted), or when renewals have failed for a whole
//! lease duration. [`TableLock::is_held`] and [`TableLock::lost`] report
//! it. Dropping a lock releases it (in the background); [`TableLock::release`]
//! does so and waits.
//!
//! ```no_run
//! use std::time::Duration;
//! use stowage_client::BlobServiceClient;
//! use stowage_client::patterns::table_lock::{TableLockSettings, TableLocks};
//!
//! # async fn demo() -> stowage_client::Result<()> {
//! let service = BlobServiceClient::from_connection_string("UseDevelopmentStorage=true")?;
//! let locks = TableLocks::new(service.container("locks"), TableLockSettings::default());
//!
//! let first = locks.acquire("orders", Duration::from_secs(30)).await?;
//! let first_token = first.token();
//! // The table engine records the highest token it has seen, and takes a
//! // write only with a token at least that high. `check` fails once the
//! // lease is lost, so a holder never presents a token it no longer owns.
//! let mut highest_seen = first.check()?;
//! first.release().await?;
//!
//! let second = locks.acquire("orders", Duration::from_secs(30)).await?;
//! assert!(second.token() > first_token);
//! highest_seen = highest_seen.max(second.check()?);
//! // A paused former holder presenting `first_token` is refused now.
//! assert!(first_token < highest_seen);
//! second.release().await?;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::{
    BlobClient, Clock, Conditions, ContainerClient, Error, ErrorCode, LeaseClient, LeaseDuration,
    LeaseId, Metadata, Result, UploadOptions,
};

/// The metadata name of the fencing token (on the counter blob and the
/// lock blob).
pub const TOKEN_METADATA: &str = "fencingtoken";

/// Lease timing of table locks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableLockSettings {
    /// The lease's duration: 15 to 60 s. A crashed holder's lock is free
    /// again after at most this long.
    pub lease_duration: Duration,
    /// How often the holder renews; well under the lease duration, and the
    /// bound on how late a holder learns that it lost the lock.
    pub renew_interval: Duration,
    /// How long [`TableLocks::acquire`] waits between attempts.
    pub retry_interval: Duration,
}

impl Default for TableLockSettings {
    fn default() -> TableLockSettings {
        TableLockSettings {
            lease_duration: Duration::from_secs(30),
            renew_interval: Duration::from_secs(10),
            retry_interval: Duration::from_secs(1),
        }
    }
}

impl TableLockSettings {
    /// Lease duration (clamped to 15–60 s, whole seconds).
    pub fn with_lease_duration(mut self, d: Duration) -> Self {
        self.lease_duration = Duration::from_secs(d.as_secs().clamp(15, 60));
        self
    }

    /// Renewal interval.
    pub fn with_renew_interval(mut self, d: Duration) -> Self {
        self.renew_interval = d;
        self
    }

    /// Wait between acquire attempts.
    pub fn with_retry_interval(mut self, d: Duration) -> Self {
        self.retry_interval = d;
        self
    }
}

/// Hands out locks on tables, one lock blob per table in one container.
#[derive(Debug, Clone)]
pub struct TableLocks {
    container: ContainerClient,
    settings: TableLockSettings,
}

impl TableLocks {
    /// Locks whose blobs live in `container` (created on first use).
    pub fn new(container: ContainerClient, settings: TableLockSettings) -> TableLocks {
        TableLocks {
            container,
            settings,
        }
    }

    /// The lock blob of `table`.
    pub fn lock_blob(&self, table: &str) -> BlobClient {
        self.container.blob(&format!("{table}.lock"))
    }

    /// The blob holding `table`'s token counter. Its name ends in `.fence`
    /// and every lock blob's in `.lock`, so no table's counter is another
    /// table's lock.
    pub fn counter_blob(&self, table: &str) -> BlobClient {
        self.container.blob(&format!("{table}.fence"))
    }

    /// Takes the lock if nobody holds it; `None` if someone does.
    ///
    /// # Errors
    /// Service and transport errors.
    pub async fn try_acquire(&self, table: &str) -> Result<Option<TableLock>> {
        let blob = self.lock_blob(table);
        let lease = blob.lease(None);
        let clock = self.container.clock();
        let duration = LeaseDuration::Fixed(self.settings.lease_duration);
        let mut created = false;
        let acquired_at = loop {
            let sent = clock.now();
            match lease.acquire(duration).await {
                Ok(_) => break sent,
                Err(e)
                    if e.has_code(&ErrorCode::LeaseAlreadyPresent)
                        || e.has_code(&ErrorCode::LeaseIsBreakingAndCannotBeAcquired) =>
                {
                    return Ok(None);
                }
                Err(e) if e.is_not_found() && !created => {
                    self.create_lock_blob(&blob).await?;
                    created = true;
                }
                Err(e) => return Err(e),
            }
        };
        match self.advance_token(table, &blob, lease.id()).await {
            Ok(token) => Ok(Some(TableLock::start(
                table,
                token,
                lease,
                clock,
                acquired_at,
                &self.settings,
            ))),
            Err(e) => {
                let _ = lease.release().await;
                Err(e)
            }
        }
    }

    /// Takes the lock, trying every `retry_interval` (by the client's
    /// clock) until `timeout` has passed.
    ///
    /// # Errors
    /// [`Error::LockTimeout`] when it stayed held; service and transport
    /// errors.
    pub async fn acquire(&self, table: &str, timeout: Duration) -> Result<TableLock> {
        let clock = self.container.clock();
        let deadline = clock.now() + timeout;
        loop {
            if let Some(lock) = self.try_acquire(table).await? {
                return Ok(lock);
            }
            if clock.now() >= deadline {
                return Err(Error::LockTimeout {
                    table: table.to_owned(),
                });
            }
            clock.sleep(self.settings.retry_interval).await;
        }
    }

    /// Breaks whoever holds `table`'s lock, after `period` (or at once).
    /// The holder learns at its next renewal; its token stays below the
    /// next holder's.
    ///
    /// # Errors
    /// Service and transport errors other than "no lock".
    pub async fn break_lock(&self, table: &str, period: Option<Duration>) -> Result<()> {
        let lease = self.lock_blob(table).lease(None);
        match lease.break_lease(Some(period.unwrap_or_default())).await {
            Ok(_) => Ok(()),
            Err(e)
                if e.is_not_found()
                    || e.has_code(&ErrorCode::LeaseNotPresentWithLeaseOperation) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The latest token handed out (0 before the first). A holder whose
    /// lease ran out between taking a token and recording it may have
    /// taken the latest; it never holds the lock with it.
    ///
    /// # Errors
    /// Service and transport errors other than missing blobs.
    pub async fn current_token(&self, table: &str) -> Result<u64> {
        let counted = token_if_exists(&self.counter_blob(table)).await?;
        let recorded = token_if_exists(&self.lock_blob(table)).await?;
        Ok(counted.max(recorded))
    }

    async fn create_lock_blob(&self, blob: &BlobClient) -> Result<()> {
        self.container.create_if_not_exists().await?;
        let create_only =
            UploadOptions::default().with_conditions(Conditions::new().with_if_not_exists());
        match blob.upload(bytes::Bytes::new(), &create_only).await {
            Ok(_) => Ok(()),
            Err(e) if e.has_code(&ErrorCode::BlobAlreadyExists) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Takes the next token from the counter, then records it in the lock
    /// blob under the lease (and only over the version read), which fails
    /// if the lease was lost meanwhile.
    async fn advance_token(&self, table: &str, blob: &BlobClient, id: LeaseId) -> Result<u64> {
        let leased = Conditions::new().with_lease(id);
        let properties = blob.properties(&leased).await?;
        let token = self
            .next_token(table, token_of(&properties.metadata))
            .await?;
        let mut metadata = properties.metadata;
        metadata.insert(TOKEN_METADATA, token.to_string());
        blob.set_metadata(&metadata, &leased.with_if_match(properties.etag))
            .await?;
        Ok(token)
    }

    /// Adds one to `table`'s counter (creating it at `at_least + 1` at
    /// most once, above what an older lock blob recorded) and returns the
    /// new value. Writes are conditional on the counter's ETag, or on its
    /// absence; a writer that lost the race reads again.
    async fn next_token(&self, table: &str, at_least: u64) -> Result<u64> {
        let counter = self.counter_blob(table);
        loop {
            let (current, etag) = match counter.properties(&Conditions::new()).await {
                Ok(p) => (token_of(&p.metadata), Some(p.etag)),
                Err(e) if e.is_not_found() => (0, None),
                Err(e) => return Err(e),
            };
            let token = current.max(at_least) + 1;
            let mut metadata = Metadata::new();
            metadata.insert(TOKEN_METADATA, token.to_string());
            let written = match etag {
                Some(etag) => {
                    let unchanged = Conditions::new().with_if_match(etag);
                    counter.set_metadata(&metadata, &unchanged).await.map(drop)
                }
                None => {
                    let create = UploadOptions {
                        metadata,
                        ..UploadOptions::default()
                    }
                    .with_conditions(Conditions::new().with_if_not_exists());
                    counter.upload(bytes::Bytes::new(), &create).await.map(drop)
                }
            };
            match written {
                Ok(()) => return Ok(token),
                // Another holder's increment (or creation) came first.
                Err(e) if e.is_precondition_failed() || e.is_conflict() => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// The token in `blob`'s metadata; 0 when it has none or does not exist.
async fn token_if_exists(blob: &BlobClient) -> Result<u64> {
    match blob.properties(&Conditions::new()).await {
        Ok(p) => Ok(token_of(&p.metadata)),
        Err(e) if e.is_not_found() => Ok(0),
        Err(e) => Err(e),
    }
}

fn token_of(metadata: &Metadata) -> u64 {
    metadata
        .get(TOKEN_METADATA)
        .and_then(|t| t.parse().ok())
        .unwrap_or(0)
}

#[derive(Debug, Clone, Copy)]
struct LockState {
    held: bool,
    /// When the last successful renewal (or the acquire) was sent.
    renewed_at: SystemTime,
}

/// A held table lock. See the [module docs](self).
#[derive(Debug)]
pub struct TableLock {
    table: String,
    token: u64,
    lease: LeaseClient,
    clock: Arc<dyn Clock>,
    lease_duration: Duration,
    state: watch::Receiver<LockState>,
    renewer: Option<JoinHandle<()>>,
}

impl TableLock {
    fn start(
        table: &str,
        token: u64,
        lease: LeaseClient,
        clock: Arc<dyn Clock>,
        acquired_at: SystemTime,
        settings: &TableLockSettings,
    ) -> TableLock {
        let (tx, rx) = watch::channel(LockState {
            held: true,
            renewed_at: acquired_at,
        });
        let renewer = tokio::spawn(renew(
            lease.clone(),
            clock.clone(),
            settings.renew_interval,
            settings.lease_duration,
            tx,
        ));
        TableLock {
            table: table.to_owned(),
            token,
            lease,
            clock,
            lease_duration: settings.lease_duration,
            state: rx,
            renewer: Some(renewer),
        }
    }

    /// The table.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The fencing token: greater than every earlier holder's.
    pub fn token(&self) -> u64 {
        self.token
    }

    /// The lease id held.
    pub fn lease_id(&self) -> LeaseId {
        self.lease.id()
    }

    /// When the lease was last renewed (sent), by the client's clock.
    pub fn renewed_at(&self) -> SystemTime {
        self.state.borrow().renewed_at
    }

    /// Whether the lock is still held: no renewal was refused and the
    /// lease has not run out since the last successful renewal.
    pub fn is_held(&self) -> bool {
        let state = *self.state.borrow();
        state.held && self.clock.now() < state.renewed_at + self.lease_duration
    }

    /// The token while held.
    ///
    /// # Errors
    /// [`Error::LockLost`] once the lock is lost.
    pub fn check(&self) -> Result<u64> {
        if self.is_held() {
            Ok(self.token)
        } else {
            Err(Error::LockLost {
                table: self.table.clone(),
            })
        }
    }

    /// Completes once the lock is lost.
    pub async fn lost(&self) {
        let mut rx = self.state.clone();
        loop {
            let state = *rx.borrow_and_update();
            let expires = state.renewed_at + self.lease_duration;
            let now = self.clock.now();
            if !state.held || now >= expires {
                return;
            }
            let until_expiry = expires.duration_since(now).unwrap_or_default();
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        // The renewer is gone: only expiry is left to wait for.
                        self.clock.sleep(until_expiry).await;
                        return;
                    }
                }
                () = self.clock.sleep(until_expiry) => {}
            }
        }
    }

    /// Stops renewing and releases the lease.
    ///
    /// # Errors
    /// Service and transport errors (a lease already lost is not one).
    pub async fn release(mut self) -> Result<()> {
        if let Some(renewer) = self.renewer.take() {
            renewer.abort();
        }
        match self.lease.release().await {
            Ok(()) => Ok(()),
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Drop for TableLock {
    fn drop(&mut self) {
        let Some(renewer) = self.renewer.take() else {
            return; // released explicitly
        };
        renewer.abort();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let lease = self.lease.clone();
            runtime.spawn(async move {
                if let Err(error) = lease.release().await {
                    tracing::debug!(%error, "releasing a dropped table lock");
                }
            });
        }
    }
}

/// Renews every `interval` until a renewal is refused, or until renewals
/// have failed for a whole lease duration.
///
/// Deadlines are absolute (counted from the acquire), so a clock that moved
/// before this task first ran still triggers the renewal that is due.
async fn renew(
    lease: LeaseClient,
    clock: Arc<dyn Clock>,
    interval: Duration,
    lease_duration: Duration,
    state: watch::Sender<LockState>,
) {
    let mut next = state.borrow().renewed_at + interval;
    loop {
        let wait = next.duration_since(clock.now()).unwrap_or_default();
        clock.sleep(wait).await;
        let sent = clock.now();
        match lease.renew().await {
            Ok(()) => {
                state.send_modify(|s| s.renewed_at = sent);
                next = sent + interval;
            }
            Err(e) if e.status().is_some_and(|s| s < 500) => {
                tracing::debug!(error = %e, "table lock lost");
                state.send_modify(|s| s.held = false);
                return;
            }
            Err(e) => {
                let renewed_at = state.borrow().renewed_at;
                if clock.now() >= renewed_at + lease_duration {
                    state.send_modify(|s| s.held = false);
                    return;
                }
                tracing::warn!(error = %e, "table lock renewal failed; retrying");
                next = clock.now() + interval;
            }
        }
    }
}
