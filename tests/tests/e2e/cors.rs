//! CORS on the wire (docs/wire/cors.md): Preflight Blob Request answered from
//! the rules of Set Blob Service Properties without credentials, and the
//! `Access-Control-*` and `Vary` headers of actual requests, errors included.

use stowage_tests::{Client, Response, TestServer, unique};

const APP: &str = "http://app.test:8080";
const OTHER: &str = "http://other.test";

/// Sets the account's CORS rules (`rules` is the content of `<Cors>`).
async fn set_cors(client: &Client, rules: &str) {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\
         <StorageServiceProperties><Cors>{rules}</Cors></StorageServiceProperties>"
    );
    let r = client
        .put("/?restype=service&comp=properties")
        .body(body)
        .send()
        .await;
    assert_eq!(r.status, 202, "set service properties: {}", r.text());
}

fn rule(origins: &str, methods: &str, allowed: &str, exposed: &str, max_age: u32) -> String {
    format!(
        "<CorsRule><AllowedOrigins>{origins}</AllowedOrigins><AllowedMethods>{methods}</AllowedMethods>\
         <AllowedHeaders>{allowed}</AllowedHeaders><ExposedHeaders>{exposed}</ExposedHeaders>\
         <MaxAgeInSeconds>{max_age}</MaxAgeInSeconds></CorsRule>"
    )
}

/// An unsigned `OPTIONS` with the given CORS request headers.
async fn preflight(
    client: &Client,
    path: &str,
    origin: Option<&str>,
    method: Option<&str>,
    headers: Option<&str>,
) -> Response {
    let mut r = client.request("OPTIONS", path).anonymous();
    for (name, value) in [
        ("origin", origin),
        ("access-control-request-method", method),
        ("access-control-request-headers", headers),
    ] {
        if let Some(v) = value {
            r = r.header(name, v);
        }
    }
    r.send().await
}

fn all(r: &Response, name: &str) -> Vec<String> {
    r.headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

/// The CORS headers of an answer, for comparing whole sets.
fn cors_headers(r: &Response) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(n, _)| n.as_str().starts_with("access-control-") || n.as_str() == "vary")
        .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn preflight_without_rules_is_403_cors_preflight_failure() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    let r = preflight(&client, "/c/b", Some(APP), Some("PUT"), None).await;
    r.assert_error(403, "CorsPreflightFailure");
    assert!(
        r.text()
            .contains("CORS not enabled or no matching rule found for this request."),
        "{}",
        r.text()
    );
    assert!(r.header("x-ms-request-id").is_some());
    assert!(cors_headers(&r).is_empty(), "{:?}", cors_headers(&r));
}

#[tokio::test]
async fn preflight_without_origin_or_method_is_400() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    set_cors(&client, &rule("*", "GET,PUT", "*", "*", 60)).await;
    for (origin, method, missing) in [
        (None, Some("PUT"), "Origin"),
        (Some(APP), None, "Access-Control-Request-Method"),
        (None, None, "Origin"),
    ] {
        let r = preflight(&client, "/c/b", origin, method, None).await;
        r.assert_error(400, "InvalidHeaderValue");
        assert!(
            r.text()
                .contains(&format!("<HeaderName>{missing}</HeaderName>")),
            "{}",
            r.text()
        );
    }
}

#[tokio::test]
async fn preflight_matching_a_rule_is_200_with_the_access_control_headers() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    set_cors(
        &client,
        &rule(
            &format!("http://elsewhere.test, {APP}"),
            "GET,PUT",
            "x-ms-meta-*,x-ms-blob-type,content-type",
            "x-ms-meta-*",
            600,
        ),
    )
    .await;
    // Neither the container nor the blob exists, and no credentials: the
    // preflight is answered from the service's rules alone.
    let path = format!(
        "/{}/missing-blob?comp=block&blockid=AAAA",
        unique("nocontainer")
    );
    let r = preflight(
        &client,
        &path,
        Some(APP),
        Some("PUT"),
        Some("x-ms-blob-type,x-ms-meta-Color,content-type"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.body.is_empty());
    assert_eq!(
        cors_headers(&r),
        [
            ("access-control-allow-credentials", "true"),
            (
                "access-control-allow-headers",
                "x-ms-blob-type,x-ms-meta-Color,content-type"
            ),
            ("access-control-allow-methods", "PUT"),
            ("access-control-allow-origin", APP),
            ("access-control-max-age", "600"),
        ]
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
    );
    assert!(r.header("x-ms-request-id").is_some());
    // A preflight at the account level and on the secondary endpoint reads
    // the same rules.
    for path in ["/", "/?restype=service&comp=properties"] {
        let r = preflight(&client, path, Some(APP), Some("GET"), None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
    }
    let secondary = client.with_prefix("/devstoreaccount1-secondary");
    let r = preflight(&secondary, "/c", Some(APP), Some("GET"), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn preflight_refusals_and_the_first_matching_rule_decides() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    // The reference's evaluation example.
    let rules = [
        rule(
            APP,
            "PUT,HEAD",
            "x-ms-blob-content-type,x-ms-blob-content-disposition",
            "x-ms-*",
            5,
        ),
        rule(
            "*",
            "PUT,GET",
            "x-ms-blob-content-type,x-ms-blob-content-disposition",
            "x-ms-*",
            5,
        ),
        rule(APP, "GET", "x-ms-client-request-id", "x-ms-*", 5),
    ]
    .concat();
    set_cors(&client, &rules).await;
    // (origin, method, request headers, status)
    let table = [
        (APP, "PUT", Some("x-ms-blob-content-type"), 200),
        (APP, "GET", Some("x-ms-blob-content-type"), 200),
        // Rule two is chosen by origin and method and refuses the header;
        // rule three would allow it but is never reached.
        (APP, "GET", Some("x-ms-client-request-id"), 403),
        (OTHER, "PUT", None, 200),
        (OTHER, "HEAD", None, 403),
        (OTHER, "DELETE", None, 403),
        ("HTTP://APP.TEST:8080", "HEAD", None, 403),
        (
            OTHER,
            "PUT",
            Some("x-ms-blob-content-type,x-ms-meta-a"),
            403,
        ),
    ];
    for (origin, method, headers, status) in table {
        let r = preflight(&client, "/c/b", Some(origin), Some(method), headers).await;
        if status == 200 {
            assert_eq!(r.status, 200, "{origin} {method} {headers:?}: {}", r.text());
        } else {
            r.assert_error(403, "CorsPreflightFailure");
        }
    }
}

/// `AllowedOrigins` may name subdomains with a `*` (the reference's own
/// example, `http://*.contoso.com`): a preflight from any of them is
/// accepted with its own origin sent back; the bare domain, a look-alike
/// name, another scheme and a request without `Origin` are not.
#[tokio::test]
async fn subdomain_patterns_in_allowed_origins_match_subdomains_only() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    set_cors(&client, &rule("http://*.contoso.com", "GET", "", "*", 30)).await;
    for origin in [
        "http://foo.contoso.com",
        "http://foo.bar.baz.contoso.com",
        "http://foo.CONTOSO.com",
    ] {
        let r = preflight(&client, "/c/b", Some(origin), Some("GET"), None).await;
        assert_eq!(r.status, 200, "{origin}: {}", r.text());
        assert_eq!(
            r.header("access-control-allow-origin").as_deref(),
            Some(origin)
        );
        assert_eq!(r.header("access-control-max-age").as_deref(), Some("30"));
    }
    for origin in [
        "http://contoso.com",
        "http://bar.notcontoso.com",
        "https://foo.contoso.com",
    ] {
        let r = preflight(&client, "/c/b", Some(origin), Some("GET"), None).await;
        r.assert_error(403, "CorsPreflightFailure");
    }
    // An actual request from a subdomain gets its origin back.
    let r = client
        .get("/?comp=list")
        .header("origin", "http://app.contoso.com")
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("http://app.contoso.com")
    );
    assert_eq!(all(&r, "vary"), ["Origin"]);
}

#[tokio::test]
async fn rule_changes_apply_to_the_next_request() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    let r = preflight(&client, "/c/b", Some(APP), Some("PUT"), None).await;
    r.assert_error(403, "CorsPreflightFailure");
    set_cors(&client, &rule(APP, "PUT", "", "", 1)).await;
    let r = preflight(&client, "/c/b", Some(APP), Some("PUT"), None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-max-age").as_deref(), Some("1"));
    set_cors(&client, &rule(APP, "PUT", "", "", 7200)).await;
    let r = preflight(&client, "/c/b", Some(APP), Some("PUT"), None).await;
    assert_eq!(r.header("access-control-max-age").as_deref(), Some("7200"));
    set_cors(&client, "").await;
    let r = preflight(&client, "/c/b", Some(APP), Some("PUT"), None).await;
    r.assert_error(403, "CorsPreflightFailure");
}

#[tokio::test]
async fn rules_survive_a_restart() {
    let server = TestServer::start().await;
    set_cors(&server.client(), &rule(APP, "PUT", "", "", 30)).await;
    let server = server.restart().await;
    let r = preflight(&server.client(), "/c/b", Some(APP), Some("PUT"), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
}

#[tokio::test]
async fn actual_requests_from_a_listed_origin_get_origin_credentials_and_vary() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    let container = unique("cors");
    client.create_container(&container).await;
    let put = client
        .put(&format!("/{container}/b"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("x-ms-meta-Color", "blue")
        .body(&b"hello"[..])
        .send()
        .await;
    assert_eq!(put.status, 201);
    set_cors(
        &client,
        &rule(APP, "GET,HEAD,PUT", "*", "x-ms-meta-*,etag,x-ms-custom", 60),
    )
    .await;
    let r = client
        .get(&format!("/{container}/b"))
        .header("origin", APP)
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), "hello");
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some(APP)
    );
    assert_eq!(
        r.header("access-control-allow-credentials").as_deref(),
        Some("true")
    );
    assert_eq!(all(&r, "vary"), ["Origin"]);
    // The answer's headers that match a prefix, then the literal names.
    let exposed = r.header("access-control-expose-headers").unwrap();
    let exposed: Vec<&str> = exposed.split(',').collect();
    assert!(exposed.contains(&"etag"), "{exposed:?}");
    assert!(exposed.contains(&"x-ms-custom"), "{exposed:?}");
    assert!(
        exposed
            .iter()
            .any(|e| e.eq_ignore_ascii_case("x-ms-meta-color")),
        "{exposed:?}"
    );
    assert!(
        !exposed.iter().any(|e| e.starts_with("x-stowage")),
        "{exposed:?}"
    );
    // A PUT is not cached: no Vary, the rest as for GET.
    let r = client
        .put(&format!("/{container}/c"))
        .header("x-ms-blob-type", "BlockBlob")
        .header("origin", APP)
        .send()
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some(APP)
    );
    assert!(all(&r, "vary").is_empty());
    // Another origin: only Vary, on GET and HEAD.
    let r = client
        .get(&format!("/{container}/b"))
        .header("origin", OTHER)
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(cors_headers(&r), [("vary".to_owned(), "Origin".to_owned())]);
    // No Origin at all: a GET still says its answer depends on it.
    let r = client.head(&format!("/{container}/b")).send().await;
    assert_eq!(cors_headers(&r), [("vary".to_owned(), "Origin".to_owned())]);
    let r = client.delete(&format!("/{container}/c")).send().await;
    assert_eq!(r.status, 202);
    assert!(cors_headers(&r).is_empty(), "{:?}", cors_headers(&r));
}

#[tokio::test]
async fn actual_requests_under_a_rule_for_every_origin_get_a_star_and_no_vary() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    let container = unique("cors");
    client.create_container(&container).await;
    client.put_blob(&container, "b", b"x").await;
    set_cors(&client, &rule("*", "GET,HEAD", "", "*", 60)).await;
    let r = client
        .get(&format!("/{container}/b"))
        .header("origin", OTHER)
        .send()
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert_eq!(r.header("access-control-allow-credentials"), None);
    assert!(all(&r, "vary").is_empty());
    // `*` exposes every header the answer has.
    let exposed = r.header("access-control-expose-headers").unwrap();
    for name in [
        "etag",
        "x-ms-request-id",
        "x-ms-version",
        "date",
        "last-modified",
    ] {
        assert!(exposed.split(',').any(|e| e == name), "{name} in {exposed}");
    }
    // The reference's table: no Origin, a rule for every origin, still `*`.
    let r = client.get(&format!("/{container}/b")).send().await;
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("*")
    );
    assert!(all(&r, "vary").is_empty());
}

#[tokio::test]
async fn error_answers_carry_the_cors_headers_too() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    let container = unique("cors");
    client.create_container(&container).await;
    set_cors(
        &client,
        &rule(APP, "GET,PUT,DELETE", "*", "x-ms-error-code", 60),
    )
    .await;
    // 404 from the engine.
    let r = client
        .get(&format!("/{container}/missing"))
        .header("origin", APP)
        .send()
        .await;
    r.assert_error(404, "BlobNotFound");
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some(APP)
    );
    assert_eq!(
        r.header("access-control-expose-headers").as_deref(),
        Some("x-ms-error-code")
    );
    assert_eq!(all(&r, "vary"), ["Origin"]);
    // Refused before any handler runs: anonymous access to a private
    // container, and a bad signature.
    let r = client
        .get(&format!("/{container}/missing"))
        .anonymous()
        .header("origin", APP)
        .send()
        .await;
    r.assert_error(404, "ResourceNotFound");
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some(APP)
    );
    let r = client
        .as_account(stowage_tests::ACCOUNT, "AAAA")
        .delete(&format!("/{container}"))
        .header("origin", APP)
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some(APP)
    );
    assert!(all(&r, "vary").is_empty());
}

#[tokio::test]
async fn without_rules_no_answer_has_cors_headers() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    let container = unique("cors");
    client.create_container(&container).await;
    client.put_blob(&container, "b", b"x").await;
    for r in [
        client
            .get(&format!("/{container}/b"))
            .header("origin", APP)
            .send()
            .await,
        client.get(&format!("/{container}/b")).send().await,
        client
            .get(&format!("/{container}/missing"))
            .header("origin", APP)
            .send()
            .await,
    ] {
        assert!(cors_headers(&r).is_empty(), "{:?}", cors_headers(&r));
    }
}

#[tokio::test]
async fn an_unknown_account_has_no_rules() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    set_cors(&client, &rule("*", "GET,PUT", "*", "*", 60)).await;
    let stranger = client.with_prefix("/nosuchaccount");
    let r = preflight(&stranger, "/c/b", Some(APP), Some("PUT"), None).await;
    r.assert_error(403, "CorsPreflightFailure");
    let r = stranger
        .get("/c/b")
        .anonymous()
        .header("origin", APP)
        .send()
        .await;
    assert_eq!(r.status, 404);
    assert!(cors_headers(&r).is_empty(), "{:?}", cors_headers(&r));
}

#[tokio::test]
async fn set_refuses_rules_outside_the_reference_limits_and_keeps_the_old_ones() {
    let server = TestServer::start_in_memory().await;
    let client = server.client();
    set_cors(&client, &rule(APP, "PUT", "", "", 10)).await;
    let long_origin = format!("http://{}.test", "a".repeat(260));
    for bad in [
        rule(APP, "PUT,FETCH", "", "", 10),
        rule(APP, "PUT", "", "", 0).replace("<MaxAgeInSeconds>0<", "<MaxAgeInSeconds>soon<"),
        rule(&long_origin, "PUT", "", "", 10),
        rule(APP, "PUT", "a*,b*,c*", "", 10),
        "<CorsRule><AllowedMethods>GET</AllowedMethods></CorsRule>".to_owned(),
    ] {
        let body =
            format!("<StorageServiceProperties><Cors>{bad}</Cors></StorageServiceProperties>");
        let r = client
            .put("/?restype=service&comp=properties")
            .body(body)
            .send()
            .await;
        r.assert_error(400, "InvalidXmlNodeValue");
    }
    let r = preflight(&client, "/c/b", Some(APP), Some("PUT"), None).await;
    assert_eq!(r.header("access-control-max-age").as_deref(), Some("10"));
}

/// On a cluster each node answers a blob read's CORS headers from the rules
/// as of the read's own snapshot: rules set through one node apply to the
/// next GET or HEAD on any other, although each node keeps the document it
/// read last. Get Blob and Get Blob Properties read nothing more for them:
/// 2 and 1 round trips to the database (`docs/cluster.md`, "Round trips").
#[tokio::test]
async fn on_a_cluster_rules_set_on_one_node_apply_at_once_on_the_others() {
    let server = TestServer::start_cluster(3).await;
    let nodes = server.node_clients();
    let container = unique("cors");
    nodes[0].create_container(&container).await;
    let path = format!("/{container}/b");
    let put = nodes[1].put_blob(&container, "b", &[7u8; 4096]).await;
    assert_eq!(put.status, 201, "{}", put.text());
    let allowed = |r: &Response| r.header("access-control-allow-origin");
    for round in 0..3 {
        // Each round lets APP in, then OTHER only, through a different node.
        for (origin, setter) in [(APP, round % 3), (OTHER, (round + 1) % 3)] {
            set_cors(&nodes[setter], &rule(origin, "GET,HEAD", "*", "", 60)).await;
            for node in &nodes {
                let get = node.get(&path).header("origin", APP).send().await;
                assert_eq!(get.status, 200);
                let head = node.head(&path).header("origin", APP).send().await;
                let want = (origin == APP).then(|| APP.to_owned());
                assert_eq!(allowed(&get), want, "round {round}, GET");
                assert_eq!(allowed(&head), want, "round {round}, HEAD");
            }
        }
    }
    // Node 0's engine counts its round trips: the rules are unchanged
    // since its last read, so none is spent on them. The fewest of three
    // tries, since the node's background work counts too.
    let trips = || server.store.metadata_round_trips().unwrap();
    for (method, want) in [("GET", 2), ("HEAD", 1)] {
        let mut fewest = u64::MAX;
        for _ in 0..3 {
            let before = trips();
            let r = nodes[0]
                .request(method, &path)
                .header("origin", OTHER)
                .send()
                .await;
            assert_eq!(r.status, 200);
            assert_eq!(allowed(&r).as_deref(), Some(OTHER));
            fewest = fewest.min(trips() - before);
        }
        assert_eq!(fewest, want, "{method}");
    }
}
