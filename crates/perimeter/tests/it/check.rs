//! `check`, `classify` and `enforce`: the reference's perimeter cases and their edges.

use epic_perimeter::{PerimeterCheck, Placement, check, classify, enforce};
use epic_story_plan::Story;

use crate::support::conto_overview;

fn lists(verdict: &PerimeterCheck) -> (Vec<&str>, Vec<&str>) {
    (
        verdict
            .shared_read_only
            .iter()
            .map(String::as_str)
            .collect(),
        verdict.outside.iter().map(String::as_str).collect(),
    )
}

#[test]
fn owned_changes_are_within_the_perimeter() {
    let verdict = check(
        &[
            "src/features/conto/overview/page.tsx",
            "src/contracts/accounts.ts",
        ],
        &conto_overview(),
    );
    assert!(verdict.is_clean(), "{verdict:?}");
    assert_eq!(verdict, PerimeterCheck::default());
}

#[test]
fn shared_and_outside_changes_are_told_apart_in_order() {
    let verdict = check(
        &[
            "src/kit/components.tsx",
            "src/App.tsx",
            "src/features/bonifico/x.ts",
        ],
        &conto_overview(),
    );
    assert!(!verdict.is_clean());
    assert_eq!(
        lists(&verdict),
        (
            vec!["src/kit/components.tsx", "src/App.tsx"],
            vec!["src/features/bonifico/x.ts"]
        )
    );
}

#[test]
fn enforce_names_the_story_and_every_path_with_what_to_do() {
    let err = enforce(&["src/kit/components.tsx", "README.md"], &conto_overview())
        .expect_err("the kit is shared and the readme is nobody's");
    assert_eq!(err.story, "conto-overview");
    assert_eq!(err.shared_read_only, ["src/kit/components.tsx"]);
    assert_eq!(err.outside, ["README.md"]);
    let message = err.to_string();
    assert!(message.contains("conto-overview"), "{message}");
    assert!(
        message.contains("src/kit/components.tsx (shared read-only"),
        "{message}"
    );
    assert!(
        message.contains("README.md (not in the story's owned paths)"),
        "{message}"
    );
}

#[test]
fn enforce_accepts_owned_changes() {
    assert_eq!(
        enforce(&["src/features/conto/overview/a.ts"], &conto_overview()),
        Ok(())
    );
    assert_eq!(enforce(Vec::<String>::new(), &conto_overview()), Ok(()));
}

#[test]
fn the_message_lists_shared_read_only_paths_first_one_a_line() {
    let err = enforce(
        &["README.md", "src/kit/a.ts", "docs/x.md", "src/App.tsx"],
        &conto_overview(),
    )
    .expect_err("violated");
    let message = err.to_string();
    let lines: Vec<&str> = message.lines().skip(1).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[0].starts_with("- src/kit/a.ts (shared read-only"));
    assert!(lines[1].starts_with("- src/App.tsx (shared read-only"));
    assert!(lines[2].starts_with("- README.md (not in"));
    assert!(lines[3].starts_with("- docs/x.md (not in"));
    assert!(lines[0].contains("revert it"), "{}", lines[0]);
}

#[test]
fn prefixes_match_whole_segments_only() {
    let story = conto_overview();
    assert_eq!(
        classify("src/features/conto/overview-old/page.tsx", &story),
        Placement::Outside
    );
    assert_eq!(classify("src/kit.ts", &story), Placement::Outside);
    assert_eq!(
        classify("src/contracts/accounts.tsx", &story),
        Placement::Outside
    );
    assert_eq!(
        classify("src/features/conto/overview", &story),
        Placement::Owned
    );
    assert_eq!(classify("src/kit", &story), Placement::SharedReadOnly);
}

#[test]
fn changed_paths_are_normalised_but_reported_as_given() {
    let story = conto_overview();
    assert_eq!(
        classify("./src/features/conto/overview/page.tsx", &story),
        Placement::Owned
    );
    assert_eq!(
        classify("src\\features\\conto\\overview\\page.tsx", &story),
        Placement::Owned
    );
    assert_eq!(
        classify(" src//kit/x.ts ", &story),
        Placement::SharedReadOnly
    );
    let verdict = check(&["./src/kit/x.ts", "docs\\a.md"], &story);
    assert_eq!(verdict.shared_read_only, ["./src/kit/x.ts"]);
    assert_eq!(verdict.outside, ["docs\\a.md"]);
}

#[test]
fn owning_wins_over_sharing() {
    let story = Story::new("iban-field", "IBAN field", ["src/kit/iban"]).sharing(["src/kit"]);
    assert_eq!(classify("src/kit/iban/field.tsx", &story), Placement::Owned);
    assert_eq!(
        classify("src/kit/button.tsx", &story),
        Placement::SharedReadOnly
    );
}

#[test]
fn duplicates_are_kept_in_order() {
    let verdict = check(
        &["README.md", "src/kit/a.ts", "README.md", "src/kit/a.ts"],
        &conto_overview(),
    );
    assert_eq!(verdict.shared_read_only, ["src/kit/a.ts", "src/kit/a.ts"]);
    assert_eq!(verdict.outside, ["README.md", "README.md"]);
    assert_eq!(
        verdict.paths().collect::<Vec<_>>(),
        ["src/kit/a.ts", "src/kit/a.ts", "README.md", "README.md"]
    );
}

#[test]
fn a_clean_check_is_no_violation() {
    assert!(PerimeterCheck::default().into_violation("x").is_none());
    let violation = check(&["README.md"], &conto_overview())
        .into_violation("conto-overview")
        .expect("violated");
    assert_eq!(violation.outside, ["README.md"]);
}
