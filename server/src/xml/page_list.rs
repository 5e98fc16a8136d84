//! The `PageList` document of Get Page Ranges (docs/wire/pages.md).

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

#[cfg(test)]
mod tests {
    use super::*;

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
