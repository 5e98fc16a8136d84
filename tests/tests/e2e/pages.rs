//! Page blobs over raw HTTP (docs/wire/pages.md): the exact answers of Put
//! Blob, Put Page and Get Page Ranges, sparse storage (a 1 TiB blob costs
//! what was written), and garbage: overwritten pages are collected once no
//! version reads them.

use std::os::unix::fs::MetadataExt as _;
use std::time::Duration;

use stowage_tests::{ACCOUNT, Client, KEY, Response, TestServer, blob_sas, unique};

const TIB: u64 = 1024 * 1024 * 1024 * 1024;

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("pages");
    c.create_container(&name).await;
    (c, name)
}

/// Put Blob of a page blob of `size` bytes; asserts 201.
async fn create(c: &Client, ctr: &str, blob: &str, size: u64) -> Response {
    let r = c
        .put(&format!("/{ctr}/{blob}"))
        .header("x-ms-blob-type", "PageBlob")
        .header("x-ms-blob-content-length", &size.to_string())
        .send()
        .await;
    assert_eq!(r.status, 201, "create page blob: {}", r.text());
    r
}

/// Put Page (update) of `data` at `offset`, with extra headers.
async fn write_with(
    c: &Client,
    ctr: &str,
    blob: &str,
    offset: u64,
    data: &[u8],
    headers: &[(&str, &str)],
) -> Response {
    let end = offset + data.len() as u64 - 1;
    let mut r = c
        .put(&format!("/{ctr}/{blob}?comp=page"))
        .header("x-ms-page-write", "update")
        .header("x-ms-range", &format!("bytes={offset}-{end}"))
        .body(data.to_vec());
    for (n, v) in headers {
        r = r.header(n, v);
    }
    r.send().await
}

async fn write(c: &Client, ctr: &str, blob: &str, offset: u64, data: &[u8]) -> Response {
    let r = write_with(c, ctr, blob, offset, data, &[]).await;
    assert_eq!(r.status, 201, "put page: {}", r.text());
    r
}

async fn page_list(c: &Client, path: &str) -> String {
    let r = c.get(path).send().await;
    assert_eq!(r.status, 200, "get page ranges: {}", r.text());
    r.text()
}

/// Bytes the files under `dir` take on disk.
fn disk_use(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("entry");
        let meta = entry.metadata().expect("metadata");
        total += if meta.is_dir() {
            disk_use(&entry.path())
        } else {
            meta.blocks() * 512
        };
    }
    total
}

#[tokio::test]
async fn put_page_answers_with_its_headers_and_head_shows_a_page_blob() {
    let server = TestServer::start_in_memory().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/p"))
        .header("x-ms-blob-type", "PageBlob")
        .header("x-ms-blob-content-length", "4096")
        .header("x-ms-blob-sequence-number", "42")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        r.header("x-ms-request-server-encrypted").as_deref(),
        Some("true")
    );
    let data = vec![7u8; 1024];
    let r = write(&c, &ctr, "p", 1024, &data).await;
    assert_eq!(r.header("x-ms-blob-sequence-number").as_deref(), Some("42"));
    assert!(r.header("x-ms-content-crc64").is_some());
    let head = c.head(&format!("/{ctr}/p")).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("x-ms-blob-type").as_deref(), Some("PageBlob"));
    assert_eq!(
        head.header("x-ms-blob-sequence-number").as_deref(),
        Some("42")
    );
    assert_eq!(head.header("content-length").as_deref(), Some("4096"));
    assert_eq!(head.header("etag"), r.header("etag"));
    let list = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert!(
        list.contains(
            "<x-ms-blob-sequence-number>42</x-ms-blob-sequence-number><BlobType>PageBlob</BlobType>"
        ),
        "{list}"
    );
}

#[tokio::test]
async fn get_page_ranges_document_and_paging() {
    let server = TestServer::start_in_memory().await;
    let (c, ctr) = setup(&server).await;
    create(&c, &ctr, "p", 8192).await;
    for offset in [0u64, 512, 2048, 6144] {
        write(&c, &ctr, "p", offset, &[1u8; 512]).await;
    }
    let r = c.get(&format!("/{ctr}/p?comp=pagelist")).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("x-ms-blob-content-length").as_deref(),
        Some("8192")
    );
    assert_eq!(r.header("content-type").as_deref(), Some("application/xml"));
    assert_eq!(
        r.text(),
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><PageList>\
         <PageRange><Start>0</Start><End>511</End></PageRange>\
         <PageRange><Start>512</Start><End>1023</End></PageRange>\
         <PageRange><Start>2048</Start><End>2559</End></PageRange>\
         <PageRange><Start>6144</Start><End>6655</End></PageRange></PageList>"
    );
    let first = page_list(&c, &format!("/{ctr}/p?comp=pagelist&maxresults=3")).await;
    assert!(
        first.ends_with("<NextMarker>p6144</NextMarker></PageList>"),
        "{first}"
    );
    let rest = page_list(
        &c,
        &format!("/{ctr}/p?comp=pagelist&maxresults=3&marker=p6144"),
    )
    .await;
    assert_eq!(
        rest,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><PageList>\
         <PageRange><Start>6144</Start><End>6655</End></PageRange></PageList>"
    );
    let r = c
        .get(&format!("/{ctr}/p?comp=pagelist&marker=bogus"))
        .send()
        .await;
    r.assert_error(400, "InvalidQueryParameterValue");
}

#[tokio::test]
async fn refusals_of_put_page() {
    let server = TestServer::start_in_memory().await;
    let (c, ctr) = setup(&server).await;
    create(&c, &ctr, "p", 2048).await;
    // Off the page grid, and past the end.
    write_with(&c, &ctr, "p", 1, &[0u8; 512], &[])
        .await
        .assert_error(416, "InvalidPageRange");
    write_with(&c, &ctr, "p", 2048, &[0u8; 512], &[])
        .await
        .assert_error(416, "InvalidPageRange");
    // A failed sequence-number condition.
    write_with(
        &c,
        &ctr,
        "p",
        0,
        &[0u8; 512],
        &[("x-ms-if-sequence-number-lt", "0")],
    )
    .await
    .assert_error(412, "SequenceNumberConditionNotMet");
    // A bad Content-MD5.
    write_with(
        &c,
        &ctr,
        "p",
        0,
        &[0u8; 512],
        &[("content-md5", "AAAAAAAAAAAAAAAAAAAAAA==")],
    )
    .await
    .assert_error(400, "Md5Mismatch");
    // A page write to a block blob, and a missing x-ms-page-write.
    c.put_blob(&ctr, "block", b"x").await;
    write_with(&c, &ctr, "block", 0, &[0u8; 512], &[])
        .await
        .assert_error(409, "InvalidBlobType");
    let r = c
        .put(&format!("/{ctr}/p?comp=page"))
        .header("x-ms-range", "bytes=0-511")
        .body(vec![0u8; 512])
        .send()
        .await;
    r.assert_error(400, "MissingRequiredHeader");
    // None of those changed anything.
    let list = page_list(&c, &format!("/{ctr}/p?comp=pagelist")).await;
    assert!(!list.contains("<PageRange>"), "{list}");
}

/// The issue's sparse test: a 1 TiB page blob with 1,000 pages written
/// takes about 1,000 pages of disk, and reads back zeros around them.
#[tokio::test]
async fn a_one_tib_blob_with_a_thousand_pages_uses_a_thousand_pages_of_disk() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let before = disk_use(&server.data_dir());
    create(&c, &ctr, "disk", TIB).await;
    let stride = TIB / 1000 / 512 * 512;
    for i in 0..1000u64 {
        write(&c, &ctr, "disk", i * stride, &[(i % 251) as u8 + 1; 512]).await;
    }
    let extent_bytes: u64 = server.extents().iter().map(|(_, n)| n).sum();
    assert_eq!(extent_bytes, 1000 * 512);
    // A read across a written page and the zeros on both sides of it.
    let r = c
        .get(&format!("/{ctr}/disk"))
        .header(
            "x-ms-range",
            &format!("bytes={}-{}", 7 * stride - 512, 7 * stride + 1023),
        )
        .send()
        .await;
    assert_eq!(r.status, 206);
    let mut want = vec![0u8; 512];
    want.extend([8u8; 512]);
    want.extend([0u8; 512]);
    assert_eq!(&r.body[..], &want[..]);
    let server = server.restart().await;
    let grown = disk_use(&server.data_dir()).saturating_sub(before);
    // 1,000 pages are 500 KiB; the page map's rows come on top (the
    // directory grew by 524 KiB when this was written). Anything that
    // followed the declared size would be terabytes.
    assert!(
        grown < 2 * 1024 * 1024,
        "the data directory grew by {grown} bytes"
    );
    let list = page_list(&server.client(), &format!("/{ctr}/disk?comp=pagelist")).await;
    assert_eq!(list.matches("<PageRange>").count(), 1000);
}

/// An overwritten extent is kept while a snapshot reads it, and becomes
/// garbage when the snapshot goes.
#[tokio::test]
async fn overwritten_pages_are_collected_once_no_snapshot_reads_them() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create(&c, &ctr, "p", 1024 * 1024).await;
    // Large enough to be an extent file of its own.
    write(&c, &ctr, "p", 0, &vec![1u8; 256 * 1024]).await;
    let first = server.extents();
    assert_eq!(first.len(), 1);
    let snap = c.put(&format!("/{ctr}/p?comp=snapshot")).send().await;
    assert_eq!(snap.status, 201);
    let snapshot = snap.header("x-ms-snapshot").expect("snapshot id");
    // Overwrite half of it: the first extent is still read, by both.
    write(&c, &ctr, "p", 0, &vec![2u8; 128 * 1024]).await;
    server.clock.advance(Duration::from_secs(31));
    server.store.collect_garbage().await.expect("collect");
    assert!(server.extents().contains(&first[0]));
    // Overwrite the other half: only the snapshot reads it now.
    write(&c, &ctr, "p", 128 * 1024, &vec![3u8; 128 * 1024]).await;
    server.clock.advance(Duration::from_secs(31));
    server.store.collect_garbage().await.expect("collect");
    assert!(server.extents().contains(&first[0]));
    let r = c
        .get(&format!("/{ctr}/p?snapshot={snapshot}"))
        .header("x-ms-range", "bytes=0-262143")
        .send()
        .await;
    assert!(r.body.iter().all(|b| *b == 1));
    let r = c
        .delete(&format!("/{ctr}/p?snapshot={snapshot}"))
        .send()
        .await;
    assert_eq!(r.status, 202);
    server.clock.advance(Duration::from_secs(31));
    server.store.collect_garbage().await.expect("collect");
    assert!(!server.extents().contains(&first[0]));
    // Clearing and deleting leave nothing behind.
    let r = c
        .put(&format!("/{ctr}/p?comp=page"))
        .header("x-ms-page-write", "clear")
        .header("x-ms-range", "bytes=0-131071")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c.delete(&format!("/{ctr}/p")).send().await;
    assert_eq!(r.status, 202);
    server.clock.advance(Duration::from_secs(31));
    server.store.collect_garbage().await.expect("collect");
    assert!(server.extents().is_empty(), "{:?}", server.extents());
}

#[tokio::test]
async fn resize_and_sequence_number_actions() {
    let server = TestServer::start_in_memory().await;
    let (c, ctr) = setup(&server).await;
    create(&c, &ctr, "p", 2048).await;
    write(&c, &ctr, "p", 1024, &[5u8; 1024]).await;
    let props = |h: &[(&str, &str)]| {
        let mut r = c.put(&format!("/{ctr}/p?comp=properties"));
        for (n, v) in h {
            r = r.header(n, v);
        }
        r.send()
    };
    let r = props(&[("x-ms-blob-content-length", "1536")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-ms-blob-sequence-number").as_deref(), Some("0"));
    let list = page_list(&c, &format!("/{ctr}/p?comp=pagelist")).await;
    assert!(
        list.contains("<Start>1024</Start><End>1535</End>"),
        "{list}"
    );
    props(&[("x-ms-blob-content-length", "1000")])
        .await
        .assert_error(400, "InvalidHeaderValue");
    let r = props(&[("x-ms-sequence-number-action", "increment")]).await;
    assert_eq!(r.header("x-ms-blob-sequence-number").as_deref(), Some("1"));
    props(&[("x-ms-sequence-number-action", "update")])
        .await
        .assert_error(400, "MissingRequiredHeader");
    props(&[
        ("x-ms-sequence-number-action", "increment"),
        ("x-ms-blob-sequence-number", "3"),
    ])
    .await
    .assert_error(400, "InvalidHeaderValue");
    let r = props(&[
        ("x-ms-sequence-number-action", "max"),
        ("x-ms-blob-sequence-number", "9"),
    ])
    .await;
    assert_eq!(r.header("x-ms-blob-sequence-number").as_deref(), Some("9"));
    // On a block blob, the page-blob form is refused.
    c.put_blob(&ctr, "block", b"x").await;
    let r = c
        .put(&format!("/{ctr}/block?comp=properties"))
        .header("x-ms-sequence-number-action", "increment")
        .send()
        .await;
    r.assert_error(409, "InvalidBlobType");
}

/// Concurrent writers of distinct pages all land, and the map merges
/// their touching runs into one range.
#[tokio::test]
async fn concurrent_page_writes_all_land() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create(&c, &ctr, "p", 64 * 512).await;
    let mut tasks = Vec::new();
    for i in 0..64u64 {
        let (c, ctr) = (c.clone(), ctr.clone());
        tasks.push(tokio::spawn(async move {
            write(&c, &ctr, "p", i * 512, &[i as u8 + 1; 512]).await;
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    let body = c.get(&format!("/{ctr}/p")).send().await.body;
    for i in 0..64usize {
        assert!(
            body[i * 512..(i + 1) * 512]
                .iter()
                .all(|b| *b == i as u8 + 1)
        );
    }
    // One range per write: 64 of them, in order.
    let list = page_list(&c, &format!("/{ctr}/p?comp=pagelist")).await;
    let expected: String = (0..64u64)
        .map(|i| {
            format!(
                "<PageRange><Start>{}</Start><End>{}</End></PageRange>",
                i * 512,
                i * 512 + 511
            )
        })
        .collect();
    assert!(
        list.ends_with(&format!("<PageList>{expected}</PageList>")),
        "{list}"
    );
}

/// A leased page blob takes page writes only with its lease id.
#[tokio::test]
async fn page_writes_to_a_leased_blob_need_its_lease() {
    let server = TestServer::start_in_memory().await;
    let (c, ctr) = setup(&server).await;
    create(&c, &ctr, "p", 1024).await;
    super::blocks::acquire_lease(&c, &format!("/{ctr}/p"), super::blocks::LEASE_A, -1).await;
    write_with(&c, &ctr, "p", 0, &[1u8; 512], &[])
        .await
        .assert_error(412, "LeaseIdMissing");
    let r = write_with(
        &c,
        &ctr,
        "p",
        0,
        &[1u8; 512],
        &[("x-ms-lease-id", super::blocks::LEASE_A)],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
}

/// Upload Pages From URL: the source range lands in the pages named; a
/// missing or mismatched source range, or a source the request may not
/// read, is refused before anything is written.
#[tokio::test]
async fn upload_pages_from_url_and_its_refusals() {
    let server = TestServer::start_in_memory().await;
    let (c, ctr) = setup(&server).await;
    let body: Vec<u8> = (0..2048u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(c.put_blob(&ctr, "src", &body).await.status, 201);
    let sas = blob_sas(ACCOUNT, KEY, &ctr, "src", "r", "2030-01-01T00:00:00Z");
    let url = format!("{}/{ACCOUNT}/{ctr}/src?{sas}", server.base);
    create(&c, &ctr, "p", 4096).await;
    let from_url = |range: &str, source_range: Option<&str>, src: &str| {
        let mut r = c
            .put(&format!("/{ctr}/p?comp=page"))
            .header("x-ms-page-write", "update")
            .header("x-ms-range", range)
            .header("x-ms-copy-source", src);
        if let Some(s) = source_range {
            r = r.header("x-ms-source-range", s);
        }
        r.send()
    };
    let r = from_url("bytes=512-1535", Some("bytes=1024-2047"), &url).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.header("x-ms-blob-sequence-number").as_deref(), Some("0"));
    let got = c.get(&format!("/{ctr}/p")).send().await.body;
    assert!(got[..512].iter().all(|b| *b == 0));
    assert_eq!(&got[512..1536], &body[1024..2048]);
    from_url("bytes=0-511", None, &url)
        .await
        .assert_error(400, "MissingRequiredHeader");
    from_url("bytes=0-511", Some("bytes=0-1023"), &url)
        .await
        .assert_error(400, "InvalidHeaderValue");
    // Past the source's end: the source has 2,048 bytes.
    from_url("bytes=0-1023", Some("bytes=1536-2559"), &url)
        .await
        .assert_error(400, "InvalidHeaderValue");
    from_url("bytes=1-512", Some("bytes=0-511"), &url)
        .await
        .assert_error(416, "InvalidPageRange");
    // No SAS: the source's own refusal.
    let bare = format!("{}/{ACCOUNT}/{ctr}/src", server.base);
    let r = from_url("bytes=0-511", Some("bytes=0-511"), &bare).await;
    assert_eq!(
        r.code().as_deref(),
        Some("CannotVerifyCopySource"),
        "{}",
        r.text()
    );
    let list = page_list(&c, &format!("/{ctr}/p?comp=pagelist")).await;
    assert!(
        list.ends_with(
            "<PageList><PageRange><Start>512</Start><End>1535</End></PageRange></PageList>"
        ),
        "{list}"
    );
}
