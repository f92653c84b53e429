//! `epic verify`: every merge `epic run` proved carries an attestation (a git note under
//! `refs/notes/epic` backed by the epic's state); a commit made by hand, a forged note and a
//! state that claims a merge are named, with exit 1.

use crate::util::{Repo, file_plan};

/// Runs the three-story `shop` epic with the script seat and a gate, to its end.
fn run_shop(repo: &Repo) {
    repo.write(
        "plan.json",
        file_plan(&[
            ("a", &[], "alpha"),
            ("b", &["a"], "beta"),
            ("c", &[], "gamma"),
        ]),
    );
    repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--concurrency",
        "2",
        "--no-progress",
        "--gate",
        "test -d .",
    ])
    .assert_code(0);
}

#[test]
fn every_merge_of_a_run_is_attested_and_verifies() {
    let repo = Repo::new();
    run_shop(&repo);
    let run = repo.run(&["verify"]);
    run.assert_code(0);
    assert!(run.stdout.contains("verified: 3 commits"), "{run}");
    for story in ["a", "b", "c"] {
        let line = run
            .stdout
            .lines()
            .find(|line| line.ends_with(&format!(" story {story}")));
        assert!(line.is_some_and(|line| line.starts_with("ok    ")), "{run}");
    }

    // The note on each merge is the attestation: the story commit merged, its checks, the gate
    // and the tree it passed on, which is the merge's own.
    let merge = repo.git_output(&["rev-parse", "epic/shop"]);
    let merge = merge.trim();
    let note = repo.git_output(&["notes", "--ref", "refs/notes/epic", "show", merge]);
    let note: serde_json::Value = serde_json::from_str(&note).expect("the note is JSON");
    assert_eq!(note["kind"], "story");
    assert_eq!(note["commit"], merge);
    assert_eq!(
        note["checked"],
        repo.git_output(&["rev-parse", &format!("{merge}^2")])
            .trim()
    );
    assert_eq!(
        note["gated_tree"],
        repo.git_output(&["rev-parse", &format!("{merge}^{{tree}}")])
            .trim()
    );
    assert_eq!(note["gates"][0]["command"], "test -d .");
    assert_eq!(note["gates"][0]["exit_code"], 0);
    assert_eq!(note["perimeter"], "passed");
    assert_eq!(note["test_guard"], "passed");
    assert_eq!(note["run"], 1);

    let json = repo.run(&["verify", "shop", "--format", "json"]);
    json.assert_code(0);
    let data = json.json();
    assert_eq!(data["branch"], "epic/shop");
    assert_eq!(data["base_from"], "origin.json");
    assert_eq!(data["commits"].as_array().map(Vec::len), Some(3));
}

/// A run killed while it moved the notes ref leaves `refs/notes/epic.lock`; the rerun clears it
/// (said in a run note) and attests its merges, rather than merging them unattested.
#[test]
fn a_notes_lock_a_killed_run_left_does_not_cost_the_attestations() {
    let repo = Repo::new();
    let lock = repo.path().join(".git/refs/notes/epic.lock");
    std::fs::create_dir_all(lock.parent().expect("refs/notes")).expect("refs/notes");
    std::fs::write(&lock, "").expect("a stale lock");
    run_shop(&repo);
    assert!(!lock.exists(), "the stale lock is gone");
    let run = repo.run(&["verify"]);
    run.assert_code(0);
    assert!(run.stdout.contains("verified: 3 commits"), "{run}");
    let events = std::fs::read_to_string(repo.path().join(".git/epic/shop/events.jsonl"))
        .expect("the events");
    assert!(
        events.contains("refs/notes/epic.lock, left by a git process of a run that died"),
        "{events}"
    );
}

#[test]
fn a_commit_made_by_hand_on_the_epic_branch_is_named() {
    let repo = Repo::new();
    run_shop(&repo);
    let epic = repo
        .path()
        .parent()
        .expect("the repository has a parent")
        .join(format!(
            "{}.worktrees/shop/_epic",
            repo.path().file_name().unwrap().to_string_lossy()
        ));
    std::fs::write(epic.join("hand.txt"), "by hand\n").unwrap();
    let epic = epic.to_string_lossy();
    repo.git(&["-C", &epic, "add", "hand.txt"]);
    repo.git(&[
        "-C",
        &epic,
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.invalid",
        "commit",
        "-q",
        "-m",
        "a change by hand",
    ]);
    let hand = repo.git_output(&["rev-parse", "epic/shop"]);
    let hand = &hand.trim()[..12];

    let run = repo.run(&["verify"]);
    run.assert_code(1);
    assert!(
        run.stdout
            .contains(&format!("FAIL  {hand} \"a change by hand\"")),
        "{run}"
    );
    assert!(run.stdout.contains("no attestation"), "{run}");
    assert!(
        run.stdout.contains("not verified: 1 of 4 checks failed"),
        "{run}"
    );
    assert!(run.stderr.contains("reset the branch"), "{run}");

    // A note forged by hand (any process can write a ref) is not backed by the epic's state.
    let forged = repo.git_output(&["notes", "--ref", "refs/notes/epic", "show", "epic/shop~1"]);
    let (older, newest) = (
        repo.git_output(&["rev-parse", "epic/shop~1"]),
        repo.git_output(&["rev-parse", "epic/shop"]),
    );
    let forged = forged.replace(older.trim(), newest.trim());
    repo.write("forged.json", &forged);
    repo.git(&[
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.invalid",
        "notes",
        "--ref",
        "refs/notes/epic",
        "add",
        "-f",
        "-F",
        "forged.json",
        "epic/shop",
    ]);
    let run = repo.run(&["verify"]);
    run.assert_code(1);
    assert!(
        run.stdout.contains("not backed by the epic's state"),
        "{run}"
    );
}

#[test]
fn a_state_that_claims_a_merge_no_note_backs_is_named() {
    let repo = Repo::new();
    run_shop(&repo);
    repo.run(&["verify"]).assert_code(0);
    // Story c's state edited to claim its merge at the base, where nothing of it is.
    let path = repo.epic("shop").story_state("c").unwrap();
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let base = repo.git_output(&["rev-parse", "epic/shop~3"]);
    state["data"]["merge"] = serde_json::Value::String(base.trim().to_owned());
    std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let run = repo.run(&["verify"]);
    run.assert_code(1);
    assert!(
        run.stdout.contains(&format!(
            "FAIL  story 'c': its state says merged at {}, which no attestation backs",
            base.trim()
        )),
        "{run}"
    );
}

#[test]
fn a_merge_whose_note_was_removed_is_named_with_its_story() {
    let repo = Repo::new();
    run_shop(&repo);
    repo.git(&[
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.invalid",
        "notes",
        "--ref",
        "refs/notes/epic",
        "remove",
        "epic/shop",
    ]);
    let run = repo.run(&["verify"]);
    run.assert_code(1);
    assert!(run.stdout.contains("no attestation"), "{run}");
    let last = repo.git_output(&["log", "-1", "--format=%s", "epic/shop"]);
    let story = last.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(
        run.stdout.contains(&format!("FAIL  story '{story}'")),
        "{run}"
    );
}

#[test]
fn no_epic_no_branch() {
    let repo = Repo::new();
    repo.run(&["verify"]).assert_code(2);
}
