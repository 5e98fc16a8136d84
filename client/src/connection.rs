//! Connection strings: the development shortcut and the
//! `AccountName=…;AccountKey=…;BlobEndpoint=…` form (docs/wire/auth.md#accounts-and-keys).

use std::str::FromStr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::{Error, Result};

/// The development account's name.
pub const DEVELOPMENT_ACCOUNT: &str = "devstoreaccount1";
/// The development account's key, published for the emulator.
pub const DEVELOPMENT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/// The emulator's blob endpoint.
pub const DEVELOPMENT_ENDPOINT: &str = "http://127.0.0.1:10000/devstoreaccount1";

/// How requests are authorized.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// Shared Key signing with the account's decoded key.
    SharedKey {
        /// The account name (signed into every request).
        account: String,
        /// The decoded key bytes.
        key: Vec<u8>,
    },
    /// A shared access signature appended to every request's query (without
    /// the leading `?`).
    Sas(String),
    /// No authorization: only public containers can be read.
    Anonymous,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets.
        match self {
            Credentials::SharedKey { account, .. } => write!(f, "SharedKey({account})"),
            Credentials::Sas(_) => f.write_str("Sas(…)"),
            Credentials::Anonymous => f.write_str("Anonymous"),
        }
    }
}

/// A parsed connection string: where the blob service is and how to sign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionString {
    blob_endpoint: String,
    credentials: Credentials,
}

impl ConnectionString {
    /// The development account on the emulator's endpoint, as
    /// `UseDevelopmentStorage=true` means.
    pub fn development() -> ConnectionString {
        ConnectionString {
            blob_endpoint: DEVELOPMENT_ENDPOINT.to_owned(),
            credentials: Credentials::SharedKey {
                account: DEVELOPMENT_ACCOUNT.to_owned(),
                key: STANDARD
                    .decode(DEVELOPMENT_KEY)
                    .expect("the published key is base64"),
            },
        }
    }

    /// An explicit endpoint (`http://host:port/account` for path-style
    /// emulators, `https://account.blob.core.windows.net` for the service)
    /// and credentials.
    pub fn new(blob_endpoint: &str, credentials: Credentials) -> ConnectionString {
        ConnectionString {
            blob_endpoint: blob_endpoint.trim_end_matches('/').to_owned(),
            credentials,
        }
    }

    /// Parses `key=value` pairs separated by `;`.
    ///
    /// Keys are case-insensitive; values may contain `=` (base64 keys do).
    /// Understood keys: `UseDevelopmentStorage`, `DevelopmentStorageProxyUri`,
    /// `DefaultEndpointsProtocol`, `AccountName`, `AccountKey`,
    /// `BlobEndpoint`, `EndpointSuffix`, `SharedAccessSignature`; others
    /// (`QueueEndpoint`, …) are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidConnectionString`] for a pair without `=`, a key that
    /// is not base64, an account key without an account name, or a string
    /// from which no blob endpoint follows.
    pub fn parse(s: &str) -> Result<ConnectionString> {
        let mut fields = Fields::default();
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| invalid(format!("`{part}` is not key=value")))?;
            let value = value.trim().to_owned();
            match key.trim().to_ascii_lowercase().as_str() {
                "usedevelopmentstorage" => fields.development = value.eq_ignore_ascii_case("true"),
                "developmentstorageproxyuri" => fields.proxy = Some(value),
                "defaultendpointsprotocol" => fields.protocol = Some(value),
                "accountname" => fields.account = Some(value),
                "accountkey" => fields.key = Some(value),
                "blobendpoint" => fields.endpoint = Some(value),
                "endpointsuffix" => fields.suffix = Some(value),
                "sharedaccesssignature" => fields.sas = Some(value),
                _ => {}
            }
        }
        fields.resolve()
    }

    /// The blob endpoint, without a trailing `/`.
    pub fn blob_endpoint(&self) -> &str {
        &self.blob_endpoint
    }

    /// How requests are authorized.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }
}

impl FromStr for ConnectionString {
    type Err = Error;

    fn from_str(s: &str) -> Result<ConnectionString> {
        ConnectionString::parse(s)
    }
}

#[derive(Default)]
struct Fields {
    development: bool,
    proxy: Option<String>,
    protocol: Option<String>,
    account: Option<String>,
    key: Option<String>,
    endpoint: Option<String>,
    suffix: Option<String>,
    sas: Option<String>,
}

impl Fields {
    fn resolve(self) -> Result<ConnectionString> {
        if self.development {
            let mut dev = ConnectionString::development();
            if let Some(proxy) = self.proxy {
                dev.blob_endpoint = format!(
                    "{}:10000/{DEVELOPMENT_ACCOUNT}",
                    proxy.trim_end_matches('/')
                );
            }
            return Ok(dev);
        }
        let credentials = match (&self.key, &self.sas) {
            (Some(key), _) => {
                let account = self
                    .account
                    .clone()
                    .ok_or_else(|| invalid("AccountKey without AccountName".into()))?;
                let key = STANDARD
                    .decode(key)
                    .map_err(|_| invalid("AccountKey is not base64".into()))?;
                Credentials::SharedKey { account, key }
            }
            (None, Some(sas)) => Credentials::Sas(sas.trim_start_matches('?').to_owned()),
            (None, None) => Credentials::Anonymous,
        };
        let endpoint = match (self.endpoint, &self.account) {
            (Some(endpoint), _) => endpoint,
            (None, Some(account)) => {
                let protocol = self.protocol.as_deref().unwrap_or("https");
                let suffix = self.suffix.as_deref().unwrap_or("core.windows.net");
                format!("{protocol}://{account}.blob.{suffix}")
            }
            (None, None) => return Err(invalid("neither BlobEndpoint nor AccountName".into())),
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(invalid(format!(
                "BlobEndpoint `{endpoint}` is not an http(s) URL"
            )));
        }
        Ok(ConnectionString::new(&endpoint, credentials))
    }
}

fn invalid(reason: String) -> Error {
    Error::InvalidConnectionString(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_key(account: &str, key: &str) -> Credentials {
        Credentials::SharedKey {
            account: account.into(),
            key: STANDARD.decode(key).unwrap(),
        }
    }

    #[test]
    fn connection_strings_resolve_to_endpoint_and_credentials() {
        let dev = ConnectionString::development();
        let cases: Vec<(&str, ConnectionString)> = vec![
            ("UseDevelopmentStorage=true", dev.clone()),
            ("usedevelopmentstorage=TRUE;", dev.clone()),
            (
                "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://10.0.0.5",
                ConnectionString::new(
                    "http://10.0.0.5:10000/devstoreaccount1",
                    dev.credentials.clone(),
                ),
            ),
            (
                "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
                dev.clone(),
            ),
            (
                "AccountName=acme;AccountKey=a2V5;EndpointSuffix=core.chinacloudapi.cn",
                ConnectionString::new(
                    "https://acme.blob.core.chinacloudapi.cn",
                    shared_key("acme", "a2V5"),
                ),
            ),
            (
                " DefaultEndpointsProtocol = http ; AccountName=acme ; AccountKey=a2V5 ",
                ConnectionString::new(
                    "http://acme.blob.core.windows.net",
                    shared_key("acme", "a2V5"),
                ),
            ),
            (
                "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2024-11-04&sig=abc%3D",
                ConnectionString::new(
                    "https://acme.blob.core.windows.net",
                    Credentials::Sas("sv=2024-11-04&sig=abc%3D".into()),
                ),
            ),
            (
                "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1",
                ConnectionString::new(DEVELOPMENT_ENDPOINT, Credentials::Anonymous),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(ConnectionString::parse(input).unwrap(), expected, "{input}");
        }
    }

    #[test]
    fn unusable_connection_strings_are_refused() {
        for input in [
            "",
            "AccountName",
            "AccountKey=a2V5;BlobEndpoint=http://x",
            "AccountName=acme;AccountKey=not base64!",
            "BlobEndpoint=ftp://x",
            "DefaultEndpointsProtocol=https",
        ] {
            let err = ConnectionString::parse(input).unwrap_err();
            assert!(
                matches!(err, Error::InvalidConnectionString(_)),
                "{input}: {err}"
            );
        }
    }

    #[test]
    fn debug_output_hides_the_key() {
        let text = format!("{:?}", ConnectionString::development());
        assert!(!text.contains("Eby8"), "{text}");
    }
}
