//! The admin subcommands `check`, `backup` and `restore`
//! (docs/operations.md#admin-commands), run as the binary runs them
//! (`stowage_server::admin::run` with its arguments) on the data directory
//! of a real server, or, with `STOWAGE_TEST_POSTGRES` set, on a cluster's
//! PostgreSQL database and shared object directory (docs/cluster.md#admin-commands).
//! Tests about a data directory's own lock, its WAL or a server running on
//! a backup stay on SQLite whatever the variable says.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use stowage_blobstore::admin::cluster::Cluster;
use stowage_blobstore::admin::{self, CheckReport, Problem, Quiet};
use stowage_blobstore::testing::TempPostgres;
use stowage_blobstore::{ObjectsLocation, StoreConfig};
use stowage_tests::{TestServer, unique};

/// Larger than the inline limit (64 KiB): stored as a file.
const BIG: usize = 200 * 1024;

/// A cluster's shared parts: a database and an object directory.
struct ClusterParts {
    url: String,
    objects: PathBuf,
    _objects_dir: tempfile::TempDir,
    pg: Arc<TempPostgres>,
}

impl ClusterParts {
    /// A new database on a PostgreSQL server of its own (or on `pg`), and
    /// a new object directory.
    fn new(pg: Option<Arc<TempPostgres>>) -> ClusterParts {
        // The PostgreSQL client blocks: not on the test's runtime.
        let (pg, url) = std::thread::spawn(move || {
            let pg = pg.unwrap_or_else(|| TempPostgres::shared().expect("PostgreSQL"));
            let url = pg.new_database().expect("a database");
            (pg, url)
        })
        .join()
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        ClusterParts {
            url,
            objects: dir.path().join("objects"),
            _objects_dir: dir,
            pg,
        }
    }

    fn cluster(&self) -> Cluster {
        Cluster {
            metadata: self.url.clone(),
            objects: ObjectsLocation::Shared(self.objects.clone()),
            location: None,
        }
    }

    /// The flags naming this cluster to an admin command.
    fn args(&self) -> Vec<OsString> {
        vec![
            "--metadata".into(),
            self.url.clone().into(),
            "--objects".into(),
            format!("file://{}", self.objects.display()).into(),
        ]
    }

    fn config(&self, config: StoreConfig) -> StoreConfig {
        config
            .with_metadata(self.url.clone())
            .with_objects(ObjectsLocation::Shared(self.objects.clone()))
    }
}

/// The store a test works on: a server on a data directory, or with
/// `STOWAGE_TEST_POSTGRES` set, a node of a cluster (PostgreSQL and a
/// shared object directory). The server is dropped before the database.
struct Subject {
    server: TestServer,
    cluster: Option<ClusterParts>,
}

impl Subject {
    async fn start(adjust: impl FnOnce(StoreConfig) -> StoreConfig) -> Subject {
        let cluster = std::env::var_os("STOWAGE_TEST_POSTGRES").map(|_| ClusterParts::new(None));
        Self::start_on(cluster, adjust).await
    }

    async fn start_on(
        cluster: Option<ClusterParts>,
        adjust: impl FnOnce(StoreConfig) -> StoreConfig,
    ) -> Subject {
        let server = match &cluster {
            Some(parts) => {
                TestServer::start_in(
                    tempfile::tempdir().unwrap(),
                    |c| adjust(parts.config(c)),
                    None,
                )
                .await
            }
            None => TestServer::start_in(tempfile::tempdir().unwrap(), adjust, None).await,
        };
        Subject { server, cluster }
    }

    /// The flags naming the store to an admin command.
    fn args(&self) -> Vec<OsString> {
        match &self.cluster {
            Some(parts) => parts.args(),
            None => vec!["--location".into(), self.server.data_dir().into()],
        }
    }

    /// Where the extent files are: `objects/` of the data directory, or
    /// the shared object directory.
    fn objects(&self) -> PathBuf {
        match &self.cluster {
            Some(parts) => parts.objects.clone(),
            None => self.server.data_dir().join("objects"),
        }
    }

    /// Runs `stowage-server COMMAND <the store's flags> ARGS...`.
    async fn run(&self, command: &str, args: &[&dyn AsRef<std::ffi::OsStr>]) -> i32 {
        let mut all: Vec<OsString> = vec![command.into()];
        all.extend(self.args());
        all.extend(args.iter().map(|a| a.as_ref().to_owned()));
        let all: Vec<&dyn AsRef<std::ffi::OsStr>> = all
            .iter()
            .map(|a| a as &dyn AsRef<std::ffi::OsStr>)
            .collect();
        run(&all).await
    }

    /// `check` through the engine (in cluster mode with no grace period:
    /// the tests' orphans are made just before).
    async fn check(&self, repair: bool) -> CheckReport {
        match &self.cluster {
            Some(parts) => {
                let cluster = parts.cluster();
                tokio::task::spawn_blocking(move || {
                    admin::cluster::check(&cluster, repair, Duration::ZERO, &Quiet)
                })
                .await
                .unwrap()
                .unwrap()
                .report
            }
            None => admin::check(&self.server.data_dir(), repair, &Quiet).unwrap(),
        }
    }
}

/// Runs `stowage-server ARGS...` as an admin command on the blocking pool
/// and returns its exit status.
async fn run(args: &[&dyn AsRef<std::ffi::OsStr>]) -> i32 {
    let mut argv: Vec<OsString> = vec!["stowage-server".into()];
    argv.extend(args.iter().map(|a| a.as_ref().to_owned()));
    tokio::task::spawn_blocking(move || stowage_server::admin::run(argv))
        .await
        .expect("admin command")
}

fn bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

/// A store with a small and a big block blob, a blob built from blocks,
/// an uncommitted block, a snapshot and an append blob.
async fn populated() -> (Subject, String) {
    populate(Subject::start(|c| c).await).await
}

/// [`populated`] on a data directory, whatever the backend the tests run on.
async fn populated_on_sqlite() -> (Subject, String) {
    populate(Subject::start_on(None, |c| c).await).await
}

async fn populate(subject: Subject) -> (Subject, String) {
    let client = subject.server.client();
    let c = unique("admin");
    client.create_container(&c).await;
    client.put_blob(&c, "small", b"small bytes").await;
    client.put_blob(&c, "big", &bytes(1, BIG)).await;
    let r = client.put(&format!("/{c}/big?comp=snapshot")).send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    client.put_blob(&c, "big", &bytes(2, BIG)).await;
    for (id, seed) in [("QUFB", 3), ("QkJC", 4)] {
        let r = client
            .put(&format!("/{c}/blocks?comp=block&blockid={id}"))
            .body(bytes(seed, BIG))
            .send()
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let r = client
        .put(&format!("/{c}/blocks?comp=blocklist"))
        .body("<BlockList><Latest>QUFB</Latest></BlockList>")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = client
        .put(&format!("/{c}/staged?comp=block&blockid=QUFB"))
        .body(bytes(5, BIG))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = client
        .put(&format!("/{c}/log"))
        .header("x-ms-blob-type", "AppendBlob")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = client
        .put(&format!("/{c}/log?comp=appendblock"))
        .body(bytes(6, BIG))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    (subject, c)
}

/// The extent files under `objects` (a data directory's `objects/` or a
/// shared object directory), by path.
fn extent_files(objects: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in std::fs::read_dir(objects.join("extents")).unwrap() {
        for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
            out.push(f.unwrap().path());
        }
    }
    out.sort();
    out
}

/// The extent file under `objects` holding exactly `data`.
fn file_holding(objects: &Path, data: &[u8]) -> PathBuf {
    extent_files(objects)
        .into_iter()
        .find(|f| std::fs::read(f).unwrap() == data)
        .expect("an extent file with these bytes")
}

#[actix_web::test]
async fn check_passes_a_clean_store() {
    let (subject, _) = populated().await;
    let report = subject.check(false).await;
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    // small (inline), big, its snapshot, the committed block (the other
    // was dropped by the commit), the staged one, the appended one.
    assert_eq!(report.extents_checked, 6);
    // small, big and the snapshot carry the MD5 Stowage computed.
    assert_eq!(report.blobs_hashed, 3);
    assert_eq!(subject.run("check", &[]).await, 0);
}

#[actix_web::test]
async fn check_reports_a_deleted_extent_file_and_who_refers_to_it() {
    let (subject, c) = populated().await;
    // The uncommitted block staged for `staged` (other files may be
    // garbage of overwritten versions, which nothing refers to any more).
    let victim = file_holding(&subject.objects(), &bytes(5, BIG));
    let id = victim.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::remove_file(&victim).unwrap();
    let report = subject.check(false).await;
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    match &report.problems[0] {
        Problem::Missing { extent, referrer } => {
            assert_eq!(extent, &id);
            assert_eq!(
                referrer,
                &format!("devstoreaccount1/{c}/staged (uncommitted block QUFB)")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!report.healthy());
    assert_eq!(subject.run("check", &[]).await, 1);
    // Repair cannot bring it back: still failing.
    assert_eq!(subject.run("check", &[&"--repair"]).await, 1);
}

#[actix_web::test]
async fn check_reports_truncated_and_altered_extents() {
    let (subject, c) = populated().await;
    let objects = subject.objects();
    // The big blob's current extent, and the append blob's block.
    let wanted = bytes(2, BIG);
    let big = file_holding(&objects, &wanted);
    let mut altered = wanted.clone();
    altered[100] ^= 0xff;
    std::fs::write(&big, &altered).unwrap();
    let other = file_holding(&objects, &bytes(6, BIG));
    let len = std::fs::metadata(&other).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&other)
        .unwrap()
        .set_len(len - 1)
        .unwrap();
    let report = subject.check(false).await;
    assert_eq!(report.damaged(), 2, "{:?}", report.problems);
    assert!(report.problems.iter().any(|p| matches!(p,
        Problem::WrongLength { expected, found, .. } if *expected == len && *found == len - 1)));
    assert!(report.problems.contains(&Problem::Md5Mismatch {
        blob: format!("devstoreaccount1/{c}/big")
    }));
}

#[actix_web::test]
async fn check_reports_orphans_and_repair_removes_them() {
    let (subject, _) = populated().await;
    let orphan = subject
        .objects()
        .join("extents/ab/ab0000000000000000000000000000ff");
    std::fs::create_dir_all(orphan.parent().unwrap()).unwrap();
    std::fs::write(&orphan, b"nobody's").unwrap();
    let report = subject.check(false).await;
    assert_eq!(
        report.problems,
        [Problem::Orphan {
            extent: "ab0000000000000000000000000000ff".into(),
            len: 8
        }]
    );
    // (A cluster's check judges only objects older than --grace.)
    let grace: [&dyn AsRef<std::ffi::OsStr>; 2] = [&"--grace", &"0"];
    assert_eq!(subject.run("check", &grace).await, 1);
    assert!(orphan.exists(), "check without --repair changes nothing");
    assert_eq!(
        subject
            .run("check", &[grace[0], grace[1], &"--repair"])
            .await,
        0
    );
    assert!(!orphan.exists());
    assert_eq!(subject.run("check", &grace).await, 0);
    // Every blob still reads back.
    let report = subject.check(false).await;
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

#[actix_web::test]
async fn check_refuses_a_directory_a_server_holds_and_a_missing_one() {
    // About a data directory's lock: on SQLite whatever the backend.
    let (server, _) = populated_on_sqlite().await;
    let dir = server.server.data_dir();
    let lock = stowage_server::data_dir::claim(&dir).unwrap();
    assert_eq!(run(&[&"check", &"--location", &dir]).await, 2);
    drop(lock);
    assert_eq!(run(&[&"check", &"--location", &dir]).await, 0);
    let missing = dir.join("nothing-here");
    assert_eq!(run(&[&"check", &"--location", &missing]).await, 2);
    assert!(!missing.exists(), "check creates nothing");
}

/// The body of version `v` of blob `name` in the backup test.
fn versioned(name: &str, v: u32) -> Vec<u8> {
    let mut out = format!("{name} v{v} ").into_bytes();
    let seed = (v as u8).wrapping_add(name.len() as u8);
    out.extend(bytes(seed, 70 * 1024 + v as usize));
    out
}

#[actix_web::test]
async fn backup_during_writes_restores_a_consistent_store() {
    let subject = Subject::start(|c| c.with_gc_grace(Duration::ZERO)).await;
    let server = &subject.server;
    let client = server.client();
    let c = unique("backup");
    client.create_container(&c).await;
    let names: Vec<String> = (0..8).map(|i| format!("blob{i}")).collect();
    for name in &names {
        let r = client
            .put(&format!("/{c}/{name}"))
            .header("x-ms-blob-type", "BlockBlob")
            .header("x-ms-meta-v", "0")
            .body(versioned(name, 0))
            .send()
            .await;
        assert_eq!(r.status, 201);
    }

    // Overwrites every blob again and again, and collects the garbage at
    // once (grace 0), while the backup runs.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (client, c, names, stop, store) = (
            client.clone(),
            c.clone(),
            names.clone(),
            stop.clone(),
            server.store.clone(),
        );
        tokio::spawn(async move {
            let mut v = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) || v < 3 {
                v += 1;
                for name in &names {
                    let r = client
                        .put(&format!("/{c}/{name}"))
                        .header("x-ms-blob-type", "BlockBlob")
                        .header("x-ms-meta-v", &v.to_string())
                        .body(versioned(name, v))
                        .send()
                        .await;
                    assert_eq!(r.status, 201);
                }
                store.collect_garbage().await.unwrap();
            }
            v
        })
    };
    let dest = tempfile::tempdir().unwrap();
    let backup = dest.path().join("backup");
    assert_eq!(subject.run("backup", &[&backup]).await, 0);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let last = writer.await.unwrap();
    assert!(last >= 3);

    // A backup is refused into a directory that is not empty.
    assert_eq!(subject.run("backup", &[&backup]).await, 2);

    // A cluster's backup restores into another cluster, once.
    if let Some(parts) = &subject.cluster {
        let other = ClusterParts::new(Some(parts.pg.clone()));
        let into: Vec<OsString> = other.args();
        let args: Vec<&dyn AsRef<std::ffi::OsStr>> = std::iter::once(&"restore" as _)
            .chain(into.iter().map(|a| a as _))
            .chain(std::iter::once(&backup as _))
            .collect();
        assert_eq!(run(&args).await, 0);
        assert_eq!(run(&args).await, 2, "restored twice into one database");
        let restored = Subject::start_on(Some(other), |c| c).await;
        let report = restored.check(false).await;
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        assert_same_blobs(&restored.server, &c, &names, last).await;
        // New rows get ids past the restored ones.
        let client = restored.server.client();
        client.create_container("after-restore").await;
        client.put_blob("after-restore", "new", b"new").await;
        client.put_blob(&c, "blob0", b"overwritten").await;
        let r = client.get(&format!("/{c}/blob0")).send().await;
        assert_eq!(&r.body[..], b"overwritten");
    }

    let target = tempfile::tempdir().unwrap();
    let restored = target.path().join("data");
    assert_eq!(
        run(&[&"restore", &"--location", &restored, &backup]).await,
        0
    );
    // Not twice into the same directory.
    assert_eq!(
        run(&[&"restore", &"--location", &restored, &backup]).await,
        2
    );
    let report = admin::check(&restored, false, &Quiet).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);

    let again = TestServer::start_in(target, |c| c, None).await;
    assert_same_blobs(&again, &c, &names, last).await;
}

/// Every blob of a restored store is one whole version: its bytes are those
/// of the version its metadata names, written at most `last` times.
async fn assert_same_blobs(again: &TestServer, c: &str, names: &[String], last: u32) {
    let client = again.client();
    for name in names {
        let r = client.get(&format!("/{c}/{name}")).send().await;
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let v: u32 = r.header("x-ms-meta-v").unwrap().parse().unwrap();
        assert!(v <= last);
        assert!(r.body == versioned(name, v), "{name} v{v}");
    }
}

#[actix_web::test]
async fn restore_refuses_what_is_not_a_backup_and_a_directory_in_use() {
    // About a data directory's lock: on SQLite whatever the backend.
    let (server, _) = populated_on_sqlite().await;
    let dir = server.server.data_dir();
    let scratch = tempfile::tempdir().unwrap();
    let empty = scratch.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let target = scratch.path().join("target");
    assert_eq!(run(&[&"restore", &"--location", &target, &empty]).await, 2);
    let backup = scratch.path().join("backup");
    assert_eq!(run(&[&"backup", &"--location", &dir, &backup]).await, 0);
    let lock = stowage_server::data_dir::claim(&target).unwrap();
    assert_eq!(run(&[&"restore", &"--location", &target, &backup]).await, 2);
    drop(lock);
    assert_eq!(run(&[&"restore", &"--location", &target, &backup]).await, 0);
    let report = admin::check(&target, false, &Quiet).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.extents_checked, 6);
}

/// Overwrites `big` and collects its old extent at once when the backup
/// starts copying extents: what the server's collector does to a backup
/// that runs longer than the grace period.
struct Collector {
    done: std::sync::atomic::AtomicBool,
    server: std::sync::Arc<TestServer>,
    container: String,
    runtime: tokio::runtime::Handle,
}

impl admin::Progress for Collector {
    fn begin(&self, step: &str, _: u64) {
        if step != "copying extents" || self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        self.runtime.block_on(async {
            let client = self.server.client();
            client
                .put_blob(&self.container, "big", &bytes(9, BIG))
                .await;
            self.server.clock.advance(Duration::from_secs(1));
            assert!(self.server.store.collect_garbage().await.unwrap() >= 1);
        });
    }
    fn advance(&self, _: u64) {}
    fn end(&self) {}
}

#[actix_web::test]
async fn backup_takes_a_new_snapshot_when_the_collector_deletes_an_extent_it_needs() {
    let Subject { server, cluster } = Subject::start(|c| c.with_gc_grace(Duration::ZERO)).await;
    let c = unique("race");
    let client = server.client();
    client.create_container(&c).await;
    client.put_blob(&c, "big", &bytes(8, BIG)).await;
    let server = std::sync::Arc::new(server);
    let racer = Collector {
        done: false.into(),
        server: server.clone(),
        container: c.clone(),
        runtime: tokio::runtime::Handle::current(),
    };
    let (dir, dest) = (server.data_dir(), tempfile::tempdir().unwrap());
    let backup = dest.path().join("backup");
    let report = {
        let backup = backup.clone();
        let cluster = cluster.as_ref().map(ClusterParts::cluster);
        tokio::task::spawn_blocking(move || match cluster {
            Some(cluster) => admin::cluster::backup(&cluster, &backup, &racer),
            None => admin::backup(&dir, &backup, &racer),
        })
        .await
        .unwrap()
        .unwrap()
    };
    assert_eq!(report.snapshots, 2, "{report:?}");
    assert_eq!(report.extents, 1);
    // Only the extent of the second snapshot is in the backup.
    let check = admin::check(&backup, false, &Quiet).unwrap();
    assert!(check.problems.is_empty(), "{:?}", check.problems);
    assert_eq!(extent_files(&backup.join("objects")).len(), 1);
    assert_eq!(
        std::fs::read(&extent_files(&backup.join("objects"))[0]).unwrap(),
        bytes(9, BIG)
    );
}

/// A small Azurite 3.x data directory written by hand in Azurite's format
/// (the real one is made by Azurite in tests/sdk/test_import_azurite.py):
/// container `cnt` with a blob written whole (and a snapshot of an older
/// version), a blob of two blocks, a blob with only an uncommitted block
/// (no blob document), a page blob, a fixed and a breaking lease.
fn azurite_dir(root: &Path) -> PathBuf {
    let dir = root.join("azurite");
    std::fs::create_dir_all(dir.join("__blobstorage__")).unwrap();
    // One extent file holding every range: "old!" "new bytes" "AAAA" "BB" "staged"
    std::fs::write(
        dir.join("__blobstorage__/ext-1"),
        b"old!new bytesAAAABBstaged",
    )
    .unwrap();
    let range = |offset: u64, count: u64| serde_json::json!({"id": "ext-1", "offset": offset, "count": count});
    let blob = |name: &str, snapshot: &str, etag: &str, content: serde_json::Value| {
        let mut doc = serde_json::json!({
            "accountName": "devstoreaccount1", "containerName": "cnt", "name": name,
            "snapshot": snapshot, "deleted": false, "isCommitted": true,
            "metadata": {"k": name},
            "properties": {
                "etag": format!("\"{etag}\""), "blobType": "BlockBlob",
                "creationTime": "2026-01-02T03:04:05.006Z",
                "lastModified": "2026-01-02T03:04:06.007Z",
                "contentType": "text/plain",
                "leaseState": "available", "leaseStatus": "unlocked"
            }
        });
        for (k, v) in content.as_object().unwrap() {
            doc[k] = v.clone();
        }
        doc
    };
    let mut fixed = blob(
        "fixed",
        "",
        "0x1D000000000000A",
        serde_json::json!({"persistency": range(4, 9)}),
    );
    fixed["leaseId"] = "11111111-2222-3333-4444-555555555555".into();
    fixed["leaseDurationSeconds"] = 60.into();
    fixed["leaseExpireTime"] = "2999-01-01T00:00:00.000Z".into();
    fixed["properties"]["leaseState"] = "leased".into();
    fixed["properties"]["leaseDuration"] = "fixed".into();
    let mut page = blob("page", "", "0x1D000000000000B", serde_json::json!({}));
    page["properties"]["blobType"] = "PageBlob".into();
    let db = serde_json::json!({"collections": [
        {"name": "$SERVICES_COLLECTION$", "data": []},
        {"name": "$CONTAINERS_COLLECTION$", "data": [{
            "accountName": "devstoreaccount1", "name": "cnt", "metadata": {"team": "x"},
            "properties": {"etag": "\"0x1D0000000000001\"",
                "lastModified": "2026-01-01T00:00:00.000Z", "publicAccess": "container",
                "leaseState": "breaking", "leaseStatus": "locked", "leaseDuration": "infinite"},
            "leaseId": "66666666-7777-8888-9999-000000000000",
            "leaseBreakTime": "2999-01-01T00:00:00.000Z",
            "containerAcl": []
        }]},
        {"name": "$BLOBS_COLLECTION$", "data": [
            blob("whole", "2026-01-02T03:04:05.1234567Z", "0x1D0000000000002",
                serde_json::json!({"persistency": range(0, 4)})),
            fixed,
            blob("blocks", "", "0x1D0000000000003", serde_json::json!({
                "committedBlocksInOrder": [
                    {"name": "QUFB", "size": 4, "persistency": range(13, 4)},
                    {"name": "QkI=", "size": 2, "persistency": range(17, 2)}
                ]})),
            page,
        ]},
        {"name": "$BLOCKS_COLLECTION$", "data": [{
            "accountName": "devstoreaccount1", "containerName": "cnt", "blobName": "staged",
            "name": "c3Q=", "size": 6, "isCommitted": false, "persistency": range(19, 6)
        }]}
    ]});
    std::fs::write(dir.join("__azurite_db_blob__.json"), db.to_string()).unwrap();
    let extents = serde_json::json!({"collections": [{"name": "$EXTENTS_COLLECTION$",
        "data": [{"id": "ext-1", "locationId": "Default", "path": "ext-1", "size": 25}]}]});
    std::fs::write(
        dir.join("__azurite_db_blob_extent__.json"),
        extents.to_string(),
    )
    .unwrap();
    dir
}

#[actix_web::test]
async fn import_azurite_loads_versions_blocks_and_leases_as_azurite_kept_them() {
    let root = tempfile::tempdir().unwrap();
    let azurite = azurite_dir(root.path());
    let target = tempfile::tempdir().unwrap();
    let data = target.path().join("data");
    // Not an Azurite directory: refused before anything is created.
    let nothing = root.path().join("nothing");
    assert_eq!(
        run(&[&"import-azurite", &"--location", &data, &nothing]).await,
        2
    );
    assert!(!data.exists());
    // The page blob is skipped and named: exit status 1.
    assert_eq!(
        run(&[&"import-azurite", &"--location", &data, &azurite]).await,
        1
    );
    // Not twice: the container exists.
    assert_eq!(
        run(&[&"import-azurite", &"--location", &data, &azurite]).await,
        2
    );
    let report = admin::check(&data, false, &Quiet).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);

    let server = TestServer::start_in(target, |c| c, None).await;
    assert_imported(&server.client()).await;
}

/// What [`azurite_dir`] holds, read back through `client`.
async fn assert_imported(client: &stowage_tests::Client) {
    let snapshot = "2026-01-02T03:04:05.1234567Z";
    let r = client
        .get(&format!("/cnt/whole?snapshot={snapshot}"))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(&r.body[..], b"old!");
    assert_eq!(r.etag(), "\"0x01D0000000000002\"");
    assert_eq!(r.header("x-ms-meta-k").as_deref(), Some("whole"));
    assert_eq!(
        r.header("x-ms-creation-time").as_deref(),
        Some("Fri, 02 Jan 2026 03:04:05 GMT")
    );
    assert_eq!(
        r.header("last-modified").as_deref(),
        Some("Fri, 02 Jan 2026 03:04:06 GMT")
    );
    // The snapshot has no base blob: only the snapshot was in Azurite.
    assert_eq!(client.get("/cnt/whole").send().await.status, 404);

    let r = client.get("/cnt/fixed").send().await;
    assert_eq!(&r.body[..], b"new bytes");
    assert_eq!(r.header("x-ms-lease-state").as_deref(), Some("leased"));
    assert_eq!(r.header("x-ms-lease-duration").as_deref(), Some("fixed"));
    let r = client
        .put("/cnt/fixed")
        .header("x-ms-blob-type", "BlockBlob")
        .body("x")
        .send()
        .await;
    r.assert_error(412, "LeaseIdMissing");

    let r = client.get("/cnt/blocks").send().await;
    assert_eq!(&r.body[..], b"AAAABB");
    let r = client
        .get("/cnt/blocks?comp=blocklist&blocklisttype=all")
        .send()
        .await;
    let text = r.text();
    assert!(
        text.contains("<Name>QUFB</Name><Size>4</Size>")
            && text.contains("<Name>QkI=</Name><Size>2</Size>"),
        "{text}"
    );
    let r = client
        .get("/cnt/staged?comp=blocklist&blocklisttype=uncommitted")
        .send()
        .await;
    assert!(
        r.text().contains("<Name>c3Q=</Name><Size>6</Size>"),
        "{}",
        r.text()
    );
    assert_eq!(client.get("/cnt/page").send().await.status, 404);

    let r = client.get("/cnt?restype=container").send().await;
    assert_eq!(r.header("x-ms-lease-state").as_deref(), Some("breaking"));
    assert_eq!(
        r.header("x-ms-blob-public-access").as_deref(),
        Some("container")
    );
    assert_eq!(r.header("x-ms-meta-team").as_deref(), Some("x"));
    assert_eq!(r.etag(), "\"0x01D0000000000001\"");
}

/// A backup is a data directory: a server may run on it and write, and a
/// restore from it then carries those writes too (rows still in the WAL).
#[actix_web::test]
async fn restore_carries_what_a_server_wrote_into_the_backup() {
    // About rows a server leaves in a SQLite WAL: on SQLite.
    let (subject, c) = populated_on_sqlite().await;
    let server = &subject.server;
    let holder = tempfile::tempdir().unwrap();
    let backup = holder.path().join("data");
    assert_eq!(
        run(&[&"backup", &"--location", &server.data_dir(), &backup]).await,
        0
    );
    let on_backup = TestServer::start_in(holder, |c| c, None).await;
    on_backup
        .client()
        .put_blob(&c, "written-later", b"after the backup")
        .await;
    let target = tempfile::tempdir().unwrap();
    let restored = target.path().join("data");
    assert_eq!(
        run(&[&"restore", &"--location", &restored, &on_backup.data_dir()]).await,
        0
    );
    let again = TestServer::start_in(target, |c| c, None).await;
    let r = again
        .client()
        .get(&format!("/{c}/written-later"))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(&r.body[..], b"after the backup");
    let r = again.client().get(&format!("/{c}/big")).send().await;
    assert!(r.body == bytes(2, BIG));
}

/// A page blob's extents are referred to by its page map, partly once
/// overwritten: `check` finds nothing wrong and no orphan (so `--repair`
/// deletes nothing), and a backup restores every page.
#[actix_web::test]
async fn page_blobs_are_checked_backed_up_and_restored_whole() {
    let (subject, c) = populated().await;
    let client = subject.server.client();
    let size = 1024 * 1024;
    let r = client
        .put(&format!("/{c}/disk"))
        .header("x-ms-blob-type", "PageBlob")
        .header("x-ms-blob-content-length", &size.to_string())
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let put_page = |start: usize, data: Vec<u8>| {
        let (client, c) = (client.clone(), c.clone());
        async move {
            let end = start + data.len() - 1;
            let r = client
                .put(&format!("/{c}/disk?comp=page"))
                .header("x-ms-page-write", "update")
                .header("x-ms-range", &format!("bytes={start}-{end}"))
                .body(data)
                .send()
                .await;
            assert_eq!(r.status, 201, "{}", r.text());
        }
    };
    // A file extent, then a small (inline) page over its middle: the file
    // is read in two parts, its tail past the overwrite by nothing else.
    put_page(0, bytes(7, 400 * 512)).await;
    put_page(100 * 512, bytes(8, 512)).await;
    let r = client.put(&format!("/{c}/disk?comp=snapshot")).send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    put_page(size - 1024, bytes(9, 1024)).await;
    let expected = client.get(&format!("/{c}/disk")).send().await.body;

    let report = subject.check(false).await;
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(
        subject.run("check", &[&"--repair", &"--grace", &"0"]).await,
        0
    );
    let r = client.get(&format!("/{c}/disk")).send().await;
    assert!(r.body == expected, "the page blob changed after --repair");

    let root = tempfile::tempdir().unwrap();
    let backup = root.path().join("backup");
    assert_eq!(subject.run("backup", &[&backup]).await, 0);
    drop(client);
    drop(subject);
    let target = tempfile::tempdir().unwrap();
    let restored = target.path().join("data");
    assert_eq!(
        run(&[&"restore", &"--location", &restored, &backup]).await,
        0
    );
    let report = admin::check(&restored, false, &Quiet).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let again = TestServer::start_in(target, |c| c, None).await;
    let r = again.client().get(&format!("/{c}/disk")).send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.body == expected, "the restored page blob differs");
}

/// A cluster: the Azurite directory is loaded through the cluster's
/// database and object store, and every node serves it at once.
#[actix_web::test]
async fn import_azurite_into_a_cluster_is_served_by_every_node() {
    let root = tempfile::tempdir().unwrap();
    let azurite = azurite_dir(root.path());
    let parts = ClusterParts::new(None);
    let import = |parts: &ClusterParts| {
        let mut argv: Vec<OsString> = vec!["import-azurite".into()];
        argv.extend(parts.args());
        argv.push(azurite.clone().into());
        argv
    };
    let argv = import(&parts);
    let args: Vec<&dyn AsRef<std::ffi::OsStr>> = argv.iter().map(|a| a as _).collect();
    // The page blob is skipped and named: exit status 1.
    assert_eq!(run(&args).await, 1);
    // Not twice: the container exists.
    assert_eq!(run(&args).await, 2);

    let other_node =
        TestServer::start_in(tempfile::tempdir().unwrap(), |c| parts.config(c), None).await;
    assert_imported(&other_node.client()).await;
    drop(other_node);
    let node = Subject::start_on(Some(parts), |c| c).await;
    assert_imported(&node.server.client()).await;
    let report = node.check(false).await;
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

/// A cluster's check runs beside the nodes: an object nothing refers to is
/// an orphan only once older than `--grace`, and a restore refuses a
/// database that holds metadata.
#[actix_web::test]
async fn a_clusters_check_leaves_young_objects_alone_and_restore_wants_an_empty_database() {
    let (subject, _) =
        populate(Subject::start_on(Some(ClusterParts::new(None)), |c| c).await).await;
    let orphan = subject
        .objects()
        .join("extents/cd/cd0000000000000000000000000000ff");
    std::fs::create_dir_all(orphan.parent().unwrap()).unwrap();
    std::fs::write(&orphan, b"in flight?").unwrap();
    // Just written: perhaps an upload in flight on a node. Left alone.
    let cluster = subject.cluster.as_ref().unwrap().cluster();
    let out = tokio::task::spawn_blocking(move || {
        admin::cluster::check(&cluster, true, Duration::from_secs(3600), &Quiet)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(out.report.problems.is_empty(), "{:?}", out.report.problems);
    assert_eq!(out.young_unreferenced, 1);
    assert_eq!(out.report.orphans_removed, 0);
    assert_eq!(subject.run("check", &[&"--repair"]).await, 0);
    assert!(orphan.exists(), "a young object is not removed");
    // Once older than the grace period, it is an orphan.
    assert_eq!(subject.run("check", &[&"--grace", &"0"]).await, 1);
    assert_eq!(
        subject.run("check", &[&"--grace", &"0", &"--repair"]).await,
        0
    );
    assert!(!orphan.exists());

    let root = tempfile::tempdir().unwrap();
    let backup = root.path().join("backup");
    assert_eq!(subject.run("backup", &[&backup]).await, 0);
    // The database holds this store's metadata: refused, nothing changed.
    let before = extent_files(&subject.objects());
    assert_eq!(subject.run("restore", &[&backup]).await, 2);
    assert_eq!(extent_files(&subject.objects()), before);
    // The backup is a data directory a single node checks and serves.
    assert_eq!(run(&[&"check", &"--location", &backup]).await, 0);
}
