//! SAS tests: the docs/wire/auth.md#shared-access-signatures and docs/wire/auth.md#account-sas vectors, the older `sv`
//! layouts, each docs/wire/auth.md#sas-validity-checks check failing alone, stored policies, times, `sip`
//! and permission letters.

use std::net::Ipv6Addr;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

use super::*;

const DEV_ACCOUNT: &str = "devstoreaccount1";
const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const OTHER_KEY: &[u8] = b"a second account key, not the development key";
const BLOB: &str = "dir/hello world.txt";

fn dev_key() -> Vec<u8> {
    STANDARD.decode(DEV_KEY).unwrap()
}

fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

/// 2024-09-15T00:00:00Z, inside the vectors' window.
fn mid_september() -> SystemTime {
    at(1_726_358_400)
}

fn blob_request() -> SasRequest<'static> {
    SasRequest {
        account: DEV_ACCOUNT,
        container: Some("mycontainer"),
        blob: Some(BLOB),
        snapshot: None,
        now: mid_september(),
        client_ip: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        https: false,
    }
}

fn encode_query(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(n, v)| format!("{n}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Parses `pairs` plus a placeholder `sig`.
fn token(pairs: &[(&str, &str)]) -> SasToken {
    let query = format!("{}&sig=placeholder", encode_query(pairs));
    parse_sas(&query).expect("has sig").expect("parses")
}

/// `pairs` as a token correctly signed with the dev key for `req`.
fn signed(pairs: &[(&str, &str)], req: &SasRequest) -> SasToken {
    let mut token = token(pairs);
    token.sig = sign(&dev_key(), &string_to_sign(&token, req));
    token
}

fn verify_dev(token: &SasToken, req: &SasRequest) -> Result<SasGrant, SasError> {
    verify_sas(token, req, &[dev_key()], None)
}

const READ_BLOB: &[(&str, &str)] = &[
    ("sp", "r"),
    ("st", "2024-09-01T00:00:00Z"),
    ("se", "2024-09-30T00:00:00Z"),
    ("spr", "https,http"),
    ("sv", "2026-10-06"),
    ("sr", "b"),
];

const ACCOUNT_SAS: &[(&str, &str)] = &[
    ("sp", "rwdlac"),
    ("ss", "b"),
    ("srt", "sco"),
    ("se", "2024-09-30T00:00:00Z"),
    ("spr", "https,http"),
    ("sv", "2026-10-06"),
];

/// `base` with `name` replaced by `value` (or removed when `None`).
fn with(
    base: &[(&'static str, &'static str)],
    name: &str,
    value: Option<&'static str>,
) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<_> = base.iter().copied().filter(|(n, _)| *n != name).collect();
    if let Some(value) = value {
        let name = SAS_PARAMETERS.iter().find(|p| **p == name).unwrap();
        out.push((name, value));
    }
    out
}

// ---- vectors ----

#[test]
fn service_sas_vector() {
    let query = "sp=r&st=2024-09-01T00%3A00%3A00Z&se=2024-09-30T00%3A00%3A00Z&spr=https%2Chttp\
                 &sv=2026-10-06&sr=b&sig=JiHNNd1YhxdbUZMBsAuSxM5jRTEzh0nq%2FAWq5Kfu4IY%3D";
    let token = parse_sas(query).unwrap().unwrap();
    let req = blob_request();
    assert_eq!(
        string_to_sign(&token, &req),
        "r\n2024-09-01T00:00:00Z\n2024-09-30T00:00:00Z\n\
         /blob/devstoreaccount1/mycontainer/dir/hello world.txt\n\n\nhttps,http\n2026-10-06\n\
         b\n\n\n\n\n\n\n"
    );
    assert_eq!(
        sign(&dev_key(), &string_to_sign(&token, &req)),
        "JiHNNd1YhxdbUZMBsAuSxM5jRTEzh0nq/AWq5Kfu4IY="
    );
    let grant = verify_dev(&token, &req).unwrap();
    assert_eq!(grant.kind, SasKind::Service);
    assert_eq!(grant.resource, Some(SignedResource::Blob));
    assert_eq!(grant.resource_types, None);
    assert!(grant.permissions.contains('r'));
    assert!(!grant.permissions.contains_any("acwd"));
}

#[test]
fn account_sas_vector() {
    let query = "sv=2026-10-06&ss=b&srt=sco&sp=rwdlac&se=2024-09-30T00:00:00Z&spr=https,http\
                 &sig=jRN%2Bqgm9ktyDUQmDrc0fT%2BbjPS5ozDFplsXr80UcwYc%3D";
    let token = parse_sas(query).unwrap().unwrap();
    let req = blob_request();
    assert_eq!(
        string_to_sign(&token, &req),
        "devstoreaccount1\nrwdlac\nb\nsco\n\n2024-09-30T00:00:00Z\n\nhttps,http\n2026-10-06\n\n"
    );
    assert_eq!(
        sign(&dev_key(), &string_to_sign(&token, &req)),
        "jRN+qgm9ktyDUQmDrc0fT+bjPS5ozDFplsXr80UcwYc="
    );
    let grant = verify_dev(&token, &req).unwrap();
    assert_eq!(grant.kind, SasKind::Account);
    assert_eq!(
        grant.resource_types,
        Some(ResourceTypes {
            service: true,
            container: true,
            object: true
        })
    );
    assert!(grant.permissions.contains_any("rwdlac"));
    assert!(!grant.permissions.contains_any("t"));
}

#[test]
fn account_sas_is_valid_for_any_container_and_the_account_root() {
    let req = SasRequest {
        container: None,
        blob: None,
        ..blob_request()
    };
    let token = signed(ACCOUNT_SAS, &req);
    let other = SasRequest {
        container: Some("another"),
        ..blob_request()
    };
    assert!(verify_dev(&token, &other).is_ok());
}

// ---- older sv layouts ----

#[test]
fn service_sas_2018_11_09_to_2020_10_02_has_no_encryption_scope_line() {
    let pairs = with(
        &with(READ_BLOB, "sv", Some("2019-12-12")),
        "rsct",
        Some("text/plain"),
    );
    let req = blob_request();
    let token = signed(&pairs, &req);
    assert_eq!(
        string_to_sign(&token, &req),
        "r\n2024-09-01T00:00:00Z\n2024-09-30T00:00:00Z\n\
         /blob/devstoreaccount1/mycontainer/dir/hello world.txt\n\n\nhttps,http\n2019-12-12\n\
         b\n\n\n\n\n\ntext/plain"
    );
    assert!(verify_dev(&token, &req).is_ok());
}

#[test]
fn service_sas_before_2018_11_09_has_no_resource_or_snapshot_lines() {
    let pairs = with(
        &with(READ_BLOB, "sv", Some("2017-07-29")),
        "rsct",
        Some("text/plain"),
    );
    let req = blob_request();
    let token = signed(&pairs, &req);
    assert_eq!(
        string_to_sign(&token, &req),
        "r\n2024-09-01T00:00:00Z\n2024-09-30T00:00:00Z\n\
         /blob/devstoreaccount1/mycontainer/dir/hello world.txt\n\n\nhttps,http\n2017-07-29\n\
         \n\n\n\ntext/plain"
    );
    assert!(verify_dev(&token, &req).is_ok());
}

#[test]
fn account_sas_before_2020_12_06_has_no_encryption_scope_line() {
    let pairs = with(ACCOUNT_SAS, "sv", Some("2019-02-02"));
    let req = blob_request();
    let token = signed(&pairs, &req);
    assert_eq!(
        string_to_sign(&token, &req),
        "devstoreaccount1\nrwdlac\nb\nsco\n\n2024-09-30T00:00:00Z\n\nhttps,http\n2019-02-02\n"
    );
    assert!(verify_dev(&token, &req).is_ok());
}

#[test]
fn sv_before_2015_04_05_is_unsupported() {
    let query = format!(
        "{}&sig=x",
        encode_query(&with(READ_BLOB, "sv", Some("2014-02-14")))
    );
    assert_eq!(parse_sas(&query), Some(Err(SasError::UnsupportedKind)));
}

#[test]
fn malformed_sv_is_refused() {
    for sv in ["2024-9-01", "latest", "2024-09-01T00"] {
        let query = format!("{}&sig=x", encode_query(&with(READ_BLOB, "sv", Some(sv))));
        assert!(
            matches!(parse_sas(&query), Some(Err(SasError::Malformed(_)))),
            "{sv}"
        );
    }
}

// ---- parsing ----

#[test]
fn query_without_sig_is_not_a_sas() {
    assert_eq!(parse_sas(""), None);
    assert_eq!(parse_sas(&encode_query(READ_BLOB)), None);
    assert_eq!(parse_sas("restype=container&comp=list"), None);
}

#[test]
fn fields_are_percent_decoded_and_names_match_in_any_case() {
    let token = parse_sas(
        "SV=2026-10-06&Sr=b&sp=r&se=2024-09-30T00%3A00Z&rscd=attachment%3B%20a+b&sig=a%2Bb",
    )
    .unwrap()
    .unwrap();
    assert_eq!(token.se.as_deref(), Some("2024-09-30T00:00Z"));
    // "+" is a literal plus, not a space (docs/wire/requests.md#addressing).
    assert_eq!(token.rscd.as_deref(), Some("attachment; a+b"));
    assert_eq!(token.sig, "a+b");
    assert_eq!(token.kind, SasKind::Service);
}

#[test]
fn repeated_sas_parameter_is_malformed() {
    let query = format!("{}&sp=w&sig=x", encode_query(READ_BLOB));
    assert!(matches!(
        parse_sas(&query),
        Some(Err(SasError::Malformed(_)))
    ));
}

#[test]
fn token_without_kind_fields_is_malformed() {
    let query = format!("{}&sig=x", encode_query(&with(READ_BLOB, "sr", None)));
    assert!(matches!(
        parse_sas(&query),
        Some(Err(SasError::Malformed(_)))
    ));
    let only_ss = with(ACCOUNT_SAS, "srt", None);
    let query = format!("{}&sig=x", encode_query(&only_ss));
    assert!(matches!(
        parse_sas(&query),
        Some(Err(SasError::Malformed(_)))
    ));
}

#[test]
fn incomplete_user_delegation_and_directory_sas_are_refused() {
    let query = format!("{}&skoid=00000000-0000&sig=x", encode_query(READ_BLOB));
    assert_eq!(
        parse_sas(&query),
        Some(Err(SasError::Malformed("sktid is missing")))
    );
    let query = format!("{}&sig=x", encode_query(&with(READ_BLOB, "sr", Some("d"))));
    assert_eq!(parse_sas(&query), Some(Err(SasError::UnsupportedKind)));
}

#[test]
fn unparseable_fields_are_malformed() {
    for (name, value) in [
        ("sr", "x"),
        ("st", "yesterday"),
        ("se", "2024-09-31"),
        ("sip", "localhost"),
        ("spr", "http"),
        ("sp", "rz"),
        (
            "si",
            "a-very-long-identifier-that-is-longer-than-sixty-four-characters-in-total",
        ),
    ] {
        let query = format!(
            "{}&sig=x",
            encode_query(&with(READ_BLOB, name, Some(value)))
        );
        assert!(
            matches!(parse_sas(&query), Some(Err(SasError::Malformed(_)))),
            "{name}={value}"
        );
    }
    for (name, value) in [("ss", "bx"), ("srt", "scoo")] {
        let query = format!(
            "{}&sig=x",
            encode_query(&with(ACCOUNT_SAS, name, Some(value)))
        );
        assert!(
            matches!(parse_sas(&query), Some(Err(SasError::Malformed(_)))),
            "{name}={value}"
        );
    }
}

#[test]
fn sas_parameters_are_recognised_in_any_case() {
    assert!(is_sas_parameter("sig"));
    assert!(is_sas_parameter("SKOID"));
    assert!(is_sas_parameter("rsct"));
    assert!(!is_sas_parameter("api-version"));
    assert!(!is_sas_parameter("comp"));
}

// ---- docs/wire/auth.md#sas-validity-checks: each check failing alone ----

#[test]
fn baseline_token_for_the_single_failure_tests_is_valid() {
    let req = blob_request();
    assert!(verify_dev(&signed(READ_BLOB, &req), &req).is_ok());
    assert!(verify_dev(&signed(ACCOUNT_SAS, &req), &req).is_ok());
}

#[test]
fn missing_se_is_malformed() {
    let req = blob_request();
    let token = signed(&with(READ_BLOB, "se", None), &req);
    assert_eq!(
        verify_dev(&token, &req),
        Err(SasError::Malformed("se is missing"))
    );
}

#[test]
fn missing_sp_is_malformed() {
    let req = blob_request();
    let token = signed(&with(ACCOUNT_SAS, "sp", None), &req);
    assert_eq!(
        verify_dev(&token, &req),
        Err(SasError::Malformed("sp is missing"))
    );
}

#[test]
fn wrong_signature_reports_the_string_to_sign() {
    let req = blob_request();
    let mut token = token(READ_BLOB);
    let expected = string_to_sign(&token, &req);
    token.sig = sign(OTHER_KEY, &expected);
    assert_eq!(
        verify_dev(&token, &req),
        Err(SasError::SignatureMismatch {
            string_to_sign: expected
        })
    );
}

#[test]
fn signature_with_either_key_is_accepted() {
    let req = blob_request();
    let mut token = token(READ_BLOB);
    let keys = [dev_key(), OTHER_KEY.to_vec()];
    for key in &keys {
        token.sig = sign(key, &string_to_sign(&token, &req));
        assert!(verify_sas(&token, &req, &keys, None).is_ok());
    }
}

#[test]
fn blob_sas_used_on_another_blob_is_a_signature_mismatch() {
    let req = blob_request();
    let token = signed(READ_BLOB, &req);
    let other = SasRequest {
        blob: Some("dir/other.txt"),
        ..req
    };
    assert!(matches!(
        verify_dev(&token, &other),
        Err(SasError::SignatureMismatch { .. })
    ));
}

#[test]
fn container_sas_is_valid_for_every_blob_of_its_container_only() {
    let container_req = SasRequest {
        blob: None,
        ..blob_request()
    };
    let token = signed(&with(READ_BLOB, "sr", Some("c")), &container_req);
    assert!(
        string_to_sign(&token, &container_req).contains("\n/blob/devstoreaccount1/mycontainer\n")
    );
    assert!(verify_dev(&token, &blob_request()).is_ok());
    assert!(verify_dev(&token, &container_req).is_ok());
    let elsewhere = SasRequest {
        container: Some("othercontainer"),
        ..blob_request()
    };
    assert!(matches!(
        verify_dev(&token, &elsewhere),
        Err(SasError::SignatureMismatch { .. })
    ));
}

#[test]
fn time_window_includes_start_and_excludes_expiry() {
    let req = blob_request();
    let token = signed(READ_BLOB, &req);
    let start = parse_sas_time("2024-09-01T00:00:00Z").unwrap();
    let expiry = parse_sas_time("2024-09-30T00:00:00Z").unwrap();
    let at_time = |now| verify_dev(&token, &SasRequest { now, ..req }).map(|_| ());
    assert_eq!(at_time(start), Ok(()));
    assert_eq!(
        at_time(start - Duration::from_nanos(1)),
        Err(SasError::OutsideTimeWindow)
    );
    assert_eq!(at_time(expiry - Duration::from_nanos(1)), Ok(()));
    assert_eq!(at_time(expiry), Err(SasError::OutsideTimeWindow));
}

#[test]
fn source_ip_outside_sip_is_refused() {
    let req = SasRequest {
        client_ip: Some("10.0.0.9".parse().unwrap()),
        ..blob_request()
    };
    let token = signed(&with(READ_BLOB, "sip", Some("10.0.0.8")), &req);
    assert_eq!(
        verify_dev(&token, &req),
        Err(SasError::SourceIpMismatch("10.0.0.9".into()))
    );
    let unknown = SasRequest {
        client_ip: None,
        ..req
    };
    assert_eq!(
        verify_dev(&token, &unknown),
        Err(SasError::SourceIpMismatch(String::new()))
    );
}

#[test]
fn https_only_token_over_http_is_refused() {
    let req = blob_request();
    let token = signed(&with(READ_BLOB, "spr", Some("https")), &req);
    assert_eq!(verify_dev(&token, &req), Err(SasError::ProtocolMismatch));
    let over_https = SasRequest { https: true, ..req };
    assert!(verify_dev(&token, &over_https).is_ok());
}

#[test]
fn account_sas_without_blob_service_is_refused() {
    let req = blob_request();
    let token = signed(&with(ACCOUNT_SAS, "ss", Some("qtf")), &req);
    assert_eq!(verify_dev(&token, &req), Err(SasError::ServiceMismatch));
    let token = signed(&with(ACCOUNT_SAS, "ss", Some("fb")), &req);
    assert!(verify_dev(&token, &req).is_ok());
}

#[test]
fn encryption_scope_is_not_implemented() {
    let req = blob_request();
    let token = signed(&with(READ_BLOB, "ses", Some("scope1")), &req);
    assert!(string_to_sign(&token, &req).ends_with("\nb\n\nscope1\n\n\n\n\n"));
    assert_eq!(
        verify_dev(&token, &req),
        Err(SasError::EncryptionScopeNotSupported)
    );
}

#[test]
fn checks_run_in_the_spec_order() {
    // Expired, wrong IP and HTTPS-only at once: the time window is reported.
    let req = SasRequest {
        now: at(1_800_000_000),
        client_ip: Some("10.0.0.9".parse().unwrap()),
        ..blob_request()
    };
    let pairs = with(
        &with(READ_BLOB, "sip", Some("10.0.0.8")),
        "spr",
        Some("https"),
    );
    let token = signed(&pairs, &req);
    assert_eq!(verify_dev(&token, &req), Err(SasError::OutsideTimeWindow));
    // A bad signature is reported before the time window.
    let mut unsigned = token.clone();
    unsigned.sig = "AAAA".into();
    assert!(matches!(
        verify_dev(&unsigned, &req),
        Err(SasError::SignatureMismatch { .. })
    ));
}

// ---- snapshots and overrides ----

#[test]
fn snapshot_sas_signs_the_snapshot_from_the_url() {
    let req = SasRequest {
        snapshot: Some("2024-09-03T10:15:07.1234567Z"),
        ..blob_request()
    };
    let token = signed(&with(READ_BLOB, "sr", Some("bs")), &req);
    assert!(string_to_sign(&token, &req).contains("\nbs\n2024-09-03T10:15:07.1234567Z\n"));
    assert_eq!(
        verify_dev(&token, &req).unwrap().resource,
        Some(SignedResource::BlobSnapshot)
    );
    let other_snapshot = SasRequest {
        snapshot: Some("2024-09-04T00:00:00.0000000Z"),
        ..req
    };
    assert!(matches!(
        verify_dev(&token, &other_snapshot),
        Err(SasError::SignatureMismatch { .. })
    ));
}

#[test]
fn service_sas_grants_its_response_overrides() {
    let req = blob_request();
    let pairs = [
        READ_BLOB,
        &[
            ("rscc", "no-cache"),
            ("rscd", "attachment; filename=\"a b.txt\""),
            ("rsce", "gzip"),
            ("rscl", "en-GB"),
            ("rsct", "text/csv"),
        ],
    ]
    .concat();
    let token = signed(&pairs, &req);
    assert!(
        string_to_sign(&token, &req)
            .ends_with("\nno-cache\nattachment; filename=\"a b.txt\"\ngzip\nen-GB\ntext/csv")
    );
    let grant = verify_dev(&token, &req).unwrap();
    assert_eq!(
        grant.overrides,
        ResponseOverrides {
            cache_control: Some("no-cache".into()),
            content_disposition: Some("attachment; filename=\"a b.txt\"".into()),
            content_encoding: Some("gzip".into()),
            content_language: Some("en-GB".into()),
            content_type: Some("text/csv".into()),
        }
    );
}

#[test]
fn account_sas_grants_no_overrides() {
    let req = blob_request();
    let token = signed(&[ACCOUNT_SAS, &[("rsct", "text/csv")]].concat(), &req);
    assert_eq!(
        verify_dev(&token, &req).unwrap().overrides,
        ResponseOverrides::default()
    );
}

// ---- stored access policies (docs/wire/auth.md#stored-access-policies) ----

const POLICY_BLOB: &[(&str, &str)] = &[("si", "readers"), ("sv", "2026-10-06"), ("sr", "b")];

fn policy(start: Option<&str>, expiry: Option<&str>, permission: Option<&str>) -> StoredPolicy {
    StoredPolicy {
        start: start.map(str::to_owned),
        expiry: expiry.map(str::to_owned),
        permission: permission.map(str::to_owned),
    }
}

#[test]
fn stored_policy_supplies_missing_fields() {
    let req = blob_request();
    let token = signed(POLICY_BLOB, &req);
    assert_eq!(
        string_to_sign(&token, &req),
        "\n\n\n/blob/devstoreaccount1/mycontainer/dir/hello world.txt\nreaders\n\n\n2026-10-06\n\
         b\n\n\n\n\n\n\n"
    );
    let acl = policy(
        Some("2024-09-01T00:00:00.0000000Z"),
        Some("2024-09-30T00:00:00.0000000Z"),
        Some("rw"),
    );
    let grant = verify_sas(&token, &req, &[dev_key()], Some(&acl)).unwrap();
    assert!(grant.permissions.contains('w'));
    // The policy's window applies.
    let late = SasRequest {
        now: at(1_800_000_000),
        ..req
    };
    assert_eq!(
        verify_sas(&token, &late, &[dev_key()], Some(&acl)),
        Err(SasError::OutsideTimeWindow)
    );
}

#[test]
fn url_and_policy_fields_combine() {
    let req = blob_request();
    let token = signed(&[POLICY_BLOB, &[("se", "2024-09-30")]].concat(), &req);
    let acl = policy(None, Some(""), Some("r"));
    assert!(verify_sas(&token, &req, &[dev_key()], Some(&acl)).is_ok());
}

#[test]
fn field_in_url_and_policy_is_a_conflict() {
    let req = blob_request();
    let acl = policy(Some("2024-09-01"), Some("2024-09-30"), Some("r"));
    for (name, value) in [("st", "2024-09-01"), ("se", "2024-09-30"), ("sp", "r")] {
        let field: &'static str = SAS_PARAMETERS.iter().copied().find(|p| *p == name).unwrap();
        let token = signed(&[POLICY_BLOB, &[(field, value)]].concat(), &req);
        assert_eq!(
            verify_sas(&token, &req, &[dev_key()], Some(&acl)).map(|_| ()),
            Err(SasError::PolicyFieldConflict(field)),
        );
    }
}

#[test]
fn unknown_policy_is_refused() {
    let req = blob_request();
    let token = signed(POLICY_BLOB, &req);
    assert_eq!(verify_dev(&token, &req), Err(SasError::PolicyNotFound));
}

#[test]
fn field_missing_from_url_and_policy_is_malformed() {
    let req = blob_request();
    let token = signed(POLICY_BLOB, &req);
    let acl = policy(None, None, Some("r"));
    assert_eq!(
        verify_sas(&token, &req, &[dev_key()], Some(&acl)),
        Err(SasError::Malformed("se is missing"))
    );
}

#[test]
fn policy_is_ignored_without_si() {
    let req = blob_request();
    let token = signed(READ_BLOB, &req);
    let acl = policy(Some("2024-09-01"), Some("2024-09-30"), Some("rw"));
    let grant = verify_sas(&token, &req, &[dev_key()], Some(&acl)).unwrap();
    assert!(!grant.permissions.contains('w'));
}

// ---- times ----

#[test]
fn sas_times_parse_in_every_accepted_form() {
    let base = at(1_725_358_507); // 2024-09-03T10:15:07Z
    assert_eq!(parse_sas_time("2024-09-03"), Some(at(1_725_321_600)));
    assert_eq!(
        parse_sas_time("2024-09-03T10:15Z"),
        Some(base - Duration::from_secs(7))
    );
    assert_eq!(parse_sas_time("2024-09-03T10:15:07Z"), Some(base));
    assert_eq!(
        parse_sas_time("2024-09-03T10:15:07.5Z"),
        Some(base + Duration::from_millis(500))
    );
    assert_eq!(
        parse_sas_time("2024-09-03T10:15:07.1234567Z"),
        Some(base + Duration::from_nanos(123_456_700))
    );
    assert_eq!(
        parse_sas_time("2000-02-29T12:30:00Z"),
        Some(at(951_827_400))
    );
    assert_eq!(
        parse_sas_time("1969-12-31T23:59:59Z"),
        Some(UNIX_EPOCH - Duration::from_secs(1))
    );
    assert_eq!(
        parse_sas_time("9999-12-31T23:59:59Z"),
        Some(at(253_402_300_799))
    );
}

#[test]
fn malformed_sas_times_are_refused() {
    for bad in [
        "",
        "2024-09-03T",
        "2024-09-03T10Z",
        "2024-09-03T10:15",
        "2024-09-03T10:15:07",
        "2024-09-03T10:15:07.Z",
        "2024-09-03T10:15:07.12345678Z",
        "2024-09-03T10:15:7Z",
        "2024-09-03 10:15:07Z",
        "2024-09-03T10:15:07+00:00",
        "2024-09-03t10:15:07z",
        "2024-13-01",
        "2024-00-01",
        "2023-02-29",
        "1900-02-29",
        "2024-04-31",
        "2024-09-03T24:00Z",
        "2024-09-03T10:60Z",
        "2024-09-03T10:15:60Z",
        "+024-09-03",
        "2024-+9-03",
        "2024/09/03",
        "2024-09-03T10:1é",
    ] {
        assert_eq!(parse_sas_time(bad), None, "{bad:?}");
    }
}

// ---- sip ----

fn range(sip: &str) -> Ipv4Range {
    parse_ip_range(sip).unwrap()
}

#[test]
fn sip_single_address_matches_only_itself() {
    let single = range("168.1.5.65");
    assert!(single.contains("168.1.5.65".parse().unwrap()));
    assert!(!single.contains("168.1.5.66".parse().unwrap()));
}

#[test]
fn sip_range_is_inclusive() {
    let r = range("168.1.5.60-168.1.5.70");
    for (ip, inside) in [
        ("168.1.5.59", false),
        ("168.1.5.60", true),
        ("168.1.5.65", true),
        ("168.1.5.70", true),
        ("168.1.5.71", false),
    ] {
        assert_eq!(r.contains(ip.parse().unwrap()), inside, "{ip}");
    }
}

#[test]
fn ipv6_client_never_matches_an_ipv4_sip() {
    let r = range("0.0.0.0-255.255.255.255");
    assert!(!r.contains(IpAddr::V6(Ipv6Addr::LOCALHOST)));
    // An IPv4 client seen through a dual-stack socket still matches.
    assert!(r.contains("::ffff:10.0.0.1".parse().unwrap()));

    let req = SasRequest {
        client_ip: Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        ..blob_request()
    };
    let token = signed(&with(READ_BLOB, "sip", Some("127.0.0.1")), &req);
    assert_eq!(
        verify_dev(&token, &req),
        Err(SasError::SourceIpMismatch("::1".into()))
    );
}

#[test]
fn malformed_sip_is_refused() {
    for bad in [
        "10.0.0.9-10.0.0.1",
        "::1",
        "10.0.0",
        "10.0.0.1-",
        "10.0.0.1-10.0.0.2-10.0.0.3",
    ] {
        assert!(parse_ip_range(bad).is_err(), "{bad}");
    }
}

// ---- permissions ----

#[test]
fn permission_letters_are_accepted_in_any_order() {
    let documented = Permissions::parse("racwdxyltfmeopi", SasKind::Service).unwrap();
    let reversed = Permissions::parse("ipoemftlyxdwcar", SasKind::Service).unwrap();
    assert_eq!(documented, reversed);
    assert_eq!(
        Permissions::parse("wr", SasKind::Service),
        Permissions::parse("rw", SasKind::Service)
    );
    let account = Permissions::parse("itfpucalyxdwr", SasKind::Account).unwrap();
    assert!(account.contains_any("u"));
}

#[test]
fn unknown_or_repeated_permission_letters_are_refused() {
    for (letters, kind) in [
        ("rr", SasKind::Service),
        ("rwr", SasKind::Account),
        ("rz", SasKind::Service),
        ("R", SasKind::Service),
        ("", SasKind::Service),
        // `u` (update) exists only for account SAS, `m`, `e`, `o` only for
        // service SAS.
        ("ru", SasKind::Service),
        ("rm", SasKind::Account),
        ("re", SasKind::Account),
        ("ro", SasKind::Account),
    ] {
        assert!(
            matches!(
                Permissions::parse(letters, kind),
                Err(SasError::Malformed(_))
            ),
            "{letters:?} {kind:?}"
        );
    }
}

#[test]
fn contains_any_checks_each_letter() {
    let p = Permissions::parse("rl", SasKind::Service).unwrap();
    assert!(p.contains_any("r"));
    assert!(p.contains_any("cwl"));
    assert!(!p.contains_any("cw"));
    assert!(!p.contains_any(""));
    assert!(!p.contains_any("?"));
}
