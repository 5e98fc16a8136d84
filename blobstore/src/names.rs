//! Container and blob names, validated once at the edge (docs/wire/requests.md#names).

use std::fmt;

/// Why a name was refused; the server maps each to the service's error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Length outside the permitted range: `400 OutOfRangeInput`.
    #[error("The specified resource name length is not within the permissible limits.")]
    OutOfRange,
    /// A character or shape the rules forbid: `400 InvalidResourceName`.
    #[error("The specified resource name contains invalid characters.")]
    Invalid,
}

/// A valid container name: 3–63 of `a-z0-9-`, starting and ending with a
/// letter or digit, no `--`; or one of `$root`, `$logs`, `$web`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContainerName(String);

impl ContainerName {
    /// Validates a decoded container name.
    ///
    /// # Errors
    /// [`NameError::OutOfRange`] for a bad length, [`NameError::Invalid`] otherwise.
    pub fn parse(s: &str) -> Result<ContainerName, NameError> {
        if matches!(s, "$root" | "$logs" | "$web") {
            return Ok(ContainerName(s.to_owned()));
        }
        let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        // Characters first: a name with a forbidden character is "invalid"
        // whatever its length, as the service reports it.
        if !s.chars().all(allowed) {
            return Err(NameError::Invalid);
        }
        if !(3..=63).contains(&s.len()) {
            return Err(NameError::OutOfRange);
        }
        if s.starts_with('-') || s.ends_with('-') || s.contains("--") {
            return Err(NameError::Invalid);
        }
        Ok(ContainerName(s.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ContainerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A valid blob name: 1–1024 characters, at most 254 `/`-separated segments,
/// none of the characters the service refuses.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlobName(String);

/// The most characters in a blob name. The service counts UTF-16 code units;
/// Stowage counts Unicode scalar values (docs/wire/requests.md#names, unverified).
const MAX_BLOB_NAME_CHARS: usize = 1024;
const MAX_BLOB_NAME_SEGMENTS: usize = 254;

impl BlobName {
    /// Validates a decoded blob name.
    ///
    /// # Errors
    /// [`NameError::OutOfRange`] for a bad length, [`NameError::Invalid`] for
    /// forbidden characters or too many segments.
    pub fn parse(s: &str) -> Result<BlobName, NameError> {
        let chars = s.chars().count();
        if chars == 0 || chars > MAX_BLOB_NAME_CHARS {
            return Err(NameError::OutOfRange);
        }
        if s.chars().any(forbidden_in_blob_name) {
            return Err(NameError::Invalid);
        }
        if s.split('/').count() > MAX_BLOB_NAME_SEGMENTS {
            return Err(NameError::Invalid);
        }
        Ok(BlobName(s.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BlobName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Control characters, non-characters and private-use code points: the
/// characters that are invalid in URLs even when encoded, and that XML 1.0
/// could not carry in a listing.
fn forbidden_in_blob_name(c: char) -> bool {
    let u = c as u32;
    u <= 0x1F
        || (0x7F..=0x9F).contains(&u)
        || (0xFDD0..=0xFDEF).contains(&u)
        || (u & 0xFFFE) == 0xFFFE
        || (0xE000..=0xF8FF).contains(&u)
        || u >= 0xF0000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_name_rules() {
        let cases: &[(&str, Result<(), NameError>)] = &[
            ("abc", Ok(())),
            ("a-b-c", Ok(())),
            ("0abc9", Ok(())),
            (&"a".repeat(63), Ok(())),
            ("$root", Ok(())),
            ("$logs", Ok(())),
            ("$web", Ok(())),
            ("ab", Err(NameError::OutOfRange)),
            ("", Err(NameError::OutOfRange)),
            (&"a".repeat(64), Err(NameError::OutOfRange)),
            ("Abc", Err(NameError::Invalid)),
            ("ab_c", Err(NameError::Invalid)),
            ("-abc", Err(NameError::Invalid)),
            ("abc-", Err(NameError::Invalid)),
            ("a--bc", Err(NameError::Invalid)),
            ("$other", Err(NameError::Invalid)),
            ("a b", Err(NameError::Invalid)),
            ("AB", Err(NameError::Invalid)),
        ];
        for (name, expected) in cases {
            assert_eq!(
                ContainerName::parse(name).map(|_| ()),
                *expected,
                "container name {name:?}"
            );
        }
    }

    #[test]
    fn blob_name_rules() {
        let long_ok = "x".repeat(1024);
        let too_long = "x".repeat(1025);
        let many_segments = vec!["a"; 255].join("/");
        let max_segments = vec!["a"; 254].join("/");
        let cases: &[(&str, Result<(), NameError>)] = &[
            ("a", Ok(())),
            ("dir/hello world.txt", Ok(())),
            ("logs/", Ok(())),
            ("ends.", Ok(())),
            ("ünïcödé/名前", Ok(())),
            ("(quote)'s+plus", Ok(())),
            (&long_ok, Ok(())),
            (&max_segments, Ok(())),
            ("", Err(NameError::OutOfRange)),
            (&too_long, Err(NameError::OutOfRange)),
            (&many_segments, Err(NameError::Invalid)),
            ("tab\there", Err(NameError::Invalid)),
            ("nul\0", Err(NameError::Invalid)),
            ("del\u{7f}", Err(NameError::Invalid)),
            ("c1\u{85}", Err(NameError::Invalid)),
            ("nonchar\u{fffe}", Err(NameError::Invalid)),
            ("nonchar\u{ffff}", Err(NameError::Invalid)),
            ("private\u{e000}", Err(NameError::Invalid)),
        ];
        for (name, expected) in cases {
            assert_eq!(
                BlobName::parse(name).map(|_| ()),
                *expected,
                "blob name {name:?}"
            );
        }
    }
}
