//! End-to-end test support: a real Stowage server on an ephemeral port with
//! its own temporary data directory and manual clock, and a small HTTP
//! client that signs requests with Shared Key.
//!
//! The signer here is written from the spec independently of the server's
//! verifier, so that each checks the other.

mod client;
pub mod linearizability;
pub mod procs;
pub mod roundrobin;
mod server;
mod signing;
pub mod sources;

pub use client::{Client, Request, Response, VERSION};

/// The `x-ms-version` the test client sends.
pub fn client_version() -> &'static str {
    VERSION
}
pub use server::{TEST_CLUSTER_ENV, TEST_OBJECTS_ENV, TestServer, epoch};
pub use signing::{
    account_sas, blob_sas, container_sas, shared_key_signature, string_to_sign, string_to_sign_for,
};

/// The development account and its published key.
pub const ACCOUNT: &str = "devstoreaccount1";
/// The development key (base64).
pub const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// A second account, configured by [`TestServer::start_with_accounts`].
pub const ACCOUNT2: &str = "stowageaccount2";
/// The second account's key (base64).
pub const KEY2: &str = "c2Vjb25kLWFjY291bnQta2V5LWZvci10ZXN0cy0wMDAwMDAwMDAwMDAwMDAwMDA=";

/// A name no other test uses: `prefix` plus a random suffix, valid as a
/// container name.
pub fn unique(prefix: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &id[..12])
}
