//! Restoring paths from another revision: checkout where it has them, delete where it has none.

use epic_git_ops::{Git, RestoreError};

use crate::support::{Repo, write_in};

#[test]
fn restores_and_deletes_paths_leaving_the_changes_uncommitted() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.write("owned/a.rs", "a\n");
    repo.write("not owned/b c.rs", "b\n");
    repo.write("ü/d.rs", "d\n");
    git.commit_all(&repo.path, "base").expect("commit");
    repo.git(&["branch", "epic/e"]);
    let story = repo.beside("a");
    git.add_worktree_new_branch(&story, "story/e/a", "epic/e")
        .expect("add");
    write_in(&story, "owned/a.rs", "story\n");
    write_in(&story, "not owned/b c.rs", "strayed\n");
    write_in(&story, "ü/d.rs", "strayed too\n");
    write_in(&story, "stray/new.rs", "new\n");
    write_in(&story, "[glob]*.rs", "literal name\n");
    git.commit_all(&story, "story").expect("commit");
    write_in(&story, "uncommitted stray.txt", "u\n");

    let restored = git
        .restore_paths(
            &story,
            "epic/e",
            &[
                "not owned/b c.rs",
                "ü/d.rs",
                "stray/new.rs",
                "[glob]*.rs",
                "uncommitted stray.txt",
                "never/existed",
            ],
        )
        .expect("restore");
    assert_eq!(restored.checked_out, ["not owned/b c.rs", "ü/d.rs"]);
    assert_eq!(
        restored.deleted,
        [
            "[glob]*.rs",
            "never/existed",
            "stray/new.rs",
            "uncommitted stray.txt"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(story.join("not owned/b c.rs")).expect("read"),
        "b\n"
    );
    assert_eq!(
        std::fs::read_to_string(story.join("ü/d.rs")).expect("read"),
        "d\n"
    );
    assert!(!story.join("stray").exists());
    assert!(!story.join("[glob]*.rs").exists());
    assert!(!story.join("uncommitted stray.txt").exists());
    assert_eq!(
        std::fs::read_to_string(story.join("owned/a.rs")).expect("read"),
        "story\n"
    );
    // Uncommitted: the next commit carries the restore, and then the story touches only what it owns.
    assert!(git.status(&story, &[]).expect("status").is_dirty());
    git.commit_all(&story, "restore strays").expect("commit");
    assert_eq!(
        git.changed_paths_vs_base(&story, "epic/e", "HEAD")
            .expect("paths"),
        ["owned/a.rs"]
    );
    repo.fsck();
}

#[test]
fn refuses_paths_outside_the_worktree() {
    let repo = Repo::new();
    let git = repo.handle();
    for bad in ["", "/etc/passwd", "../outside", "a/../../b", ".git/config"] {
        let error = git
            .restore_paths(&repo.path, "HEAD", &[bad])
            .expect_err("unsafe");
        assert!(
            matches!(error, RestoreError::UnsafePath { .. }),
            "{bad:?}: {error:?}"
        );
    }
    assert!(matches!(
        git.restore_paths(&repo.path, "nope", &["README.md"]),
        Err(RestoreError::Rev(_))
    ));
}

#[test]
fn put_back_undoes_files_commits_and_checkouts_keeping_uncommitted_work() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.write("src/a.rs", "a\n");
    repo.write("src/gone.rs", "g\n");
    git.commit_all(&repo.path, "base").expect("commit");
    repo.git(&["branch", "epic/e"]);
    let story = repo.beside("a");
    git.add_worktree_new_branch(&story, "story/e/a", "epic/e")
        .expect("add");
    // The coder's uncommitted work: an edit, a new file, a deletion.
    write_in(&story, "src/a.rs", "coder\n");
    write_in(&story, "src/new.rs", "new\n");
    std::fs::remove_file(story.join("src/gone.rs")).expect("rm");
    let before = git.worktree_state(&story).expect("state");
    assert_eq!(git.put_back(&story, &before).expect("nothing to do"), None);
    let porcelain = repo.porcelain(&story);

    // A "read-only" turn edits, adds, commits, and leaves another branch checked out.
    write_in(&story, "src/a.rs", "judge\n");
    write_in(&story, "judge-notes.md", "n\n");
    repo.git_in(&story, &["add", "-A"]);
    repo.git_in(&story, &["commit", "-qm", "judge"]);
    repo.git_in(&story, &["checkout", "-qb", "elsewhere"]);
    write_in(&story, "later.txt", "l\n");

    let changed = git.put_back(&story, &before).expect("put back");
    assert_eq!(
        changed,
        Some(vec![
            "judge-notes.md".to_owned(),
            "later.txt".to_owned(),
            "src/a.rs".to_owned()
        ])
    );
    assert_eq!(git.worktree_state(&story).expect("state"), before);
    assert_eq!(repo.porcelain(&story), porcelain);
    assert_eq!(
        std::fs::read_to_string(story.join("src/a.rs")).expect("read"),
        "coder\n"
    );
    assert!(!story.join("judge-notes.md").exists());
    assert!(!story.join("src/gone.rs").exists());
    assert_eq!(
        repo.git_in(&story, &["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        "story/e/a"
    );
    assert_eq!(
        repo.git(&["rev-parse", "story/e/a"]).trim(),
        before.head.to_hex()
    );
}
