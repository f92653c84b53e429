//! Checkpoint and rollback: a rolled-back epic worktree is clean and at its checkpoint.

use epic_git_ops::{Git, MergeFavor, MergeOutcome};

use crate::support::{Repo, write_in};

#[test]
fn rolls_a_merge_back_and_removes_what_it_left() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.write(".gitignore", "target/\n");
    git.commit_all(&repo.path, "ignore target").expect("commit");
    repo.git(&["branch", "story/e/a"]);
    let story = repo.beside("a");
    git.add_worktree(&story, "story/e/a").expect("add");
    write_in(&story, "feature/new file.rs", "new\n");
    write_in(&story, "README.md", "story readme\n");
    git.commit_all(&story, "story").expect("commit");

    let checkpoint = git.checkpoint(&repo.path).expect("checkpoint");
    let merged = git
        .merge(&repo.path, "story/e/a", "merge", MergeFavor::None)
        .expect("merge");
    assert!(matches!(merged, MergeOutcome::Merged(_)));
    // The gates ran and left things behind.
    repo.write("gate-output/report.txt", "red");
    repo.write("target/cache.bin", "ignored build output");
    repo.write("README.md", "edited by a gate\n");

    git.rollback(&repo.path, &checkpoint).expect("rollback");
    assert_eq!(git.checkpoint(&repo.path).expect("head"), checkpoint);
    assert_eq!(
        repo.git(&["rev-parse", "HEAD"]).trim(),
        checkpoint.to_string()
    );
    assert!(!repo.path.join("feature").exists());
    assert!(!repo.path.join("gate-output").exists());
    assert!(
        repo.path.join("target/cache.bin").exists(),
        "ignored files stay"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path.join("README.md")).expect("read"),
        "hello\n"
    );
    assert!(repo.porcelain(&repo.path).is_empty());
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());
    // The story's branch is untouched.
    assert!(
        git.is_ancestor(&repo.path, "HEAD", "story/e/a")
            .expect("ancestry")
    );
    repo.fsck();
}
