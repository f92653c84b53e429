//! Ancestry and merge bases on a history whose commits share one timestamp, as epic's do (a
//! story's commits, its catch-up merge and the epic's merge of it, all within one second): gix's
//! own merge base named an older common ancestor there, so a story merged into the epic branch
//! looked missing from it (found by the crash harness, seed 16).

use std::process::Command;

use epic_git_ops::Git;

use crate::support::{Repo, isolate};

/// Runs git in the repository with every commit dated the same second; stdout.
fn git_at_one_second(repo: &Repo, args: &[&str]) -> String {
    let mut command = Command::new("git");
    isolate(&mut command, repo.home());
    let output = command
        .current_dir(&repo.path)
        .env("GIT_AUTHOR_DATE", "2026-12-04T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-12-04T10:00:00Z")
        .args(args)
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Two stories merged into `epic`, the second after catching up with the first's merge; and a
/// branch `other` never merged. Every commit in the same second.
fn same_second_history() -> Repo {
    let repo = Repo::new();
    let git = |args: &[&str]| git_at_one_second(&repo, args);
    let commit = |file: &str, message: &str| {
        repo.write(file, message);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", message]);
    };
    git(&["branch", "epic"]);
    git(&["checkout", "-q", "-b", "s02"]);
    commit("s02", "s02: one");
    git(&["checkout", "-q", "-b", "s04", "main"]);
    commit("s04", "s04: one");
    git(&["checkout", "-q", "epic"]);
    git(&["merge", "-q", "--no-ff", "s02", "-m", "merge s02"]);
    git(&["checkout", "-q", "s04"]);
    git(&["merge", "-q", "--no-ff", "epic", "-m", "s04: catch up"]);
    git(&["branch", "epic-before-s04", "epic"]);
    commit("s04", "s04: two");
    git(&["checkout", "-q", "epic"]);
    git(&["merge", "-q", "--no-ff", "s04", "-m", "merge s04"]);
    git(&["checkout", "-q", "-b", "other", "main"]);
    commit("other", "other: one");
    git(&["checkout", "-q", "main"]);
    repo
}

#[test]
fn merge_bases_of_commits_made_within_one_second_are_gits() {
    let repo = same_second_history();
    let handle = repo.handle();
    assert!(
        handle.is_ancestor(&repo.path, "s04", "epic").unwrap(),
        "the story merged into the epic branch is on it"
    );
    // Every pair of commits of the history, against git's own answer.
    let commits = git_at_one_second(&repo, &["rev-list", "--all"]);
    let commits: Vec<&str> = commits.lines().collect();
    assert_eq!(commits.len(), 8, "{commits:?}");
    for ancestor in &commits {
        for descendant in &commits {
            let git_says = Command::new("git")
                .current_dir(&repo.path)
                .args(["merge-base", "--is-ancestor", ancestor, descendant])
                .status()
                .expect("run git")
                .success();
            assert_eq!(
                handle
                    .is_ancestor(&repo.path, ancestor, descendant)
                    .unwrap(),
                git_says,
                "is {ancestor} an ancestor of {descendant}?"
            );
        }
    }
    // Three-dot paths use the best merge base: the story's own file only, not the files the
    // catch-up brought in.
    assert_eq!(
        handle
            .changed_paths_vs_base(&repo.path, "epic-before-s04", "s04")
            .unwrap(),
        ["s04"]
    );
    assert_eq!(
        handle
            .changed_paths_vs_base(&repo.path, "epic", "other")
            .unwrap(),
        ["other"]
    );
}
