//! Merge revisions through the binary: `epic run` killed with SIGKILL (its whole process group)
//! at each step of a revision (once it is recorded, inside its coder turn, once its task is
//! committed), rerun after each kill, ends where an uninterrupted run ends: both stories merged,
//! the same epic tree, one revision counted (a rerun never counts it again), and `epic status`
//! and the report say so. With `--merge-revisions 0` the story fails as before.
//!
//! Stories a and b are independent; each writes `<story>/one.txt`, and the gate is red when both
//! are on one tree with no `fix.txt` beside them. b's coder waits until a's merge is on the epic
//! branch (read with git, in its worktree), so b merges second, red: it goes back to its coder,
//! whose revision turn writes `b/fix.txt`. While `$MARKS/hold` exists, a revision turn marks
//! `$MARKS/in-revision` and holds (a kill lands inside it). Every wait is on a file or an event.

use std::path::Path;

use crate::crash::{KeepOnFailure, events, kill_group, spawn, wait};
use crate::util::{PATIENCE, RUN_PATIENCE, Repo, wait_for};

const EPIC: &str = "rev";

const AGENT: &str = r#"#!/bin/sh
prompt=$(cat)
case "$EPIC_ROLE" in
planner) echo '{"tasks":[{"title":"one","description":"the file"}]}' ;;
coder)
  case "$prompt" in
  *'Merge revision'*)
    touch "$MARKS/in-revision"
    n=0; while [ -e "$MARKS/hold" ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done
    mkdir -p "$EPIC_STORY"
    echo "fixed $EPIC_STORY" > "$EPIC_STORY/fix.txt"
    echo "wrote $EPIC_STORY/fix.txt"
    exit 0 ;;
  esac
  if [ "$EPIC_STORY" = b ]; then
    n=0; while ! git log --format=%s epic/rev 2>/dev/null | grep -q "merge story a" && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done
  fi
  mkdir -p "$EPIC_STORY"
  echo "ok $EPIC_STORY" > "$EPIC_STORY/one.txt"
  echo "wrote $EPIC_STORY/one.txt" ;;
*) echo '{"clean":true,"issues":[]}' ;;
esac
"#;

const GATE: &str = r#"if [ -e a/one.txt ] && [ -e b/one.txt ] && [ ! -e a/fix.txt ] && [ ! -e b/fix.txt ]; then
  echo "a and b collide"; exit 1
fi
"#;

/// The repository with the gate committed, and the arguments of `epic run` (`extra` after them).
fn setup(extra: &[&str]) -> (Repo, Vec<String>) {
    let repo = Repo::new();
    repo.write("gate.sh", GATE);
    repo.git(&["add", "gate.sh"]);
    repo.git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "--quiet",
        "-m",
        "the gate",
    ]);
    let plan = repo.temp().join("plan.json");
    let stories = serde_json::json!([
        {"id": "a", "title": "Story a", "owned": ["a"]},
        {"id": "b", "title": "Story b", "owned": ["b"]},
    ]);
    std::fs::write(
        &plan,
        serde_json::json!({"epic_id": EPIC, "stories": stories}).to_string(),
    )
    .expect("write the plan");
    let agent = repo.temp().join("agent.sh");
    std::fs::write(&agent, AGENT).expect("write the agent");
    let marks = repo.temp().join("marks");
    std::fs::create_dir_all(&marks).expect("the marks");
    let mut args: Vec<String> = [
        "run",
        &plan.display().to_string(),
        "--coder",
        &format!("exec:env MARKS={} sh {}", marks.display(), agent.display()),
        "--gate",
        "sh gate.sh",
        "--concurrency",
        "2",
        "--merge-batch",
        "1",
        "--no-progress",
        "-q",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    (repo, args)
}

fn marks(repo: &Repo) -> std::path::PathBuf {
    repo.temp().join("marks")
}

/// Runs `epic run` to its end: its exit code.
fn run_once(repo: &Repo, args: &[String]) -> Option<i32> {
    let mut child = spawn(repo, args);
    wait(&mut child, "the run ends", RUN_PATIENCE).code()
}

/// Runs `epic run` until `reached` holds for the events it logged (those after `before`) or the
/// file `mark` exists, then kills its process group: whether it was killed (`false`: it ended
/// first).
fn run_until(
    repo: &Repo,
    args: &[String],
    log: &Path,
    reached: impl Fn(&[String]) -> bool,
    mark: Option<&Path>,
) -> bool {
    let before = events(log).len();
    let mut child = spawn(repo, args);
    let killed = wait_for(
        "the point to kill the run at, or its end",
        RUN_PATIENCE,
        || {
            if child.try_wait().expect("poll").is_some() {
                return Some(false);
            }
            let all = events(log);
            (reached(&all[before.min(all.len())..]) || mark.is_some_and(Path::exists))
                .then_some(true)
        },
    );
    if killed {
        kill_group(&child);
        wait(&mut child, "the killed run dies", PATIENCE);
    }
    killed
}

/// The `merge_revision` events of the log: (story, revision).
fn revisions(log: &Path) -> Vec<(String, u64)> {
    events(log)
        .iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["kind"] == "merge_revision")
        .map(|event| {
            (
                event["story"].as_str().unwrap_or_default().to_owned(),
                event["revision"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

fn tree(repo: &Repo) -> String {
    repo.git_output(&["rev-parse", &format!("epic/{EPIC}^{{tree}}")])
}

#[test]
fn sigkill_at_each_step_of_a_revision_ends_where_an_uninterrupted_run_does() {
    // The reference, uninterrupted: b is revised once and both merge.
    let (reference, reference_args) = setup(&[]);
    assert_eq!(run_once(&reference, &reference_args), Some(0));
    let reference_log = reference
        .common_dir()
        .join(format!("epic/{EPIC}/events.jsonl"));
    assert_eq!(revisions(&reference_log), [("b".to_owned(), 1)]);

    let (repo, args) = setup(&[]);
    let _keep = KeepOnFailure(&repo);
    let log = repo.common_dir().join(format!("epic/{EPIC}/events.jsonl"));
    let mut lives = Vec::new();
    // Once the revision is recorded (its task in the checkpoint).
    let killed = run_until(
        &repo,
        &args,
        &log,
        |new| {
            new.iter()
                .any(|event| event.contains("\"kind\":\"merge_revision\""))
        },
        None,
    );
    lives.push(format!("at merge_revision: killed {killed}"));
    // Inside the revision's coder turn.
    let hold = marks(&repo).join("hold");
    std::fs::write(&hold, "").expect("hold");
    let inside = marks(&repo).join("in-revision");
    std::fs::remove_file(&inside).ok();
    let killed = run_until(&repo, &args, &log, |_| false, Some(&inside));
    // The held turn cannot end before the kill: this life always dies inside the revision.
    assert!(killed, "{lives:?}");
    lives.push(format!("inside the revision's coder turn: killed {killed}"));
    std::fs::remove_file(&hold).expect("release");
    // Once the revision's task is committed, before the merge is proven.
    let killed = run_until(
        &repo,
        &args,
        &log,
        |new| {
            new.iter().any(|event| {
                event.contains("\"kind\":\"task_committed\"") && event.contains("Merge revision")
            })
        },
        None,
    );
    lives.push(format!("at the revision's commit: killed {killed}"));
    let lives = lives.join("\n");
    assert_eq!(run_once(&repo, &args), Some(0), "{lives}");
    println!("{lives}");

    assert_eq!(tree(&repo), tree(&reference), "{lives}");
    // One revision, however many lives it took: each rerun resumed it, none counted another.
    assert!(
        revisions(&log)
            .iter()
            .all(|(story, revision)| story == "b" && *revision == 1),
        "{:?}\n{lives}",
        revisions(&log)
    );
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.epic(EPIC).story_revisions("b").expect("path"))
            .expect("b's revisions"),
    )
    .expect("json");
    assert_eq!(
        record["data"]["revisions"].as_array().map(Vec::len),
        Some(1)
    );
    let report = repo.run(&["report", EPIC, "--format", "json"]).json();
    assert_eq!(report["stories"][1]["merge_revisions"], 1, "{report}");
    assert!(
        report["stories"][0].get("merge_revisions").is_none(),
        "{report}"
    );
    let status = repo.run(&["status", EPIC]);
    assert!(
        status
            .stdout
            .contains("merge revisions (red on the epic head, back to the coder): b 1"),
        "{status}"
    );
    let json = repo.run(&["status", EPIC, "--format", "json"]).json();
    assert_eq!(json["stories"][1]["merge_revisions"], 1, "{json}");
    assert!(!repo.epic(EPIC).root().join("merging.json").exists());
}

#[test]
fn with_merge_revisions_0_the_red_story_fails_as_before() {
    let (repo, args) = setup(&["--merge-revisions", "0"]);
    assert_eq!(run_once(&repo, &args), Some(1));
    let log = repo.common_dir().join(format!("epic/{EPIC}/events.jsonl"));
    assert!(revisions(&log).is_empty());
    assert!(
        !marks(&repo).join("in-revision").exists(),
        "no coder went back"
    );
    let report = repo.run(&["report", EPIC, "--format", "json"]).json();
    assert_eq!(report["stories"][1]["status"], "failed", "{report}");
    let reason = report["stories"][1]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("epic gates failed after merging; merge undone:")
            && reason.contains("a and b collide"),
        "{reason}"
    );
}
