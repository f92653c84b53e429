//! `gate`: the perimeter as a review in the task loop.

use epic_perimeter::{Severity, gate};

use crate::support::{bank, conto_overview, story};

#[test]
fn an_owned_change_passes_the_gate() {
    let plan = bank();
    let review = gate(
        &["src/features/conto/overview/page.tsx"],
        story(&plan, "conto-overview"),
    );
    assert!(review.clean);
    assert!(review.issues.is_empty());
    assert_eq!(review.summary, "perimeter: clean");
}

#[test]
fn a_stray_change_is_one_critical_issue() {
    let plan = bank();
    let review = gate(
        &["src/App.tsx", "src/kit/theme.css"],
        story(&plan, "conto-overview"),
    );
    assert!(!review.clean);
    assert_eq!(review.summary, "perimeter: violated");
    assert_eq!(review.issues.len(), 1);
    let issue = &review.issues[0];
    assert_eq!(issue.severity, Severity::Critical);
    assert_eq!(issue.title, "perimeter");
    let text = &issue.description;
    assert!(
        text.contains("src/kit/theme.css (shared read-only"),
        "{text}"
    );
    assert!(
        text.contains("src/App.tsx (not in the story's owned paths)"),
        "{text}"
    );
    // Shared read-only first, whatever the input order.
    assert!(
        text.find("src/kit/theme.css") < text.find("src/App.tsx"),
        "{text}"
    );
}

#[test]
fn the_issue_says_how_to_recover_and_where_to_work() {
    let review = gate(&["README.md"], &conto_overview());
    let text = &review.issues[0].description;
    let violation = epic_perimeter::enforce(&["README.md"], &conto_overview())
        .expect_err("violated")
        .to_string();
    assert!(text.starts_with(&violation), "{text}");
    assert!(text.contains("epic branch"), "{text}");
    assert!(text.contains("delete"), "{text}");
    assert!(
        text.contains("src/features/conto/overview, src/contracts/accounts.ts"),
        "{text}"
    );
}
