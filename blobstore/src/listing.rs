//! List Containers and List Blobs: paging, prefixes, delimiters and markers
//! (docs/wire/listing.md). The grouping and marker logic is pure; the rows
//! come from `meta`.

use crate::meta::sql::Sql;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::time::SystemTime;

use crate::meta::{self, BlobCursor, BlobListQuery, BlobRow, Scan};
use crate::{BlobProperties, ContainerName, ContainerProperties, Result};

/// The most items in one page (docs/wire/listing.md#paging).
pub const MAX_RESULTS: usize = 5000;

/// A continuation token: the position after the last item of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListingMarker {
    /// After the item with this key (a container name, or a blob name and
    /// snapshot id, empty for the base blob).
    After {
        /// Container or blob name.
        name: String,
        /// Snapshot id, empty for a base blob or a container.
        snapshot: String,
    },
    /// After every name that starts with this group prefix (`<BlobPrefix>`).
    AfterGroup(String),
}

const MARKER_VERSION: u8 = 1;

impl ListingMarker {
    /// The opaque token: base64url of a versioned structure, never a plain
    /// name, since names may contain any character.
    pub fn encode(&self) -> String {
        let mut bytes = vec![MARKER_VERSION];
        match self {
            ListingMarker::After { name, snapshot } => {
                bytes.push(0);
                bytes.extend_from_slice(name.as_bytes());
                bytes.push(0);
                bytes.extend_from_slice(snapshot.as_bytes());
            }
            ListingMarker::AfterGroup(group) => {
                bytes.push(1);
                bytes.extend_from_slice(group.as_bytes());
            }
        }
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Decodes a token made by [`ListingMarker::encode`]; `None` for anything else.
    pub fn decode(token: &str) -> Option<ListingMarker> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        let (&version, rest) = bytes.split_first()?;
        if version != MARKER_VERSION {
            return None;
        }
        let (&kind, rest) = rest.split_first()?;
        match kind {
            0 => {
                let sep = rest.iter().position(|&b| b == 0)?;
                Some(ListingMarker::After {
                    name: String::from_utf8(rest[..sep].to_vec()).ok()?,
                    snapshot: String::from_utf8(rest[sep + 1..].to_vec()).ok()?,
                })
            }
            1 => Some(ListingMarker::AfterGroup(
                String::from_utf8(rest.to_vec()).ok()?,
            )),
            _ => None,
        }
    }
}

/// The smallest string greater than every string that starts with `prefix`,
/// or `None` when there is none (empty prefix, or only U+10FFFF). UTF-8 byte
/// order equals code point order, so bumping the last character is enough.
pub(crate) fn successor(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last as u32 {
            0xD7FF => Some('\u{E000}'),
            u => char::from_u32(u + 1),
        };
        if let Some(c) = next {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The `<BlobPrefix>` group of `name`, if `delimiter` occurs after `prefix`
/// (docs/wire/listing.md#prefix-and-delimiter).
pub(crate) fn group_of<'a>(name: &'a str, prefix: &str, delimiter: &str) -> Option<&'a str> {
    let rest = name.get(prefix.len()..)?;
    let i = rest.find(delimiter)?;
    Some(&name[..prefix.len() + i + delimiter.len()])
}

/// Input of List Containers.
#[derive(Clone, Debug, Default)]
pub struct ListContainersInput {
    /// The account.
    pub account: String,
    /// Only names starting with this.
    pub prefix: String,
    /// Where the previous page ended.
    pub marker: Option<ListingMarker>,
    /// Page size, 1..=5000.
    pub max_results: usize,
    /// List soft-deleted containers too (`include=deleted`).
    pub include_deleted: bool,
}

/// One page of containers.
#[derive(Clone, Debug)]
pub struct ListContainersOutput {
    /// The containers of this page.
    pub containers: Vec<ContainerProperties>,
    /// Token for the next page, when more remain.
    pub next_marker: Option<ListingMarker>,
}

/// Input of List Blobs.
#[derive(Clone, Debug)]
pub struct ListBlobsInput {
    /// The account.
    pub account: String,
    /// The container.
    pub container: ContainerName,
    /// Only names starting with this.
    pub prefix: String,
    /// Group names at the first occurrence of this after the prefix.
    pub delimiter: Option<String>,
    /// Where the previous page ended.
    pub marker: Option<ListingMarker>,
    /// Page size, 1..=5000.
    pub max_results: usize,
    /// List snapshots too.
    pub include_snapshots: bool,
    /// List block blobs that have only uncommitted blocks.
    pub include_uncommitted: bool,
    /// Give each blob its tags and tag count (`include=tags`).
    pub include_tags: bool,
    /// List previous versions too (`include=versions`).
    pub include_versions: bool,
    /// List soft-deleted blobs, snapshots and versions (`include=deleted`).
    pub include_deleted: bool,
    /// List each name whose blob was deleted but whose previous versions
    /// remain, once, as its newest version marked `has_versions_only`
    /// (`include=deletedwithversions`; with versions listed, they are).
    pub include_deleted_with_versions: bool,
}

/// One entry of a List Blobs page.
#[derive(Clone, Debug)]
pub enum BlobListItem {
    /// A blob or snapshot, with `committed` false for an uncommitted-only blob.
    Blob {
        /// Its properties.
        properties: Box<BlobProperties>,
        /// False for a block blob with only uncommitted blocks.
        committed: bool,
        /// The name has only previous versions left; this is the newest
        /// (`<HasVersionsOnly>`, `include=deletedwithversions`).
        has_versions_only: bool,
    },
    /// A `<BlobPrefix>` group.
    Prefix(String),
}

/// One page of blobs.
#[derive(Clone, Debug)]
pub struct ListBlobsOutput {
    /// Entries in listing order.
    pub items: Vec<BlobListItem>,
    /// Token for the next page, when more remain.
    pub next_marker: Option<ListingMarker>,
}

pub(crate) fn list_containers(
    conn: &dyn Sql,
    input: &ListContainersInput,
    now: SystemTime,
) -> Result<ListContainersOutput> {
    let after = match &input.marker {
        Some(ListingMarker::After { name, .. }) => Some(name.as_str()),
        _ => None,
    };
    let max = input.max_results.clamp(1, MAX_RESULTS);
    let deleted_before = input.include_deleted.then_some(now);
    let mut rows = meta::list_containers(
        conn,
        &input.account,
        &input.prefix,
        after,
        max + 1,
        deleted_before,
    )?;
    let more = rows.len() > max;
    rows.truncate(max);
    // The position of a soft-deleted container is its stored key.
    let next_marker = more.then(|| ListingMarker::After {
        name: rows
            .last()
            .map(|r| match &r.deleted {
                Some(d) => meta::deleted_key(&r.name, &d.version),
                None => r.name.clone(),
            })
            .unwrap_or_default(),
        snapshot: String::new(),
    });
    let containers = rows
        .into_iter()
        .map(|r| crate::store::container_properties(r, now))
        .collect();
    Ok(ListContainersOutput {
        containers,
        next_marker,
    })
}

pub(crate) fn list_blobs(
    conn: &dyn Sql,
    container_id: i64,
    input: &ListBlobsInput,
    now: SystemTime,
) -> Result<ListBlobsOutput> {
    let max = input.max_results.clamp(1, MAX_RESULTS);
    let prefix = input.prefix.as_str();
    let prefix_end = successor(prefix);
    let delimiter = input.delimiter.as_deref().filter(|d| !d.is_empty());
    let mut cursor = match &input.marker {
        None => Some(BlobCursor::From(prefix.to_owned())),
        Some(ListingMarker::After { name, snapshot }) => Some(cursor_of(name, snapshot)),
        Some(ListingMarker::AfterGroup(g)) => successor(g).map(BlobCursor::From),
    };
    // Without uncommitted blobs in the container, the probe for the next
    // group need not filter on `committed`, which is not in the listing
    // key: it then reads the index alone (1.48 -> 1.09 ms for a page of
    // 1,000 groups, `listing/store-delimited-1000-groups`). The listing
    // reads one snapshot, so the answer holds for all of it.
    let probe_all_rows = input.include_uncommitted
        || (delimiter.is_some() && !meta::has_uncommitted(conn, container_id)?);
    // `TagCount` is listed whenever a blob has tags, as the service lists
    // it; `include=tags` adds the tags themselves.
    let count_tags = !input.include_tags && meta::any_tags(conn)?;
    let mut statements = meta::ListingStatements::new(conn);
    let mut items = Vec::new();
    let mut more = false;
    // The marker key of the last blob listed (hidden rows have no snapshot
    // id to name them by).
    let mut last_key = String::new();
    while let Some(at) = cursor.clone() {
        // Every row read becomes an item or ends the scan, so one more than
        // the items still needed tells whether another page follows.
        let query = BlobListQuery {
            container_id,
            prefix,
            prefix_end: prefix_end.as_deref(),
            cursor: &at,
            include_snapshots: input.include_snapshots,
            include_uncommitted: input.include_uncommitted,
            include_versions: input.include_versions,
            include_deleted: input.include_deleted,
            include_deleted_with_versions: input.include_deleted_with_versions,
            limit: max - items.len() + 1,
        };
        if let Some(d) = delimiter {
            // At the start and after every group, the next row is most often
            // the next group: its name is enough to list the group, and the
            // listing restarts past it at once. A group of a million names
            // must not cost a million rows, and even stepping over a few
            // costs more than the seek (each row stepped over also reads its
            // table row for the `committed` filter). Measured with the
            // benchmarks' listings (bench/README.md): a page of 1,000 groups
            // of 10 took 4.4 ms stepping over up to 8 rows, 2.3 ms over 1,
            // 1.7 ms over none. Reading the name alone, not the whole row,
            // took the store's side of that page from 1.69 to 1.48 ms
            // (`listing/store-delimited-1000-groups`). With no successor,
            // every remaining name is in this group.
            let probe = BlobListQuery {
                include_uncommitted: probe_all_rows,
                ..query.clone()
            };
            let Some(name) = meta::first_name(&mut statements, &probe)? else {
                break;
            };
            if let Some(group) = group_of(&name, prefix, d) {
                if items.len() == max {
                    more = true;
                    break;
                }
                cursor = successor(group).map(BlobCursor::From);
                items.push(BlobListItem::Prefix(group.to_owned()));
                continue;
            }
        }
        // Set when the scan stops at a group, for the step above to list.
        let mut at_group = false;
        let fetched = meta::scan_blob_rows(&mut statements, &query, |row| {
            let name = row.name()?;
            if delimiter.is_some_and(|d| group_of(name, prefix, d).is_some()) {
                at_group = true;
                return Ok(Scan::Stop);
            }
            if items.len() == max {
                more = true;
                return Ok(Scan::Stop);
            }
            let row = row.read()?;
            cursor = Some(after_row(&row));
            last_key = marker_key(&row);
            if crate::expiry::is_expired(row.expires_at, now) {
                // Gone at its expiry time, before the collector removes it.
                return Ok(Scan::Next);
            }
            let committed = row.committed;
            // A version reaches a listing without `include=versions` only
            // as the newest of a name without a blob.
            let has_versions_only = !input.include_versions
                && row.hidden == Some(meta::Hidden::Version)
                && row.deleted.is_none();
            let tags = match input.include_tags {
                true => Some(meta::get_tags(conn, row.id)?),
                false => None,
            };
            let tag_count = match count_tags {
                true => meta::tag_count(conn, row.id)?,
                false => 0,
            };
            let page = crate::store::page_properties(conn, &row)?;
            let mut properties = crate::store::blob_properties(row, now);
            properties.tag_count = tag_count;
            properties.page = page;
            if let Some(t) = tags {
                properties.tag_count = t.len() as u64;
                properties.tags = Some(t);
            }
            items.push(BlobListItem::Blob {
                properties: Box::new(properties),
                committed,
                has_versions_only,
            });
            Ok(Scan::Next)
        })?;
        if more || (fetched < query.limit && !at_group) {
            break;
        }
    }
    if items.len() == max && !more {
        // The page is full exactly: look one item further.
        if let Some(at) = &cursor {
            let query = BlobListQuery {
                container_id,
                prefix,
                prefix_end: prefix_end.as_deref(),
                cursor: at,
                include_snapshots: input.include_snapshots,
                include_uncommitted: input.include_uncommitted,
                include_versions: input.include_versions,
                include_deleted: input.include_deleted,
                include_deleted_with_versions: input.include_deleted_with_versions,
                limit: 1,
            };
            more = !meta::list_blob_rows(&mut statements, &query)?.is_empty();
        }
    }
    // The next page starts after the last item of this one.
    let next_marker = items.last().filter(|_| more).map(|item| match item {
        BlobListItem::Prefix(group) => ListingMarker::AfterGroup(group.clone()),
        BlobListItem::Blob { properties, .. } => ListingMarker::After {
            name: properties.name.clone(),
            snapshot: last_key.clone(),
        },
    });
    Ok(ListBlobsOutput { items, next_marker })
}

fn after_row(row: &BlobRow) -> BlobCursor {
    cursor_of(&row.name, &marker_key(row))
}

/// Marks a hidden row's key in a marker: no snapshot id starts with it.
const HIDDEN_MARK: char = '\u{1}';

/// What a marker holds after `row`: its snapshot id, empty for the base
/// blob, or [`HIDDEN_MARK`] and its key for a version or soft-deleted row.
fn marker_key(row: &BlobRow) -> String {
    match row.hidden {
        Some(_) => format!("{HIDDEN_MARK}{}", row.key),
        None => row.key.clone(),
    }
}

/// The listing position just after the row a marker names.
fn cursor_of(name: &str, snapshot: &str) -> BlobCursor {
    let (is_base, key) = match snapshot.strip_prefix(HIDDEN_MARK) {
        Some(key) => (-1, key),
        None if snapshot.is_empty() => (1, snapshot),
        None => (0, snapshot),
    };
    BlobCursor::After {
        name: name.to_owned(),
        is_base,
        snapshot: key.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successor_table() {
        let cases = [
            ("", None),
            ("a", Some("b".to_owned())),
            ("logs/", Some("logs0".to_owned())),
            ("a\u{10FFFF}", Some("b".to_owned())),
            ("\u{10FFFF}", None),
            ("x\u{D7FF}", Some("x\u{E000}".to_owned())),
            ("é", Some("ê".to_owned())),
        ];
        for (input, expected) in cases {
            assert_eq!(successor(input), expected, "{input:?}");
        }
    }

    #[test]
    fn successor_bounds_every_extension_in_byte_order() {
        for prefix in ["a", "logs/", "z\u{7f}", "é", "日本"] {
            let s = successor(prefix).unwrap();
            for suffix in ["", "\u{10FFFF}", "zzz", "\u{0}", "é/x"] {
                let name = format!("{prefix}{suffix}");
                assert!(name.as_bytes() < s.as_bytes(), "{name:?} < {s:?}");
            }
            assert!(prefix.as_bytes() < s.as_bytes());
        }
    }

    #[test]
    fn group_of_follows_the_spec_examples() {
        let cases = [
            ("README.md", "", "/", None),
            ("logs/2024/09/01/a.log", "", "/", Some("logs/")),
            (
                "logs/2024/09/01/a.log",
                "logs/2024/09/",
                "/",
                Some("logs/2024/09/01/"),
            ),
            (
                "logs/2024/09/01/a.log",
                "logs/2024",
                "/09/",
                Some("logs/2024/09/"),
            ),
            ("logs/", "logs/", "/", None),
            ("logs/", "", "/", Some("logs/")),
            ("a", "abc", "/", None),
        ];
        for (name, prefix, delimiter, expected) in cases {
            assert_eq!(
                group_of(name, prefix, delimiter),
                expected,
                "{name} {prefix} {delimiter}"
            );
        }
    }

    #[test]
    fn markers_round_trip_and_reject_foreign_tokens() {
        let markers = [
            ListingMarker::After {
                name: "dir/hello world.txt".into(),
                snapshot: String::new(),
            },
            ListingMarker::After {
                name: "a".into(),
                snapshot: "2024-09-03T10:15:07.1234567Z".into(),
            },
            ListingMarker::AfterGroup("logs/".into()),
            ListingMarker::AfterGroup("名前/".into()),
        ];
        for m in markers {
            assert_eq!(ListingMarker::decode(&m.encode()), Some(m));
        }
        for bad in ["", "not base64!", "AA", "AgA", "README.md"] {
            assert_eq!(ListingMarker::decode(bad), None, "{bad:?}");
        }
    }
}
