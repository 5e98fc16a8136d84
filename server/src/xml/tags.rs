//! The `Tags` documents of Set / Get Blob Tags and the Find Blobs by Tags
//! answer (docs/wire/tags.md).

use quick_xml::Reader;
use quick_xml::events::Event;
use stowage_blobstore::{FindBlobsByTagsOutput, Tags};

use super::text::{push_text, reference};
use super::{Document, XmlWriter};
use crate::error::ApiError;

/// Parses a Set Blob Tags body: `<Tags><TagSet><Tag><Key/><Value/></Tag>…`.
/// An empty `TagSet` (or none) is the empty set.
///
/// # Errors
/// `InvalidXmlDocument` when it is not well-formed or not this shape; the
/// tag rules' codes for a set that breaks them.
pub(crate) fn parse_tags(body: &[u8]) -> Result<Tags, ApiError> {
    let mut reader = Reader::from_reader(body);
    let mut buf = Vec::new();
    // The open elements, outermost first.
    let mut path: Vec<Vec<u8>> = Vec::new();
    let mut seen_root = false;
    let mut key: Option<String> = None;
    let mut value: Option<String> = None;
    let mut text = String::new();
    let mut pairs = Vec::new();
    let bad = || ApiError::InvalidXmlDocument;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|_| bad())?;
        match event {
            Event::Start(e) => {
                let name = e.name().as_ref().to_vec();
                let expected: &[u8] = match path.len() {
                    0 if !seen_root => b"Tags",
                    1 => b"TagSet",
                    2 => b"Tag",
                    3 if name == b"Key" || name == b"Value" => &name,
                    _ => return Err(bad()),
                };
                if name != expected {
                    return Err(bad());
                }
                if path.is_empty() {
                    seen_root = true;
                }
                if path.len() == 2 {
                    key = None;
                    value = None;
                }
                text.clear();
                path.push(name);
            }
            Event::Empty(e) => {
                let name = e.name().as_ref().to_vec();
                match (path.len(), name.as_slice()) {
                    (0, b"Tags") if !seen_root => seen_root = true,
                    (1, b"TagSet") => {}
                    (3, b"Key") => key = Some(String::new()),
                    (3, b"Value") => value = Some(String::new()),
                    _ => return Err(bad()),
                }
            }
            Event::Text(t) => {
                let t = t.decode().map_err(|_| bad())?;
                if path.len() == 4 {
                    push_text(&mut text, &t)?;
                } else if !t.trim().is_empty() {
                    return Err(bad());
                }
            }
            Event::GeneralRef(r) if path.len() == 4 => push_text(&mut text, &reference(&r)?)?,
            Event::GeneralRef(_) => return Err(bad()),
            Event::End(_) => {
                let name = path.pop().ok_or_else(bad)?;
                match name.as_slice() {
                    b"Key" => key = Some(std::mem::take(&mut text)),
                    b"Value" => value = Some(std::mem::take(&mut text)),
                    b"Tag" => {
                        let k = key.take().ok_or_else(bad)?;
                        pairs.push((k, value.take().unwrap_or_default()));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !seen_root || !path.is_empty() {
        return Err(bad());
    }
    Ok(Tags::new(pairs).map_err(stowage_blobstore::Error::from)?)
}

fn tag_set<'a>(w: &mut XmlWriter, pairs: impl Iterator<Item = (&'a str, &'a str)>) {
    let pairs: Vec<_> = pairs.collect();
    w.open("Tags");
    if pairs.is_empty() {
        w.empty("TagSet");
    } else {
        w.open("TagSet");
        for (k, v) in pairs {
            w.open("Tag")
                .element("Key", k)
                .element("Value", v)
                .close("Tag");
        }
        w.close("TagSet");
    }
    w.close("Tags");
}

/// `<Tags>` of a listed blob (List Blobs with `include=tags`).
pub(crate) fn write_tags(w: &mut XmlWriter, tags: &Tags) {
    tag_set(w, tags.iter());
}

/// The Get Blob Tags document.
pub(crate) fn tags_document(tags: &Tags) -> Document {
    let mut w = XmlWriter::new();
    tag_set(&mut w, tags.iter());
    w.finish_document()
}

/// The Find Blobs by Tags answer, at account or container scope.
pub(crate) fn find_blobs(
    service_endpoint: &str,
    where_: &str,
    out: &FindBlobsByTagsOutput,
) -> Document {
    let mut w = XmlWriter::new();
    w.open_with(
        "EnumerationResults",
        &[("ServiceEndpoint", service_endpoint)],
    );
    w.element("Where", where_);
    if out.blobs.is_empty() {
        w.empty("Blobs");
    } else {
        w.open("Blobs");
        for b in &out.blobs {
            w.open("Blob")
                .element("Name", &b.name)
                .element("ContainerName", &b.container);
            tag_set(&mut w, b.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            w.close("Blob");
        }
        w.close("Blobs");
    }
    w.element("NextMarker", out.next_marker.as_deref().unwrap_or(""));
    w.close("EnumerationResults");
    w.finish_document()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_bodies() {
        let ok = |s: &str| {
            parse_tags(s.as_bytes())
                .map(|t| {
                    t.iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                })
                .map_err(|e| e.answer().code)
        };
        assert_eq!(
            ok(r#"<?xml version="1.0" encoding="utf-8"?>
<Tags><TagSet><Tag><Key>project</Key><Value>alpha</Value></Tag><Tag><Key>n</Key><Value /></Tag></TagSet></Tags>"#),
            Ok(vec!["project=alpha".to_owned(), "n=".to_owned()])
        );
        assert_eq!(ok("<Tags><TagSet/></Tags>"), Ok(vec![]));
        assert_eq!(ok("<Tags><TagSet></TagSet></Tags>"), Ok(vec![]));
        assert_eq!(ok("<Tags/>"), Ok(vec![]));
        assert_eq!(ok("<Tag/>"), Err("InvalidXmlDocument"));
        assert_eq!(ok("<Tags><TagSet>"), Err("InvalidXmlDocument"));
        assert_eq!(ok("not xml"), Err("InvalidXmlDocument"));
        assert_eq!(
            ok("<Tags><TagSet><Tag><Value>v</Value></Tag></TagSet></Tags>"),
            Err("InvalidXmlDocument")
        );
        assert_eq!(
            ok("<Tags><TagSet><Tag><Key></Key><Value>v</Value></Tag></TagSet></Tags>"),
            Err("EmptyTagName")
        );
        assert_eq!(
            ok("<Tags><TagSet><Tag><Key>a!</Key><Value>v</Value></Tag></TagSet></Tags>"),
            Err("InvalidTag")
        );
    }

    #[test]
    fn get_tags_golden() {
        let t = Tags::new(vec![("k".into(), "v 1".into())]).unwrap();
        assert_eq!(
            tags_document(&t).text(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet><Tag><Key>k</Key><Value>v 1</Value></Tag></TagSet></Tags>"
        );
        assert_eq!(
            tags_document(&Tags::default()).text(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet /></Tags>"
        );
    }
}
