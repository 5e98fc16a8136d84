//! A full disk (issue 16, finding 2): writes are refused at once with 503
//! ServerBusy, deletes and lease releases keep working, nothing acknowledged
//! is lost, and writes are accepted again as soon as there is room, without
//! a restart. Once on a real size-limited file system (a tmpfs the test
//! mounts, where it may), once with a full disk injected into the object
//! store (everywhere).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use stowage_tests::{Client, Response, TestServer};

use super::blocks::data;

const LEASE: &str = "a2f5c3b1-1111-4a4a-9b9b-0123456789ab";

/// Asserts the one answer of a write refused for a full disk.
fn assert_disk_full(r: &Response, what: &str) {
    assert_eq!(r.status, 503, "{what}: {}", r.text());
    assert_eq!(
        r.header("x-ms-error-code").as_deref(),
        Some("ServerBusy"),
        "{what}"
    );
    assert!(r.text().contains("<Code>ServerBusy</Code>"), "{}", r.text());
    assert!(r.text().contains("disk"), "{what}: {}", r.text());
}

async fn put(c: &Client, ctr: &str, name: &str, body: &[u8]) -> Response {
    c.put(&format!("/{ctr}/{name}"))
        .header("x-ms-blob-type", "BlockBlob")
        .body(body.to_vec())
        .send()
        .await
}

async fn acquire_lease(c: &Client, ctr: &str, name: &str) {
    let r = c
        .put(&format!("/{ctr}/{name}?comp=lease"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .header("x-ms-proposed-lease-id", LEASE)
        .send()
        .await;
    assert_eq!(r.status, 201, "acquire: {}", r.text());
}

async fn release_lease(c: &Client, ctr: &str, name: &str) {
    let r = c
        .put(&format!("/{ctr}/{name}?comp=lease"))
        .header("x-ms-lease-action", "release")
        .header("x-ms-lease-id", LEASE)
        .send()
        .await;
    assert_eq!(r.status, 200, "release: {}", r.text());
}

async fn delete(c: &Client, ctr: &str, name: &str) {
    let r = c.delete(&format!("/{ctr}/{name}")).send().await;
    assert_eq!(r.status, 202, "delete {name}: {}", r.text());
}

async fn assert_content(c: &Client, ctr: &str, name: &str, expected: &[u8]) {
    let r = c.get(&format!("/{ctr}/{name}")).send().await;
    assert_eq!(r.status, 200, "get {name}: {}", r.text());
    assert!(r.body[..] == expected[..], "{name} changed");
}

/// What every write that needs room answers while the disk is full, beside
/// the one that found it full.
async fn assert_writes_refused(c: &Client, ctr: &str) {
    assert_disk_full(&put(c, ctr, "small", b"tiny").await, "small put");
    let r = c
        .put(&format!("/{ctr}/keep?comp=metadata"))
        .header("x-ms-meta-k", "v")
        .header("x-ms-lease-id", LEASE)
        .send()
        .await;
    assert_disk_full(&r, "set metadata");
    let r = c.put("/another-container?restype=container").send().await;
    assert_disk_full(&r, "create container");
}

// ---------------------------------------------------------------------------
// A real full file system

/// A tmpfs of `size` mounted on `dir/data` for one test; unmounted when
/// dropped (lazily: the server's files may still be open).
struct SmallDisk {
    dir: Option<tempfile::TempDir>,
    mount_point: std::path::PathBuf,
}

impl SmallDisk {
    /// The reason, where this process cannot mount (it needs root, or
    /// CAP_SYS_ADMIN in a container).
    fn mount(size: &str) -> Result<SmallDisk, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mount_point = dir.path().join("data");
        std::fs::create_dir(&mount_point).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount_point)
            .output()
            .map_err(|e| format!("running mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(SmallDisk {
            dir: Some(dir),
            mount_point,
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_tmpfs_refuses_writes_serves_deletes_and_recovers_without_a_restart() {
    const BLOB: usize = 1024 * 1024;
    let mut disk = match SmallDisk::mount("24m") {
        Ok(d) => d,
        Err(reason) => {
            eprintln!("skipped: cannot mount a size-limited tmpfs here: {reason}");
            return;
        }
    };
    let server = TestServer::start_in(
        disk.dir.take().expect("the directory"),
        |c| c.with_disk_reserve(2 * 1024 * 1024),
        None,
    )
    .await;
    let c = server.client();
    let ctr = "full";
    c.create_container(ctr).await;
    let keep = data(BLOB, 1);
    c.put_blob(ctr, "keep", &keep).await;
    acquire_lease(&c, ctr, "keep").await;

    // Fill the disk.
    let mut written = Vec::new();
    let refused = loop {
        assert!(written.len() < 64, "a 24 MiB disk took 64 MiB");
        let name = format!("fill-{}", written.len());
        let r = put(&c, ctr, &name, &data(BLOB, written.len() as u64 + 10)).await;
        if r.status != 201 {
            break r;
        }
        written.push(name);
    };
    assert_disk_full(&refused, "the write that found the disk full");
    assert!(written.len() >= 10, "only {} blobs fit", written.len());
    assert_writes_refused(&c, ctr).await;

    // A restart on the full disk starts, full, and serves reads and deletes.
    drop(c);
    let server = server.restart().await;
    let c = server.client();
    assert_writes_refused(&c, ctr).await;

    // Deletes and lease releases work; what was acknowledged is intact.
    delete(&c, ctr, &written.pop().expect("a blob")).await;
    release_lease(&c, ctr, "keep").await;
    assert_content(&c, ctr, "keep", &keep).await;
    assert_content(&c, ctr, "fill-0", &data(BLOB, 10)).await;
    // Deleted bytes are garbage until the grace period is over.
    assert_disk_full(&put(&c, ctr, "small", b"tiny").await, "before collection");

    for name in written.drain(1..) {
        delete(&c, ctr, &name).await;
    }
    server.clock.advance(Duration::from_secs(31));
    assert!(server.store.collect_garbage().await.expect("collect") > 0);
    // Room again: no restart needed.
    c.put_blob(ctr, "after", &data(BLOB, 99)).await;
    c.put_blob(ctr, "small", b"tiny").await;
    assert_content(&c, ctr, "keep", &keep).await;
    assert_content(&c, ctr, "fill-0", &data(BLOB, 10)).await;
    assert_content(&c, ctr, "after", &data(BLOB, 99)).await;
    drop(server);
    drop(disk);
}

// ---------------------------------------------------------------------------
// A full disk injected into the object store

/// The local file system, but every write fails with `ENOSPC` while
/// `full` is set.
#[derive(Debug)]
struct FillableStore {
    inner: object_store::local::LocalFileSystem,
    full: Arc<AtomicBool>,
}

impl std::fmt::Display for FillableStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FillableStore({})", self.inner)
    }
}

impl FillableStore {
    fn check(&self) -> object_store::Result<()> {
        if self.full.load(Ordering::SeqCst) {
            return Err(object_store::Error::Generic {
                store: "FillableStore",
                source: Box::new(std::io::Error::from(std::io::ErrorKind::StorageFull)),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl ObjectStore for FillableStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.check()?;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.check()?;
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.check()?;
        self.inner.copy_opts(from, to, options).await
    }
}

#[tokio::test]
async fn an_injected_full_disk_refuses_writes_serves_deletes_and_recovers_without_a_restart() {
    const LARGE: usize = 200 * 1024;
    let dir = tempfile::tempdir().expect("temp dir");
    let objects = dir.path().join("data/objects");
    std::fs::create_dir_all(&objects).expect("objects directory");
    let full = Arc::new(AtomicBool::new(false));
    let store = FillableStore {
        inner: object_store::local::LocalFileSystem::new_with_prefix(&objects)
            .expect("local file system"),
        full: full.clone(),
    };
    let reserve = dir.path().join("data/disk-reserve");
    let server = TestServer::start_in(
        dir,
        |c| c.with_disk_reserve(64 * 1024),
        Some(Arc::new(store)),
    )
    .await;
    assert!(reserve.exists());
    let c = server.client();
    let ctr = "full";
    c.create_container(ctr).await;
    let keep = data(LARGE, 1);
    c.put_blob(ctr, "keep", &keep).await;
    c.put_blob(ctr, "other", &data(LARGE, 2)).await;
    acquire_lease(&c, ctr, "keep").await;

    full.store(true, Ordering::SeqCst);
    assert_disk_full(&put(&c, ctr, "large", &data(LARGE, 3)).await, "large put");
    assert!(!reserve.exists(), "the reserve is released for deletes");
    assert_writes_refused(&c, ctr).await;
    delete(&c, ctr, "other").await;
    release_lease(&c, ctr, "keep").await;
    assert_content(&c, ctr, "keep", &keep).await;

    // Room again: within a second of the last refusal writes are refused
    // without a probe, then the next write finds the room.
    full.store(false, Ordering::SeqCst);
    assert_disk_full(&put(&c, ctr, "small", b"tiny").await, "within the second");
    server.clock.advance(Duration::from_secs(1));
    c.put_blob(ctr, "small", b"tiny").await;
    assert!(reserve.exists(), "the reserve is back");
    c.put_blob(ctr, "large", &data(LARGE, 3)).await;
    assert_content(&c, ctr, "keep", &keep).await;
    assert_content(&c, ctr, "large", &data(LARGE, 3)).await;
}
