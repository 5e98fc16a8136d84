//! The liveness of the nodes of a cluster, in the engine: two stores on one
//! PostgreSQL database and one shared directory of objects. An upload in
//! flight is recorded before its object and the record ends with its
//! commit; when a node is taken for dead (its heartbeat set back in the
//! database, as a node that stopped beating would leave it), the collector
//! of the other node deletes the objects of its uploads in flight, leaves
//! those of live nodes alone, and ends its pending copies as failed; a late
//! commit of the dead node fails and leaves nothing behind. A node that has
//! not been alive for the bound itself takes no other for dead.

mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use stowage_blobstore::*;
use support::*;

/// A node that beats once, at start: the tests decide when it is dead.
fn quiet() -> LivenessConfig {
    LivenessConfig {
        heartbeat_every: Duration::from_secs(3600),
        dead_after: DEAD_AFTER,
    }
}

struct Cluster {
    _pg: testing::TempPostgres,
    url: String,
    dir: tempfile::TempDir,
    nodes: [Store; 2],
}

impl Cluster {
    async fn start() -> Cluster {
        let (pg, url) = postgres_database();
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path().join("objects");
        std::fs::create_dir_all(&objects).unwrap();
        let clock = Arc::new(ManualClock::new(epoch()));
        let mut nodes = Vec::new();
        for n in 0..2 {
            let config = StoreConfig::at(dir.path().join(format!("node{n}")))
                .with_metadata(&url)
                .with_objects(ObjectsLocation::Shared(objects.clone()))
                .with_liveness(quiet());
            nodes.push(Store::open(config, clock.clone()).await.unwrap());
        }
        let c = Cluster {
            _pg: pg,
            url,
            dir,
            nodes: nodes.try_into().unwrap(),
        };
        // As if they had been beating for an hour: a node judges others
        // only once it has been alive for the bound itself.
        c.sql("UPDATE stowage_node_heartbeats SET alive_since = now() - interval '1 hour'");
        c
    }

    fn objects(&self) -> PathBuf {
        self.dir.path().join("objects")
    }

    /// Runs `statement` on the database; the first column of each row, as
    /// text.
    fn sql(&self, statement: &str) -> Vec<String> {
        let url = self.url.clone();
        let statement = statement.to_owned();
        tokio::task::block_in_place(move || {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            client
                .query(&statement, &[])
                .unwrap()
                .iter()
                .map(|r| {
                    r.try_get::<_, String>(0)
                        .or_else(|_| r.try_get::<_, i64>(0).map(|n| n.to_string()))
                        .unwrap()
                })
                .collect()
        })
    }

    /// The uploads in flight: (object, node).
    fn uploads(&self) -> Vec<String> {
        self.sql("SELECT extent || ' ' || node FROM stowage_uploads ORDER BY 1")
    }

    /// Takes node `i` for dead: its heartbeat an hour back.
    fn kill(&self, i: usize) {
        let node = self.nodes[i].node_number().unwrap();
        self.sql(&format!(
            "UPDATE stowage_node_heartbeats SET heartbeat = now() - interval '1 hour'
              WHERE node = {node}"
        ));
    }
}

/// Every file under `objects/extents`, staging files (`<id>#<n>`)
/// included.
fn files(objects: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(fanout) = std::fs::read_dir(objects.join("extents")) else {
        return out;
    };
    for sub in fanout.flatten() {
        for f in std::fs::read_dir(sub.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push(f.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

/// Waits (at most a minute) until `ready` holds.
async fn until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "waited for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A body whose sender decides when each piece comes: a stalled upload.
fn stalling_body() -> (
    mpsc::UnboundedSender<std::io::Result<Bytes>>,
    mpsc::UnboundedReceiver<std::io::Result<Bytes>>,
) {
    mpsc::unbounded()
}

const LEN: usize = 2 * 1024 * 1024;

/// Starts a Put Blob of `data` on `store` whose body stops after its first
/// `sent` bytes; the sender sends the rest.
fn stalled_put(
    store: &Store,
    name: &str,
    data: &[u8],
    sent: usize,
) -> (
    mpsc::UnboundedSender<std::io::Result<Bytes>>,
    tokio::task::JoinHandle<Result<PutBlobOutput>>,
) {
    let (tx, rx) = stalling_body();
    tx.unbounded_send(Ok(Bytes::copy_from_slice(&data[..sent])))
        .unwrap();
    let store = store.clone();
    let input = put_input("live", name, data.len());
    let task = tokio::spawn(async move { store.put_blob(input, rx).await });
    (tx, task)
}

/// A Put Blob of `LEN` bytes to `live/b` on node 0, stalled halfway once
/// its first parts are in the object store: its bytes, the sender of the
/// rest and the running put.
async fn upload_in_flight(
    c: &Cluster,
) -> (
    Vec<u8>,
    mpsc::UnboundedSender<std::io::Result<Bytes>>,
    tokio::task::JoinHandle<Result<PutBlobOutput>>,
) {
    create_container(&c.nodes[0], "live").await;
    let data = pattern(LEN);
    let (tx, task) = stalled_put(&c.nodes[0], "b", &data, LEN / 2);
    until("the upload's first parts", || {
        files(&c.objects()).iter().any(|f| f.contains('#'))
    })
    .await;
    (data, tx, task)
}

fn finish(tx: mpsc::UnboundedSender<std::io::Result<Bytes>>, data: &[u8], sent: usize) {
    tx.unbounded_send(Ok(Bytes::copy_from_slice(&data[sent..])))
        .unwrap();
    drop(tx);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_recorded_before_its_object_and_forgotten_by_its_commit() {
    let c = Cluster::start().await;
    let (data, tx, task) = upload_in_flight(&c).await;
    let node = c.nodes[0].node_number().unwrap();
    let uploads = c.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:?}");
    assert!(uploads[0].ends_with(&format!(" {node}")), "{uploads:?}");
    let object = uploads[0].split(' ').next().unwrap().to_owned();
    assert!(
        files(&c.objects())
            .iter()
            .any(|f| f.starts_with(&format!("{object}#"))),
        "the recorded object is the one being written"
    );

    finish(tx, &data, LEN / 2);
    task.await.unwrap().unwrap();
    assert!(c.uploads().is_empty(), "the commit ended the record");
    assert_eq!(get(&c.nodes[1], "live", "b").await, data);

    // A small body goes into the database with its commit: no record.
    put(&c.nodes[0], "live", "small", b"inline").await;
    assert!(c.uploads().is_empty());
    // A refused upload leaves neither its record nor its object.
    let mut input = put_input("live", "refused", LEN);
    input.transactional_md5 = Some([0; 16]);
    let refused = c.nodes[1].put_blob(input, body(&data)).await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(c.uploads().is_empty());
    assert_eq!(files(&c.objects()).len(), 1, "only the committed object");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collector_reclaims_a_dead_nodes_uploads_and_keeps_a_live_ones() {
    let c = Cluster::start().await;
    create_container(&c.nodes[0], "live").await;
    let (dead_data, live_data) = (pattern(LEN), vec![9u8; LEN]);
    let (dead_tx, dead_task) = stalled_put(&c.nodes[0], "dead", &dead_data, LEN / 2);
    let (live_tx, live_task) = stalled_put(&c.nodes[1], "live", &live_data, LEN / 2);
    until("both uploads' first parts", || {
        files(&c.objects())
            .iter()
            .filter(|f| f.contains('#'))
            .count()
            == 2
    })
    .await;
    let [dead_node, live_node] = [0, 1].map(|i| c.nodes[i].node_number().unwrap());
    let object_of = |node: u64| {
        c.uploads()
            .iter()
            .find(|u| u.ends_with(&format!(" {node}")))
            .map(|u| u.split(' ').next().unwrap().to_owned())
            .unwrap()
    };
    let (dead_object, live_object) = (object_of(dead_node), object_of(live_node));

    // Nothing is reclaimed while both nodes are alive.
    assert_eq!(c.nodes[1].collect_garbage().await.unwrap(), 0);
    assert_eq!(c.uploads().len(), 2);

    c.kill(0);
    assert_eq!(c.nodes[1].collect_garbage().await.unwrap(), 1);
    let left = files(&c.objects());
    assert!(
        !left.iter().any(|f| f.starts_with(&dead_object)),
        "the dead node's partial object is gone: {left:?}"
    );
    assert!(
        left.iter()
            .any(|f| f.starts_with(&format!("{live_object}#"))),
        "the live upload's parts are still there: {left:?}"
    );
    assert_eq!(c.uploads(), vec![format!("{live_object} {live_node}")]);
    assert_eq!(
        c.sql("SELECT node FROM stowage_node_heartbeats ORDER BY 1"),
        vec![live_node.to_string()],
        "the dead node is forgotten"
    );

    // The live upload commits and reads back whole, through either node.
    finish(live_tx, &live_data, LEN / 2);
    live_task.await.unwrap().unwrap();
    assert_eq!(get(&c.nodes[0], "live", "live").await, live_data);
    assert_eq!(get(&c.nodes[1], "live", "live").await, live_data);

    // The node taken for dead was not: its upload fails (its object's
    // parts are gone, or else its commit finds the record gone), and
    // leaves nothing behind.
    finish(dead_tx, &dead_data, LEN / 2);
    let late = dead_task.await.unwrap();
    assert!(late.is_err(), "{late:?}");
    assert!(
        c.nodes[1]
            .get_blob_properties(get_input("live", "dead"))
            .await
            .is_err()
    );
    assert_eq!(files(&c.objects()), vec![live_object]);
    assert!(c.uploads().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_copy_of_a_dead_node_is_failed_by_another() {
    let c = Cluster::start().await;
    create_container(&c.nodes[0], "live").await;
    let input = RemoteCopyInput {
        account: ACCOUNT.to_owned(),
        container: container("live"),
        blob: blob("copy"),
        kind: CopiedType::Block,
        source_header: "http://elsewhere.test/data.bin".to_owned(),
        metadata: Metadata::default(),
        content: ContentProperties::default(),
        size: 1000,
        conditions: Conditions::default(),
        lease_id: None,
        access_tier: None,
        tags: Default::default(),
        expected_md5: None,
    };
    let (_, job) = c.nodes[0].begin_remote_copy(input).await.unwrap();
    let status = |store: Store| async move {
        let p = store
            .get_blob_properties(get_input("live", "copy"))
            .await
            .unwrap();
        let copy = p.copy.unwrap();
        (copy.status_str().to_owned(), copy.description)
    };
    // Alive: the other node leaves it pending.
    c.nodes[1].collect_garbage().await.unwrap();
    assert_eq!(status(c.nodes[1].clone()).await.0, "pending");

    c.kill(0);
    c.nodes[1].collect_garbage().await.unwrap();
    let (state, description) = status(c.nodes[1].clone()).await;
    assert_eq!(state, "failed");
    assert_eq!(description.as_deref(), Some(ORPHANED_COPY));
    // The node that ran it hears that the copy is over.
    assert!(!c.nodes[0].record_copy_progress(&job, 500).await.unwrap());
    assert!(
        c.sql("SELECT copy_id FROM stowage_copy_owners").is_empty(),
        "no owner is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_leaves_an_upload_in_flight_alone_whatever_its_age() {
    let c = Cluster::start().await;
    let (in_flight, orphan) = ("ab".repeat(16), "cd".repeat(16));
    for id in [&in_flight, &orphan] {
        let dir = c.objects().join("extents").join(&id[..2]);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(id), b"bytes nothing refers to").unwrap();
    }
    let node = c.nodes[0].node_number().unwrap();
    c.sql(&format!(
        "INSERT INTO stowage_uploads (extent, node) VALUES ('{in_flight}', {node})"
    ));
    let cluster = admin::cluster::Cluster {
        metadata: c.url.clone(),
        objects: ObjectsLocation::Shared(c.objects()),
        location: None,
    };
    let out = tokio::task::block_in_place(|| {
        admin::cluster::check(&cluster, true, Duration::ZERO, &admin::Quiet)
    })
    .unwrap();
    assert_eq!(
        out.young_unreferenced, 1,
        "the upload in flight is left alone"
    );
    assert_eq!(out.report.orphans_removed, 1);
    assert_eq!(files(&c.objects()), vec![in_flight]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_alive_for_less_than_the_bound_takes_no_other_for_dead() {
    let c = Cluster::start().await;
    let (data, tx, task) = upload_in_flight(&c).await;
    c.kill(0);
    // Node 1 as if it had just come back after a gap (a database restart):
    // the others may not have been able to beat either.
    let judge = c.nodes[1].node_number().unwrap();
    c.sql(&format!(
        "UPDATE stowage_node_heartbeats SET heartbeat = now() - interval '1 hour'
          WHERE node = {judge}"
    ));
    assert_eq!(c.nodes[1].collect_garbage().await.unwrap(), 0);
    assert_eq!(c.uploads().len(), 1);
    finish(tx, &data, LEN / 2);
    task.await.unwrap().unwrap();
    assert_eq!(get(&c.nodes[1], "live", "b").await, data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_nodes_record_that_no_upload_of_it_runs_is_reclaimed_by_itself() {
    let c = Cluster::start().await;
    let (data, tx, task) = upload_in_flight(&c).await;
    // A record of node 0 whose write is over (as one left when the
    // database could not be reached to end it), with its object.
    let left = "ef".repeat(16);
    let dir = c.objects().join("extents").join(&left[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&left), b"a failed write's bytes").unwrap();
    let node = c.nodes[0].node_number().unwrap();
    c.sql(&format!(
        "INSERT INTO stowage_uploads (extent, node) VALUES ('{left}', {node})"
    ));
    // The other node leaves it: node 0 is alive.
    assert_eq!(c.nodes[1].collect_garbage().await.unwrap(), 0);
    assert_eq!(c.uploads().len(), 2);
    // Node 0 takes it, and keeps the upload it is running.
    assert_eq!(c.nodes[0].collect_garbage().await.unwrap(), 1);
    assert_eq!(c.uploads().len(), 1);
    assert!(!files(&c.objects()).contains(&left));
    finish(tx, &data, LEN / 2);
    task.await.unwrap().unwrap();
    assert_eq!(get(&c.nodes[1], "live", "b").await, data);
    assert!(c.uploads().is_empty());
}
