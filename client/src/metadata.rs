//! User metadata (`x-ms-meta-*`, docs/wire/requests.md#metadata).

use std::collections::BTreeMap;

use reqwest::header::HeaderMap;

use crate::pipeline::Request;

/// Name/value pairs stored with a container or blob.
///
/// Names are unique regardless of letter case, as the service treats them.
/// Note that HTTP/1.1 header names go on the wire in lowercase through this
/// client's HTTP stack, so names written here come back lowercase; look
/// them up with [`Metadata::get`], which ignores case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata(BTreeMap<String, String>);

impl Metadata {
    /// No pairs.
    pub fn new() -> Metadata {
        Metadata::default()
    }

    /// Sets `name` (replacing a pair whose name differs only in case) and
    /// returns the previous value.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) -> Option<String> {
        let name = name.into();
        let previous = self.remove(&name);
        self.0.insert(name, value.into());
        previous
    }

    /// Builder form of [`Metadata::insert`].
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Metadata {
        self.insert(name, value);
        self
    }

    /// The value of `name`, ignoring letter case.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Removes `name` (ignoring case) and returns its value.
    pub fn remove(&mut self, name: &str) -> Option<String> {
        let key = self
            .0
            .keys()
            .find(|n| n.eq_ignore_ascii_case(name))?
            .clone();
        self.0.remove(&key)
    }

    /// The pairs, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// How many pairs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Reads the `x-ms-meta-*` headers of an answer.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Metadata {
        let mut metadata = Metadata::new();
        let pairs = headers.iter().filter_map(|(name, value)| {
            let name = name.as_str().strip_prefix("x-ms-meta-")?;
            Some((name, value.to_str().ok()?))
        });
        for (name, value) in pairs {
            metadata.insert(name, value);
        }
        metadata
    }

    /// Adds one `x-ms-meta-*` header per pair.
    pub(crate) fn apply(&self, mut request: Request) -> Request {
        for (name, value) in self.iter() {
            request = request.header(&format!("x-ms-meta-{name}"), value);
        }
        request
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Metadata {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Metadata {
        let mut metadata = Metadata::new();
        for (k, v) in iter {
            metadata.insert(k, v);
        }
        metadata
    }
}

impl<K: Into<String>, V: Into<String>, const N: usize> From<[(K, V); N]> for Metadata {
    fn from(pairs: [(K, V); N]) -> Metadata {
        pairs.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_regardless_of_case() {
        let mut m = Metadata::from([("Owner", "alice"), ("team", "x")]);
        assert_eq!(m.get("owner"), Some("alice"));
        assert_eq!(m.insert("OWNER", "bob"), Some("alice".into()));
        assert_eq!(m.len(), 2);
        assert_eq!(m.get("Owner"), Some("bob"));
        assert_eq!(m.remove("TEAM"), Some("x".into()));
        assert_eq!(m.iter().collect::<Vec<_>>(), [("OWNER", "bob")]);
    }
}
