//! `epic clean`: worktrees removed (as `git worktree list` sees it), story branches deleted with
//! `--branches` but never the epic branch, the state kept, and a refusal while a run holds the
//! lock.

use epic_state_store::EpicLock;
use insta::assert_snapshot;

use crate::util::{Repo, file_plan};

/// A repository where epic `shop` ran: `a` merged (worktree kept), `b` failed (worktree left).
fn after_a_run() -> Repo {
    let repo = Repo::new();
    let mut plan: serde_json::Value =
        serde_json::from_str(&file_plan(&[("a", &[], "alpha"), ("b", &[], "beta")]))
            .expect("a JSON plan");
    plan["stories"][1]["description"] = serde_json::json!("```file b/broken.txt\nbroken\n```\n");
    repo.write("plan.json", plan.to_string());
    let run = repo.run(&[
        "run",
        "plan.json",
        "--coder",
        "script",
        "--gate",
        "test ! -e b/broken.txt",
        "--max-rounds",
        "1",
        "--keep-worktrees",
        "-q",
    ]);
    run.assert_code(1);
    repo
}

fn worktrees(repo: &Repo) -> String {
    let root = repo.path().display().to_string();
    repo.git_output(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .map(|path| path.replace(&root, "[REPO]") + "\n")
        .collect()
}

#[test]
fn removes_the_worktrees_and_keeps_branches_and_state() {
    let repo = after_a_run();
    assert_eq!(
        worktrees(&repo),
        "[REPO]\n[REPO].worktrees/shop/_epic\n[REPO].worktrees/shop/a\n[REPO].worktrees/shop/b\n"
    );
    let run = repo.run(&["clean"]);
    run.assert_code(0);
    assert_snapshot!("removed", run);
    assert_eq!(worktrees(&repo), "[REPO]\n");
    assert!(!repo.temp().join("shop.worktrees").exists());
    let branches = repo.git_output(&["branch", "--format=%(refname:short)"]);
    assert_eq!(branches, "epic/shop\nmain\nstory/shop/a\nstory/shop/b\n");
    // The state is kept: a merged story stays merged.
    let status = repo.run(&["status", "--format", "json"]).json();
    assert_eq!(status["stories"][0]["status"], "merged");

    let again = repo.run(&["clean", "shop", "-q"]);
    again.assert_code(0);
    assert_eq!(again.stdout, "epic shop: nothing to remove\n");
}

#[test]
fn branches_go_too_but_never_the_epic_branch() {
    let repo = after_a_run();
    let run = repo.run(&["clean", "--branches"]);
    run.assert_code(0);
    assert_snapshot!("branches", run);
    let branches = repo.git_output(&["branch", "--format=%(refname:short)"]);
    assert_eq!(branches, "epic/shop\nmain\n");
    let status = repo.run(&["status", "--format", "json"]).json();
    // a stays merged; b, which had not merged, starts over on the next run.
    assert_eq!(status["stories"][0]["status"], "merged");
    assert_eq!(status["stories"][1]["status"], serde_json::Value::Null);
    assert!(
        repo.git_output(&["show", "epic/shop:a/a.txt"])
            .contains("alpha")
    );
}

#[test]
fn refuses_while_a_run_holds_the_lock() {
    let repo = after_a_run();
    let lock = EpicLock::acquire(&repo.epic("shop")).unwrap();
    let run = repo.run(&["clean"]);
    run.assert_code(3);
    assert!(
        run.stderr.contains("another run of this epic is going on"),
        "{run}"
    );
    assert_eq!(worktrees(&repo).lines().count(), 4, "nothing was removed");
    drop(lock);
    repo.run(&["clean"]).assert_code(0);
}

#[test]
fn no_epic_is_exit_2() {
    let repo = Repo::new();
    repo.run(&["clean"]).assert_code(2);
}
