//! Blob index tags: a blob's tag set with the rules the service enforces,
//! and the expression language of `x-ms-if-tags` and Find Blobs by Tags
//! ([`expr`]). Everything here is pure: no IO, no HTTP.
//!
//! The rules (docs/wire/tags.md): at most 10 tags; a key has 1 to 128
//! characters, a value 0 to 256; both use only `a-z`, `A-Z`, `0-9`, space
//! and `+ - . / : = _`; keys are case-sensitive and unique.

pub mod expr;

#[cfg(test)]
mod tests;

/// Most tags one blob may have.
pub const MAX_TAGS: usize = 10;
/// Longest tag key, in characters.
pub const MAX_KEY_LEN: usize = 128;
/// Longest tag value, in characters.
pub const MAX_VALUE_LEN: usize = 256;

/// Why a tag set is refused; each is a `400` with the code of its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    /// More than 10 tags, or a key or value longer than its limit.
    #[error("The tags specified exceed the maximum permissible limit.")]
    TagsTooLarge,
    /// A tag with an empty key.
    #[error("The name of one of the tag key-value pairs is empty.")]
    EmptyTagName,
    /// The same key twice.
    #[error("The tags specified contain duplicate names.")]
    DuplicateTagNames,
    /// A character outside the allowed set.
    #[error("The tags specified are invalid. It contains characters that are not permitted.")]
    InvalidTag,
}

/// A validated tag set, in the order it was given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tags(Vec<(String, String)>);

impl Tags {
    /// Validates `pairs` as one tag set.
    ///
    /// The checks run in this order: the count, then for each tag in order
    /// its key being empty, its lengths, its characters, then duplicates.
    ///
    /// # Errors
    /// The [`TagError`] of the first rule broken.
    pub fn new(pairs: Vec<(String, String)>) -> Result<Tags, TagError> {
        if pairs.len() > MAX_TAGS {
            return Err(TagError::TagsTooLarge);
        }
        for (k, v) in &pairs {
            if k.is_empty() {
                return Err(TagError::EmptyTagName);
            }
            if k.chars().count() > MAX_KEY_LEN || v.chars().count() > MAX_VALUE_LEN {
                return Err(TagError::TagsTooLarge);
            }
            if !k.chars().all(allowed) || !v.chars().all(allowed) {
                return Err(TagError::InvalidTag);
            }
        }
        for (i, (k, _)) in pairs.iter().enumerate() {
            if pairs[..i].iter().any(|(other, _)| other == k) {
                return Err(TagError::DuplicateTagNames);
            }
        }
        Ok(Tags(pairs))
    }

    /// Tags read back from storage (already validated when written).
    pub(crate) fn from_stored(pairs: Vec<(String, String)>) -> Tags {
        Tags(pairs)
    }

    /// The value of `key` (keys are case-sensitive).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many tags there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The characters a key or value may hold.
pub(crate) fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, ' ' | '+' | '-' | '.' | '/' | ':' | '=' | '_')
}
