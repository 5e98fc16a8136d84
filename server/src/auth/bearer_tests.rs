use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::*;

const NOW: u64 = 1_725_358_507;
const ACCOUNT: &str = "devstoreaccount1";
const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";

fn encode(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
}

/// A JWT with `claims`, header `alg: none` and an arbitrary signature.
fn token(claims: &Value) -> String {
    format!(
        "{}.{}.c2lnbmF0dXJl",
        encode(&json!({"alg": "none", "typ": "JWT"})),
        encode(claims)
    )
}

/// Valid claims with `key` replaced (or removed, for `Value::Null`).
fn claims_with(key: &str, value: Value) -> Value {
    let mut c = json!({
        "aud": "https://storage.azure.com",
        "iss": format!("https://sts.windows.net/{TENANT}/"),
        "iat": NOW - 60,
        "nbf": NOW - 60,
        "exp": NOW + 3600,
        "oid": "11059fcc-5514-4800-b5f8-49808b9cfab6",
        "tid": TENANT,
    });
    let map = c.as_object_mut().unwrap();
    if value.is_null() {
        map.remove(key);
    } else {
        map.insert(key.to_owned(), value);
    }
    c
}

#[test]
fn each_claim_is_checked_in_order() {
    use BearerError::*;
    let cases: Vec<(&str, Value, Result<(), BearerError>)> = vec![
        ("oid", json!("11059fcc-5514-4800-b5f8-49808b9cfab6"), Ok(())),
        // Lifetime: nbf <= now < exp, no skew.
        ("exp", json!(NOW), Err(Expired)),
        ("exp", json!(NOW - 1), Err(Expired)),
        ("exp", json!(NOW + 1), Ok(())),
        ("nbf", json!(NOW + 1), Err(NotYetValid)),
        ("nbf", json!(NOW), Ok(())),
        ("exp", Value::Null, Err(Malformed)),
        ("nbf", Value::Null, Err(Malformed)),
        ("iat", Value::Null, Err(Malformed)),
        ("exp", json!("tomorrow"), Err(Malformed)),
        // Issuers: by prefix, the tenant is not checked.
        ("iss", json!("https://sts.windows.net/any-tenant/"), Ok(())),
        ("iss", json!("https://sts.chinacloudapi.cn/t/"), Ok(())),
        ("iss", json!("https://sts.microsoftonline.de/t/"), Ok(())),
        ("iss", json!("https://sts.windows-ppe.net/t/"), Ok(())),
        (
            "iss",
            json!(format!("https://login.microsoftonline.com/{TENANT}/v2.0")),
            Ok(()),
        ),
        ("iss", json!("https://evil.example/"), Err(InvalidIssuer)),
        (
            "iss",
            json!("http://sts.windows.net/t/"),
            Err(InvalidIssuer),
        ),
        ("iss", Value::Null, Err(Malformed)),
        // Audiences.
        ("aud", json!("https://storage.azure.com/"), Ok(())),
        ("aud", json!("e406a681-f3d4-42a8-90b6-c2b029497af1"), Ok(())),
        (
            "aud",
            json!("https://devstoreaccount1.blob.core.windows.net"),
            Ok(()),
        ),
        (
            "aud",
            json!("https://devstoreaccount1.blob.core.chinacloudapi.cn/"),
            Ok(()),
        ),
        (
            "aud",
            json!("https://otheraccount.blob.core.windows.net"),
            Err(InvalidAudience),
        ),
        (
            "aud",
            json!("https://vault.azure.net"),
            Err(InvalidAudience),
        ),
        (
            "aud",
            json!("https://storage.azure.com.evil"),
            Err(InvalidAudience),
        ),
        (
            "aud",
            json!(["https://graph.microsoft.com", "https://storage.azure.com"]),
            Ok(()),
        ),
        (
            "aud",
            json!(["https://graph.microsoft.com"]),
            Err(InvalidAudience),
        ),
        ("aud", json!(42), Err(Malformed)),
        ("aud", Value::Null, Err(Malformed)),
    ];
    for (key, value, expected) in cases {
        let t = token(&claims_with(key, value.clone()));
        let got = verify_bearer(&t, ACCOUNT, at(NOW)).map(|_| ());
        assert_eq!(got, expected, "{key} = {value}");
    }
}

#[test]
fn a_valid_token_names_its_object_and_tenant() {
    let t = token(&claims_with("oid", json!("abc")));
    let id = verify_bearer(&t, ACCOUNT, at(NOW)).unwrap();
    assert_eq!(
        id,
        BearerIdentity {
            oid: "abc".into(),
            tid: TENANT.into()
        }
    );
    let t = token(&claims_with("tid", Value::Null));
    assert_eq!(verify_bearer(&t, ACCOUNT, at(NOW)).unwrap().tid, "");
}

#[test]
fn tokens_that_are_not_jwts_are_malformed() {
    let good = token(&claims_with("oid", json!("x")));
    let parts: Vec<&str> = good.split('.').collect();
    let cases = [
        String::new(),
        "abc".to_owned(),
        format!("{}.{}", parts[0], parts[1]),
        format!("{good}.extra"),
        format!("{}.!!!.{}", parts[0], parts[2]),
        format!("{}.{}.", encode(&json!([1, 2])), parts[1]),
        format!("{}.{}.", parts[0], URL_SAFE_NO_PAD.encode(b"not json")),
    ];
    for t in cases {
        assert_eq!(
            verify_bearer(&t, ACCOUNT, at(NOW)),
            Err(BearerError::Malformed),
            "{t}"
        );
    }
    // An empty signature (alg none) and padded base64 are accepted.
    let unsigned = format!("{}.{}.", parts[0], parts[1]);
    assert!(verify_bearer(&unsigned, ACCOUNT, at(NOW)).is_ok());
    let padded = format!(
        "{}.{}.",
        parts[0],
        base64::engine::general_purpose::URL_SAFE
            .encode(serde_json::to_vec(&claims_with("oid", json!("xy"))).unwrap())
    );
    assert!(verify_bearer(&padded, ACCOUNT, at(NOW)).is_ok());
}

#[test]
fn the_challenge_names_the_tenant_of_the_token() {
    let t = token(&claims_with("oid", json!("x")));
    assert_eq!(token_tenant(&t).as_deref(), Some(TENANT));
    assert_eq!(
        challenge(token_tenant(&t).as_deref()),
        format!(
            "Bearer authorization_uri=https://login.microsoftonline.com/{TENANT}/oauth2/authorize resource_id=https://storage.azure.com"
        )
    );
    assert_eq!(token_tenant("garbage"), None);
    let odd = token(&claims_with("tid", json!("a b/../c")));
    assert_eq!(token_tenant(&odd), None);
    assert!(challenge(None).contains("/common/oauth2/authorize "));
}
