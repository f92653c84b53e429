//! Committing in a linked worktree: the changed paths staged and the tree written in process,
//! with the same commit, index and tree git's `add -A` + `commit` would leave.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use epic_git_ops::{CommitId, CommitOutcome, Git};

use crate::support::{Repo, traced_commands, write_in};

/// A repository with files of several kinds on `main`, and a linked worktree on `story/1` at it.
fn story_worktree() -> (Repo, PathBuf) {
    let repo = Repo::new();
    repo.commit_files(
        &[
            ("keep/a.txt", "a\n"),
            ("edit.txt", "before\n"),
            ("gone/only.txt", "the directory goes\n"),
            ("tool.sh", "echo hi\n"),
            (".gitattributes", "*.crlf text eol=crlf\n"),
        ],
        "base",
    );
    let story = repo.beside("story");
    repo.handle()
        .add_worktree_new_branch(&story, "story/1", "main")
        .expect("add");
    (repo, story)
}

/// What git's own staging of the same worktree state gives: the tree `git add -A` and
/// `git write-tree` write into a fresh copy of the index.
fn tree_git_would_write(repo: &Repo, dir: &Path, base: &str) -> String {
    let index = repo.beside("expected-index");
    repo.git_on_index(dir, &index, &["read-tree", base]);
    repo.git_on_index(dir, &index, &["add", "-A"]);
    repo.git_on_index(dir, &index, &["write-tree"])
}

/// Commits everything in `story` with a traced handle: the commit, the tree git's own staging
/// of the same state writes, and the git commands the commit ran.
fn commit_traced(repo: &Repo, story: &Path) -> (CommitId, String, Vec<String>) {
    let base = repo.git_in(story, &["rev-parse", "HEAD"]).trim().to_owned();
    let expected = tree_git_would_write(repo, story, &base);
    let trace = repo.beside("git-trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));
    let outcome = git.commit_all(story, "story: the work").expect("commit");
    let CommitOutcome::Committed(commit) = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    (commit, expected, traced_commands(&trace))
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

    let (commit, expected, ran) = commit_traced(&repo, &story);

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

    let (commit, expected, ran) = commit_traced(&repo, &story);

    assert!(
        ran.iter().any(|line| line.starts_with("git write-tree")),
        "git's plumbing staged it: {ran:#?}"
    );
    let tree = repo.git_in(
        &story,
        &["rev-parse", &format!("{}^{{tree}}", commit.to_hex())],
    );
    assert_eq!(tree, expected);
    assert_eq!(repo.porcelain(&story), "");
}

#[test]
fn a_shared_repository_is_staged_by_git_which_writes_its_permissions() {
    let (repo, story) = story_worktree();
    repo.git(&["config", "core.sharedRepository", "group"]);
    write_in(&story, "edit.txt", "after\n");

    let (commit, expected, ran) = commit_traced(&repo, &story);

    assert!(
        ran.iter().any(|line| line.starts_with("git write-tree")),
        "git's plumbing staged it: {ran:#?}"
    );
    let tree = repo.git_in(
        &story,
        &["rev-parse", &format!("{}^{{tree}}", commit.to_hex())],
    );
    assert_eq!(tree, expected);
}
