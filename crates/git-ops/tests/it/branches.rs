//! Branches: exists, create, delete, the current branch; detached heads; revisions.

use epic_git_ops::{BranchError, CommitId, Git};

use crate::support::Repo;

#[test]
fn creates_checks_and_deletes_branches_as_git_sees_them() {
    let repo = Repo::new();
    let git = repo.handle();
    let head = git.checkpoint(&repo.path).expect("head");
    assert_eq!(head.to_string(), repo.git(&["rev-parse", "HEAD"]).trim());

    assert!(!git.branch_exists("epic/e").expect("exists"));
    git.create_branch("epic/e", &head).expect("create");
    assert!(git.branch_exists("epic/e").expect("exists"));
    assert_eq!(
        repo.git(&["rev-parse", "refs/heads/epic/e"]).trim(),
        head.to_string()
    );
    assert!(matches!(
        git.create_branch("epic/e", &head),
        Err(BranchError::AlreadyExists { .. })
    ));

    // A branch git made is seen too.
    repo.git(&["branch", "story/e/a"]);
    assert!(git.branch_exists("story/e/a").expect("exists"));

    git.delete_branch("epic/e").expect("delete");
    assert!(!git.branch_exists("epic/e").expect("exists"));
    assert!(repo.git(&["branch", "--list", "epic/e"]).trim().is_empty());
    // Deleting what is gone is not an error.
    git.delete_branch("epic/e").expect("delete again");
    repo.fsck();
}

#[test]
fn creating_a_branch_touches_no_lock_but_its_own() {
    // Packed refs, as in any repository git has packed, and a `packed-refs.lock` that a killed
    // process left: creating a branch must not need that lock (gix's ref transaction takes it
    // to look the name up in the packed refs, and failed here).
    let repo = Repo::new();
    let git = repo.handle();
    let head = git.checkpoint(&repo.path).expect("head");
    repo.git(&["branch", "packed/one"]);
    repo.git(&["pack-refs", "--all"]);
    let stale = repo.path.join(".git/packed-refs.lock");
    std::fs::write(&stale, "").expect("stale lock");
    git.create_branch("epic/e", &head).expect("create");
    assert_eq!(
        repo.git(&["rev-parse", "refs/heads/epic/e"]).trim(),
        head.to_string()
    );
    // A packed branch of that name exists: refused, as git refuses it.
    assert!(git.create_branch("packed/one", &head).is_err());
    // The reflog says where it came from, as `git branch` says it.
    let reflog = repo.git(&["reflog", "show", "--format=%gs", "refs/heads/epic/e"]);
    assert_eq!(reflog.trim(), format!("branch: Created from {head}"));
    std::fs::remove_file(&stale).expect("remove the lock");
    repo.fsck();
}

#[test]
fn lists_the_branches_under_a_directory_of_names() {
    let repo = Repo::new();
    let git = repo.handle();
    assert!(git.branches_under("story/e").expect("list").is_empty());
    for name in ["story/e/b", "story/e/a/old", "story/e2/a", "epic/e"] {
        repo.git(&["branch", name]);
    }
    // With `story/e/…` there, git refuses a branch `story/e`: what the list is for.
    let refused = repo.try_git_in(&repo.path, &["branch", "story/e"]);
    assert!(!refused.status.success());
    assert_eq!(
        git.branches_under("story/e").expect("list"),
        ["story/e/a/old", "story/e/b"],
        "sorted, short names, and not story/e2/a"
    );
    assert_eq!(
        git.branches_under("story/e/a").expect("list"),
        ["story/e/a/old"]
    );
    assert!(git.branches_under("epic/e").expect("list").is_empty());
}

#[test]
fn deleting_an_unmerged_branch_is_forced() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.git(&["checkout", "-q", "-b", "story/unmerged"]);
    repo.commit_file(&repo.path.clone(), "work.txt", "w\n", "work");
    repo.git(&["checkout", "-q", "main"]);
    git.delete_branch("story/unmerged").expect("forced delete");
    assert!(!git.branch_exists("story/unmerged").expect("exists"));
}

#[test]
fn refuses_bad_names_checked_out_branches_and_missing_commits() {
    let repo = Repo::new();
    let git = repo.handle();
    let head = git.checkpoint(&repo.path).expect("head");
    for bad in [
        "",
        "-x",
        "a..b",
        "has space",
        "HEAD",
        "refs/heads/x",
        "x.lock",
        "a~1",
    ] {
        assert!(
            matches!(
                git.create_branch(bad, &head),
                Err(BranchError::InvalidName { .. })
            ),
            "{bad:?} accepted"
        );
        assert!(git.branch_exists(bad).is_err(), "{bad:?} looked up");
    }
    assert!(matches!(
        git.delete_branch("main"),
        Err(BranchError::CheckedOut { .. })
    ));
    let missing: CommitId = "1234567890123456789012345678901234567890"
        .parse()
        .expect("hex");
    assert!(matches!(
        git.create_branch("x", &missing),
        Err(BranchError::MissingCommit { .. })
    ));
}

#[test]
fn resolves_revisions_and_ancestry() {
    let repo = Repo::new();
    let git = repo.handle();
    let first = git.rev_parse(&repo.path, "HEAD").expect("head");
    repo.commit_file(&repo.path.clone(), "two.txt", "2\n", "second");
    let second = git.rev_parse(&repo.path, "main").expect("main");
    assert_ne!(first, second);
    assert_eq!(git.rev_parse(&repo.path, "HEAD~1").expect("parent"), first);
    assert_eq!(
        git.rev_parse(&repo.path, &first.to_hex()).expect("hex"),
        first
    );
    assert!(git.rev_parse(&repo.path, "no-such-branch").is_err());
    assert!(git.rev_parse(&repo.path, "-x").is_err());

    assert!(
        git.is_ancestor(&repo.path, &first.to_hex(), "HEAD")
            .expect("ancestry")
    );
    assert!(
        git.is_ancestor(&repo.path, "HEAD", "HEAD")
            .expect("same commit")
    );
    assert!(
        !git.is_ancestor(&repo.path, "HEAD", &first.to_hex())
            .expect("ancestry")
    );
    // Two branches that diverged are not ancestors of each other.
    repo.git(&["checkout", "-q", "-b", "side", &first.to_hex()]);
    repo.commit_file(&repo.path.clone(), "side.txt", "s\n", "side");
    assert!(
        !git.is_ancestor(&repo.path, "side", "main")
            .expect("ancestry")
    );
    assert!(
        !git.is_ancestor(&repo.path, "main", "side")
            .expect("ancestry")
    );
    // The same answers as git's.
    let git_says = repo
        .try_git_in(&repo.path, &["merge-base", "--is-ancestor", "side", "main"])
        .status
        .code();
    assert_eq!(git_says, Some(1));
}

#[test]
fn a_detached_head_has_no_branch_but_commits_merges_and_checkpoints() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.commit_file(&repo.path.clone(), "side.txt", "s\n", "side");
    repo.git(&["checkout", "-q", "--detach", "main"]);
    assert_eq!(git.current_branch(&repo.path).expect("branch"), None);
    let before = git.checkpoint(&repo.path).expect("detached head");
    assert_eq!(before.to_string(), repo.git(&["rev-parse", "HEAD"]).trim());

    repo.write("loose.txt", "l\n");
    let outcome = git
        .commit_all(&repo.path, "on a detached head")
        .expect("commit");
    let epic_git_ops::CommitOutcome::Committed(id) = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), id.to_string());
    let merged = git
        .merge(
            &repo.path,
            "side",
            "merge side",
            epic_git_ops::MergeFavor::None,
        )
        .expect("merge");
    assert!(
        matches!(merged, epic_git_ops::MergeOutcome::Merged(_)),
        "{merged:?}"
    );
    assert_eq!(git.current_branch(&repo.path).expect("branch"), None);
    git.rollback(&repo.path, &before).expect("rollback");
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), before.to_string());
    repo.fsck();
}
