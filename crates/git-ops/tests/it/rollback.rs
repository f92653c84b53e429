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

/// The patch of a worktree against a checkpoint holds its commits, edits, deletions and new
/// files (binary ones too), not its ignored files; taking it changes nothing, and it applies to
/// the checkpoint once the worktree is rolled back there.
#[test]
fn a_worktree_patch_holds_every_change_and_applies_to_the_checkpoint() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.write(".gitignore", "target/\n");
    repo.write("gone.txt", "to delete\n");
    git.commit_all(&repo.path, "ignore target").expect("commit");
    repo.git(&["branch", "story/e/a"]);
    let story = repo.beside("a");
    git.add_worktree(&story, "story/e/a").expect("add");
    let checkpoint = git.checkpoint(&story).expect("checkpoint");
    assert!(
        git.worktree_patch(&story, &checkpoint)
            .expect("patch")
            .is_empty(),
        "nothing changed, nothing to keep"
    );

    // An agent's own commit, an edit, a deletion, a new text file, a new binary file, a
    // staged file, and ignored build output.
    repo.commit_file(&story, "committed.txt", "by the agent\n", "agent commit");
    write_in(&story, "README.md", "broken\n");
    std::fs::remove_file(story.join("gone.txt")).expect("delete");
    write_in(&story, "src/new file.rs", "new\n");
    std::fs::write(story.join("blob.bin"), [0_u8, 159, 146, 150, 0, 255]).expect("binary");
    write_in(&story, "staged.txt", "staged\n");
    repo.git_in(&story, &["add", "staged.txt"]);
    write_in(&story, "target/cache.bin", "ignored");
    let before = repo.porcelain(&story);

    let patch = git.worktree_patch(&story, &checkpoint).expect("patch");
    assert_eq!(
        repo.porcelain(&story),
        before,
        "the worktree and index stay as they were"
    );
    let text = String::from_utf8_lossy(&patch);
    for path in [
        "committed.txt",
        "README.md",
        "gone.txt",
        "src/new file.rs",
        "blob.bin",
        "staged.txt",
    ] {
        assert!(text.contains(path), "{path} is in the patch:\n{text}");
    }
    assert!(text.contains("GIT binary patch"), "{text}");
    assert!(!text.contains("target/cache.bin"), "{text}");

    git.rollback(&story, &checkpoint).expect("rollback");
    assert!(repo.porcelain(&story).is_empty());
    let file = repo.beside("rejected.patch");
    std::fs::write(&file, &patch).expect("write the patch");
    repo.git_in(&story, &["apply", "--index", file.to_str().expect("utf-8")]);
    assert_eq!(
        std::fs::read_to_string(story.join("README.md")).expect("read"),
        "broken\n"
    );
    assert_eq!(
        std::fs::read(story.join("blob.bin")).expect("read"),
        [0_u8, 159, 146, 150, 0, 255]
    );
    assert!(!story.join("gone.txt").exists());
    assert!(story.join("committed.txt").exists());
    assert!(
        story.join("target/cache.bin").exists(),
        "ignored files stay"
    );
    repo.fsck();
}

/// A process killed while it took a worktree's state leaves its temporary index's lock behind
/// in the system's temporary directory; process ids come round again (on this machine after
/// 32,768), so a later process may have the id of the dead one. Its own temporary indexes must
/// not trip over what the dead one left.
#[test]
fn a_temporary_index_a_dead_process_left_does_not_stop_the_next_one() {
    let repo = Repo::new();
    let git = repo.handle();
    let checkpoint = git.checkpoint(&repo.path).expect("checkpoint");
    write_in(&repo.path, "new.txt", "n\n");
    // What a dead process with this one's id would have left, under the names that id gave.
    let temp = std::env::temp_dir();
    let left: Vec<std::path::PathBuf> = (0..32)
        .flat_map(|n| {
            let name = format!("epic-patch-index-{}-{n}", std::process::id());
            [temp.join(&name), temp.join(format!("{name}.lock"))]
        })
        .collect();
    for path in &left {
        std::fs::write(path, "left by a dead process").expect("plant");
    }
    let state = git.worktree_state(&repo.path);
    let patch = git.worktree_patch(&repo.path, &checkpoint);
    for path in &left {
        std::fs::remove_file(path).ok();
    }
    state.expect("the worktree's state");
    let patch = patch.expect("the worktree's patch");
    assert!(String::from_utf8_lossy(&patch).contains("new.txt"));
}
