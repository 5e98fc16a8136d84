//! object_store's Azure backend, in emulator mode, against Stowage.
//!
//! Code that reaches Azure through the `object_store` crate (DataFusion,
//! delta-rs, ...) points it at the emulator with `with_use_emulator(true)`;
//! these tests do the same against a Stowage server and check what the crate
//! reports back. Besides our own cases they call the functions of
//! `object_store::integration`, the suite object_store itself runs against
//! Azurite (`azure_blob_test` in its `src/azure/mod.rs`); that module is not
//! semver-stable, which is why tests/Cargo.toml pins the crate exactly.
//!
//! **Two processes per test.** At 0.14.2 the emulator's address comes only
//! from the `AZURITE_BLOB_STORAGE_URL` environment variable (there is no
//! builder option for it), and setting a variable in a running process is
//! `unsafe` in edition 2024, which the workspace forbids. So each test runs
//! twice. The outer run (the ordinary `cargo test` process) starts its own
//! server on port 0 with its own data directory, creates a fresh container,
//! and runs this same test binary again for exactly this one test, with
//! `AZURITE_BLOB_STORAGE_URL` and [`CONTAINER_VAR`] set for that child. The
//! inner run sees [`CONTAINER_VAR`], builds the store and does the work. The
//! outer run passes only if the child reports `1 passed`, so a misspelt test
//! name cannot pass by running nothing; the child's output is shown when it
//! fails.
//!
//! object_store signs with the wall clock (`x-ms-date`), so the outer run sets
//! the server's manual clock to the current time before the child starts;
//! Shared Key accepts 15 minutes of skew. Retries are off so that a wrong
//! answer shows up as the error it is.
//!
//! No test here is ignored. A test for a gap in Stowage would carry an
//! `#[ignore]` naming its issue, to be removed when that lands; run such
//! tests anyway with `cargo test -p stowage-tests --test object_store_azure
//! -- --include-ignored`.

use std::process::Stdio;
use std::time::SystemTime;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::azure::{MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::integration;
use object_store::path::Path;
use object_store::{
    Error, GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutMode, RetryConfig, UpdateVersion,
    WriteMultipart,
};
use stowage_tests::{TestServer, unique};

/// The variable object_store's emulator mode reads the blob endpoint from.
const URL_VAR: &str = "AZURITE_BLOB_STORAGE_URL";
/// Set (to the container to use) only in the inner run of a test.
const CONTAINER_VAR: &str = "STOWAGE_OBJECT_STORE_CONTAINER";

/// Runs `body` with a store on a fresh container of a fresh server: in the
/// inner run it calls `body`, in the outer run it starts the server and the
/// inner run (module docs). `test` is the name of the calling test function.
async fn run(test: &str, body: impl AsyncFnOnce(MicrosoftAzure)) {
    match std::env::var(CONTAINER_VAR) {
        Ok(container) => body(store(&container)).await,
        Err(_) => run_inner_process(test).await,
    }
}

/// The store of the inner run: emulator mode (development account and key,
/// plain HTTP, path-style URLs), no retries.
fn store(container: &str) -> MicrosoftAzure {
    MicrosoftAzureBuilder::new()
        .with_use_emulator(true)
        .with_container_name(container)
        .with_retry(RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        })
        .build()
        .expect("build the emulator-mode Azure store")
}

async fn run_inner_process(test: &str) {
    let server = TestServer::start().await;
    server.clock.set(SystemTime::now());
    let container = unique("object-store");
    server.client().create_container(&container).await;

    let binary = std::env::current_exe().expect("path of this test binary");
    let output = tokio::process::Command::new(binary)
        .args([test, "--exact", "--include-ignored", "--test-threads=1"])
        .env(URL_VAR, &server.base)
        .env(CONTAINER_VAR, &container)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .expect("start the inner test process");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "inner run of `{test}` against {} (container {container}) failed ({}):\n\
         --- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        server.base,
        output.status,
    );
}

/// `n` bytes of a pattern that differs with `seed`, so misplaced parts show.
fn data(n: usize, seed: u8) -> Bytes {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect::<Vec<u8>>()
        .into()
}

async fn put(store: &MicrosoftAzure, path: &str, bytes: Bytes) -> Option<String> {
    store
        .put(&Path::from(path), bytes.into())
        .await
        .unwrap_or_else(|e| panic!("put {path}: {e}"))
        .e_tag
}

async fn read(store: &MicrosoftAzure, path: &str) -> Bytes {
    store
        .get(&Path::from(path))
        .await
        .unwrap_or_else(|e| panic!("get {path}: {e}"))
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("read body of {path}: {e}"))
}

/// Sorted paths of every object under `prefix` (flat listing).
async fn list_paths(store: &MicrosoftAzure, prefix: Option<&str>) -> Vec<String> {
    let prefix = prefix.map(Path::from);
    let mut paths: Vec<String> = store
        .list(prefix.as_ref())
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .expect("list");
    paths.sort();
    paths
}

// ---- put, get, head -------------------------------------------------------

#[tokio::test]
async fn put_then_get_returns_the_bytes_and_the_put_etag() {
    run(
        "put_then_get_returns_the_bytes_and_the_put_etag",
        async |store| {
            let bytes = data(100_000, 1);
            let etag = put(&store, "dir/file.bin", bytes.clone()).await;
            assert!(etag.is_some(), "Put Blob answered without an ETag");

            let got = store.get(&Path::from("dir/file.bin")).await.expect("get");
            assert_eq!(got.meta.size, 100_000);
            assert_eq!(got.meta.e_tag, etag);
            assert_eq!(got.range, 0..100_000);
            assert_eq!(got.bytes().await.expect("body"), bytes);
        },
    )
    .await;
}

#[tokio::test]
async fn put_overwrites_and_an_empty_object_reads_back_empty() {
    run(
        "put_overwrites_and_an_empty_object_reads_back_empty",
        async |store| {
            let first = put(&store, "a", data(10, 1)).await;
            let second = put(&store, "a", data(20, 2)).await;
            assert_ne!(first, second, "an overwrite must change the ETag");
            assert_eq!(read(&store, "a").await, data(20, 2));

            put(&store, "empty", Bytes::new()).await;
            assert_eq!(read(&store, "empty").await, Bytes::new());
            assert_eq!(
                store.head(&Path::from("empty")).await.expect("head").size,
                0
            );
        },
    )
    .await;
}

/// A name with a space, a plus, a percent sign and non-ASCII characters.
/// (`Path::from` percent-encodes `%` and non-ASCII characters itself, so the
/// blob is named `my dir/%C3%BCn%C3%AFc...%25.txt`; that name then travels
/// percent-encoded once more in the URL.)
const ODD_NAME: &str = "my dir/ünïcødé ☃ file+(1)%.txt";

/// The object path of [`ODD_NAME`] as object_store lists it.
fn odd_path() -> String {
    Path::from(ODD_NAME).to_string()
}

#[tokio::test]
async fn names_with_spaces_and_unicode_round_trip() {
    run("names_with_spaces_and_unicode_round_trip", async |store| {
        put(&store, ODD_NAME, data(5, 3)).await;
        assert_eq!(read(&store, ODD_NAME).await, data(5, 3));
        assert_eq!(
            store.head(&Path::from(ODD_NAME)).await.expect("head").size,
            5
        );
        store
            .copy(&Path::from(ODD_NAME), &Path::from("copy of it"))
            .await
            .expect("copy");
        assert_eq!(read(&store, "copy of it").await, data(5, 3));
        assert_eq!(
            list_paths(&store, None).await,
            ["copy of it".to_owned(), odd_path()]
        );
        let top = store.list_with_delimiter(None).await.expect("list root");
        assert_eq!(top.common_prefixes, vec![Path::from("my dir")]);
    })
    .await;
}

/// object_store writes query strings form-encoded: the prefix `my dir/` goes
/// out as `prefix=my+dir%2F`, and the client signs it as `prefix:my dir/`.
/// The service reads `+` in a query value as a space (Azurite issue 1696);
/// Stowage accepts the signature (docs/wire/auth.md#forms-stowage-also-accepts (d)) but then lists
/// the prefix `my+dir/`, so the listing comes back empty.
#[tokio::test]
async fn list_under_a_prefix_with_a_space() {
    run("list_under_a_prefix_with_a_space", async |store| {
        put(&store, ODD_NAME, data(5, 3)).await;
        put(&store, "my dir/second", data(5, 4)).await;
        put(&store, "my+dir/decoy", data(5, 5)).await;
        // Listing order is the byte order of the stored names; object_store
        // stores ODD_NAME percent-encoded, so it sorts before "second".
        let expected = [odd_path(), "my dir/second".to_owned()];
        assert_eq!(list_paths(&store, Some("my dir")).await, expected);
        let listed = store
            .list_with_delimiter(Some(&Path::from("my dir")))
            .await
            .expect("list my dir");
        let objects: Vec<_> = listed
            .objects
            .iter()
            .map(|m| m.location.to_string())
            .collect();
        assert_eq!(objects, expected);
    })
    .await;
}

#[tokio::test]
async fn range_get_returns_exactly_the_requested_bytes() {
    run(
        "range_get_returns_exactly_the_requested_bytes",
        async |store| {
            let bytes = data(10_000, 4);
            put(&store, "r", bytes.clone()).await;
            let path = Path::from("r");

            let got = store.get_range(&path, 10..20).await.expect("bounded range");
            assert_eq!(got, bytes.slice(10..20));

            // An end past the object is cut at its end (x-ms-range bytes=S-E).
            let got = store
                .get_range(&path, 9_990..20_000)
                .await
                .expect("range past the end");
            assert_eq!(got, bytes.slice(9_990..));

            let got = store
                .get_opts(
                    &path,
                    GetOptions::new().with_range(Some(GetRange::Offset(9_000))),
                )
                .await
                .expect("offset range");
            assert_eq!(got.range, 9_000..10_000);
            assert_eq!(got.meta.size, 10_000);
            assert_eq!(got.bytes().await.expect("body"), bytes.slice(9_000..));

            let parts = store
                .get_ranges(&path, &[0..1, 5_000..5_100, 9_999..10_000])
                .await
                .expect("several ranges");
            assert_eq!(
                parts,
                vec![
                    bytes.slice(0..1),
                    bytes.slice(5_000..5_100),
                    bytes.slice(9_999..10_000)
                ]
            );
        },
    )
    .await;
}

#[tokio::test]
async fn range_starting_past_the_end_is_an_error() {
    run("range_starting_past_the_end_is_an_error", async |store| {
        put(&store, "r", data(100, 5)).await;
        // 416 InvalidRange; object_store reports it as a generic request error.
        let result = store.get_range(&Path::from("r"), 100..200).await;
        assert!(
            result.is_err(),
            "range 100..200 of a 100-byte object: {result:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn head_reports_what_get_reports() {
    run("head_reports_what_get_reports", async |store| {
        let etag = put(&store, "h", data(1234, 6)).await;
        let head = store.head(&Path::from("h")).await.expect("head");
        let get = store.get(&Path::from("h")).await.expect("get").meta;
        assert_eq!(head.location, Path::from("h"));
        assert_eq!(head.size, 1234);
        assert_eq!(head.e_tag, etag);
        assert_eq!(head, get);
    })
    .await;
}

#[tokio::test]
async fn missing_objects_are_not_found() {
    run("missing_objects_are_not_found", async |store| {
        let missing = Path::from("no/such/object");
        let head = store.head(&missing).await;
        assert!(
            matches!(head, Err(Error::NotFound { .. })),
            "head: {head:?}"
        );
        let get = store.get(&missing).await;
        assert!(matches!(get, Err(Error::NotFound { .. })), "get: {get:?}");
        let range = store.get_range(&missing, 0..1).await;
        assert!(
            matches!(range, Err(Error::NotFound { .. })),
            "range: {range:?}"
        );
    })
    .await;
}

// ---- listing --------------------------------------------------------------

/// Objects `a/b/1`, `a/b/2`, `a/c`, `d`.
async fn put_tree(store: &MicrosoftAzure) {
    for (i, name) in ["a/b/1", "a/b/2", "a/c", "d"].into_iter().enumerate() {
        put(store, name, data(10 + i, i as u8)).await;
    }
}

#[tokio::test]
async fn list_without_delimiter_returns_every_object_under_the_prefix() {
    run(
        "list_without_delimiter_returns_every_object_under_the_prefix",
        async |store| {
            put_tree(&store).await;
            assert_eq!(
                list_paths(&store, None).await,
                ["a/b/1", "a/b/2", "a/c", "d"]
            );
            assert_eq!(
                list_paths(&store, Some("a")).await,
                ["a/b/1", "a/b/2", "a/c"]
            );
            assert_eq!(list_paths(&store, Some("a/b")).await, ["a/b/1", "a/b/2"]);
            // object_store prefixes are whole path segments: "a/b" does not match "a/bc".
            assert!(list_paths(&store, Some("x")).await.is_empty());

            let metas: Vec<_> = store.list(None).try_collect().await.expect("list");
            let d = metas
                .iter()
                .find(|m| m.location == Path::from("d"))
                .expect("d listed");
            let head = store.head(&Path::from("d")).await.expect("head d");
            assert_eq!(d.size, 13);
            assert_eq!(d.last_modified, head.last_modified);
            // List Blobs gives the ETag unquoted, as the service does; the
            // header is quoted. object_store passes both through as they come.
            let listed = d.e_tag.clone().expect("listed ETag");
            assert_eq!(Some(format!("\"{listed}\"")), head.e_tag);
            // A bare ETag is a valid If-Match value (docs/wire/conditions.md).
            let update = PutMode::Update(UpdateVersion {
                e_tag: Some(listed),
                version: None,
            });
            store
                .put_opts(&Path::from("d"), data(3, 30).into(), update.into())
                .await
                .expect("update with the listed (unquoted) ETag");
        },
    )
    .await;
}

#[tokio::test]
async fn list_with_delimiter_returns_objects_and_common_prefixes() {
    run(
        "list_with_delimiter_returns_objects_and_common_prefixes",
        async |store| {
            put_tree(&store).await;

            let top = store.list_with_delimiter(None).await.expect("list root");
            assert_eq!(top.common_prefixes, vec![Path::from("a")]);
            let objects: Vec<_> = top.objects.iter().map(|m| m.location.to_string()).collect();
            assert_eq!(objects, ["d"]);

            let a = store
                .list_with_delimiter(Some(&Path::from("a")))
                .await
                .expect("list a");
            assert_eq!(a.common_prefixes, vec![Path::from("a/b")]);
            let objects: Vec<_> = a.objects.iter().map(|m| m.location.to_string()).collect();
            assert_eq!(objects, ["a/c"]);
            assert_eq!(a.objects[0].size, 12);

            let b = store
                .list_with_delimiter(Some(&Path::from("a/b")))
                .await
                .expect("list a/b");
            assert!(b.common_prefixes.is_empty());
            let objects: Vec<_> = b.objects.iter().map(|m| m.location.to_string()).collect();
            assert_eq!(objects, ["a/b/1", "a/b/2"]);
        },
    )
    .await;
}

// ---- delete (object_store deletes through Blob Batch) ------------------------

#[tokio::test]
async fn delete_removes_the_object_and_a_second_delete_is_not_found() {
    run(
        "delete_removes_the_object_and_a_second_delete_is_not_found",
        async |store| {
            put(&store, "gone", data(10, 7)).await;
            put(&store, "kept", data(10, 8)).await;
            store.delete(&Path::from("gone")).await.expect("delete");
            let head = store.head(&Path::from("gone")).await;
            assert!(
                matches!(head, Err(Error::NotFound { .. })),
                "after delete: {head:?}"
            );
            assert_eq!(list_paths(&store, None).await, ["kept"]);
            // The batch answers 404 for that part; object_store reports NotFound.
            let again = store.delete(&Path::from("gone")).await;
            assert!(
                matches!(again, Err(Error::NotFound { .. })),
                "delete again: {again:?}"
            );
        },
    )
    .await;
}

// ---- copy -----------------------------------------------------------------

#[tokio::test]
async fn copy_duplicates_the_object_and_overwrites_the_target() {
    run(
        "copy_duplicates_the_object_and_overwrites_the_target",
        async |store| {
            put(&store, "src", data(3_000, 9)).await;
            put(&store, "dst", data(5, 10)).await;
            store
                .copy(&Path::from("src"), &Path::from("dst"))
                .await
                .expect("copy over dst");
            store
                .copy(&Path::from("src"), &Path::from("new/dst"))
                .await
                .expect("copy to new");
            assert_eq!(read(&store, "dst").await, data(3_000, 9));
            assert_eq!(read(&store, "new/dst").await, data(3_000, 9));
            assert_eq!(read(&store, "src").await, data(3_000, 9));
            assert_eq!(list_paths(&store, None).await, ["dst", "new/dst", "src"]);
        },
    )
    .await;
}

#[tokio::test]
async fn copy_if_not_exists_refuses_an_existing_target() {
    run(
        "copy_if_not_exists_refuses_an_existing_target",
        async |store| {
            put(&store, "src", data(10, 11)).await;
            put(&store, "taken", data(10, 12)).await;
            let result = store
                .copy_if_not_exists(&Path::from("src"), &Path::from("taken"))
                .await;
            assert!(
                matches!(result, Err(Error::AlreadyExists { .. })),
                "{result:?}"
            );
            assert_eq!(read(&store, "taken").await, data(10, 12));

            store
                .copy_if_not_exists(&Path::from("src"), &Path::from("free"))
                .await
                .expect("copy to a free name");
            assert_eq!(read(&store, "free").await, data(10, 11));
        },
    )
    .await;
}

#[tokio::test]
async fn copy_of_a_missing_source_is_not_found() {
    run("copy_of_a_missing_source_is_not_found", async |store| {
        let result = store.copy(&Path::from("missing"), &Path::from("to")).await;
        assert!(matches!(result, Err(Error::NotFound { .. })), "{result:?}");
        let to = store.head(&Path::from("to")).await;
        assert!(matches!(to, Err(Error::NotFound { .. })), "{to:?}");
    })
    .await;
}

// ---- multipart upload (Put Block + Put Block List) --------------------------

#[tokio::test]
async fn multipart_upload_of_several_parts_concatenates_them_in_order() {
    run(
        "multipart_upload_of_several_parts_concatenates_them_in_order",
        async |store| {
            let parts = [
                data(1 << 20, 13),
                data(3, 14),
                data(700_000, 15),
                data(1, 16),
            ];
            let path = Path::from("multi/part");
            let mut upload = store.put_multipart(&path).await.expect("start upload");
            for part in &parts {
                upload
                    .put_part(part.clone().into())
                    .await
                    .expect("put part");
            }
            // Nothing is visible before the block list is committed.
            let before = store.head(&path).await;
            assert!(matches!(before, Err(Error::NotFound { .. })), "{before:?}");

            let result = upload.complete().await.expect("complete");
            let expected: Vec<u8> = parts.iter().flat_map(|p| p.iter().copied()).collect();
            let head = store.head(&path).await.expect("head");
            assert_eq!(head.size, expected.len() as u64);
            assert_eq!(head.e_tag, result.e_tag);
            assert_eq!(read(&store, "multi/part").await, Bytes::from(expected));
        },
    )
    .await;
}

#[tokio::test]
async fn write_multipart_streams_chunks_as_blocks() {
    run("write_multipart_streams_chunks_as_blocks", async |store| {
        let path = Path::from("streamed");
        let upload = store.put_multipart(&path).await.expect("start upload");
        let mut writer = WriteMultipart::new_with_chunk_size(upload, 256 * 1024);
        let mut expected = Vec::new();
        for i in 0..10u8 {
            let piece = data(100_000, i);
            writer.write(&piece);
            expected.extend_from_slice(&piece);
        }
        writer.finish().await.expect("finish");
        assert_eq!(read(&store, "streamed").await, Bytes::from(expected));
    })
    .await;
}

#[tokio::test]
async fn multipart_upload_replaces_an_existing_object() {
    run(
        "multipart_upload_replaces_an_existing_object",
        async |store| {
            let old = put(&store, "m", data(50, 17)).await;
            let path = Path::from("m");
            let mut upload = store.put_multipart(&path).await.expect("start upload");
            upload.put_part(data(10, 18).into()).await.expect("part 1");
            upload.put_part(data(10, 19).into()).await.expect("part 2");
            // Staged blocks do not change the committed object.
            assert_eq!(read(&store, "m").await, data(50, 17));
            let new = upload.complete().await.expect("complete").e_tag;
            assert_ne!(new, old);
            let mut expected = data(10, 18).to_vec();
            expected.extend_from_slice(&data(10, 19));
            assert_eq!(read(&store, "m").await, Bytes::from(expected));
        },
    )
    .await;
}

// ---- conditional puts -----------------------------------------------------

#[tokio::test]
async fn put_mode_create_fails_on_an_existing_object() {
    run(
        "put_mode_create_fails_on_an_existing_object",
        async |store| {
            let path = Path::from("once");
            store
                .put_opts(&path, data(10, 20).into(), PutMode::Create.into())
                .await
                .expect("create a new object");
            let again = store
                .put_opts(&path, data(10, 21).into(), PutMode::Create.into())
                .await;
            assert!(
                matches!(again, Err(Error::AlreadyExists { .. })),
                "{again:?}"
            );
            assert_eq!(read(&store, "once").await, data(10, 20));
        },
    )
    .await;
}

#[tokio::test]
async fn put_mode_update_with_a_stale_etag_fails() {
    run("put_mode_update_with_a_stale_etag_fails", async |store| {
        let path = Path::from("versioned");
        let first = put(&store, "versioned", data(10, 22)).await;
        let update = |e_tag: Option<String>| {
            PutMode::Update(UpdateVersion {
                e_tag,
                version: None,
            })
        };
        let second = store
            .put_opts(&path, data(10, 23).into(), update(first.clone()).into())
            .await
            .expect("update with the current ETag")
            .e_tag;
        assert_ne!(second, first);

        let stale = store
            .put_opts(&path, data(10, 24).into(), update(first).into())
            .await;
        assert!(
            matches!(stale, Err(Error::Precondition { .. })),
            "{stale:?}"
        );
        assert_eq!(read(&store, "versioned").await, data(10, 23));

        let missing = store
            .put_opts(
                &Path::from("absent"),
                data(1, 25).into(),
                update(second).into(),
            )
            .await;
        assert!(
            matches!(missing, Err(Error::Precondition { .. })),
            "{missing:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn conditional_get_honours_etags() {
    run("conditional_get_honours_etags", async |store| {
        let etag = put(&store, "c", data(10, 26)).await.expect("etag");
        let path = Path::from("c");
        let not_modified = store
            .get_opts(
                &path,
                GetOptions::new().with_if_none_match(Some(etag.clone())),
            )
            .await;
        assert!(
            matches!(not_modified, Err(Error::NotModified { .. })),
            "{not_modified:?}"
        );
        let failed = store
            .get_opts(&path, GetOptions::new().with_if_match(Some("\"other\"")))
            .await;
        assert!(
            matches!(failed, Err(Error::Precondition { .. })),
            "{failed:?}"
        );
        let ok = store
            .get_opts(&path, GetOptions::new().with_if_match(Some(etag)))
            .await
            .expect("matching If-Match");
        assert_eq!(ok.bytes().await.expect("body"), data(10, 26));
    })
    .await;
}

// ---- object_store's own suite (src/integration.rs) --------------------------
//
// The functions `azure_blob_test` calls against Azurite, each on a fresh
// container. Most of them begin by deleting whatever the store holds; on an
// empty container that sends no request.

#[tokio::test]
async fn suite_put_opts() {
    run("suite_put_opts", async |store| {
        integration::put_opts(&store, true).await
    })
    .await;
}

#[tokio::test]
async fn suite_get_opts() {
    run("suite_get_opts", async |store| {
        integration::get_opts(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_stream_get() {
    run("suite_stream_get", async |store| {
        integration::stream_get(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_list_uses_directories_correctly() {
    run("suite_list_uses_directories_correctly", async |store| {
        integration::list_uses_directories_correctly(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_list_paginated() {
    run("suite_list_paginated", async |store| {
        integration::list_paginated(&store, &store).await
    })
    .await;
}

#[tokio::test]
async fn suite_multipart() {
    run("suite_multipart", async |store| {
        integration::multipart(&store, &store).await
    })
    .await;
}

#[tokio::test]
async fn suite_multipart_put_part_out_of_order() {
    run("suite_multipart_put_part_out_of_order", async |store| {
        integration::multipart_put_part_out_of_order(&store, &store).await
    })
    .await;
}

#[tokio::test]
async fn suite_multipart_race_condition() {
    run("suite_multipart_race_condition", async |store| {
        integration::multipart_race_condition(&store, false).await
    })
    .await;
}

#[tokio::test]
async fn suite_multipart_out_of_order() {
    run("suite_multipart_out_of_order", async |store| {
        integration::multipart_out_of_order(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_put_get_attributes() {
    // azure_blob_test skips this one for Azurite ("doesn't support attributes
    // properly"); Stowage stores all six content properties and metadata.
    run("suite_put_get_attributes", async |store| {
        integration::put_get_attributes(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_put_get_delete_list() {
    run("suite_put_get_delete_list", async |store| {
        integration::put_get_delete_list(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_list_with_delimiter() {
    run("suite_list_with_delimiter", async |store| {
        integration::list_with_delimiter(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_list_with_offset_exclusivity() {
    run("suite_list_with_offset_exclusivity", async |store| {
        integration::list_with_offset_exclusivity(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_rename_and_copy() {
    run("suite_rename_and_copy", async |store| {
        integration::rename_and_copy(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_copy_if_not_exists() {
    run("suite_copy_if_not_exists", async |store| {
        integration::copy_if_not_exists(&store).await
    })
    .await;
}

#[tokio::test]
async fn suite_copy_rename_nonexistent_object() {
    run("suite_copy_rename_nonexistent_object", async |store| {
        integration::copy_rename_nonexistent_object(&store).await
    })
    .await;
}
