//! What a request addresses: account, container and blob from the raw path
//! (spec/00-overview.md §1), and the decoded query parameters.

use percent_encoding::percent_decode_str;

use crate::error::ApiError;

/// The resource a request path names, decoded once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub account: String,
    pub container: Option<String>,
    pub blob: Option<String>,
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
        let path = raw_path.strip_prefix('/').ok_or(ApiError::InvalidUri)?;
        let (account, rest) = match path.split_once('/') {
            Some((a, r)) => (a, Some(r)),
            None => (path, None),
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
        Ok(Target {
            account: decode(account)?,
            container: container.map(decode).transpose()?,
            blob: blob.map(decode).transpose()?,
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

fn decode(s: &str) -> Result<String, ApiError> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| ApiError::InvalidUri)
}

/// Decoded query parameters; names lowercased, values percent-decoded with
/// `+` read as a space.
///
/// Deliberate difference from spec/00-overview.md §1, which keeps `+` a
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
