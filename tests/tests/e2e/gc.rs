//! Garbage collection of extents (docs/architecture.md#garbage-and-read-pins,
//! docs/wire/blobs.md#put-block uncommitted block lifetime; issue 5): storage returns to empty after
//! everything is deleted, stale uncommitted blocks are collected, and a GET
//! that is still streaming keeps the bytes it started on.

use std::time::Duration;

use futures::StreamExt as _;
use stowage_blobstore::Clock as _;
use stowage_tests::{ACCOUNT, Client, KEY, TestServer, shared_key_signature, string_to_sign};
use stowage_tests::{client_version, unique};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::blocks::{blob_entries, block_id, commit, data, extent_files, list, stage};

/// Past the collector's 30 s grace period.
const PAST_GRACE: Duration = Duration::from_secs(31);

/// Runs the collector until a pass deletes nothing; returns the total.
async fn collect_all(server: &TestServer) -> usize {
    let mut total = 0;
    loop {
        let n = server
            .store
            .collect_garbage()
            .await
            .expect("collect garbage");
        if n == 0 {
            return total;
        }
        total += n;
    }
}

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("gc");
    c.create_container(&name).await;
    (c, name)
}

async fn expect_status(r: stowage_tests::Response, status: u16, what: &str) {
    assert_eq!(r.status, status, "{what}: {}", r.text());
}

/// What blob `i` of the thousand is made of, by `i % 20`: eight kinds of
/// history, and plain blobs for the rest.
async fn build_blob(c: &Client, ctr: &str, base: &str, i: usize) {
    let name = format!("blob-{i:04}");
    let path = format!("/{ctr}/{name}");
    let body = |v: usize| format!("blob {i} version {v} {}", "x".repeat(i % 37)).into_bytes();
    match i % 20 {
        // A snapshot, then an overwrite: base and snapshot hold different
        // extents.
        0 => {
            c.put_blob(ctr, &name, &body(1)).await;
            let r = c.put(&format!("{path}?comp=snapshot")).send().await;
            expect_status(r, 201, "snapshot").await;
            c.put_blob(ctr, &name, &body(2)).await;
        }
        // Two snapshots sharing the base's extent, one with metadata.
        1 => {
            c.put_blob(ctr, &name, &body(1)).await;
            let r = c.put(&format!("{path}?comp=snapshot")).send().await;
            expect_status(r, 201, "snapshot").await;
            let r = c
                .put(&format!("{path}?comp=snapshot"))
                .header("x-ms-meta-n", "2")
                .send()
                .await;
            expect_status(r, 201, "snapshot").await;
        }
        // Committed from blocks, with one more block left uncommitted.
        2 => {
            stage(c, ctr, &name, &block_id(1), &body(1)).await;
            stage(c, ctr, &name, &block_id(2), &body(2)).await;
            commit(
                c,
                ctr,
                &name,
                &[("Latest", &block_id(2)), ("Latest", &block_id(1))],
            )
            .await;
            stage(c, ctr, &name, &block_id(3), &body(3)).await;
        }
        // Only uncommitted blocks.
        3 => {
            stage(c, ctr, &name, &block_id(1), &body(1)).await;
            stage(c, ctr, &name, &block_id(2), &body(2)).await;
        }
        // An append blob appended to three times.
        4 => {
            let r = c
                .put(&path)
                .header("x-ms-blob-type", "AppendBlob")
                .send()
                .await;
            expect_status(r, 201, "create append blob").await;
            for v in 0..3 {
                let r = c
                    .put(&format!("{path}?comp=appendblock"))
                    .body(body(v))
                    .send()
                    .await;
                expect_status(r, 201, "append block").await;
            }
        }
        // A committed blob with a staged block replaced by a second stage.
        5 => {
            c.put_blob(ctr, &name, &body(1)).await;
            stage(c, ctr, &name, &block_id(1), &body(2)).await;
            stage(c, ctr, &name, &block_id(1), &body(3)).await;
        }
        // Overwritten twice.
        6 => {
            for v in 0..3 {
                c.put_blob(ctr, &name, &body(v)).await;
            }
        }
        // A copy of another blob of this test.
        7 => {
            c.put_blob(ctr, &name, &body(1)).await;
            let source = format!("{base}/{ACCOUNT}/{ctr}/{name}");
            let r = c
                .put(&format!("{path}-copy"))
                .header("x-ms-copy-source", &source)
                .send()
                .await;
            expect_status(r, 202, "copy").await;
        }
        _ => {
            c.put_blob(ctr, &name, &body(1)).await;
        }
    }
}

/// Deletes blob `i` and everything that came with it.
async fn delete_blob(c: &Client, ctr: &str, i: usize) {
    let path = format!("/{ctr}/blob-{i:04}");
    let mut request = c.delete(&path);
    if i % 20 <= 1 {
        request = request.header("x-ms-delete-snapshots", "include");
    }
    expect_status(request.send().await, 202, "delete").await;
    if i % 20 == 7 {
        let r = c.delete(&format!("{path}-copy")).send().await;
        expect_status(r, 202, "delete copy").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_deleting_a_thousand_blobs_and_collecting_the_extent_directory_is_empty() {
    const BLOBS: usize = 1000;
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    assert!(
        extent_files(&server).is_empty(),
        "a fresh server has no extents"
    );

    futures::stream::iter(0..BLOBS)
        .map(|i| {
            let (c, ctr, base) = (c.clone(), ctr.clone(), server.base.clone());
            async move { build_blob(&c, &ctr, &base, i).await }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let listed = list(
        &c,
        &ctr,
        "&include=snapshots,uncommittedblobs&maxresults=5000",
    )
    .await;
    // 1000 names, 50 copies, 50 + 100 snapshots.
    assert_eq!(blob_entries(&listed).len(), BLOBS + 50 + 150);
    let before = extent_files(&server).len();
    assert!(before > BLOBS, "{before} extent files");

    futures::stream::iter(0..BLOBS)
        .map(|i| {
            let (c, ctr) = (c.clone(), ctr.clone());
            async move { delete_blob(&c, &ctr, i).await }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let listed = list(&c, &ctr, "&include=snapshots,uncommittedblobs,copy").await;
    assert!(listed.contains("<Blobs />"), "{listed}");

    // Within the grace period nothing is deleted.
    assert_eq!(collect_all(&server).await, 0);
    assert_eq!(extent_files(&server).len(), before);

    server.clock.advance(PAST_GRACE);
    let collected = collect_all(&server).await;
    let left = extent_files(&server);
    assert!(
        left.is_empty(),
        "{} extent files left: {left:?}",
        left.len()
    );
    assert_eq!(collected, before, "every extent was collected once");
}

#[tokio::test]
async fn uncommitted_blocks_left_alone_for_seven_days_are_collected() {
    const DAY: Duration = Duration::from_secs(24 * 3600);
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    // Only uncommitted blocks.
    stage(&c, &ctr, "lonely", &block_id(1), b"one").await;
    stage(&c, &ctr, "lonely", &block_id(2), b"two").await;
    // A committed blob with one uncommitted block.
    c.put_blob(&ctr, "kept", b"committed").await;
    stage(&c, &ctr, "kept", &block_id(1), b"staged").await;
    // Uncommitted blocks whose blob sees another Put Block on day 6.
    stage(&c, &ctr, "refreshed", &block_id(1), b"early").await;
    assert_eq!(extent_files(&server).len(), 5);

    server.clock.advance(6 * DAY);
    collect_all(&server).await;
    let names = |xml: String| -> Vec<String> {
        blob_entries(&xml).into_iter().map(|(n, _, _)| n).collect()
    };
    assert_eq!(
        names(list(&c, &ctr, "&include=uncommittedblobs").await),
        ["kept", "lonely", "refreshed"]
    );
    stage(&c, &ctr, "refreshed", &block_id(2), b"late").await;

    server.clock.advance(DAY + Duration::from_secs(1));
    collect_all(&server).await;
    assert_eq!(
        names(list(&c, &ctr, "&include=uncommittedblobs").await),
        ["kept", "refreshed"]
    );
    c.get(&format!("/{ctr}/lonely?comp=blocklist&blocklisttype=all"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let kept = c
        .get(&format!(
            "/{ctr}/kept?comp=blocklist&blocklisttype=uncommitted"
        ))
        .send()
        .await;
    assert_eq!(kept.status, 200);
    assert!(
        kept.text().contains("<UncommittedBlocks />"),
        "{}",
        kept.text()
    );
    let r = c.get(&format!("/{ctr}/kept")).send().await;
    assert_eq!(&r.body[..], b"committed");
    let refreshed = c
        .get(&format!(
            "/{ctr}/refreshed?comp=blocklist&blocklisttype=uncommitted"
        ))
        .send()
        .await;
    assert_eq!(
        super::blocks::elements(&refreshed.text(), "Name"),
        [block_id(1), block_id(2)]
    );

    // Their extents go after the grace period: left are the committed blob
    // and the two blocks of "refreshed".
    server.clock.advance(PAST_GRACE);
    assert_eq!(collect_all(&server).await, 3);
    assert_eq!(extent_files(&server).len(), 3);
    // The name can be used again.
    stage(&c, &ctr, "lonely", &block_id(1), b"again").await;
}

// ---------------------------------------------------------------------------
// A GET that keeps streaming

/// A signed GET on its own keep-alive TCP connection, so the test decides
/// when each part of the body is read, and can send a second request on the
/// same connection once the first response is complete.
struct RawConnection {
    stream: TcpStream,
    /// Bytes read past the response head.
    pending: Vec<u8>,
}

impl RawConnection {
    /// Connects with a small receive buffer, so that the kernel cannot take
    /// in much of a response the test is not reading yet.
    async fn open(server: &TestServer) -> RawConnection {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .set_recv_buffer_size(64 * 1024)
            .expect("receive buffer size");
        let stream = socket.connect(server.addr()).await.expect("connect");
        RawConnection {
            stream,
            pending: Vec::new(),
        }
    }

    /// Sends a signed GET of `path` (`/container/blob`), reads the response
    /// head and returns (status, Content-Length).
    async fn get(&mut self, server: &TestServer, path: &str) -> (u16, u64) {
        let target = format!("/{ACCOUNT}{path}");
        let headers = vec![
            (
                "x-ms-date".to_owned(),
                httpdate::fmt_http_date(server.clock.now()),
            ),
            ("x-ms-version".to_owned(), client_version().to_owned()),
        ];
        let signature = shared_key_signature(KEY, &string_to_sign("GET", &target, &headers));
        let mut request = format!("GET {target} HTTP/1.1\r\nHost: {}\r\n", server.addr());
        for (n, v) in &headers {
            request.push_str(&format!("{n}: {v}\r\n"));
        }
        request.push_str(&format!(
            "Authorization: SharedKey {ACCOUNT}:{signature}\r\n\r\n"
        ));
        self.stream
            .write_all(request.as_bytes())
            .await
            .expect("write request");
        let head_end = loop {
            if let Some(i) = self.pending.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let mut buf = [0u8; 4096];
            let n = self.stream.read(&mut buf).await.expect("read head");
            assert!(n > 0, "connection closed before the response head");
            self.pending.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&self.pending[..head_end]).into_owned();
        self.pending.drain(..head_end + 4);
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status code");
        let header = |name: &str| {
            head.lines().skip(1).find_map(|line| {
                let (n, v) = line.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
        };
        assert_eq!(header("transfer-encoding"), None, "{head}");
        let length = header("content-length")
            .and_then(|v| v.parse().ok())
            .expect("Content-Length");
        (status, length)
    }

    /// Reads exactly `n` body bytes.
    async fn read_body(&mut self, n: usize) -> Vec<u8> {
        while self.pending.len() < n {
            let mut buf = vec![0u8; 256 * 1024];
            let got = self.stream.read(&mut buf).await.expect("read body");
            assert!(got > 0, "connection closed mid-body");
            self.pending.extend_from_slice(&buf[..got]);
        }
        self.pending.drain(..n).collect()
    }
}

#[tokio::test]
async fn a_get_streaming_a_blob_returns_the_original_bytes_through_overwrite_delete_and_collection()
{
    const BLOCK: usize = 4 * 1024 * 1024;
    const BLOCKS: u32 = 6;
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    // Several extents: later ones are opened only when the reader gets there.
    let mut original = Vec::with_capacity(BLOCK * BLOCKS as usize);
    for i in 0..BLOCKS {
        let part = data(BLOCK, u64::from(i) + 1000);
        stage(&c, &ctr, "big", &block_id(i), &part).await;
        original.extend_from_slice(&part);
    }
    let ids: Vec<String> = (0..BLOCKS).map(block_id).collect();
    let entries: Vec<(&str, &str)> = ids.iter().map(|id| ("Latest", id.as_str())).collect();
    commit(&c, &ctr, "big", &entries).await;
    assert_eq!(extent_files(&server).len(), BLOCKS as usize);

    let mut reader = RawConnection::open(&server).await;
    let (status, length) = reader.get(&server, &format!("/{ctr}/big")).await;
    assert_eq!(status, 200);
    assert_eq!(length, original.len() as u64);
    // The first part only; the server is left with most of the body to send.
    let first = reader.read_body(64 * 1024).await;

    // Overwrite, delete and collect while the reader waits.
    c.put_blob(&ctr, "big", b"replacement").await;
    let r = c.delete(&format!("/{ctr}/big")).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    c.get(&format!("/{ctr}/big"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    server.clock.advance(PAST_GRACE);
    collect_all(&server).await;
    // The replacement is gone; what is left are extents of the original that
    // the reader still holds. (Of 24 MiB only the send buffer and 64 KiB of
    // receive buffer can be in flight, so the last extents are not open yet.)
    let pinned = extent_files(&server);
    assert!(
        !pinned.is_empty() && pinned.len() <= BLOCKS as usize,
        "{pinned:?}"
    );

    let rest = reader.read_body(original.len() - first.len()).await;
    let mut got = first;
    got.extend_from_slice(&rest);
    assert_eq!(got.len(), original.len());
    assert!(
        got == original,
        "the streamed bytes differ from the original"
    );

    // A second request on the same connection is answered only after the
    // first response is finished, so its extents are no longer pinned: now
    // they are collected and the directory is empty.
    let (status, _) = reader
        .get(&server, &format!("/{ctr}?restype=container"))
        .await;
    assert_eq!(status, 200);
    server.clock.advance(PAST_GRACE);
    collect_all(&server).await;
    let left = extent_files(&server);
    assert!(left.is_empty(), "{left:?}");
    // The blob name is free again.
    c.put_blob(&ctr, "big", b"new").await;
    let listed = list(&c, &ctr, "").await;
    assert_eq!(blob_entries(&listed).len(), 1);
}

// ---------------------------------------------------------------------------
// Keeping up with overwrites (issue 16, finding 1)

/// The metadata database's size in bytes, as committed (pages times page
/// size, read on a connection of its own); `None` in cluster mode, where
/// the metadata is in PostgreSQL, whose space its autovacuum manages.
fn database_bytes(server: &TestServer) -> Option<u64> {
    let file = server.data_dir().join("metadata.sqlite");
    if !file.exists() {
        return None;
    }
    let db =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("metadata database");
    let pages: i64 = db
        .pragma_query_value(None, "page_count", |r| r.get(0))
        .expect("page count");
    let size: i64 = db
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .expect("page size");
    Some((pages * size) as u64)
}

/// Writes blobs `b0`..`b{blobs-1}` at once, with the bodies of `round`.
async fn overwrite_all(c: &Client, ctr: &str, blobs: usize, round: usize, size: usize) {
    futures::stream::iter(0..blobs)
        .map(|b| {
            let body = data(size, (round * blobs + b) as u64);
            async move { c.put_blob(ctr, &format!("b{b}"), &body).await }
        })
        .buffer_unordered(blobs)
        .collect::<Vec<_>>()
        .await;
}

/// Thousands of overwrites, both kinds of extent (inline bytes in the
/// database and files): one pass collects every one of them once the grace
/// period is over (there used to be a cap of 1,000 per pass, every 10 s,
/// far below the rate at which a server accepts overwrites), and the
/// metadata file gives back the pages the inline ones held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_pass_collects_every_overwritten_version_and_the_database_shrinks() {
    const BLOBS: usize = 16;
    const SMALL_ROUNDS: usize = 160;
    const LARGE_ROUNDS: usize = 4;
    let server = TestServer::start().await;
    let (c, ctr) = setup(&server).await;
    let empty = database_bytes(&server);
    // 8 KiB bodies are kept in the database, 70 KiB ones in files.
    for round in 0..SMALL_ROUNDS {
        overwrite_all(&c, &ctr, BLOBS, round, 8 * 1024).await;
    }
    for round in 0..LARGE_ROUNDS {
        overwrite_all(&c, &ctr, BLOBS, SMALL_ROUNDS + round, 70 * 1024).await;
    }
    let grown = database_bytes(&server);
    if let (Some(empty), Some(grown)) = (empty, grown) {
        assert!(
            grown > empty + (BLOBS * SMALL_ROUNDS * 8 * 1024) as u64 / 2,
            "{empty} -> {grown}"
        );
    }
    // Every version is still there (inline ones in the database); live is
    // the last version of each blob, a file each.
    let garbage = BLOBS * (SMALL_ROUNDS + LARGE_ROUNDS - 1);
    assert_eq!(extent_files(&server).len(), garbage + BLOBS);

    // Within the grace period nothing goes.
    assert_eq!(server.store.collect_garbage().await.expect("collect"), 0);
    server.clock.advance(PAST_GRACE);
    let collected = server.store.collect_garbage().await.expect("collect");
    assert_eq!(collected, garbage, "one pass collects everything due");
    assert_eq!(server.store.collect_garbage().await.expect("collect"), 0);
    assert_eq!(extent_files(&server).len(), BLOBS);

    // SQLite gives the inline extents' pages back (incremental vacuum);
    // on PostgreSQL (cluster mode) that is autovacuum's business, and the
    // collected rows are gone (`extent_files` counts them).
    if let (Some(empty), Some(grown), Some(after)) = (empty, grown, database_bytes(&server)) {
        assert!(
            after < empty + (grown - empty) / 10,
            "the database gave its pages back: {empty} -> {grown} -> {after}"
        );
    }
    for b in 0..BLOBS {
        let r = c.get(&format!("/{ctr}/b{b}")).send().await;
        assert_eq!(r.status, 200);
        let expected = data(
            70 * 1024,
            ((SMALL_ROUNDS + LARGE_ROUNDS - 1) * BLOBS + b) as u64,
        );
        assert!(
            r.body[..] == expected[..],
            "blob b{b} kept its last version"
        );
    }
}
