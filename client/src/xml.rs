//! The few XML documents the client reads and writes.
//!
//! Answers are read into a small element tree and then picked apart by
//! name, so unknown elements and element order never matter (clients
//! locate elements by name, docs/wire/listing.md). Text is kept exactly,
//! whitespace included: blob names may begin or end with spaces.

use quick_xml::Reader;
use quick_xml::escape::{escape, resolve_predefined_entity};
use quick_xml::events::Event;

use crate::{Error, Result};

/// One element: its name, its text (concatenated), its child elements.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Element>,
}

impl Element {
    /// The first child named `name`.
    pub(crate) fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The text of the first child named `name`.
    pub(crate) fn text_of(&self, name: &str) -> Option<&str> {
        self.child(name).map(|c| c.text.as_str())
    }

    /// The text of the first child named `name`, `None` when absent or empty.
    pub(crate) fn non_empty(&self, name: &str) -> Option<String> {
        self.text_of(name)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
    }
}

/// Parses a document into its root element.
pub(crate) fn parse(text: &str) -> Result<Element> {
    let bad = |e: &dyn std::fmt::Display| Error::InvalidResponse(format!("bad XML: {e}"));
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    loop {
        let event = reader.read_event().map_err(|e| bad(&e))?;
        match event {
            Event::Start(start) => stack.push(Element {
                name: String::from_utf8_lossy(start.name().as_ref()).into_owned(),
                ..Element::default()
            }),
            Event::Empty(empty) => {
                let element = Element {
                    name: String::from_utf8_lossy(empty.name().as_ref()).into_owned(),
                    ..Element::default()
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None => root = Some(element),
                }
            }
            Event::End(_) => {
                let element = stack.pop().ok_or_else(|| bad(&"unbalanced end tag"))?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    None => root = Some(element),
                }
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.decode().map_err(|e| bad(&e))?);
                }
            }
            Event::CData(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.decode().map_err(|e| bad(&e))?);
                }
            }
            Event::GeneralRef(r) => {
                if let Some(top) = stack.last_mut() {
                    let resolved = match r.resolve_char_ref().map_err(|e| bad(&e))? {
                        Some(c) => c.to_string(),
                        None => {
                            let name = r.decode().map_err(|e| bad(&e))?;
                            resolve_predefined_entity(&name)
                                .ok_or_else(|| bad(&format!("unknown entity &{name};")))?
                                .to_owned()
                        }
                    };
                    top.text.push_str(&resolved);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    root.ok_or_else(|| bad(&"no root element"))
}

/// The code and message of an `<Error>` body, when it has them.
pub(crate) fn parse_error(text: &str) -> (Option<String>, Option<String>) {
    match parse(text) {
        Ok(root) if root.name == "Error" => (root.non_empty("Code"), root.non_empty("Message")),
        _ => (None, None),
    }
}

/// Escapes text for an element's content.
pub(crate) fn escape_text(s: &str) -> String {
    escape(s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_text_and_entities_are_read_exactly() {
        let doc = r#"<?xml version="1.0" encoding="utf-8"?>
<Root A="1"><Name> a &amp; b &#x41;</Name><Empty /><List><Item>1</Item><Item>2</Item></List><C><![CDATA[<x>]]></C></Root>"#;
        let root = parse(doc).unwrap();
        assert_eq!(root.name, "Root");
        assert_eq!(root.text_of("Name"), Some(" a & b A"));
        assert_eq!(root.text_of("Empty"), Some(""));
        assert_eq!(root.non_empty("Empty"), None);
        let items: Vec<&str> = root
            .child("List")
            .unwrap()
            .children
            .iter()
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(items, ["1", "2"]);
        assert_eq!(root.text_of("C"), Some("<x>"));
    }

    #[test]
    fn error_bodies_give_code_and_message() {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobNotFound</Code><Message>The specified blob does not exist.\nRequestId:1</Message></Error>";
        let (code, message) = parse_error(body);
        assert_eq!(code.as_deref(), Some("BlobNotFound"));
        assert!(message.unwrap().starts_with("The specified blob"));
        assert_eq!(parse_error("not xml <"), (None, None));
        assert_eq!(parse_error(""), (None, None));
    }

    #[test]
    fn malformed_documents_are_refused() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("").is_err());
    }
}
