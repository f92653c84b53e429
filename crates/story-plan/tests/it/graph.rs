//! Waves, dependents, dependencies and the critical path.

use epic_story_plan::Story;

use crate::support::{demo, plan};

#[test]
fn demo_waves() {
    let valid = demo().validate().unwrap();
    assert_eq!(
        valid.waves(),
        [
            vec!["accounts-contract", "payments-contract", "iban-field"],
            vec!["conto-overview", "bonifico-form"],
            vec!["home"],
        ]
    );
    assert_eq!(valid.wave_numbers(), [0, 0, 0, 1, 1, 2]);
}

#[test]
fn a_story_waits_for_its_latest_dependency() {
    // d depends on a (wave 0) and c (wave 2): it lands in wave 3, not 1.
    let valid = plan(
        "e",
        vec![
            Story::new("d", "D", ["d"]).depending_on(["a", "c"]),
            Story::new("a", "A", ["a"]),
            Story::new("b", "B", ["b"]).depending_on(["a"]),
            Story::new("c", "C", ["c"]).depending_on(["b"]),
        ],
    )
    .validate()
    .unwrap();
    assert_eq!(valid.waves(), [vec!["a"], vec!["b"], vec!["c"], vec!["d"]]);
}

#[test]
fn dependents_and_dependencies_are_transitive_in_plan_order() {
    let valid = demo().validate().unwrap();
    assert_eq!(
        valid.dependents("payments-contract"),
        ["bonifico-form", "home"]
    );
    assert!(valid.dependents("home").is_empty());
    assert_eq!(
        valid.dependencies("home"),
        [
            "accounts-contract",
            "payments-contract",
            "iban-field",
            "conto-overview",
            "bonifico-form"
        ]
    );
    assert!(valid.dependencies("iban-field").is_empty());
    assert!(valid.dependents("nobody").is_empty());
}

#[test]
fn critical_path_is_the_longest_chain_earliest_first() {
    let valid = demo().validate().unwrap();
    let path = valid.critical_path();
    assert_eq!(
        path.stories,
        ["accounts-contract", "conto-overview", "home"]
    );
    assert_eq!(path.length, 3);

    let heavy_iban = valid.critical_path_by(|s| if s.id == "iban-field" { 5 } else { 1 });
    assert_eq!(heavy_iban.stories, ["iban-field", "bonifico-form", "home"]);
    assert_eq!(heavy_iban.length, 7);
}

#[test]
fn remaining_chain_ranks_what_unblocks_most() {
    let valid = demo().validate().unwrap();
    assert_eq!(valid.remaining_chain_by(|_| 1), [3, 3, 3, 2, 2, 1]);
    let weighted = valid.remaining_chain_by(|s| if s.id == "home" { 10 } else { 1 });
    assert_eq!(weighted, [12, 12, 12, 11, 11, 10]);
}

#[test]
fn single_story_plan() {
    let valid = plan("e", vec![Story::new("only", "O", ["src"])])
        .validate()
        .unwrap();
    assert_eq!(valid.waves(), [vec!["only"]]);
    assert_eq!(valid.critical_path().stories, ["only"]);
    assert_eq!(valid.story("only").map(|s| s.title.as_str()), Some("O"));
}
