//! What a request addresses: account, container and blob from the raw path
//! (docs/wire/requests.md#addressing), and the decoded query parameters.

use percent_encoding::percent_decode_str;

use crate::error::ApiError;

/// The resource a request path names, decoded once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub account: String,
    pub container: Option<String>,
    pub blob: Option<String>,
    /// Addressed to the emulated secondary endpoint (`<account>-secondary`):
    /// read-only, and the only place Get Blob Service Stats is answered.
    pub secondary: bool,
    /// The account came from the host name (`<account>.blob.localhost`), so
    /// the path starts with the container.
    pub host_style: bool,
}

/// The suffix naming an account's emulated secondary endpoint.
pub(crate) const SECONDARY_SUFFIX: &str = "-secondary";

/// A host name that never carries an account, though it has a dot.
const NO_ACCOUNT_HOSTS: &[&str] = &["host.docker.internal"];

/// The account a request's host names, for product-style URLs
/// (`http://<account>.blob.localhost:10000/<container>/<blob>`): the host's
/// first label when the host is a name (not an IP literal) with a dot after
/// that label and the label, less a `-secondary` suffix, is a configured
/// account (`is_account`). The emulator reads any dotted host this way; a
/// host like `stowage.internal` whose first label is no account stays
/// path-style here, so path-style URLs through such host names keep working.
pub(crate) fn host_account(host: &str, is_account: impl Fn(&str) -> bool) -> Option<String> {
    let name = match host.strip_prefix('[') {
        // An IPv6 literal.
        Some(_) => return None,
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    if name.parse::<std::net::Ipv4Addr>().is_ok() {
        return None;
    }
    let name = name.to_ascii_lowercase();
    if NO_ACCOUNT_HOSTS.contains(&name.as_str()) {
        return None;
    }
    let (label, _) = name.split_once('.').filter(|(l, _)| !l.is_empty())?;
    let base = label.strip_suffix(SECONDARY_SUFFIX).unwrap_or(label);
    is_account(base).then(|| label.to_owned())
}

/// The level of the addressed resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Account,
    Container,
    Blob,
}

impl Target {
    /// Splits the raw (still encoded) path on its first two `/` after the
    /// leading one and decodes each part exactly once; `+` stays a plus.
    pub(crate) fn parse(raw_path: &str) -> Result<Target, ApiError> {
        Target::resolve(None, raw_path)
    }

    /// As [`Target::parse`], but with the account already named by the host
    /// (see [`host_account`]) when `host_account` is given: then the whole
    /// path is container and blob. An account ending in `-secondary`
    /// addresses that account's secondary endpoint.
    pub(crate) fn resolve(host_account: Option<&str>, raw_path: &str) -> Result<Target, ApiError> {
        let path = raw_path.strip_prefix('/').ok_or(ApiError::InvalidUri)?;
        let (account, rest) = match host_account {
            Some(a) => (a, Some(path)),
            None => match path.split_once('/') {
                Some((a, r)) => (a, Some(r)),
                None => (path, None),
            },
        };
        if account.is_empty() {
            return Err(ApiError::InvalidUri);
        }
        let (container, blob) = match rest {
            None | Some("") => (None, None),
            Some(r) => match r.split_once('/') {
                Some((c, b)) if !b.is_empty() => (Some(c), Some(b)),
                Some((c, _)) => (Some(c), None),
                None => (Some(r), None),
            },
        };
        let account = decode(account)?;
        let (account, secondary) = match account.strip_suffix(SECONDARY_SUFFIX) {
            Some(a) if !a.is_empty() => (a.to_owned(), true),
            _ => (account, false),
        };
        Ok(Target {
            account,
            container: container.map(decode).transpose()?,
            blob: blob.map(decode_blob_name).transpose()?,
            secondary,
            host_style: host_account.is_some(),
        })
    }

    pub(crate) fn level(&self) -> Level {
        match (&self.container, &self.blob) {
            (None, _) => Level::Account,
            (Some(_), None) => Level::Container,
            (Some(_), Some(_)) => Level::Blob,
        }
    }
}

/// A blob name from a URL: decoded, with every backslash read as `/`, as the
/// service stores it (docs/wire/requests.md#names).
pub(crate) fn decode_blob_name(s: &str) -> Result<String, ApiError> {
    decode(s).map(|name| name.replace('\\', "/"))
}

fn decode(s: &str) -> Result<String, ApiError> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| ApiError::InvalidUri)
}

/// Decoded query parameters; names lowercased, values percent-decoded with
/// `+` read as a space.
///
/// Deliberate difference from docs/wire/requests.md#addressing, which keeps `+` a
/// plus: clients that form-encode queries (object_store's Azure backend
/// sends `prefix=my+dir%2F`) rely on the service reading `+` as a space, as
/// it does (reported by object_store's maintainers in Azurite issue #1696).
/// The SDKs encode a literal plus as `%2B`, so nothing they send changes.
/// Paths keep `+` literal.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    pub(crate) fn parse(raw: &str) -> Result<Query, ApiError> {
        let mut pairs = Vec::new();
        for part in raw.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            let name = decode(&name.replace('+', " "))?.to_ascii_lowercase();
            let value = decode(&value.replace('+', " ")).map_err(|_| {
                ApiError::InvalidQueryParameterValue {
                    name: name.clone(),
                    value: value.to_owned(),
                }
            })?;
            pairs.push((name, value));
        }
        Ok(Query { pairs })
    }

    /// The first value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub(crate) fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(account: &str, container: Option<&str>, blob: Option<&str>) -> Target {
        Target {
            account: account.into(),
            container: container.map(Into::into),
            blob: blob.map(Into::into),
            secondary: false,
            host_style: false,
        }
    }

    #[test]
    fn path_table() {
        let cases = [
            ("/devstoreaccount1", Ok(t("devstoreaccount1", None, None))),
            ("/devstoreaccount1/", Ok(t("devstoreaccount1", None, None))),
            ("/a/c", Ok(t("a", Some("c"), None))),
            ("/a/c/", Ok(t("a", Some("c"), None))),
            ("/a/c/dir/x.txt", Ok(t("a", Some("c"), Some("dir/x.txt")))),
            (
                "/a/c/hello%20world+1",
                Ok(t("a", Some("c"), Some("hello world+1"))),
            ),
            ("/a/c/%2Fslash", Ok(t("a", Some("c"), Some("/slash")))),
            ("/a/c/%E5%90%8D", Ok(t("a", Some("c"), Some("名")))),
            ("/a/c/d//e", Ok(t("a", Some("c"), Some("d//e")))),
            ("/a/c/x%5Cy", Ok(t("a", Some("c"), Some("x/y")))),
            ("/a/c/x\\y\\", Ok(t("a", Some("c"), Some("x/y/")))),
            ("/", Err(())),
            ("//c", Err(())),
            ("/a/c/%FF", Err(())),
            ("nope", Err(())),
        ];
        for (path, expected) in cases {
            assert_eq!(Target::parse(path).map_err(|_| ()), expected, "{path}");
        }
    }

    #[test]
    fn host_and_path_table() {
        let is_account = |a: &str| matches!(a, "devstoreaccount1" | "acct2");
        let hs = |account: &str, container: Option<&str>, blob: Option<&str>, secondary: bool| {
            Ok(Target {
                secondary,
                host_style: true,
                ..t(account, container, blob)
            })
        };
        let cases = [
            // Path-style: IP literals, names without a dot, unknown labels.
            (
                "127.0.0.1:10000",
                "/devstoreaccount1/c/b",
                Ok(t("devstoreaccount1", Some("c"), Some("b"))),
            ),
            ("[::1]:10000", "/acct2/c", Ok(t("acct2", Some("c"), None))),
            (
                "localhost:10000",
                "/devstoreaccount1",
                Ok(t("devstoreaccount1", None, None)),
            ),
            (
                "stowage.internal:10000",
                "/devstoreaccount1/c",
                Ok(t("devstoreaccount1", Some("c"), None)),
            ),
            (
                "host.docker.internal:10000",
                "/devstoreaccount1/c",
                Ok(t("devstoreaccount1", Some("c"), None)),
            ),
            (
                "10.1.2.3",
                "/devstoreaccount1/c",
                Ok(t("devstoreaccount1", Some("c"), None)),
            ),
            // Product-style: the first label is a configured account.
            (
                "devstoreaccount1.blob.localhost:10000",
                "/c/dir/b",
                hs("devstoreaccount1", Some("c"), Some("dir/b"), false),
            ),
            (
                "DevStoreAccount1.blob.core.windows.net",
                "/c",
                hs("devstoreaccount1", Some("c"), None, false),
            ),
            ("acct2.blob.localhost", "/", hs("acct2", None, None, false)),
            (
                "acct2.blob.localhost",
                "/?comp=list",
                hs("acct2", None, None, false),
            ),
            (
                "devstoreaccount1.blob.localhost:10000",
                "/devstoreaccount1/b",
                hs(
                    "devstoreaccount1",
                    Some("devstoreaccount1"),
                    Some("b"),
                    false,
                ),
            ),
            // The secondary endpoint, either way.
            (
                "devstoreaccount1-secondary.blob.localhost",
                "/c/b",
                hs("devstoreaccount1", Some("c"), Some("b"), true),
            ),
            (
                "127.0.0.1:10000",
                "/devstoreaccount1-secondary/c/b",
                Ok(Target {
                    secondary: true,
                    ..t("devstoreaccount1", Some("c"), Some("b"))
                }),
            ),
            (
                "127.0.0.1:10000",
                "/-secondary/c",
                Ok(t("-secondary", Some("c"), None)),
            ),
        ];
        for (host, path, expected) in cases {
            let path = path.split_once('?').map_or(path, |(p, _)| p);
            let account = host_account(host, is_account);
            assert_eq!(
                Target::resolve(account.as_deref(), path).map_err(|_| ()),
                expected,
                "{host}{path}"
            );
        }
    }

    #[test]
    fn levels() {
        assert_eq!(Target::parse("/a").unwrap().level(), Level::Account);
        assert_eq!(Target::parse("/a/c").unwrap().level(), Level::Container);
        assert_eq!(Target::parse("/a/c/b").unwrap().level(), Level::Blob);
    }

    #[test]
    fn query_decodes_once_lowercases_names_and_reads_plus_as_space() {
        let q = Query::parse(
            "restype=container&COMP=list&prefix=a%2Fb+c%2B&include=metadata&include=snapshots&flag",
        )
        .unwrap();
        assert_eq!(q.get("comp"), Some("list"));
        assert_eq!(q.get("prefix"), Some("a/b c+"));
        assert_eq!(
            q.all("include").collect::<Vec<_>>(),
            ["metadata", "snapshots"]
        );
        assert_eq!(q.get("flag"), Some(""));
        assert_eq!(q.get("missing"), None);
    }
}
