//! End-to-end tests of conditional requests (docs/wire/conditions.md) on every
//! operation that evaluates them (docs/wire/conditions.md#which-operations-evaluate-which-headers): Put Blob, Get Blob,
//! Get Blob Properties (HEAD), Get Blob Metadata, Set Blob Properties, Set
//! Blob Metadata, Delete Blob, Lease Blob, and the date conditions of Set
//! Container Metadata, Delete Container and Lease Container.
//!
//! Every refused write is followed by a read-back that shows nothing changed.
//! Dates are driven through the server's manual clock; nothing sleeps.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use stowage_blobstore::Clock as _;
use stowage_tests::{Client, Request, Response, TestServer, unique};

// ---------------------------------------------------------------------------
// Fixture and helpers
// ---------------------------------------------------------------------------

/// The instant every test server's clock starts at:
/// Tue, 03 Sep 2024 10:15:07 GMT.
fn epoch() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_725_358_507)
}

/// An HTTP date (RFC 1123) `offset` seconds away from `t`.
fn date(t: SystemTime, offset: i64) -> String {
    let t = if offset >= 0 {
        t + Duration::from_secs(offset.unsigned_abs())
    } else {
        t - Duration::from_secs(offset.unsigned_abs())
    };
    httpdate::fmt_http_date(t)
}

/// Adds each `(name, value)` header to `req`.
fn with(mut req: Request, headers: &[(&str, String)]) -> Request {
    for (name, value) in headers {
        req = req.header(name, value);
    }
    req
}

/// An ETag no resource of these tests ever has.
const UNKNOWN_ETAG: &str = "\"0x0000000000000001\"";

/// The content every blob fixture ends up with, and what Put Blob writes.
const CURRENT_CONTENT: &[u8] = b"current content";
const NEW_CONTENT: &[u8] = b"new content";

/// One server, one client, one container.
struct Fixture {
    server: TestServer,
    c: Client,
    container: String,
}

/// A blob written twice, ten seconds apart: `stale` is the ETag of the first
/// version, `current` of the second; `last_modified` is the instant of the
/// second write (a whole second, as the clock only moves in whole seconds
/// unless a test sets it).
struct Blob {
    path: String,
    stale: String,
    current: String,
    last_modified: SystemTime,
}

impl Fixture {
    async fn new(prefix: &str) -> Fixture {
        let server = TestServer::start().await;
        let c = server.client();
        let container = unique(prefix);
        c.create_container(&container).await;
        Fixture {
            server,
            c,
            container,
        }
    }

    fn now(&self) -> SystemTime {
        self.server.clock.now()
    }

    fn advance(&self, secs: u64) {
        self.server.clock.advance(Duration::from_secs(secs));
    }

    fn path(&self, blob: &str) -> String {
        format!("/{}/{blob}", self.container)
    }

    async fn blob(&self, name: &str) -> Blob {
        self.advance(10);
        let stale = self.c.put_blob(&self.container, name, b"old content").await;
        self.advance(10);
        let current = self
            .c
            .put_blob(&self.container, name, CURRENT_CONTENT)
            .await;
        assert_ne!(stale.etag(), current.etag());
        Blob {
            path: self.path(name),
            stale: stale.etag(),
            current: current.etag(),
            last_modified: self.now(),
        }
    }

    /// The container's ETag and Last-Modified (Get Container Properties).
    async fn container_version(&self) -> (String, String) {
        let r = self
            .c
            .head(&format!("/{}?restype=container", self.container))
            .send()
            .await;
        assert_eq!(r.status, 200);
        (r.etag(), r.header("last-modified").expect("Last-Modified"))
    }
}

/// What a Get Blob shows of a blob: enough to tell whether any write of these
/// tests took effect.
#[derive(Debug, PartialEq)]
struct Observed {
    status: u16,
    etag: Option<String>,
    last_modified: Option<String>,
    content_type: Option<String>,
    meta_state: Option<String>,
    lease_state: Option<String>,
    body: Bytes,
}

async fn observe(c: &Client, path: &str) -> Observed {
    let r = c.get(path).send().await;
    Observed {
        status: r.status,
        etag: r.header("etag"),
        last_modified: r.header("last-modified"),
        content_type: r.header("content-type"),
        meta_state: r.header("x-ms-meta-state"),
        lease_state: r.header("x-ms-lease-state"),
        body: if r.status == 200 {
            r.body.clone()
        } else {
            Bytes::new()
        },
    }
}

/// The blob operations that evaluate conditions as writes (docs/wire/conditions.md#writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    PutBlob,
    SetBlobProperties,
    SetBlobMetadata,
    DeleteBlob,
    AcquireLease,
}

const WRITES: [Write; 5] = [
    Write::PutBlob,
    Write::SetBlobProperties,
    Write::SetBlobMetadata,
    Write::DeleteBlob,
    Write::AcquireLease,
];

impl Write {
    fn request(self, c: &Client, path: &str) -> Request {
        match self {
            Write::PutBlob => c
                .put(path)
                .header("x-ms-blob-type", "BlockBlob")
                .body(NEW_CONTENT),
            Write::SetBlobProperties => c
                .put(&format!("{path}?comp=properties"))
                .header("x-ms-blob-content-type", "text/new"),
            Write::SetBlobMetadata => c
                .put(&format!("{path}?comp=metadata"))
                .header("x-ms-meta-state", "new"),
            Write::DeleteBlob => c.delete(path),
            Write::AcquireLease => c
                .put(&format!("{path}?comp=lease"))
                .header("x-ms-lease-action", "acquire")
                .header("x-ms-lease-duration", "-1"),
        }
    }

    fn success(self) -> u16 {
        match self {
            Write::PutBlob | Write::AcquireLease => 201,
            Write::SetBlobProperties | Write::SetBlobMetadata => 200,
            Write::DeleteBlob => 202,
        }
    }

    async fn send(self, c: &Client, path: &str, headers: &[(&str, String)]) -> Response {
        with(self.request(c, path), headers).send().await
    }
}

/// Asserts that `op` answered success and that its effect is visible, with a
/// new ETag for the writes that change the blob and the old one for a lease.
async fn assert_applied(op: Write, c: &Client, path: &str, before: &Observed, r: &Response) {
    assert_eq!(r.status, op.success(), "{op:?}: {}", r.text());
    let after = observe(c, path).await;
    match op {
        Write::DeleteBlob => {
            assert_eq!(after.status, 404, "{op:?}: the blob is gone");
            return;
        }
        Write::AcquireLease => {
            assert_eq!(after.lease_state.as_deref(), Some("leased"));
            assert_eq!(
                (after.etag, after.last_modified),
                (before.etag.clone(), before.last_modified.clone()),
                "a lease action keeps ETag and Last-Modified"
            );
            return;
        }
        Write::PutBlob => assert_eq!(&after.body[..], NEW_CONTENT),
        Write::SetBlobProperties => assert_eq!(after.content_type.as_deref(), Some("text/new")),
        Write::SetBlobMetadata => assert_eq!(after.meta_state.as_deref(), Some("new")),
    }
    assert_ne!(after.etag, before.etag, "{op:?}: a write gives a new ETag");
    assert_eq!(after.etag, r.header("etag"), "{op:?}: response ETag");
}

/// Asserts that `op` was refused with `status` / `code` and left the blob as
/// `before`.
async fn assert_refused(
    op: Write,
    c: &Client,
    path: &str,
    before: &Observed,
    r: &Response,
    (status, code): (u16, &str),
) {
    assert_eq!(
        (r.status, r.code().as_deref()),
        (status, Some(code)),
        "{op:?}: {}",
        r.text()
    );
    r.assert_error(status, code);
    assert_eq!(
        &observe(c, path).await,
        before,
        "{op:?}: a refused write changes nothing"
    );
}

/// The blob operations that evaluate conditions as reads (docs/wire/conditions.md#reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// Get Blob.
    Blob,
    /// Get Blob Properties (HEAD).
    Properties,
    /// Get Blob Metadata.
    Metadata,
}

const READS: [Read; 3] = [Read::Blob, Read::Properties, Read::Metadata];

impl Read {
    fn request(self, c: &Client, path: &str) -> Request {
        match self {
            Read::Blob => c.get(path),
            Read::Properties => c.head(path),
            Read::Metadata => c.get(&format!("{path}?comp=metadata")),
        }
    }

    async fn send(self, c: &Client, path: &str, headers: &[(&str, String)]) -> Response {
        with(self.request(c, path), headers).send().await
    }
}

/// Asserts a read outcome: 200 (with the content for Get Blob), 304 (no body,
/// `x-ms-error-code: ConditionNotMet`), or 412 `ConditionNotMet`.
fn assert_read(op: Read, r: &Response, expected: u16, case: &str) {
    assert_eq!(r.status, expected, "{op:?} {case}: {}", r.text());
    match expected {
        200 => {
            if op == Read::Blob {
                assert_eq!(&r.body[..], CURRENT_CONTENT, "{op:?} {case}");
            }
        }
        304 => {
            assert_not_modified(r);
        }
        _ => r.assert_error(expected, "ConditionNotMet"),
    }
}

/// 304: no body, and the error code header (docs/wire/conditions.md#reads).
fn assert_not_modified(r: &Response) {
    r.assert_error(304, "ConditionNotMet");
    assert!(r.body.is_empty(), "a 304 has no body: {:?}", r.body);
}

// ---------------------------------------------------------------------------
// Put Blob (B1)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn put_blob_with_stale_if_match_is_412_and_keeps_the_old_content() {
    let f = Fixture::new("cond-put").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    assert_eq!(&before.body[..], CURRENT_CONTENT);
    let r = Write::PutBlob
        .send(&f.c, &b.path, &[("if-match", b.stale.clone())])
        .await;
    assert_refused(
        Write::PutBlob,
        &f.c,
        &b.path,
        &before,
        &r,
        (412, "ConditionNotMet"),
    )
    .await;
}

#[tokio::test]
async fn put_blob_with_current_if_match_replaces_the_content_with_a_new_etag() {
    let f = Fixture::new("cond-put").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    let r = Write::PutBlob
        .send(&f.c, &b.path, &[("if-match", b.current.clone())])
        .await;
    assert_applied(Write::PutBlob, &f.c, &b.path, &before, &r).await;
    // The old current ETag is now stale.
    let again = Write::PutBlob
        .send(&f.c, &b.path, &[("if-match", b.current.clone())])
        .await;
    again.assert_error(412, "ConditionNotMet");
}

#[tokio::test]
async fn put_blob_with_if_match_star_replaces_an_existing_blob() {
    let f = Fixture::new("cond-put").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    let r = Write::PutBlob
        .send(&f.c, &b.path, &[("if-match", "*".into())])
        .await;
    assert_applied(Write::PutBlob, &f.c, &b.path, &before, &r).await;
}

#[tokio::test]
async fn put_blob_with_if_match_on_a_missing_blob_is_412_and_creates_nothing() {
    let f = Fixture::new("cond-put").await;
    let path = f.path("missing");
    for value in ["*", UNKNOWN_ETAG] {
        let r = Write::PutBlob
            .send(&f.c, &path, &[("if-match", value.into())])
            .await;
        r.assert_error(412, "ConditionNotMet");
        let after = f.c.get(&path).send().await;
        after.assert_error(404, "BlobNotFound");
    }
}

#[tokio::test]
async fn put_blob_with_if_none_match_star_creates_a_missing_blob() {
    let f = Fixture::new("cond-put").await;
    let path = f.path("fresh");
    let r = Write::PutBlob
        .send(&f.c, &path, &[("if-none-match", "*".into())])
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let after = observe(&f.c, &path).await;
    assert_eq!(&after.body[..], NEW_CONTENT);
    assert_eq!(after.etag, r.header("etag"));
}

#[tokio::test]
async fn put_blob_with_if_none_match_star_on_an_existing_blob_is_409_blob_already_exists() {
    let f = Fixture::new("cond-put").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    let r = Write::PutBlob
        .send(&f.c, &b.path, &[("if-none-match", "*".into())])
        .await;
    assert_refused(
        Write::PutBlob,
        &f.c,
        &b.path,
        &before,
        &r,
        (409, "BlobAlreadyExists"),
    )
    .await;
}

#[tokio::test]
async fn put_blob_with_if_none_match_of_the_current_etag_is_412_and_of_a_stale_one_succeeds() {
    let f = Fixture::new("cond-put").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    let r = Write::PutBlob
        .send(&f.c, &b.path, &[("if-none-match", b.current.clone())])
        .await;
    assert_refused(
        Write::PutBlob,
        &f.c,
        &b.path,
        &before,
        &r,
        (412, "ConditionNotMet"),
    )
    .await;
    let r = Write::PutBlob
        .send(&f.c, &b.path, &[("if-none-match", b.stale.clone())])
        .await;
    assert_applied(Write::PutBlob, &f.c, &b.path, &before, &r).await;
}

#[tokio::test]
async fn put_blob_with_if_unmodified_since_in_the_past_is_412_and_keeps_the_old_content() {
    let f = Fixture::new("cond-put").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    let r = Write::PutBlob
        .send(
            &f.c,
            &b.path,
            &[("if-unmodified-since", date(b.last_modified, -1))],
        )
        .await;
    assert_refused(
        Write::PutBlob,
        &f.c,
        &b.path,
        &before,
        &r,
        (412, "ConditionNotMet"),
    )
    .await;
}

#[tokio::test]
async fn put_blob_with_date_conditions_on_a_missing_blob_creates_it() {
    // docs/wire/conditions.md#writes "target absent": both date conditions and If-None-Match hold.
    let f = Fixture::new("cond-put").await;
    let far_past = date(f.now(), -86_400);
    let rows = [
        ("if-modified-since", date(f.now(), 3600)),
        ("if-unmodified-since", far_past),
        ("if-none-match", UNKNOWN_ETAG.to_owned()),
    ];
    for (i, (name, value)) in rows.into_iter().enumerate() {
        let path = f.path(&format!("absent-{i}"));
        let r = Write::PutBlob
            .send(&f.c, &path, &[(name, value.clone())])
            .await;
        assert_eq!(r.status, 201, "{name}: {value}: {}", r.text());
    }
}

// ---------------------------------------------------------------------------
// Get Blob, Get Blob Properties, Get Blob Metadata (B2, B3, B5)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn get_head_and_get_metadata_with_stale_if_match_are_412_condition_not_met() {
    let f = Fixture::new("cond-read").await;
    let b = f.blob("blob").await;
    for op in READS {
        let r = op
            .send(&f.c, &b.path, &[("if-match", b.stale.clone())])
            .await;
        assert_read(op, &r, 412, "stale If-Match");
        if op == Read::Blob {
            assert!(
                !r.text().contains("current content"),
                "a 412 carries no blob content"
            );
        }
    }
}

#[tokio::test]
async fn get_head_and_get_metadata_with_current_if_match_or_star_succeed() {
    let f = Fixture::new("cond-read").await;
    let b = f.blob("blob").await;
    for op in READS {
        for value in [b.current.clone(), "*".to_owned()] {
            let r = op.send(&f.c, &b.path, &[("if-match", value.clone())]).await;
            assert_read(op, &r, 200, &format!("If-Match: {value}"));
            assert_eq!(r.header("etag"), Some(b.current.clone()));
        }
    }
}

#[tokio::test]
async fn get_head_and_get_metadata_with_if_none_match_star_on_an_existing_blob_are_400() {
    let f = Fixture::new("cond-read").await;
    let b = f.blob("blob").await;
    for op in READS {
        let r = op
            .send(&f.c, &b.path, &[("if-none-match", "*".into())])
            .await;
        assert_eq!(r.status, 400, "{op:?}: {}", r.text());
        r.assert_error(400, "UnsatisfiableCondition");
    }
}

#[tokio::test]
async fn get_head_and_get_metadata_with_if_none_match_current_etag_are_304_without_body() {
    let f = Fixture::new("cond-read").await;
    let b = f.blob("blob").await;
    for op in READS {
        let r = op
            .send(&f.c, &b.path, &[("if-none-match", b.current.clone())])
            .await;
        assert_read(op, &r, 304, "If-None-Match: current");
        // A stale ETag in If-None-Match: the blob has changed since, read it.
        let r = op
            .send(&f.c, &b.path, &[("if-none-match", b.stale.clone())])
            .await;
        assert_read(op, &r, 200, "If-None-Match: stale");
    }
}

#[tokio::test]
async fn get_head_and_get_metadata_with_if_modified_since_at_or_after_last_modified_are_304() {
    let f = Fixture::new("cond-read").await;
    let b = f.blob("blob").await;
    let cases = [(-3600, 200), (-1, 200), (0, 304), (1, 304), (3600, 304)];
    for op in READS {
        for (offset, expected) in cases {
            let value = date(b.last_modified, offset);
            let r = op
                .send(&f.c, &b.path, &[("if-modified-since", value.clone())])
                .await;
            assert_read(op, &r, expected, &format!("If-Modified-Since: {value}"));
        }
    }
}

#[tokio::test]
async fn get_head_and_get_metadata_with_if_unmodified_since_in_the_past_are_412() {
    let f = Fixture::new("cond-read").await;
    let b = f.blob("blob").await;
    let cases = [(-3600, 412), (-1, 412), (0, 200), (1, 200), (3600, 200)];
    for op in READS {
        for (offset, expected) in cases {
            let value = date(b.last_modified, offset);
            let r = op
                .send(&f.c, &b.path, &[("if-unmodified-since", value.clone())])
                .await;
            assert_read(op, &r, expected, &format!("If-Unmodified-Since: {value}"));
        }
    }
}

/// One cell of the decision table in docs/wire/conditions.md#reads: holds (✓), fails (✗) or absent (–).
type Cell = Option<bool>;
const Y: Cell = Some(true);
const N: Cell = Some(false);
const NA: Cell = None;

#[tokio::test]
async fn get_head_and_get_metadata_follow_the_read_decision_table() {
    // (If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since, result)
    let table: [(Cell, Cell, Cell, Cell, u16); 19] = [
        (NA, NA, NA, NA, 200),
        (Y, NA, NA, NA, 200),
        (N, NA, NA, NA, 412),
        (NA, N, NA, NA, 412),
        (NA, NA, N, NA, 304),
        (NA, NA, NA, N, 304),
        (N, NA, NA, Y, 412),
        (N, NA, NA, N, 412),
        (Y, NA, NA, N, 304),
        (NA, NA, N, Y, 200),
        (NA, NA, Y, N, 200),
        (NA, NA, N, N, 304),
        (Y, N, NA, Y, 412),
        (Y, Y, NA, N, 304),
        (Y, N, N, Y, 412),
        (Y, Y, N, Y, 200),
        (N, Y, Y, N, 412),
        (Y, Y, N, N, 304),
        (Y, Y, Y, Y, 200),
    ];
    let f = Fixture::new("cond-table").await;
    let b = f.blob("blob").await;
    let lm = b.last_modified;
    for (row, (im, ius, inm, ims, expected)) in table.into_iter().enumerate() {
        let mut headers = Vec::new();
        if let Some(holds) = im {
            let v = if holds { &b.current } else { &b.stale };
            headers.push(("if-match", v.clone()));
        }
        if let Some(holds) = ius {
            headers.push(("if-unmodified-since", date(lm, if holds { 0 } else { -1 })));
        }
        if let Some(holds) = inm {
            let v = if holds { &b.stale } else { &b.current };
            headers.push(("if-none-match", v.clone()));
        }
        if let Some(holds) = ims {
            headers.push(("if-modified-since", date(lm, if holds { -1 } else { 0 })));
        }
        for op in READS {
            let r = op.send(&f.c, &b.path, &headers).await;
            assert_read(op, &r, expected, &format!("row {row}: {headers:?}"));
        }
    }
}

#[tokio::test]
async fn get_head_and_get_metadata_match_lists_of_etags() {
    let f = Fixture::new("cond-lists").await;
    let b = f.blob("blob").await;
    let bare = |e: &str| e.trim_matches('"').to_owned();
    let lowercase = b.current.to_lowercase();
    assert_ne!(lowercase, b.current, "the ETag has hex letters");
    let cases: Vec<(&str, String, u16)> = vec![
        // If-Match: any listed tag equal to the ETag (OR).
        ("if-match", format!("{}, {}", b.stale, b.current), 200),
        ("if-match", format!("{},{}", b.current, UNKNOWN_ETAG), 200),
        ("if-match", format!("{}, {}", b.stale, UNKNOWN_ETAG), 412),
        (
            "if-match",
            format!("{}, {}", bare(&b.stale), bare(&b.current)),
            200,
        ),
        // Quotes are optional; comparison is exact and case-sensitive; no weak ETags.
        ("if-match", bare(&b.current), 200),
        ("if-match", format!("{}  ,   {}", b.stale, b.current), 200),
        ("if-match", lowercase.clone(), 412),
        ("if-match", format!("W/{}", b.current), 412),
        // If-None-Match: holds only when no listed tag equals the ETag (AND).
        ("if-none-match", format!("{}, {}", b.stale, b.current), 304),
        (
            "if-none-match",
            format!("{}, {}", b.stale, UNKNOWN_ETAG),
            200,
        ),
        ("if-none-match", bare(&b.current), 304),
        ("if-none-match", lowercase, 200),
        ("if-none-match", format!("W/{}", b.current), 200),
    ];
    for op in READS {
        for (name, value, expected) in &cases {
            let r = op.send(&f.c, &b.path, &[(*name, value.clone())]).await;
            assert_read(op, &r, *expected, &format!("{name}: {value}"));
        }
    }
}

#[tokio::test]
async fn reads_of_a_missing_blob_are_404_whatever_the_conditions() {
    let f = Fixture::new("cond-read").await;
    let path = f.path("missing");
    let cases = [
        ("if-none-match", "*".to_owned()),
        ("if-match", "*".to_owned()),
        ("if-match", UNKNOWN_ETAG.to_owned()),
        ("if-modified-since", date(f.now(), 3600)),
        ("if-unmodified-since", date(f.now(), -3600)),
    ];
    for op in READS {
        for (name, value) in &cases {
            let r = op.send(&f.c, &path, &[(*name, value.clone())]).await;
            assert_eq!(r.status, 404, "{op:?} {name}: {value}");
            r.assert_error(404, "BlobNotFound");
        }
    }
}

// ---------------------------------------------------------------------------
// Set Blob Properties (B4), Set Blob Metadata (B6), Delete Blob (B7),
// Lease Blob acquire (B11)
// ---------------------------------------------------------------------------

/// A write with one condition header against a fresh two-version blob.
async fn single_condition(
    op: Write,
    prefix: &str,
    header: &'static str,
    value: impl Fn(&Blob) -> String,
) -> (Fixture, Blob, Observed, Response) {
    let f = Fixture::new(prefix).await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    let r = op.send(&f.c, &b.path, &[(header, value(&b))]).await;
    (f, b, before, r)
}

async fn stale_if_match_is_412_and_changes_nothing(op: Write) {
    let (f, b, before, r) =
        single_condition(op, "cond-stale", "if-match", |b| b.stale.clone()).await;
    assert_refused(op, &f.c, &b.path, &before, &r, (412, "ConditionNotMet")).await;
}

async fn current_if_match_succeeds(op: Write) {
    let (f, b, before, r) =
        single_condition(op, "cond-current", "if-match", |b| b.current.clone()).await;
    assert_applied(op, &f.c, &b.path, &before, &r).await;
}

async fn if_match_star_succeeds(op: Write) {
    let (f, b, before, r) = single_condition(op, "cond-star", "if-match", |_| "*".to_owned()).await;
    assert_applied(op, &f.c, &b.path, &before, &r).await;
}

async fn if_none_match_star_is_412_and_changes_nothing(op: Write) {
    let (f, b, before, r) =
        single_condition(op, "cond-nostar", "if-none-match", |_| "*".to_owned()).await;
    assert_refused(op, &f.c, &b.path, &before, &r, (412, "ConditionNotMet")).await;
}

async fn if_unmodified_since_in_the_past_is_412_and_changes_nothing(op: Write) {
    let (f, b, before, r) = single_condition(op, "cond-ius", "if-unmodified-since", |b| {
        date(b.last_modified, -1)
    })
    .await;
    assert_refused(op, &f.c, &b.path, &before, &r, (412, "ConditionNotMet")).await;
}

#[tokio::test]
async fn set_blob_properties_with_stale_if_match_is_412_and_keeps_the_old_properties() {
    stale_if_match_is_412_and_changes_nothing(Write::SetBlobProperties).await;
}

#[tokio::test]
async fn set_blob_properties_with_current_if_match_succeeds_with_a_new_etag() {
    current_if_match_succeeds(Write::SetBlobProperties).await;
}

#[tokio::test]
async fn set_blob_properties_with_if_match_star_succeeds() {
    if_match_star_succeeds(Write::SetBlobProperties).await;
}

#[tokio::test]
async fn set_blob_properties_with_if_none_match_star_on_an_existing_blob_is_412() {
    if_none_match_star_is_412_and_changes_nothing(Write::SetBlobProperties).await;
}

#[tokio::test]
async fn set_blob_properties_with_if_unmodified_since_in_the_past_is_412() {
    if_unmodified_since_in_the_past_is_412_and_changes_nothing(Write::SetBlobProperties).await;
}

#[tokio::test]
async fn set_blob_metadata_with_stale_if_match_is_412_and_keeps_the_old_metadata() {
    stale_if_match_is_412_and_changes_nothing(Write::SetBlobMetadata).await;
}

#[tokio::test]
async fn set_blob_metadata_with_current_if_match_succeeds_with_a_new_etag() {
    current_if_match_succeeds(Write::SetBlobMetadata).await;
}

#[tokio::test]
async fn set_blob_metadata_with_if_match_star_succeeds() {
    if_match_star_succeeds(Write::SetBlobMetadata).await;
}

#[tokio::test]
async fn set_blob_metadata_with_if_none_match_star_on_an_existing_blob_is_412() {
    if_none_match_star_is_412_and_changes_nothing(Write::SetBlobMetadata).await;
}

#[tokio::test]
async fn set_blob_metadata_with_if_unmodified_since_in_the_past_is_412() {
    if_unmodified_since_in_the_past_is_412_and_changes_nothing(Write::SetBlobMetadata).await;
}

#[tokio::test]
async fn delete_blob_with_stale_if_match_is_412_and_keeps_the_blob() {
    stale_if_match_is_412_and_changes_nothing(Write::DeleteBlob).await;
}

#[tokio::test]
async fn delete_blob_with_current_if_match_deletes_it() {
    current_if_match_succeeds(Write::DeleteBlob).await;
}

#[tokio::test]
async fn delete_blob_with_if_match_star_deletes_it() {
    if_match_star_succeeds(Write::DeleteBlob).await;
}

// Delete Blob with `If-None-Match: *` on an existing blob deletes it, as
// the service does: blobs::delete_blob_with_if_none_match_star_deletes_an_existing_blob.

#[tokio::test]
async fn delete_blob_with_if_unmodified_since_in_the_past_is_412() {
    if_unmodified_since_in_the_past_is_412_and_changes_nothing(Write::DeleteBlob).await;
}

#[tokio::test]
async fn lease_blob_acquire_with_stale_if_match_is_412_and_leaves_the_blob_unleased() {
    stale_if_match_is_412_and_changes_nothing(Write::AcquireLease).await;
}

#[tokio::test]
async fn lease_blob_acquire_with_current_if_match_leases_and_keeps_the_etag() {
    current_if_match_succeeds(Write::AcquireLease).await;
}

#[tokio::test]
async fn lease_blob_acquire_with_if_match_star_leases() {
    if_match_star_succeeds(Write::AcquireLease).await;
}

#[tokio::test]
async fn lease_blob_acquire_with_if_none_match_star_on_an_existing_blob_is_412() {
    if_none_match_star_is_412_and_changes_nothing(Write::AcquireLease).await;
}

#[tokio::test]
async fn lease_blob_acquire_with_if_unmodified_since_in_the_past_is_412() {
    if_unmodified_since_in_the_past_is_412_and_changes_nothing(Write::AcquireLease).await;
}

#[tokio::test]
async fn every_write_evaluates_each_single_condition_against_the_existing_blob() {
    // docs/wire/conditions.md#writes, "target exists" column, for every write; one fresh blob per case.
    // `None` in the last column: holds; else the refusal.
    type Case = (
        &'static str,
        fn(&Blob) -> String,
        Option<(u16, &'static str)>,
    );
    const NOT_MET: Option<(u16, &str)> = Some((412, "ConditionNotMet"));
    let cases: [Case; 12] = [
        ("if-match", |b| b.current.clone(), None),
        ("if-match", |b| b.stale.clone(), NOT_MET),
        ("if-match", |_| "*".into(), None),
        ("if-none-match", |b| b.stale.clone(), None),
        ("if-none-match", |b| b.current.clone(), NOT_MET),
        ("if-modified-since", |b| date(b.last_modified, -1), None),
        ("if-modified-since", |b| date(b.last_modified, 0), NOT_MET),
        (
            "if-modified-since",
            |b| date(b.last_modified, 3600),
            NOT_MET,
        ),
        (
            "if-unmodified-since",
            |b| date(b.last_modified, -1),
            NOT_MET,
        ),
        ("if-unmodified-since", |b| date(b.last_modified, 0), None),
        ("if-unmodified-since", |b| date(b.last_modified, 3600), None),
        (
            "if-unmodified-since",
            |b| date(b.last_modified, -86_400),
            NOT_MET,
        ),
    ];
    let f = Fixture::new("cond-single").await;
    for op in WRITES {
        for (i, &(header, value, refusal)) in cases.iter().enumerate() {
            let b = f.blob(&format!("{op:?}-{i}")).await;
            let before = observe(&f.c, &b.path).await;
            let value = value(&b);
            let r = op.send(&f.c, &b.path, &[(header, value.clone())]).await;
            match refusal {
                None => assert_applied(op, &f.c, &b.path, &before, &r).await,
                Some(refusal) => assert_refused(op, &f.c, &b.path, &before, &r, refusal).await,
            }
        }
    }
}

#[tokio::test]
async fn conditional_writes_on_a_missing_blob_are_404_blob_not_found() {
    // Only Put Blob may create its target; the others answer 404 first.
    let f = Fixture::new("cond-missing").await;
    let path = f.path("missing");
    for op in WRITES.into_iter().filter(|op| *op != Write::PutBlob) {
        for (name, value) in [
            ("if-match", "*".to_owned()),
            ("if-none-match", "*".to_owned()),
            ("if-unmodified-since", date(f.now(), -3600)),
        ] {
            let r = op.send(&f.c, &path, &[(name, value.clone())]).await;
            assert_eq!(r.status, 404, "{op:?} {name}: {value}: {}", r.text());
            r.assert_error(404, "BlobNotFound");
        }
    }
}

#[tokio::test]
async fn a_write_failing_both_its_condition_and_the_lease_reports_the_condition() {
    // docs/wire/conditions.md#conditions-and-leases: conditions are checked before the lease.
    let f = Fixture::new("cond-lease").await;
    let b = f.blob("blob").await;
    let lease = "f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b";
    let r =
        f.c.put(&format!("{}?comp=lease", b.path))
            .header("x-ms-lease-action", "acquire")
            .header("x-ms-lease-duration", "-1")
            .header("x-ms-proposed-lease-id", lease)
            .send()
            .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let before = observe(&f.c, &b.path).await;
    for op in [
        Write::PutBlob,
        Write::SetBlobProperties,
        Write::SetBlobMetadata,
        Write::DeleteBlob,
    ] {
        // No lease id and a stale ETag: the condition is what is reported.
        let r = op
            .send(&f.c, &b.path, &[("if-match", b.stale.clone())])
            .await;
        assert_refused(op, &f.c, &b.path, &before, &r, (412, "ConditionNotMet")).await;
        // No lease id and the current ETag: now the lease refuses.
        let r = op
            .send(&f.c, &b.path, &[("if-match", b.current.clone())])
            .await;
        assert_refused(op, &f.c, &b.path, &before, &r, (412, "LeaseIdMissing")).await;
    }
    // Both satisfied: the write goes through.
    let r = Write::SetBlobMetadata
        .send(
            &f.c,
            &b.path,
            &[
                ("if-match", b.current.clone()),
                ("x-ms-lease-id", lease.to_owned()),
            ],
        )
        .await;
    assert_applied(Write::SetBlobMetadata, &f.c, &b.path, &before, &r).await;
}

// ---------------------------------------------------------------------------
// docs/wire/conditions.md#writes: combinations on writes
// ---------------------------------------------------------------------------

/// Condition headers computed from a blob's versions.
type HeadersFor = fn(&Blob) -> Vec<(&'static str, String)>;

#[tokio::test]
async fn writes_with_a_disallowed_combination_of_conditions_are_400_and_change_nothing() {
    // Each header on its own would hold: only the combination is refused.
    let combinations: [(&str, HeadersFor); 8] = [
        ("If-Match + If-None-Match", |b| {
            vec![
                ("if-match", b.current.clone()),
                ("if-none-match", b.stale.clone()),
            ]
        }),
        ("If-Match + If-Modified-Since", |b| {
            vec![
                ("if-match", b.current.clone()),
                ("if-modified-since", date(b.last_modified, -1)),
            ]
        }),
        ("If-None-Match + If-Unmodified-Since", |b| {
            vec![
                ("if-none-match", b.stale.clone()),
                ("if-unmodified-since", date(b.last_modified, 0)),
            ]
        }),
        ("If-Modified-Since + If-Unmodified-Since", |b| {
            vec![
                ("if-modified-since", date(b.last_modified, -1)),
                ("if-unmodified-since", date(b.last_modified, 0)),
            ]
        }),
        ("all four", |b| {
            vec![
                ("if-match", b.current.clone()),
                ("if-none-match", b.stale.clone()),
                ("if-modified-since", date(b.last_modified, -1)),
                ("if-unmodified-since", date(b.last_modified, 0)),
            ]
        }),
        ("If-Match + If-Unmodified-Since + If-Modified-Since", |b| {
            vec![
                ("if-match", b.current.clone()),
                ("if-unmodified-since", date(b.last_modified, 0)),
                ("if-modified-since", date(b.last_modified, -1)),
            ]
        }),
        ("If-Match with two ETags", |b| {
            vec![("if-match", format!("{}, {}", b.current, b.stale))]
        }),
        ("If-None-Match with two ETags", |b| {
            vec![("if-none-match", format!("{}, {}", b.stale, UNKNOWN_ETAG))]
        }),
    ];
    let f = Fixture::new("cond-combo").await;
    let b = f.blob("blob").await;
    let before = observe(&f.c, &b.path).await;
    for op in WRITES {
        for (name, headers) in &combinations {
            let r = op.send(&f.c, &b.path, &headers(&b)).await;
            assert_eq!(r.status, 400, "{op:?} {name}: {}", r.text());
            assert_refused(
                op,
                &f.c,
                &b.path,
                &before,
                &r,
                (400, "MultipleConditionHeadersNotSupported"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn writes_with_an_allowed_pair_evaluate_only_its_etag_header() {
    // If-Match + If-Unmodified-Since: only If-Match counts; If-None-Match +
    // If-Modified-Since: only If-None-Match counts (docs/wire/conditions.md#writes).
    let holds: [HeadersFor; 2] = [
        |b| {
            vec![
                ("if-match", b.current.clone()),
                ("if-unmodified-since", date(b.last_modified, -3600)),
            ]
        },
        |b| {
            vec![
                ("if-none-match", b.stale.clone()),
                ("if-modified-since", date(b.last_modified, 3600)),
            ]
        },
    ];
    let fails: [HeadersFor; 2] = [
        |b| {
            vec![
                ("if-match", b.stale.clone()),
                ("if-unmodified-since", date(b.last_modified, 3600)),
            ]
        },
        |b| {
            vec![
                ("if-none-match", b.current.clone()),
                ("if-modified-since", date(b.last_modified, -3600)),
            ]
        },
    ];
    let f = Fixture::new("cond-pair").await;
    for op in WRITES {
        for (i, headers) in holds.iter().enumerate() {
            let b = f.blob(&format!("{op:?}-holds-{i}")).await;
            let before = observe(&f.c, &b.path).await;
            let r = op.send(&f.c, &b.path, &headers(&b)).await;
            assert_applied(op, &f.c, &b.path, &before, &r).await;
        }
        for (i, headers) in fails.iter().enumerate() {
            let b = f.blob(&format!("{op:?}-fails-{i}")).await;
            let before = observe(&f.c, &b.path).await;
            let r = op.send(&f.c, &b.path, &headers(&b)).await;
            assert_refused(op, &f.c, &b.path, &before, &r, (412, "ConditionNotMet")).await;
        }
    }
}

#[tokio::test]
async fn reads_accept_any_combination_of_conditions() {
    // docs/wire/conditions.md#reads: the combinations refused on writes are evaluated on reads.
    let f = Fixture::new("cond-combo").await;
    let b = f.blob("blob").await;
    let headers = [
        ("if-match", format!("{}, {}", b.current, b.stale)),
        ("if-none-match", format!("{}, {}", b.stale, UNKNOWN_ETAG)),
        ("if-modified-since", date(b.last_modified, -1)),
        ("if-unmodified-since", date(b.last_modified, 0)),
    ];
    for op in READS {
        let r = op.send(&f.c, &b.path, &headers).await;
        assert_read(op, &r, 200, "all four, holding");
    }
}

// ---------------------------------------------------------------------------
// Dates: whole seconds, unparseable values, repeated headers
// ---------------------------------------------------------------------------

#[tokio::test]
async fn date_conditions_compare_last_modified_truncated_to_the_second() {
    // Last-Modified 10:15:07.9 against header dates 10:15:06 / 10:15:07.
    let f = Fixture::new("cond-second").await;
    f.server.clock.set(epoch() + Duration::from_millis(900));
    let put = f.c.put_blob(&f.container, "blob", CURRENT_CONTENT).await;
    assert_eq!(
        put.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT")
    );
    let path = f.path("blob");
    let at_07 = "Tue, 03 Sep 2024 10:15:07 GMT".to_owned();
    let at_06 = "Tue, 03 Sep 2024 10:15:06 GMT".to_owned();
    let reads = [
        ("if-modified-since", &at_07, 304),
        ("if-modified-since", &at_06, 200),
        ("if-unmodified-since", &at_07, 200),
        ("if-unmodified-since", &at_06, 412),
    ];
    for op in READS {
        for (name, value, expected) in reads {
            let r = op.send(&f.c, &path, &[(name, value.clone())]).await;
            assert_read(op, &r, expected, &format!("{name}: {value}"));
        }
    }
    // Writes, at the same instant (the clock has not moved).
    let before = observe(&f.c, &path).await;
    let r = Write::SetBlobMetadata
        .send(&f.c, &path, &[("if-modified-since", at_07.clone())])
        .await;
    assert_refused(
        Write::SetBlobMetadata,
        &f.c,
        &path,
        &before,
        &r,
        (412, "ConditionNotMet"),
    )
    .await;
    let r = Write::SetBlobProperties
        .send(&f.c, &path, &[("if-unmodified-since", at_06)])
        .await;
    assert_refused(
        Write::SetBlobProperties,
        &f.c,
        &path,
        &before,
        &r,
        (412, "ConditionNotMet"),
    )
    .await;
    let r = Write::SetBlobMetadata
        .send(&f.c, &path, &[("if-unmodified-since", at_07)])
        .await;
    assert_applied(Write::SetBlobMetadata, &f.c, &path, &before, &r).await;
}

#[tokio::test]
async fn container_date_conditions_compare_last_modified_truncated_to_the_second() {
    let server = TestServer::start().await;
    let c = server.client();
    server.clock.set(epoch() + Duration::from_millis(900));
    let name = unique("cond-second");
    c.create_container(&name).await;
    let at_07 = "Tue, 03 Sep 2024 10:15:07 GMT".to_owned();
    // If-Modified-Since 10:15:07 against 10:15:07.9: not modified since.
    let r = c
        .put(&format!("/{name}?restype=container&comp=metadata"))
        .header("x-ms-meta-state", "new")
        .header("if-modified-since", &at_07)
        .send()
        .await;
    r.assert_error(412, "ConditionNotMet");
    let r = c
        .delete(&format!("/{name}?restype=container"))
        .header("if-modified-since", &at_07)
        .send()
        .await;
    r.assert_error(412, "ConditionNotMet");
    // If-Unmodified-Since 10:15:07: unmodified since, so the delete proceeds.
    let r = c
        .delete(&format!("/{name}?restype=container"))
        .header("if-unmodified-since", &at_07)
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn an_unparseable_date_is_ignored_as_if_absent() {
    let f = Fixture::new("cond-baddate").await;
    let b = f.blob("blob").await;
    let garbage = [
        "not a date",
        "2024-09-03T10:15:07Z",
        "Tue, 32 Sep 2024 99:99:99 GMT",
    ];
    for value in garbage {
        for name in ["if-modified-since", "if-unmodified-since"] {
            for op in READS {
                let r = op.send(&f.c, &b.path, &[(name, value.to_owned())]).await;
                assert_read(op, &r, 200, &format!("{name}: {value}"));
            }
        }
    }
    // On writes too, and an ignored date does not count towards the rules of docs/wire/conditions.md#writes,
    // combinations: If-Match + an unparseable If-Modified-Since is If-Match.
    for op in [
        Write::SetBlobMetadata,
        Write::PutBlob,
        Write::SetBlobProperties,
    ] {
        let b = f.blob(&format!("{op:?}")).await;
        let before = observe(&f.c, &b.path).await;
        let r = op
            .send(
                &f.c,
                &b.path,
                &[
                    ("if-match", b.current.clone()),
                    ("if-modified-since", "not a date".into()),
                ],
            )
            .await;
        assert_applied(op, &f.c, &b.path, &before, &r).await;
    }
    let b = f.blob("deleted").await;
    let r = Write::DeleteBlob
        .send(
            &f.c,
            &b.path,
            &[("if-unmodified-since", "yesterday".into())],
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    // And on containers.
    let r =
        f.c.delete(&format!("/{}?restype=container", f.container))
            .header("if-unmodified-since", "not a date")
            .send()
            .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn a_repeated_date_header_is_400() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("cond-twice");
    let r = c
        .put(&format!("/{name}?restype=container"))
        .header("x-ms-blob-public-access", "container")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    c.put_blob(&name, "blob", CURRENT_CONTENT).await;
    let path = format!("/{name}/blob");
    let now = server.clock.now();
    // Anonymous reads (the container is public): the conditions' own answer.
    for header in ["if-modified-since", "if-unmodified-since"] {
        for op in READS {
            let r = op
                .request(&c, &path)
                .anonymous()
                .header(header, &date(now, -3600))
                .header(header, &date(now, 3600))
                .send()
                .await;
            assert_eq!(r.status, 400, "{op:?} {header} twice: {}", r.text());
            r.assert_error(400, "MultipleConditionHeadersNotSupported");
        }
    }
    // A signed request: the date headers are signed headers, and a signed
    // header that occurs twice is 400 InvalidHeaderValue (docs/wire/auth.md#the-string-to-sign).
    let before = observe(&c, &path).await;
    for op in WRITES {
        let r = op
            .request(&c, &path)
            .header("if-unmodified-since", &date(now, 3600))
            .header("if-unmodified-since", &date(now, 7200))
            .send()
            .await;
        assert_refused(op, &c, &path, &before, &r, (400, "InvalidHeaderValue")).await;
    }
}

#[tokio::test]
async fn a_repeated_etag_header_is_one_list() {
    // docs/wire/conditions.md#parsing-the-headers: a repeated If-Match / If-None-Match is one comma-joined list
    // (anonymous reads of a public container, so the signer plays no part).
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("cond-twice");
    let r = c
        .put(&format!("/{name}?restype=container"))
        .header("x-ms-blob-public-access", "container")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let stale = c.put_blob(&name, "blob", b"old content").await.etag();
    let current = c.put_blob(&name, "blob", CURRENT_CONTENT).await.etag();
    let path = format!("/{name}/blob");
    let cases = [
        ("if-match", [stale.clone(), current.clone()], 200),
        ("if-match", [stale.clone(), UNKNOWN_ETAG.to_owned()], 412),
        ("if-none-match", [stale.clone(), current.clone()], 304),
        (
            "if-none-match",
            [stale.clone(), UNKNOWN_ETAG.to_owned()],
            200,
        ),
    ];
    for op in READS {
        for (name, [first, second], expected) in &cases {
            let r = op
                .request(&c, &path)
                .anonymous()
                .header(name, first)
                .header(name, second)
                .send()
                .await;
            assert_read(op, &r, *expected, &format!("{name}: {first} / {second}"));
        }
    }
}

// ---------------------------------------------------------------------------
// ETag and Last-Modified bookkeeping (docs/wire/requests.md#etag-and-last-modified)
// ---------------------------------------------------------------------------

#[tokio::test]
async fn every_blob_write_gives_a_new_etag_and_a_new_last_modified() {
    let f = Fixture::new("cond-etag").await;
    let path = f.path("blob");
    let first = f.c.put_blob(&f.container, "blob", CURRENT_CONTENT).await;
    let mut seen = vec![(first.etag(), first.header("last-modified"))];
    let writes = [
        Write::SetBlobProperties,
        Write::SetBlobMetadata,
        Write::PutBlob,
        Write::SetBlobMetadata,
        Write::PutBlob,
        Write::SetBlobProperties,
    ];
    for op in writes {
        f.advance(1);
        let r = op.send(&f.c, &path, &[]).await;
        assert_eq!(r.status, op.success(), "{op:?}: {}", r.text());
        let version = (r.etag(), r.header("last-modified"));
        assert!(
            seen.iter().all(|(e, _)| *e != version.0),
            "{op:?}: new ETag {} (seen {seen:?})",
            version.0
        );
        assert_ne!(
            seen.last().map(|v| &v.1),
            Some(&version.1),
            "{op:?}: Last-Modified changes with the ETag"
        );
        let head = f.c.head(&path).send().await;
        assert_eq!(
            (head.etag(), head.header("last-modified")),
            version,
            "{op:?}: the response shows the version a read sees"
        );
        seen.push(version);
    }
}

#[tokio::test]
async fn two_writes_in_the_same_instant_get_different_etags() {
    let f = Fixture::new("cond-etag").await;
    let path = f.path("blob");
    let mut etags = vec![f.c.put_blob(&f.container, "blob", b"one").await.etag()];
    for op in [
        Write::PutBlob,
        Write::SetBlobMetadata,
        Write::SetBlobProperties,
        Write::PutBlob,
    ] {
        let r = op.send(&f.c, &path, &[]).await;
        assert_eq!(r.status, op.success(), "{op:?}: {}", r.text());
        assert!(!etags.contains(&r.etag()), "{op:?}: {etags:?}");
        etags.push(r.etag());
    }
    // The newest ETag is the one that matches; every earlier one is stale.
    let (current, older) = etags.split_last().expect("five ETags");
    let r = f.c.get(&path).header("if-match", current).send().await;
    assert_eq!(r.status, 200);
    for stale in older {
        let r = f.c.get(&path).header("if-match", stale).send().await;
        r.assert_error(412, "ConditionNotMet");
    }
}

#[tokio::test]
async fn reads_and_lease_actions_keep_the_etag_and_last_modified() {
    let f = Fixture::new("cond-etag").await;
    let b = f.blob("blob").await;
    let head = f.c.head(&b.path).send().await;
    let version = (head.etag(), head.header("last-modified"));
    assert_eq!(version.0, b.current);
    let lease = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    let other = "1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    let lease_url = format!("{}?comp=lease", b.path);
    let lease_action = |action: &str| f.c.put(&lease_url).header("x-ms-lease-action", action);
    let steps: Vec<(&str, Request, u16)> = vec![
        ("Get Blob", f.c.get(&b.path), 200),
        ("Get Blob Properties", f.c.head(&b.path), 200),
        (
            "Get Blob Metadata",
            f.c.get(&format!("{}?comp=metadata", b.path)),
            200,
        ),
        (
            "acquire",
            lease_action("acquire")
                .header("x-ms-lease-duration", "15")
                .header("x-ms-proposed-lease-id", lease),
            201,
        ),
        (
            "renew",
            lease_action("renew").header("x-ms-lease-id", lease),
            200,
        ),
        (
            "change",
            lease_action("change")
                .header("x-ms-lease-id", lease)
                .header("x-ms-proposed-lease-id", other),
            200,
        ),
        (
            "break",
            lease_action("break").header("x-ms-lease-break-period", "0"),
            202,
        ),
        (
            "acquire again",
            lease_action("acquire")
                .header("x-ms-lease-duration", "-1")
                .header("x-ms-proposed-lease-id", lease),
            201,
        ),
        (
            "release",
            lease_action("release").header("x-ms-lease-id", lease),
            200,
        ),
    ];
    for (step, req, status) in steps {
        f.advance(2);
        let r = req.send().await;
        assert_eq!(r.status, status, "{step}: {}", r.text());
        assert_eq!(
            (r.etag(), r.header("last-modified")),
            version,
            "{step}: the response carries the unchanged version"
        );
        let head = f.c.head(&b.path).send().await;
        assert_eq!(
            (head.etag(), head.header("last-modified")),
            version,
            "{step}: nothing changed the blob's version"
        );
    }
}

#[tokio::test]
async fn set_container_metadata_gives_a_new_container_etag_and_blob_writes_do_not() {
    let f = Fixture::new("cond-cetag").await;
    let (etag, last_modified) = f.container_version().await;
    f.advance(1);
    let b = f.blob("blob").await;
    let r = Write::SetBlobMetadata.send(&f.c, &b.path, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let r = Write::AcquireLease.send(&f.c, &b.path, &[]).await;
    assert_eq!(r.status, 201);
    let r =
        f.c.put(&format!("/{}?comp=lease&restype=container", f.container))
            .header("x-ms-lease-action", "acquire")
            .header("x-ms-lease-duration", "-1")
            .send()
            .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        (r.etag(), r.header("last-modified")),
        (etag.clone(), Some(last_modified.clone())),
        "Lease Container answers with the unchanged version"
    );
    assert_eq!(
        f.container_version().await,
        (etag.clone(), last_modified.clone()),
        "blob writes and leases keep the container's version"
    );
    f.advance(1);
    let r =
        f.c.put(&format!("/{}?restype=container&comp=metadata", f.container))
            .header("x-ms-meta-state", "new")
            .send()
            .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let now = f.container_version().await;
    assert_ne!(now.0, etag, "a new container ETag");
    assert_ne!(now.1, last_modified, "a new container Last-Modified");
    assert_eq!((r.etag(), r.header("last-modified")), (now.0, Some(now.1)));
}

// ---------------------------------------------------------------------------
// Containers: Set Container Metadata (C4), Delete Container (C7), Lease
// Container (C8)
// ---------------------------------------------------------------------------

async fn container_metadata(c: &Client, container: &str) -> Option<String> {
    let r = c
        .get(&format!("/{container}?restype=container&comp=metadata"))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.header("x-ms-meta-state")
}

async fn set_container_metadata(
    c: &Client,
    container: &str,
    headers: &[(&str, String)],
) -> Response {
    with(
        c.put(&format!("/{container}?restype=container&comp=metadata"))
            .header("x-ms-meta-state", "new"),
        headers,
    )
    .send()
    .await
}

#[tokio::test]
async fn set_container_metadata_with_if_modified_since_at_or_after_last_modified_is_412() {
    let f = Fixture::new("cond-cmeta").await;
    let created = f.now();
    f.advance(60);
    for offset in [0, 1, 3600] {
        let before = f.container_version().await;
        let r = set_container_metadata(
            &f.c,
            &f.container,
            &[("if-modified-since", date(created, offset))],
        )
        .await;
        r.assert_error(412, "ConditionNotMet");
        assert_eq!(container_metadata(&f.c, &f.container).await, None);
        assert_eq!(f.container_version().await, before, "nothing changed");
    }
}

#[tokio::test]
async fn set_container_metadata_with_if_modified_since_before_last_modified_succeeds() {
    let f = Fixture::new("cond-cmeta").await;
    let before = f.container_version().await;
    let created = f.now();
    f.advance(60);
    let r = set_container_metadata(
        &f.c,
        &f.container,
        &[("if-modified-since", date(created, -1))],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        container_metadata(&f.c, &f.container).await.as_deref(),
        Some("new")
    );
    let after = f.container_version().await;
    assert_ne!(after.0, before.0, "a new ETag");
    assert_eq!(r.header("etag"), Some(after.0));
}

#[tokio::test]
async fn set_container_metadata_evaluates_only_if_modified_since() {
    // docs/wire/conditions.md#which-operations-evaluate-which-headers: the other three headers are not evaluated on this operation.
    let f = Fixture::new("cond-cmeta").await;
    let created = f.now();
    let cases = [
        ("if-match", UNKNOWN_ETAG.to_owned()),
        ("if-none-match", "*".to_owned()),
        ("if-unmodified-since", date(created, -3600)),
    ];
    for (name, value) in cases {
        f.advance(1);
        let before = f.container_version().await;
        let r = set_container_metadata(&f.c, &f.container, &[(name, value.clone())]).await;
        assert_eq!(r.status, 200, "{name}: {value}: {}", r.text());
        assert_ne!(f.container_version().await.0, before.0);
    }
}

#[tokio::test]
async fn delete_container_with_if_unmodified_since_in_the_past_is_412_and_keeps_it() {
    let f = Fixture::new("cond-cdel").await;
    let created = f.now();
    // Blob writes (which move the clock on) do not change the container.
    f.blob("blob").await;
    f.advance(60);
    let url = format!("/{}?restype=container", f.container);
    for offset in [-1, -3600] {
        let r =
            f.c.delete(&url)
                .header("if-unmodified-since", &date(created, offset))
                .send()
                .await;
        r.assert_error(412, "ConditionNotMet");
        let still = f.c.get(&f.path("blob")).send().await;
        assert_eq!(still.status, 200, "the container and its blobs remain");
    }
}

#[tokio::test]
async fn delete_container_with_if_modified_since_at_or_after_last_modified_is_412() {
    let f = Fixture::new("cond-cdel").await;
    let created = f.now();
    f.advance(60);
    let url = format!("/{}?restype=container", f.container);
    for offset in [0, 1, 3600] {
        let r =
            f.c.delete(&url)
                .header("if-modified-since", &date(created, offset))
                .send()
                .await;
        r.assert_error(412, "ConditionNotMet");
        // Still there: Get Container Properties answers 200.
        f.container_version().await;
    }
}

#[tokio::test]
async fn delete_container_with_date_conditions_that_hold_deletes_it() {
    let server = TestServer::start().await;
    let c = server.client();
    let created = server.clock.now();
    let cases = [
        ("if-unmodified-since", date(created, 0)),
        ("if-unmodified-since", date(created, 3600)),
        ("if-modified-since", date(created, -1)),
    ];
    for (name, value) in cases {
        let container = unique("cond-cdel");
        c.create_container(&container).await;
        server.clock.advance(Duration::from_secs(60));
        let r = c
            .delete(&format!("/{container}?restype=container"))
            .header(name, &value)
            .send()
            .await;
        assert_eq!(r.status, 202, "{name}: {value}: {}", r.text());
        let gone = c
            .head(&format!("/{container}?restype=container"))
            .send()
            .await;
        assert_eq!(gone.status, 404);
        server.clock.set(created);
    }
}

#[tokio::test]
async fn delete_container_ignores_etag_conditions() {
    // COND2 (docs/wire/errors.md#which-check-answers-first): only the date headers are evaluated.
    let f = Fixture::new("cond-cdel").await;
    let r =
        f.c.delete(&format!("/{}?restype=container", f.container))
            .header("if-match", UNKNOWN_ETAG)
            .header("if-none-match", "*")
            .send()
            .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn delete_container_with_both_date_headers_is_400_and_keeps_it() {
    // docs/wire/conditions.md#writes: If-Modified-Since + If-Unmodified-Since is not an allowed pair.
    let f = Fixture::new("cond-cdel").await;
    let created = f.now();
    f.advance(60);
    let r =
        f.c.delete(&format!("/{}?restype=container", f.container))
            .header("if-modified-since", &date(created, -1))
            .header("if-unmodified-since", &date(created, 0))
            .send()
            .await;
    r.assert_error(400, "MultipleConditionHeadersNotSupported");
    // Still there: Get Container Properties answers 200.
    f.container_version().await;
}

#[tokio::test]
async fn container_operations_on_a_missing_container_are_404_whatever_the_conditions() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("cond-nocontainer");
    let since = date(server.clock.now(), -3600);
    let r = c
        .delete(&format!("/{name}?restype=container"))
        .header("if-modified-since", &since)
        .send()
        .await;
    r.assert_error(404, "ContainerNotFound");
    let r = set_container_metadata(&c, &name, &[("if-modified-since", since.clone())]).await;
    r.assert_error(404, "ContainerNotFound");
    let r = c
        .put(&format!("/{name}?comp=lease&restype=container"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .header("if-modified-since", &since)
        .send()
        .await;
    r.assert_error(404, "ContainerNotFound");
    let r = Write::PutBlob
        .send(
            &c,
            &format!("/{name}/blob"),
            &[("if-none-match", "*".into())],
        )
        .await;
    r.assert_error(404, "ContainerNotFound");
}

async fn acquire_container_lease(
    c: &Client,
    container: &str,
    headers: &[(&str, String)],
) -> Response {
    with(
        c.put(&format!("/{container}?comp=lease&restype=container"))
            .header("x-ms-lease-action", "acquire")
            .header("x-ms-lease-duration", "-1"),
        headers,
    )
    .send()
    .await
}

async fn container_lease_state(c: &Client, container: &str) -> Option<String> {
    let r = c
        .head(&format!("/{container}?restype=container"))
        .send()
        .await;
    assert_eq!(r.status, 200);
    r.header("x-ms-lease-state")
}

#[tokio::test]
async fn lease_container_with_if_unmodified_since_in_the_past_is_412_and_leaves_it_unleased() {
    let f = Fixture::new("cond-clease").await;
    let created = f.now();
    f.advance(60);
    let before = f.container_version().await;
    let r = acquire_container_lease(
        &f.c,
        &f.container,
        &[("if-unmodified-since", date(created, -1))],
    )
    .await;
    r.assert_error(412, "ConditionNotMet");
    assert_eq!(
        container_lease_state(&f.c, &f.container).await.as_deref(),
        Some("available")
    );
    assert_eq!(f.container_version().await, before);
}

#[tokio::test]
async fn lease_container_with_if_modified_since_at_or_after_last_modified_is_412() {
    let f = Fixture::new("cond-clease").await;
    let created = f.now();
    f.advance(60);
    let r = acquire_container_lease(
        &f.c,
        &f.container,
        &[("if-modified-since", date(created, 0))],
    )
    .await;
    r.assert_error(412, "ConditionNotMet");
    assert_eq!(
        container_lease_state(&f.c, &f.container).await.as_deref(),
        Some("available")
    );
}

#[tokio::test]
async fn lease_container_with_date_conditions_that_hold_acquires_and_keeps_the_etag() {
    let f = Fixture::new("cond-clease").await;
    let created = f.now();
    f.advance(60);
    let before = f.container_version().await;
    let r = acquire_container_lease(
        &f.c,
        &f.container,
        &[("if-modified-since", date(created, -1))],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        container_lease_state(&f.c, &f.container).await.as_deref(),
        Some("leased")
    );
    let lease = r.header("x-ms-lease-id").expect("a lease id");
    let r =
        f.c.put(&format!("/{}?comp=lease&restype=container", f.container))
            .header("x-ms-lease-action", "release")
            .header("x-ms-lease-id", &lease)
            .header("if-unmodified-since", &date(created, 0))
            .send()
            .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        f.container_version().await,
        before,
        "leases keep the version"
    );
}

#[tokio::test]
async fn lease_container_ignores_etag_conditions() {
    let f = Fixture::new("cond-clease").await;
    let r = acquire_container_lease(
        &f.c,
        &f.container,
        &[
            ("if-match", UNKNOWN_ETAG.to_owned()),
            ("if-none-match", "*".to_owned()),
        ],
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text());
}
