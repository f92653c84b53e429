//! Three-dot diffs: a branch's own changes since it left the base, text and paths.

use git_ops::{DiffError, Git};

use crate::support::{Repo, write_in};

#[test]
fn counts_only_the_branchs_own_changes() {
    let repo = Repo::new();
    let git = repo.handle();
    for (path, content) in [
        ("keep.txt", "keep"),
        (
            "old name.rs",
            "fn moved() {}\nfn and_more() {}\nfn lines() {}\n",
        ),
        ("doomed.txt", "d"),
        ("ä/edit.txt", "e"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.git(&["branch", "epic/e"]);

    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "epic/e")
        .expect("add");
    repo.git_in(&wt, &["mv", "old name.rs", "new name.rs"]);
    std::fs::remove_file(wt.join("doomed.txt")).expect("remove");
    write_in(&wt, "ä/edit.txt", "edited");
    write_in(&wt, "src/新.rs", "new");
    git.commit_all(&wt, "story work").expect("commit");

    // The epic moves on after the story left it: not the story's change.
    repo.git(&["checkout", "-q", "epic/e"]);
    repo.commit_file(&repo.path.clone(), "epic-only.txt", "e", "another story");

    let paths = git
        .changed_paths_vs_base(&wt, "epic/e", "HEAD")
        .expect("paths");
    assert_eq!(
        paths,
        [
            "doomed.txt",
            "new name.rs",
            "old name.rs",
            "src/新.rs",
            "ä/edit.txt"
        ]
    );
    let diff = git.diff_vs_base(&wt, "epic/e", "story/e/a").expect("diff");
    assert_eq!(diff.paths, paths);
    assert!(diff.text.starts_with("diff --git"), "{}", diff.text);
    assert!(!diff.text.contains("epic-only"), "{}", diff.text);
    assert!(diff.text.contains("+edited"), "{}", diff.text);
    // The same text as `git diff epic...story`.
    let theirs = repo.git_in(&wt, &["diff", "--no-color", "epic/e...story/e/a"]);
    assert_eq!(diff.text, theirs);
    // The same paths as git's name-only diff without rename detection.
    let mut names: Vec<String> = repo
        .git_in(
            &wt,
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-renames",
                "--name-only",
                "epic/e...HEAD",
            ],
        )
        .lines()
        .map(str::to_owned)
        .collect();
    names.sort();
    assert_eq!(names, paths);
}

#[test]
fn an_untouched_branch_has_no_changes_and_unrelated_histories_are_an_error() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.git(&["branch", "story/e/a"]);
    let diff = git
        .diff_vs_base(&repo.path, "main", "story/e/a")
        .expect("diff");
    assert!(diff.paths.is_empty() && diff.text.is_empty(), "{diff:?}");

    repo.git(&["checkout", "-q", "--orphan", "unrelated"]);
    repo.git(&["rm", "-rq", "--cached", "."]);
    repo.commit_file(&repo.path.clone(), "other.txt", "o", "root two");
    let error = git
        .changed_paths_vs_base(&repo.path, "main", "unrelated")
        .expect_err("no base");
    assert!(matches!(error, DiffError::NoMergeBase { .. }), "{error:?}");
    let error = git
        .changed_paths_vs_base(&repo.path, "main", "nope")
        .expect_err("no rev");
    assert!(matches!(error, DiffError::Rev(_)), "{error:?}");
}
