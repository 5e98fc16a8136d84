//! The `PageList` document of Get Page Ranges (docs/wire/pages.md).

use std::ops::Range;

use quick_xml::Reader;
use quick_xml::events::Event;
use stowage_blobstore::PageRangeItem;

use super::{Document, XmlWriter};

/// `<PageList>` with `<PageRange>` (and, for a diff, `<ClearRange>`)
/// elements in offset order, inclusive ends, and `<NextMarker>` when the
/// answer was cut at `maxresults`.
pub(crate) fn page_list(ranges: &[PageRangeItem], next_marker: Option<&str>) -> Document {
    let mut w = XmlWriter::new();
    w.open("PageList");
    for item in ranges {
        let tag = if item.cleared {
            "ClearRange"
        } else {
            "PageRange"
        };
        w.open(tag)
            .element("Start", &item.range.start.to_string())
            .element("End", &(item.range.end - 1).to_string())
            .close(tag);
    }
    w.optional("NextMarker", next_marker);
    w.close("PageList");
    w.finish_document()
}

/// A `PageList` another host answered (the source of a copy).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SourcePageList {
    /// The `<PageRange>`s, ends exclusive, in document order.
    pub pages: Vec<Range<u64>>,
    /// The `<ClearRange>`s (a diff), likewise.
    pub clears: Vec<Range<u64>>,
    /// `<NextMarker>`, when the list goes on.
    pub next_marker: Option<String>,
}

/// Reads a `PageList` answered by another host. `None` when the document
/// is not such a list.
pub(crate) fn parse_page_list(body: &[u8]) -> Option<SourcePageList> {
    let mut reader = Reader::from_reader(body);
    let mut buf = Vec::new();
    let mut path: Vec<Vec<u8>> = Vec::new();
    let (mut start, mut end) = (None, None);
    let mut list = SourcePageList::default();
    let mut seen_root = false;
    loop {
        match reader.read_event_into(&mut buf).ok()? {
            Event::Start(e) => {
                let name = e.name().as_ref().to_vec();
                if path.is_empty() && (name != b"PageList" || seen_root) {
                    return None;
                }
                seen_root = true;
                if name == b"PageRange" || name == b"ClearRange" {
                    (start, end) = (None, None);
                }
                path.push(name);
            }
            Event::End(_) => {
                let into = match path.pop().as_deref() {
                    Some(b"PageRange") => Some(&mut list.pages),
                    Some(b"ClearRange") => Some(&mut list.clears),
                    _ => None,
                };
                if let Some(into) = into {
                    let (s, e): (u64, u64) = (start?, end?);
                    if e < s {
                        return None;
                    }
                    into.push(s..e + 1);
                }
            }
            Event::Text(t) => {
                let text = t.decode().ok()?;
                let text = text.trim();
                let parent = path.len().checked_sub(2).map(|i| path[i].as_slice());
                match (parent, path.last().map(Vec::as_slice)) {
                    (Some(b"PageRange" | b"ClearRange"), Some(b"Start")) => {
                        start = Some(text.parse().ok()?);
                    }
                    (Some(b"PageRange" | b"ClearRange"), Some(b"End")) => {
                        end = Some(text.parse().ok()?);
                    }
                    (Some(b"PageList"), Some(b"NextMarker")) if !text.is_empty() => {
                        list.next_marker = Some(text.to_owned());
                    }
                    _ => {}
                }
            }
            Event::Empty(e) if path.is_empty() => {
                if e.name().as_ref() != b"PageList" || seen_root {
                    return None;
                }
                seen_root = true;
            }
            Event::Eof if path.is_empty() && seen_root => break,
            Event::Eof => return None,
            _ => {}
        }
        buf.clear();
    }
    Some(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_lists_of_other_hosts_are_read() {
        let doc = |inner: &str| {
            format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><PageList>{inner}</PageList>")
        };
        let range =
            |s: u64, e: u64| format!("<PageRange><Start>{s}</Start><End>{e}</End></PageRange>");
        let list = |pages: &[(u64, u64)], clears: &[(u64, u64)], marker: Option<&str>| {
            let ranges = |r: &[(u64, u64)]| r.iter().map(|&(s, e)| s..e).collect();
            Some(SourcePageList {
                pages: ranges(pages),
                clears: ranges(clears),
                next_marker: marker.map(str::to_owned),
            })
        };
        let cases = [
            (doc(""), list(&[], &[], None)),
            (
                doc(&format!("{}{}", range(0, 511), range(1024, 2047))),
                list(&[(0, 512), (1024, 2048)], &[], None),
            ),
            (
                doc(&format!(
                    "{}<ClearRange><Start>512</Start><End>1023</End></ClearRange>\
                     <NextMarker>p2048</NextMarker>",
                    range(0, 511)
                )),
                list(&[(0, 512)], &[(512, 1024)], Some("p2048")),
            ),
            (
                doc(
                    "<PageRange>\n  <Start>0</Start>\n  <End>511</End>\n</PageRange><NextMarker />",
                ),
                list(&[(0, 512)], &[], None),
            ),
            (doc("<PageRange><Start>0</Start></PageRange>"), None),
            (
                doc("<PageRange><Start>x</Start><End>1</End></PageRange>"),
                None,
            ),
            (doc(&range(1024, 511)), None),
            ("<BlockList></BlockList>".to_owned(), None),
            ("<PageList/>".to_owned(), list(&[], &[], None)),
            (String::new(), None),
            ("<PageList><PageRange>".to_owned(), None),
        ];
        for (i, (body, want)) in cases.into_iter().enumerate() {
            assert_eq!(parse_page_list(body.as_bytes()), want, "case {i}: {body}");
        }
    }

    #[test]
    fn golden_page_list() {
        let ranges = vec![
            PageRangeItem {
                range: 0..512,
                cleared: false,
            },
            PageRangeItem {
                range: 1024..2048,
                cleared: true,
            },
        ];
        assert_eq!(
            page_list(&ranges, Some("p2048")).text(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><PageList>\
             <PageRange><Start>0</Start><End>511</End></PageRange>\
             <ClearRange><Start>1024</Start><End>2047</End></ClearRange>\
             <NextMarker>p2048</NextMarker></PageList>"
        );
    }
}
