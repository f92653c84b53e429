//! `Review`: the judge and reviewer JSON of docs/contract.md.

use epic_perimeter::{Issue, Review, Severity};

#[test]
fn a_contract_verdict_reads_without_a_summary() {
    let review: Review = serde_json::from_str(
        r#"{"clean":false,"issues":[
            {"severity":"critical","title":"t1","description":"d1"},
            {"severity":"major","title":"t2","description":"d2"},
            {"severity":"minor","title":"t3","description":"d3"}
        ]}"#,
    )
    .expect("contract verdict");
    assert_eq!(
        review,
        Review::failed(
            "",
            vec![
                Issue::new(Severity::Critical, "t1", "d1"),
                Issue::new(Severity::Major, "t2", "d2"),
                Issue::new(Severity::Minor, "t3", "d3"),
            ]
        )
    );
}

#[test]
fn a_bare_clean_verdict_reads() {
    let review: Review = serde_json::from_str(r#"{"clean":true}"#).expect("clean verdict");
    assert_eq!(review, Review::clean(""));
}

#[test]
fn a_verdict_without_clean_or_with_an_unknown_severity_is_unreadable() {
    assert!(serde_json::from_str::<Review>(r#"{"issues":[]}"#).is_err());
    assert!(
        serde_json::from_str::<Review>(
            r#"{"clean":false,"issues":[{"severity":"blocker","title":"x"}]}"#
        )
        .is_err()
    );
    assert!(serde_json::from_str::<Review>("not json").is_err());
}

#[test]
fn severities_are_lowercase_in_json_and_sort_most_severe_first() {
    let json = serde_json::to_value(Issue::new(Severity::Major, "t", "d")).expect("issue json");
    assert_eq!(
        json,
        serde_json::json!({"severity":"major","title":"t","description":"d"})
    );
    let mut severities = vec![Severity::Minor, Severity::Critical, Severity::Major];
    severities.sort();
    assert_eq!(
        severities,
        [Severity::Critical, Severity::Major, Severity::Minor]
    );
    assert_eq!(Severity::Critical.to_string(), "critical");
}

#[test]
fn a_review_round_trips_through_json() {
    let review = Review::failed(
        "perimeter: violated",
        vec![Issue::new(
            Severity::Critical,
            "perimeter",
            "line one\nline two",
        )],
    );
    let json = serde_json::to_string(&review).expect("serialise");
    assert_eq!(
        serde_json::from_str::<Review>(&json).expect("parse"),
        review
    );
}

#[test]
fn combined_reviews_are_clean_only_when_both_are() {
    let green = Review::clean("tests: green");
    let red = Review::failed("lint: red", vec![Issue::new(Severity::Major, "lint", "")]);
    assert!(green.clone().combine(Review::clean("")).clean);
    let both = green.combine(red.clone());
    assert!(!both.clean);
    assert_eq!(both.summary, "tests: green; lint: red");
    assert_eq!(both.issues, red.issues);
    assert_eq!(Review::clean("").combine(red.clone()).summary, "lint: red");
}
