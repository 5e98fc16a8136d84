//! The `KeyInfo` request and `UserDelegationKey` answer of Get User
//! Delegation Key (docs/wire/oauth.md).

use quick_xml::Reader;
use quick_xml::events::Event;

use super::XmlWriter;
use super::text::{push_text, reference};
use crate::auth::delegation::KeyFields;
use crate::error::ApiError;

/// Nesting beyond this is refused.
const MAX_DEPTH: usize = 4;

/// A `KeyInfo` body: the texts of `Start` (optional) and `Expiry`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyInfo {
    /// `Start`, as sent.
    pub start: Option<String>,
    /// `Expiry`, as sent.
    pub expiry: Option<String>,
}

/// Parses a Get User Delegation Key body. Elements other than `Start` and
/// `Expiry` (such as `DelegatedUserTid`) are read past.
///
/// # Errors
/// `InvalidXmlDocument` when the body is not well-formed or its root is not
/// `KeyInfo`.
pub(crate) fn parse_key_info(body: &[u8]) -> Result<KeyInfo, ApiError> {
    let mut reader = Reader::from_reader(body);
    let mut buf = Vec::new();
    let mut path: Vec<Vec<u8>> = Vec::new();
    let mut info = KeyInfo::default();
    let mut text = String::new();
    let mut seen_root = false;
    loop {
        match reader
            .read_event_into(&mut buf)
            .map_err(|_| ApiError::InvalidXmlDocument)?
        {
            Event::Start(e) => {
                let name = e.name().as_ref().to_vec();
                if path.is_empty() {
                    if seen_root || name != b"KeyInfo" {
                        return Err(ApiError::InvalidXmlDocument);
                    }
                    seen_root = true;
                }
                if path.len() >= MAX_DEPTH {
                    return Err(ApiError::InvalidXmlDocument);
                }
                path.push(name);
                text.clear();
            }
            Event::Empty(e) if path.is_empty() => {
                if seen_root || e.name().as_ref() != b"KeyInfo" {
                    return Err(ApiError::InvalidXmlDocument);
                }
                seen_root = true;
            }
            Event::Text(t) => push_text(
                &mut text,
                &t.decode().map_err(|_| ApiError::InvalidXmlDocument)?,
            )?,
            Event::GeneralRef(r) => push_text(&mut text, &reference(&r)?)?,
            Event::End(_) => {
                let name = path.pop().ok_or(ApiError::InvalidXmlDocument)?;
                let value = text.trim().to_owned();
                text.clear();
                if path.len() == 1 {
                    match name.as_slice() {
                        b"Start" => info.start = Some(value),
                        b"Expiry" => info.expiry = Some(value),
                        _ => {}
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !seen_root || !path.is_empty() {
        return Err(ApiError::InvalidXmlDocument);
    }
    Ok(info)
}

/// The `UserDelegationKey` document.
pub(crate) fn user_delegation_key(fields: &KeyFields<'_>, value: &str) -> String {
    let mut w = XmlWriter::new();
    w.open("UserDelegationKey")
        .element("SignedOid", fields.oid)
        .element("SignedTid", fields.tid)
        .element("SignedStart", fields.start)
        .element("SignedExpiry", fields.expiry)
        .element("SignedService", fields.service)
        .element("SignedVersion", fields.version)
        .element("Value", value)
        .close("UserDelegationKey");
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_info_bodies() {
        let ok = |body: &str| parse_key_info(body.as_bytes());
        assert_eq!(
            ok("<?xml version=\"1.0\" encoding=\"utf-8\"?><KeyInfo><Start>2024-09-01T00:00:00Z</Start>\
                <Expiry>2024-09-08T00:00:00Z</Expiry></KeyInfo>")
            .unwrap(),
            KeyInfo {
                start: Some("2024-09-01T00:00:00Z".into()),
                expiry: Some("2024-09-08T00:00:00Z".into()),
            }
        );
        assert_eq!(
            ok("<KeyInfo><Expiry> 2024-09-08 </Expiry><DelegatedUserTid>t</DelegatedUserTid></KeyInfo>")
                .unwrap(),
            KeyInfo {
                start: None,
                expiry: Some("2024-09-08".into()),
            }
        );
        assert_eq!(ok("<KeyInfo/>").unwrap(), KeyInfo::default());
        for bad in [
            "",
            "<Other/>",
            "<KeyInfo>",
            "<KeyInfo></Other>",
            "not xml",
            "<KeyInfo/><KeyInfo/>",
        ] {
            assert!(ok(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn answer_matches_the_reference_shape() {
        let fields = KeyFields {
            oid: "o",
            tid: "t",
            start: "2024-09-01T00:00:00Z",
            expiry: "2024-09-08T00:00:00Z",
            service: "b",
            version: "2026-10-06",
        };
        assert_eq!(
            user_delegation_key(&fields, "a2V5"),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><UserDelegationKey><SignedOid>o</SignedOid>\
             <SignedTid>t</SignedTid><SignedStart>2024-09-01T00:00:00Z</SignedStart>\
             <SignedExpiry>2024-09-08T00:00:00Z</SignedExpiry><SignedService>b</SignedService>\
             <SignedVersion>2026-10-06</SignedVersion><Value>a2V5</Value></UserDelegationKey>"
        );
    }
}
