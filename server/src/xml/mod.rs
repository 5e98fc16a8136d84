//! XML bodies: a small writer for the documents we send, and readers for
//! the few we accept. Element names are the service's, exactly.

mod acl;
mod block_list;
mod cors_rules;
mod delete_retention;
mod listing;
mod page_list;
mod service_properties;
mod tags;
mod text;
mod user_delegation_key;

use bytes::Bytes;

pub(crate) use acl::{acl, parse_acl};
pub(crate) use block_list::{block_list, parse_block_list};
pub(crate) use cors_rules::cors_rules;
pub(crate) use delete_retention::delete_retention;
pub(crate) use listing::{BlobInclude, Echo, list_blobs, list_containers};
pub(crate) use page_list::{SourcePageList, page_list, parse_page_list};
pub(crate) use service_properties::{
    default_service_properties, merge_service_properties, service_stats,
};
pub(crate) use tags::{find_blobs, parse_tags, tags_document, write_tags};
pub(crate) use user_delegation_key::{parse_key_info, user_delegation_key};

/// A document is kept in pieces of about this size: a listing page of
/// megabytes is never one allocation, nor copied whole on its way out.
const PIECE: usize = 32 * 1024;

/// A rendered document, as pieces in order.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pieces: Vec<Bytes>,
    len: usize,
}

impl Document {
    /// Bytes in all.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn into_pieces(self) -> Vec<Bytes> {
        self.pieces
    }

    /// The whole document as text.
    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.pieces.concat()).expect("documents are UTF-8")
    }
}

/// Builds an XML document with escaped text; elements are written in call
/// order, which is how our documents keep the service's element order.
#[derive(Debug)]
pub(crate) struct XmlWriter {
    done: Document,
    out: String,
}

impl XmlWriter {
    pub(crate) fn new() -> XmlWriter {
        XmlWriter {
            done: Document::default(),
            out: String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>"),
        }
    }

    /// Sets the current piece aside once it is full (between elements).
    fn spill(&mut self) {
        if self.out.len() >= PIECE {
            let piece = std::mem::replace(&mut self.out, String::with_capacity(PIECE + PIECE / 4));
            self.done.len += piece.len();
            self.done.pieces.push(Bytes::from(piece));
        }
    }

    pub(crate) fn open(&mut self, tag: &str) -> &mut Self {
        self.out.push('<');
        self.out.push_str(tag);
        self.out.push('>');
        self
    }

    /// `<tag a="v" …>` with escaped attribute values.
    pub(crate) fn open_with(&mut self, tag: &str, attributes: &[(&str, &str)]) -> &mut Self {
        self.out.push('<');
        self.out.push_str(tag);
        for (name, value) in attributes {
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push_str("=\"");
            self.out.push_str(&quick_xml::escape::escape(*value));
            self.out.push('"');
        }
        self.out.push('>');
        self
    }

    pub(crate) fn close(&mut self, tag: &str) -> &mut Self {
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push('>');
        self.spill();
        self
    }

    /// `<tag>text</tag>`, or `<tag />` when `text` is empty.
    pub(crate) fn element(&mut self, tag: &str, text: &str) -> &mut Self {
        if text.is_empty() {
            return self.empty(tag);
        }
        self.open(tag);
        self.out.push_str(&quick_xml::escape::partial_escape(text));
        self.close(tag)
    }

    /// `<tag>text</tag>` only when there is a value.
    pub(crate) fn optional(&mut self, tag: &str, text: Option<&str>) -> &mut Self {
        if let Some(t) = text {
            self.element(tag, t);
        }
        self
    }

    pub(crate) fn empty(&mut self, tag: &str) -> &mut Self {
        self.out.push('<');
        self.out.push_str(tag);
        self.out.push_str(" />");
        self
    }

    /// Appends already-serialized XML (a stored document fragment).
    pub(crate) fn raw(&mut self, xml: &str) -> &mut Self {
        self.out.push_str(xml);
        self
    }

    /// The document as one string (for small documents).
    pub(crate) fn finish(self) -> String {
        if self.done.pieces.is_empty() {
            return self.out;
        }
        let mut all = String::with_capacity(self.done.len + self.out.len());
        for piece in &self.done.pieces {
            all.push_str(std::str::from_utf8(piece).expect("pieces are whole strings"));
        }
        all.push_str(&self.out);
        all
    }

    /// The document in pieces (for documents that may be large).
    pub(crate) fn finish_document(mut self) -> Document {
        if !self.out.is_empty() {
            self.done.len += self.out.len();
            self.done.pieces.push(Bytes::from(self.out));
        }
        self.done
    }
}

/// The error document of docs/wire/errors.md#the-error-answer.
pub(crate) fn error_body(
    code: &str,
    message: &str,
    request_id: &str,
    time: &str,
    details: &[(&'static str, String)],
) -> String {
    let mut w = XmlWriter::new();
    w.open("Error");
    w.element("Code", code);
    w.element(
        "Message",
        &format!("{message}\nRequestId:{request_id}\nTime:{time}"),
    );
    for (name, value) in details {
        w.element(name, value);
    }
    w.close("Error");
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_body_matches_the_spec_shape() {
        let body = error_body(
            "BlobNotFound",
            "The specified blob does not exist.",
            "5f3c1a52-7e0b-4a8e-9f61-0c2d8b7e4a10",
            "2024-09-03T10:15:07.1234567Z",
            &[],
        );
        assert_eq!(
            body,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobNotFound</Code>\
             <Message>The specified blob does not exist.\n\
             RequestId:5f3c1a52-7e0b-4a8e-9f61-0c2d8b7e4a10\n\
             Time:2024-09-03T10:15:07.1234567Z</Message></Error>"
        );
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        let mut w = XmlWriter::new();
        w.open_with("E", &[("A", "a\"<&")])
            .element("N", "x<y&z>")
            .close("E");
        assert_eq!(
            w.finish(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><E A=\"a&quot;&lt;&amp;\"><N>x&lt;y&amp;z&gt;</N></E>"
        );
    }
}
