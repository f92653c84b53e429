//! `--gate-reruns`: a gate command red once and green when run again on the same tree is flaky,
//! passes and is named (the `gate_flaky` event, the live view, `epic land`'s lines, the
//! attestation of the merge it proved and `epic verify`); with `--gate-reruns 0` a red run
//! decides, as before. The `epic` binary on real repositories, the script seat and shell gates
//! that count their runs in a file outside the repository.

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

/// Commits what is staged on `main`, the main checkout's branch.
fn commit(repo: &Repo, message: &str) {
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
        message,
    ]);
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

/// Checks that the one gate of `attestation` is `gate`, passed and flaky as [`red_once`] makes
/// it: green on its second run, its first ended with exit code 1 (that run's output is the
/// report's, not the attestation's).
fn the_flaky_gate(attestation: &serde_json::Value, gate: &str) {
    let gates = attestation["gates"].as_array().expect("the gates");
    assert_eq!(gates.len(), 1, "{attestation:#}");
    assert_eq!(gates[0]["command"], gate, "{attestation:#}");
    assert_eq!(gates[0]["exit_code"], 0, "{attestation:#}");
    assert_eq!(
        gates[0]["flaky"],
        serde_json::json!({"runs": 2, "status": "exit code 1"}),
        "{attestation:#}"
    );
}

/// The attestation of `commit`: its note under `refs/notes/epic`, after checking that the
/// epic's state holds the same.
fn attestation(repo: &Repo, commit: &str) -> serde_json::Value {
    let note = repo.git_output(&["notes", "--ref=epic", "show", commit]);
    let note: serde_json::Value = serde_json::from_str(&note).expect("the note is JSON");
    let path = repo
        .epic("shop")
        .attestation(commit)
        .expect("a full commit id");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("attestations/<commit>.json"))
            .expect("the state's attestation is JSON");
    assert_eq!(state["data"], note, "{state:#}");
    note
}

#[test]
fn a_merge_proven_by_a_flaky_gate_is_attested_naming_it_and_verifies() {
    let repo = Repo::new();
    let gate = red_once(&repo, AFTER_MERGE);
    run_epic(&repo, &gate, &[]).assert_code(0);
    let flaky = events_of(&repo, "gate_flaky");
    assert_eq!(flaky.len(), 1, "{flaky:?}");
    the_flaky_event(&flaky[0], &gate, Some("a"));
    assert_eq!(runs(&repo), "2");

    let merge = repo.git_output(&["rev-parse", "epic/shop"]);
    let merge = merge.trim();
    let note = attestation(&repo, merge);
    assert_eq!(note["story"], "a", "{note:#}");
    the_flaky_gate(&note, &gate);

    let verify = repo.run(&["verify"]);
    verify.assert_code(0);
    assert!(
        verify.stdout.contains(&format!(
            "ok    {} story a\n      flaky: gate `{gate}` red (exit code 1), green on run 2\n",
            &merge[..12]
        )),
        "{verify}"
    );
    assert!(verify.stdout.contains("verified: 1 commits"), "{verify}");
    let verify = repo.run(&["verify", "--format", "json"]);
    verify.assert_code(0);
    let data = verify.json();
    assert_eq!(
        data["commits"][0]["flaky_gates"],
        serde_json::json!([{"command": gate, "runs": 2, "status": "exit code 1"}]),
        "{data:#}"
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
    commit(&repo, "the plan");
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
    // The target moved: the landing merges it into the epic branch, a commit it attests.
    repo.write("main.txt", "main moved\n");
    repo.git(&["add", "main.txt"]);
    commit(&repo, "main moved");

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
    let merge = repo.git_output(&["rev-parse", "epic/shop"]);
    let note = attestation(&repo, merge.trim());
    assert_eq!(note["kind"], "landing", "{note:#}");
    the_flaky_gate(&note, &gate);
    repo.run(&["verify"]).assert_code(0);
}
