//! The `StorageServiceProperties` document of Get/Set Blob Service
//! Properties (docs/wire/service.md#set-blob-service-properties, docs/wire/service.md#get-blob-service-properties).
//!
//! Stowage keeps the document per account; of its settings only the CORS
//! rules have an effect (read by [`super::cors_rules`], applied by
//! `crate::cors`; `docs/wire/cors.md`). Set merges the top-level elements it
//! is sent into the stored ones ("an element that is absent keeps its stored
//! value").

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::error::ApiError;

const ROOT: &str = "StorageServiceProperties";

/// The order the service writes the top-level elements in.
const ORDER: [&str; 7] = [
    "Logging",
    "HourMetrics",
    "MinuteMetrics",
    "Cors",
    "DefaultServiceVersion",
    "DeleteRetentionPolicy",
    "StaticWebsite",
];

/// The document before any Set (docs/wire/service.md#get-blob-service-properties).
pub(crate) fn default_service_properties() -> String {
    let metrics = "<Version>1.0</Version><Enabled>false</Enabled>\
                   <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>";
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><{ROOT}>\
         <Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read>\
         <Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>\
         <HourMetrics>{metrics}</HourMetrics><MinuteMetrics>{metrics}</MinuteMetrics>\
         <Cors /><DeleteRetentionPolicy><Enabled>false</Enabled></DeleteRetentionPolicy>\
         <StaticWebsite><Enabled>false</Enabled></StaticWebsite></{ROOT}>"
    )
}

/// The Get Blob Service Stats document: replication live, synchronized up
/// to `last_sync` (an RFC 1123 date).
pub(crate) fn service_stats(last_sync: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication>\
         <Status>live</Status><LastSyncTime>{last_sync}</LastSyncTime>\
         </GeoReplication></StorageServiceStats>"
    )
}

/// Splits a document into its top-level elements, each as (name, raw XML).
///
/// # Errors
/// `InvalidXmlDocument` when the body is not well-formed or its root is not
/// `StorageServiceProperties`.
fn top_level(doc: &str) -> Result<Vec<(String, String)>, ApiError> {
    // The reader skips a byte order mark without counting it in its
    // positions, which would shift every slice below by three bytes.
    let doc = doc.strip_prefix('\u{FEFF}').unwrap_or(doc);
    let mut reader = Reader::from_str(doc);
    let mut depth = 0usize;
    let mut seen_root = false;
    let mut start = 0usize;
    let mut out = Vec::new();
    let mut cors_rules = 0;
    loop {
        let before = reader.buffer_position() as usize;
        let event = reader
            .read_event()
            .map_err(|_| ApiError::InvalidXmlDocument)?;
        let after = reader.buffer_position() as usize;
        match event {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if depth == 0 {
                    if name != ROOT || seen_root {
                        return Err(ApiError::InvalidXmlDocument);
                    }
                    seen_root = true;
                } else if depth == 1 {
                    start = before;
                } else if depth == 2 && name == "CorsRule" {
                    cors_rules += 1;
                }
                depth += 1;
            }
            Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                match depth {
                    0 => return Err(ApiError::InvalidXmlDocument),
                    1 => out.push((name, doc[before..after].to_owned())),
                    _ => {}
                }
            }
            Event::End(e) => {
                depth = depth.checked_sub(1).ok_or(ApiError::InvalidXmlDocument)?;
                if depth == 1 {
                    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                    out.push((name, doc[start..after].to_owned()));
                }
            }
            Event::Text(t) if depth <= 1 && !t.iter().all(u8::is_ascii_whitespace) => {
                return Err(ApiError::InvalidXmlDocument);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !seen_root || depth != 0 {
        return Err(ApiError::InvalidXmlDocument);
    }
    if cors_rules > 5 {
        return Err(ApiError::InvalidXmlNodeValue);
    }
    Ok(out)
}

/// The stored document after a Set with `update`: every top-level element of
/// `update` replaces the stored one of the same name.
///
/// # Errors
/// `InvalidXmlDocument` / `InvalidXmlNodeValue` for a bad `update`.
pub(crate) fn merge_service_properties(stored: &str, update: &str) -> Result<String, ApiError> {
    let mut elements = top_level(stored)?;
    let updates = top_level(update)?;
    super::cors_rules::check_cors_rules(update)?;
    for (name, xml) in updates {
        match elements.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = xml,
            None => elements.push((name, xml)),
        }
    }
    let rank = |n: &str| ORDER.iter().position(|o| *o == n).unwrap_or(ORDER.len());
    elements.sort_by_key(|(n, _)| rank(n));
    let mut w = super::XmlWriter::new();
    w.open(ROOT);
    for (_, xml) in &elements {
        w.raw(xml);
    }
    w.close(ROOT);
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_document_parses_and_lists_every_element() {
        let names: Vec<String> = top_level(&default_service_properties())
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names,
            [
                "Logging",
                "HourMetrics",
                "MinuteMetrics",
                "Cors",
                "DeleteRetentionPolicy",
                "StaticWebsite"
            ]
        );
    }

    #[test]
    fn set_replaces_only_the_elements_it_sends() {
        let update = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<StorageServiceProperties>\n  \
                      <Cors><CorsRule><AllowedOrigins>http://example.test</AllowedOrigins>\
                      <AllowedMethods>GET</AllowedMethods></CorsRule></Cors>\n  \
                      <DefaultServiceVersion>2021-10-04</DefaultServiceVersion>\n</StorageServiceProperties>";
        let merged = merge_service_properties(&default_service_properties(), update).unwrap();
        assert!(merged.contains("<Logging><Version>1.0</Version>"));
        assert!(merged.contains("<Cors><CorsRule><AllowedOrigins>http://example.test"));
        assert!(!merged.contains("<Cors />"));
        let cors = merged.find("<Cors>").unwrap();
        let dsv = merged.find("<DefaultServiceVersion>").unwrap();
        let drp = merged.find("<DeleteRetentionPolicy>").unwrap();
        assert!(cors < dsv && dsv < drp);
    }

    #[test]
    fn bad_documents_are_refused() {
        let six_rules = format!(
            "<StorageServiceProperties><Cors>{}</Cors></StorageServiceProperties>",
            "<CorsRule></CorsRule>".repeat(6)
        );
        let cases = [
            ("<StorageServiceProperties><Logging>", "unclosed"),
            ("<Other />", "wrong root"),
            ("not xml", "text"),
            ("", "empty"),
            (six_rules.as_str(), "six CORS rules"),
        ];
        for (doc, why) in cases {
            assert!(
                merge_service_properties(&default_service_properties(), doc).is_err(),
                "{why}"
            );
        }
    }

    /// Found by the `xml` fuzz target: after a byte order mark every element
    /// was cut three bytes early, storing a broken document (and panicking
    /// when the cut fell inside a character).
    #[test]
    fn a_byte_order_mark_is_not_part_of_the_elements() {
        let update = "<StorageServiceProperties><Ab\u{e9}/><Cors><CorsRule>\
                      <AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods></CorsRule></Cors></StorageServiceProperties>";
        let stored = default_service_properties();
        let plain = merge_service_properties(&stored, update).unwrap();
        let with_bom = merge_service_properties(&stored, &format!("\u{FEFF}{update}")).unwrap();
        assert_eq!(with_bom, plain);
        assert!(plain.contains("<Ab\u{e9}/>"), "{plain}");
        assert!(
            plain.contains("<Cors><CorsRule><AllowedOrigins>*"),
            "{plain}"
        );
        // The stored document is read again by the next Set.
        merge_service_properties(&with_bom, &format!("\u{FEFF}{stored}")).unwrap();
    }
}
