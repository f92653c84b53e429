//! Plans that cannot be read or decoded: exit 2 with `file:line:col: message` and a hint on
//! stderr, in text and JSON mode alike.

use insta::assert_snapshot;

use crate::util::Dir;

/// Runs `epic validate FILE` on `contents` and checks the common shape of an input error.
fn check(file: &str, contents: &str) -> crate::util::Run {
    let dir = Dir::with(file, contents);
    let run = dir.run(&["validate", file]);
    run.assert_code(2);
    assert_eq!(run.stdout, "", "{run}");
    assert!(run.stderr.starts_with("error: "), "{run}");
    assert!(run.stderr.contains("\nhint: "), "{run}");
    run
}

#[test]
fn json_syntax_error() {
    let run = check(
        "plan.json",
        "{\n  \"epic_id\": \"shop\",\n  \"stories\": [\n    {\"id\": \"a\",, }\n  ]\n}\n",
    );
    assert!(run.stderr.starts_with("error: plan.json:4:16: "), "{run}");
    assert_snapshot!("json_syntax", run);
}

#[test]
fn json_missing_field() {
    let run = check(
        "plan.json",
        "{\n  \"epic_id\": \"shop\",\n  \"stories\": [\n    {\"id\": \"a\", \"owned\": [\"src\"]}\n  ]\n}\n",
    );
    assert!(run.stderr.starts_with("error: plan.json:4:"), "{run}");
    assert!(run.stderr.contains("title"), "{run}");
    assert_snapshot!("json_missing_field", run);
}

#[test]
fn json_wrong_type() {
    let run = check(
        "plan.json",
        "{\"epic_id\": \"shop\",\n \"stories\": [{\"id\": \"a\", \"title\": \"A\", \"owned\": \"src\"}]}",
    );
    assert!(run.stderr.starts_with("error: plan.json:2:"), "{run}");
    assert_snapshot!("json_wrong_type", run);
}

#[test]
fn toml_syntax_error() {
    let run = check(
        "plan.toml",
        "epic_id = \"shop\"\n\n[[stories]]\nid = \"a\"\ntitle = \n",
    );
    assert!(run.stderr.starts_with("error: plan.toml:5:"), "{run}");
    assert_snapshot!("toml_syntax", run);
}

#[test]
fn toml_wrong_type() {
    let run = check(
        "plan.toml",
        "epic_id = \"shop\"\n\n[[stories]]\nid = \"a\"\ntitle = \"A\"\nowned = \"src\"\n",
    );
    assert!(run.stderr.starts_with("error: plan.toml:6:"), "{run}");
    assert_snapshot!("toml_wrong_type", run);
}

#[test]
fn markdown_error_names_the_line_in_the_markdown_file() {
    // The block's body starts on line 6; the bad line is line 9 of the file.
    let run = check(
        "plan.md",
        "# Shop\n\nProse.\n\n```json storyplan\n{\n  \"epic_id\": \"shop\",\n  \"stories\": [\n    {\"id\": 7}\n  ]\n}\n```\n",
    );
    assert!(run.stderr.starts_with("error: plan.md:9:"), "{run}");
    assert_snapshot!("markdown_line", run);
}

#[test]
fn markdown_without_a_plan_block() {
    let run = check("plan.md", "# Shop\n\n```json\n{}\n```\n");
    assert_snapshot!("markdown_no_block", run);
}

#[test]
fn markdown_with_an_unclosed_plan_block() {
    let run = check("plan.md", "# Shop\n\n```json storyplan\n{}\n");
    assert!(run.stderr.starts_with("error: plan.md:3:1: "), "{run}");
    assert_snapshot!("markdown_unclosed", run);
}

#[test]
fn unknown_extension() {
    let run = check("plan.yaml", "epic_id: shop\n");
    assert_snapshot!("unknown_extension", run);
}

#[test]
fn missing_file() {
    let dir = Dir::new();
    let mut run = dir.run(&["validate", "missing.json"]);
    run.assert_code(2);
    assert_eq!(run.stdout, "");
    // The OS's wording of "not found" differs between systems; the rest is ours.
    let os_text = std::fs::read(dir.path().join("missing.json"))
        .unwrap_err()
        .to_string();
    run.stderr = run.stderr.replace(&os_text, "[OS ERROR]");
    assert!(
        run.stderr
            .starts_with("error: failed to read plan file `missing.json`: [OS ERROR]\n"),
        "{run}"
    );
    assert_snapshot!("missing_file", run);
}

#[test]
fn a_directory_is_not_a_plan() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path().join("plans.json")).unwrap();
    let run = dir.run(&["validate", "plans.json"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .starts_with("error: failed to read plan file `plans.json`: "),
        "{run}"
    );
}

#[test]
fn a_file_that_is_not_utf8() {
    let dir = Dir::with("plan.json", b"{\"epic_id\": \"\xff\"}");
    let run = dir.run(&["validate", "plan.json"]);
    run.assert_code(2);
    assert_snapshot!("not_utf8", run);
}

#[test]
fn parse_errors_stay_text_on_stderr_in_json_mode() {
    let dir = Dir::with("plan.json", "{\"epic_id\": ");
    for command in ["validate", "graph"] {
        let run = dir.run(&[command, "--format", "json", "plan.json"]);
        run.assert_code(2);
        assert_eq!(run.stdout, "");
        assert!(run.stderr.starts_with("error: plan.json:1:"), "{run}");
    }
    assert_snapshot!(
        "json_mode",
        dir.run(&["validate", "--format", "json", "plan.json"])
    );
}

#[test]
fn quiet_drops_the_hint_but_not_the_error() {
    let dir = Dir::with("plan.yaml", "");
    let run = dir.run(&["validate", "-q", "plan.yaml"]);
    run.assert_code(2);
    assert!(run.stderr.starts_with("error: plan.yaml: "), "{run}");
    assert!(!run.stderr.contains("hint:"), "{run}");
}

#[test]
fn nothing_panics_on_odd_input() {
    let inputs: &[(&str, &[u8])] = &[
        ("a.json", b""),
        ("a.json", b"null"),
        ("a.json", b"[]"),
        ("a.json", b"{\"epic_id\": \"e\", \"stories\": [null]}"),
        ("a.json", b"{\"epic_id\": \"e\", \"stories\": []} trailing"),
        ("a.toml", b""),
        ("a.toml", b"stories = 3"),
        ("a.md", b""),
        ("a.md", b"```json storyplan\n```\n"),
        ("a.md", "```json storyplan\n{\"epic_id\": \"é\", \"stories\": [{\"id\": \"ü\", \"title\": \"\\u0000\", \"owned\": [\"\\\\\"]}]}\n```\n".as_bytes()),
    ];
    for &(file, contents) in inputs {
        let dir = Dir::with(file, contents);
        for command in ["validate", "graph"] {
            for format in ["text", "json"] {
                let run = dir.run(&[command, "--format", format, file]);
                assert!(
                    matches!(run.code, Some(1 | 2)),
                    "{command} {format} {file} {contents:?}:\n{run}"
                );
                assert!(!run.stderr.contains("panicked"), "{run}");
            }
        }
    }
}
