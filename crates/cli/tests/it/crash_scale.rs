//! Crash at scale: `epic run` on an epic of 300 one-file stories (the built-in `script` seat,
//! eight at once), killed with SIGKILL (its whole process group) at seeded points counted in
//! its merges, one of them past the 256th, where the attestation notes' tree fans out; rerun
//! after each kill. The writes that changed for large epics are all crossed mid-flight: the
//! notes tree fanned out, the report and the board written off the loop and at most so often,
//! atomic writes that look for dead writers' temp files only at a process's first write. Then
//! every story is merged exactly once with its file, every merge's attestation verifies, the
//! report holds every story done, the board exists, and no temp file is left beside the state.
//!
//! The seed is fixed; `EPIC_CRASH_SEED` picks another.

use std::path::{Path, PathBuf};

use epic_test_support::Rng;

use crate::crash::{events, kill_group, spawn, wait};
use crate::util::{PATIENCE, RUN_PATIENCE, Repo, wait_for};

const EPIC: &str = "wide";
const STORIES: usize = 300;

/// Where the kills land, in merges made so far (each drawn within its span): early, mid,
/// after the notes' tree fanned out (256 notes), and near the end.
const SPANS: [(usize, usize); 4] = [(10, 80), (100, 220), (257, 280), (281, 298)];

/// The plan: independent stories, each writing its one file with the script seat.
fn plan() -> String {
    let stories: Vec<serde_json::Value> = (1..=STORIES)
        .map(|n| {
            let id = format!("w{n:03}");
            let dir = format!("s/{}/{id}", n / 100);
            serde_json::json!({
                "id": id,
                "title": format!("Story {n}"),
                "description": format!("Write the file.\n\n```file {dir}/f.txt\nok {id}\n```\n"),
                "owned": [dir],
            })
        })
        .collect();
    serde_json::json!({"epic_id": EPIC, "stories": stories}).to_string()
}

/// The merges the run logged so far.
fn merged(log: &Path) -> usize {
    events(log)
        .iter()
        .filter(|event| event.contains("\"kind\":\"story_merged\""))
        .count()
}

#[test]
fn sigkill_across_the_writes_of_a_large_epic_loses_nothing() {
    let repo = Repo::new();
    let plan = repo.temp().join("plan.json");
    std::fs::write(&plan, self::plan()).expect("write the plan");
    let args: Vec<String> = [
        "run",
        &plan.display().to_string(),
        "--coder",
        "script",
        "--concurrency",
        "8",
        "--no-progress",
        "-q",
    ]
    .map(str::to_owned)
    .to_vec();
    let log = repo.common_dir().join(format!("epic/{EPIC}/events.jsonl"));
    let mut rng = Rng::from_env("EPIC_CRASH_SEED", 0x5ca1_e0ff);
    let mut kills = Vec::new();
    for (from, to) in SPANS {
        let at = from + rng.index(to - from);
        let mut child = spawn(&repo, &args);
        let ended = wait_for("the run reaches its kill or ends", RUN_PATIENCE, || {
            let exited = child.try_wait().expect("poll");
            (exited.is_some() || merged(&log) >= at).then_some(exited)
        });
        if let Some(status) = ended {
            panic!("the run ended {status} before its kill at {at} merges");
        }
        kill_group(&child);
        wait(&mut child, "the killed run dies", PATIENCE);
        kills.push(format!("killed at {at} merges ({} logged)", merged(&log)));
    }

    // The last rerun, uninterrupted, finishes the epic.
    let run = repo.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    run.assert_code(0);

    // Every story merged exactly once, its file on the epic branch.
    let subjects = repo.git_output(&[
        "log",
        "--first-parent",
        "--merges",
        "--format=%s",
        &format!("epic/{EPIC}"),
    ]);
    let mut subjects: Vec<&str> = subjects.lines().collect();
    subjects.sort_unstable();
    let expected: Vec<String> = (1..=STORIES)
        .map(|n| format!("{EPIC}: merge story w{n:03}"))
        .collect();
    assert_eq!(subjects, expected, "{kills:?}");
    let files = repo.git_output(&["ls-tree", "-r", "--name-only", &format!("epic/{EPIC}"), "s"]);
    assert_eq!(files.lines().count(), STORIES, "{kills:?}");
    assert_eq!(
        repo.git_output(&["show", &format!("epic/{EPIC}:s/2/w250/f.txt")]),
        "ok w250\n"
    );

    // Every merge's attestation verifies, the notes' tree fanned out or not.
    repo.run(&["verify", EPIC]).assert_code(0);
    let notes = repo.git_output(&["notes", "--ref=refs/notes/epic", "list"]);
    assert!(
        notes.lines().count() >= STORIES,
        "{} notes",
        notes.lines().count()
    );
    let top = repo.git_output(&["ls-tree", "refs/notes/epic"]);
    assert!(
        top.lines().all(|entry| entry.contains(" tree ")),
        "the notes' tree did not fan out:\n{top}"
    );

    // The documents written off the loop are whole, and nothing half-written is left.
    let dir = repo.epic(EPIC);
    let report: epic_events::ReportDocument = epic_state_store::load(dir.report_json())
        .expect("the report parses")
        .expect("the report exists");
    assert!(report.0.all_done(), "{kills:?}");
    assert!(dir.board().exists());
    let leftovers: Vec<PathBuf> = walk(dir.root())
        .into_iter()
        .filter(|path| path.extension().is_some_and(|extension| extension == "tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Every file under `root`.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut names = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                names.push(path);
            }
        }
    }
    names
}
