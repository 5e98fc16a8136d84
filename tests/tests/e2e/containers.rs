//! Container operations (docs/wire/listing.md#list-containers, docs/wire/containers.md, docs/wire/containers.md#delete-container;
//! docs/wire/listing.md#list-containers; names docs/wire/requests.md#names; metadata docs/wire/requests.md#metadata).

use std::time::Duration;

use stowage_tests::{ACCOUNT, Client, TestServer, unique};

use super::errors::{date_and_version, raw};
use super::listing::{property_order, text, texts};

fn container_path(name: &str) -> String {
    format!("/{name}?restype=container")
}

async fn list_containers(c: &Client, query: &str) -> String {
    let r = c.get(&format!("/?comp=list{query}")).send().await;
    assert_eq!(r.status, 200, "{query}: {}", r.text());
    assert_eq!(r.header("content-type").as_deref(), Some("application/xml"));
    r.text()
}

// ---------------------------------------------------------------------------
// Create, Get Properties, Delete

#[tokio::test]
async fn create_container_is_201_with_etag_and_last_modified() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("create");
    let r = c.put(&container_path(&name)).send().await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(r.body.is_empty());
    let etag = r.etag();
    assert!(
        etag.len() == 20 && etag.starts_with("\"0x") && etag.ends_with('"'),
        "{etag}"
    );
    assert!(
        etag[3..19]
            .chars()
            .all(|ch| ch.is_ascii_digit() || ('A'..='F').contains(&ch)),
        "{etag}"
    );
    assert_eq!(
        r.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT")
    );
}

#[tokio::test]
async fn get_container_properties_reports_the_container() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("props");
    let created = c.put(&container_path(&name)).send().await;
    assert_eq!(created.status, 201);
    for method in ["GET", "HEAD"] {
        let r = c.request(method, &container_path(&name)).send().await;
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        assert!(r.body.is_empty(), "{method}");
        assert_eq!(r.etag(), created.etag(), "{method}");
        assert_eq!(r.header("last-modified"), created.header("last-modified"));
        let expected = [
            ("x-ms-lease-status", Some("unlocked")),
            ("x-ms-lease-state", Some("available")),
            ("x-ms-lease-duration", None),
            ("x-ms-blob-public-access", None),
            ("x-ms-has-immutability-policy", Some("false")),
            ("x-ms-has-legal-hold", Some("false")),
            (
                "x-ms-default-encryption-scope",
                Some("$account-encryption-key"),
            ),
            ("x-ms-deny-encryption-scope-override", Some("false")),
        ];
        for (header, value) in expected {
            assert_eq!(r.header(header).as_deref(), value, "{method} {header}");
        }
    }
}

#[tokio::test]
async fn creating_an_existing_container_is_409_container_already_exists() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("twice");
    c.create_container(&name).await;
    let before = c.get(&container_path(&name)).send().await;
    server.clock.advance(Duration::from_secs(5));
    let r = c
        .put(&container_path(&name))
        .header("x-ms-meta-new", "value")
        .send()
        .await;
    r.assert_error(409, "ContainerAlreadyExists");
    // The existing container is untouched.
    let after = c.get(&container_path(&name)).send().await;
    assert_eq!(after.etag(), before.etag());
    assert_eq!(after.header("x-ms-meta-new"), None);
}

#[tokio::test]
async fn operations_on_a_missing_container_are_404_container_not_found() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("missing");
    let cases = [
        c.get(&container_path(&name)),
        c.head(&container_path(&name)),
        c.get(&format!("/{name}?restype=container&comp=metadata")),
        c.head(&format!("/{name}?restype=container&comp=metadata")),
        c.put(&format!("/{name}?restype=container&comp=metadata"))
            .header("x-ms-meta-a", "b"),
        c.delete(&container_path(&name)),
        c.get(&format!("/{name}?restype=container&comp=list")),
        c.put(&format!("/{name}/blob"))
            .header("x-ms-blob-type", "BlockBlob")
            .body(&b"x"[..]),
        c.get(&format!("/{name}/blob")),
    ];
    for request in cases {
        let r = request.send().await;
        r.assert_error(404, "ContainerNotFound");
    }
}

#[tokio::test]
async fn delete_container_is_202_and_removes_it_and_its_blobs() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("delete");
    c.create_container(&name).await;
    c.put_blob(&name, "a/b", b"data").await;
    let r = c.delete(&container_path(&name)).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert!(r.body.is_empty());
    c.get(&container_path(&name))
        .send()
        .await
        .assert_error(404, "ContainerNotFound");
    c.delete(&container_path(&name))
        .send()
        .await
        .assert_error(404, "ContainerNotFound");
    // The name is free at once (Stowage, docs/wire/containers.md#create-container), and the
    // new container is empty.
    c.create_container(&name).await;
    c.get(&format!("/{name}/a/b"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    let xml = c
        .get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert!(xml.contains("<Blobs />"), "{xml}");
}

// ---------------------------------------------------------------------------
// Names (docs/wire/requests.md#names)

#[tokio::test]
async fn container_names_are_validated_on_create() {
    let server = TestServer::start().await;
    let c = server.client();
    let a63 = "a".repeat(63);
    let a64 = "a".repeat(64);
    // (name as sent in the path, expected status, expected code)
    let cases: &[(&str, u16, Option<&str>)] = &[
        ("abc", 201, None),
        ("a-b-c", 201, None),
        ("0abc9", 201, None),
        (&a63, 201, None),
        ("$root", 201, None),
        ("$logs", 201, None),
        ("$web", 201, None),
        ("ab", 400, Some("OutOfRangeInput")),
        ("a", 400, Some("OutOfRangeInput")),
        (&a64, 400, Some("OutOfRangeInput")),
        ("Abc", 400, Some("InvalidResourceName")),
        ("ABC", 400, Some("InvalidResourceName")),
        ("ab_c", 400, Some("InvalidResourceName")),
        ("ab.c", 400, Some("InvalidResourceName")),
        ("-abc", 400, Some("InvalidResourceName")),
        ("abc-", 400, Some("InvalidResourceName")),
        ("a--bc", 400, Some("InvalidResourceName")),
        ("$other", 400, Some("InvalidResourceName")),
        ("a%20bc", 400, Some("InvalidResourceName")),
        ("caf%C3%A9", 400, Some("InvalidResourceName")),
    ];
    for (name, status, code) in cases {
        let r = c.put(&container_path(name)).send().await;
        match code {
            None => assert_eq!(r.status, *status, "{name}: {}", r.text()),
            Some(code) => {
                assert_eq!(r.status, *status, "{name}: {}", r.text());
                r.assert_error(*status, code);
            }
        }
    }
    let listed = texts(&list_containers(&c, "").await, "Name");
    assert_eq!(
        listed,
        [
            "$logs",
            "$root",
            "$web",
            "0abc9",
            "a-b-c",
            a63.as_str(),
            "abc"
        ]
    );
}

#[tokio::test]
async fn other_operations_on_a_bad_container_name_are_400_as_well() {
    let server = TestServer::start().await;
    let c = server.client();
    let cases = [
        ("Bad_Name", "InvalidResourceName"),
        ("ab", "OutOfRangeInput"),
    ];
    for (name, code) in cases {
        for request in [
            c.get(&container_path(name)),
            c.get(&format!("/{name}?restype=container&comp=list")),
            c.delete(&container_path(name)),
            c.get(&format!("/{name}/blob")),
        ] {
            let r = request.send().await;
            r.assert_error(400, code);
        }
    }
}

// ---------------------------------------------------------------------------
// Metadata

#[tokio::test]
async fn metadata_given_at_creation_is_returned_by_properties_and_metadata() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("meta");
    let r = c
        .put(&container_path(&name))
        .header("x-ms-meta-owner", "alice")
        .header("x-ms-meta-project", "stowage tests")
        .header("x-ms-meta-empty", "")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    for path in [
        container_path(&name),
        format!("/{name}?restype=container&comp=metadata"),
    ] {
        for method in ["GET", "HEAD"] {
            let g = c.request(method, &path).send().await;
            assert_eq!(g.status, 200, "{method} {path}");
            assert_eq!(g.header("x-ms-meta-owner").as_deref(), Some("alice"));
            assert_eq!(
                g.header("x-ms-meta-project").as_deref(),
                Some("stowage tests")
            );
            assert_eq!(g.header("x-ms-meta-empty").as_deref(), Some(""));
            assert_eq!(g.etag(), r.etag());
            assert_eq!(g.header("last-modified"), r.header("last-modified"));
        }
    }
}

#[tokio::test]
async fn metadata_names_keep_the_case_they_were_written_in() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("case");
    let [date, version] = date_and_version(&server);
    let path = format!("/{ACCOUNT}/{name}?restype=container");
    let r = raw(
        &server,
        "PUT",
        &path,
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("Content-Length", "0"),
            ("x-ms-meta-Owner", "alice"),
            ("x-ms-meta-camelCase", "yes"),
        ],
        b"",
        true,
    )
    .await;
    assert_eq!(r.status, 201, "{}\n{}", r.head, r.text());
    let [date, version] = date_and_version(&server);
    let r = raw(
        &server,
        "GET",
        &path,
        &[(date.0, &date.1), (version.0, &version.1)],
        b"",
        true,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let lines = r.header_lines();
    assert!(lines.contains(&"x-ms-meta-Owner: alice"), "{}", r.head);
    assert!(lines.contains(&"x-ms-meta-camelCase: yes"), "{}", r.head);
    let xml = list_containers(&c, &format!("&prefix={name}&include=metadata")).await;
    assert_eq!(texts(&xml, "Owner"), ["alice"]);
    assert_eq!(texts(&xml, "camelCase"), ["yes"]);
}

#[tokio::test]
async fn set_container_metadata_replaces_the_set_and_changes_etag_and_last_modified() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("setmeta");
    let created = c
        .put(&container_path(&name))
        .header("x-ms-meta-old", "1")
        .header("x-ms-meta-keep", "1")
        .send()
        .await;
    assert_eq!(created.status, 201);
    server.clock.advance(Duration::from_secs(2));
    let set = c
        .put(&format!("/{name}?restype=container&comp=metadata"))
        .header("x-ms-meta-keep", "2")
        .header("x-ms-meta-new", "3")
        .send()
        .await;
    assert_eq!(set.status, 200, "{}", set.text());
    assert_ne!(set.etag(), created.etag());
    assert_eq!(
        set.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:09 GMT")
    );
    let g = c.get(&container_path(&name)).send().await;
    assert_eq!(g.header("x-ms-meta-old"), None);
    assert_eq!(g.header("x-ms-meta-keep").as_deref(), Some("2"));
    assert_eq!(g.header("x-ms-meta-new").as_deref(), Some("3"));
    assert_eq!(g.etag(), set.etag());
    assert_eq!(g.header("last-modified"), set.header("last-modified"));

    // None sent: all cleared, and another new ETag.
    let cleared = c
        .put(&format!("/{name}?restype=container&comp=metadata"))
        .send()
        .await;
    assert_eq!(cleared.status, 200);
    assert_ne!(cleared.etag(), set.etag());
    let g = c
        .get(&format!("/{name}?restype=container&comp=metadata"))
        .send()
        .await;
    let meta: Vec<_> = g
        .headers
        .keys()
        .filter(|k| k.as_str().starts_with("x-ms-meta-"))
        .collect();
    assert!(meta.is_empty(), "{meta:?}");
}

#[tokio::test]
async fn reads_do_not_change_the_container_etag() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("reads");
    c.create_container(&name).await;
    let before = c.get(&container_path(&name)).send().await.etag();
    server.clock.advance(Duration::from_secs(3));
    c.get(&format!("/{name}?restype=container&comp=metadata"))
        .send()
        .await;
    c.get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await;
    list_containers(&c, "").await;
    let after = c.get(&container_path(&name)).send().await;
    assert_eq!(after.etag(), before);
    assert_eq!(
        after.header("last-modified").as_deref(),
        Some("Tue, 03 Sep 2024 10:15:07 GMT")
    );
}

#[tokio::test]
async fn bad_metadata_is_refused_on_create_and_on_set() {
    let server = TestServer::start().await;
    let c = server.client();
    let existing = unique("badmeta");
    c.create_container(&existing).await;
    let big = "v".repeat(8192 - 4);
    let too_big = "v".repeat(8192 - 3);
    // (header name, value, expected code or None for accepted)
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("x-ms-meta-name", &big, None),
        ("x-ms-meta-_under_score1", "v", None),
        ("x-ms-meta-", "v", Some("EmptyMetadataKey")),
        ("x-ms-meta-1abc", "v", Some("InvalidMetadata")),
        ("x-ms-meta-a-b", "v", Some("InvalidMetadata")),
        ("x-ms-meta-a.b", "v", Some("InvalidMetadata")),
        ("x-ms-meta-name", &too_big, Some("MetadataTooLarge")),
    ];
    for (header, value, code) in cases {
        let fresh = unique("badmeta");
        let create = c
            .put(&container_path(&fresh))
            .header(header, value)
            .send()
            .await;
        let set = c
            .put(&format!("/{existing}?restype=container&comp=metadata"))
            .header(header, value)
            .send()
            .await;
        match code {
            None => {
                assert_eq!(create.status, 201, "create {header}: {}", create.text());
                assert_eq!(set.status, 200, "set {header}: {}", set.text());
            }
            Some(code) => {
                create.assert_error(400, code);
                set.assert_error(400, code);
                c.get(&container_path(&fresh))
                    .send()
                    .await
                    .assert_error(404, "ContainerNotFound");
            }
        }
    }
}

#[tokio::test]
async fn metadata_totalling_more_than_8_kib_over_several_pairs_is_too_large() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("big");
    let value = "v".repeat(2000);
    let mut r = c.put(&container_path(&name));
    // 5 × (2 + 2000) = 10010 bytes of names plus values.
    for i in 0..5 {
        r = r.header(&format!("x-ms-meta-k{i}"), &value);
    }
    r.send().await.assert_error(400, "MetadataTooLarge");
}

#[tokio::test]
async fn metadata_names_differing_only_in_case_are_400() {
    let server = TestServer::start().await;
    let name = unique("dupe");
    let [date, version] = date_and_version(&server);
    let path = format!("/{ACCOUNT}/{name}?restype=container");
    let r = raw(
        &server,
        "PUT",
        &path,
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("Content-Length", "0"),
            ("x-ms-meta-Owner", "a"),
            ("x-ms-meta-owner", "b"),
        ],
        b"",
        true,
    )
    .await;
    // docs/wire/requests.md#metadata says InvalidMetadata (code unverified); the
    // repeated signed header may be refused first by Shared Key
    // (docs/wire/auth.md#the-string-to-sign rule 7, InvalidHeaderValue). Status first.
    assert_eq!(r.status, 400, "{}", r.text());
    let code = r.header("x-ms-error-code").unwrap_or_default();
    assert!(
        code == "InvalidMetadata" || code == "InvalidHeaderValue",
        "{code}"
    );
    server
        .client()
        .get(&container_path(&name))
        .send()
        .await
        .assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn a_non_ascii_metadata_value_is_400_invalid_metadata() {
    let server = TestServer::start().await;
    let name = unique("nonascii");
    let [date, version] = date_and_version(&server);
    let path = format!("/{ACCOUNT}/{name}?restype=container");
    let r = raw(
        &server,
        "PUT",
        &path,
        &[
            (date.0, &date.1),
            (version.0, &version.1),
            ("Content-Length", "0"),
            ("x-ms-meta-city", "Z\u{fc}rich"),
        ],
        b"",
        true,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.header("x-ms-error-code").as_deref(),
        Some("InvalidMetadata")
    );
}

// ---------------------------------------------------------------------------
// Public access

#[tokio::test]
async fn public_access_round_trips_through_properties_and_listing() {
    let server = TestServer::start().await;
    let c = server.client();
    for access in [Some("container"), Some("blob"), None] {
        let name = unique("public");
        let mut r = c.put(&container_path(&name));
        if let Some(a) = access {
            r = r.header("x-ms-blob-public-access", a);
        }
        assert_eq!(r.send().await.status, 201);
        let g = c.get(&container_path(&name)).send().await;
        assert_eq!(
            g.header("x-ms-blob-public-access").as_deref(),
            access,
            "{access:?}"
        );
        let xml = list_containers(&c, &format!("&prefix={name}")).await;
        let expected: Vec<&str> = access.into_iter().collect();
        assert_eq!(texts(&xml, "PublicAccess"), expected, "{xml}");
    }
}

#[tokio::test]
async fn an_unknown_public_access_level_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("public");
    for bad in ["private", "Container", "everyone", ""] {
        let r = c
            .put(&container_path(&name))
            .header("x-ms-blob-public-access", bad)
            .send()
            .await;
        r.assert_error(400, "InvalidHeaderValue");
    }
    c.get(&container_path(&name))
        .send()
        .await
        .assert_error(404, "ContainerNotFound");
}

// ---------------------------------------------------------------------------
// List Containers (docs/wire/listing.md#list-containers)

#[tokio::test]
async fn list_containers_returns_names_in_order_with_quoted_etags() {
    let server = TestServer::start().await;
    let c = server.client();
    let mut names: Vec<String> = (0..4).map(|_| unique("lc")).collect();
    for n in &names {
        c.create_container(n).await;
    }
    names.sort();
    let xml = list_containers(&c, "").await;
    assert_eq!(texts(&xml, "Name"), names);
    let etags = texts(&xml, "Etag");
    let modified = texts(&xml, "Last-Modified");
    for (i, n) in names.iter().enumerate() {
        let g = c.get(&container_path(n)).send().await;
        assert_eq!(etags[i], g.etag(), "quoted, as in the header");
        assert_eq!(Some(modified[i].clone()), g.header("last-modified"));
    }
    assert_eq!(texts(&xml, "LeaseStatus"), vec!["unlocked"; 4]);
    assert_eq!(texts(&xml, "LeaseState"), vec!["available"; 4]);
    assert!(texts(&xml, "LeaseDuration").is_empty());
    assert_eq!(texts(&xml, "HasImmutabilityPolicy"), vec!["false"; 4]);
    assert_eq!(texts(&xml, "HasLegalHold"), vec!["false"; 4]);
    assert_eq!(
        texts(&xml, "DefaultEncryptionScope"),
        vec!["$account-encryption-key"; 4]
    );
    assert_eq!(texts(&xml, "DenyEncryptionScopeOverride"), vec!["false"; 4]);
    assert!(!xml.contains("<Metadata"), "{xml}");
    assert!(xml.contains("<NextMarker />"), "{xml}");
    for tag in ["Prefix", "Marker", "MaxResults"] {
        assert!(!xml.contains(&format!("<{tag}")), "{tag}: {xml}");
    }
    let start = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"{}/{ACCOUNT}/\">",
        server.base
    );
    assert!(xml.replace(['\n', '\r'], "").starts_with(&start), "{xml}");
}

#[tokio::test]
async fn list_containers_filters_by_prefix() {
    let server = TestServer::start().await;
    let c = server.client();
    for n in ["alpha-one", "alpha-two", "beta-one", "alphabet"] {
        c.create_container(n).await;
    }
    let cases: &[(&str, &[&str])] = &[
        ("alpha-", &["alpha-one", "alpha-two"]),
        ("alpha", &["alpha-one", "alpha-two", "alphabet"]),
        ("beta", &["beta-one"]),
        ("gamma", &[]),
    ];
    for (prefix, expected) in cases {
        let xml = list_containers(&c, &format!("&prefix={prefix}")).await;
        assert_eq!(texts(&xml, "Name"), *expected, "{prefix}");
        assert_eq!(text(&xml, "Prefix"), *prefix);
        if expected.is_empty() {
            assert!(xml.contains("<Containers />"), "{xml}");
        }
    }
}

#[tokio::test]
async fn list_containers_pages_through_next_marker() {
    let server = TestServer::start().await;
    let c = server.client();
    let mut names: Vec<String> = (0..7).map(|_| unique("page")).collect();
    for n in &names {
        c.create_container(n).await;
    }
    names.sort();
    for page_size in [1usize, 2, 3, 7, 8] {
        let mut seen = Vec::new();
        let mut marker: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut q = format!("&maxresults={page_size}");
            if let Some(m) = &marker {
                q.push_str(&format!("&marker={m}"));
            }
            let xml = list_containers(&c, &q).await;
            pages += 1;
            let page = texts(&xml, "Name");
            assert!(page.len() <= page_size);
            assert_eq!(text(&xml, "MaxResults"), page_size.to_string());
            if let Some(m) = &marker {
                assert_eq!(&text(&xml, "Marker"), m);
            }
            seen.extend(page);
            let next = text(&xml, "NextMarker");
            if next.is_empty() {
                break;
            }
            marker = Some(next);
            assert!(pages < 100);
        }
        assert_eq!(seen, names, "maxresults={page_size}");
        assert_eq!(pages, names.len().div_ceil(page_size), "{page_size}");
    }
}

#[tokio::test]
async fn a_list_containers_marker_stays_valid_when_its_container_is_deleted() {
    let server = TestServer::start().await;
    let c = server.client();
    for n in ["aaa", "bbb", "ccc", "ddd"] {
        c.create_container(n).await;
    }
    let xml = list_containers(&c, "&maxresults=2").await;
    assert_eq!(texts(&xml, "Name"), ["aaa", "bbb"]);
    let marker = text(&xml, "NextMarker");
    assert_eq!(c.delete("/bbb?restype=container").send().await.status, 202);
    let xml = list_containers(&c, &format!("&marker={marker}")).await;
    assert_eq!(texts(&xml, "Name"), ["ccc", "ddd"]);
}

#[tokio::test]
async fn list_containers_with_include_metadata_adds_metadata_elements() {
    let server = TestServer::start().await;
    let c = server.client();
    let r = c
        .put("/archive?restype=container")
        .header("x-ms-meta-owner", "ops")
        .send()
        .await;
    assert_eq!(r.status, 201);
    c.create_container("logs").await;
    let xml = list_containers(&c, "&include=metadata").await;
    assert_eq!(texts(&xml, "Name"), ["archive", "logs"]);
    assert_eq!(texts(&xml, "owner"), ["ops"]);
    assert_eq!(texts(&xml, "Metadata").len(), 2);
    assert!(xml.contains("<Metadata />"), "{xml}");
    // The other accepted options change nothing.
    for include in ["system", "deleted", "metadata,system,deleted", "METADATA"] {
        let xml = list_containers(&c, &format!("&include={include}")).await;
        assert_eq!(texts(&xml, "Name"), ["archive", "logs"], "{include}");
    }
}

#[tokio::test]
async fn bad_list_containers_parameters_are_400() {
    let server = TestServer::start().await;
    let c = server.client();
    c.create_container("one").await;
    let cases = [
        ("&maxresults=0", "OutOfRangeQueryParameterValue"),
        ("&maxresults=x", "InvalidQueryParameterValue"),
        ("&marker=one", "InvalidQueryParameterValue"),
        ("&include=bogus", "InvalidQueryParameterValue"),
    ];
    for (query, code) in cases {
        c.get(&format!("/?comp=list{query}"))
            .send()
            .await
            .assert_error(400, code);
    }
}

#[tokio::test]
async fn list_containers_works_on_the_account_url_with_a_trailing_slash_or_without() {
    let server = TestServer::start().await;
    let c = server.client();
    c.create_container("abc").await;
    for path in ["/?comp=list", "?comp=list"] {
        let r = c.get(path).send().await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(texts(&r.text(), "Name"), ["abc"], "{path}");
    }
}

#[tokio::test]
async fn encryption_scope_headers_are_stored_and_echoed() {
    let server = TestServer::start().await;
    let c = server.client();
    let name = unique("scope");
    let r = c
        .put(&container_path(&name))
        .header("x-ms-default-encryption-scope", "myscope")
        .header("x-ms-deny-encryption-scope-override", "true")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let g = c.get(&container_path(&name)).send().await;
    assert_eq!(
        g.header("x-ms-default-encryption-scope").as_deref(),
        Some("myscope")
    );
    assert_eq!(
        g.header("x-ms-deny-encryption-scope-override").as_deref(),
        Some("true")
    );
    let xml = list_containers(&c, &format!("&prefix={name}")).await;
    assert_eq!(texts(&xml, "DefaultEncryptionScope"), ["myscope"]);
    assert_eq!(texts(&xml, "DenyEncryptionScopeOverride"), ["true"]);
}

#[tokio::test]
async fn blobs_live_in_the_special_containers_too() {
    let server = TestServer::start().await;
    let c = server.client();
    for name in ["$root", "$logs", "$web"] {
        c.create_container(name).await;
        c.put_blob(name, "index.html", name.as_bytes()).await;
        let r = c.get(&format!("/{name}/index.html")).send().await;
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        assert_eq!(&r.body[..], name.as_bytes());
        let xml = c
            .get(&format!("/{name}?restype=container&comp=list"))
            .send()
            .await
            .text();
        assert_eq!(texts(&xml, "Name"), ["index.html"], "{name}");
    }
}

#[tokio::test]
async fn a_container_entry_has_its_properties_in_the_order_of_spec_2() {
    let server = TestServer::start().await;
    let c = server.client();
    let r = c
        .put("/public?restype=container")
        .header("x-ms-blob-public-access", "container")
        .send()
        .await;
    assert_eq!(r.status, 201);
    let xml = list_containers(&c, "").await;
    assert_eq!(
        property_order(&xml),
        [
            "Last-Modified",
            "Etag",
            "LeaseStatus",
            "LeaseState",
            "PublicAccess",
            "HasImmutabilityPolicy",
            "HasLegalHold",
            "DefaultEncryptionScope",
            "DenyEncryptionScopeOverride",
        ],
        "{xml}"
    );
    // Name first, then Properties; NextMarker after Containers.
    let at = |tag: &str| xml.find(tag).unwrap_or_else(|| panic!("{tag} in {xml}"));
    assert!(at("<Name>") < at("<Properties>"));
    assert!(at("</Containers>") < at("<NextMarker"));
}
