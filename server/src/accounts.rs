//! Accounts and keys: the development account, or the `AZURITE_ACCOUNTS`
//! list (docs/wire/auth.md#accounts-and-keys).

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
    /// Days a deleted container stays restorable (container soft delete);
    /// `None`: deleted containers are gone at once.
    pub container_delete_retention_days: Option<u32>,
}

/// The option of an `AZURITE_ACCOUNTS` entry that sets
/// [`Account::container_delete_retention_days`].
pub const CONTAINER_DELETE_RETENTION_OPTION: &str = "containerDeleteRetentionDays";

/// The retention the service accepts for container soft delete, in days.
pub const RETENTION_DAYS: std::ops::RangeInclusive<u32> = 1..=365;

impl Account {
    /// How long a deleted container of this account stays restorable.
    pub fn container_delete_retention(&self) -> Option<std::time::Duration> {
        self.container_delete_retention_days
            .map(|d| std::time::Duration::from_secs(u64::from(d) * 24 * 3600))
    }
}

/// Reads `part` of an entry as an option (`name=value` with a known name),
/// or `None` when it is not one (it is then a key).
fn parse_option(part: &str) -> Option<Result<u32, &'static str>> {
    let (name, value) = part.split_once('=')?;
    if name != CONTAINER_DELETE_RETENTION_OPTION {
        return None;
    }
    Some(
        value
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|d| RETENTION_DAYS.contains(d))
            .ok_or("containerDeleteRetentionDays must be a number of days from 1 to 365"),
    )
}

/// The configured accounts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accounts(Vec<Account>);

/// Why an `AZURITE_ACCOUNTS` value was refused: the entry that cannot be
/// read, and what is wrong with it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "AZURITE_ACCOUNTS entry {entry:?} cannot be read: {reason} (expected name:key1[:key2], entries separated by ';')"
)]
pub struct AccountsError {
    /// The entry as written.
    pub entry: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl Accounts {
    /// Only the development account.
    pub fn development() -> Accounts {
        let key = base64::engine::general_purpose::STANDARD
            .decode(DEV_KEY)
            .expect("the development key is valid base64");
        Accounts(vec![Account {
            name: DEV_ACCOUNT.to_owned(),
            keys: vec![key],
            container_delete_retention_days: None,
        }])
    }

    /// Parses `AZURITE_ACCOUNTS` the way the emulator reads it:
    /// `name1:key1[:key2];name2:key1[:key2]…`, each entry optionally ending
    /// in Stowage's `:containerDeleteRetentionDays=N` (the account's own
    /// container soft delete retention), surrounding whitespace of the
    /// whole value ignored, empty entries (a trailing `;`) skipped, keys
    /// decoded leniently (see [`decode_key_leniently`]). The list replaces
    /// the development account.
    ///
    /// # Errors
    /// The first entry that cannot be read: not two or three `:`-separated
    /// parts, an empty name, or a key that decodes to nothing; or a value
    /// with no entry at all.
    pub fn parse(value: &str) -> Result<Accounts, AccountsError> {
        let mut out: Vec<Account> = Vec::new();
        for entry in value.trim().split(';').filter(|e| !e.is_empty()) {
            let bad = |reason| AccountsError {
                entry: entry.to_owned(),
                reason,
            };
            let mut parts: Vec<&str> = entry.split(':').collect();
            let mut retention = None;
            if let Some(option) = parts.last().and_then(|p| parse_option(p)) {
                retention = Some(option.map_err(bad)?);
                parts.pop();
            }
            if !(2..=3).contains(&parts.len()) {
                return Err(bad("not a name and one or two keys separated by ':'"));
            }
            let name = parts[0].trim();
            if name.is_empty() || name.contains('/') {
                return Err(bad("the account name is empty or holds '/'"));
            }
            let keys: Vec<Vec<u8>> = parts[1..].iter().map(|k| decode_key_leniently(k)).collect();
            if keys.iter().any(Vec::is_empty) {
                return Err(bad("a key is empty or not base64"));
            }
            // A name given twice: the later entry wins, as in the emulator.
            out.retain(|a| a.name != name);
            out.push(Account {
                name: name.to_owned(),
                keys,
                container_delete_retention_days: retention,
            });
        }
        if out.is_empty() {
            return Err(AccountsError {
                entry: value.to_owned(),
                reason: "no account in the value",
            });
        }
        Ok(Accounts(out))
    }

    /// The account called `name`.
    pub fn get(&self, name: &str) -> Option<&Account> {
        self.0.iter().find(|a| a.name == name)
    }

    /// Gives every account without a retention of its own `days`
    /// (`--containerDeleteRetentionDays`).
    pub fn with_container_delete_retention_days(mut self, days: Option<u32>) -> Accounts {
        for a in &mut self.0 {
            a.container_delete_retention_days = a.container_delete_retention_days.or(days);
        }
        self
    }
}

/// Decodes a key as leniently as the emulator (Node's base64 decoder)
/// does: both the standard (`+/`) and the URL-safe (`-_`) alphabet, padding
/// optional, decoding stops at the first `=`, any other character
/// (whitespace, line breaks, stray punctuation) skipped.
pub fn decode_key_leniently(key: &str) -> Vec<u8> {
    let sextet = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(key.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in key.bytes().take_while(|&c| c != b'=').filter_map(sextet) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
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
        // Whitespace around the value, a trailing ';', keys without padding
        // or in the URL-safe alphabet, a line break inside a key.
        let ok = Accounts::parse("  acct1:a2V5MQ;acct2:a2V5Mg==:a2V5\nMw==;\n").unwrap();
        assert_eq!(ok.get("acct1").unwrap().keys, vec![b"key1".to_vec()]);
        assert_eq!(
            ok.get("acct2").unwrap().keys,
            vec![b"key2".to_vec(), b"key3".to_vec()]
        );
        let ok = Accounts::parse("acct:-_-_").unwrap();
        assert_eq!(ok.get("acct").unwrap().keys, vec![vec![0xfb, 0xff, 0xbf]]);
        // A name given twice: the later entry wins.
        let ok = Accounts::parse("a1:a2V5MQ==;a1:a2V5Mg==").unwrap();
        assert_eq!(ok.get("a1").unwrap().keys, vec![b"key2".to_vec()]);
        for (bad, entry) in [
            ("", ""),
            (" ; ", " ; "),
            ("acct1", "acct1"),
            ("acct1:", "acct1:"),
            ("acct1:!!!", "acct1:!!!"),
            (":a2V5MQ==", ":a2V5MQ=="),
            ("x1y:a:a:a", "x1y:a:a:a"),
            ("good:a2V5MQ==;bad", "bad"),
        ] {
            let e = Accounts::parse(bad).unwrap_err();
            assert_eq!(e.entry, entry, "{bad:?}");
            assert!(e.to_string().contains("AZURITE_ACCOUNTS"), "{e}");
        }
    }

    #[test]
    fn an_entry_may_set_its_container_delete_retention() {
        let ok = Accounts::parse(
            "a1:a2V5MQ==:containerDeleteRetentionDays=7;a2:a2V5MQ==:a2V5Mg==:containerDeleteRetentionDays=365;a3:a2V5MQ==",
        )
        .unwrap();
        let days = |n: &str| ok.get(n).unwrap().container_delete_retention_days;
        assert_eq!(days("a1"), Some(7));
        assert_eq!(days("a2"), Some(365));
        assert_eq!(ok.get("a2").unwrap().keys.len(), 2);
        assert_eq!(days("a3"), None);
        // The flag's default fills in where an entry sets none.
        let ok = ok.with_container_delete_retention_days(Some(3));
        let days = |n: &str| ok.get(n).unwrap().container_delete_retention_days;
        assert_eq!((days("a1"), days("a3")), (Some(7), Some(3)));
        assert_eq!(
            ok.get("a1").unwrap().container_delete_retention(),
            Some(std::time::Duration::from_secs(7 * 24 * 3600))
        );
        for bad in [
            "a1:a2V5MQ==:containerDeleteRetentionDays=0",
            "a1:a2V5MQ==:containerDeleteRetentionDays=366",
            "a1:a2V5MQ==:containerDeleteRetentionDays=x",
            "a1:containerDeleteRetentionDays=7",
        ] {
            assert!(Accounts::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_decode_as_leniently_as_the_emulator() {
        for (key, want) in [
            ("a2V5MQ==", &b"key1"[..]),
            ("a2V5MQ", b"key1"),
            ("a2V5\tMQ==", b"key1"),
            ("a2V5MQ==trailing", b"key1"),
            ("a2V5M", b"key"),
            ("", b""),
        ] {
            assert_eq!(decode_key_leniently(key), want, "{key:?}");
        }
        assert_eq!(
            decode_key_leniently(DEV_KEY),
            Accounts::development().get(DEV_ACCOUNT).unwrap().keys[0]
        );
    }
}
