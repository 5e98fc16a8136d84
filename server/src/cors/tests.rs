//! Table tests of the CORS decisions, built on the reference page's own
//! examples where it has them.

use super::*;

fn rule(origins: &str, methods: &str, allowed: &str, exposed: &str, max_age: u64) -> CorsRule {
    CorsRule {
        origins: rules::list(origins),
        methods: rules::list(methods),
        allowed_headers: rules::list(allowed),
        exposed_headers: rules::list(exposed),
        max_age,
    }
}

/// The three rules of the reference's "CORS rules evaluation" example.
fn reference_example() -> Vec<CorsRule> {
    vec![
        rule(
            "http://www.contoso.com",
            "PUT,HEAD",
            "x-ms-blob-content-type, x-ms-blob-content-disposition",
            "x-ms-*",
            5,
        ),
        rule(
            "*",
            "PUT,GET",
            "x-ms-blob-content-type, x-ms-blob-content-disposition",
            "x-ms-*",
            5,
        ),
        rule(
            "http://www.contoso.com",
            "GET",
            "x-ms-client-request-id",
            "x-ms-*",
            5,
        ),
    ]
}

fn value<'a>(headers: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn preflight_follows_the_reference_example() {
    let rules = reference_example();
    // (method, origin, request headers, allowed)
    let table = [
        // First rule: origin, method and header match.
        (
            "PUT",
            "http://www.contoso.com",
            "x-ms-blob-content-type",
            true,
        ),
        // Not the first rule (method), the second: it allows all origins.
        (
            "GET",
            "http://www.contoso.com",
            "x-ms-blob-content-type",
            true,
        ),
        // The second rule is chosen by origin and method and refuses the
        // header; the third rule, which would allow it, is never reached.
        (
            "GET",
            "http://www.contoso.com",
            "x-ms-client-request-id",
            false,
        ),
    ];
    for (method, origin, headers, allowed) in table {
        let p = Preflight {
            origin,
            method,
            headers: Some(headers),
        };
        assert_eq!(
            preflight(&rules, &p).is_some(),
            allowed,
            "{method} {origin} {headers}"
        );
    }
}

/// (rules, origin, method, request headers, allowed, why)
type PreflightRow = (
    Vec<CorsRule>,
    &'static str,
    &'static str,
    Option<&'static str>,
    bool,
    &'static str,
);

#[test]
fn preflight_matching() {
    let one = |origins, methods, allowed| vec![rule(origins, methods, allowed, "", 60)];
    let table: Vec<PreflightRow> = vec![
        (vec![], "http://a.test", "GET", None, false, "no rules"),
        (
            one("http://a.test", "GET", ""),
            "http://a.test",
            "GET",
            None,
            true,
            "exact origin",
        ),
        (
            one("http://a.test", "GET", ""),
            "http://A.test",
            "GET",
            None,
            false,
            "origins are case-sensitive",
        ),
        (
            one("http://a.test", "GET", ""),
            "http://a.test:8080",
            "GET",
            None,
            false,
            "another port is another origin",
        ),
        (
            one("http://b.test, http://a.test", "GET", ""),
            "http://a.test",
            "GET",
            None,
            true,
            "second origin of the list",
        ),
        (
            one("*", "GET", ""),
            "http://x.test",
            "GET",
            None,
            true,
            "wildcard origin",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "http://foo.contoso.com",
            "GET",
            None,
            true,
            "subdomain pattern",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "http://a.b.c.contoso.com",
            "GET",
            None,
            true,
            "subdomain pattern, several labels",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "http://foo.CONTOSO.com",
            "GET",
            None,
            true,
            "subdomain pattern ignores case",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "http://contoso.com",
            "GET",
            None,
            false,
            "subdomain pattern needs a subdomain",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "http://bar.notcontoso.com",
            "GET",
            None,
            false,
            "subdomain pattern is not a suffix of the name",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "https://foo.contoso.com",
            "GET",
            None,
            false,
            "subdomain pattern keeps its scheme",
        ),
        (
            one("http://*.contoso.com", "GET", ""),
            "http://foo.contoso.com:8080",
            "GET",
            None,
            false,
            "subdomain pattern keeps its port",
        ),
        (
            one("*.contoso.com", "GET", ""),
            "foo.contoso.com",
            "GET",
            None,
            true,
            "pattern without a scheme",
        ),
        (
            one("*", "GET", ""),
            "http://x.test",
            "PUT",
            None,
            false,
            "method not allowed",
        ),
        (
            one("*", "GET,PUT", ""),
            "http://x.test",
            "put",
            None,
            true,
            "methods ignore case",
        ),
        (
            one("*", "PUT", "x-ms-meta-*"),
            "http://x.test",
            "PUT",
            Some("x-ms-meta-a, X-MS-META-B"),
            true,
            "prefix header, any case",
        ),
        (
            one("*", "PUT", "x-ms-meta-*"),
            "http://x.test",
            "PUT",
            Some("x-ms-meta-a,x-ms-blob-type"),
            false,
            "one header outside the prefix",
        ),
        (
            one("*", "PUT", "x-ms-blob-type"),
            "http://x.test",
            "PUT",
            Some("x-ms-blob-type-2"),
            false,
            "a literal is not a prefix",
        ),
        (
            one("*", "PUT", "*"),
            "http://x.test",
            "PUT",
            Some("anything, x-ms-version"),
            true,
            "* allows every header",
        ),
        (
            one("*", "PUT", ""),
            "http://x.test",
            "PUT",
            Some(""),
            true,
            "an empty header list asks for nothing",
        ),
        (
            one("*", "PUT", ""),
            "http://x.test",
            "PUT",
            Some("content-type"),
            false,
            "no allowed headers",
        ),
        (
            vec![CorsRule::default(), rule("*", "GET", "", "", 0)],
            "http://x.test",
            "GET",
            None,
            true,
            "an empty rule matches nothing, the next one does",
        ),
    ];
    for (rules, origin, method, headers, allowed, why) in table {
        let p = Preflight {
            origin,
            method,
            headers,
        };
        assert_eq!(preflight(&rules, &p).is_some(), allowed, "{why}");
    }
}

#[test]
fn preflight_answer_echoes_the_request() {
    let rules = vec![rule("*", "PUT", "x-ms-*,content-type", "", 600)];
    let p = Preflight {
        origin: "http://x.test",
        method: "PUT",
        headers: Some("x-ms-blob-type , content-type"),
    };
    let headers = preflight(&rules, &p).unwrap();
    assert_eq!(
        headers,
        vec![
            ("access-control-allow-origin", "http://x.test".to_owned()),
            ("access-control-allow-methods", "PUT".to_owned()),
            (
                "access-control-allow-headers",
                "x-ms-blob-type,content-type".to_owned()
            ),
            ("access-control-max-age", "600".to_owned()),
            ("access-control-allow-credentials", "true".to_owned()),
        ]
    );
    let without = Preflight { headers: None, ..p };
    let headers = preflight(&rules, &without).unwrap();
    assert_eq!(value(&headers, "access-control-allow-headers"), None);
}

/// The reference's table for GET and HEAD, row by row, then other methods.
#[test]
fn actual_request_headers_follow_the_reference_table() {
    let exact = vec![rule("http://a.test", "GET,HEAD,PUT", "", "x-ms-meta-*", 5)];
    let any = vec![rule("*", "GET,HEAD,PUT", "", "x-ms-meta-*", 5)];
    let none = vec![];
    let response = ["content-length", "x-ms-meta-color", "x-ms-request-id"];
    struct Row {
        rules: Vec<CorsRule>,
        origin: Option<&'static str>,
        method: &'static str,
        vary: bool,
        allow_origin: Option<&'static str>,
        exposed: bool,
        credentials: bool,
    }
    let row =
        |rules: &Vec<CorsRule>, origin, method, vary, allow_origin, exposed, credentials| Row {
            rules: rules.clone(),
            origin,
            method,
            vary,
            allow_origin,
            exposed,
            credentials,
        };
    let other = Some("http://other.test");
    let a = Some("http://a.test");
    let table = [
        // No Origin: no rules; rules without one for every origin; one for every origin.
        row(&none, None, "GET", false, None, false, false),
        row(&exact, None, "GET", true, None, false, false),
        row(&any, None, "GET", false, Some("*"), true, false),
        // Origin: no rules; exact match; no match; rule for every origin.
        row(&none, a, "GET", false, None, false, false),
        row(&exact, a, "GET", true, a, true, true),
        row(&exact, other, "HEAD", true, None, false, false),
        row(&any, other, "HEAD", false, Some("*"), true, false),
        // Not GET or HEAD: never Vary.
        row(&exact, a, "PUT", false, a, true, true),
        row(&exact, other, "PUT", false, None, false, false),
        row(&exact, None, "PUT", false, None, false, false),
        // A method no rule allows is no match.
        row(&exact, a, "DELETE", false, None, false, false),
        row(&any, a, "DELETE", false, None, false, false),
    ];
    for (i, r) in table.iter().enumerate() {
        let req = Actual {
            origin: r.origin,
            method: r.method,
        };
        let h = actual(&r.rules, &req, &response);
        assert_eq!(value(&h, "vary").is_some(), r.vary, "row {i} vary");
        assert_eq!(
            value(&h, "access-control-allow-origin"),
            r.allow_origin,
            "row {i} origin"
        );
        assert_eq!(
            value(&h, "access-control-expose-headers").is_some(),
            r.exposed,
            "row {i} expose"
        );
        assert_eq!(
            value(&h, "access-control-allow-credentials"),
            r.credentials.then_some("true"),
            "row {i} credentials"
        );
        if r.vary {
            assert_eq!(value(&h, "vary"), Some("Origin"));
        }
    }
}

#[test]
fn the_first_rule_for_the_origin_and_method_decides_an_actual_request() {
    let rules = vec![
        rule("http://a.test", "PUT", "", "x-ms-request-id", 0),
        rule("*", "GET", "", "etag", 0),
        rule("http://a.test", "GET", "", "content-length", 0),
    ];
    let req = Actual {
        origin: Some("http://a.test"),
        method: "GET",
    };
    let h = actual(&rules, &req, &["etag", "content-length"]);
    assert_eq!(value(&h, "access-control-allow-origin"), Some("*"));
    assert_eq!(value(&h, "access-control-expose-headers"), Some("etag"));
    assert_eq!(value(&h, "vary"), None);
}

#[test]
fn exposed_headers_list() {
    // (exposed rule entries, response header names, expected value)
    let table = [
        (
            "x-ms-meta-*",
            vec!["x-ms-meta-a", "etag", "x-ms-meta-b"],
            "x-ms-meta-a,x-ms-meta-b",
        ),
        ("X-MS-META-*", vec!["x-ms-meta-a"], "x-ms-meta-a"),
        (
            "etag, x-ms-custom",
            vec!["etag", "date"],
            "etag,x-ms-custom",
        ),
        ("*", vec!["etag", "date"], "etag,date"),
        (
            "ETag,x-ms-*",
            vec!["etag", "x-ms-version"],
            "etag,x-ms-version",
        ),
        ("x-ms-meta-*", vec!["etag"], ""),
        ("", vec!["etag"], ""),
    ];
    for (exposed, response, expected) in table {
        let r = rule("*", "GET", "", exposed, 0);
        assert_eq!(r.exposed(&response).join(","), expected, "{exposed}");
    }
}

#[test]
fn header_lists_are_trimmed() {
    assert_eq!(header_list(" a, b ,,c "), ["a", "b", "c"]);
    assert!(header_list("").is_empty());
}

/// A rule with a subdomain pattern names origins: an actual request from a
/// matching origin gets its origin back, as under an exact entry.
#[test]
fn a_subdomain_pattern_answers_like_an_exact_origin() {
    let rules = vec![rule("http://*.contoso.com", "GET", "", "x-ms-meta-*", 5)];
    let req = Actual {
        origin: Some("http://foo.contoso.com"),
        method: "GET",
    };
    let h = actual(&rules, &req, &["x-ms-meta-a"]);
    assert_eq!(
        value(&h, "access-control-allow-origin"),
        Some("http://foo.contoso.com")
    );
    assert_eq!(value(&h, "access-control-allow-credentials"), Some("true"));
    assert_eq!(value(&h, "vary"), Some("Origin"));
    // Without an Origin a pattern matches nothing.
    let bare = Actual {
        origin: None,
        method: "GET",
    };
    let h = actual(&rules, &bare, &[]);
    assert_eq!(value(&h, "access-control-allow-origin"), None);
    assert_eq!(value(&h, "vary"), Some("Origin"));
}
