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
    read(doc).map(|(rules, _)| rules).unwrap_or_default()
}

/// Methods a rule may allow: the reference's list (DELETE, GET, HEAD,
/// MERGE, POST, OPTIONS, PUT) and the later PATCH, CONNECT and TRACE of
/// the management API's enumeration.
const METHODS: [&str; 10] = [
    "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH", "CONNECT", "TRACE",
];
/// Longest origin, allowed header or exposed header.
const MAX_ENTRY: usize = 256;
/// Literal and prefixed header names per list.
const MAX_LITERAL_HEADERS: usize = 64;
const MAX_PREFIXED_HEADERS: usize = 2;
/// All rule values together, tags excluded.
const MAX_RULES_TEXT: usize = 2048;

/// The reference's limits on the rules of a Set Blob Service Properties
/// body: origins and methods present, methods the service knows,
/// `MaxAgeInSeconds` a whole number, entries of at most 256 characters, at
/// most 64 literal and 2 prefixed headers per list, 2 KB of values in all.
///
/// # Errors
/// `InvalidXmlNodeValue` for a rule outside them; `InvalidXmlDocument` for
/// text XML does not allow.
pub(crate) fn check_cors_rules(update: &str) -> Result<(), ApiError> {
    if !update.contains("CorsRule") {
        return Ok(());
    }
    let (rules, facts) = read(update)?;
    let bad = || ApiError::InvalidXmlNodeValue;
    if facts.bad_max_age || facts.value_chars > MAX_RULES_TEXT {
        return Err(bad());
    }
    for r in &rules {
        if r.origins.is_empty() || r.methods.is_empty() {
            return Err(bad());
        }
        if !r
            .methods
            .iter()
            .all(|m| METHODS.iter().any(|k| k.eq_ignore_ascii_case(m)))
        {
            return Err(bad());
        }
        for list in [&r.allowed_headers, &r.exposed_headers] {
            let prefixed = list.iter().filter(|h| h.ends_with('*')).count();
            if prefixed > MAX_PREFIXED_HEADERS || list.len() - prefixed > MAX_LITERAL_HEADERS {
                return Err(bad());
            }
        }
        let entries = r
            .origins
            .iter()
            .chain(&r.allowed_headers)
            .chain(&r.exposed_headers);
        if entries.into_iter().any(|e| e.chars().count() > MAX_ENTRY) {
            return Err(bad());
        }
    }
    Ok(())
}

/// What [`read`] saw besides the rules.
#[derive(Default)]
struct Facts {
    /// Characters of rule values, trimmed.
    value_chars: usize,
    /// A `MaxAgeInSeconds` that is not a whole number.
    bad_max_age: bool,
}

fn read(doc: &str) -> Result<(Vec<CorsRule>, Facts), ApiError> {
    let doc = doc.strip_prefix('\u{FEFF}').unwrap_or(doc);
    let mut reader = Reader::from_str(doc);
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut rules = Vec::new();
    let mut rule = CorsRule::default();
    let mut facts = Facts::default();
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
                if in_rule {
                    facts.value_chars += text.trim().chars().count();
                }
                match name.as_str() {
                    "AllowedOrigins" if in_rule => rule.origins = list(&text),
                    "AllowedMethods" if in_rule => rule.methods = list(&text),
                    "AllowedHeaders" if in_rule => rule.allowed_headers = list(&text),
                    "ExposedHeaders" if in_rule => rule.exposed_headers = list(&text),
                    "MaxAgeInSeconds" if in_rule => match text.trim().parse() {
                        Ok(n) => rule.max_age = n,
                        Err(_) => facts.bad_max_age = true,
                    },
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
    Ok((rules, facts))
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
    fn set_checks_the_reference_limits() {
        let doc = |rule: &str| {
            format!("<StorageServiceProperties><Cors>{rule}</Cors></StorageServiceProperties>")
        };
        let rule = |origins: &str, methods: &str, allowed: &str, max_age: &str| {
            doc(&format!(
                "<CorsRule><AllowedOrigins>{origins}</AllowedOrigins>\
                 <AllowedMethods>{methods}</AllowedMethods><AllowedHeaders>{allowed}</AllowedHeaders>\
                 <ExposedHeaders>x-ms-meta-*</ExposedHeaders><MaxAgeInSeconds>{max_age}</MaxAgeInSeconds></CorsRule>"
            ))
        };
        let long = format!("http://{}.test", "a".repeat(250));
        let literals = (0..65)
            .map(|i| format!("h{i}"))
            .collect::<Vec<_>>()
            .join(",");
        let many = (0..60)
            .map(|i| format!("http://origin-number-{i:03}.example.test"))
            .collect::<Vec<_>>()
            .join(",");
        // (document, accepted, why)
        let table = [
            (rule("*", "GET,PUT", "", "0"), true, "the SDK's defaults"),
            (
                rule(
                    "http://a.test",
                    "DELETE,GET,HEAD,MERGE,POST,OPTIONS,PUT,PATCH",
                    "x-ms-meta-*,x-ms-blob-*",
                    "86400",
                ),
                true,
                "every method, two prefixes",
            ),
            (
                doc(
                    "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods></CorsRule>",
                ),
                true,
                "optional elements left out",
            ),
            (doc(""), true, "no rules"),
            (rule("", "GET", "", "0"), false, "no origin"),
            (rule("*", "", "", "0"), false, "no method"),
            (rule("*", "GET,FETCH", "", "0"), false, "unknown method"),
            (rule("*", "GET", "", "ten"), false, "max age not a number"),
            (rule("*", "GET", "", "-1"), false, "negative max age"),
            (
                rule(&long, "GET", "", "0"),
                false,
                "origin over 256 characters",
            ),
            (
                rule("*", "GET", "a*,b*,c*", "0"),
                false,
                "three prefixed headers",
            ),
            (
                rule("*", "GET", &literals, "0"),
                false,
                "65 literal headers",
            ),
            (rule(&many, "GET", "", "0"), false, "over 2 KB of values"),
        ];
        for (doc, accepted, why) in table {
            assert_eq!(check_cors_rules(&doc).is_ok(), accepted, "{why}");
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
