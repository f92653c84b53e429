//! Discovering a repository, its directories, and what an empty repository answers.

use epic_git_ops::{Git, GixGit, RevError};

use crate::support::Repo;

#[test]
fn discovers_from_a_subdirectory_and_from_a_linked_worktree() {
    let repo = Repo::new();
    repo.write("src/deep/file.txt", "x\n");
    let git = GixGit::discover(repo.path.join("src/deep")).expect("discover");
    let common = repo.path.join(".git").canonicalize().expect("canonical");
    assert_eq!(git.common_dir().canonicalize().expect("canonical"), common);
    let main = git.main_worktree().expect("not bare");
    assert_eq!(
        main.canonicalize().expect("canonical"),
        repo.path.canonicalize().expect("canonical")
    );

    let wt = repo.beside("a");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "story/a",
        wt.to_str().expect("utf-8"),
    ]);
    let from_linked = GixGit::discover(wt.join(".")).expect("discover from a linked worktree");
    assert_eq!(
        from_linked.common_dir().canonicalize().expect("canonical"),
        common
    );
    assert_eq!(
        from_linked
            .main_worktree()
            .expect("main")
            .canonicalize()
            .expect("canonical"),
        repo.path.canonicalize().expect("canonical")
    );
    std::fs::create_dir_all(wt.join("sub")).expect("mkdir");
    let root = git
        .worktree_root(&wt.join("sub"))
        .expect("root of the linked worktree");
    assert_eq!(
        root.canonicalize().expect("canonical"),
        wt.canonicalize().expect("canonical")
    );
    let root = git
        .worktree_root(&repo.path.join("src/deep"))
        .expect("root of the main worktree");
    assert_eq!(
        root.canonicalize().expect("canonical"),
        repo.path.canonicalize().expect("canonical")
    );
}

#[test]
fn a_directory_outside_any_repository_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let error = GixGit::discover(dir.path()).expect_err("no repository");
    assert!(
        error
            .to_string()
            .contains("failed to open a git repository"),
        "{error}"
    );
}

#[test]
fn an_empty_repository_opens_and_says_it_has_no_commits() {
    let repo = Repo::empty();
    let git = repo.handle();
    let error = git.checkpoint(&repo.path).expect_err("no head yet");
    assert!(matches!(error, RevError::Unborn { .. }), "{error:?}");
    assert!(error.to_string().contains("has no commits yet"), "{error}");
    assert!(matches!(
        git.rev_parse(&repo.path, "HEAD"),
        Err(RevError::Unborn { .. })
    ));
    assert!(matches!(
        git.rev_parse(&repo.path, "HEAD~1"),
        Err(RevError::Unborn { .. })
    ));
    assert!(matches!(
        git.rev_parse(&repo.path, "main"),
        Err(RevError::NotFound { .. })
    ));
    assert_eq!(
        git.current_branch(&repo.path).expect("branch"),
        Some("main".into())
    );
    assert!(!git.branch_exists("main").expect("exists"));
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());

    repo.write("first.txt", "1\n");
    assert_eq!(
        git.status(&repo.path, &[]).expect("status").paths,
        ["first.txt"]
    );
    let error = git
        .add_worktree_new_branch(&repo.beside("a"), "story/a", "HEAD")
        .expect_err("nothing to branch from");
    assert!(error.to_string().contains("start point"), "{error}");
    // The first commit works, and then everything has a head.
    let outcome = git.commit_all(&repo.path, "first").expect("root commit");
    assert!(matches!(outcome, epic_git_ops::CommitOutcome::Committed(_)));
    assert_eq!(repo.git(&["rev-list", "--count", "HEAD"]).trim(), "1");
    repo.fsck();
}
