//! Parsing JSON, TOML and Markdown plans, and where parse errors point.

use std::path::Path;

use epic_story_plan::{ParseErrorKind, PlanFormat, Story, StoryPlan};

use crate::support::demo;

const JSON: &str = r#"{
  "epic_id": "checkout",
  "epic": "Let people pay.",
  "stories": [
    {"id": "cart-api", "title": "Cart API", "owned": ["src/cart"]},
    {"id": "cart-ui", "title": "Cart UI", "depends_on": ["cart-api"], "owned": ["web/cart"],
     "shared_read_only": ["src/lib.rs"], "provides": ["route /cart"], "acceptance": ["shows totals"],
     "read_first": ["src/cart/mod.rs"], "tests_change": true}
  ]
}"#;

fn expected() -> StoryPlan {
    let mut ui = Story::new("cart-ui", "Cart UI", ["web/cart"])
        .depending_on(["cart-api"])
        .sharing(["src/lib.rs"]);
    ui.provides = vec!["route /cart".into()];
    ui.acceptance = vec!["shows totals".into()];
    ui.read_first = vec!["src/cart/mod.rs".into()];
    ui.tests_change = true;
    StoryPlan {
        epic_id: "checkout".into(),
        epic: "Let people pay.".into(),
        stories: vec![Story::new("cart-api", "Cart API", ["src/cart"]), ui],
    }
}

#[test]
fn json_with_defaults() {
    assert_eq!(
        StoryPlan::parse(JSON, PlanFormat::Json).unwrap(),
        expected()
    );
}

#[test]
fn camel_case_aliases_and_unknown_keys() {
    let text = r#"{"epicId": "checkout", "epic": "Let people pay.", "futureKey": {"x": 1}, "stories": [
      {"id": "cart-api", "title": "Cart API", "owned": ["src/cart"], "estimate": 3},
      {"id": "cart-ui", "title": "Cart UI", "dependsOn": ["cart-api"], "owned": ["web/cart"],
       "sharedReadOnly": ["src/lib.rs"], "provides": ["route /cart"], "acceptance": ["shows totals"],
       "readFirst": ["src/cart/mod.rs"], "testsChange": true}]}"#;
    assert_eq!(
        StoryPlan::parse(text, PlanFormat::Json).unwrap(),
        expected()
    );
}

#[test]
fn toml_plan() {
    let text = r#"
epic_id = "checkout"
epic = "Let people pay."

[[stories]]
id = "cart-api"
title = "Cart API"
owned = ["src/cart"]

[[stories]]
id = "cart-ui"
title = "Cart UI"
depends_on = ["cart-api"]
owned = ["web/cart"]
shared_read_only = ["src/lib.rs"]
provides = ["route /cart"]
acceptance = ["shows totals"]
read_first = ["src/cart/mod.rs"]
tests_change = true
"#;
    assert_eq!(
        StoryPlan::parse(text, PlanFormat::Toml).unwrap(),
        expected()
    );
}

#[test]
fn markdown_takes_the_first_storyplan_block() {
    let text = format!(
        "# Notes\n\n```json\n{{\"not\": \"this\"}}\n```\n\n```json storyplan\r\n{JSON}\r\n```\n\n```json storyplan\n{{}}\n```\n"
    );
    assert_eq!(
        StoryPlan::parse(&text, PlanFormat::Markdown).unwrap(),
        expected()
    );
}

#[test]
fn byte_order_mark_is_ignored() {
    let text = format!("\u{feff}{JSON}");
    assert_eq!(
        StoryPlan::parse(&text, PlanFormat::Json).unwrap(),
        expected()
    );
}

#[test]
fn format_follows_the_extension() {
    let path = Path::new("plans/epic.JSON");
    assert_eq!(StoryPlan::parse_file(path, JSON).unwrap(), expected());
    let error = StoryPlan::parse_file(Path::new("plan.yaml"), JSON).unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::UnknownFormat);
    assert!(error.to_string().starts_with("plan.yaml: "), "{error}");
    assert!(error.to_string().contains(".json, .toml or .md"), "{error}");
}

#[test]
fn json_syntax_error_points_at_line_and_column() {
    let text =
        "{\n  \"epic_id\": \"x\",\n  \"stories\": [\n    {\"id\": \"a\" \"title\": \"A\"}\n  ]\n}";
    let error = StoryPlan::parse_file(Path::new("plan.json"), text).unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::Syntax);
    assert_eq!((error.line(), error.column()), (Some(4), Some(16)));
    assert!(
        error
            .to_string()
            .starts_with("plan.json:4:16: invalid plan"),
        "{error}"
    );
    assert!(error.message().contains("expected `,` or `}`"), "{error}");
}

#[test]
fn missing_field_names_the_story() {
    let text = r#"{"epic_id": "x", "stories": [{"id": "a", "title": "A", "owned": []}, {"id": "b", "title": "B"}]}"#;
    let error = StoryPlan::parse(text, PlanFormat::Json).unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::Schema);
    assert!(error.message().contains("stories[1]"), "{error}");
    assert!(error.message().contains("missing field `owned`"), "{error}");
}

#[test]
fn wrong_type_says_what_was_expected() {
    let text = "{\"epic_id\": \"x\", \"stories\": [{\"id\": \"a\", \"title\": \"A\", \"owned\": \"src\"}]}";
    let error = StoryPlan::parse(text, PlanFormat::Json).unwrap_err();
    assert!(error.message().contains("stories[0].owned"), "{error}");
    assert!(error.message().contains("expected a sequence"), "{error}");
}

#[test]
fn trailing_garbage_is_an_error() {
    let text = format!("{JSON}\n{{}}");
    let error = StoryPlan::parse(&text, PlanFormat::Json).unwrap_err();
    assert_eq!(error.line(), Some(11));
}

#[test]
fn toml_error_points_at_line_and_column() {
    let text = "epic_id = \"x\"\n\n[[stories]]\nid = \"a\"\ntitle = 3\nowned = [\"src\"]\n";
    let error = StoryPlan::parse_file(Path::new("plan.toml"), text).unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::Schema);
    assert_eq!(error.line(), Some(5), "{error}");
    assert!(error.message().contains("stories[0].title"), "{error}");

    let error = StoryPlan::parse(
        "epic_id = \"x\"\nstories = [\n  { id = \"a\" title = \"A\" }\n]\n",
        PlanFormat::Toml,
    )
    .unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::Syntax);
    assert_eq!(error.line(), Some(3), "{error}");
}

#[test]
fn markdown_errors_point_into_the_file_not_the_block() {
    let text = "# Epic\n\nProse.\n\n```json storyplan\n{\n  \"epic_id\": \"x\",\n  \"stories\": [,]\n}\n```\n";
    let error = StoryPlan::parse_file(Path::new("plan.md"), text).unwrap_err();
    assert_eq!(
        (error.line(), error.column()),
        (Some(8), Some(15)),
        "{error}"
    );
    assert!(error.to_string().starts_with("plan.md:8:15: "), "{error}");
}

#[test]
fn markdown_without_a_block() {
    let error = StoryPlan::parse("# nothing here", PlanFormat::Markdown).unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::NoPlanBlock);
    assert!(error.message().contains("```json storyplan"), "{error}");

    let error =
        StoryPlan::parse("intro\n```json storyplan\n{}\n", PlanFormat::Markdown).unwrap_err();
    assert_eq!(error.kind(), ParseErrorKind::NoPlanBlock);
    assert_eq!(error.line(), Some(2));
    assert!(error.message().contains("never closed"), "{error}");
}

#[test]
fn empty_and_hostile_inputs_are_errors_not_panics() {
    for text in [
        "",
        " ",
        "null",
        "[]",
        "{}",
        "\u{0}",
        "{\"epic_id\": 1}",
        "```json storyplan\n```",
    ] {
        for format in [PlanFormat::Json, PlanFormat::Toml, PlanFormat::Markdown] {
            assert!(
                StoryPlan::parse(text, format).is_err(),
                "{text:?} as {format:?}"
            );
        }
    }
}

#[test]
fn markdown_rendering_parses_back() {
    let plan = demo();
    let back = StoryPlan::parse(&plan.to_markdown(), PlanFormat::Markdown).unwrap();
    assert_eq!(back, plan);
}

#[test]
fn an_estimated_time_parses_renders_and_parses_back() {
    let text = r#"{"epic_id": "e", "stories": [
      {"id": "a", "title": "A", "owned": ["a"], "estimated_time": "1h 30m"},
      {"id": "b", "title": "B", "owned": ["b"], "estimatedTime": "PT20M"},
      {"id": "c", "title": "C", "owned": ["c"]}]}"#;
    let plan = StoryPlan::parse(text, PlanFormat::Json).unwrap();
    let minutes = |i: usize| {
        plan.stories[i]
            .estimated_duration()
            .map(|d| d.as_secs() / 60)
    };
    assert_eq!(
        [minutes(0), minutes(1), minutes(2)],
        [Some(90), Some(20), None]
    );
    let markdown = plan.to_markdown();
    assert!(
        markdown.contains("- estimated time: 1h 30m\n"),
        "{markdown}"
    );
    assert_eq!(
        StoryPlan::parse(&markdown, PlanFormat::Markdown).unwrap(),
        plan
    );
    let json = serde_json::to_string(&plan).unwrap();
    assert_eq!(
        json.matches("estimated_time").count(),
        2,
        "absent stays absent: {json}"
    );
    let toml = "epic_id = \"e\"\n[[stories]]\nid = \"a\"\ntitle = \"A\"\nowned = [\"a\"]\nestimated_time = \"20m\"\n";
    let plan = StoryPlan::parse(toml, PlanFormat::Toml).unwrap();
    assert_eq!(plan.stories[0].estimated_time.as_deref(), Some("20m"));
}
