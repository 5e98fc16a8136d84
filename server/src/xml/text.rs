//! Element text as the readers see it: quick-xml hands entity and character
//! references over apart from the text around them.

use quick_xml::escape::resolve_xml_entity;
use quick_xml::events::BytesRef;

use crate::error::ApiError;

/// The text a predefined entity (`&amp;`) or a character reference
/// (`&#x3E;`, `&#49;`) stands for.
pub(super) fn reference(r: &BytesRef<'_>) -> Result<String, ApiError> {
    if let Some(c) = r
        .resolve_char_ref()
        .map_err(|_| ApiError::InvalidXmlDocument)?
    {
        return Ok(c.to_string());
    }
    let name = r.decode().map_err(|_| ApiError::InvalidXmlDocument)?;
    resolve_xml_entity(&name)
        .map(str::to_owned)
        .ok_or(ApiError::InvalidXmlDocument)
}

/// Appends element text; a character XML 1.0 does not allow (controls other
/// than tab, CR and LF; U+FFFE, U+FFFF) makes the document not well-formed,
/// and stored as-is it would make the documents we write unreadable.
pub(super) fn push_text(text: &mut String, more: &str) -> Result<(), ApiError> {
    let legal = |c: char| {
        matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
    };
    if !more.chars().all(legal) {
        return Err(ApiError::InvalidXmlDocument);
    }
    text.push_str(more);
    Ok(())
}
