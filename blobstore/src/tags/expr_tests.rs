use super::*;

fn tags(list: &[(&str, &str)]) -> Tags {
    Tags::new(
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
    .unwrap()
}

#[test]
fn conditions_evaluate_over_a_tag_set() {
    let t = tags(&[("Project", "alpha"), ("Rank", "050"), ("empty", "")]);
    let table: &[(&str, bool)] = &[
        (r#""Project" = 'alpha'"#, true),
        (r#""Project" = 'Alpha'"#, false),
        (r#""project" = 'alpha'"#, false),
        (r#"Project = 'alpha'"#, true),
        (r#""Project" <> 'beta'"#, true),
        (r#""Project" <> 'alpha'"#, false),
        (r#""Rank" > '049'"#, true),
        (r#""Rank" > '050'"#, false),
        (r#""Rank" >= '050'"#, true),
        (r#""Rank" < '1'"#, true),
        (r#""Rank" <= '050'"#, true),
        (r#""Rank" < '050'"#, false),
        (r#""empty" = ''"#, true),
        // Absent keys: false for every operator, `<>` included.
        (r#""missing" = 'x'"#, false),
        (r#""missing" <> 'x'"#, false),
        (r#""Project" = 'alpha' AND "Rank" = '050'"#, true),
        (r#""Project" = 'alpha' and "Rank" = '051'"#, false),
        (r#""Project" = 'beta' OR "Rank" = '050'"#, true),
        (r#""Project" = 'beta' or "Rank" = '051'"#, false),
        // AND binds tighter than OR.
        (
            r#""Project" = 'alpha' OR "Rank" = 'x' AND "Rank" = 'y'"#,
            true,
        ),
        (
            r#"("Project" = 'alpha' OR "Rank" = 'x') AND "Rank" = 'y'"#,
            false,
        ),
        (r#"(("Rank"='050'))"#, true),
        (r#""Project"='alpha'AND"Rank"='050'"#, true),
    ];
    for (expr, want) in table {
        let c = TagCondition::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(c.matches(&t), *want, "{expr}");
    }
}

#[test]
fn bad_conditions_are_refused_with_a_position() {
    let table: &[(&str, usize)] = &[
        ("", 0),
        (r#""k""#, 3),
        (r#""k" = "#, 6),
        (r#""k" = 'v"#, 6),
        (r#""k" == 'v'"#, 5),
        (r#""k" = 'v' AND"#, 13),
        (r#""k" = 'v' XOR "j" = 'w'"#, 10),
        (r#"("k" = 'v'"#, 10),
        (r#""k" = 'v')"#, 9),
        (r#"@container = 'c'"#, 0),
        (r#""k" ! 'v'"#, 4),
        (r#"'v' = "k""#, 0),
        (r#""" = 'v'"#, 0),
    ];
    for (expr, at) in table {
        let e = TagCondition::parse(expr).expect_err(expr);
        assert_eq!(e.position, Some(*at), "{expr}: {e}");
    }
}

#[test]
fn filters_parse_and_pick_a_driving_term() {
    let f = Filter::parse(
        r#"@container = 'photos' AND "Rank" >= '010' AND "Rank" < '100' AND "Status" = 'done'"#,
    )
    .unwrap();
    assert_eq!(f.container.as_deref(), Some("photos"));
    assert_eq!(f.terms.len(), 3);
    assert_eq!(f.driving_term().key, "Status");
    let f = Filter::parse(r#""Rank" >= '010' AND "Rank" < '100'"#).unwrap();
    assert_eq!(f.driving_term().op, Op::Ge);
    assert_eq!(f.container, None);
    let t = tags(&[("Rank", "050"), ("Other", "x")]);
    assert!(f.matches(&t));
    assert_eq!(
        f.named_tags(&t),
        vec![("Rank".to_owned(), "050".to_owned())]
    );
    assert!(!f.matches(&tags(&[("Rank", "100")])));
}

#[test]
fn bad_filters_are_refused() {
    for expr in [
        "",
        r#""k" <> 'v'"#,
        r#""k" = 'v' OR "j" = 'w'"#,
        r#"("k" = 'v')"#,
        r#"@container = 'c'"#,
        r#"@container > 'c' AND "k" = 'v'"#,
        r#"@container = 'c' AND @container = 'd' AND "k" = 'v'"#,
        r#"@blob = 'c' AND "k" = 'v'"#,
        r#""Rank" > '10' AND "Rank" >= '15'"#,
        r#""Rank" < '10' AND "Rank" <= '15'"#,
        r#""Rank" = '10' AND "Rank" < '15'"#,
        r#""Rank" = '10' AND "Rank" = '10'"#,
        r#""k" = 'v' AND"#,
        r#""k" = 'v @'"#,
        r#""k!" = 'v'"#,
        r#"'key-1' = 'v'"#,
        "astring",
    ] {
        assert!(Filter::parse(expr).is_err(), "{expr}");
    }
    let long_key = format!("{} = 'v'", "k".repeat(129));
    let long_value = format!("k = '{}'", "v".repeat(257));
    assert!(Filter::parse(&long_key).is_err());
    assert!(Filter::parse(&long_value).is_err());
    // A condition naming a key or value no tag can have is false, not an
    // error: the service answers 412 ConditionNotMet.
    let tags = Tags::from_stored(vec![("k".to_owned(), "v".to_owned())]);
    for expr in [&long_key, &long_value] {
        let condition = TagCondition::parse(expr).unwrap();
        assert!(!condition.matches(&tags), "{expr}");
    }
    let ten: Vec<String> = (0..10).map(|i| format!("k{i} = 'v'")).collect();
    assert!(Filter::parse(&ten.join(" AND ")).is_ok());
    let eleven: Vec<String> = (0..11).map(|i| format!("k{i} = 'v'")).collect();
    assert!(Filter::parse(&eleven.join(" AND ")).is_err());
    // A range on one key counts that key once.
    let f = Filter::parse(r#"@container = 'a-b' AND k >= 'a' AND k < 'b'"#).unwrap();
    assert_eq!(f.container.as_deref(), Some("a-b"));
}
