//! The HTTP layer of Stowage: the Azure Blob Storage REST API over actix-web.
//!
//! One catch-all route turns each request into an `ops` operation, checks
//! who is asking ([`auth`]), calls one `stowage_blobstore::Store` method and
//! renders the answer. Everything HTTP — headers, query strings, XML, status
//! codes, signatures — lives in this crate; nothing here knows SQL or file
//! paths.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use stowage_blobstore::{Store, StoreConfig, SystemClock};
//! use stowage_server::{serve, Accounts, AppState, FetchConfig, Fetcher};
//! let clock = Arc::new(SystemClock);
//! let store = Store::open(StoreConfig::in_memory(), clock.clone()).await?;
//! let state = Arc::new(AppState {
//!     store,
//!     accounts: Accounts::development(),
//!     clock,
//!     product_style_urls: true,
//!     loose: false,
//!     oauth: false,
//!     test_clock: None,
//!     fetcher: Arc::new(Fetcher::new(&FetchConfig::default())),
//!     observe: Default::default(),
//! });
//! let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
//! serve(listener, state, 1, None)?.await?;
//! # Ok(()) }
//! ```

pub mod accounts;
pub mod admin;
pub mod auth;
pub mod benching;
mod body;
mod config;
mod cors;
pub mod data_dir;
mod error;
mod fetch;
pub mod fuzzing;
mod handler;
mod header_case;
mod headers;
mod http_dates;
pub mod observe;
mod ops;
mod request;
mod response;
mod state;
mod target;
pub mod test_clock;
mod transport;
mod version;
mod xml;

pub use accounts::{Account, Accounts};
pub use config::{Config, GC_INTERVAL, OAuthLevel};
pub use error::{ApiError, ErrorAnswer};
pub use fetch::{DEFAULT_MAX_COPIES, FetchConfig, Fetcher};
pub use handler::{serve, serve_until};
pub use observe::{Observe, serve_metrics};
pub use state::AppState;
pub use transport::tls_config;
