//! Committing in a linked worktree: the changed paths staged and the tree written in process,
//! with the same commit, index and tree git's `add -A` + `commit` would leave.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use epic_git_ops::{CommitOutcome, Git};

use crate::support::{Repo, write_in};

/// A repository with files of several kinds on `main`, and a linked worktree on `story/1` at it.
fn story_worktree() -> (Repo, PathBuf) {
    let repo = Repo::new();
    for (path, content) in [
        ("keep/a.txt", "a\n"),
        ("edit.txt", "before\n"),
        ("gone/only.txt", "the directory goes\n"),
        ("tool.sh", "echo hi\n"),
        (".gitattributes", "*.crlf text eol=crlf\n"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    let story = repo.beside("story");
    repo.handle()
        .add_worktree_new_branch(&story, "story/1", "main")
        .expect("add");
    (repo, story)
}

/// The commands git ran, from a `GIT_TRACE` file, but the configuration read.
fn commands(trace: &Path) -> Vec<String> {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains("trace: built-in: git ") && !line.contains("git config"))
        .map(|line| {
            line.split("built-in: ")
                .nth(1)
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// What git's own staging of the same worktree state gives: the tree `git add -A` and
/// `git write-tree` write into a fresh copy of the index.
fn tree_git_would_write(repo: &Repo, dir: &Path, base: &str) -> String {
    let index = repo.beside("expected-index");
    let run = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .current_dir(dir)
            .env("GIT_INDEX_FILE", &index)
            .args(args)
            .output()
            .expect("git");
        assert!(output.status.success(), "git {args:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    run(&["read-tree", base]);
    run(&["add", "-A"]);
    run(&["write-tree"])
}

#[test]
fn a_commit_in_a_linked_worktree_stages_in_process_what_git_would() {
    let (repo, story) = story_worktree();
    write_in(&story, "edit.txt", "after\n");
    write_in(&story, "new/deep/file.txt", "new\n");
    write_in(&story, "lines.crlf", "one\r\ntwo\r\n");
    std::fs::remove_dir_all(story.join("gone")).expect("rm");
    std::fs::set_permissions(
        story.join("tool.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    let base = repo
        .git_in(&story, &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let expected = tree_git_would_write(&repo, &story, &base);
    let trace = repo.beside("git-trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));

    let outcome = git.commit_all(&story, "story: the work").expect("commit");

    let CommitOutcome::Committed(commit) = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    let ran = commands(&trace);
    assert!(
        !ran.iter()
            .any(|line| line.starts_with("git update-index") || line.starts_with("git write-tree")),
        "staged in process: {ran:#?}"
    );
    let tree = repo.git_in(
        &story,
        &["rev-parse", &format!("{}^{{tree}}", commit.to_hex())],
    );
    assert_eq!(tree, expected, "the tree git's own staging writes");
    assert_eq!(
        repo.git_in(
            &story,
            &["show", &format!("{}:lines.crlf", commit.to_hex())]
        ),
        "one\ntwo\n",
        "through the attributes' filter"
    );
    assert_eq!(
        repo.porcelain(&story),
        "",
        "git finds nothing left to commit"
    );
    assert_eq!(
        repo.git_in(&story, &["diff", "--cached", "--name-only", "HEAD"]),
        ""
    );
    // The cached tree tells the truth: a later staging writes the right tree.
    write_in(&story, "new/deep/more.txt", "more\n");
    let expected = tree_git_would_write(&repo, &story, &commit.to_hex());
    repo.git_in(&story, &["add", "-A"]);
    assert_eq!(repo.git_in(&story, &["write-tree"]), expected);
    repo.fsck();
}

#[test]
fn a_symbolic_link_or_a_staged_change_is_left_to_git() {
    let (repo, story) = story_worktree();
    std::os::unix::fs::symlink("edit.txt", story.join("link")).expect("symlink");
    write_in(&story, "staged.txt", "staged by hand\n");
    repo.git_in(&story, &["add", "staged.txt"]);
    write_in(&story, "edit.txt", "after\n");
    let base = repo
        .git_in(&story, &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let expected = tree_git_would_write(&repo, &story, &base);
    let trace = repo.beside("git-trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));

    let outcome = git.commit_all(&story, "story: the work").expect("commit");

    let CommitOutcome::Committed(commit) = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    assert!(
        commands(&trace)
            .iter()
            .any(|line| line.starts_with("git write-tree")),
        "git's plumbing staged it"
    );
    let tree = repo.git_in(
        &story,
        &["rev-parse", &format!("{}^{{tree}}", commit.to_hex())],
    );
    assert_eq!(tree, expected);
    assert_eq!(repo.porcelain(&story), "");
}
