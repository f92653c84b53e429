//! The operator-facing Markdown rendering.

use epic_story_plan::{PlanFormat, Story, StoryPlan};

use crate::support::{demo, plan};

#[test]
fn demo_rendering() {
    insta::assert_snapshot!(demo().to_markdown());
}

#[test]
fn rendering_shows_waves_and_stories() {
    let markdown = demo().to_markdown();
    assert!(markdown.starts_with("# Epic: conto-bonifico\n"));
    assert!(markdown.contains("1. accounts-contract, payments-contract, iban-field\n"));
    assert!(markdown.contains("3. home\n"));
    assert!(markdown.contains("### bonifico-form — Transfer form\n"));
    assert!(markdown.contains("Done when:\n\n1. an invalid IBAN is refused\n"));
    assert!(markdown.contains("```json storyplan\n"));
    assert!(
        !markdown.contains("- read first:"),
        "only when there are anchors"
    );
    assert!(markdown.ends_with("\n```\n"));
}

#[test]
fn invalid_plans_render_and_round_trip_too() {
    let mut p = plan(
        "cyclic",
        vec![
            Story::new("a", "A", ["src/a"]).depending_on(["b"]),
            Story::new("b", "B", ["src/b"]).depending_on(["a"]),
            Story::new("c", "C", ["src/c"]),
        ],
    );
    p.stories[2].description = "Has ``` fences\n```\nand `## headings`\n## like this".into();
    let markdown = p.to_markdown();
    assert!(markdown.contains("1. c\n"), "{markdown}");
    assert!(markdown.contains("Never ready"), "{markdown}");
    assert!(markdown.contains("a, b"), "{markdown}");
    // The description's own fence line sits before the plan block and is not a storyplan fence.
    assert_eq!(
        StoryPlan::parse(&markdown, PlanFormat::Markdown).unwrap(),
        p
    );
}

#[test]
fn read_first_and_tests_change_show_only_when_set() {
    let mut p = demo();
    p.stories[0].read_first = vec!["src/contracts".into(), "docs/api.md".into()];
    p.stories[0].tests_change = true;
    let markdown = p.to_markdown();
    assert!(
        markdown.contains("- read first: `src/contracts`, `docs/api.md`\n"),
        "{markdown}"
    );
    assert_eq!(markdown.matches("- read first:").count(), 1);
    assert_eq!(markdown.matches("- may change tests: yes").count(), 1);
    assert_eq!(
        StoryPlan::parse(&markdown, PlanFormat::Markdown).unwrap(),
        p
    );
}
