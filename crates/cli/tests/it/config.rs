//! `epic.toml` and `epic config`: the options `epic run` would use, flags over the file over the
//! defaults, and every way the file can be wrong (each naming the key, line and column).

use insta::assert_snapshot;
use serde_json::json;

use crate::util::{Dir, Repo};

#[test]
fn defaults_without_a_config_file() {
    let repo = Repo::new();
    let run = repo.run(&["config", "--coder", "claude"]);
    run.assert_code(0);
    assert_snapshot!("defaults", run);
}

const CONFIG: &str = r#"# The shop's run options.
coder = "codex"
judge = "claude"
concurrency = 4
fail_fast = true
gate = ["cargo test", "cargo clippy -- -D warnings"]
setup = ["npm ci"]
turn_timeout = 900
schedule = "waves"

[prices]
codex = { input = 1.25, output = 10 }
"#;

#[test]
fn flags_win_over_the_config_file() {
    let repo = Repo::new();
    repo.write("epic.toml", CONFIG);
    let args = [
        "config",
        "--concurrency",
        "6",
        "--no-fail-fast",
        "--gate",
        "make check",
        "--reviewer",
        "gemini",
        "--reviewer",
        "exec:./review.sh",
        "--schedule",
        "plan-order",
    ];
    let run = repo.run(&args);
    run.assert_code(0);
    assert_snapshot!("flags_win", run);

    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let run = repo.run(&json_args);
    run.assert_code(0);
    let document = run.json();
    let options = &document["options"];
    assert_eq!(options["concurrency"], 6);
    assert_eq!(options["fail_fast"], false);
    assert_eq!(options["gate"], json!(["make check"]));
    assert_eq!(options["reviewer"], json!(["gemini", "exec:./review.sh"]));
    assert_eq!(options["schedule"], "plan-order");
    // From the file, not overridden.
    assert_eq!(options["coder"], "codex");
    assert_eq!(options["judge"], "claude");
    assert_eq!(options["setup"], json!(["npm ci"]));
    assert_eq!(options["turn_timeout"], 900);
    assert_eq!(
        options["prices"]["codex"],
        json!({"input": 1.25, "output": 10.0})
    );
    // Defaults.
    assert_eq!(options["base"], "HEAD");
    assert_eq!(options["epic_branch"], json!(null));
    assert_eq!(options["gate_timeout"], 1800);
    assert_eq!(options["judge_rounds"], 2);
    assert_eq!(document["sources"]["concurrency"], "flag");
    assert_eq!(document["sources"]["coder"], "epic.toml");
    assert_eq!(document["sources"]["base"], "default");
    assert_eq!(document["config_file"], "[REPO]/epic.toml");
    assert_snapshot!("flags_win_json", run);

    // `--no-judge` drops the file's judge, and says the flag did.
    let run = repo.run(&["config", "--no-judge", "--format", "json"]);
    run.assert_code(0);
    let document = run.json();
    assert_eq!(document["options"]["judge"], json!(null));
    assert_eq!(document["sources"]["judge"], "flag");
}

#[test]
fn the_config_file_is_found_from_a_subdirectory() {
    let repo = Repo::new();
    repo.write("epic.toml", "coder = \"aider\"\n");
    let run = repo.run_in("src/deep", &["config", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["options"]["coder"], "aider");
}

#[test]
fn without_a_coder_it_shows_what_is_there_and_says_what_is_missing() {
    let repo = Repo::new();
    let run = repo.run(&["config"]);
    run.assert_code(0);
    assert!(run.stdout.contains("coder               none"), "{run}");
    assert!(
        run.stderr
            .contains("no coder seat yet: `epic run` needs one"),
        "{run}"
    );
    assert_snapshot!("no_coder", run);
    // `epic run` itself still refuses without one.
    repo.write("plan.json", crate::util::file_plan(&[("a", &[], "x")]));
    let run = repo.run(&["run", "plan.json"]);
    run.assert_code(2);
    assert!(run.stderr.contains("no coder seat"), "{run}");
}

#[test]
fn an_unknown_key_is_named_with_its_position_and_a_suggestion() {
    let repo = Repo::new();
    repo.write("epic.toml", "coder = \"claude\"\nconcurency = 4\n");
    let run = repo.run(&["config"]);
    run.assert_code(2);
    assert!(
        run.stderr.starts_with(
            "error: invalid config file `[REPO]/epic.toml` at line 2, column 1: unknown key \
             `concurency`\nhint: did you mean `concurrency`?\n"
        ),
        "{run}"
    );
    assert_snapshot!("unknown_key", run);
}

#[test]
fn an_unknown_key_in_a_price() {
    let repo = Repo::new();
    repo.write(
        "epic.toml",
        "coder = \"claude\"\n\n[prices.aider]\ninput = 1\noutptu = 2\n",
    );
    let run = repo.run(&["config"]);
    run.assert_code(2);
    assert_snapshot!("unknown_price_key", run);
}

#[test]
fn bad_values_name_the_key_and_position() {
    let repo = Repo::new();
    for (name, text, position) in [
        ("concurrency_zero", "concurrency = 0", "line 2, column 15"),
        ("rounds_negative", "max_rounds = -1", "line 2, column 14"),
        ("timeout_zero", "gate_timeout = 0", "line 2, column 16"),
        (
            "timeout_huge",
            "turn_timeout = 99999999999",
            "line 2, column 16",
        ),
        ("schedule", "schedule = \"random\"", "line 2, column 12"),
        ("seat", "judge = \"claud\"", "line 2, column 9"),
        // The span of a list's element is the list's.
        (
            "empty_exec",
            "reviewer = [\"claude\", \"exec:\"]",
            "line 2, column 12",
        ),
        ("blank_gate", "gate = [\"  \"]", "line 2, column 8"),
        ("wrong_type", "fail_fast = \"yes\"", "line 2, column 13"),
        (
            "negative_price",
            "[prices]\naider = { input = -1, output = 2 }",
            "line 3, column 9",
        ),
    ] {
        repo.write("epic.toml", format!("coder = \"claude\"\n{text}\n"));
        let run = repo.run(&["config"]);
        run.assert_code(2);
        assert!(
            run.stderr.contains(&format!(" at {position}: ")),
            "{name}: {run}"
        );
        assert_snapshot!(format!("bad_value_{name}"), run);
    }
}

#[test]
fn a_toml_syntax_error() {
    let repo = Repo::new();
    repo.write("epic.toml", "coder = \"claude\"\nconcurrency = \n");
    let run = repo.run(&["config"]);
    run.assert_code(2);
    assert_snapshot!("syntax", run);
}

#[test]
fn bad_flag_values_are_usage_errors() {
    let repo = Repo::new();
    for args in [
        &["config", "--concurrency", "0"][..],
        &["config", "--coder", "claud"],
        &["config", "--turn-timeout=-5"],
        &["config", "--schedule", "random"],
    ] {
        let run = repo.run(args);
        run.assert_code(2);
        assert!(
            run.stderr.starts_with("error: invalid value"),
            "{args:?}: {run}"
        );
    }
    assert_snapshot!("bad_flag", repo.run(&["config", "--coder", "claud"]));
}

#[test]
fn not_a_repository() {
    let dir = Dir::new();
    let run = dir.run(&["config", "--coder", "claude"]);
    run.assert_code(2);
    assert_snapshot!("not_a_repository", run);

    let root = dir.path().display().to_string();
    let missing = dir.path().join("missing").display().to_string();
    let run = Dir::new()
        .run(&["status", "--repo", &missing])
        .redact(&[(&root, "[DIR]")]);
    run.assert_code(2);
    assert_snapshot!("repo_not_a_directory", run);
}

#[test]
fn the_schema_describes_every_key() {
    let run = Dir::new().run(&["schema", "config"]);
    run.assert_code(0);
    let schema = run.json();
    assert_eq!(schema["title"], "epic.toml");
    assert_eq!(schema["additionalProperties"], false, "{schema:#}");
    let properties = schema["properties"].as_object().unwrap();
    let mut keys: Vec<&str> = properties.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = vec![
        "allow_red_baseline",
        "architect",
        "base",
        "board_hook",
        "budget_usd",
        "coder",
        "concurrency",
        "epic_branch",
        "expose",
        "fail_fast",
        "gate",
        "gate_junit",
        "gate_reruns",
        "gate_timeout",
        "judge",
        "judge_rounds",
        "keep_worktrees",
        "max_rounds",
        "max_tasks",
        "merge_batch",
        "merge_revisions",
        "noop",
        "notify",
        "on_blocked",
        "preflight",
        "max_wait",
        "outage_wait",
        "planner",
        "prices",
        "reviewer",
        "rules",
        "sandbox",
        "schedule",
        "seats",
        "setup",
        "stall_timeout",
        "test_pattern",
        "turn_timeout",
        "verifier",
        "worktrees",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    for (key, property) in properties {
        assert!(
            property["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{key} has no description: {property:#}"
        );
    }
    assert_snapshot!("schema", run.stdout);
}

#[test]
fn the_last_runs_options_show_as_a_rerun_would_take_them() {
    let repo = Repo::new();
    repo.write("plan.json", crate::util::file_plan(&[("a", &[], "x")]));
    repo.write("epic.toml", "concurrency = 2\n");
    let run = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--gate",
        "true",
        "--max-rounds",
        "5",
        "-q",
    ]);
    run.assert_code(0);
    let run = repo.run(&["config", "--format", "json", "--max-rounds", "4"]);
    run.assert_code(0);
    let config = run.json();
    assert_eq!(config["options"]["coder"], "script", "{config}");
    assert_eq!(config["options"]["gate"], json!(["true"]));
    assert_eq!(config["options"]["max_rounds"], 4);
    assert_eq!(config["options"]["concurrency"], 2);
    assert_eq!(config["sources"]["coder"], "last run");
    assert_eq!(config["sources"]["gate"], "last run");
    assert_eq!(config["sources"]["max_rounds"], "flag");
    assert_eq!(config["sources"]["concurrency"], "epic.toml");
    assert_eq!(config["sources"]["judge_rounds"], "default");
}
