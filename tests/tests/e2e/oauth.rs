//! `--oauth basic` (docs/wire/oauth.md): the refusal codes of bearer
//! tokens, Get User Delegation Key and user delegation SAS, on an HTTPS
//! server whose clock the tests move.

use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use stowage_tests::{Client, TestServer, epoch, unique};

const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const OID: &str = "11059fcc-5514-4800-b5f8-49808b9cfab6";

fn now_secs() -> u64 {
    epoch().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A JWT (alg none, no signature) with these claims over the defaults:
/// storage audience, a known issuer, valid for an hour from the test epoch.
fn token(overrides: &[(&str, &str)]) -> String {
    let t = now_secs();
    let mut claims: Vec<(String, String)> = vec![
        ("aud".into(), "\"https://storage.azure.com\"".into()),
        (
            "iss".into(),
            format!("\"https://sts.windows.net/{TENANT}/\""),
        ),
        ("iat".into(), (t - 60).to_string()),
        ("nbf".into(), (t - 60).to_string()),
        ("exp".into(), (t + 3600).to_string()),
        ("oid".into(), format!("\"{OID}\"")),
        ("tid".into(), format!("\"{TENANT}\"")),
    ];
    for (name, value) in overrides {
        claims.retain(|(n, _)| n != name);
        claims.push(((*name).into(), (*value).into()));
    }
    let body: Vec<String> = claims.iter().map(|(n, v)| format!("\"{n}\":{v}")).collect();
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(format!("{{{}}}", body.join(",")))
    )
}

async fn send_bearer(c: &Client, method: &str, path: &str, token: &str) -> stowage_tests::Response {
    c.request(method, path)
        .anonymous()
        .header("authorization", &format!("Bearer {token}"))
        .send()
        .await
}

const CHALLENGE: &str = "Bearer authorization_uri=https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/authorize resource_id=https://storage.azure.com";

#[tokio::test]
async fn a_valid_bearer_token_does_everything_on_the_account() {
    let (server, c) = TestServer::start_oauth().await;
    let name = unique("bearer");
    let t = token(&[]);
    let r = send_bearer(&c, "PUT", &format!("/{name}?restype=container"), &t).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = c
        .request("PUT", &format!("/{name}/b.txt"))
        .anonymous()
        .header("authorization", &format!("Bearer {t}"))
        .header("x-ms-blob-type", "BlockBlob")
        .body(&b"bearer"[..])
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let r = send_bearer(&c, "GET", &format!("/{name}/b.txt"), &t).await;
    assert_eq!(&r.body[..], b"bearer");
    // The ACL operations too: roles are not emulated.
    let r = send_bearer(
        &c,
        "GET",
        &format!("/{name}?restype=container&comp=acl"),
        &t,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    drop(server);
}

#[tokio::test]
async fn refused_tokens_are_401_invalid_authentication_info_with_the_challenge() {
    let (server, c) = TestServer::start_oauth().await;
    let t = now_secs();
    let cases: Vec<(String, &str)> = vec![
        (
            token(&[("exp", &(t - 1).to_string())]),
            "Lifetime validation failed. The token is expired.",
        ),
        (
            token(&[("nbf", &(t + 60).to_string())]),
            "Lifetime validation failed. The token is not yet valid.",
        ),
        (
            token(&[("aud", "\"https://vault.azure.net\"")]),
            "Audience validation failed. Audience did not match.",
        ),
        (
            token(&[("aud", "\"https://otheraccount.blob.core.windows.net\"")]),
            "Audience validation failed. Audience did not match.",
        ),
        (
            token(&[("iss", "\"https://issuer.example/\"")]),
            "Issuer validation failed. Issuer did not match.",
        ),
    ];
    for (t, detail) in cases {
        let r = send_bearer(&c, "GET", "/?comp=list", &t).await;
        r.assert_error(401, "InvalidAuthenticationInfo");
        assert_eq!(r.header("www-authenticate").as_deref(), Some(CHALLENGE));
        assert!(
            r.text().contains(&format!(
                "<AuthenticationErrorDetail>{detail}</AuthenticationErrorDetail>"
            )),
            "{}",
            r.text()
        );
    }
    // Not a JWT: the challenge names the common tenant.
    let r = send_bearer(&c, "GET", "/?comp=list", "not-a-jwt").await;
    r.assert_error(401, "InvalidAuthenticationInfo");
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("login.microsoftonline.com/common/oauth2/authorize")
    );
    drop(server);
}

#[tokio::test]
async fn a_token_expires_with_the_server_clock() {
    let (server, c) = TestServer::start_oauth().await;
    let t = token(&[]);
    let r = send_bearer(&c, "GET", "/?comp=list", &t).await;
    assert_eq!(r.status, 200, "{}", r.text());
    server.clock.advance(Duration::from_secs(3600));
    let r = send_bearer(&c, "GET", "/?comp=list", &t).await;
    r.assert_error(401, "InvalidAuthenticationInfo");
}

#[tokio::test]
async fn versions_before_2019_12_12_get_403_without_a_challenge() {
    let (server, c) = TestServer::start_oauth().await;
    let expired = token(&[("exp", &(now_secs() - 1).to_string())]);
    let r = c
        .request("GET", "/?comp=list")
        .without("x-ms-version")
        .header("x-ms-version", "2019-07-07")
        .anonymous()
        .header("authorization", &format!("Bearer {expired}"))
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
    assert_eq!(r.header("www-authenticate"), None);
    drop(server);
}

#[tokio::test]
async fn without_oauth_a_bearer_token_is_403_authentication_failed() {
    let server = TestServer::start().await;
    let r = send_bearer(&server.client(), "GET", "/?comp=list", &token(&[])).await;
    r.assert_error(403, "AuthenticationFailed");
    assert_eq!(r.header("www-authenticate"), None);
}

const KEY_INFO: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?><KeyInfo>\
    <Start>2024-09-03T10:00:00Z</Start><Expiry>2024-09-03T12:00:00Z</Expiry></KeyInfo>";

#[tokio::test]
async fn get_user_delegation_key_answers_bearer_requests_only() {
    let (server, c) = TestServer::start_oauth().await;
    let path = "/?restype=service&comp=userdelegationkey";
    // Shared Key (and so any other credential): 403 AuthenticationFailed.
    let r = c.request("POST", path).body(KEY_INFO).send().await;
    r.assert_error(403, "AuthenticationFailed");
    assert!(
        r.text()
            .contains("Only authentication scheme Bearer is supported")
    );
    let r = c
        .request("POST", path)
        .anonymous()
        .body(KEY_INFO)
        .send()
        .await;
    r.assert_error(403, "AuthenticationFailed");
    // A bearer token: the key, for the token's identity.
    let r = c
        .request("POST", path)
        .anonymous()
        .header("authorization", &format!("Bearer {}", token(&[])))
        .body(KEY_INFO)
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.text();
    for element in [
        format!("<SignedOid>{OID}</SignedOid>"),
        format!("<SignedTid>{TENANT}</SignedTid>"),
        "<SignedStart>2024-09-03T10:00:00Z</SignedStart>".to_owned(),
        "<SignedExpiry>2024-09-03T12:00:00Z</SignedExpiry>".to_owned(),
        "<SignedService>b</SignedService>".to_owned(),
        format!(
            "<SignedVersion>{}</SignedVersion>",
            stowage_tests::client_version()
        ),
    ] {
        assert!(text.contains(&element), "{element} in {text}");
    }
    // An expiry more than seven days ahead, or none.
    for body in [
        "<KeyInfo><Expiry>2024-09-11T00:00:00Z</Expiry></KeyInfo>",
        "<KeyInfo><Expiry>2024-09-03T10:00:00Z</Expiry></KeyInfo>",
    ] {
        let r = c
            .request("POST", path)
            .anonymous()
            .header("authorization", &format!("Bearer {}", token(&[])))
            .body(body)
            .send()
            .await;
        r.assert_error(400, "InvalidXmlNodeValue");
    }
    drop(server);
}

fn element<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text.find(&format!("<{name}>")).unwrap() + name.len() + 2;
    let end = text.find(&format!("</{name}>")).unwrap();
    &text[start..end]
}

/// A read SAS for one blob, signed with the delegation key of `key_xml`
/// (the `sv=2020-12-06` layout, written out here field by field).
fn delegation_sas(key_xml: &str, container: &str, blob: &str) -> String {
    let [oid, tid, skt, ske, skv, value] = [
        "SignedOid",
        "SignedTid",
        "SignedStart",
        "SignedExpiry",
        "SignedVersion",
        "Value",
    ]
    .map(|n| element(key_xml, n).to_owned());
    let (se, sv) = ("2024-09-03T11:00:00Z", "2020-12-06");
    let string_to_sign = [
        "r",
        "",
        se,
        &format!("/blob/devstoreaccount1/{container}/{blob}"),
        &oid,
        &tid,
        &skt,
        &ske,
        "b",
        &skv,
        "",
        "",
        "",
        "",
        "",
        sv,
        "b",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
    ]
    .join("\n");
    let mut mac = Hmac::<Sha256>::new_from_slice(&STANDARD.decode(value).unwrap()).unwrap();
    mac.update(string_to_sign.as_bytes());
    let sig = STANDARD.encode(mac.finalize().into_bytes());
    let enc = |s: &str| {
        percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    format!(
        "sp=r&se={}&sv={sv}&sr=b&skoid={oid}&sktid={tid}&skt={}&ske={}&sks=b&skv={skv}&sig={}",
        enc(se),
        enc(&skt),
        enc(&ske),
        enc(&sig)
    )
}

#[tokio::test]
async fn user_delegation_sas_refusals() {
    let (server, c) = TestServer::start_oauth().await;
    let name = unique("udsas");
    c.create_container(&name).await;
    c.put_blob(&name, "b.txt", b"delegated").await;
    let r = c
        .request("POST", "/?restype=service&comp=userdelegationkey")
        .anonymous()
        .header("authorization", &format!("Bearer {}", token(&[])))
        .body(KEY_INFO)
        .send()
        .await;
    let key_xml = r.text();
    let sas = delegation_sas(&key_xml, &name, "b.txt");
    let read = |query: String| {
        let c = c.clone();
        let path = format!("/{name}/b.txt?{query}");
        async move { c.request("GET", &path).anonymous().send().await }
    };
    let r = read(sas.clone()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(&r.body[..], b"delegated");
    // The SAS grants reads only.
    let r = c
        .request("PUT", &format!("/{name}/b.txt?{sas}"))
        .anonymous()
        .header("x-ms-blob-type", "BlockBlob")
        .body(&b"x"[..])
        .send()
        .await;
    r.assert_error(403, "AuthorizationPermissionMismatch");
    // Another object id gives another key: the signature does not match.
    let r = read(sas.replace(&format!("skoid={OID}"), "skoid=someone-else")).await;
    r.assert_error(403, "AuthenticationFailed");
    assert!(r.text().contains("Signature did not match"), "{}", r.text());
    // A stored access policy cannot be named by a user delegation SAS.
    let r = read(format!("{sas}&si=policy")).await;
    r.assert_error(403, "AuthenticationFailed");
    // Past the SAS's expiry (11:00), still inside the key's (12:00).
    server.clock.advance(Duration::from_secs(3600));
    let r = read(sas.clone()).await;
    r.assert_error(403, "AuthenticationFailed");
    assert!(
        r.text()
            .contains("Signature not valid in the specified time frame")
    );
}

#[tokio::test]
async fn a_user_delegation_sas_fails_once_its_key_expires() {
    let (server, c) = TestServer::start_oauth().await;
    let name = unique("udkey");
    c.create_container(&name).await;
    c.put_blob(&name, "b.txt", b"delegated").await;
    // A key that ends at 10:30, before the SAS's own expiry (11:00).
    let body = "<KeyInfo><Expiry>2024-09-03T10:30:00Z</Expiry></KeyInfo>";
    let r = c
        .request("POST", "/?restype=service&comp=userdelegationkey")
        .anonymous()
        .header("authorization", &format!("Bearer {}", token(&[])))
        .body(body)
        .send()
        .await;
    let sas = delegation_sas(&r.text(), &name, "b.txt");
    let path = format!("/{name}/b.txt?{sas}");
    let r = c.request("GET", &path).anonymous().send().await;
    assert_eq!(r.status, 200, "{}", r.text());
    server.clock.advance(Duration::from_secs(20 * 60));
    let r = c.request("GET", &path).anonymous().send().await;
    r.assert_error(403, "AuthenticationFailed");
    assert!(
        r.text()
            .contains("The user delegation key is not valid in the specified time frame"),
        "{}",
        r.text()
    );
}
