//! Stowage's load generator: drives any Azure-Blob-compatible endpoint
//! (Stowage, the Azurite emulator) with named workloads, checks every answer,
//! and reports rates, latencies and the server's CPU time and peak memory.
//!
//! It shares no code with the server: it signs with its own Shared Key
//! implementation ([`signer`], tested against docs/wire/auth.md#test-vectors) and reads
//! answers with its own minimal parsing, so it measures Stowage the way any
//! client would see it. `bench/run` runs it against both servers and prints
//! [`report::table`].
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use stowage_bench::{client::BlobClient, signer::SharedKey, workloads};
//! let key = SharedKey::new("devstoreaccount1", stowage_bench::DEV_KEY)?;
//! let client = BlobClient::new("http://127.0.0.1:10000/devstoreaccount1", key, 32)?;
//! let ctx = workloads::Ctx {
//!     client,
//!     concurrency: 32,
//!     quick: true,
//!     server_pid: None,
//!     db_stats: None,
//!     nonce: "demo".into(),
//!     data_dir: None,
//!     versions: 0,
//!     source: None,
//! };
//! for record in workloads::run("put-4k", &ctx).await? {
//!     println!("{}", serde_json::to_string(&record)?);
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod content;
pub mod report;
pub mod signer;
pub mod stats;
pub mod workloads;

/// The development account's key, as the emulator and Stowage serve it.
pub const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
