//! What every request shares: the store, the accounts and the clock.

use std::sync::Arc;

use stowage_blobstore::{Clock, ManualClock, Store};

use crate::accounts::Accounts;

/// Shared server state, built once at start-up (or once per test server).
#[derive(Debug)]
pub struct AppState {
    /// The storage engine.
    pub store: Store,
    /// Configured accounts and their keys.
    pub accounts: Accounts,
    /// The clock used for request-time checks (Shared Key date window).
    pub clock: Arc<dyn Clock>,
    /// Read the account from the host name when its first label is a
    /// configured account (`<account>.blob.localhost`); off with
    /// `--disableProductStyleUrl`.
    pub product_style_urls: bool,
    /// `--loose`: headers of features Stowage does not implement are
    /// ignored instead of refused with 501, as the emulator's loose mode
    /// ignores unsupported headers.
    pub loose: bool,
    /// `--oauth basic`: bearer tokens are accepted (over HTTPS) and Get User
    /// Delegation Key is served.
    pub oauth: bool,
    /// The clock that `--testClock` (or `STOWAGE_TEST_CLOCK`) put in place
    /// of the system clock, moved by the test-only request of
    /// [`crate::test_clock`]; `None` otherwise, and then that request does
    /// not exist.
    pub test_clock: Option<Arc<ManualClock>>,
    /// Reads copy sources on other hosts and tracks the copies running.
    pub fetcher: Arc<crate::fetch::Fetcher>,
    /// Metrics and request logs (`--metricsPort`, `--accessLog`,
    /// `--debug`); `Observe::default()` records nothing.
    pub observe: crate::observe::Observe,
}
