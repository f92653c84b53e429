//! `epic schema`: the JSON Schema of the documents `epic` reads and writes.

use crate::util::Dir;

#[test]
fn plan_schema_is_json_with_the_stories() {
    let run = Dir::new().run(&["schema", "plan"]);
    run.assert_code(0);
    assert_eq!(run.stderr, "");
    let schema = run.json();
    assert!(schema["properties"]["stories"].is_object(), "{schema:#}");
    assert!(schema["properties"]["epic_id"].is_object(), "{schema:#}");
    assert!(run.stdout.ends_with("}\n"));
}

#[test]
fn plan_is_the_default_and_json_is_accepted() {
    let dir = Dir::new();
    let plan = dir.run(&["schema", "plan"]).stdout;
    assert_eq!(dir.run(&["schema"]).stdout, plan);
    assert_eq!(
        dir.run(&["schema", "--format", "json", "plan"]).stdout,
        plan
    );
}

#[test]
fn unknown_schema_names_are_usage_errors() {
    let run = Dir::new().run(&["schema", "nonsense"]);
    run.assert_code(2);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("possible values: plan"), "{run}");
}

#[test]
fn graph_formats_are_refused() {
    let run = Dir::new().run(&["schema", "--format", "dot", "plan"]);
    run.assert_code(2);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: `epic schema` cannot print --format dot\n"),
        "{run}"
    );
}
