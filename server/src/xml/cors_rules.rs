//! The `Cors` element of a stored `StorageServiceProperties` document, read
//! into rules (`docs/wire/cors.md`).

use quick_xml::Reader;
use quick_xml::events::Event;

use super::text::{push_text, reference};
use crate::cors::{CorsRule, rules::list};
use crate::error::ApiError;

/// The CORS rules of a stored service properties document, in the order
/// they were set. The stored document was validated when it was set; one
/// that does not read yields no rules rather than failing requests.
pub(crate) fn cors_rules(doc: &str) -> Vec<CorsRule> {
    // Cheap way out for the common case of no rules at all.
    if !doc.contains("CorsRule") {
        return Vec::new();
    }
    read(doc).unwrap_or_default()
}

fn read(doc: &str) -> Result<Vec<CorsRule>, ApiError> {
    let doc = doc.strip_prefix('\u{FEFF}').unwrap_or(doc);
    let mut reader = Reader::from_str(doc);
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut rules = Vec::new();
    let mut rule = CorsRule::default();
    loop {
        match reader
            .read_event()
            .map_err(|_| ApiError::InvalidXmlDocument)?
        {
            Event::Start(e) => {
                path.push(String::from_utf8_lossy(e.name().as_ref()).into_owned());
                text.clear();
            }
            Event::Empty(e) if path.len() == 2 && e.name().as_ref() == b"CorsRule" => {
                // `<CorsRule/>` allows nothing, but keeps its place in the order.
                rules.push(CorsRule::default());
            }
            Event::Text(t) => push_text(
                &mut text,
                &t.decode().map_err(|_| ApiError::InvalidXmlDocument)?,
            )?,
            Event::GeneralRef(r) => push_text(&mut text, &reference(&r)?)?,
            Event::CData(c) => push_text(
                &mut text,
                &c.decode().map_err(|_| ApiError::InvalidXmlDocument)?,
            )?,
            Event::End(_) => {
                let name = path.pop().ok_or(ApiError::InvalidXmlDocument)?;
                let in_rule = path.len() == 3 && path[1] == "Cors" && path[2] == "CorsRule";
                match name.as_str() {
                    "AllowedOrigins" if in_rule => rule.origins = list(&text),
                    "AllowedMethods" if in_rule => rule.methods = list(&text),
                    "AllowedHeaders" if in_rule => rule.allowed_headers = list(&text),
                    "ExposedHeaders" if in_rule => rule.exposed_headers = list(&text),
                    "MaxAgeInSeconds" if in_rule => {
                        rule.max_age = text.trim().parse().unwrap_or(0);
                    }
                    "CorsRule" if path.len() == 2 && path[1] == "Cors" => {
                        rules.push(std::mem::take(&mut rule));
                    }
                    _ => {}
                }
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_read_in_order_with_trimmed_entries() {
        let doc = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>\
                   <Logging><Version>1.0</Version></Logging><Cors>\
                   <CorsRule><AllowedOrigins>http://www.contoso.com, http://www.fabrikam.com</AllowedOrigins>\
                   <AllowedMethods>PUT,GET</AllowedMethods>\
                   <AllowedHeaders>x-ms-meta-data*,x-ms-meta-target*,x-ms-meta-abc</AllowedHeaders>\
                   <ExposedHeaders>x-ms-meta-*</ExposedHeaders><MaxAgeInSeconds>200</MaxAgeInSeconds></CorsRule>\
                   <CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>\
                   <AllowedHeaders /><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule>\
                   </Cors></StorageServiceProperties>";
        let rules = cors_rules(doc);
        assert_eq!(rules.len(), 2);
        assert_eq!(
            rules[0].origins,
            ["http://www.contoso.com", "http://www.fabrikam.com"]
        );
        assert_eq!(rules[0].methods, ["PUT", "GET"]);
        assert_eq!(
            rules[0].allowed_headers,
            ["x-ms-meta-data*", "x-ms-meta-target*", "x-ms-meta-abc"]
        );
        assert_eq!(rules[0].exposed_headers, ["x-ms-meta-*"]);
        assert_eq!(rules[0].max_age, 200);
        assert_eq!(rules[1].origins, ["*"]);
        assert!(rules[1].allowed_headers.is_empty() && rules[1].exposed_headers.is_empty());
        assert_eq!(rules[1].max_age, 5);
    }

    #[test]
    fn documents_without_rules_have_none() {
        for doc in [
            crate::xml::default_service_properties(),
            "<StorageServiceProperties><Cors></Cors></StorageServiceProperties>".to_owned(),
            "not xml <CorsRule>".to_owned(),
        ] {
            assert!(cors_rules(&doc).is_empty(), "{doc}");
        }
    }

    #[test]
    fn escaped_text_is_read_as_text() {
        let doc = "<StorageServiceProperties><Cors><CorsRule>\
                   <AllowedOrigins>http://a.test&#44;http://b.test</AllowedOrigins>\
                   <AllowedMethods>GET</AllowedMethods></CorsRule></Cors></StorageServiceProperties>";
        assert_eq!(
            cors_rules(doc)[0].origins,
            ["http://a.test", "http://b.test"]
        );
    }
}
