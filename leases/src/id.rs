//! Lease ids: GUIDs compared by value, whatever text form they came in.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

use crate::{Error, Result};

/// A lease id (docs/wire/leases.md#request-headers).
///
/// Two ids are equal when they denote the same 128-bit value, so `ABC…`,
/// `abc…`, `{abc…}` and the 32-digit form of the same GUID are one id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseId(Uuid);

impl LeaseId {
    /// Parses a lease id in any usual GUID text form: 32 hex digits, the
    /// hyphenated 8-4-4-4-12 form, or the hyphenated form inside `{}` or
    /// `()`. Hex digits are case-insensitive.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLeaseId`] for anything else, including surrounding
    /// whitespace, `urn:uuid:` prefixes and the 32-digit form in brackets,
    /// which the spec does not list.
    pub fn parse(s: &str) -> Result<LeaseId> {
        let inner = match s.as_bytes() {
            [b'{', .., b'}'] | [b'(', .., b')'] => {
                let inner = &s[1..s.len() - 1];
                if inner.len() != 36 {
                    return Err(Error::InvalidLeaseId);
                }
                inner
            }
            _ => s,
        };
        let digits: Vec<u8> = match inner.len() {
            32 => inner.bytes().collect(),
            36 => hyphenated_digits(inner)?,
            _ => return Err(Error::InvalidLeaseId),
        };
        let mut value: u128 = 0;
        for digit in digits {
            let nibble = char::from(digit)
                .to_digit(16)
                .ok_or(Error::InvalidLeaseId)?;
            value = (value << 4) | u128::from(nibble);
        }
        Ok(LeaseId(Uuid::from_u128(value)))
    }

    /// A fresh server-generated id: a random UUID v4.
    pub fn random() -> LeaseId {
        LeaseId(Uuid::new_v4())
    }

    /// The id with this 128-bit value.
    pub const fn from_u128(value: u128) -> LeaseId {
        LeaseId(Uuid::from_u128(value))
    }

    /// The id's 128-bit value.
    pub const fn as_u128(self) -> u128 {
        self.0.as_u128()
    }
}

/// The 32 digits of an 8-4-4-4-12 GUID, or an error if a hyphen is missing
/// or misplaced.
fn hyphenated_digits(s: &str) -> Result<Vec<u8>> {
    const HYPHENS: [usize; 4] = [8, 13, 18, 23];
    let mut digits = Vec::with_capacity(32);
    for (i, b) in s.bytes().enumerate() {
        match (HYPHENS.contains(&i), b == b'-') {
            (true, true) => {}
            (false, false) => digits.push(b),
            _ => return Err(Error::InvalidLeaseId),
        }
    }
    Ok(digits)
}

impl FromStr for LeaseId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        LeaseId::parse(s)
    }
}

/// Lowercase hyphenated, the form the service generates.
impl fmt::Display for LeaseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALUE: u128 = 0x0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0;
    const CANONICAL: &str = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

    #[test]
    fn every_listed_form_parses_to_the_same_id() {
        let accepted = [
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
            "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
            "0f1E2d3C-4b5A-6978-8796-a5B4c3D2e1F0",
            "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
            "0F1E2D3C4B5A69788796A5B4C3D2E1F0",
            "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}",
            "{0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0}",
            "(0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)",
            "(0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0)",
        ];
        let expected = LeaseId::from_u128(VALUE);
        for text in accepted {
            let id = LeaseId::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(id, expected, "{text:?}");
            assert_eq!(id.to_string(), CANONICAL, "{text:?}");
            assert_eq!(text.parse::<LeaseId>(), Ok(expected), "{text:?}");
        }
    }

    #[test]
    fn anything_else_is_invalid_lease_id() {
        let rejected = [
            "",
            "not-a-guid",
            // one digit short / long
            "0f1e2d3c4b5a69788796a5b4c3d2e1f",
            "0f1e2d3c4b5a69788796a5b4c3d2e1f00",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f00",
            // a non-hex digit
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg",
            "0f1e2d3c4b5a69788796a5b4c3d2e1fg",
            "+f1e2d3c4b5a69788796a5b4c3d2e1f0",
            // hyphens missing, misplaced or extra
            "0f1e2d3c-4b5a-6978-8796a5b4c3d2e1f00",
            "0f1e2d3c4-b5a-6978-8796-a5b4c3d2e1f0",
            "0f1e2d3c-4b5a-6978-8796-a5b4-3d2e1f0",
            "-0f1e2d3c4b5a69788796a5b4c3d2e1f0-",
            // brackets: unmatched, other kinds, or around the 32-digit form
            "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0)",
            "(0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}",
            "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
            "[0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0]",
            "{0f1e2d3c4b5a69788796a5b4c3d2e1f0}",
            "{{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}}",
            // other prefixes and whitespace
            "urn:uuid:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
            " 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 ",
            "{0x0f1e2d3c,0x4b5a,0x6978,{0x87,0x96,0xa5,0xb4,0xc3,0xd2,0xe1,0xf0}}",
            // non-ASCII of the right byte length must not panic
            "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1é",
            "0f1e2d3c4b5a69788796a5b4c3d2e1é",
            "{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1é}",
        ];
        for text in rejected {
            assert_eq!(LeaseId::parse(text), Err(Error::InvalidLeaseId), "{text:?}");
        }
    }

    #[test]
    fn different_values_are_different_ids() {
        let a = LeaseId::parse("00000000-0000-0000-0000-000000000001").unwrap();
        let b = LeaseId::parse("00000000000000000000000000000002").unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_u128(), 1);
        assert_eq!(b.as_u128(), 2);
    }

    #[test]
    fn random_ids_are_v4_lowercase_hyphenated_and_distinct() {
        let a = LeaseId::random();
        let b = LeaseId::random();
        assert_ne!(a, b);
        let text = a.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(&text[14..15], "4", "version nibble of {text}");
        assert!(
            matches!(&text[19..20], "8" | "9" | "a" | "b"),
            "variant of {text}"
        );
        assert_eq!(text, text.to_lowercase());
        assert_eq!(LeaseId::parse(&text), Ok(a));
    }
}
