//! Accounts and keys: the development account, or the `AZURITE_ACCOUNTS`
//! list (spec/40-auth.md §1).

use base64::Engine as _;

/// The emulator's development account.
pub const DEV_ACCOUNT: &str = "devstoreaccount1";
/// The emulator's published development key.
pub const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// One account: its name and its decoded keys (one or two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The account name.
    pub name: String,
    /// Decoded HMAC keys.
    pub keys: Vec<Vec<u8>>,
}

/// The configured accounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accounts(Vec<Account>);

/// Why an `AZURITE_ACCOUNTS` value was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed AZURITE_ACCOUNTS entry {0:?}: expected name:base64key[:base64key]")]
pub struct AccountsError(pub String);

impl Accounts {
    /// Only the development account.
    pub fn development() -> Accounts {
        let key = base64::engine::general_purpose::STANDARD
            .decode(DEV_KEY)
            .expect("the development key is valid base64");
        Accounts(vec![Account {
            name: DEV_ACCOUNT.to_owned(),
            keys: vec![key],
        }])
    }

    /// Parses `name1:key1[:key2];name2:key1[:key2]…`. The list replaces the
    /// development account.
    ///
    /// # Errors
    /// An entry without a key, with a key that is not base64, or a bad name.
    pub fn parse(value: &str) -> Result<Accounts, AccountsError> {
        let mut out = Vec::new();
        for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let mut parts = entry.split(':');
            let name = parts.next().unwrap_or_default();
            let valid_name = (3..=24).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            let keys: Result<Vec<Vec<u8>>, _> = parts
                .map(|k| base64::engine::general_purpose::STANDARD.decode(k.trim()))
                .collect();
            match keys {
                Ok(keys) if valid_name && !keys.is_empty() && keys.len() <= 2 => {
                    out.push(Account {
                        name: name.to_owned(),
                        keys,
                    })
                }
                _ => return Err(AccountsError(entry.to_owned())),
            }
        }
        if out.is_empty() {
            return Err(AccountsError(value.to_owned()));
        }
        Ok(Accounts(out))
    }

    /// The account called `name`.
    pub fn get(&self, name: &str) -> Option<&Account> {
        self.0.iter().find(|a| a.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn development_account_has_the_published_64_byte_key() {
        let a = Accounts::development();
        assert_eq!(a.get(DEV_ACCOUNT).unwrap().keys[0].len(), 64);
    }

    #[test]
    fn azurite_accounts_table() {
        let ok = Accounts::parse("acct1:a2V5MQ==;acct2:a2V5Mg==:a2V5Mw==").unwrap();
        assert_eq!(ok.get("acct1").unwrap().keys, vec![b"key1".to_vec()]);
        assert_eq!(ok.get("acct2").unwrap().keys.len(), 2);
        assert!(ok.get(DEV_ACCOUNT).is_none());
        for bad in [
            "",
            "acct1",
            "acct1:!!!",
            "AB:a2V5MQ==",
            "a:a2V5MQ==",
            "x1y:a:a:a",
        ] {
            assert!(Accounts::parse(bad).is_err(), "{bad:?}");
        }
    }
}
