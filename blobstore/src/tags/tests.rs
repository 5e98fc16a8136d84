use super::*;

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

type Case = (Vec<(String, String)>, Result<(), TagError>);

#[test]
fn tag_set_rules() {
    let k128 = "k".repeat(128);
    let k129 = "k".repeat(129);
    let v256 = "v".repeat(256);
    let v257 = "v".repeat(257);
    let ten: Vec<(String, String)> = (0..10).map(|i| (format!("k{i}"), "v".into())).collect();
    let eleven: Vec<(String, String)> = (0..11).map(|i| (format!("k{i}"), "v".into())).collect();
    let table: Vec<Case> = vec![
        (vec![], Ok(())),
        (pairs(&[("project", "alpha")]), Ok(())),
        (pairs(&[("a b+c-d.e/f:g=h_i", "A Z 0 9 +-./:=_")]), Ok(())),
        (pairs(&[("k", "")]), Ok(())),
        (pairs(&[("Key", "1"), ("key", "2")]), Ok(())),
        (ten, Ok(())),
        (eleven, Err(TagError::TagsTooLarge)),
        (pairs(&[(&k128, &v256)]), Ok(())),
        (pairs(&[(&k129, "v")]), Err(TagError::TagsTooLarge)),
        (pairs(&[("k", &v257)]), Err(TagError::TagsTooLarge)),
        (pairs(&[("", "v")]), Err(TagError::EmptyTagName)),
        (
            pairs(&[("k", "v"), ("k", "w")]),
            Err(TagError::DuplicateTagNames),
        ),
        (pairs(&[("k!", "v")]), Err(TagError::InvalidTag)),
        (pairs(&[("k", "v&")]), Err(TagError::InvalidTag)),
        (pairs(&[("k", "é")]), Err(TagError::InvalidTag)),
        (pairs(&[("k", "a'b")]), Err(TagError::InvalidTag)),
        (pairs(&[("k\"", "v")]), Err(TagError::InvalidTag)),
        // The first broken rule in order: an empty key before a bad value.
        (pairs(&[("", "v!")]), Err(TagError::EmptyTagName)),
    ];
    for (input, want) in table {
        let got = Tags::new(input.clone()).map(|_| ());
        assert_eq!(got, want, "{input:?}");
    }
}

#[test]
fn keys_are_case_sensitive() {
    let t = Tags::new(pairs(&[("Project", "a")])).unwrap();
    assert_eq!(t.get("Project"), Some("a"));
    assert_eq!(t.get("project"), None);
}
