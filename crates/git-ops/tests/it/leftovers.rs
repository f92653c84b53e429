//! What killed git processes leave: stale lock files, a worktree directory without `.git`.

use epic_git_ops::{Git, clear_stale_locks, clear_stale_ref_locks, remove_leftover_dir};

use crate::support::{Repo, write_in};

#[test]
fn stale_locks_of_a_linked_worktree_and_its_branch_are_removed() {
    let repo = Repo::new();
    let git = repo.handle();
    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "main")
        .expect("add");
    let admin = std::path::PathBuf::from(
        repo.git_in(&wt, &["rev-parse", "--absolute-git-dir"])
            .trim(),
    );
    let common = git.common_dir().to_path_buf();
    for name in ["index.lock", "HEAD.lock", "AUTO_MERGE.lock"] {
        std::fs::write(admin.join(name), "").unwrap();
    }
    // A directory named like a lock is no lock file; other files stay.
    std::fs::create_dir_all(admin.join("odd.lock")).unwrap();
    let branch_lock = common.join("refs/heads/story/e/a.lock");
    std::fs::write(&branch_lock, "").unwrap();

    let removed = clear_stale_locks(&common, &wt, "story/e/a");
    assert_eq!(
        removed,
        [
            admin.join("AUTO_MERGE.lock"),
            admin.join("HEAD.lock"),
            admin.join("index.lock"),
            branch_lock.clone(),
        ]
    );
    assert!(!branch_lock.exists() && !admin.join("index.lock").exists());
    assert!(admin.join("odd.lock").is_dir() && admin.join("HEAD").is_file());
    // git works there again.
    write_in(&wt, "a.txt", "a\n");
    repo.git_in(&wt, &["add", "a.txt"]);
    repo.fsck();
    assert!(
        clear_stale_locks(&common, &wt, "story/e/a").is_empty(),
        "nothing left"
    );
}

#[test]
fn stale_locks_of_the_main_worktree_and_hostile_branches() {
    let repo = Repo::new();
    let git = repo.handle();
    let common = git.common_dir().to_path_buf();
    std::fs::write(common.join("index.lock"), "").unwrap();
    // `..` or an empty component names no lock file: nothing outside refs/heads is touched.
    let outside = common.join("refs/x.lock");
    std::fs::write(&outside, "").unwrap();
    let removed = clear_stale_locks(&common, &repo.path, "../x");
    assert_eq!(removed, [common.join("index.lock")]);
    assert!(outside.exists());
    assert!(clear_stale_locks(&common, &repo.path, "a//b").is_empty());
    assert!(clear_stale_locks(&common, &repo.beside("missing"), "").is_empty());
}

#[test]
fn a_stale_lock_of_another_ref_is_removed_and_only_of_a_plain_name() {
    let repo = Repo::new();
    let git = repo.handle();
    let common = git.common_dir().to_path_buf();
    let notes = common.join("refs/notes/epic.lock");
    std::fs::create_dir_all(notes.parent().unwrap()).unwrap();
    std::fs::write(&notes, "").unwrap();
    let outside = common.join("x.lock");
    std::fs::write(&outside, "").unwrap();
    // Names outside `refs/` or with odd components name no lock file.
    assert!(clear_stale_ref_locks(&common, &["x", "refs/../x", "refs//x", "refs/./x"]).is_empty());
    assert!(outside.exists());
    assert_eq!(
        clear_stale_ref_locks(&common, &["refs/notes/epic"]),
        std::slice::from_ref(&notes)
    );
    assert!(!notes.exists());
    // The ref can be moved again.
    repo.git(&[
        "notes",
        "--ref",
        "refs/notes/epic",
        "add",
        "-m",
        "ok",
        "HEAD",
    ]);
    assert!(clear_stale_ref_locks(&common, &["refs/notes/epic"]).is_empty());
}

#[test]
fn a_leftover_directory_goes_and_then_an_add_succeeds() {
    let repo = Repo::new();
    let git = repo.handle();
    let half = repo.beside("half");
    std::fs::create_dir_all(half.join("src")).unwrap();
    std::fs::write(half.join("src/lib.rs"), "// partial\n").unwrap();
    assert!(remove_leftover_dir(&half).unwrap());
    assert!(!half.exists());
    assert!(!remove_leftover_dir(&half).unwrap(), "nothing there");
    // A file is no directory: left alone.
    let file = repo.beside("file");
    std::fs::write(&file, "x").unwrap();
    assert!(!remove_leftover_dir(&file).unwrap());
    assert!(file.is_file());

    git.add_worktree_new_branch(&half, "story/e/h", "main")
        .expect("add where the leftover was");
    assert!(half.join("README.md").is_file());
    repo.fsck();
}
