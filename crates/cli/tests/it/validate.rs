//! `epic validate`: valid plans in every syntax, and every kind of violation as text and JSON.

use insta::assert_snapshot;
use serde_json::json;

use crate::util::{Dir, SHOP_JSON, SHOP_TOML, shop_markdown};

#[test]
fn a_valid_plan_in_every_syntax() {
    let dir = Dir::new();
    dir.write("plan.json", SHOP_JSON);
    dir.write("plan.toml", SHOP_TOML);
    dir.write("plan.md", shop_markdown());
    for file in ["plan.json", "plan.toml", "plan.md"] {
        let run = dir.run(&["validate", file]);
        run.assert_code(0);
        assert_eq!(
            run.stdout,
            format!("{file}: valid — 3 stories in 2 waves\n")
        );
        assert_eq!(run.stderr, "");
    }
    assert_snapshot!("valid_text", dir.run(&["validate", "plan.md"]));
}

#[test]
fn a_valid_plan_as_json() {
    let dir = Dir::with("plan.toml", SHOP_TOML);
    let run = dir.run(&["validate", "--format", "json", "plan.toml"]);
    run.assert_code(0);
    assert_eq!(run.json(), json!({"valid": true, "violations": []}));
    assert_snapshot!("valid_json", run);
}

#[test]
fn quiet_prints_nothing_for_a_valid_plan() {
    let dir = Dir::with("plan.json", SHOP_JSON);
    let run = dir.run(&["validate", "-q", "plan.json"]);
    run.assert_code(0);
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
}

#[test]
fn verbose_notes_what_was_read() {
    let dir = Dir::with("plan.toml", SHOP_TOML);
    assert_snapshot!("verbose", dir.run(&["validate", "-v", "plan.toml"]));
}

/// One plan per violation kind, each breaking that rule only: (kind, plan, stories involved).
const VIOLATIONS: &[(&str, &str, &[&str])] = &[
    (
        "duplicate_id",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "owned": ["src/a"]},
            {"id": "a", "title": "A again", "owned": ["src/b"]}]}"#,
        &["a"],
    ),
    (
        "invalid_id",
        r#"{"epic_id": "e", "stories": [
            {"id": "Cart_API", "title": "A", "owned": ["src/a"]}]}"#,
        &["Cart_API"],
    ),
    (
        "no_owned_paths",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "owned": []}]}"#,
        &["a"],
    ),
    (
        "self_dependency",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "depends_on": ["a"], "owned": ["src/a"]}]}"#,
        &["a"],
    ),
    (
        "unknown_dependency",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "depends_on": ["ghost"], "owned": ["src/a"]}]}"#,
        &["a"],
    ),
    (
        "owned_shared_overlap",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "owned": ["src/a"], "shared_read_only": ["src/a/mod.rs"]}]}"#,
        &["a"],
    ),
    (
        "owned_overlap",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "owned": ["src"]},
            {"id": "b", "title": "B", "owned": ["src/b"]}]}"#,
        &["a", "b"],
    ),
    (
        "cycle",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "depends_on": ["b"], "owned": ["src/a"]},
            {"id": "b", "title": "B", "depends_on": ["a"], "owned": ["src/b"]}]}"#,
        &["a", "b"],
    ),
    (
        "unsafe_path",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "owned": ["/etc"]}]}"#,
        &["a"],
    ),
    ("empty_plan", r#"{"epic_id": "e", "stories": []}"#, &[]),
    (
        "invalid_estimate",
        r#"{"epic_id": "e", "stories": [
            {"id": "a", "title": "A", "owned": ["src/a"], "estimated_time": "soon"}]}"#,
        &["a"],
    ),
];

#[test]
fn every_violation_kind_as_text() {
    for &(kind, plan, _) in VIOLATIONS {
        let dir = Dir::with("plan.json", plan);
        let run = dir.run(&["validate", "plan.json"]);
        run.assert_code(1);
        assert!(
            run.stdout.starts_with(&format!("error[{kind}]: ")),
            "{kind}:\n{run}"
        );
        assert!(run.stdout.ends_with("1 violation in plan.json\n"), "{run}");
        assert_snapshot!(format!("violation_text_{kind}"), run);
    }
}

#[test]
fn every_violation_kind_as_json() {
    for &(kind, plan, stories) in VIOLATIONS {
        let dir = Dir::with("plan.json", plan);
        let run = dir.run(&["validate", "--format", "json", "plan.json"]);
        run.assert_code(1);
        assert_eq!(run.stderr, "", "{kind}");
        let report = run.json();
        assert_eq!(report["valid"], json!(false), "{kind}");
        let violations = report["violations"].as_array().unwrap();
        assert_eq!(violations.len(), 1, "{kind}: {report:#}");
        let violation = violations[0].as_object().unwrap();
        assert_eq!(violation["kind"], json!(kind));
        assert!(violation["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(violation["stories"], json!(stories), "{kind}");
        for key in violation.keys() {
            assert!(
                ["kind", "message", "stories", "paths"].contains(&key.as_str()),
                "{kind}: unexpected key {key}"
            );
        }
        assert_snapshot!(format!("violation_json_{kind}"), run);
    }
}

#[test]
fn paths_are_listed_where_a_violation_has_them() {
    let (_, plan, _) = VIOLATIONS[6]; // owned_overlap
    let dir = Dir::with("plan.json", plan);
    let report = dir
        .run(&["validate", "--format", "json", "plan.json"])
        .json();
    assert_eq!(report["violations"][0]["paths"], json!(["src", "src/b"]));
}

#[test]
fn every_violation_is_reported_at_once() {
    let dir = Dir::with(
        "plan.json",
        r#"{"epic_id": "Bad Epic", "stories": [
            {"id": "a", "title": "A", "depends_on": ["b", "ghost"], "owned": ["src"]},
            {"id": "b", "title": "B", "depends_on": ["a"], "owned": ["src/b", "../x"]},
            {"id": "b", "title": "B again", "owned": []}]}"#,
    );
    let run = dir.run(&["validate", "plan.json"]);
    run.assert_code(1);
    assert_snapshot!("many_violations", run);
    let report = dir
        .run(&["validate", "--format", "json", "plan.json"])
        .json();
    let kinds: Vec<&str> = report["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "invalid_id",
        "unknown_dependency",
        "duplicate_id",
        "no_owned_paths",
        "unsafe_path",
        "owned_overlap",
        "cycle",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
}
