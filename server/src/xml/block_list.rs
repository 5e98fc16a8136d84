//! The `BlockList` documents: the Put Block List request body and the Get
//! Block List response (docs/wire/blobs.md#put-block-list, docs/wire/blobs.md#get-block-list).

use quick_xml::Reader;
use quick_xml::events::Event;
use stowage_blobstore::{BlockId, BlockListKind, GetBlockListOutput, MAX_COMMITTED_BLOCKS};

use super::text::{push_text, reference};
use super::{Document, XmlWriter};
use crate::error::ApiError;

/// Parses a Put Block List body: `<BlockList>` with `Committed`,
/// `Uncommitted` and `Latest` children in document order.
///
/// # Errors
/// `InvalidXmlDocument` when it is not well-formed or the root is wrong;
/// `InvalidBlockList` for an unknown child or a bad id; `BlockListTooLong`
/// past 50,000 entries.
pub(crate) fn parse_block_list(body: &[u8]) -> Result<Vec<(BlockListKind, BlockId)>, ApiError> {
    let mut reader = Reader::from_reader(body);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut seen_root = false;
    let mut current: Option<BlockListKind> = None;
    let mut text = String::new();
    let mut out = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|_| ApiError::InvalidXmlDocument)?;
        match event {
            Event::Start(e) => {
                let name = e.name();
                match depth {
                    0 if name.as_ref() == b"BlockList" && !seen_root => seen_root = true,
                    0 => return Err(ApiError::InvalidXmlDocument),
                    1 => {
                        current = Some(match name.as_ref() {
                            b"Committed" => BlockListKind::Committed,
                            b"Uncommitted" => BlockListKind::Uncommitted,
                            b"Latest" => BlockListKind::Latest,
                            _ => return Err(invalid_list()),
                        });
                        text.clear();
                    }
                    _ => return Err(invalid_list()),
                }
                depth += 1;
            }
            Event::Empty(e) => match depth {
                0 if e.name().as_ref() == b"BlockList" && !seen_root => seen_root = true,
                0 => return Err(ApiError::InvalidXmlDocument),
                // An entry with no id.
                _ => return Err(invalid_list()),
            },
            Event::Text(t) => {
                let t = t.decode().map_err(|_| ApiError::InvalidXmlDocument)?;
                if current.is_some() {
                    push_text(&mut text, &t)?;
                } else if !t.trim().is_empty() {
                    return Err(ApiError::InvalidXmlDocument);
                }
            }
            // `&#43;` in an id is the `+` of its base64.
            Event::GeneralRef(r) if current.is_some() => push_text(&mut text, &reference(&r)?)?,
            Event::GeneralRef(_) => return Err(ApiError::InvalidXmlDocument),
            Event::End(_) => {
                depth = depth.checked_sub(1).ok_or(ApiError::InvalidXmlDocument)?;
                if depth == 1 {
                    let kind = current.take().ok_or_else(invalid_list)?;
                    let id = BlockId::parse(text.trim()).ok_or_else(invalid_list)?;
                    if out.len() == MAX_COMMITTED_BLOCKS {
                        return Err(ApiError::BlockListTooLong);
                    }
                    out.push((kind, id));
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !seen_root || depth != 0 {
        return Err(ApiError::InvalidXmlDocument);
    }
    Ok(out)
}

fn invalid_list() -> ApiError {
    ApiError::Store(stowage_blobstore::Error::InvalidBlockList)
}

/// The Get Block List document.
pub(crate) fn block_list(out: &GetBlockListOutput) -> Document {
    let mut w = XmlWriter::new();
    w.open("BlockList");
    for (tag, list) in [
        ("CommittedBlocks", &out.committed),
        ("UncommittedBlocks", &out.uncommitted),
    ] {
        let Some(list) = list else { continue };
        if list.is_empty() {
            w.empty(tag);
            continue;
        }
        w.open(tag);
        for (name, size) in list {
            w.open("Block")
                .element("Name", name)
                .element("Size", &size.to_string())
                .close("Block");
        }
        w.close(tag);
    }
    w.close("BlockList");
    w.finish_document()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Result<Vec<(BlockListKind, String)>, &'static str> {
        parse_block_list(body.as_bytes())
            .map(|v| {
                v.into_iter()
                    .map(|(k, id)| (k, id.as_str().to_owned()))
                    .collect()
            })
            .map_err(|e| e.answer().code)
    }

    #[allow(clippy::type_complexity)] // a table of cases reads best inline
    #[test]
    fn parse_table() {
        use BlockListKind::*;
        let ok = |v: &[(BlockListKind, &str)]| {
            Ok(v.iter()
                .map(|(k, s)| (*k, s.to_string()))
                .collect::<Vec<_>>())
        };
        let cases: &[(&str, Result<Vec<(BlockListKind, String)>, &str>)] = &[
            (
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>\n  <Latest>QUFBQUE=</Latest>\n  \
                 <Committed>QkJCQkI=</Committed>\n  <Uncommitted>Q0NDQ0M=</Uncommitted>\n</BlockList>",
                ok(&[
                    (Latest, "QUFBQUE="),
                    (Committed, "QkJCQkI="),
                    (Uncommitted, "Q0NDQ0M="),
                ]),
            ),
            ("<BlockList />", ok(&[])),
            ("<BlockList></BlockList>", ok(&[])),
            (
                "<BlockList><Latest> QUFBQUE= </Latest></BlockList>",
                ok(&[(Latest, "QUFBQUE=")]),
            ),
            (
                "<BlockList><Other>QUE=</Other></BlockList>",
                Err("InvalidBlockList"),
            ),
            (
                "<BlockList><Latest></Latest></BlockList>",
                Err("InvalidBlockList"),
            ),
            ("<BlockList><Latest/></BlockList>", Err("InvalidBlockList")),
            (
                "<BlockList><Latest>not base64!</Latest></BlockList>",
                Err("InvalidBlockList"),
            ),
            ("<blocklist />", Err("InvalidXmlDocument")),
            (
                "<BlockList><Latest>QUE=</Latest>",
                Err("InvalidXmlDocument"),
            ),
            (
                "<BlockList><Latest>Pz8&#x2B;Pz8&#61;</Latest></BlockList>",
                ok(&[(Latest, "Pz8+Pz8=")]),
            ),
            (
                "<BlockList><Latest>QU&#1;E=</Latest></BlockList>",
                Err("InvalidXmlDocument"),
            ),
            ("<BlockList>&amp;</BlockList>", Err("InvalidXmlDocument")),
            ("not xml at all", Err("InvalidXmlDocument")),
            ("", Err("InvalidXmlDocument")),
        ];
        for (body, expected) in cases {
            assert_eq!(code(body), *expected, "{body}");
        }
    }

    #[test]
    fn more_than_50000_entries_is_too_long() {
        let body = format!(
            "<BlockList>{}</BlockList>",
            "<Latest>QUE=</Latest>".repeat(MAX_COMMITTED_BLOCKS + 1)
        );
        assert_eq!(code(&body), Err("BlockListTooLong"));
    }

    #[test]
    fn get_block_list_document() {
        let out = GetBlockListOutput {
            committed: Some(vec![("QUFBQUE=".into(), 4_194_304)]),
            uncommitted: Some(vec![]),
            version: None,
            size: 4_194_304,
        };
        assert_eq!(
            block_list(&out).text(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><CommittedBlocks><Block>\
             <Name>QUFBQUE=</Name><Size>4194304</Size></Block></CommittedBlocks>\
             <UncommittedBlocks /></BlockList>"
        );
    }
}
