//! Where the examples find the server, so that they run against any port.
//!
//! In order: the first command-line argument, then `STOWAGE_BLOB_ENDPOINT`,
//! then `AZURE_STORAGE_CONNECTION_STRING`, then the emulator's default
//! (`http://127.0.0.1:10000/devstoreaccount1`). An endpoint is a URL ending
//! in the account name and is used with the development account's key; a
//! value with `=` in it is a whole connection string.

use stowage_client::{BlobServiceClient, Error};

/// The published key of the development account.
const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// The connection string `value` stands for: itself when it is one, else a
/// development-account connection string for the endpoint URL `value`.
pub fn connection_string(value: Option<String>) -> String {
    match value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        None => "UseDevelopmentStorage=true".to_owned(),
        Some(v) if v.contains('=') => v,
        Some(endpoint) => {
            let endpoint = endpoint.trim_end_matches('/');
            let account = endpoint.rsplit('/').next().unwrap_or("devstoreaccount1");
            format!("AccountName={account};AccountKey={DEV_KEY};BlobEndpoint={endpoint}")
        }
    }
}

/// The value that names the server: `arg` (the first command-line argument)
/// when given, else `STOWAGE_BLOB_ENDPOINT`, else
/// `AZURE_STORAGE_CONNECTION_STRING`, read through `env`.
pub fn endpoint_value(arg: Option<String>, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    arg.or_else(|| env("STOWAGE_BLOB_ENDPOINT"))
        .or_else(|| env("AZURE_STORAGE_CONNECTION_STRING"))
}

/// The service client of the first argument or the environment.
pub fn service() -> Result<BlobServiceClient, Error> {
    let value = endpoint_value(std::env::args().nth(1), |name| std::env::var(name).ok());
    BlobServiceClient::from_connection_string(&connection_string(value))
}
