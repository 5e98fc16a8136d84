//! User metadata of containers and blobs (docs/wire/requests.md#metadata).

/// Why a metadata set was refused; the server maps each to the service's code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// `x-ms-meta-` with nothing after it: `400 EmptyMetadataKey`.
    #[error("The key for one of the metadata key-value pairs is empty.")]
    EmptyKey,
    /// A name that is not a C# identifier, a non-ASCII value, or a name given
    /// twice (in any letter case): `400 InvalidMetadata`.
    #[error("The specified metadata is invalid. It includes characters that are not permitted.")]
    Invalid(String),
    /// Names plus values over 8 KiB: `400 MetadataTooLarge`.
    #[error("The size of the specified metadata exceeds the maximum size permitted.")]
    TooLarge,
}

/// The most bytes of names plus values in one metadata set.
const MAX_METADATA_BYTES: usize = 8 * 1024;

/// A validated metadata set: names keep the case they were first written in,
/// and are unique ignoring case. Order is the order they were given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata(Vec<(String, String)>);

impl Metadata {
    /// Validates name/value pairs (names without the `x-ms-meta-` prefix).
    ///
    /// # Errors
    /// See [`MetadataError`].
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Result<Metadata, MetadataError> {
        let mut total = 0;
        for (i, (name, value)) in pairs.iter().enumerate() {
            if name.is_empty() {
                return Err(MetadataError::EmptyKey);
            }
            if !is_identifier(name) {
                return Err(MetadataError::Invalid(name.clone()));
            }
            if !value
                .chars()
                .all(|c| c == ' ' || c.is_ascii_graphic() || c == '\t')
            {
                return Err(MetadataError::Invalid(name.clone()));
            }
            if pairs[..i].iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return Err(MetadataError::Invalid(name.clone()));
            }
            total += name.len() + value.len();
        }
        if total > MAX_METADATA_BYTES {
            return Err(MetadataError::TooLarge);
        }
        Ok(Metadata(pairs))
    }

    /// The pairs, names in their stored case.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// True when there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// One `name:value` line per pair: names cannot contain `:` and values
    /// cannot contain a line break, so this needs no escaping.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        for (n, v) in &self.0 {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(n);
            out.push(':');
            out.push_str(v);
        }
        out
    }

    pub(crate) fn decode(s: &str) -> Metadata {
        Metadata(
            s.split('\n')
                .filter(|l| !l.is_empty())
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
                .collect(),
        )
    }
}

/// A C# identifier restricted to ASCII: a letter or `_`, then letters, digits or `_`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    #[test]
    fn metadata_rules() {
        let big = "v".repeat(8192 - 4);
        let too_big = "v".repeat(8192 - 3);
        let cases: Vec<(Vec<(String, String)>, Result<(), MetadataError>)> = vec![
            (pairs(&[]), Ok(())),
            (pairs(&[("Owner", "alice")]), Ok(())),
            (pairs(&[("_x1", "")]), Ok(())),
            (pairs(&[("name", &big)]), Ok(())),
            (pairs(&[("name", &too_big)]), Err(MetadataError::TooLarge)),
            (pairs(&[("", "v")]), Err(MetadataError::EmptyKey)),
            (
                pairs(&[("1abc", "v")]),
                Err(MetadataError::Invalid("1abc".into())),
            ),
            (
                pairs(&[("a-b", "v")]),
                Err(MetadataError::Invalid("a-b".into())),
            ),
            (
                pairs(&[("ok", "caf\u{e9}")]),
                Err(MetadataError::Invalid("ok".into())),
            ),
            (
                pairs(&[("Owner", "a"), ("owner", "b")]),
                Err(MetadataError::Invalid("owner".into())),
            ),
        ];
        for (input, expected) in cases {
            let got = Metadata::from_pairs(input.clone()).map(|_| ());
            assert_eq!(got, expected, "{input:?}");
        }
    }

    #[test]
    fn encoding_round_trips_and_keeps_case_and_order() {
        let m = Metadata::from_pairs(pairs(&[("Zeta", "1: two"), ("alpha", ""), ("B", "x y")]))
            .unwrap();
        assert_eq!(Metadata::decode(&m.encode()), m);
        assert_eq!(Metadata::decode(""), Metadata::default());
    }
}
