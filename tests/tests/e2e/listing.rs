//! List Blobs (docs/wire/listing.md#paging, docs/wire/listing.md#list-blobs): flat and hierarchical listings,
//! the worked example of docs/wire/listing.md#a-worked-example row by row, paging through `NextMarker`,
//! parameter errors and the exact XML shape.
//!
//! The small XML readers here ([`texts`], [`entries`]) are shared with the
//! other listing tests of this binary.

use stowage_tests::{Client, TestServer, unique};

/// The unescaped text of every `<tag>…</tag>` (and `""` for every
/// `<tag />`), in document order.
pub(super) fn texts(xml: &str, tag: &str) -> Vec<String> {
    let open = format!("<{tag}>");
    let empty = format!("<{tag} />");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    loop {
        let full = rest.find(&open);
        let short = rest.find(&empty);
        match (full, short) {
            (Some(i), s) if s.is_none_or(|j| i < j) => {
                let start = i + open.len();
                let end = start + rest[start..].find(&close).expect("a closing tag");
                out.push(unescape(&rest[start..end]));
                rest = &rest[end + close.len()..];
            }
            (_, Some(j)) => {
                out.push(String::new());
                rest = &rest[j + empty.len()..];
            }
            _ => return out,
        }
    }
}

/// The one `<tag>` of a document (panics unless there is exactly one).
pub(super) fn text(xml: &str, tag: &str) -> String {
    let all = texts(xml, tag);
    assert_eq!(all.len(), 1, "one <{tag}> in {xml}");
    all.into_iter().next().unwrap()
}

/// The names of the child elements of the first `<Properties>` in `xml`,
/// in document order.
pub(super) fn property_order(xml: &str) -> Vec<String> {
    let start = xml.find("<Properties>").expect("<Properties>") + "<Properties>".len();
    let end = xml.find("</Properties>").expect("</Properties>");
    let mut order = Vec::new();
    let mut rest = &xml[start..end];
    while let Some(i) = rest.find('<') {
        let tag_end = rest[i..].find('>').expect("a closed tag") + i;
        let tag = &rest[i + 1..tag_end];
        if !tag.starts_with('/') {
            order.push(tag.trim_end_matches('/').trim().to_owned());
        }
        rest = &rest[tag_end + 1..];
    }
    order
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The entries of a List Blobs page in order: `"Blob <name>"` or
/// `"BlobPrefix <name>"`.
pub(super) fn entries(xml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = xml;
    loop {
        let blob = rest.find("<Blob>");
        let prefix = rest.find("<BlobPrefix>");
        let (at, kind) = match (blob, prefix) {
            (Some(b), Some(p)) if p < b => (p, "BlobPrefix"),
            (Some(b), _) => (b, "Blob"),
            (None, Some(p)) => (p, "BlobPrefix"),
            (None, None) => return out,
        };
        rest = &rest[at..];
        let name = texts(rest, "Name").into_iter().next().expect("a Name");
        out.push(format!("{kind} {name}"));
        rest = &rest[1..];
    }
}

/// `<NextMarker>`: `None` when it is the empty element.
fn next_marker(xml: &str) -> Option<String> {
    Some(text(xml, "NextMarker")).filter(|m| !m.is_empty())
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

async fn list(c: &Client, container: &str, query: &str) -> String {
    let sep = if query.is_empty() { "" } else { "&" };
    let r = c
        .get(&format!(
            "/{container}?restype=container&comp=list{sep}{query}"
        ))
        .send()
        .await;
    assert_eq!(r.status, 200, "{query}: {}", r.text());
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/xml"),
        "{query}"
    );
    r.text()
}

/// Every page of a listing, following `NextMarker` until it is empty.
async fn all_pages(c: &Client, container: &str, query: &str) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let q = match &marker {
            Some(m) => format!("{query}&marker={}", enc(m)),
            None => query.to_owned(),
        };
        let xml = list(c, container, &q).await;
        pages.push(entries(&xml));
        marker = next_marker(&xml);
        if marker.is_none() {
            return pages;
        }
        assert!(pages.len() < 1000, "paging does not end");
    }
}

const EXAMPLE: [&str; 5] = [
    "README.md",
    "logs/2024/09/01/a.log",
    "logs/2024/09/01/b.log",
    "logs/2024/09/02/c.log",
    "notes.txt",
];

async fn example_container(c: &Client) -> String {
    let name = unique("data");
    c.create_container(&name).await;
    // Created out of order: the listing orders by name, not by age.
    for blob in EXAMPLE.iter().rev() {
        c.put_blob(&name, blob, blob.as_bytes()).await;
    }
    name
}

#[tokio::test]
async fn every_row_of_the_worked_example_in_spec_3_7() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    // (query, entries of the first page, whether NextMarker is set)
    let table: &[(&str, &[&str], bool)] = &[
        (
            "",
            &[
                "Blob README.md",
                "Blob logs/2024/09/01/a.log",
                "Blob logs/2024/09/01/b.log",
                "Blob logs/2024/09/02/c.log",
                "Blob notes.txt",
            ],
            false,
        ),
        (
            "maxresults=2",
            &["Blob README.md", "Blob logs/2024/09/01/a.log"],
            true,
        ),
        (
            "delimiter=/",
            &["Blob README.md", "BlobPrefix logs/", "Blob notes.txt"],
            false,
        ),
        (
            "delimiter=/&maxresults=2",
            &["Blob README.md", "BlobPrefix logs/"],
            true,
        ),
        (
            "prefix=logs/2024/09/&delimiter=/",
            &["BlobPrefix logs/2024/09/01/", "BlobPrefix logs/2024/09/02/"],
            false,
        ),
        (
            "prefix=logs/2024/09/01/&delimiter=/",
            &["Blob logs/2024/09/01/a.log", "Blob logs/2024/09/01/b.log"],
            false,
        ),
        (
            "prefix=logs/2024&delimiter=/09/",
            &["BlobPrefix logs/2024/09/"],
            false,
        ),
        ("prefix=n", &["Blob notes.txt"], false),
    ];
    for (query, expected, more) in table {
        let xml = list(&c, &name, query).await;
        assert_eq!(entries(&xml), *expected, "{query}");
        assert_eq!(next_marker(&xml).is_some(), *more, "{query}: {xml}");
    }
}

/// A group is listed only when a row the listing includes is in it: a
/// group whose only blob has nothing but uncommitted blocks appears with
/// `include=uncommittedblobs` and not without, and paging by one entry
/// meets the same groups in the same order.
#[tokio::test]
async fn a_group_of_only_uncommitted_blobs_is_listed_only_with_uncommitted_blobs() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("groups");
    c.create_container(&name).await;
    c.put_blob(&name, "a/one", b"1").await;
    super::blocks::stage(&c, &name, "b/staged", "YmxvY2s=", b"2").await;
    c.put_blob(&name, "c", b"3").await;
    super::blocks::stage(&c, &name, "d/staged", "YmxvY2s=", b"4").await;
    c.put_blob(&name, "d/two", b"5").await;
    let table: &[(&str, &[&str])] = &[
        ("delimiter=/", &["BlobPrefix a/", "Blob c", "BlobPrefix d/"]),
        (
            "delimiter=/&include=uncommittedblobs",
            &["BlobPrefix a/", "BlobPrefix b/", "Blob c", "BlobPrefix d/"],
        ),
    ];
    for (query, expected) in table {
        assert_eq!(entries(&list(&c, &name, query).await), *expected, "{query}");
        let paged: Vec<String> = all_pages(&c, &name, &format!("{query}&maxresults=1"))
            .await
            .concat();
        assert_eq!(paged, *expected, "{query}, one entry a page");
    }
}

#[tokio::test]
async fn the_second_pages_of_the_worked_example_follow_the_markers() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    let pages = all_pages(&c, &name, "maxresults=2").await;
    assert_eq!(
        pages,
        [
            vec!["Blob README.md", "Blob logs/2024/09/01/a.log"],
            vec!["Blob logs/2024/09/01/b.log", "Blob logs/2024/09/02/c.log"],
            vec!["Blob notes.txt"],
        ]
    );
    let pages = all_pages(&c, &name, "delimiter=/&maxresults=2").await;
    assert_eq!(
        pages,
        [
            vec!["Blob README.md", "BlobPrefix logs/"],
            vec!["Blob notes.txt"]
        ]
    );
}

#[tokio::test]
async fn a_flat_listing_orders_names_by_their_utf8_bytes() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("order");
    c.create_container(&name).await;
    // Uppercase before lowercase, '-' and '/' before letters, multi-byte last.
    let blobs = ["b", "B", "a-b", "a/b", "ab", "a", "é", "Z", "0"];
    for b in blobs {
        c.put_blob(&name, &enc(b), b.as_bytes()).await;
    }
    let mut expected: Vec<&str> = blobs.to_vec();
    expected.sort_by(|x, y| x.as_bytes().cmp(y.as_bytes()));
    let xml = list(&c, &name, "").await;
    let got: Vec<String> = entries(&xml);
    let want: Vec<String> = expected.iter().map(|b| format!("Blob {b}")).collect();
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_blob_named_like_its_group_is_a_blob_when_the_prefix_already_covers_the_delimiter() {
    // docs/wire/listing.md#prefix-and-delimiter rule 5.
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("rule5");
    c.create_container(&name).await;
    for b in ["logs/", "logs/a", "logs/sub/b"] {
        c.put_blob(&name, b, b"x").await;
    }
    let cases: &[(&str, &[&str])] = &[
        ("delimiter=/", &["BlobPrefix logs/"]),
        (
            "prefix=logs/&delimiter=/",
            &["Blob logs/", "Blob logs/a", "BlobPrefix logs/sub/"],
        ),
    ];
    for (query, expected) in cases {
        assert_eq!(entries(&list(&c, &name, query).await), *expected, "{query}");
    }
}

#[tokio::test]
async fn a_multi_character_delimiter_groups_at_its_first_occurrence_after_the_prefix() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("multi");
    c.create_container(&name).await;
    for b in ["a--b--c", "a--d", "a-e", "f--", "g"] {
        c.put_blob(&name, b, b"x").await;
    }
    let cases: &[(&str, &[&str])] = &[
        (
            "delimiter=--",
            &["BlobPrefix a--", "Blob a-e", "BlobPrefix f--", "Blob g"],
        ),
        (
            "prefix=a--&delimiter=--",
            &["BlobPrefix a--b--", "Blob a--d"],
        ),
        (
            "prefix=a&delimiter=-e",
            &["Blob a--b--c", "Blob a--d", "BlobPrefix a-e"],
        ),
        // A delimiter that occurs nowhere groups nothing.
        (
            "delimiter=%7C%7C",
            &[
                "Blob a--b--c",
                "Blob a--d",
                "Blob a-e",
                "Blob f--",
                "Blob g",
            ],
        ),
    ];
    for (query, expected) in cases {
        assert_eq!(entries(&list(&c, &name, query).await), *expected, "{query}");
    }
}

#[tokio::test]
async fn an_empty_delimiter_means_no_delimiter() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    let xml = list(&c, &name, "delimiter=").await;
    assert_eq!(entries(&xml).len(), 5, "{xml}");
}

#[tokio::test]
async fn paging_with_maxresults_returns_every_blob_once_in_order() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("paging");
    c.create_container(&name).await;
    let blobs: Vec<String> = (0..23).map(|i| format!("blob-{i:03}")).collect();
    for b in &blobs {
        c.put_blob(&name, b, b"x").await;
    }
    for page_size in [1, 2, 5, 22, 23, 24, 5000] {
        let pages = all_pages(&c, &name, &format!("maxresults={page_size}")).await;
        for (i, page) in pages.iter().enumerate() {
            assert!(page.len() <= page_size, "{page_size}: page {i}");
            if i + 1 < pages.len() {
                assert_eq!(
                    page.len(),
                    page_size,
                    "{page_size}: full pages until the last"
                );
            }
        }
        let flat: Vec<String> = pages.concat();
        let want: Vec<String> = blobs.iter().map(|b| format!("Blob {b}")).collect();
        assert_eq!(flat, want, "maxresults={page_size}");
        assert_eq!(pages.len(), blobs.len().div_ceil(page_size), "{page_size}");
    }
}

#[tokio::test]
async fn a_page_ending_on_a_blob_prefix_never_repeats_the_group() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("groups");
    c.create_container(&name).await;
    let blobs = [
        "a", "b/1", "b/2", "b/3", "c", "d/1", "d/2", "e", "f/x/1", "f/y", "g",
    ];
    for b in blobs {
        c.put_blob(&name, b, b"x").await;
    }
    let all = [
        "Blob a",
        "BlobPrefix b/",
        "Blob c",
        "BlobPrefix d/",
        "Blob e",
        "BlobPrefix f/",
        "Blob g",
    ];
    for page_size in 1..=8 {
        let pages = all_pages(&c, &name, &format!("delimiter=/&maxresults={page_size}")).await;
        assert_eq!(pages.concat(), all, "maxresults={page_size}");
        for page in &pages[..pages.len() - 1] {
            assert_eq!(page.len(), page_size, "maxresults={page_size}: {pages:?}");
        }
    }
}

#[tokio::test]
async fn paging_with_a_prefix_and_delimiter_stays_inside_the_prefix() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("pfx");
    c.create_container(&name).await;
    for b in ["a/1", "a/2/x", "a/3", "a/4/y", "a/4/z", "a0", "b/1"] {
        c.put_blob(&name, b, b"x").await;
    }
    let pages = all_pages(&c, &name, "prefix=a/&delimiter=/&maxresults=1").await;
    assert_eq!(
        pages.concat(),
        ["Blob a/1", "BlobPrefix a/2/", "Blob a/3", "BlobPrefix a/4/"]
    );
}

#[tokio::test]
async fn a_marker_stays_valid_when_its_last_blob_is_deleted() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("gone");
    c.create_container(&name).await;
    for b in ["a", "b", "c", "d"] {
        c.put_blob(&name, b, b"x").await;
    }
    let xml = list(&c, &name, "maxresults=2").await;
    assert_eq!(entries(&xml), ["Blob a", "Blob b"]);
    let marker = next_marker(&xml).expect("a NextMarker");
    let r = c.delete(&format!("/{name}/b")).send().await;
    assert_eq!(r.status, 202);
    // A blob created before the marker's position is not returned later;
    // one after it is.
    c.put_blob(&name, "aa", b"x").await;
    c.put_blob(&name, "cc", b"x").await;
    let xml = list(&c, &name, &format!("maxresults=2&marker={}", enc(&marker))).await;
    assert_eq!(entries(&xml), ["Blob c", "Blob cc"]);
    assert!(next_marker(&xml).is_some());
}

#[tokio::test]
async fn a_marker_after_a_group_stays_valid_when_the_group_is_deleted() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("gonegrp");
    c.create_container(&name).await;
    for b in ["a", "g/1", "g/2", "z"] {
        c.put_blob(&name, b, b"x").await;
    }
    let xml = list(&c, &name, "delimiter=/&maxresults=2").await;
    assert_eq!(entries(&xml), ["Blob a", "BlobPrefix g/"]);
    let marker = next_marker(&xml).expect("a NextMarker");
    for b in ["g/1", "g/2"] {
        assert_eq!(c.delete(&format!("/{name}/{b}")).send().await.status, 202);
    }
    let xml = list(&c, &name, &format!("delimiter=/&marker={}", enc(&marker))).await;
    assert_eq!(entries(&xml), ["Blob z"]);
    assert_eq!(next_marker(&xml), None);
}

#[tokio::test]
async fn maxresults_above_5000_is_capped_and_echoed_as_sent() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    let xml = list(&c, &name, "maxresults=99999").await;
    assert_eq!(entries(&xml).len(), 5);
    assert_eq!(text(&xml, "MaxResults"), "99999");
}

#[tokio::test]
async fn bad_listing_parameters_are_400() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    // (query, status, code, QueryParameterName)
    let cases = [
        (
            "maxresults=0",
            400,
            "OutOfRangeQueryParameterValue",
            "maxresults",
        ),
        (
            "maxresults=-1",
            400,
            "OutOfRangeQueryParameterValue",
            "maxresults",
        ),
        (
            "maxresults=abc",
            400,
            "InvalidQueryParameterValue",
            "maxresults",
        ),
        (
            "maxresults=1.5",
            400,
            "InvalidQueryParameterValue",
            "maxresults",
        ),
        (
            "marker=README.md",
            400,
            "InvalidQueryParameterValue",
            "marker",
        ),
        (
            "marker=%21%21not-a-token",
            400,
            "InvalidQueryParameterValue",
            "marker",
        ),
        (
            "include=bogus",
            400,
            "InvalidQueryParameterValue",
            "include",
        ),
        (
            "include=metadata,bogus",
            400,
            "InvalidQueryParameterValue",
            "include",
        ),
        (
            "include=snapshots&delimiter=/",
            400,
            "InvalidQueryParameterValue",
            "include",
        ),
    ];
    for (query, status, code, param) in cases {
        let r = c
            .get(&format!("/{name}?restype=container&comp=list&{query}"))
            .send()
            .await;
        assert_eq!(r.status, status, "{query}: {}", r.text());
        r.assert_error(status, code);
        assert_eq!(
            texts(&r.text(), "QueryParameterName"),
            [param],
            "{query}: {}",
            r.text()
        );
    }
}

#[tokio::test]
async fn include_options_are_accepted_in_any_case_repeated_or_comma_separated() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    for query in [
        "include=metadata",
        "include=METADATA",
        "include=Metadata,copy",
        "include=metadata&include=snapshots",
        "include=deleted,versions,tags,uncommittedblobs,immutabilitypolicy,legalhold,permissions,deletedwithversions",
    ] {
        let xml = list(&c, &name, query).await;
        assert_eq!(entries(&xml).len(), 5, "{query}");
    }
}

#[tokio::test]
async fn list_blobs_of_a_missing_container_is_404_container_not_found() {
    let server = TestServer::start().await;
    let r = server
        .client()
        .get("/nosuchcontainer?restype=container&comp=list")
        .send()
        .await;
    r.assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn include_metadata_adds_metadata_with_names_in_stored_case() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("meta");
    c.create_container(&name).await;
    let r = c
        .put(&format!("/{name}/with"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-meta-color", "blue")
        .header("x-ms-meta-size", "big")
        .body(&b"x"[..])
        .send()
        .await;
    assert_eq!(r.status, 201);
    c.put_blob(&name, "without", b"x").await;
    let xml = list(&c, &name, "include=metadata").await;
    assert_eq!(texts(&xml, "color"), ["blue"]);
    assert_eq!(texts(&xml, "size"), ["big"]);
    // One <Metadata> per blob; the blob without metadata has <Metadata />.
    assert_eq!(texts(&xml, "Metadata").len(), 2, "{xml}");
    assert!(xml.contains("<Metadata />"), "{xml}");
    let plain = list(&c, &name, "").await;
    assert!(!plain.contains("<Metadata"), "{plain}");
}

// ---------------------------------------------------------------------------
// XML shape

#[tokio::test]
async fn the_document_echoes_exactly_the_parameters_sent() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    let bare = list(&c, &name, "").await;
    for tag in ["Prefix", "Marker", "MaxResults", "Delimiter"] {
        assert!(!bare.contains(&format!("<{tag}")), "{tag} in {bare}");
    }
    let first = list(&c, &name, "maxresults=1").await;
    let marker = next_marker(&first).unwrap();
    let xml = list(
        &c,
        &name,
        &format!(
            "prefix=logs/&delimiter=/&maxresults=3&marker={}",
            enc(&marker)
        ),
    )
    .await;
    assert_eq!(text(&xml, "Prefix"), "logs/");
    assert_eq!(text(&xml, "Delimiter"), "/");
    assert_eq!(text(&xml, "MaxResults"), "3");
    assert_eq!(text(&xml, "Marker"), marker);
    let start = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"{}/devstoreaccount1/\" ContainerName=\"{name}\">",
        server.base
    );
    assert!(
        xml.replace(['\n', '\r'], "").starts_with(&start),
        "{xml}\nexpected to start with {start}"
    );
    // Order of the echo elements, then Blobs, then NextMarker.
    let at = |tag: &str| xml.find(tag).unwrap_or_else(|| panic!("{tag} in {xml}"));
    assert!(at("<Prefix>") < at("<Marker>"));
    assert!(at("<Marker>") < at("<MaxResults>"));
    assert!(at("<MaxResults>") < at("<Delimiter>"));
    assert!(at("<Delimiter>") < at("<Blobs"));
    assert!(at("<Blobs") < at("<NextMarker"));
}

#[tokio::test]
async fn the_last_page_has_an_empty_next_marker_element() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    let xml = list(&c, &name, "").await;
    assert!(xml.contains("<NextMarker />"), "{xml}");
    let xml = list(&c, &name, "prefix=nothing-here").await;
    assert!(xml.contains("<Blobs />"), "{xml}");
    assert!(xml.contains("<NextMarker />"), "{xml}");
}

#[tokio::test]
async fn next_marker_is_an_opaque_token_not_a_blob_name() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = example_container(&c).await;
    let xml = list(&c, &name, "maxresults=1").await;
    let marker = next_marker(&xml).unwrap();
    assert_ne!(marker, "README.md");
    assert!(!marker.contains("README"), "{marker}");
}

#[tokio::test]
async fn a_blob_entry_has_the_properties_of_spec_3_3_in_order_with_an_unquoted_etag() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("shape");
    c.create_container(&name).await;
    let put = c
        .put(&format!("/{name}/one.txt"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-blob-content-type", "text/plain")
        .header("x-ms-blob-cache-control", "no-cache")
        .body(&b"hello"[..])
        .send()
        .await;
    assert_eq!(put.status, 201);
    let head = c.head(&format!("/{name}/one.txt")).send().await;
    let xml = list(&c, &name, "").await;
    let blob = {
        let start = xml.find("<Blob>").expect("a Blob");
        let end = xml.find("</Blob>").expect("a /Blob") + "</Blob>".len();
        xml[start..end].to_owned()
    };
    let order = property_order(&blob);
    assert_eq!(
        order,
        [
            "Creation-Time",
            "Last-Modified",
            "Etag",
            "Content-Length",
            "Content-Type",
            "Content-Encoding",
            "Content-Language",
            "Content-MD5",
            "Content-Disposition",
            "Cache-Control",
            "BlobType",
            "LeaseStatus",
            "LeaseState",
            "ServerEncrypted",
            "AccessTier",
            "AccessTierInferred",
        ],
        "{blob}"
    );
    let header_etag = head.etag();
    assert_eq!(
        text(&blob, "Etag"),
        header_etag.trim_matches('"'),
        "unquoted"
    );
    assert!(!text(&blob, "Etag").contains('"'));
    assert_eq!(
        text(&blob, "Last-Modified"),
        head.header("last-modified").unwrap()
    );
    assert_eq!(
        text(&blob, "Creation-Time"),
        head.header("x-ms-creation-time").unwrap()
    );
    assert_eq!(text(&blob, "Content-Length"), "5");
    assert_eq!(text(&blob, "Content-Type"), "text/plain");
    assert_eq!(text(&blob, "Content-Encoding"), "");
    assert_eq!(
        text(&blob, "Content-MD5"),
        head.header("content-md5").unwrap()
    );
    assert_eq!(text(&blob, "Cache-Control"), "no-cache");
    assert_eq!(text(&blob, "BlobType"), "BlockBlob");
    assert_eq!(text(&blob, "LeaseStatus"), "unlocked");
    assert_eq!(text(&blob, "LeaseState"), "available");
    assert_eq!(text(&blob, "ServerEncrypted"), "true");
    assert_eq!(text(&blob, "AccessTier"), "Hot");
    assert_eq!(text(&blob, "AccessTierInferred"), "true");
    assert_eq!(text(&blob, "Name"), "one.txt");
}

#[tokio::test]
async fn names_with_xml_special_characters_are_escaped_in_the_listing() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("escape");
    c.create_container(&name).await;
    let blob = "a&b<c>\"d'.txt";
    c.put_blob(&name, &enc(blob), b"x").await;
    c.put_blob(&name, &enc("x&y/z"), b"x").await;
    let xml = list(&c, &name, "").await;
    assert!(!xml.contains("a&b<c>"), "{xml}");
    assert_eq!(
        entries(&xml),
        [format!("Blob {blob}"), "Blob x&y/z".to_owned()]
    );
    let xml = list(&c, &name, "delimiter=/").await;
    assert!(!xml.contains("x&y/"), "{xml}");
    assert_eq!(
        entries(&xml),
        [format!("Blob {blob}"), "BlobPrefix x&y/".to_owned()]
    );
}
