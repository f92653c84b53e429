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
    assert!(
        run.stderr.contains("possible values: plan, state, report"),
        "{run}"
    );
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

#[test]
fn state_and_report_schemas_describe_the_versioned_envelope() {
    let dir = Dir::new();
    for (name, title, data_field) in [
        ("state", "story state document", "status"),
        ("report", "report document", "stories"),
    ] {
        let run = dir.run(&["schema", name]);
        run.assert_code(0);
        let schema = run.json();
        assert_eq!(schema["title"], title, "{schema:#}");
        assert_eq!(schema["properties"]["version"]["const"], 1, "{schema:#}");
        assert_eq!(
            schema["required"],
            serde_json::json!(["version", "data"]),
            "{schema:#}"
        );
        // `data` refers to the document's own definition, which names its fields.
        let text = run.stdout.clone();
        assert!(
            text.contains(&format!("\"{data_field}\"")),
            "{name}: {text}"
        );
    }
}
