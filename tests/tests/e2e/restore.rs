//! Container soft delete and Restore Container (docs/wire/containers.md#container-soft-delete;
//! issue 21): deleted containers stay listed with `include=deleted` and
//! restorable for the retention, their names are free at once, and after
//! the retention (on the injected clock) they are purged and their extents
//! collected.

use std::time::Duration;

use stowage_tests::{Client, TestServer, unique};

use super::blocks::extent_files;
use super::listing::{text, texts};

const DAY: Duration = Duration::from_secs(24 * 3600);
/// Past the collector's 30 s grace period.
const PAST_GRACE: Duration = Duration::from_secs(31);

fn container_path(name: &str) -> String {
    format!("/{name}?restype=container")
}

async fn delete(c: &Client, name: &str) {
    let r = c.delete(&container_path(name)).send().await;
    assert_eq!(r.status, 202, "delete {name}: {}", r.text());
}

async fn list_deleted(c: &Client, prefix: &str) -> String {
    let r = c
        .get(&format!(
            "/?comp=list&include=deleted,metadata&prefix={prefix}"
        ))
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
}

/// The `<Container>` elements of a listing.
fn containers(xml: &str) -> Vec<String> {
    texts(xml, "Container")
}

async fn restore(c: &Client, to: &str, name: &str, version: &str) -> stowage_tests::Response {
    c.put(&format!("/{to}?restype=container&comp=undelete"))
        .header("x-ms-deleted-container-name", name)
        .header("x-ms-deleted-container-version", version)
        .send()
        .await
}

/// A big enough body to live in a file of its own (not inline).
fn big(n: u8) -> Vec<u8> {
    vec![n; 100 * 1024]
}

#[tokio::test]
async fn a_deleted_container_is_listed_with_its_version_and_retention() {
    let server = TestServer::start_with_container_retention(7).await;
    let c = server.client();
    let name = unique("soft");
    c.create_container(&name).await;
    delete(&c, &name).await;

    // A plain listing and Get Container Properties no longer see it.
    let plain = c.get(&format!("/?comp=list&prefix={name}")).send().await;
    assert!(plain.text().contains("<Containers />"), "{}", plain.text());
    let r = c.get(&container_path(&name)).send().await;
    r.assert_error(404, "ContainerNotFound");

    let xml = list_deleted(&c, &name).await;
    let items = containers(&xml);
    assert_eq!(items.len(), 1, "{xml}");
    let item = &items[0];
    assert_eq!(text(item, "Name"), name);
    assert_eq!(text(item, "Deleted"), "true");
    let version = text(item, "Version");
    assert_eq!(version.len(), 16, "{version}");
    assert!(
        version.chars().all(|ch| ch.is_ascii_hexdigit()),
        "{version}"
    );
    assert_eq!(
        text(item, "DeletedTime"),
        httpdate::fmt_http_date(stowage_tests::epoch())
    );
    assert_eq!(text(item, "RemainingRetentionDays"), "7");
    assert_eq!(text(item, "LeaseState"), "expired");
    // The elements of a deleted container come in the reference's order.
    let order = super::listing::property_order(item);
    assert_eq!(
        &order[order.len() - 2..],
        ["DeletedTime", "RemainingRetentionDays"]
    );
    assert!(item.find("<Deleted>").unwrap() < item.find("<Properties>").unwrap());

    server.clock.advance(DAY * 3 + Duration::from_secs(1));
    let xml = list_deleted(&c, &name).await;
    assert_eq!(text(&xml, "RemainingRetentionDays"), "4");
}

#[tokio::test]
async fn the_name_is_free_at_once_and_each_deletion_has_its_own_version() {
    let server = TestServer::start_with_container_retention(7).await;
    let c = server.client();
    let name = unique("reuse");
    c.create_container(&name).await;
    c.put_blob(&name, "first", b"one").await;
    delete(&c, &name).await;
    c.create_container(&name).await;
    c.put_blob(&name, "second", b"two").await;
    delete(&c, &name).await;
    c.create_container(&name).await;

    let xml = list_deleted(&c, &name).await;
    let items = containers(&xml);
    assert_eq!(items.len(), 3, "{xml}");
    // The live container first, then its deletions, oldest first.
    assert!(!items[0].contains("<Deleted>"), "{}", items[0]);
    let versions: Vec<String> = items[1..].iter().map(|i| text(i, "Version")).collect();
    assert!(versions[0] < versions[1], "{versions:?}");

    // The name is taken by the live container: restoring over it is 409.
    let r = restore(&c, &name, &name, &versions[0]).await;
    r.assert_error(409, "ContainerAlreadyExists");

    // Each version comes back with its own blobs.
    delete(&c, &name).await;
    let r = restore(&c, &name, &name, &versions[0]).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(r.body.is_empty());
    assert_eq!(c.get(&format!("/{name}/first")).send().await.text(), "one");
    let r = c.get(&format!("/{name}/second")).send().await;
    r.assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn restore_brings_back_blobs_metadata_and_acl() {
    let server = TestServer::start_with_container_retention(3).await;
    let c = server.client();
    let name = unique("whole");
    let r = c
        .put(&container_path(&name))
        .header("x-ms-meta-owner", "team-a")
        .header("x-ms-blob-public-access", "blob")
        .send()
        .await;
    assert_eq!(r.status, 201);
    let acl = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier>\
        <Id>policy-1</Id><AccessPolicy><Permission>rl</Permission></AccessPolicy>\
        </SignedIdentifier></SignedIdentifiers>";
    let r = c
        .put(&format!("/{name}?restype=container&comp=acl"))
        .header("x-ms-blob-public-access", "blob")
        .body(acl)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    c.put_blob(&name, "dir/a", &big(1)).await;
    c.put_blob(&name, "b", b"small").await;
    let r = c
        .put(&format!("/{name}/b?comp=tags"))
        .body("<Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>")
        .send()
        .await;
    assert_eq!(r.status, 204, "{}", r.text());
    let find = |c: Client| async move {
        let r = c.get("/?comp=blobs&where=%22k%22%3D%27v%27").send().await;
        assert_eq!(r.status, 200, "{}", r.text());
        r.text()
    };
    assert!(find(c.clone()).await.contains(&name));

    delete(&c, &name).await;
    // A soft-deleted container's blobs are not found by their tags.
    assert!(!find(c.clone()).await.contains(&name));
    let version = text(&list_deleted(&c, &name).await, "Version");

    server.clock.advance(DAY * 2);
    let r = restore(&c, &name, &name, &version).await;
    assert_eq!(r.status, 201, "{}", r.text());

    let r = c.get(&container_path(&name)).send().await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-ms-meta-owner").as_deref(), Some("team-a"));
    assert_eq!(r.header("x-ms-blob-public-access").as_deref(), Some("blob"));
    let r = c
        .get(&format!("/{name}?restype=container&comp=acl"))
        .send()
        .await;
    assert!(r.text().contains("<Id>policy-1</Id>"), "{}", r.text());
    assert_eq!(
        c.get(&format!("/{name}/dir/a")).send().await.body.as_ref(),
        big(1).as_slice()
    );
    assert_eq!(c.get(&format!("/{name}/b")).send().await.text(), "small");
    assert!(find(c.clone()).await.contains(&name));
    // It is no longer listed as deleted.
    let xml = list_deleted(&c, &name).await;
    assert_eq!(containers(&xml).len(), 1);
    assert!(!xml.contains("<Deleted>"), "{xml}");
}

#[tokio::test]
async fn restore_refusals() {
    let server = TestServer::start_with_container_retention(7).await;
    let c = server.client();
    let name = unique("refuse");
    c.create_container(&name).await;
    delete(&c, &name).await;
    let version = text(&list_deleted(&c, &name).await, "Version");

    let r = restore(&c, &name, &name, "0000000000000000").await;
    r.assert_error(404, "ContainerNotFound");
    let r = restore(&c, &name, "nosuchcontainer", &version).await;
    r.assert_error(404, "ContainerNotFound");
    let r = c
        .put(&format!("/{name}?restype=container&comp=undelete"))
        .header("x-ms-deleted-container-version", &version)
        .send()
        .await;
    r.assert_error(400, "MissingRequiredHeader");
    let r = c
        .put(&format!("/{name}?restype=container&comp=undelete"))
        .header("x-ms-deleted-container-name", &name)
        .send()
        .await;
    r.assert_error(400, "MissingRequiredHeader");
    let r = c
        .get(&format!("/{name}?restype=container&comp=undelete"))
        .send()
        .await;
    r.assert_error(405, "UnsupportedHttpVerb");

    // Restored once, the deletion is gone: a second restore finds nothing.
    let r = restore(&c, &name, &name, &version).await;
    assert_eq!(r.status, 201, "{}", r.text());
    delete(&c, &name).await;
    let r = restore(&c, &name, &name, &version).await;
    r.assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn without_a_retention_a_deleted_container_is_gone() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("hard");
    c.create_container(&name).await;
    c.put_blob(&name, "a", &big(2)).await;
    delete(&c, &name).await;
    let xml = list_deleted(&c, &name).await;
    assert!(containers(&xml).is_empty(), "{xml}");
    server.clock.advance(PAST_GRACE);
    server.store.collect_garbage().await.expect("collect");
    assert!(extent_files(&server).is_empty());
}

#[tokio::test]
async fn after_the_retention_a_deleted_container_is_purged_and_its_extents_collected() {
    let server = TestServer::start_with_container_retention(2).await;
    let c = server.client();
    let keep = unique("keep");
    c.create_container(&keep).await;
    c.put_blob(&keep, "kept", &big(9)).await;
    let kept = extent_files(&server);
    let name = unique("purge");
    c.create_container(&name).await;
    for i in 0..5u8 {
        c.put_blob(&name, &format!("blob-{i}"), &big(i)).await;
    }
    // A copy in the kept container shares the extent of one of them.
    let r = c
        .put(&format!("/{keep}/copied"))
        .header(
            "x-ms-copy-source",
            &format!("{}/devstoreaccount1/{name}/blob-3", server.base),
        )
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    delete(&c, &name).await;
    let version = text(&list_deleted(&c, &name).await, "Version");

    // Within the retention nothing is collected.
    server.clock.advance(DAY * 2 - Duration::from_secs(1));
    server.store.collect_garbage().await.expect("collect");
    assert_eq!(extent_files(&server).len(), kept.len() + 5);

    // At the end of the retention it can no longer be restored or listed,
    // even before the collector runs.
    server.clock.advance(Duration::from_secs(1));
    let xml = list_deleted(&c, &name).await;
    assert!(containers(&xml).is_empty(), "{xml}");
    let r = restore(&c, &name, &name, &version).await;
    r.assert_error(404, "ContainerNotFound");

    // The collector purges it; after the grace period its extents go,
    // except the one the copy still uses.
    server.store.collect_garbage().await.expect("collect");
    server.clock.advance(PAST_GRACE);
    server.store.collect_garbage().await.expect("collect");
    assert_eq!(extent_files(&server).len(), kept.len() + 1);
    assert_eq!(
        c.get(&format!("/{keep}/copied")).send().await.body.as_ref(),
        big(3).as_slice()
    );
    assert_eq!(
        c.get(&format!("/{keep}/kept")).send().await.body.as_ref(),
        big(9).as_slice()
    );
}

#[tokio::test]
async fn a_restart_keeps_deleted_containers_restorable() {
    let server = TestServer::start_with_container_retention(7).await;
    let c = server.client();
    let name = unique("restart");
    c.create_container(&name).await;
    c.put_blob(&name, "a", &big(4)).await;
    delete(&c, &name).await;
    let version = text(&list_deleted(&c, &name).await, "Version");

    let server = server.restart().await;
    let c = server.client();
    assert_eq!(text(&list_deleted(&c, &name).await, "Version"), version);
    let r = restore(&c, &name, &name, &version).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(
        c.get(&format!("/{name}/a")).send().await.body.as_ref(),
        big(4).as_slice()
    );
}

#[tokio::test]
async fn deleted_containers_page_with_the_live_ones() {
    let server = TestServer::start_with_container_retention(7).await;
    let c = server.client();
    let prefix = unique("page");
    let names: Vec<String> = (0..4).map(|i| format!("{prefix}-{i}")).collect();
    for n in &names {
        c.create_container(n).await;
    }
    // 0 and 2 deleted, 2 twice (and created again in between).
    delete(&c, &names[0]).await;
    delete(&c, &names[2]).await;
    c.create_container(&names[2]).await;
    delete(&c, &names[2]).await;

    let mut seen = Vec::new();
    let mut marker = String::new();
    loop {
        let r = c
            .get(&format!(
                "/?comp=list&include=deleted&prefix={prefix}&maxresults=1{marker}"
            ))
            .send()
            .await;
        let xml = r.text();
        for item in containers(&xml) {
            seen.push((text(&item, "Name"), item.contains("<Deleted>")));
        }
        let next = text(&xml, "NextMarker");
        if next.is_empty() {
            break;
        }
        marker = format!("&marker={next}");
    }
    let want = vec![
        (names[0].clone(), true),
        (names[1].clone(), false),
        (names[2].clone(), true),
        (names[2].clone(), true),
        (names[3].clone(), false),
    ];
    assert_eq!(seen, want);
}
