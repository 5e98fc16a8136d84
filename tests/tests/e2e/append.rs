//! Append blobs: Put Blob with `x-ms-blob-type: AppendBlob` and Append Block
//! (docs/wire/blobs.md#put-blob, docs/wire/blobs.md#append-block; docs/wire/conditions.md#append-conditions;
//! docs/wire/leases.md#writes-to-a-leased-blob), including concurrent appenders.

use std::collections::{BTreeMap, HashSet};

use base64::Engine as _;
use stowage_blobstore::Crc64;
use stowage_tests::{ACCOUNT, Client, Response, TestServer, unique};

use super::blocks::{LEASE_A, LEASE_B, acquire_lease, md5_b64};

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("append");
    c.create_container(&name).await;
    (c, name)
}

/// Put Blob of an empty append blob; asserts 201.
async fn create_append_blob(c: &Client, container: &str, blob: &str) -> Response {
    let r = c
        .put(&format!("/{container}/{blob}"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "create append blob: {}", r.text());
    r
}

/// Append Block with extra headers; the response unchecked.
async fn append_with(
    c: &Client,
    container: &str,
    blob: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) -> Response {
    let mut request = c
        .put(&format!("/{container}/{blob}?comp=appendblock"))
        .body(body.to_vec());
    for (n, v) in headers {
        request = request.header(n, v);
    }
    request.send().await
}

/// Append Block; asserts 201 and returns (offset, committed block count).
async fn append(c: &Client, container: &str, blob: &str, body: &[u8]) -> (u64, u64) {
    let r = append_with(c, container, blob, body, &[]).await;
    assert_eq!(r.status, 201, "append block: {}", r.text());
    offset_and_count(&r)
}

fn offset_and_count(r: &Response) -> (u64, u64) {
    let number = |name: &str| {
        r.header(name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .parse::<u64>()
            .expect("an integer")
    };
    (
        number("x-ms-blob-append-offset"),
        number("x-ms-blob-committed-block-count"),
    )
}

async fn content(c: &Client, container: &str, blob: &str) -> Vec<u8> {
    let r = c.get(&format!("/{container}/{blob}")).send().await;
    assert_eq!(r.status, 200, "get: {}", r.text());
    r.body.to_vec()
}

#[tokio::test]
async fn put_blob_append_blob_creates_an_empty_append_blob() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = create_append_blob(&c, &ctr, "log").await;
    assert!(r.header("etag").is_some() && r.header("last-modified").is_some());
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
    assert_eq!(head.header("content-length").as_deref(), Some("0"));
    assert_eq!(
        head.header("x-ms-blob-committed-block-count").as_deref(),
        Some("0")
    );
    let list = super::blocks::list(&c, &ctr, "").await;
    assert!(list.contains("<BlobType>AppendBlob</BlobType>"), "{list}");
}

#[tokio::test]
async fn put_blob_append_blob_over_an_append_blob_empties_it() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"some lines").await;
    create_append_blob(&c, &ctr, "log").await;
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(head.header("content-length").as_deref(), Some("0"));
    assert_eq!(
        head.header("x-ms-blob-committed-block-count").as_deref(),
        Some("0")
    );
    assert_eq!(append(&c, &ctr, "log", b"x").await, (0, 1));
}

#[tokio::test]
async fn put_blob_append_blob_with_a_body_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let r = c
        .put(&format!("/{ctr}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .body(&b"not allowed"[..])
        .send()
        .await;
    r.assert_error(400, "InvalidHeaderValue");
    c.head(&format!("/{ctr}/log"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn append_block_returns_the_offset_and_the_committed_block_count() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    let blocks: [&[u8]; 3] = [b"abc", b"defgh", b"i"];
    let mut expected_offset = 0u64;
    for (i, block) in blocks.iter().enumerate() {
        let r = append_with(&c, &ctr, "log", block, &[]).await;
        assert_eq!(r.status, 201, "{}", r.text());
        assert_eq!(offset_and_count(&r), (expected_offset, i as u64 + 1));
        // No Content-MD5 sent: the block's CRC64 comes back instead.
        assert_eq!(r.header("content-md5"), None);
        assert_eq!(
            r.header("x-ms-content-crc64"),
            Some(
                base64::engine::general_purpose::STANDARD.encode(Crc64::to_bytes(Crc64::of(block)))
            )
        );
        assert_eq!(
            r.header("x-ms-request-server-encrypted").as_deref(),
            Some("true")
        );
        expected_offset += block.len() as u64;
    }
    assert_eq!(content(&c, &ctr, "log").await, b"abcdefghi");
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(head.header("content-length").as_deref(), Some("9"));
    assert_eq!(
        head.header("x-ms-blob-committed-block-count").as_deref(),
        Some("3")
    );
    let get = c.get(&format!("/{ctr}/log")).send().await;
    assert_eq!(
        get.header("x-ms-blob-committed-block-count").as_deref(),
        Some("3")
    );
    assert_eq!(get.header("x-ms-blob-type").as_deref(), Some("AppendBlob"));
}

#[tokio::test]
async fn every_append_changes_the_etag() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let created = create_append_blob(&c, &ctr, "log").await;
    let mut seen = vec![created.etag()];
    for i in 0..4 {
        let r = append_with(&c, &ctr, "log", format!("line {i}\n").as_bytes(), &[]).await;
        assert_eq!(r.status, 201);
        let etag = r.etag();
        assert!(!seen.contains(&etag), "ETag {etag} reused");
        let head = c.head(&format!("/{ctr}/log")).send().await;
        assert_eq!(head.etag(), etag, "the response's ETag is the blob's");
        seen.push(etag);
    }
    // An append conditioned on an old ETag is refused.
    let r = append_with(&c, &ctr, "log", b"late", &[("if-match", &seen[0])]).await;
    r.assert_error(412, "ConditionNotMet");
    let r = append_with(&c, &ctr, "log", b"ok", &[("if-match", &seen[4])]).await;
    assert_eq!(r.status, 201, "{}", r.text());
}

#[tokio::test]
async fn appendpos_must_equal_the_current_length() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"abc").await;
    for wrong in ["0", "2", "4"] {
        let r = append_with(
            &c,
            &ctr,
            "log",
            b"x",
            &[("x-ms-blob-condition-appendpos", wrong)],
        )
        .await;
        r.assert_error(412, "AppendPositionConditionNotMet");
    }
    assert_eq!(content(&c, &ctr, "log").await, b"abc");
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"de",
        &[("x-ms-blob-condition-appendpos", "3")],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(offset_and_count(&r), (3, 2));
    assert_eq!(content(&c, &ctr, "log").await, b"abcde");
}

#[tokio::test]
async fn maxsize_bounds_the_length_after_the_append() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"abc").await;
    // 3 + 2 = 5 ≤ 5: allowed.
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"de",
        &[("x-ms-blob-condition-maxsize", "5")],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    // 5 + 1 > 5.
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"f",
        &[("x-ms-blob-condition-maxsize", "5")],
    )
    .await;
    r.assert_error(412, "MaxBlobSizeConditionNotMet");
    // The length (5) is already above the maximum.
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"f",
        &[("x-ms-blob-condition-maxsize", "4")],
    )
    .await;
    r.assert_error(412, "MaxBlobSizeConditionNotMet");
    assert_eq!(content(&c, &ctr, "log").await, b"abcde");
}

#[tokio::test]
async fn appendpos_is_checked_before_maxsize() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"abc").await;
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"x",
        &[
            ("x-ms-blob-condition-appendpos", "0"),
            ("x-ms-blob-condition-maxsize", "1"),
        ],
    )
    .await;
    r.assert_error(412, "AppendPositionConditionNotMet");
}

#[tokio::test]
async fn non_integer_append_conditions_are_400_invalid_header_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    for header in [
        "x-ms-blob-condition-appendpos",
        "x-ms-blob-condition-maxsize",
    ] {
        for value in ["abc", "-1"] {
            let r = append_with(&c, &ctr, "log", b"x", &[(header, value)]).await;
            r.assert_error(400, "InvalidHeaderValue");
            assert!(
                r.text()
                    .contains(&format!("<HeaderName>{header}</HeaderName>")),
                "{}",
                r.text()
            );
        }
    }
}

#[tokio::test]
async fn append_block_with_content_length_0_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    let r = append_with(&c, &ctr, "log", b"", &[]).await;
    r.assert_error(400, "InvalidHeaderValue");
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(
        head.header("x-ms-blob-committed-block-count").as_deref(),
        Some("0")
    );
}

#[tokio::test]
async fn append_block_on_a_block_blob_is_409_invalid_blob_type() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    c.put_blob(&ctr, "b", b"block blob").await;
    let r = append_with(&c, &ctr, "b", b"x", &[]).await;
    r.assert_error(409, "InvalidBlobType");
    assert_eq!(content(&c, &ctr, "b").await, b"block blob");
}

#[tokio::test]
async fn append_block_on_a_missing_blob_is_404_blob_not_found() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    append_with(&c, &ctr, "missing", b"x", &[])
        .await
        .assert_error(404, "BlobNotFound");
    // A blob with only uncommitted blocks does not exist for Append Block.
    super::blocks::stage(&c, &ctr, "pending", &super::blocks::block_id(1), b"x").await;
    append_with(&c, &ctr, "pending", b"x", &[])
        .await
        .assert_error(404, "BlobNotFound");
    append_with(&c, &unique("nosuch"), "b", b"x", &[])
        .await
        .assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn append_block_with_a_wrong_content_md5_is_400_md5_mismatch() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"abc",
        &[("content-md5", &md5_b64(b"abd"))],
    )
    .await;
    r.assert_error(400, "Md5Mismatch");
    let r = append_with(
        &c,
        &ctr,
        "log",
        b"abc",
        &[("content-md5", &md5_b64(b"abc"))],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(offset_and_count(&r), (0, 1));
}

#[tokio::test]
async fn append_block_on_a_leased_blob_needs_its_lease_id() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    acquire_lease(&c, &format!("/{ctr}/log"), LEASE_A, -1).await;
    append_with(&c, &ctr, "log", b"x", &[])
        .await
        .assert_error(412, "LeaseIdMissing");
    append_with(&c, &ctr, "log", b"x", &[("x-ms-lease-id", LEASE_B)])
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    let r = append_with(&c, &ctr, "log", b"x", &[("x-ms-lease-id", LEASE_A)]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let head = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(head.header("x-ms-lease-state").as_deref(), Some("leased"));
    assert_eq!(head.header("content-length").as_deref(), Some("1"));

    // A lease id on a blob without a lease.
    create_append_blob(&c, &ctr, "free").await;
    append_with(&c, &ctr, "free", b"x", &[("x-ms-lease-id", LEASE_A)])
        .await
        .assert_error(412, "LeaseNotPresentWithBlobOperation");
}

/// One block of the concurrency test: a header naming (task, seq) and the
/// length, then filler derived from both, so a block that is torn or
/// interleaved does not parse.
fn tagged_block(task: usize, seq: usize) -> Vec<u8> {
    let len = 1 + (task * 31 + seq * 17) % 97;
    let mut block = format!("<T{task:02}S{seq:02}L{len:03}:").into_bytes();
    let fill = b'a' + ((task * 7 + seq) % 26) as u8;
    block.extend(std::iter::repeat_n(fill, len));
    block.push(b'>');
    block
}

/// Parses the concatenation of tagged blocks: (task, seq, offset) in order.
fn parse_tagged(mut data: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut offset = 0;
    while !data.is_empty() {
        let head = std::str::from_utf8(&data[..12]).expect("a block header");
        assert!(
            head.starts_with("<T") && &head[4..5] == "S" && &head[7..8] == "L",
            "torn block at {offset}: {head:?}"
        );
        let task: usize = head[2..4].parse().expect("task");
        let seq: usize = head[5..7].parse().expect("seq");
        let expected = tagged_block(task, seq);
        assert!(
            data.len() >= expected.len() && data[..expected.len()] == expected[..],
            "block (task {task}, seq {seq}) at {offset} is not intact"
        );
        out.push((task, seq, offset));
        offset += expected.len();
        data = &data[expected.len()..];
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appenders_never_lose_or_interleave_a_block() {
    const TASKS: usize = 16;
    const BLOCKS: usize = 50;
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "shared").await;

    let mut handles = Vec::new();
    for task in 0..TASKS {
        let (c, ctr) = (c.clone(), ctr.clone());
        handles.push(tokio::spawn(async move {
            let mut results = Vec::new();
            for seq in 0..BLOCKS {
                let r = append_with(&c, &ctr, "shared", &tagged_block(task, seq), &[]).await;
                assert_eq!(r.status, 201, "task {task} seq {seq}: {}", r.text());
                let (offset, count) = offset_and_count(&r);
                results.push((seq, offset, count, r.etag()));
            }
            (task, results)
        }));
    }
    // (task, seq) -> (offset, count)
    let mut returned = BTreeMap::new();
    let mut etags = HashSet::new();
    for handle in handles {
        let (task, results) = handle.await.expect("appender task");
        let mut last_offset = None;
        for (seq, offset, count, etag) in results {
            // Each task's blocks land in its own order.
            assert!(
                last_offset.is_none_or(|last| offset > last),
                "task {task}: seq {seq} at {offset} not after {last_offset:?}"
            );
            last_offset = Some(offset);
            returned.insert((task, seq), (offset, count));
            assert!(etags.insert(etag), "an ETag was returned twice");
        }
    }

    let total: usize = (0..TASKS)
        .flat_map(|t| (0..BLOCKS).map(move |s| tagged_block(t, s).len()))
        .sum();
    let n = (TASKS * BLOCKS) as u64;
    let head = c.head(&format!("/{ctr}/shared")).send().await;
    assert_eq!(head.header("content-length"), Some(total.to_string()));
    assert_eq!(
        head.header("x-ms-blob-committed-block-count"),
        Some(n.to_string())
    );

    let blob = content(&c, &ctr, "shared").await;
    assert_eq!(blob.len(), total);
    let found = parse_tagged(&blob);
    assert_eq!(found.len(), TASKS * BLOCKS, "every block exactly once");
    let unique: HashSet<(usize, usize)> = found.iter().map(|&(t, s, _)| (t, s)).collect();
    assert_eq!(unique.len(), TASKS * BLOCKS, "no block twice");

    // Offsets are distinct and each is where its block is found; the k-th
    // block in the blob got committed block count k.
    let offsets: HashSet<u64> = returned.values().map(|&(o, _)| o).collect();
    assert_eq!(offsets.len(), TASKS * BLOCKS, "distinct offsets");
    for (k, &(task, seq, offset)) in found.iter().enumerate() {
        let (returned_offset, count) = returned[&(task, seq)];
        assert_eq!(
            returned_offset, offset as u64,
            "task {task} seq {seq}: returned offset vs position"
        );
        assert_eq!(count, k as u64 + 1, "task {task} seq {seq}: block count");
    }
    // Per task, the blocks appear in the blob in the task's order.
    for task in 0..TASKS {
        let seqs: Vec<usize> = found
            .iter()
            .filter(|&&(t, _, _)| t == task)
            .map(|&(_, s, _)| s)
            .collect();
        assert_eq!(seqs, (0..BLOCKS).collect::<Vec<_>>(), "task {task}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_appenders_presenting_the_same_appendpos_exactly_one_wins() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"0123").await;
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (c, ctr) = (c.clone(), ctr.clone());
            tokio::spawn(async move {
                append_with(
                    &c,
                    &ctr,
                    "log",
                    format!("[{i}]").as_bytes(),
                    &[("x-ms-blob-condition-appendpos", "4")],
                )
                .await
            })
        })
        .collect();
    let mut wins = 0;
    for h in handles {
        let r = h.await.expect("task");
        if r.status == 201 {
            wins += 1;
            assert_eq!(offset_and_count(&r), (4, 2));
        } else {
            r.assert_error(412, "AppendPositionConditionNotMet");
        }
    }
    assert_eq!(wins, 1);
    assert_eq!(content(&c, &ctr, "log").await.len(), 7);
}

/// Append Blob Seal (`comp=seal`).
async fn seal(c: &Client, container: &str, blob: &str, headers: &[(&str, &str)]) -> Response {
    let mut r = c.put(&format!("/{container}/{blob}?comp=seal"));
    for (n, v) in headers {
        r = r.header(n, v);
    }
    r.send().await
}

#[tokio::test]
async fn a_sealed_append_blob_takes_no_more_appends() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"one").await;
    let before = c.head(&format!("/{ctr}/log")).send().await;
    // An open append blob carries no x-ms-blob-sealed (the service's SDK
    // live tests read it as absent).
    assert_eq!(before.header("x-ms-blob-sealed"), None);
    server.clock.advance(std::time::Duration::from_secs(2));
    let r = seal(&c, &ctr, "log", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-ms-blob-sealed").as_deref(), Some("true"));
    // Sealing is a write: a new ETag and Last-Modified, as the service's
    // recorded answers show (the reference says otherwise).
    assert_ne!(r.header("etag"), before.header("etag"));
    let now = {
        use stowage_blobstore::Clock as _;
        httpdate::fmt_http_date(server.clock.now())
    };
    assert_eq!(r.header("last-modified"), Some(now.clone()));
    let sealed = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(sealed.header("etag"), r.header("etag"));
    assert_eq!(sealed.header("last-modified"), Some(now));
    // Again: still 200, and nothing changes.
    server.clock.advance(std::time::Duration::from_secs(2));
    let again = seal(&c, &ctr, "log", &[]).await;
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.header("etag"), r.header("etag"));
    assert_eq!(again.header("last-modified"), r.header("last-modified"));
    let r = append_with(&c, &ctr, "log", b"two", &[]).await;
    r.assert_error(409, "BlobIsSealed");
    for r in [
        c.head(&format!("/{ctr}/log")).send().await,
        c.get(&format!("/{ctr}/log")).send().await,
    ] {
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-ms-blob-sealed").as_deref(), Some("true"));
    }
    assert_eq!(content(&c, &ctr, "log").await, b"one");
    // Listed with <Sealed>true; an open append blob without <Sealed>, as
    // the service's recorded listings have it.
    create_append_blob(&c, &ctr, "open").await;
    let r = c
        .get(&format!("/{ctr}?restype=container&comp=list"))
        .send()
        .await;
    let text = r.text();
    let log = &text[text.find("<Name>log</Name>").unwrap()..];
    assert!(log.contains("<Sealed>true</Sealed>"), "{text}");
    let open = &text[text.find("<Name>open</Name>").unwrap()..];
    let open = &open[..open.find("</Blob>").unwrap()];
    assert!(open.contains("<BlobType>AppendBlob</BlobType>"), "{text}");
    assert!(!open.contains("<Sealed>"), "{text}");
    // Put Blob replaces it with an unsealed blob.
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"new").await;
    let r = c.head(&format!("/{ctr}/log")).send().await;
    assert_eq!(r.header("x-ms-blob-sealed"), None);
    // A block blob says nothing of sealing.
    c.put_blob(&ctr, "block", b"x").await;
    let r = c.head(&format!("/{ctr}/block")).send().await;
    assert_eq!(r.header("x-ms-blob-sealed"), None);
}

#[tokio::test]
async fn a_copy_keeps_the_seal_unless_x_ms_seal_blob_says_otherwise() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"one").await;
    assert_eq!(seal(&c, &ctr, "log", &[]).await.status, 200);
    create_append_blob(&c, &ctr, "open").await;
    c.put_blob(&ctr, "block", b"x").await;
    let base = &server.base;
    let copy = |from: &str, to: &str, seal_blob: Option<&str>| {
        let mut r = c.put(&format!("/{ctr}/{to}")).header(
            "x-ms-copy-source",
            &format!("{base}/{ACCOUNT}/{ctr}/{from}"),
        );
        if let Some(v) = seal_blob {
            r = r.header("x-ms-seal-blob", v);
        }
        r.send()
    };
    // (source, destination, x-ms-seal-blob, the copy's x-ms-blob-sealed):
    // as the service's SDK live tests find it, a copy of a sealed blob
    // without the header is sealed, with `false` it is open.
    let cases = [
        ("log", "plain", None, Some("true")),
        ("log", "unsealed", Some("false"), None),
        ("log", "sealed", Some("true"), Some("true")),
        ("open", "open-copy", None, None),
        ("open", "sealed-open-copy", Some("true"), Some("true")),
        ("block", "block-copy", Some("true"), None),
    ];
    for (from, to, seal_blob, want) in cases {
        let r = copy(from, to, seal_blob).await;
        assert_eq!(r.status, 202, "{to}: {}", r.text());
        let r = c.head(&format!("/{ctr}/{to}")).send().await;
        assert_eq!(r.header("x-ms-blob-sealed").as_deref(), want, "{to}");
    }
    for sealed in ["plain", "sealed", "sealed-open-copy"] {
        append_with(&c, &ctr, sealed, b"two", &[])
            .await
            .assert_error(409, "BlobIsSealed");
    }
    for open in ["unsealed", "open-copy"] {
        let r = append_with(&c, &ctr, open, b"two", &[]).await;
        assert_eq!(r.status, 201, "{open}: {}", r.text());
    }
}

#[tokio::test]
async fn seal_answers_missing_wrong_type_conditions_and_leases() {
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    seal(&c, &ctr, "none", &[])
        .await
        .assert_error(404, "BlobNotFound");
    c.put_blob(&ctr, "block", b"data").await;
    seal(&c, &ctr, "block", &[])
        .await
        .assert_error(409, "InvalidBlobType");
    create_append_blob(&c, &ctr, "log").await;
    append(&c, &ctr, "log", b"abc").await;
    seal(&c, &ctr, "log", &[("if-match", "\"0x1\"")])
        .await
        .assert_error(412, "ConditionNotMet");
    seal(&c, &ctr, "log", &[("x-ms-blob-condition-appendpos", "2")])
        .await
        .assert_error(412, "AppendPositionConditionNotMet");
    acquire_lease(&c, &format!("/{ctr}/log"), LEASE_A, -1).await;
    seal(&c, &ctr, "log", &[])
        .await
        .assert_error(412, "LeaseIdMissing");
    seal(&c, &ctr, "log", &[("x-ms-lease-id", LEASE_B)])
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
    // Nothing above sealed it.
    assert_eq!(
        append_with(&c, &ctr, "log", b"d", &[("x-ms-lease-id", LEASE_A)])
            .await
            .status,
        201
    );
    let r = seal(
        &c,
        &ctr,
        "log",
        &[
            ("x-ms-lease-id", LEASE_A),
            ("x-ms-blob-condition-appendpos", "4"),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
}
