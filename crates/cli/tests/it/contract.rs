//! docs/contract.md stays true to the code: every event kind, every `epic.toml` key and every
//! schema `epic schema` prints is in it.

use crate::util::{Dir, workspace_root};

fn contract() -> String {
    std::fs::read_to_string(workspace_root().join("docs/contract.md")).expect("docs/contract.md")
}

#[test]
fn every_event_kind_is_in_the_contract() {
    let contract = contract();
    let schema = Dir::new().run(&["schema", "events"]).json();
    let variants = schema["oneOf"].as_array().expect("one variant per kind");
    assert!(variants.len() > 40, "{schema:#}");
    for variant in variants {
        let kind = variant["properties"]["kind"]["const"]
            .as_str()
            .expect("each variant names its kind");
        let fields = variant["properties"].as_object().expect("its fields");
        let row = contract
            .lines()
            .find(|line| line.starts_with(&format!("| `{kind}` |")))
            .unwrap_or_else(|| panic!("docs/contract.md has no row for the event `{kind}`"));
        for field in fields.keys().filter(|field| *field != "kind") {
            assert!(
                row.contains(&format!("`{field}`")),
                "the row of `{kind}` lacks its field `{field}`: {row}"
            );
        }
    }
}

#[test]
fn every_config_key_and_schema_is_in_the_contract() {
    let contract = contract();
    let dir = Dir::new();
    let schema = dir.run(&["schema", "config"]).json();
    let keys = schema["properties"].as_object().expect("the keys");
    assert!(keys.contains_key("coder"), "{schema:#}");
    for key in keys.keys() {
        assert!(
            contract.contains(&format!("`{key}`")) || contract.contains(&format!("`[{key}.")),
            "docs/contract.md does not name the epic.toml key `{key}`"
        );
    }
    let usage = dir.run(&["schema", "nonsense"]).stderr;
    let names = usage
        .split("possible values: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("the usage error lists the schemas: {usage}"));
    let row = contract
        .lines()
        .find(|line| line.starts_with("| `epic schema ["))
        .expect("docs/contract.md has a row for `epic schema`");
    let listed = row
        .split('[')
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the row lists the schemas in brackets");
    assert_eq!(
        listed.split("\\|").collect::<Vec<_>>(),
        names.split(", ").collect::<Vec<_>>(),
        "docs/contract.md's `epic schema` row"
    );
}
