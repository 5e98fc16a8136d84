//! User delegation: the derivation, the string-to-sign per version, and
//! vectors made with the Python SDK (azure-storage-blob 12.31.1,
//! `generate_blob_sas(user_delegation_key=...)`) over a key whose value is
//! this module's derivation.

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, UNIX_EPOCH};

use super::super::sas::{SasRequest, parse_sas, string_to_sign, verify_sas};
use super::*;

const ACCOUNT: &str = "devstoreaccount1";
const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const OID: &str = "11059fcc-5514-4800-b5f8-49808b9cfab6";
const TID: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";

fn dev_key() -> Vec<u8> {
    STANDARD.decode(DEV_KEY).unwrap()
}

fn fields() -> KeyFields<'static> {
    KeyFields {
        oid: OID,
        tid: TID,
        start: "2024-09-01T00:00:00Z",
        expiry: "2024-09-08T00:00:00Z",
        service: "b",
        version: "2026-10-06",
    }
}

fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

/// 2024-09-03T10:15:07Z: inside the key's and the vectors' windows.
fn now() -> SystemTime {
    at(1_725_358_507)
}

fn request(blob: Option<&'static str>) -> SasRequest<'static> {
    SasRequest {
        account: ACCOUNT,
        container: Some("mycontainer"),
        blob,
        snapshot: None,
        now: now(),
        client_ip: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        https: true,
    }
}

const BLOB_VECTOR: &str = "st=2024-09-02T00%3A00%3A00Z&se=2024-09-07T00%3A00%3A00Z&sp=r\
    &spr=https%2Chttp&sv=2026-10-06&sr=b&skoid=11059fcc-5514-4800-b5f8-49808b9cfab6\
    &sktid=72f988bf-86f1-41af-91ab-2d7cd011db47&skt=2024-09-01T00%3A00%3A00Z\
    &ske=2024-09-08T00%3A00%3A00Z&sks=b&skv=2026-10-06\
    &sig=mWOEMZNwtP8E7is9iNf7%2B5I9ZcQlMqgYD9EUNOwi/TA%3D";

const CONTAINER_VECTOR: &str = "se=2024-09-07T00%3A00%3A00Z&sp=rwl&sv=2026-10-06&sr=c\
    &scid=c0ffee&skoid=11059fcc-5514-4800-b5f8-49808b9cfab6\
    &sktid=72f988bf-86f1-41af-91ab-2d7cd011db47&skt=2024-09-01T00%3A00%3A00Z\
    &ske=2024-09-08T00%3A00%3A00Z&sks=b&skv=2026-10-06\
    &sig=75LdbPCruGAeChI6S2/X8LnCjEzIAZEVsS71QI%2BeGyU%3D";

#[test]
fn the_key_value_is_an_hmac_of_its_fields() {
    assert_eq!(
        key_value(&dev_key(), ACCOUNT, &fields()),
        "049BhYw1UNoLNB4aIH9zCIEBluN0xz1GUCfS5BMu1ig="
    );
    // Every field, the account and the account key change the key.
    let base = derive_key(&dev_key(), ACCOUNT, &fields());
    let variants = [
        KeyFields {
            oid: "other",
            ..fields()
        },
        KeyFields {
            tid: "other",
            ..fields()
        },
        KeyFields {
            start: "2024-09-01T00:00:01Z",
            ..fields()
        },
        KeyFields {
            expiry: "2024-09-08T00:00:01Z",
            ..fields()
        },
        KeyFields {
            service: "q",
            ..fields()
        },
        KeyFields {
            version: "2025-11-05",
            ..fields()
        },
    ];
    for v in &variants {
        assert_ne!(derive_key(&dev_key(), ACCOUNT, v), base, "{v:?}");
    }
    assert_ne!(derive_key(&dev_key(), "other", &fields()), base);
    assert_ne!(derive_key(b"another key", ACCOUNT, &fields()), base);
}

#[test]
fn python_sdk_blob_vector() {
    let token = parse_sas(BLOB_VECTOR).unwrap().unwrap();
    let req = request(Some("dir/hello world.txt"));
    assert_eq!(
        string_to_sign(&token, &req),
        "r\n2024-09-02T00:00:00Z\n2024-09-07T00:00:00Z\n\
         /blob/devstoreaccount1/mycontainer/dir/hello world.txt\n\
         11059fcc-5514-4800-b5f8-49808b9cfab6\n72f988bf-86f1-41af-91ab-2d7cd011db47\n\
         2024-09-01T00:00:00Z\n2024-09-08T00:00:00Z\nb\n2026-10-06\n\n\n\n\n\n\n\
         https,http\n2026-10-06\nb\n\n\n\n\n\n\n\n\n"
    );
    let grant = verify_sas(&token, &req, &[dev_key()], None).unwrap();
    assert!(grant.permissions.contains('r'));
    // Another account key derives another delegation key.
    assert!(matches!(
        verify_sas(&token, &req, &[b"another key".to_vec()], None),
        Err(SasError::SignatureMismatch { .. })
    ));
    // With two account keys, the second one verifies too.
    assert!(verify_sas(&token, &req, &[b"another key".to_vec(), dev_key()], None).is_ok());
}

#[test]
fn python_sdk_container_vector_signs_the_correlation_id() {
    let token = parse_sas(CONTAINER_VECTOR).unwrap().unwrap();
    let req = request(Some("any/blob"));
    assert!(verify_sas(&token, &req, &[dev_key()], None).is_ok());
    let tampered = CONTAINER_VECTOR.replace("scid=c0ffee", "scid=c0ffef");
    let token = parse_sas(&tampered).unwrap().unwrap();
    assert!(matches!(
        verify_sas(&token, &req, &[dev_key()], None),
        Err(SasError::SignatureMismatch { .. })
    ));
}

#[test]
fn changed_key_fields_break_the_signature() {
    let req = request(Some("dir/hello world.txt"));
    for (from, to) in [
        ("skoid=11059fcc", "skoid=21059fcc"),
        ("sktid=72f988bf", "sktid=82f988bf"),
        ("ske=2024-09-08", "ske=2024-09-09"),
        ("skt=2024-09-01", "skt=2024-08-31"),
        ("skv=2026-10-06", "skv=2025-11-05"),
    ] {
        let token = parse_sas(&BLOB_VECTOR.replace(from, to)).unwrap().unwrap();
        assert!(
            matches!(
                verify_sas(&token, &req, &[dev_key()], None),
                Err(SasError::SignatureMismatch { .. })
            ),
            "{to}"
        );
    }
}

#[test]
fn the_key_must_be_valid_now() {
    let token = parse_sas(BLOB_VECTOR).unwrap().unwrap();
    // The SAS window (09-02 .. 09-07) lies inside the key's (09-01 ..
    // 09-08); a SAS that outlives its key fails once the key expires.
    let longer = BLOB_VECTOR.replace("se=2024-09-07", "se=2024-09-30");
    let long = parse_sas(&longer).unwrap().unwrap();
    let mut req = request(Some("dir/hello world.txt"));
    let mut resigned = long.clone();
    resigned.sig = super::super::sas::sign(
        &derive_key(&dev_key(), ACCOUNT, &fields()),
        &string_to_sign(&long, &req),
    );
    req.now = at(1_725_753_600 + 3600); // 2024-09-08T01:00:00Z
    assert_eq!(
        verify_sas(&resigned, &req, &[dev_key()], None).map(|_| ()),
        Err(SasError::KeyOutsideTimeWindow)
    );
    req.now = at(1_725_753_600 - 1); // 2024-09-07T23:59:59Z
    assert!(verify_sas(&resigned, &req, &[dev_key()], None).is_ok());
    // The SAS's own window is checked first.
    assert_eq!(
        verify_sas(&token, &req, &[dev_key()], None).map(|_| ()),
        Err(SasError::OutsideTimeWindow)
    );
}

#[test]
fn layouts_per_version() {
    let d = Delegation {
        skoid: "O".into(),
        sktid: "T".into(),
        skt: "KS".into(),
        ske: "KE".into(),
        sks: "b".into(),
        skv: "KV".into(),
        saoid: Some("A".into()),
        suoid: None,
        scid: Some("C".into()),
        key_start: now(),
        key_expiry: now(),
    };
    let f = |sv: &'static str| SignedFields {
        sp: "r",
        st: "ST",
        se: "SE",
        canonicalized_resource: "/blob/a/c/b",
        sip: "IP",
        spr: "https",
        sv,
        sr: "b",
        snapshot: "",
        ses: "S",
        overrides: ["1", "2", "3", "4", "5"],
    };
    let head = "r\nST\nSE\n/blob/a/c/b\nO\nT\nKS\nKE\nb\nKV";
    let cases: [(&str, Vec<String>); 4] = [
        (
            "2018-11-09",
            vec![format!("{head}\nIP\nhttps\n2018-11-09\nb\n\n1\n2\n3\n4\n5")],
        ),
        (
            "2020-02-10",
            vec![format!(
                "{head}\nA\n\nC\nIP\nhttps\n2020-02-10\nb\n\n1\n2\n3\n4\n5"
            )],
        ),
        (
            "2021-12-02",
            vec![format!(
                "{head}\nA\n\nC\nIP\nhttps\n2021-12-02\nb\n\nS\n1\n2\n3\n4\n5"
            )],
        ),
        (
            "2026-10-06",
            vec![
                format!("{head}\nA\n\nC\n\n\nIP\nhttps\n2026-10-06\nb\n\nS\n\n\n1\n2\n3\n4\n5"),
                format!("{head}\nA\n\nC\n\n\nIP\nhttps\n2026-10-06\nb\n\nS\n1\n2\n3\n4\n5"),
            ],
        ),
    ];
    for (sv, expected) in cases {
        assert_eq!(strings_to_sign(&d, &f(sv)), expected, "{sv}");
    }
}

#[test]
fn parse_refuses_what_it_cannot_check() {
    use SasError::*;
    let cases: [(&str, SasError); 9] = [
        ("&sduoid=x", UnsupportedKind),
        ("&skdutid=x", UnsupportedKind),
        ("&srh=x-ms-foo", UnsupportedKind),
        ("&srq=comp", UnsupportedKind),
        (
            "&si=policy",
            Malformed("a user delegation SAS cannot name a stored access policy"),
        ),
        (
            "&ss=b&srt=o",
            Malformed("a user delegation SAS has sr and no ss, srt"),
        ),
        ("", Malformed("sks is not b")),
        ("", Malformed("skv is not a YYYY-MM-DD version")),
        ("", Malformed("skt is not a valid time")),
    ];
    for (i, (extra, expected)) in cases.into_iter().enumerate() {
        let query = match i {
            6 => BLOB_VECTOR.replace("sks=b", "sks=q"),
            7 => BLOB_VECTOR.replace("skv=2026-10-06", "skv=latest"),
            8 => BLOB_VECTOR.replace("skt=2024-09-01T00%3A00%3A00Z", "skt=soon"),
            _ => format!("{BLOB_VECTOR}{extra}"),
        };
        assert_eq!(parse_sas(&query), Some(Err(expected)), "{query}");
    }
    let old = BLOB_VECTOR.replace("sv=2026-10-06", "sv=2018-03-28");
    assert_eq!(parse_sas(&old), Some(Err(UnsupportedKind)));
    let no_ske = BLOB_VECTOR.replace("&ske=2024-09-08T00%3A00%3A00Z", "");
    assert_eq!(parse_sas(&no_ske), Some(Err(Malformed("ske is missing"))));
}
