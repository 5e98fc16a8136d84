//! Blob index tags: Set / Get Blob Tags, `x-ms-tags`, `x-ms-tag-count`,
//! `include=tags`, Find Blobs by Tags at both scopes with paging,
//! `x-ms-if-tags` on the operations that take it, and the SAS letters `t`
//! and `f` (docs/wire/tags.md).

use stowage_tests::{ACCOUNT, Client, Response, TestServer, account_sas, container_sas, unique};

async fn setup(server: &TestServer) -> (Client, String) {
    let c = server.client();
    let name = unique("tags");
    c.create_container(&name).await;
    (c, name)
}

fn tags_body(pairs: &[(&str, &str)]) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet>");
    for (k, v) in pairs {
        s.push_str(&format!("<Tag><Key>{k}</Key><Value>{v}</Value></Tag>"));
    }
    s.push_str("</TagSet></Tags>");
    s
}

async fn set_tags(c: &Client, path: &str, pairs: &[(&str, &str)]) -> Response {
    c.put(&format!("{path}?comp=tags"))
        .header("content-type", "application/xml; charset=UTF-8")
        .body(tags_body(pairs))
        .send()
        .await
}

async fn get_tags(c: &Client, path: &str) -> Response {
    c.get(&format!("{path}?comp=tags")).send().await
}

/// `x-ms-tags` on Put Blob.
async fn put_tagged(c: &Client, container: &str, blob: &str, tags: &str) -> Response {
    c.put(&format!("/{container}/{blob}"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-tags", tags)
        .body(&b"data"[..])
        .send()
        .await
}

/// The (container, name) pairs of a Find Blobs by Tags answer, and its
/// NextMarker.
fn found(r: &Response) -> (Vec<(String, String)>, String) {
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.text();
    let mut out = Vec::new();
    for blob in text.split("<Blob>").skip(1) {
        let field = |tag: &str| {
            let open = format!("<{tag}>");
            let start = blob.find(&open).expect(tag) + open.len();
            let end = blob[start..].find('<').unwrap() + start;
            blob[start..end].to_owned()
        };
        out.push((field("ContainerName"), field("Name")));
    }
    let marker = text
        .split("<NextMarker>")
        .nth(1)
        .map(|s| s[..s.find('<').unwrap()].to_owned())
        .unwrap_or_default();
    (out, marker)
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[tokio::test]
async fn set_and_get_tags_keep_the_etag_and_count_shows_on_reads() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    let put = c.put_blob(&name, "b", b"hello").await;
    let path = format!("/{name}/b");
    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-tag-count"), None);
    let empty = get_tags(&c, &path).await;
    assert_eq!(empty.status, 200);
    assert!(
        empty.text().contains("<Tags><TagSet /></Tags>"),
        "{}",
        empty.text()
    );

    let r = set_tags(&c, &path, &[("project", "alpha"), ("Rank", "010")]).await;
    assert_eq!(r.status, 204, "{}", r.text());
    let got = get_tags(&c, &path).await;
    assert_eq!(
        got.header("content-type").as_deref(),
        Some("application/xml")
    );
    let text = got.text();
    assert!(
        text.contains("<Tag><Key>project</Key><Value>alpha</Value></Tag>"),
        "{text}"
    );
    assert!(
        text.contains("<Tag><Key>Rank</Key><Value>010</Value></Tag>"),
        "{text}"
    );

    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-tag-count").as_deref(), Some("2"));
    assert_eq!(head.etag(), put.etag(), "tags do not change the ETag");
    assert_eq!(head.header("last-modified"), put.header("last-modified"));
    let get = c.get(&path).send().await;
    assert_eq!(get.header("x-ms-tag-count").as_deref(), Some("2"));

    // An empty set removes them all.
    assert_eq!(set_tags(&c, &path, &[]).await.status, 204);
    let head = c.head(&path).send().await;
    assert_eq!(head.header("x-ms-tag-count"), None);
}

#[tokio::test]
async fn tags_of_a_missing_blob_are_404_and_versionid_finds_nothing() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    get_tags(&c, &format!("/{name}/absent"))
        .await
        .assert_error(404, "BlobNotFound");
    set_tags(&c, &format!("/{name}/absent"), &[("k", "v")])
        .await
        .assert_error(404, "BlobNotFound");
    c.put_blob(&name, "b", b"x").await;
    // Versioning is off: no version id names anything.
    c.get(&format!(
        "/{name}/b?comp=tags&versionid=2024-01-01T00:00:00.0000000Z"
    ))
    .send()
    .await
    .assert_error(404, "BlobNotFound");
}

#[tokio::test]
async fn tag_rules_are_400_with_the_service_codes() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    c.put_blob(&name, "b", b"x").await;
    let path = format!("/{name}/b");
    let eleven: Vec<(String, String)> = (0..11).map(|i| (format!("k{i}"), "v".into())).collect();
    let eleven: Vec<(&str, &str)> = eleven
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let long_key = "k".repeat(129);
    let long_value = "v".repeat(257);
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (eleven, "TagsTooLarge"),
        (vec![("", "v")], "EmptyTagName"),
        (vec![(long_key.as_str(), "v")], "TagsTooLarge"),
        (vec![("k", long_value.as_str())], "TagsTooLarge"),
        (vec![("k!", "v")], "InvalidTag"),
        (vec![("k", "v"), ("k", "w")], "DuplicateTagNames"),
    ];
    for (pairs, code) in cases {
        set_tags(&c, &path, &pairs).await.assert_error(400, code);
    }
    c.put(&format!("{path}?comp=tags"))
        .body("<Tags><TagSet><Tag>")
        .send()
        .await
        .assert_error(400, "InvalidXmlDocument");
    // The same rules on `x-ms-tags`; nothing is written.
    put_tagged(&c, &name, "h", "a%21=v")
        .await
        .assert_error(400, "InvalidTag");
    put_tagged(&c, &name, "h", "=v")
        .await
        .assert_error(400, "EmptyTagName");
    c.head(&format!("/{name}/h"))
        .send()
        .await
        .assert_error(404, "BlobNotFound");
    // Case-sensitive keys are two tags.
    assert_eq!(
        set_tags(&c, &path, &[("K", "1"), ("k", "2")]).await.status,
        204
    );
}

#[tokio::test]
async fn x_ms_tags_set_tags_and_an_overwrite_without_them_clears_them() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    let r = put_tagged(&c, &name, "b", "project=alpha&path=a%2Fb+c").await;
    assert_eq!(r.status, 201, "{}", r.text());
    let text = get_tags(&c, &format!("/{name}/b")).await.text();
    assert!(
        text.contains("<Key>path</Key><Value>a/b c</Value>"),
        "{text}"
    );
    assert!(
        text.contains("<Key>project</Key><Value>alpha</Value>"),
        "{text}"
    );
    c.put_blob(&name, "b", b"again").await;
    let head = c.head(&format!("/{name}/b")).send().await;
    assert_eq!(head.header("x-ms-tag-count"), None);

    // Put Block List takes them too.
    let id = enc("YmxvY2sx");
    let r = c
        .put(&format!("/{name}/bl?comp=block&blockid={id}"))
        .body(&b"blk"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c
        .put(&format!("/{name}/bl?comp=blocklist"))
        .header("x-ms-tags", "stage=done")
        .body("<BlockList><Latest>YmxvY2sx</Latest></BlockList>")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let head = c.head(&format!("/{name}/bl")).send().await;
    assert_eq!(head.header("x-ms-tag-count").as_deref(), Some("1"));

    // Copy Blob gives the destination the tags of its header, not the source's.
    let source = format!("{}/{ACCOUNT}/{name}/b", server.base);
    let r = c
        .put(&format!("/{name}/copy"))
        .header("x-ms-copy-source", &source)
        .header("x-ms-tags", "copied=yes")
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    let text = get_tags(&c, &format!("/{name}/copy")).await.text();
    assert!(
        text.contains("<Key>copied</Key><Value>yes</Value>"),
        "{text}"
    );
}

#[tokio::test]
async fn snapshots_keep_the_tags_of_their_base_and_take_their_own() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    put_tagged(&c, &name, "b", "v=1").await;
    let r = c.put(&format!("/{name}/b?comp=snapshot")).send().await;
    assert_eq!(r.status, 201);
    let id = enc(&r.header("x-ms-snapshot").unwrap());
    set_tags(&c, &format!("/{name}/b"), &[("v", "2")]).await;
    let snap = c
        .get(&format!("/{name}/b?comp=tags&snapshot={id}"))
        .send()
        .await;
    assert!(snap.text().contains("<Value>1</Value>"), "{}", snap.text());
    let r = c
        .put(&format!("/{name}/b?comp=tags&snapshot={id}"))
        .body(tags_body(&[("v", "s")]))
        .send()
        .await;
    assert_eq!(r.status, 204, "{}", r.text());
    let snap = c
        .get(&format!("/{name}/b?comp=tags&snapshot={id}"))
        .send()
        .await;
    assert!(snap.text().contains("<Value>s</Value>"), "{}", snap.text());
    let base = get_tags(&c, &format!("/{name}/b")).await;
    assert!(base.text().contains("<Value>2</Value>"), "{}", base.text());
}

#[tokio::test]
async fn list_blobs_include_tags_shows_tags_and_count() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    put_tagged(&c, &name, "a", "k=v").await;
    c.put_blob(&name, "b", b"x").await;
    let r = c
        .get(&format!("/{name}?restype=container&comp=list&include=tags"))
        .send()
        .await;
    let text = r.text();
    assert!(text.contains("<TagCount>1</TagCount>"), "{text}");
    assert!(
        text.contains("<Tags><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tags>"),
        "{text}"
    );
    assert_eq!(text.matches("<Tags>").count(), 1, "{text}");
    let plain = c
        .get(&format!("/{name}?restype=container&comp=list"))
        .send()
        .await
        .text();
    assert!(!plain.contains("<Tags>"), "{plain}");
    // The count is listed without include=tags too, for the tagged blob only.
    assert_eq!(
        plain.matches("<TagCount>1</TagCount>").count(),
        1,
        "{plain}"
    );
    assert_eq!(plain.matches("<TagCount>").count(), 1, "{plain}");
}

#[tokio::test]
async fn find_blobs_by_tags_pages_through_both_scopes() {
    let server = TestServer::start().await;
    let c = server.client();
    let one = unique("finda");
    let two = unique("findb");
    c.create_container(&one).await;
    c.create_container(&two).await;
    for i in 0..4 {
        put_tagged(&c, &one, &format!("m{i}"), "color=red&rank=05").await;
        put_tagged(&c, &two, &format!("m{i}"), "color=red&rank=15").await;
        put_tagged(&c, &one, &format!("x{i}"), "color=blue").await;
    }
    let where_ = enc(r#""color" = 'red'"#);
    // Account scope, three at a time.
    let mut all = Vec::new();
    let mut marker = String::new();
    let mut pages = 0;
    loop {
        let r = c
            .get(&format!(
                "/?comp=blobs&where={where_}&maxresults=3&marker={marker}"
            ))
            .send()
            .await;
        let (page, next) = found(&r);
        assert!(page.len() <= 3);
        all.extend(page);
        pages += 1;
        if next.is_empty() {
            break;
        }
        marker = next;
    }
    assert_eq!(pages, 3);
    all.sort();
    let mut want: Vec<(String, String)> = (0..4)
        .flat_map(|i| {
            [
                (one.clone(), format!("m{i}")),
                (two.clone(), format!("m{i}")),
            ]
        })
        .collect();
    want.sort();
    assert_eq!(all, want);

    // Only the tags the expression names come back.
    let r = c.get(&format!("/?comp=blobs&where={where_}")).send().await;
    assert!(
        r.text().contains("<Where>\"color\" = 'red'</Where>"),
        "{}",
        r.text()
    );
    assert!(!r.text().contains("<Key>rank</Key>"), "{}", r.text());

    // A range and @container.
    let expr = enc(&format!(
        r#"@container = '{one}' AND "rank" >= '01' AND "rank" < '10'"#
    ));
    let (page, _) = found(&c.get(&format!("/?comp=blobs&where={expr}")).send().await);
    assert_eq!(page.len(), 4);
    assert!(page.iter().all(|(container, _)| *container == one));

    // Container scope.
    let expr = enc(r#""rank" > '10' AND "color" = 'red'"#);
    let (page, _) = found(
        &c.get(&format!("/{two}?restype=container&comp=blobs&where={expr}"))
            .send()
            .await,
    );
    assert_eq!(page.len(), 4);
    let (page, _) = found(
        &c.get(&format!("/{one}?restype=container&comp=blobs&where={expr}"))
            .send()
            .await,
    );
    assert!(page.is_empty());

    // Deleted blobs leave the index.
    assert_eq!(c.delete(&format!("/{two}/m0")).send().await.status, 202);
    let (page, _) = found(
        &c.get(&format!("/{two}?restype=container&comp=blobs&where={expr}"))
            .send()
            .await,
    );
    assert_eq!(page.len(), 3);

    // So do the blobs of a deleted container.
    let r = c.delete(&format!("/{two}?restype=container")).send().await;
    assert_eq!(r.status, 202, "{}", r.text());
    let (page, _) = found(&c.get(&format!("/?comp=blobs&where={where_}")).send().await);
    assert!(
        page.iter().all(|(container, _)| *container == one),
        "{page:?}"
    );
    assert_eq!(page.len(), 4);
}

#[tokio::test]
async fn bad_where_expressions_are_400_invalid_query_parameter_value() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    for expr in [
        r#""k" = 'v' OR "j" = 'w'"#,
        r#""k" <> 'v'"#,
        r#""k" = "#,
        r#""r" > '1' AND "r" > '2'"#,
        "",
    ] {
        let r = c
            .get(&format!("/?comp=blobs&where={}", enc(expr)))
            .send()
            .await;
        r.assert_error(400, "InvalidQueryParameterValue");
        assert!(
            r.text()
                .contains("<QueryParameterName>where</QueryParameterName>")
        );
    }
    let expr = enc(&format!(r#"@container = '{name}' AND "k" = 'v'"#));
    c.get(&format!(
        "/{name}?restype=container&comp=blobs&where={expr}"
    ))
    .send()
    .await
    .assert_error(400, "InvalidQueryParameterValue");
    c.get(&format!(
        "/?comp=blobs&where={}&marker=not-a-marker!",
        enc(r#""k" = 'v'"#)
    ))
    .send()
    .await
    .assert_error(400, "InvalidQueryParameterValue");
    c.get(&format!(
        "/nosuchcontainer?restype=container&comp=blobs&where={}",
        enc(r#""k" = 'v'"#)
    ))
    .send()
    .await
    .assert_error(404, "ContainerNotFound");
}

#[tokio::test]
async fn if_tags_guards_writes_reads_leases_and_copies() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    put_tagged(&c, &name, "b", "state=ready").await;
    let path = format!("/{name}/b");
    let yes = r#""state" = 'ready'"#;
    let no = r#""state" = 'done'"#;

    // Reads.
    c.get(&path)
        .header("x-ms-if-tags", no)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    assert_eq!(
        c.get(&path).header("x-ms-if-tags", yes).send().await.status,
        200
    );
    c.get(&format!("{path}?comp=tags"))
        .header("x-ms-if-tags", no)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    // Metadata.
    c.put(&format!("{path}?comp=metadata"))
        .header("x-ms-if-tags", no)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    // Lease.
    c.put(&format!("{path}?comp=lease"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .header("x-ms-if-tags", no)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    // Set Blob Tags under its own condition.
    set_tags(&c, &path, &[("state", "x")]).await;
    let r = c
        .put(&format!("{path}?comp=tags"))
        .header("x-ms-if-tags", yes)
        .body(tags_body(&[("state", "y")]))
        .send()
        .await;
    r.assert_error(412, "ConditionNotMet");
    let r = c
        .put(&format!("{path}?comp=tags"))
        .header("x-ms-if-tags", r#""state" = 'x'"#)
        .body(tags_body(&[("state", "ready")]))
        .send()
        .await;
    assert_eq!(r.status, 204, "{}", r.text());
    // Upload over it.
    let r = c
        .put(&path)
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-if-tags", no)
        .body(&b"new"[..])
        .send()
        .await;
    r.assert_error(412, "ConditionNotMet");
    // Copy: the source condition and the destination condition.
    let source = format!("{}/{ACCOUNT}{path}", server.base);
    c.put(&format!("/{name}/dest"))
        .header("x-ms-copy-source", &source)
        .header("x-ms-source-if-tags", no)
        .send()
        .await
        .assert_error(412, "SourceConditionNotMet");
    let r = c
        .put(&format!("/{name}/dest"))
        .header("x-ms-copy-source", &source)
        .header("x-ms-source-if-tags", yes)
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
    c.put(&format!("/{name}/dest"))
        .header("x-ms-copy-source", &source)
        .header("x-ms-if-tags", yes)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    // Delete.
    c.delete(&path)
        .header("x-ms-if-tags", no)
        .send()
        .await
        .assert_error(412, "ConditionNotMet");
    let r = c
        .delete(&path)
        .header("x-ms-if-tags", &format!("{no} OR {yes}"))
        .send()
        .await;
    assert_eq!(r.status, 202, "{}", r.text());
}

#[tokio::test]
async fn an_if_tags_that_does_not_parse_is_400_invalid_header_value() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    c.put_blob(&name, "b", b"x").await;
    let r = c
        .get(&format!("/{name}/b"))
        .header("x-ms-if-tags", r#""k" == 'v'"#)
        .send()
        .await;
    r.assert_error(400, "InvalidHeaderValue");
    assert!(r.text().contains("x-ms-if-tags"), "{}", r.text());
}

#[tokio::test]
async fn sas_needs_t_for_tags_and_f_to_find() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    put_tagged(&c, &name, "b", "k=v").await;
    let with_t = container_sas(&name, "rt");
    let without_t = container_sas(&name, "rw");
    let r = c
        .get(&format!("/{name}/b?comp=tags&{with_t}"))
        .anonymous()
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    c.get(&format!("/{name}/b?comp=tags&{without_t}"))
        .anonymous()
        .send()
        .await
        .assert_error(403, "AuthorizationPermissionMismatch");
    let r = c
        .put(&format!("/{name}/b?comp=tags&{with_t}"))
        .anonymous()
        .body(tags_body(&[("k", "w")]))
        .send()
        .await;
    assert_eq!(r.status, 204, "{}", r.text());

    let expr = enc(r#""k" = 'w'"#);
    let find = container_sas(&name, "f");
    let (page, _) = found(
        &c.get(&format!(
            "/{name}?restype=container&comp=blobs&where={expr}&{find}"
        ))
        .anonymous()
        .send()
        .await,
    );
    assert_eq!(page.len(), 1);
    c.get(&format!(
        "/{name}?restype=container&comp=blobs&where={expr}&{with_t}"
    ))
    .anonymous()
    .send()
    .await
    .assert_error(403, "AuthorizationPermissionMismatch");
    let account_find = account_sas("f", "s");
    let (page, _) = found(
        &c.get(&format!("/?comp=blobs&where={expr}&{account_find}"))
            .anonymous()
            .send()
            .await,
    );
    assert_eq!(page.len(), 1);
    c.get(&format!(
        "/?comp=blobs&where={expr}&{}",
        account_sas("r", "s")
    ))
    .anonymous()
    .send()
    .await
    .assert_error(403, "AuthorizationPermissionMismatch");
}

#[tokio::test]
async fn if_tags_guards_the_other_blob_operations_too() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    put_tagged(&c, &name, "b", "state=ready").await;
    let r = c
        .put(&format!("/{name}/a"))
        .header("x-ms-blob-type", "AppendBlob")
        .header("x-ms-tags", "state=ready")
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let no = r#""state" = 'done'"#;
    let yes = r#""state" = 'ready'"#;
    let b = format!("/{name}/b");
    let a = format!("/{name}/a");
    let cases: Vec<(&str, String)> = vec![
        ("HEAD", b.clone()),
        ("GET", format!("{b}?comp=metadata")),
        ("PUT", format!("{b}?comp=properties")),
        ("PUT", format!("{b}?comp=snapshot")),
        ("GET", format!("{b}?comp=blocklist")),
        ("PUT", format!("{a}?comp=appendblock")),
        ("PUT", format!("{a}?comp=seal")),
    ];
    for (method, path) in &cases {
        let mut request = c.request(method, path).header("x-ms-if-tags", no);
        if path.ends_with("appendblock") {
            request = request.body(&b"x"[..]);
        }
        let r = request.send().await;
        assert_eq!(r.status, 412, "{method} {path}: {}", r.text());
        assert_eq!(
            r.code().as_deref(),
            Some("ConditionNotMet"),
            "{method} {path}"
        );
    }
    for (method, path) in &cases {
        let mut request = c.request(method, path).header("x-ms-if-tags", yes);
        if path.ends_with("appendblock") {
            request = request.body(&b"x"[..]);
        }
        let r = request.send().await;
        assert!(r.status < 300, "{method} {path}: {} {}", r.status, r.text());
    }
    // Container operations do not read it.
    let r = c
        .get(&format!("/{name}?restype=container"))
        .header("x-ms-if-tags", no)
        .send()
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn set_blob_tags_on_a_leased_blob_needs_the_lease_id() {
    let server = TestServer::start().await;
    let (c, name) = setup(&server).await;
    c.put_blob(&name, "b", b"x").await;
    let path = format!("/{name}/b");
    let lease = "a2f5c3b1-1111-4a4a-9b9b-0123456789ab";
    let r = c
        .put(&format!("{path}?comp=lease"))
        .header("x-ms-lease-action", "acquire")
        .header("x-ms-lease-duration", "-1")
        .header("x-ms-proposed-lease-id", lease)
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    set_tags(&c, &path, &[("k", "v")])
        .await
        .assert_error(412, "LeaseIdMissing");
    let r = c
        .put(&format!("{path}?comp=tags"))
        .header("x-ms-lease-id", lease)
        .body(tags_body(&[("k", "v")]))
        .send()
        .await;
    assert_eq!(r.status, 204, "{}", r.text());
    // Reading needs no lease id, but a wrong one is refused.
    assert_eq!(get_tags(&c, &path).await.status, 200);
    c.get(&format!("{path}?comp=tags"))
        .header("x-ms-lease-id", "b2f5c3b1-1111-4a4a-9b9b-0123456789ab")
        .send()
        .await
        .assert_error(412, "LeaseIdMismatchWithBlobOperation");
}
