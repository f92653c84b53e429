//! `--gate-reruns`: a gate command red once and green when run again on the same tree is flaky,
//! passes and is named (the `gate_flaky` event, the live view, `epic land`'s lines); with
//! `--gate-reruns 0` a red run decides, as before. The `epic` binary on real repositories, the
//! script seat and shell gates that count their runs in a file outside the repository.

use std::path::Path;

use crate::util::{Repo, file_plan};

/// In a story's worktree.
const IN_STORY: &str = "[ -n \"${EPIC_STORY:-}\" ] && [ \"$(basename \"$(pwd)\")\" != _epic ]";
/// On the epic worktree after a merge.
const AFTER_MERGE: &str = "[ -n \"${EPIC_STORY:-}\" ] && [ \"$(basename \"$(pwd)\")\" = _epic ]";
/// In landing: `EPIC_STORY` set and empty (unset at the baseline).
const IN_LANDING: &str = "[ \"${EPIC_STORY-unset}\" = '' ]";

/// A gate red on its first run where the shell test `place` holds (a port in use), green on
/// every later run there and everywhere else; its runs there are counted in `<temp>/runs`.
fn red_once(repo: &Repo, place: &str) -> String {
    format!(
        "if {place}; then c='{temp}/runs'; n=$(($(cat \"$c\" 2>/dev/null || echo 0) + 1)); \
         echo $n > \"$c\"; if [ $n -lt 2 ]; then echo 'port 8080 in use'; exit 1; fi; fi",
        temp = repo.temp().display()
    )
}

fn runs(repo: &Repo) -> String {
    std::fs::read_to_string(repo.temp().join("runs"))
        .expect("the gate ran where it counts")
        .trim()
        .to_owned()
}

/// The events of `events.jsonl` of kind `kind`.
fn events_of(repo: &Repo, kind: &str) -> Vec<serde_json::Value> {
    let path = repo.common_dir().join("epic/shop/events.jsonl");
    std::fs::read_to_string(path)
        .expect("events.jsonl")
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["kind"] == kind)
        .collect()
}

fn run_epic(repo: &Repo, gate: &str, extra: &[&str]) -> crate::util::Run {
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    let mut args = vec![
        "run",
        "plan.json",
        "--coder",
        "script",
        "--no-progress",
        "--gate",
        gate,
    ];
    args.extend_from_slice(extra);
    repo.run(&args)
}

fn the_flaky_event(event: &serde_json::Value, gate: &str, story: Option<&str>) {
    assert_eq!(event["command"], gate, "{event}");
    assert_eq!(event["runs"], 2, "{event}");
    assert_eq!(event["status"], "exit code 1", "{event}");
    assert_eq!(event["output"], "port 8080 in use", "{event}");
    assert_eq!(
        event.get("story").and_then(|s| s.as_str()),
        story,
        "{event}"
    );
}

#[test]
fn a_story_gate_red_once_is_flaky_and_the_story_merges() {
    let repo = Repo::new();
    let gate = red_once(&repo, IN_STORY);
    let run = run_epic(&repo, &gate, &[]);
    run.assert_code(0);
    assert!(
        run.stderr.contains("story a: gate `if [ -n")
            && run
                .stderr
                .contains("is flaky: red (exit code 1: port 8080 in use), green on run 2; passed"),
        "{run}"
    );
    let flaky = events_of(&repo, "gate_flaky");
    assert_eq!(flaky.len(), 1, "{flaky:?}");
    the_flaky_event(&flaky[0], &gate, Some("a"));
    assert!(events_of(&repo, "gate_failed").is_empty());
    assert_eq!(runs(&repo), "2");
    assert_eq!(repo.git_output(&["show", "epic/shop:a/a.txt"]), "alpha\n");
    let report = repo.run(&["report", "--format", "json"]).json();
    let gates = &report["stories"][0]["flaky_gates"];
    assert_eq!(gates[0]["command"], gate.as_str(), "{report}");
    assert_eq!(gates[0]["output"], "port 8080 in use", "{report}");
    let markdown = repo.run(&["report"]);
    assert!(markdown.stdout.contains("## Flaky gates"), "{markdown}");
    assert!(
        markdown.stdout.contains("      port 8080 in use"),
        "{markdown}"
    );
}

#[test]
fn with_no_reruns_an_epic_gate_red_once_undoes_the_merge() {
    let repo = Repo::new();
    let gate = red_once(&repo, AFTER_MERGE);
    // No merge revision either: the red merge fails the story, as before both.
    run_epic(
        &repo,
        &gate,
        &["--gate-reruns", "0", "--merge-revisions", "0"],
    )
    .assert_code(1);
    assert!(events_of(&repo, "gate_flaky").is_empty());
    assert_eq!(events_of(&repo, "story_rolled_back").len(), 1);
    assert_eq!(runs(&repo), "1");
    let config = repo
        .run(&[
            "config",
            "--gate-reruns",
            "0",
            "--coder",
            "script",
            "--format",
            "json",
        ])
        .json();
    assert_eq!(config["options"]["gate_reruns"], 0);
}

#[test]
fn a_gate_red_once_in_landing_is_flaky_and_the_epic_lands() {
    let repo = Repo::new();
    repo.write("plan.json", file_plan(&[("a", &[], "alpha")]));
    repo.git(&["add", "plan.json"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "-c",
        "commit.gpgsign=false",
        "commit",
        "--quiet",
        "-m",
        "the plan",
    ]);
    let gate = red_once(&repo, IN_LANDING);
    repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--no-progress",
        "--gate",
        &gate,
    ])
    .assert_code(0);
    assert!(
        !Path::new(&repo.temp().join("runs")).exists(),
        "not run yet"
    );

    let land = repo.run(&["land", "--no-progress"]);
    land.assert_code(0);
    assert!(land.stderr.contains("land: gate `"), "{land}");
    assert!(
        land.stderr
            .contains("is flaky: red (exit code 1: port 8080 in use)"),
        "{land}"
    );
    let flaky = events_of(&repo, "gate_flaky");
    assert_eq!(flaky.len(), 1, "{flaky:?}");
    the_flaky_event(&flaky[0], &gate, None);
    assert_eq!(repo.git_output(&["show", "main:a/a.txt"]), "alpha\n");
}
