//! The JSON rendering: `report.json`'s data, its schema, and reading it back.

use epic_report::{EpicReport, OutcomeStatus, StoryOutcome, report_schema, to_json};
use epic_story_plan::{Story, StoryPlan};

use crate::support::{diamond, diamond_with_failure};

#[test]
fn snapshot_json() {
    insta::assert_snapshot!(to_json(&diamond_with_failure()));
}

#[test]
fn snapshot_schema() {
    let schema = serde_json::to_string_pretty(&report_schema()).unwrap();
    insta::assert_snapshot!(schema);
}

#[test]
fn pretty_with_two_spaces_and_a_trailing_newline() {
    let json = to_json(&diamond());
    assert!(
        json.starts_with("{\n  \"epic_id\": \"diamond\",\n"),
        "{json}"
    );
    assert!(json.ends_with("}\n") && !json.ends_with("\n\n"));
}

#[test]
fn the_contract_fields_in_contract_order() {
    let json = to_json(&diamond_with_failure());
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["estimated"], true);
    let skipped = &value["stories"][3];
    assert_eq!(
        skipped,
        &serde_json::json!({
            "id": "d", "title": "Story d", "status": "skipped",
            "reason": "depends on b, which failed"
        })
    );
    let failed = value["stories"][1].as_object().unwrap();
    let keys: Vec<&str> = failed.keys().map(String::as_str).collect();
    // serde_json's map is ordered by key unless `preserve_order` is on; the text keeps field order.
    assert_eq!(keys.len(), 10, "{keys:?}");
    let order = [
        "\"id\"",
        "\"title\"",
        "\"status\"",
        "\"branch\"",
        "\"reason\"",
        "\"judge\"",
        "\"estimated_tokens\"",
        "\"estimated_cost_usd\"",
        "\"started_at\"",
        "\"finished_at\"",
    ];
    let story_text = &json[json.find("\"id\": \"b\"").unwrap()..];
    let positions: Vec<usize> = order
        .iter()
        .map(|key| story_text.find(key).unwrap())
        .collect();
    assert!(positions.is_sorted(), "{positions:?}");
}

#[test]
fn no_null_anywhere() {
    let mut report = diamond_with_failure();
    report
        .stories
        .push(StoryOutcome::new("bare", "Bare", OutcomeStatus::Skipped));
    report.stories.push(
        StoryOutcome::new("nan", "NaN", OutcomeStatus::Failed).with_estimate(1, Some(f64::NAN)),
    );
    report.stories.push(
        StoryOutcome::new("inf", "Inf", OutcomeStatus::Failed)
            .with_estimate(1, Some(f64::INFINITY)),
    );
    let json = to_json(&report);
    assert!(!json.contains("null"), "{json}");
    assert!(!to_json(&EpicReport::new("e", "epic/e")).contains("null"));
}

#[test]
fn round_trips() {
    for report in [diamond(), diamond_with_failure(), EpicReport::new("e", "")] {
        let back: EpicReport = serde_json::from_str(&to_json(&report)).unwrap();
        assert_eq!(back, report);
        assert_eq!(to_json(&back), to_json(&report));
    }
}

#[test]
fn reads_the_reference_camel_case_names_and_nulls() {
    let json = r#"{
        "epicId": "diamond", "epicBranch": "epic/diamond", "estimated": true,
        "stories": [
            { "id": "a", "title": "Story a", "status": "done", "branch": "story/diamond/a",
              "judge": "judge cleared (round 1)", "estimatedTokens": 120, "estimatedCostUsd": 0.01,
              "reason": null }
        ]
    }"#;
    let report: EpicReport = serde_json::from_str(json).unwrap();
    assert_eq!(report.stories[0].estimated_tokens, Some(120));
    assert_eq!(report.stories[0].estimated_cost_usd, Some(0.01));
    assert_eq!(report.stories[0].reason, None);
    assert!(to_json(&report).contains("\"estimated_tokens\": 120"));
}

#[test]
fn refuses_what_the_contract_rules_out() {
    let base = |estimated: &str, status: &str, at: &str| {
        format!(
            r#"{{"epic_id":"e","epic_branch":"b","estimated":{estimated},
               "stories":[{{"id":"a","title":"A","status":"{status}","started_at":"{at}"}}]}}"#
        )
    };
    let ok = base("true", "done", "2026-03-01T09:00:00Z");
    assert!(serde_json::from_str::<EpicReport>(&ok).is_ok());
    let not_estimated =
        serde_json::from_str::<EpicReport>(&base("false", "done", "2026-03-01T09:00:00Z"));
    assert!(
        not_estimated
            .unwrap_err()
            .to_string()
            .contains("`estimated` must be true")
    );
    assert!(
        serde_json::from_str::<EpicReport>(&base("true", "waiting", "2026-03-01T09:00:00Z"))
            .is_err()
    );
    let bad_time =
        serde_json::from_str::<EpicReport>(&base("true", "done", "yesterday")).unwrap_err();
    // jiff's message: "failed to parse four digit integer as year: … got y at line 2 column 88".
    assert!(
        bad_time.is_data() && bad_time.to_string().contains("year"),
        "{bad_time}"
    );
}

#[test]
fn estimated_defaults_to_true_when_absent() {
    let json = r#"{"epic_id":"e","epic_branch":"b","stories":[]}"#;
    let report: EpicReport = serde_json::from_str(json).unwrap();
    assert!(to_json(&report).contains("\"estimated\": true"));
}

#[test]
fn extra_fields_only_when_set() {
    let json = to_json(&EpicReport::new("e", "epic/e"));
    assert!(!json.contains("critical_path") && !json.contains("seats"));
    let json = to_json(&diamond());
    assert!(
        json.contains("\"critical_path\": [\n    \"a\",\n    \"b\",\n    \"d\"\n  ]"),
        "{json}"
    );
}

#[test]
fn the_critical_path_comes_from_story_plan() {
    let plan = StoryPlan {
        epic_id: "diamond".into(),
        epic: String::new(),
        stories: vec![
            Story::new("a", "Story a", ["src/a"]),
            Story::new("b", "Story b", ["src/b"]).depending_on(["a"]),
            Story::new("c", "Story c", ["src/c"]).depending_on(["a"]),
            Story::new("d", "Story d", ["src/d"]).depending_on(["b", "c"]),
        ],
    }
    .validate()
    .unwrap();
    let report = diamond().with_critical_path(plan.critical_path().stories);
    assert_eq!(report.critical_path, ["a", "b", "d"]);
}

#[test]
fn the_schema_describes_the_contract() {
    let schema = report_schema();
    assert_eq!(schema["title"], "EpicReport");
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["epic_id", "epic_branch", "stories"]);
    assert_eq!(schema["properties"]["estimated"]["const"], true);
    let text = schema.to_string();
    assert!(
        !text.contains("\"null\""),
        "optional fields are absent, never null: {text}"
    );
    assert_eq!(epic_report::REPORT_VERSION, 1);
}

#[test]
fn runs_and_a_storys_run_are_written_only_when_set_and_read_back() {
    let at = |text: &str| text.parse::<epic_report::Timestamp>().unwrap();
    let json = to_json(&diamond());
    assert!(
        !json.contains("\"runs\"") && !json.contains("\"run\""),
        "{json}"
    );
    let report = EpicReport::new("e", "epic/e")
        .with_run(
            epic_report::RunRecord::new(1, at("2026-03-01T09:00:00Z"))
                .finished(at("2026-03-01T09:30:00Z")),
        )
        .with_run(epic_report::RunRecord::new(2, at("2026-03-02T09:00:00Z")))
        .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).in_run(1))
        .with_story(StoryOutcome::new("b", "B", OutcomeStatus::Failed).in_run(2));
    let json = to_json(&report);
    assert!(
        json.contains(
            "\"runs\": [\n    {\n      \"number\": 1,\n      \"started_at\": \"2026-03-01T09:00:00Z\",\n      \"finished_at\": \"2026-03-01T09:30:00Z\"\n    },\n    {\n      \"number\": 2,\n      \"started_at\": \"2026-03-02T09:00:00Z\"\n    }\n  ]"
        ),
        "{json}"
    );
    assert!(json.contains("\"run\": 1"), "{json}");
    assert_eq!(serde_json::from_str::<EpicReport>(&json).unwrap(), report);
    assert_eq!(report.latest_run(), Some(2));
    assert!(!report.latest_run_settled_nothing());
}

#[test]
fn a_report_of_the_old_shape_loads_without_runs() {
    let json = r#"{"epic_id":"e","epic_branch":"epic/e","estimated":true,"stories":[
        {"id":"a","title":"A","status":"done","judge":"merged on a previous run"}]}"#;
    let report: EpicReport = serde_json::from_str(json).unwrap();
    assert!(report.runs.is_empty());
    assert_eq!(report.stories[0].run, None);
    assert_eq!(report.latest_run(), None);
    assert!(!report.latest_run_settled_nothing());
    assert_eq!(report.latest_run_estimated_tokens(), None);
}
