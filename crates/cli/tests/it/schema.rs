//! `epic schema`: the JSON Schema of the documents `epic` reads and writes.

use serde_json::Value;

use crate::util::{Dir, Repo, file_plan};

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
        run.stderr
            .contains("possible values: plan, state, report, config, events"),
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

#[test]
fn events_schema_describes_every_line_a_run_writes() {
    let repo = Repo::new();
    repo.write(
        "plan.json",
        file_plan(&[("a", &[], "x"), ("b", &["a"], "y")]),
    );
    let run = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--judge",
        "script",
        "--gate",
        "true",
        "--sandbox",
        "off",
        "--no-progress",
    ]);
    run.assert_code(0);
    let schema = repo.run(&["schema", "events"]);
    schema.assert_code(0);
    let schema = schema.json();
    assert_eq!(schema["title"], "events.jsonl line", "{schema:#}");
    assert_eq!(schema["required"], serde_json::json!(["at"]), "{schema:#}");

    let log = std::fs::read_to_string(repo.common_dir().join("epic/shop/events.jsonl"))
        .expect("the run wrote its events");
    let mut kinds = Vec::new();
    for line in log.lines() {
        let event: Value = serde_json::from_str(line).expect("each line is JSON");
        let kind = event["kind"].as_str().expect("each event has a kind");
        let variant = schema["oneOf"]
            .as_array()
            .expect("one variant per kind")
            .iter()
            .find(|variant| variant["properties"]["kind"]["const"] == kind)
            .unwrap_or_else(|| panic!("the schema has no kind `{kind}`: {line}"));
        assert!(
            matches_type(&schema, &schema["properties"]["at"], &event["at"]),
            "{line}"
        );
        let problems = check_object(&schema, variant, &event, "at");
        assert!(problems.is_empty(), "{line}: {problems:?}");
        kinds.push(kind.to_owned());
    }
    for kind in [
        "run_started",
        "turn_started",
        "gate_passed",
        "story_judged",
        "story_merged",
    ] {
        assert!(
            kinds.iter().any(|seen| seen == kind),
            "no {kind}: {kinds:?}"
        );
    }
    assert_eq!(kinds.last().map(String::as_str), Some("run_finished"));
}

/// What `value` breaks of the object schema `object` (within `root`, for `$ref`s): a required
/// field missing, a field the schema does not name (but `extra`, which the line's schema names
/// beside the variant's), or a field of another type.
fn check_object(root: &Value, object: &Value, value: &Value, extra: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let properties = object["properties"].as_object().expect("an object schema");
    for required in object["required"].as_array().into_iter().flatten() {
        let required = required.as_str().expect("a field name");
        if value.get(required).is_none() {
            problems.push(format!("`{required}` is missing"));
        }
    }
    for (field, field_value) in value.as_object().expect("an event is an object") {
        match properties.get(field) {
            Some(field_schema) => {
                if !matches_type(root, field_schema, field_value) {
                    problems.push(format!("`{field}` is not a {field_schema}"));
                }
            }
            None if field == extra => {}
            None => problems.push(format!("`{field}` is not in the schema")),
        }
    }
    problems
}

/// Whether `value` has the type `schema` gives it: its `type` (one or several), a `const`, one
/// of a `oneOf`'s constants, or what its `$ref` says.
fn matches_type(root: &Value, schema: &Value, value: &Value) -> bool {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().expect("a definition's name");
        return matches_type(root, &root["$defs"][name], value);
    }
    if let Some(constant) = schema.get("const") {
        return constant == value;
    }
    if let Some(variants) = schema["oneOf"].as_array() {
        return variants
            .iter()
            .any(|variant| matches_type(root, variant, value));
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(several) => several.iter().filter_map(Value::as_str).collect(),
        _ => return true,
    };
    types.iter().any(|name| match *name {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_u64() || value.is_i64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => false,
    })
}
