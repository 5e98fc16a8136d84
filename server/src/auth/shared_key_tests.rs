//! Shared Key tests: the docs/wire/auth.md#test-vectors vectors, the version rules,
//! canonicalization details and the docs/wire/auth.md#forms-stowage-also-accepts alternatives.

use super::*;

const DEV_ACCOUNT: &str = "devstoreaccount1";
const DEV_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const VECTOR_DATE: &str = "Tue, 03 Sep 2024 10:15:07 GMT";
const VECTOR_VERSION: &str = "2021-10-04";
/// A second, unrelated key for the account.
const OTHER_KEY: &[u8] = b"a second account key, not the development key";

fn dev_key() -> Vec<u8> {
    STANDARD.decode(DEV_KEY).unwrap()
}

fn vector_time() -> SystemTime {
    httpdate::parse_http_date(VECTOR_DATE).unwrap()
}

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn view<'a>(
    method: &'a str,
    raw_path: &'a str,
    raw_query: &'a str,
    headers: &'a [(String, String)],
) -> RequestView<'a> {
    RequestView {
        method,
        raw_path,
        raw_query,
        headers,
    }
}

/// The common `x-ms-date` / `x-ms-version` pair plus `extra`.
fn vector_headers(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all = headers(&[("x-ms-date", VECTOR_DATE), ("x-ms-version", VECTOR_VERSION)]);
    all.extend(headers(extra));
    all
}

fn auth(scheme: Scheme, signature: String) -> AuthorizationHeader {
    AuthorizationHeader {
        scheme,
        account: DEV_ACCOUNT.to_owned(),
        signature,
    }
}

/// Signs `req` the way a client using `form` would, with the dev key.
fn signed_with(req: &RequestView, scheme: Scheme, form: Canonicalization) -> AuthorizationHeader {
    let version = single_header(req, "x-ms-version").unwrap().unwrap_or("");
    let sts = string_to_sign_variant(req, DEV_ACCOUNT, scheme, version, form).unwrap();
    auth(scheme, sign(&dev_key(), &sts))
}

fn verify_dev(req: &RequestView, auth: &AuthorizationHeader) -> Result<(), SharedKeyError> {
    verify(req, auth, DEV_ACCOUNT, &[dev_key()], vector_time())
}

// ---- docs/wire/auth.md#test-vectors vectors ----

#[test]
fn vector_1_create_container() {
    let h = vector_headers(&[("content-length", "0")]);
    let req = view(
        "PUT",
        "/devstoreaccount1/mycontainer",
        "restype=container",
        &h,
    );
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert_eq!(
        sts,
        "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\n\
         x-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer\n\
         restype:container"
    );
    let signature = sign(&dev_key(), &sts);
    assert_eq!(signature, "m5xBtgvPs2dzzKB3r83qyAdtaLR6z3dFFawzqeRPsLA=");
    let header = parse_authorization(&format!("SharedKey devstoreaccount1:{signature}")).unwrap();
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

#[test]
fn vector_2_put_blob() {
    // Header names arrive lowercased; x-ms-meta-Owner was sent mixed-case.
    let h = vector_headers(&[
        ("content-length", "11"),
        ("content-type", "text/plain"),
        ("x-ms-blob-type", "BlockBlob"),
        ("x-ms-meta-owner", "alice"),
    ]);
    let req = view(
        "PUT",
        "/devstoreaccount1/mycontainer/dir/hello%20world.txt",
        "",
        &h,
    );
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert_eq!(
        sts,
        "PUT\n\n\n11\n\ntext/plain\n\n\n\n\n\n\nx-ms-blob-type:BlockBlob\n\
         x-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\nx-ms-meta-owner:alice\n\
         x-ms-version:2021-10-04\n\
         /devstoreaccount1/devstoreaccount1/mycontainer/dir/hello%20world.txt"
    );
    let signature = sign(&dev_key(), &sts);
    assert_eq!(signature, "SPUViwkOsQoI+V4kAhlcn5/XTnAvHhR1flkPC7Y/YJI=");
    assert_eq!(
        verify_dev(&req, &auth(Scheme::SharedKey, signature)),
        Ok(())
    );
}

#[test]
fn vector_3_list_blobs() {
    let h = vector_headers(&[]);
    let req = view(
        "GET",
        "/devstoreaccount1/mycontainer",
        "restype=container&comp=list&include=metadata,snapshots&prefix=dir/",
        &h,
    );
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert_eq!(
        sts,
        "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\n\
         x-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer\n\
         comp:list\ninclude:metadata,snapshots\nprefix:dir/\nrestype:container"
    );
    let signature = sign(&dev_key(), &sts);
    assert_eq!(signature, "dxU/ds+r13x8K6tkOVM/CBwlzvSTDcyEh7DqKL2TtIw=");
    assert_eq!(
        verify_dev(&req, &auth(Scheme::SharedKey, signature)),
        Ok(())
    );
}

// ---- version-dependent rules ----

fn content_length_line(version: &str) -> String {
    let h = headers(&[("content-length", "0"), ("x-ms-version", version)]);
    let req = view("PUT", "/devstoreaccount1/c", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, version).unwrap();
    sts.split('\n').nth(3).unwrap().to_owned()
}

#[test]
fn content_length_zero_is_signed_empty_from_2015_02_21() {
    assert_eq!(content_length_line("2015-02-21"), "");
    assert_eq!(content_length_line("2026-10-06"), "");
}

#[test]
fn content_length_zero_is_signed_as_0_before_2015_02_21() {
    assert_eq!(content_length_line("2014-02-14"), "0");
    // No x-ms-version: processed as 2009-09-19 (docs/wire/requests.md#service-version).
    assert_eq!(content_length_line(""), "0");
}

#[test]
fn empty_x_ms_header_is_signed_as_name_colon_from_2016_05_31() {
    let h = headers(&[
        ("x-ms-client-request-id", ""),
        ("x-ms-version", "2016-05-31"),
    ]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, "2016-05-31").unwrap();
    assert!(sts.contains("\nx-ms-client-request-id:\nx-ms-version:2016-05-31\n"));
}

#[test]
fn empty_x_ms_header_is_left_out_before_2016_05_31() {
    let h = headers(&[
        ("x-ms-client-request-id", "  "),
        ("x-ms-version", "2015-12-11"),
    ]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, "2015-12-11").unwrap();
    assert!(!sts.contains("x-ms-client-request-id"));
    assert!(sts.contains("\n\nx-ms-version:2015-12-11\n/"));
}

// ---- canonicalization details ----

fn canonical_resource_of(raw_path: &str, raw_query: &str) -> String {
    let h = vector_headers(&[]);
    let req = view("GET", raw_path, raw_query, &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    let start = sts.find("\n/").unwrap() + 1;
    sts[start..].to_owned()
}

#[test]
fn query_parameters_are_lowercased_sorted_and_repeated_values_joined() {
    assert_eq!(
        canonical_resource_of(
            "/devstoreaccount1/c",
            "restype=container&COMP=list&include=snapshots&Include=metadata&timeout=20"
        ),
        "/devstoreaccount1/devstoreaccount1/c\ncomp:list\ninclude:metadata,snapshots\n\
         restype:container\ntimeout:20"
    );
}

#[test]
fn query_names_and_values_are_percent_decoded_and_bare_names_have_empty_values() {
    assert_eq!(
        canonical_resource_of("/devstoreaccount1/c", "prefix=a%2Fb%20c&marker&%63omp=list"),
        "/devstoreaccount1/devstoreaccount1/c\ncomp:list\nmarker:\nprefix:a/b c"
    );
}

#[test]
fn plus_in_query_stays_plus_and_encoded_plus_decodes_to_plus() {
    assert_eq!(
        canonical_resource_of("/devstoreaccount1/c", "prefix=a+b&marker=x%2By"),
        "/devstoreaccount1/devstoreaccount1/c\nmarker:x+y\nprefix:a+b"
    );
}

#[test]
fn account_root_keeps_its_trailing_slash() {
    assert_eq!(
        canonical_resource_of("/devstoreaccount1/", "comp=list"),
        "/devstoreaccount1/devstoreaccount1/\ncomp:list"
    );
}

#[test]
fn raw_path_is_signed_without_decoding() {
    assert_eq!(
        canonical_resource_of("/devstoreaccount1/c/%28a%29%27b%C3%A9", ""),
        "/devstoreaccount1/devstoreaccount1/c/%28a%29%27b%C3%A9"
    );
}

#[test]
fn headers_sort_by_the_service_ranking_underscore_before_digits() {
    let h = vector_headers(&[
        ("x-ms-meta-a1", "1"),
        ("x-ms-meta-a_b", "2"),
        ("x-ms-meta-a", "3"),
    ]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert!(sts.contains("\nx-ms-meta-a:3\nx-ms-meta-a_b:2\nx-ms-meta-a1:1\n"));
}

#[test]
fn ranking_puts_dash_first_and_letters_last() {
    use std::cmp::Ordering::Less;
    assert_eq!(compare_ranked("x-ms-a-b", "x-ms-a!"), Less);
    assert_eq!(compare_ranked("x-ms-a!", "x-ms-a_"), Less);
    assert_eq!(compare_ranked("x-ms-a_", "x-ms-a0"), Less);
    assert_eq!(compare_ranked("x-ms-a9", "x-ms-aa"), Less);
    assert_eq!(compare_ranked("x-ms-a", "x-ms-a-"), Less);
}

#[test]
fn header_values_are_trimmed_and_inner_whitespace_kept() {
    let h = vector_headers(&[("x-ms-meta-note", "  two  spaces\t")]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert!(sts.contains("\nx-ms-meta-note:two  spaces\n"));
}

#[test]
fn method_is_uppercased_and_fixed_fields_are_in_order() {
    let h = vector_headers(&[
        ("content-encoding", "gzip"),
        ("content-language", "en"),
        ("content-length", "5"),
        ("content-md5", "md5=="),
        ("content-type", "text/plain"),
        ("if-modified-since", "ims"),
        ("if-match", "\"a\""),
        ("if-none-match", "\"b\""),
        ("if-unmodified-since", "ius"),
        ("range", "bytes=0-1"),
    ]);
    let req = view("put", "/devstoreaccount1/c/b", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert!(sts.starts_with(
        "PUT\ngzip\nen\n5\nmd5==\ntext/plain\n\nims\n\"a\"\n\"b\"\nius\nbytes=0-1\nx-ms-date:"
    ));
}

#[test]
fn date_header_is_signed_when_present() {
    let h = headers(&[("date", VECTOR_DATE), ("x-ms-version", VECTOR_VERSION)]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert!(sts.starts_with(&format!("GET\n\n\n\n\n\n{VECTOR_DATE}\n\n")));
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

#[test]
fn repeated_x_ms_header_is_400_invalid_header_value() {
    let h = vector_headers(&[("x-ms-meta-a", "1"), ("x-ms-meta-a", "2")]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    assert_eq!(
        string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION),
        Err(SharedKeyError::DuplicateSignedHeader("x-ms-meta-a".into()))
    );
    let header = auth(Scheme::SharedKey, "c2ln".into());
    assert_eq!(
        verify_dev(&req, &header),
        Err(SharedKeyError::DuplicateSignedHeader("x-ms-meta-a".into()))
    );
}

#[test]
fn repeated_fixed_header_is_refused_but_if_match_lists_are_joined() {
    let h = vector_headers(&[("content-type", "a"), ("content-type", "b")]);
    let req = view("PUT", "/devstoreaccount1/c/b", "", &h);
    assert_eq!(
        string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION),
        Err(SharedKeyError::DuplicateSignedHeader("content-type".into()))
    );
    let h = vector_headers(&[("if-match", "\"a\""), ("if-match", " \"b\"")]);
    let req = view("GET", "/devstoreaccount1/c/b", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert!(sts.contains("\n\"a\",\"b\"\n"));
}

// ---- docs/wire/auth.md#forms-stowage-also-accepts alternatives ----

/// A request on which every alternative produces a string different from
/// the primary one: Date and x-ms-date, a `_` header name, a double space
/// and a `+` in the query.
fn quirky_headers() -> Vec<(String, String)> {
    vector_headers(&[
        ("date", VECTOR_DATE),
        ("x-ms-meta-x1", "a  b"),
        ("x-ms-meta-x_y", "c"),
    ])
}

const QUIRKY_QUERY: &str = "restype=container&comp=list&prefix=a+b";

#[test]
fn every_alternative_differs_from_the_primary_form() {
    let h = quirky_headers();
    let req = view("GET", "/devstoreaccount1/c", QUIRKY_QUERY, &h);
    let primary = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    for form in Canonicalization::ALTERNATIVES {
        let alt =
            string_to_sign_variant(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION, form)
                .unwrap();
        assert_ne!(alt, primary, "{form:?}");
    }
}

#[test]
fn alternative_a_empty_date_line_is_accepted() {
    let h = quirky_headers();
    let req = view("GET", "/devstoreaccount1/c", QUIRKY_QUERY, &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::EmptyDateLine);
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

#[test]
fn alternative_b_byte_order_headers_are_accepted() {
    let h = quirky_headers();
    let req = view("GET", "/devstoreaccount1/c", QUIRKY_QUERY, &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::ByteOrderHeaders);
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

#[test]
fn alternative_c_collapsed_whitespace_is_accepted() {
    let h = quirky_headers();
    let req = view("GET", "/devstoreaccount1/c", QUIRKY_QUERY, &h);
    let header = signed_with(
        &req,
        Scheme::SharedKey,
        Canonicalization::CollapsedWhitespace,
    );
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

#[test]
fn alternative_d_plus_as_space_is_accepted() {
    let h = quirky_headers();
    let req = view("GET", "/devstoreaccount1/c", QUIRKY_QUERY, &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::PlusAsSpace);
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

#[test]
fn two_alternatives_combined_are_refused() {
    // Signed with an empty Date line AND byte-order headers: never tried.
    let h = quirky_headers();
    let req = view("GET", "/devstoreaccount1/c", QUIRKY_QUERY, &h);
    let byte_order = string_to_sign_variant(
        &req,
        DEV_ACCOUNT,
        Scheme::SharedKey,
        VECTOR_VERSION,
        Canonicalization::ByteOrderHeaders,
    )
    .unwrap();
    let both = byte_order.replacen(&format!("\n{VECTOR_DATE}\n"), "\n\n", 1);
    assert_ne!(both, byte_order);
    let header = auth(Scheme::SharedKey, sign(&dev_key(), &both));
    assert!(matches!(
        verify_dev(&req, &header),
        Err(SharedKeyError::SignatureMismatch { .. })
    ));
}

#[test]
fn wrong_key_is_refused_with_the_primary_string_to_sign() {
    let h = vector_headers(&[("content-length", "0")]);
    let req = view(
        "PUT",
        "/devstoreaccount1/mycontainer",
        "restype=container",
        &h,
    );
    let primary = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    let signature = sign(OTHER_KEY, &primary);
    let header = auth(Scheme::SharedKey, signature.clone());
    assert_eq!(
        verify_dev(&req, &header),
        Err(SharedKeyError::SignatureMismatch {
            signature,
            string_to_sign: primary
        })
    );
}

#[test]
fn signature_with_either_account_key_is_accepted() {
    let h = vector_headers(&[("content-length", "0")]);
    let req = view(
        "PUT",
        "/devstoreaccount1/mycontainer",
        "restype=container",
        &h,
    );
    let primary = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    let keys = [dev_key(), OTHER_KEY.to_vec()];
    for key in &keys {
        let header = auth(Scheme::SharedKey, sign(key, &primary));
        assert_eq!(
            verify(&req, &header, DEV_ACCOUNT, &keys, vector_time()),
            Ok(())
        );
    }
}

#[test]
fn non_base64_signature_is_a_mismatch() {
    let h = vector_headers(&[]);
    let req = view("GET", "/devstoreaccount1/c", "restype=container", &h);
    let header = auth(Scheme::SharedKey, "not base64!".into());
    assert!(matches!(
        verify_dev(&req, &header),
        Err(SharedKeyError::SignatureMismatch { .. })
    ));
}

// ---- time window ----

fn verify_at(now: SystemTime) -> Result<(), SharedKeyError> {
    let h = vector_headers(&[]);
    let req = view("GET", "/devstoreaccount1/c", "restype=container", &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    verify(&req, &header, DEV_ACCOUNT, &[dev_key()], now)
}

#[test]
fn request_exactly_15_minutes_off_is_accepted() {
    assert_eq!(verify_at(vector_time() + MAX_CLOCK_SKEW), Ok(()));
    assert_eq!(verify_at(vector_time() - MAX_CLOCK_SKEW), Ok(()));
}

#[test]
fn request_more_than_15_minutes_off_is_refused() {
    let second = Duration::from_secs(1);
    assert_eq!(
        verify_at(vector_time() + MAX_CLOCK_SKEW + second),
        Err(SharedKeyError::DateOutOfRange)
    );
    assert_eq!(
        verify_at(vector_time() - MAX_CLOCK_SKEW - second),
        Err(SharedKeyError::DateOutOfRange)
    );
}

#[test]
fn missing_or_unparseable_date_is_refused() {
    let h = headers(&[("x-ms-version", VECTOR_VERSION)]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    assert_eq!(verify_dev(&req, &header), Err(SharedKeyError::MissingDate));

    let h = headers(&[("x-ms-date", "yesterday"), ("x-ms-version", VECTOR_VERSION)]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    assert_eq!(verify_dev(&req, &header), Err(SharedKeyError::MissingDate));
}

#[test]
fn x_ms_date_wins_over_date_for_the_window() {
    let h = vector_headers(&[("date", "Mon, 01 Jan 2024 00:00:00 GMT")]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    assert_eq!(verify_dev(&req, &header), Ok(()));
}

// ---- accounts and header parsing ----

#[test]
fn header_account_other_than_url_account_is_refused() {
    let h = vector_headers(&[]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    assert_eq!(
        verify(&req, &header, "otheraccount", &[dev_key()], vector_time()),
        Err(SharedKeyError::AccountMismatch)
    );
}

#[test]
fn account_without_keys_is_refused() {
    let h = vector_headers(&[]);
    let req = view("GET", "/devstoreaccount1/c", "", &h);
    let header = signed_with(&req, Scheme::SharedKey, Canonicalization::Primary);
    assert_eq!(
        verify(&req, &header, DEV_ACCOUNT, &[], vector_time()),
        Err(SharedKeyError::UnknownAccount)
    );
}

#[test]
fn authorization_header_parses_both_schemes() {
    assert_eq!(
        parse_authorization("SharedKey devstoreaccount1:abc+/="),
        Ok(AuthorizationHeader {
            scheme: Scheme::SharedKey,
            account: "devstoreaccount1".into(),
            signature: "abc+/=".into()
        })
    );
    assert_eq!(
        parse_authorization("  SharedKeyLite   acct:sig ").map(|a| (a.scheme, a.account)),
        Ok((Scheme::SharedKeyLite, "acct".into()))
    );
}

#[test]
fn bearer_token_is_not_supported() {
    assert_eq!(
        parse_authorization("Bearer eyJ0eXAiOiJKV1Qi"),
        Err(SharedKeyError::BearerNotSupported)
    );
}

#[test]
fn malformed_authorization_headers_are_refused() {
    for value in [
        "",
        "SharedKey",
        "SharedKey devstoreaccount1",
        "SharedKey :sig",
        "SharedKey acct:",
        "SharedKey acct:sig extra",
        "SharedKey acct:sig:more",
        "Basic dXNlcjpwYXNz",
        "SharedKeydevstoreaccount1:sig",
    ] {
        assert_eq!(
            parse_authorization(value),
            Err(SharedKeyError::Malformed),
            "{value:?}"
        );
    }
}

// ---- Shared Key Lite ----

#[test]
fn lite_string_to_sign_keeps_only_comp_and_has_no_separator() {
    let h = vector_headers(&[("content-type", "text/plain"), ("content-md5", "md5==")]);
    let req = view(
        "PUT",
        "/devstoreaccount1/mycontainer",
        "restype=container&comp=metadata&timeout=30",
        &h,
    );
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKeyLite, VECTOR_VERSION).unwrap();
    assert_eq!(
        sts,
        "PUT\nmd5==\ntext/plain\n\nx-ms-date:Tue, 03 Sep 2024 10:15:07 GMT\n\
         x-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/mycontainer?comp=metadata"
    );
}

#[test]
fn lite_without_comp_signs_the_bare_path() {
    let h = vector_headers(&[]);
    let req = view("GET", "/devstoreaccount1/c/b%20c", "snapshot=x", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKeyLite, VECTOR_VERSION).unwrap();
    assert!(sts.ends_with("x-ms-version:2021-10-04\n/devstoreaccount1/devstoreaccount1/c/b%20c"));
}

#[test]
fn lite_request_verifies() {
    let h = vector_headers(&[]);
    let req = view(
        "GET",
        "/devstoreaccount1/c",
        "restype=container&comp=list",
        &h,
    );
    let header = signed_with(&req, Scheme::SharedKeyLite, Canonicalization::Primary);
    assert_eq!(verify_dev(&req, &header), Ok(()));
    // A Lite signature presented as full Shared Key does not match.
    let wrong_scheme = auth(Scheme::SharedKey, header.signature);
    assert!(matches!(
        verify_dev(&req, &wrong_scheme),
        Err(SharedKeyError::SignatureMismatch { .. })
    ));
}

// ---- Blob Batch sub-requests ----

/// A batch sub-request as the Python SDK signs it: `Content-Length: 0`, no
/// `x-ms-version` of its own, signed as the batch's version signs (an empty
/// Content-Length line).
#[test]
fn sub_request_without_version_signs_with_the_inherited_version() {
    let h = headers(&[
        ("content-length", "0"),
        ("x-ms-date", VECTOR_DATE),
        ("x-ms-client-request-id", "1"),
    ]);
    let req = view("DELETE", "/devstoreaccount1/devstoreaccount1/c/a", "", &h);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, VECTOR_VERSION).unwrap();
    assert!(sts.starts_with("DELETE\n\n\n\n"), "{sts:?}");
    let header = auth(Scheme::SharedKey, sign(&dev_key(), &sts));
    let keys = [dev_key()];
    let now = vector_time();
    let cases = [(VECTOR_VERSION, true), ("", false), ("2014-02-14", false)];
    for (inherited, accepted) in cases {
        let verdict = verify_with_version(&req, &header, DEV_ACCOUNT, &keys, now, inherited);
        assert_eq!(verdict.is_ok(), accepted, "{inherited:?}: {verdict:?}");
    }
    // Its own x-ms-version wins over the inherited one.
    let own = headers(&[
        ("content-length", "0"),
        ("x-ms-date", VECTOR_DATE),
        ("x-ms-version", "2014-02-14"),
    ]);
    let req = view("DELETE", "/devstoreaccount1/c/a", "", &own);
    let sts = string_to_sign(&req, DEV_ACCOUNT, Scheme::SharedKey, "2014-02-14").unwrap();
    let header = auth(Scheme::SharedKey, sign(&dev_key(), &sts));
    assert_eq!(
        verify_with_version(&req, &header, DEV_ACCOUNT, &keys, now, VECTOR_VERSION),
        Ok(())
    );
}
