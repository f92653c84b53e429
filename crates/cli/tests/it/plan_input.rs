//! What plan files may hold beyond the canonical form: the reference implementation's camelCase
//! keys, unknown keys, a byte-order mark.

use insta::assert_snapshot;

use crate::util::Dir;

#[test]
fn camel_case_aliases_are_accepted() {
    let dir = Dir::with(
        "plan.json",
        r#"{"epicId": "shop", "stories": [
            {"id": "a", "title": "A", "owned": ["src/a"], "readFirst": ["README.md"]},
            {"id": "b", "title": "B", "dependsOn": ["a"], "owned": ["src/b"],
             "sharedReadOnly": ["src/a"], "testsChange": true}]}"#,
    );
    let run = dir.run(&["graph", "plan.json"]);
    run.assert_code(0);
    assert_snapshot!("camel_case", run);
}

#[test]
fn camel_case_aliases_are_accepted_in_toml() {
    let dir = Dir::with(
        "plan.toml",
        "epicId = \"shop\"\n\n[[stories]]\nid = \"a\"\ntitle = \"A\"\nowned = [\"src/a\"]\n\n\
         [[stories]]\nid = \"b\"\ntitle = \"B\"\ndependsOn = [\"a\"]\nowned = [\"src/b\"]\n\
         sharedReadOnly = [\"src/a\"]\n",
    );
    let run = dir.run(&["graph", "--format", "json", "plan.toml"]);
    run.assert_code(0);
    assert_eq!(
        run.json(),
        serde_json::json!({"waves": [["a"], ["b"]], "critical_path": ["a", "b"]})
    );
}

#[test]
fn unknown_keys_are_ignored() {
    let dir = Dir::with(
        "plan.json",
        r#"{"epic_id": "shop", "owner": "someone", "version": 7, "stories": [
            {"id": "a", "title": "A", "owned": ["src/a"], "estimate": {"days": 2}}]}"#,
    );
    let run = dir.run(&["validate", "plan.json"]);
    run.assert_code(0);
    assert_eq!(run.stdout, "plan.json: valid — 1 story in 1 wave\n");
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = Dir::with(
        "plan.json",
        "\u{feff}{\"epic_id\": \"shop\", \"stories\": [{\"id\": \"a\", \"title\": \"A\", \"owned\": [\"a\"]}]}",
    );
    dir.run(&["validate", "plan.json"]).assert_code(0);
}
