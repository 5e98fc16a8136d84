//! Put Block, Put Block List and Get Block List (docs/wire/blobs.md; docs/wire/blobs.md#blob-types, docs/wire/requests.md#content-properties, docs/wire/requests.md#limits; docs/wire/listing.md#uncommitted-blobs-in-a-listing).
//!
//! Also home of the helpers the append, snapshot, copy and gc modules share:
//! block ids, staging and committing, listing, XML picking and counting the
//! extent files on disk.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use md5::{Digest, Md5};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use stowage_tests::{Client, Response, TestServer, unique};

// ---------------------------------------------------------------------------
// Shared helpers

/// Percent-encodes a query parameter value (block ids carry `=`, `+`, `/`;
/// snapshot ids carry `:`).
pub(super) fn enc(value: &str) -> String {
    utf8_percent_encode(value, NON_ALPHANUMERIC).to_string()
}

/// Base64 of `bytes`.
pub(super) fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Base64 MD5 of `data`, as `Content-MD5` carries it.
pub(super) fn md5_b64(data: &[u8]) -> String {
    b64(&Md5::digest(data))
}

/// Block id number `n`: base64 of the 10 bytes `blk-000042`, so every id
/// from here decodes to the same length.
pub(super) fn block_id(n: u32) -> String {
    b64(format!("blk-{n:06}").as_bytes())
}

/// `len` deterministic pseudo-random bytes, different for each `seed`.
pub(super) fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x2545_F491_4F6C_DD1D);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Put Block; returns the response unchecked.
pub(super) async fn put_block(
    c: &Client,
    container: &str,
    blob: &str,
    id: &str,
    body: &[u8],
) -> Response {
    c.put(&format!(
        "/{container}/{blob}?comp=block&blockid={}",
        enc(id)
    ))
    .body(body.to_vec())
    .send()
    .await
}

/// Put Block, asserting 201.
pub(super) async fn stage(c: &Client, container: &str, blob: &str, id: &str, body: &[u8]) {
    let r = put_block(c, container, blob, id, body).await;
    assert_eq!(r.status, 201, "put block {id}: {}", r.text());
}

/// A Put Block List body; each entry is (`Committed` | `Uncommitted` |
/// `Latest`, base64 id).
pub(super) fn block_list_xml(entries: &[(&str, &str)]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>");
    for (kind, id) in entries {
        xml.push_str(&format!("<{kind}>{id}</{kind}>"));
    }
    xml.push_str("</BlockList>");
    xml
}

/// Put Block List; returns the response unchecked.
pub(super) async fn put_block_list(
    c: &Client,
    container: &str,
    blob: &str,
    entries: &[(&str, &str)],
) -> Response {
    c.put(&format!("/{container}/{blob}?comp=blocklist"))
        .body(block_list_xml(entries))
        .send()
        .await
}

/// Put Block List, asserting 201.
pub(super) async fn commit(
    c: &Client,
    container: &str,
    blob: &str,
    entries: &[(&str, &str)],
) -> Response {
    let r = put_block_list(c, container, blob, entries).await;
    assert_eq!(r.status, 201, "put block list: {}", r.text());
    r
}

/// List Blobs of `container` with extra query `query` (e.g.
/// `&include=snapshots`); asserts 200 and returns the document.
pub(super) async fn list(c: &Client, container: &str, query: &str) -> String {
    let r = c
        .get(&format!("/{container}?restype=container&comp=list{query}"))
        .send()
        .await;
    assert_eq!(r.status, 200, "list blobs: {}", r.text());
    r.text()
}

/// The texts of every `<tag>…</tag>` in `xml`, in order (`<tag />` is not
/// matched).
pub(super) fn elements<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let end = after.find(&close).expect("a closed element");
        out.push(&after[..end]);
        rest = &after[end + close.len()..];
    }
    out
}

/// The `<Blob>` entries of a List Blobs document: (name, snapshot, the
/// entry's XML).
pub(super) fn blob_entries(xml: &str) -> Vec<(String, Option<String>, String)> {
    elements(xml, "Blob")
        .into_iter()
        .map(|entry| {
            let name = elements(entry, "Name")[0].to_owned();
            let snapshot = elements(entry, "Snapshot").first().map(|s| (*s).to_owned());
            (name, snapshot, entry.to_owned())
        })
        .collect()
}

/// The ids of every extent of the store, files and inline ones, sorted.
pub(super) fn extent_files(server: &TestServer) -> Vec<String> {
    server.extents().into_iter().map(|(id, _)| id).collect()
}

/// Total bytes of the extents.
pub(super) fn extent_bytes(server: &TestServer) -> u64 {
    server.extents().iter().map(|(_, len)| len).sum()
}

/// Acquires a lease of `duration` seconds (-1: infinite) with id `id` on the
/// blob at `path` (`/container/blob`).
pub(super) async fn acquire_lease(c: &Client, path: &str, id: &str, duration: i32) {
    let r = c
        .put(&format!("{path}?comp=lease"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", &duration.to_string())
        .header("x-ms-proposed-lease-id", id)
        .send()
        .await;
    assert_eq!(r.status, 201, "acquire lease: {}", r.text());
    assert_eq!(r.header("x-ms-lease-id").as_deref(), Some(id));
}

/// A lease id.
pub(super) const LEASE_A: &str = "aaaaaaaa-0000-4000-8000-00000000000a";
/// Another lease id.
pub(super) const LEASE_B: &str = "bbbbbbbb-0000-4000-8000-00000000000b";

/// Get Block List with `blocklisttype` (or none); asserts 200.
async fn get_block_list(
    c: &Client,
    container: &str,
    blob: &str,
    list_type: Option<&str>,
) -> Response {
    let query = list_type.map_or(String::new(), |t| format!("&blocklisttype={t}"));
    let r = c
        .get(&format!("/{container}/{blob}?comp=blocklist{query}"))
        .send()
        .await;
    assert_eq!(r.status, 200, "get block list: {}", r.text());
    r
}

/// (name, size) of each `<Block>` inside `<section>` of a Get Block List body.
fn blocks_in(xml: &str, section: &str) -> Vec<(String, u64)> {
    elements(xml, section)
        .first()
        .map(|s| {
            elements(s, "Block")
                .into_iter()
                .map(|b| {
                    (
                        elements(b, "Name")[0].to_owned(),
                        elements(b, "Size")[0].parse().expect("a size"),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn get_bytes(c: &Client, container: &str, blob: &str) -> Vec<u8> {
    let r = c.get(&format!("/{container}/{blob}")).send().await;
    assert_eq!(r.status, 200, "get {blob}: {}", r.text());
    r.body.to_vec()
}

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("blocks");
    c.create_container(&name).await;
    (c, name)
}

// ---------------------------------------------------------------------------
// Put Block

#[tokio::test]
async fn put_block_is_201_with_the_crc64_of_the_block() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let body = b"the block's bytes";
    let r = put_block(&c, &ctr, "b", &block_id(1), body).await;
    assert_eq!(r.status, 201, "{}", r.text());
    // No Content-MD5 sent: the CRC64 comes back, not the MD5.
    assert_eq!(r.header("content-md5"), None);
    assert_eq!(
        r.header("x-ms-content-crc64"),
        Some(b64(&stowage_blobstore::Crc64::to_bytes(
            stowage_blobstore::Crc64::of(body)
        )))
    );
    assert_eq!(
        r.header("x-ms-request-server-encrypted").as_deref(),
        Some("true")
    );
    assert!(r.body.is_empty());
}

#[tokio::test]
async fn put_block_does_not_change_the_committed_blob() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c.put_blob(&ctr, "b", b"committed").await;
    stage(&c, &ctr, "b", &block_id(1), b"staged").await;
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.etag(), put.etag());
    assert_eq!(head.header("last-modified"), put.header("last-modified"));
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"committed");
}

#[tokio::test]
async fn put_block_without_blockid_is_400_missing_required_query_parameter() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/b?comp=block"))
        .body(&b"x"[..])
        .send()
        .await;
    r.assert_error(400, "MissingRequiredQueryParameter");
    assert!(
        r.text()
            .contains("<QueryParameterName>blockid</QueryParameterName>")
    );
}

#[tokio::test]
async fn put_block_with_a_bad_block_id_is_400_invalid_query_parameter_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let cases = [
        ("not base64", enc("not base64!")),
        ("empty", String::new()),
        ("65 bytes", enc(&b64(&[7u8; 65]))),
    ];
    for (what, id) in cases {
        let r = c
            .put(&format!("/{ctr}/b?comp=block&blockid={id}"))
            .body(&b"x"[..])
            .send()
            .await;
        assert_eq!(
            r.code().as_deref(),
            Some("InvalidQueryParameterValue"),
            "{what}"
        );
        r.assert_error(400, "InvalidQueryParameterValue");
        assert!(
            r.text()
                .contains("<QueryParameterName>blockid</QueryParameterName>"),
            "{what}: {}",
            r.text()
        );
    }
    // 64 bytes is the longest id allowed.
    stage(&c, &ctr, "b", &b64(&[7u8; 64]), b"x").await;
    // Nothing of the refused requests was staged.
    let r = get_block_list(&c, &ctr, "b", Some("uncommitted")).await;
    assert_eq!(blocks_in(&r.text(), "UncommittedBlocks").len(), 1);
}

#[tokio::test]
async fn an_id_length_other_than_the_uncommitted_blocks_is_400_invalid_blob_or_block() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    // Against uncommitted blocks.
    stage(&c, &ctr, "u", &block_id(1), b"a").await;
    let r = put_block(&c, &ctr, "u", &b64(b"short"), b"b").await;
    r.assert_error(400, "InvalidBlobOrBlock");
    // Committed blocks do not set the length: after Put Block List nothing
    // is uncommitted, and ids of another length are accepted; they then
    // set the length for the next blocks.
    stage(&c, &ctr, "c", &block_id(1), b"a").await;
    commit(&c, &ctr, "c", &[("Latest", &block_id(1))]).await;
    let long = b64(b"a much longer block id");
    stage(&c, &ctr, "c", &long, b"b").await;
    let r = put_block(&c, &ctr, "c", &block_id(2), b"c").await;
    r.assert_error(400, "InvalidBlobOrBlock");
    // A list mixing the committed id and the new one commits both.
    commit(
        &c,
        &ctr,
        "c",
        &[("Committed", &block_id(1)), ("Uncommitted", &long)],
    )
    .await;
    let r = c.get(&format!("/{ctr}/c")).send().await;
    assert_eq!(r.text(), "ab");
}

#[tokio::test]
async fn put_block_on_an_append_blob_is_409_invalid_blob_type() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = put_block(&c, &ctr, "log", &block_id(1), b"x").await;
    r.assert_error(409, "InvalidBlobType");
}

#[tokio::test]
async fn put_block_on_a_missing_container_is_404_container_not_found() {
    let server = TestServer::start().await;
    let c = server.client();
    let r = put_block(&c, &unique("nosuch"), "b", &block_id(1), b"x").await;
    r.assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn put_block_with_a_wrong_content_md5_is_400_md5_mismatch_and_stages_nothing() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!(
            "/{ctr}/b?comp=block&blockid={}",
            enc(&block_id(1))
        ))
        .header("content-md5", &md5_b64(b"other bytes"))
        .body(&b"the bytes"[..])
        .send()
        .await;
    r.assert_error(400, "Md5Mismatch");
    let r = c.get(&format!("/{ctr}/b?comp=blocklist")).send().await;
    r.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn an_uncommitted_only_blob_is_404_for_get_and_head() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "pending", &block_id(1), b"not yet").await;
    c.get(&format!("/{ctr}/pending"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let head = c.head(&format!("/{ctr}/pending")).send().await;
    head.assert_error(404, "BlobNotFound");
    assert!(head.body.is_empty());
    c.get(&format!("/{ctr}/pending?comp=metadata"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn an_uncommitted_only_blob_is_listed_only_with_include_uncommittedblobs() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "a-committed", b"hello").await;
    // A committed blob that also has uncommitted blocks is listed once.
    stage(&c, &ctr, "a-committed", &block_id(1), b"more").await;
    stage(&c, &ctr, "b-pending", &block_id(1), b"12345").await;
    stage(&c, &ctr, "b-pending", &block_id(2), b"678").await;

    let plain = blob_entries(&list(&c, &ctr, "").await);
    let names: Vec<&str> = plain.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["a-committed"]);

    let with = blob_entries(&list(&c, &ctr, "&include=uncommittedblobs").await);
    let names: Vec<&str> = with.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["a-committed", "b-pending"]);
    let committed = &with[0].2;
    assert_eq!(elements(committed, "Content-Length"), ["5"]);
    let pending = &with[1].2;
    assert_eq!(elements(pending, "Content-Length"), ["0"]);
    assert_eq!(elements(pending, "BlobType"), ["BlockBlob"]);
    assert!(with[1].1.is_none(), "not a snapshot");
    // Only what an uncommitted blob has (docs/wire/listing.md#uncommitted-blobs-in-a-listing).
    for absent in ["<Etag>", "<Last-Modified>", "<Content-Type>", "<Metadata"] {
        assert!(!pending.contains(absent), "{absent}: {pending}");
    }
    let with_metadata = blob_entries(&list(&c, &ctr, "&include=uncommittedblobs,metadata").await);
    assert!(with_metadata[0].2.contains("<Metadata"));
    assert!(
        !with_metadata[1].2.contains("<Metadata"),
        "{}",
        with_metadata[1].2
    );
}

#[tokio::test]
async fn staging_a_block_id_again_replaces_the_earlier_block() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "b", &block_id(1), b"first").await;
    stage(&c, &ctr, "b", &block_id(1), b"the second").await;
    let r = get_block_list(&c, &ctr, "b", Some("uncommitted")).await;
    assert_eq!(
        blocks_in(&r.text(), "UncommittedBlocks"),
        [(block_id(1), 10)]
    );
    commit(&c, &ctr, "b", &[("Uncommitted", &block_id(1))]).await;
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"the second");
}

#[tokio::test]
async fn deleting_an_uncommitted_only_blob_removes_its_blocks() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "pending", &block_id(1), b"x").await;
    let r = c.delete(&format!("/{ctr}/pending")).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    c.get(&format!("/{ctr}/pending?comp=blocklist&blocklisttype=all"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    assert!(blob_entries(&list(&c, &ctr, "&include=uncommittedblobs").await).is_empty());
    let r = put_block_list(&c, &ctr, "pending", &[("Uncommitted", &block_id(1))]).await;
    r.assert_error(400, "InvalidBlockList");
}

#[tokio::test]
async fn put_blob_discards_the_uncommitted_blocks() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "b", &block_id(1), b"staged").await;
    c.put_blob(&ctr, "b", b"whole").await;
    let r = get_block_list(&c, &ctr, "b", Some("uncommitted")).await;
    assert!(r.text().contains("<UncommittedBlocks />"), "{}", r.text());
    let r = put_block_list(&c, &ctr, "b", &[("Uncommitted", &block_id(1))]).await;
    r.assert_error(400, "InvalidBlockList");
}

// ---------------------------------------------------------------------------
// Put Block List

#[tokio::test]
async fn put_block_list_resolves_committed_uncommitted_and_latest() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let (a, b, cc) = (block_id(1), block_id(2), block_id(3));
    stage(&c, &ctr, "b", &a, b"aaa").await;
    stage(&c, &ctr, "b", &b, b"bbb").await;
    commit(&c, &ctr, "b", &[("Uncommitted", &a), ("Latest", &b)]).await;
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"aaabbb");

    // B is staged again: Latest takes the new one, Committed the old one.
    stage(&c, &ctr, "b", &b, b"BBBB").await;
    stage(&c, &ctr, "b", &cc, b"ccc").await;
    commit(
        &c,
        &ctr,
        "b",
        &[("Committed", &b), ("Latest", &a), ("Uncommitted", &cc)],
    )
    .await;
    // A has only a committed version, so Latest falls back to it.
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"bbbaaaccc");

    stage(&c, &ctr, "b", &b, b"BBBB").await;
    commit(&c, &ctr, "b", &[("Latest", &b), ("Committed", &cc)]).await;
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"BBBBccc");
    let r = get_block_list(&c, &ctr, "b", None).await;
    assert_eq!(
        blocks_in(&r.text(), "CommittedBlocks"),
        [(b.clone(), 4), (cc.clone(), 3)]
    );
}

#[tokio::test]
async fn put_block_list_commits_a_reordered_subset() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let parts: Vec<Vec<u8>> = (0..5).map(|i| data(100 + i * 10, i as u64)).collect();
    for (i, p) in parts.iter().enumerate() {
        stage(&c, &ctr, "b", &block_id(i as u32), p).await;
    }
    let order = [4usize, 1, 3];
    let ids: Vec<String> = order.iter().map(|&i| block_id(i as u32)).collect();
    let entries: Vec<(&str, &str)> = ids.iter().map(|id| ("Latest", id.as_str())).collect();
    commit(&c, &ctr, "b", &entries).await;
    let expected: Vec<u8> = order.iter().flat_map(|&i| parts[i].clone()).collect();
    assert_eq!(get_bytes(&c, &ctr, "b").await, expected);
    let r = get_block_list(&c, &ctr, "b", Some("all")).await;
    let committed: Vec<(String, u64)> = order
        .iter()
        .map(|&i| (block_id(i as u32), parts[i].len() as u64))
        .collect();
    assert_eq!(blocks_in(&r.text(), "CommittedBlocks"), committed);
    // Blocks 0 and 2 were not listed: discarded with the commit.
    assert!(r.text().contains("<UncommittedBlocks />"), "{}", r.text());
}

#[tokio::test]
async fn an_empty_block_list_makes_an_empty_blob() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/new?comp=blocklist"))
        .body("<BlockList />")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let head = c.head(&format!("/{ctr}/new")).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length").as_deref(), Some("0"));
    assert_eq!(head.header("x-ms-blob-type").as_deref(), Some("BlockBlob"));
    assert!(get_bytes(&c, &ctr, "new").await.is_empty());

    // Over an existing blob it empties it.
    c.put_blob(&ctr, "old", b"some content").await;
    commit(&c, &ctr, "old", &[]).await;
    assert!(get_bytes(&c, &ctr, "old").await.is_empty());
}

#[tokio::test]
async fn put_block_list_naming_an_unknown_block_is_400_invalid_block_list() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let put = c.put_blob(&ctr, "b", b"original").await;
    stage(&c, &ctr, "b", &block_id(1), b"staged").await;
    let cases: [(&str, [(&str, String); 1]); 4] = [
        ("never staged", [("Uncommitted", block_id(9))]),
        ("latest never staged", [("Latest", block_id(9))]),
        ("committed, but only staged", [("Committed", block_id(1))]),
        ("not base64", [("Latest", "not base64!".to_owned())]),
    ];
    for (what, entries) in &cases {
        let entries: Vec<(&str, &str)> = entries.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = put_block_list(&c, &ctr, "b", &entries).await;
        assert_eq!(r.code().as_deref(), Some("InvalidBlockList"), "{what}");
        r.assert_error(400, "InvalidBlockList");
    }
    // The same id twice.
    let id = block_id(1);
    let r = put_block_list(&c, &ctr, "b", &[("Latest", &id), ("Uncommitted", &id)]).await;
    r.assert_error(400, "InvalidBlockList");
    // Nothing changed, and the staged block is still there.
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.etag(), put.etag());
    commit(&c, &ctr, "b", &[("Uncommitted", &id)]).await;
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"staged");
}

#[tokio::test]
async fn a_malformed_block_list_is_400_invalid_xml_document() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "b", &block_id(1), b"x").await;
    let bodies = [
        "not xml at all",
        "<BlockList><Latest>YmxrLTAwMDAwMQ==</Latest>",
        "<Blocks><Latest>YmxrLTAwMDAwMQ==</Latest></Blocks>",
        "",
    ];
    for body in bodies {
        let r = c
            .put(&format!("/{ctr}/b?comp=blocklist"))
            .body(body)
            .send()
            .await;
        assert_eq!(r.code().as_deref(), Some("InvalidXmlDocument"), "{body:?}");
        r.assert_error(400, "InvalidXmlDocument");
    }
    c.get(&format!("/{ctr}/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn uncommitted_blocks_are_discarded_after_a_commit() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    for i in 1..=3 {
        stage(&c, &ctr, "b", &block_id(i), b"abc").await;
    }
    commit(&c, &ctr, "b", &[("Latest", &block_id(1))]).await;
    let r = get_block_list(&c, &ctr, "b", Some("uncommitted")).await;
    assert!(r.text().contains("<UncommittedBlocks />"), "{}", r.text());
    assert!(blocks_in(&r.text(), "UncommittedBlocks").is_empty());
    let r = put_block_list(&c, &ctr, "b", &[("Uncommitted", &block_id(2))]).await;
    r.assert_error(400, "InvalidBlockList");
}

#[tokio::test]
async fn put_block_list_sets_properties_and_metadata_and_clears_absent_ones() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let body = b"hello, blocks";
    stage(&c, &ctr, "b", &block_id(1), body).await;
    let md5 = md5_b64(body);
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .header("x-ms-blob-content-type", "text/plain")
        .header("x-ms-blob-content-encoding", "identity")
        .header("x-ms-blob-content-language", "en-GB")
        .header("x-ms-blob-cache-control", "no-cache")
        .header("x-ms-blob-content-disposition", "attachment")
        .header("x-ms-blob-content-md5", &md5)
        .header("x-ms-meta-colour", "blue")
        .body(block_list_xml(&[("Latest", &block_id(1))]))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    // The response's Content-MD5 is that of the XML body.
    assert_eq!(
        r.header("content-md5"),
        Some(md5_b64(
            block_list_xml(&[("Latest", &block_id(1))]).as_bytes()
        ))
    );
    assert!(r.header("etag").is_some() && r.header("last-modified").is_some());
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.etag(), r.etag());
    for (name, value) in [
        ("content-type", "text/plain"),
        ("content-encoding", "identity"),
        ("content-language", "en-GB"),
        ("cache-control", "no-cache"),
        ("content-disposition", "attachment"),
        ("content-md5", md5.as_str()),
        ("x-ms-meta-colour", "blue"),
        ("content-length", "13"),
    ] {
        assert_eq!(head.header(name).as_deref(), Some(value), "{name}");
    }

    // A second commit without those headers clears them all; Put Block List
    // never computes an MD5.
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .header("x-ms-blob-content-language", "fr")
        .body(block_list_xml(&[("Committed", &block_id(1))]))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.header("content-language").as_deref(), Some("fr"));
    assert_eq!(
        head.header("content-type").as_deref(),
        Some("application/octet-stream")
    );
    for name in [
        "content-encoding",
        "cache-control",
        "content-disposition",
        "content-md5",
        "x-ms-meta-colour",
    ] {
        assert_eq!(head.header(name), None, "{name} cleared");
    }
}

#[tokio::test]
async fn put_block_list_if_none_match_star_is_409_on_a_committed_blob() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"exists").await;
    stage(&c, &ctr, "b", &block_id(1), b"new").await;
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .header("if-none-match", "*")
        .body(block_list_xml(&[("Latest", &block_id(1))]))
        .send()
        .await;
    r.assert_error(409, "BlobAlreadyExists");
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"exists");
}

#[tokio::test]
async fn put_block_list_if_none_match_star_creates_an_uncommitted_only_blob() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "b", &block_id(1), b"new").await;
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .header("if-none-match", "*")
        .body(block_list_xml(&[("Latest", &block_id(1))]))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"new");
}

#[tokio::test]
async fn put_block_list_on_an_append_blob_is_409_invalid_blob_type() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c
        .put(&format!("/{ctr}/log?comp=blocklist"))
        .body("<BlockList />")
        .send()
        .await;
    r.assert_error(409, "InvalidBlobType");
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(head.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
}

#[tokio::test]
async fn put_block_list_if_match_with_a_stale_etag_is_412_condition_not_met() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let first = c.put_blob(&ctr, "b", b"one").await;
    c.put_blob(&ctr, "b", b"two").await;
    stage(&c, &ctr, "b", &block_id(1), b"three").await;
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .header("if-match", &first.etag())
        .body(block_list_xml(&[("Latest", &block_id(1))]))
        .send()
        .await;
    r.assert_error(412, "ConditionNotMet");
}

#[tokio::test]
async fn put_block_and_put_block_list_on_a_leased_blob_need_its_lease_id() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"leased").await;
    acquire_lease(&c, &format!("/{ctr}/b"), LEASE_A, -1).await;
    let id = block_id(1);
    let block_path = format!("/{ctr}/b?comp=block&blockid={}", enc(&id));

    c.put(&block_path)
        .body(&b"x"[..])
        .send()
        .await
        .assert_error(412, "LeaseIdMissing");
    c.put(&block_path)
        .header("x-ms-lease-id", LEASE_B)
        .body(&b"x"[..])
        .send()
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    let r = c
        .put(&block_path)
        .header("x-ms-lease-id", LEASE_A)
        .body(&b"x"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());

    let list_path = format!("/{ctr}/b?comp=blocklist");
    let xml = block_list_xml(&[("Latest", &id)]);
    c.put(&list_path)
        .body(xml.clone())
        .send()
        .await
        .assert_error(412, "LeaseIdMissing");
    c.put(&list_path)
        .header("x-ms-lease-id", LEASE_B)
        .body(xml.clone())
        .send()
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    let r = c
        .put(&list_path)
        .header("x-ms-lease-id", LEASE_A)
        .body(xml)
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(get_bytes(&c, &ctr, "b").await, b"x");
    // The lease is kept.
    let head = c.head(&format!("/{ctr}/b")).send().await;
    assert_eq!(head.header("x-ms-lease-state").as_deref(), Some("leased"));
    assert_eq!(head.header("x-ms-lease-status").as_deref(), Some("locked"));
    assert_eq!(
        head.header("x-ms-lease-duration").as_deref(),
        Some("infinite")
    );
    // Get Block List checks a lease id when one is sent.
    c.get(&format!("/{ctr}/b?comp=blocklist"))
        .header("x-ms-lease-id", LEASE_B)
        .send()
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    let r = c
        .get(&format!("/{ctr}/b?comp=blocklist"))
        .header("x-ms-lease-id", LEASE_A)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let renew = c
        .put(&format!("/{ctr}/b?comp=lease"))
        .header("x-ms-lease-action", "renew")
        .header("x-ms-lease-id", LEASE_A)
        .send()
        .await;
    assert_eq!(renew.status, 200, "{}", renew.text());
}

#[tokio::test]
async fn a_lease_id_for_a_blob_that_does_not_exist_is_412_lease_not_present() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/b?comp=blocklist"))
        .header("x-ms-lease-id", LEASE_A)
        .body("<BlockList />")
        .send()
        .await;
    r.assert_error(412, "LeaseNotPresentWithBlobOperation");
    let r = c
        .put(&format!(
            "/{ctr}/b?comp=block&blockid={}",
            enc(&block_id(1))
        ))
        .header("x-ms-lease-id", LEASE_A)
        .body(&b"x"[..])
        .send()
        .await;
    r.assert_error(412, "LeaseNotPresentWithBlobOperation");
}

// ---------------------------------------------------------------------------
// Get Block List

#[tokio::test]
async fn get_block_list_returns_the_committed_uncommitted_or_all_blocks() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let (a, b) = (block_id(1), block_id(2));
    stage(&c, &ctr, "b", &a, b"aaa").await;
    stage(&c, &ctr, "b", &b, b"bbbb").await;
    let put = commit(&c, &ctr, "b", &[("Latest", &b), ("Latest", &a)]).await;
    // Staged out of id order: listed sorted by id.
    let (d, cc) = (block_id(4), block_id(3));
    stage(&c, &ctr, "b", &d, b"ddddddd").await;
    stage(&c, &ctr, "b", &cc, b"ccccc").await;

    let committed_xml = format!(
        "<CommittedBlocks><Block><Name>{b}</Name><Size>4</Size></Block>\
         <Block><Name>{a}</Name><Size>3</Size></Block></CommittedBlocks>"
    );
    let uncommitted_xml = format!(
        "<UncommittedBlocks><Block><Name>{cc}</Name><Size>5</Size></Block>\
         <Block><Name>{d}</Name><Size>7</Size></Block></UncommittedBlocks>"
    );
    let doc = |inner: String| {
        format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>{inner}</BlockList>")
    };
    let cases = [
        (None, doc(committed_xml.clone())),
        (Some("committed"), doc(committed_xml.clone())),
        (Some("uncommitted"), doc(uncommitted_xml.clone())),
        (
            Some("all"),
            doc(format!("{committed_xml}{uncommitted_xml}")),
        ),
    ];
    for (list_type, expected) in cases {
        let r = get_block_list(&c, &ctr, "b", list_type).await;
        assert_eq!(r.text(), expected, "{list_type:?}");
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/xml"),
            "{list_type:?}"
        );
        assert_eq!(r.header("x-ms-blob-content-length").as_deref(), Some("7"));
        assert_eq!(r.etag(), put.etag());
        assert_eq!(r.header("last-modified"), put.header("last-modified"));
    }
}

#[tokio::test]
async fn get_block_list_of_an_uncommitted_only_blob_has_no_etag_and_length_0() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    stage(&c, &ctr, "b", &block_id(1), b"xyz").await;
    let r = get_block_list(&c, &ctr, "b", Some("all")).await;
    assert_eq!(
        r.text(),
        format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList><CommittedBlocks />\
             <UncommittedBlocks><Block><Name>{}</Name><Size>3</Size></Block>\
             </UncommittedBlocks></BlockList>",
            block_id(1)
        )
    );
    assert_eq!(r.header("x-ms-blob-content-length").as_deref(), Some("0"));
    assert_eq!(r.header("etag"), None);
    assert_eq!(r.header("last-modified"), None);
}

#[tokio::test]
async fn get_block_list_of_a_put_blob_block_blob_has_no_committed_blocks() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"whole").await;
    let r = get_block_list(&c, &ctr, "b", None).await;
    assert!(r.text().contains("<CommittedBlocks />"), "{}", r.text());
    assert_eq!(r.header("x-ms-blob-content-length").as_deref(), Some("5"));
}

#[tokio::test]
async fn get_block_list_with_a_bad_blocklisttype_is_400_invalid_query_parameter_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"x").await;
    let r = c
        .get(&format!("/{ctr}/b?comp=blocklist&blocklisttype=everything"))
        .send()
        .await;
    r.assert_error(400, "InvalidQueryParameterValue");
    assert!(
        r.text()
            .contains("<QueryParameterName>blocklisttype</QueryParameterName>"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn get_block_list_of_a_missing_blob_is_404_and_of_an_append_blob_409() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.get(&format!("/{ctr}/missing?comp=blocklist"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201);
    c.get(&format!("/{ctr}/log?comp=blocklist"))
        .send()
        .await
        .assert_error(409, "InvalidBlobType");
}

// ---------------------------------------------------------------------------
// Content and storage

#[tokio::test]
async fn a_blob_assembled_from_blocks_reads_back_byte_identical() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let sizes = [300_000usize, 1, 65_536, 0, 123_457, 7, 250_000];
    let parts: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| data(n, 100 + i as u64))
        .collect();
    let ids: Vec<String> = (0..parts.len() as u32).map(block_id).collect();
    for (id, p) in ids.iter().zip(&parts) {
        stage(&c, &ctr, "big", id, p).await;
    }
    let entries: Vec<(&str, &str)> = ids.iter().map(|id| ("Latest", id.as_str())).collect();
    commit(&c, &ctr, "big", &entries).await;
    let whole: Vec<u8> = parts.concat();
    let got = get_bytes(&c, &ctr, "big").await;
    assert_eq!(got.len(), whole.len());
    assert!(got == whole, "content differs");

    let head = c.head(&format!("/{ctr}/big")).send().await;
    assert_eq!(head.header("content-length"), Some(whole.len().to_string()));
    // A range across several block boundaries.
    let (start, end) = (299_990usize, 366_000usize);
    let r = c
        .get(&format!("/{ctr}/big"))
        .header("x-ms-range", &format!("bytes={start}-{end}"))
        .send()
        .await;
    assert_eq!(r.status, 206, "{}", r.text());
    assert!(r.body[..] == whole[start..=end], "range differs");
}

#[tokio::test]
async fn committing_staged_blocks_copies_no_bytes() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    const N: u32 = 16;
    const BLOCK: usize = 256 * 1024;
    let mut whole = Vec::new();
    for i in 0..N {
        let part = data(BLOCK, u64::from(i));
        stage(&c, &ctr, "large", &block_id(i), &part).await;
        whole.extend_from_slice(&part);
    }
    let files = extent_files(&server);
    let bytes = extent_bytes(&server);
    assert_eq!(files.len(), N as usize, "one extent per staged block");
    assert_eq!(bytes, u64::from(N) * BLOCK as u64);

    let ids: Vec<String> = (0..N).map(block_id).collect();
    let entries: Vec<(&str, &str)> = ids.iter().map(|id| ("Uncommitted", id.as_str())).collect();
    commit(&c, &ctr, "large", &entries).await;
    assert_eq!(extent_files(&server), files, "the commit wrote no extent");
    assert_eq!(extent_bytes(&server), bytes);

    // Recommitting a reordered subset of the committed blocks writes nothing
    // either.
    let reordered: Vec<(&str, &str)> = ids
        .iter()
        .rev()
        .step_by(2)
        .map(|id| ("Committed", id.as_str()))
        .collect();
    commit(&c, &ctr, "large", &reordered).await;
    assert_eq!(extent_files(&server), files);
    let expected: Vec<u8> = (0..N)
        .rev()
        .step_by(2)
        .flat_map(|i| whole[i as usize * BLOCK..(i as usize + 1) * BLOCK].to_vec())
        .collect();
    assert!(get_bytes(&c, &ctr, "large").await == expected);
}
