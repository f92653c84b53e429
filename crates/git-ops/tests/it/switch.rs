//! Switching a slot to a new branch, and bringing a worktree up to a merge: only the files that
//! differ are touched, and git finds the result exactly as its own checkout would leave it.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use epic_git_ops::{CommitId, Git, MergeFavor, MergeOutcome};

use crate::support::{Repo, traced_commands, write_in};

/// A repository whose `main` has files of every kind a switch rewrites, a slot worktree on
/// `story/1` at that commit (with an ignored cache), and a second commit on `main` that adds,
/// changes, deletes and re-moded files: (repository, slot, second commit).
fn slot_behind_main() -> (Repo, PathBuf, CommitId) {
    let repo = Repo::new();
    repo.commit_files(
        &[
            ("keep/untouched.txt", "stays as it is\n"),
            ("change.txt", "before\n"),
            ("gone/only.txt", "its directory goes with it\n"),
            ("run.sh", "echo hi\n"),
            (".gitignore", "cache/\n"),
            (".gitattributes", "*.crlf text eol=crlf\n"),
        ],
        "base",
    );
    let slot = repo.beside("slot");
    repo.handle()
        .add_worktree_new_branch(&slot, "story/1", "main")
        .expect("add the slot");
    write_in(&slot, "cache/built.o", "an ignored build output\n");

    repo.write("change.txt", "after\n");
    std::fs::remove_dir_all(repo.path.join("gone")).expect("remove gone/");
    repo.write("new/deep/file.txt", "new\n");
    repo.write("lines.crlf", "one\ntwo\n");
    std::fs::set_permissions(
        repo.path.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::os::unix::fs::symlink("change.txt", repo.path.join("link")).expect("symlink");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "second"]);
    let second: CommitId = repo.git(&["rev-parse", "HEAD"]).trim().parse().expect("id");
    (repo, slot, second)
}

/// The slot's head is attached to `story/2` at `second` itself (not through another branch),
/// and `story/1`, the branch it left, still names the first commit, no link to another branch:
/// switch after switch, a slot must not leave a chain of branches pointing at each other.
fn assert_heads(repo: &Repo, slot: &Path, second: &CommitId) {
    assert_eq!(
        repo.git_in(slot, &["symbolic-ref", "--no-recurse", "HEAD"])
            .trim(),
        "refs/heads/story/2"
    );
    assert_eq!(
        repo.git_in(slot, &["rev-parse", "refs/heads/story/2"])
            .trim(),
        second.to_hex()
    );
    let left = repo.try_git_in(
        slot,
        &["symbolic-ref", "-q", "--no-recurse", "refs/heads/story/1"],
    );
    assert!(!left.status.success(), "story/1 became a link: {left:?}");
    assert_eq!(
        repo.git_in(slot, &["rev-parse", "refs/heads/story/1"])
            .trim(),
        repo.git(&["rev-parse", "main~1"]).trim()
    );
}

fn inode(path: &Path) -> u64 {
    std::fs::symlink_metadata(path).expect("stat").ino()
}

/// What git says of `dir`: its status, whether anything is staged, and whether the index's
/// cached tree tells the truth (`write-tree` trusts it; a wrong one gives a wrong tree).
fn assert_clean_as_git_sees_it(repo: &Repo, dir: &Path, head: &CommitId) {
    assert_eq!(repo.porcelain(dir), "", "git status in {}", dir.display());
    assert_eq!(
        repo.git_in(dir, &["diff", "--cached", "--name-only", "HEAD"]),
        ""
    );
    let head_tree = repo.git_in(dir, &["rev-parse", &format!("{}^{{tree}}", head.to_hex())]);
    assert_eq!(repo.git_in(dir, &["write-tree"]), head_tree);
}

#[test]
fn a_switch_rewrites_only_what_differs_and_leaves_what_git_would() {
    let (repo, slot, second) = slot_behind_main();
    let untouched = inode(&slot.join("keep/untouched.txt"));
    let trace = repo.beside("git-trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));

    let at = git
        .switch_worktree(&slot, "story/2", Some(&second))
        .expect("switch");

    assert_eq!(at, second);
    // The handle reads the configuration once, at its first command; then git only moves the
    // refs: no checkout, no read of the trees or the index.
    assert_eq!(
        traced_commands(&trace),
        ["git update-ref --no-deref -m 'epic: switch to story/2' --stdin"],
        "a clean slot's files and index are moved in process"
    );
    assert_heads(&repo, &slot, &second);
    assert_eq!(
        repo.git_in(&slot, &["rev-parse", "HEAD"]).trim(),
        second.to_hex()
    );
    assert_clean_as_git_sees_it(&repo, &slot, &second);
    assert_eq!(
        inode(&slot.join("keep/untouched.txt")),
        untouched,
        "an unchanged file is not rewritten"
    );
    let read = |path: &str| std::fs::read(slot.join(path)).expect("read");
    assert_eq!(read("change.txt"), b"after\n");
    assert_eq!(read("new/deep/file.txt"), b"new\n");
    assert_eq!(
        read("lines.crlf"),
        b"one\r\ntwo\r\n",
        "through the attributes' filter"
    );
    assert!(!slot.join("gone").exists(), "an emptied directory goes");
    let mode = std::fs::metadata(slot.join("run.sh")).expect("stat").mode();
    assert_eq!(mode & 0o111, 0o111, "executable now");
    assert_eq!(
        std::fs::read_link(slot.join("link")).expect("a link"),
        Path::new("change.txt")
    );
    assert_eq!(read("cache/built.o"), b"an ignored build output\n");

    // Staging after the switch still writes the right trees (the cached tree is invalidated
    // where it should be and nowhere else).
    write_in(&slot, "new/deep/more.txt", "more\n");
    repo.git_in(&slot, &["add", "new/deep/more.txt"]);
    let staged = repo.git_in(&slot, &["write-tree"]);
    let fresh = repo.beside("fresh-index");
    repo.git_on_index(&slot, &fresh, &["read-tree", "HEAD"]);
    repo.git_on_index(
        &slot,
        &fresh,
        &["update-index", "--add", "new/deep/more.txt"],
    );
    assert_eq!(staged, repo.git_on_index(&slot, &fresh, &["write-tree"]));
    repo.fsck();
}

#[test]
fn a_slot_with_changes_in_the_way_is_switched_by_git_all_the_same() {
    let (repo, slot, second) = slot_behind_main();
    // A tracked file the switch rewrites, changed; an untracked file where a new one goes.
    write_in(&slot, "change.txt", "an edit left behind\n");
    write_in(&slot, "new/deep/file.txt", "in the way\n");
    let git = repo.handle();

    let at = git
        .switch_worktree(&slot, "story/2", Some(&second))
        .expect("switch");

    assert_eq!(at, second);
    assert_clean_as_git_sees_it(&repo, &slot, &second);
    assert_eq!(
        std::fs::read(slot.join("change.txt")).expect("read"),
        b"after\n"
    );
    assert_eq!(
        std::fs::read(slot.join("new/deep/file.txt")).expect("read"),
        b"new\n"
    );
}

#[test]
fn a_disjoint_merge_brings_the_worktree_up_touching_only_the_merged_files() {
    let repo = Repo::new();
    repo.commit_files(&[("keep/untouched.txt", "stays\n")], "base");
    repo.git(&["branch", "epic/e"]);
    let epic = repo.beside("epic");
    let story = repo.beside("story");
    let git = repo.handle();
    git.add_worktree(&epic, "epic/e")
        .expect("add the epic worktree");
    git.add_worktree_new_branch(&story, "story/e/a", "epic/e")
        .expect("add the story");
    repo.commit_file(&story, "a/new.txt", "from the story\n", "story");
    repo.commit_file(&epic, "b/other.txt", "from the epic\n", "epic");
    let untouched = inode(&epic.join("keep/untouched.txt"));
    let trace = repo.beside("git-trace");
    let git = git.with_env("GIT_TRACE", Some(&trace));

    let merged = git
        .merge(&epic, "story/e/a", "merge story", MergeFavor::None)
        .expect("merge");

    let MergeOutcome::Merged(commit) = merged else {
        panic!("expected a merge, got {merged:?}");
    };
    assert_eq!(
        repo.git_in(&epic, &["rev-parse", "HEAD"]).trim(),
        commit.to_hex()
    );
    assert_clean_as_git_sees_it(&repo, &epic, &commit);
    assert_eq!(
        std::fs::read(epic.join("a/new.txt")).expect("read"),
        b"from the story\n"
    );
    assert_eq!(inode(&epic.join("keep/untouched.txt")), untouched);
    let commands = traced_commands(&trace);
    assert!(
        !commands
            .iter()
            .any(|command| command.starts_with("git read-tree") || command.starts_with("git merge")),
        "gix brings the worktree to the merge: {commands:#?}"
    );
    // gix writes the merge commit, and the branch moves in process (see `refs`).
    assert!(commands.is_empty(), "{commands:#?}");
    assert_eq!(
        repo.git_in(&epic, &["log", "-1", "--format=%P|%an <%ae>|%s"])
            .trim(),
        format!(
            "{} {}|Test Person <test@example.com>|merge story",
            repo.git_in(&epic, &["rev-parse", "HEAD^1"]).trim(),
            repo.git_in(&epic, &["rev-parse", "story/e/a"]).trim()
        )
    );
    repo.fsck();
}

/// What a kill inside an in-process switch leaves, step by step: files deleted, files written
/// (the index not), the index written (the branch not moved), the branch moved (the head not
/// attached). The next switch finishes each.
#[test]
fn a_switch_killed_at_any_step_is_finished_by_the_next() {
    type Leave = fn(&Repo, &Path, &CommitId);
    let steps: [(&str, Leave); 4] = [
        ("files deleted", |_, slot, _| {
            std::fs::remove_file(slot.join("gone/only.txt")).expect("rm");
        }),
        ("files written", |_, slot, _| {
            std::fs::remove_file(slot.join("gone/only.txt")).expect("rm");
            write_in(slot, "change.txt", "after\n");
            write_in(slot, "new/deep/file.txt", "new\n");
        }),
        ("index written", |repo, slot, second| {
            let head = repo.git_in(slot, &["rev-parse", "HEAD"]);
            repo.git_in(
                slot,
                &["read-tree", "-m", "-u", head.trim(), &second.to_hex()],
            );
        }),
        ("branch moved", |repo, slot, second| {
            let head = repo.git_in(slot, &["rev-parse", "HEAD"]);
            repo.git_in(
                slot,
                &["read-tree", "-m", "-u", head.trim(), &second.to_hex()],
            );
            repo.git_in(
                slot,
                &["update-ref", "refs/heads/story/2", &second.to_hex()],
            );
        }),
    ];
    for (step, leave) in steps {
        let (repo, slot, second) = slot_behind_main();
        leave(&repo, &slot, &second);

        let at = repo
            .handle()
            .switch_worktree(&slot, "story/2", Some(&second))
            .unwrap_or_else(|error| panic!("{step}: {error}"));

        assert_eq!(at, second, "{step}");
        assert_heads(&repo, &slot, &second);
        assert_clean_as_git_sees_it(&repo, &slot, &second);
        assert!(!slot.join("gone").exists(), "{step}");
    }
}

/// A directory a previous story replaced by a symbolic link to somewhere outside, holding a copy
/// of the tracked files: the switch goes to git, and no file outside is rewritten or deleted
/// through the link.
#[test]
fn a_switch_never_writes_or_deletes_through_a_planted_link() {
    let repo = Repo::new();
    repo.commit_files(
        &[("d/change.txt", "same\n"), ("d/delete.txt", "same\n")],
        "base",
    );
    let slot = repo.beside("slot");
    repo.handle()
        .add_worktree_new_branch(&slot, "story/1", "main")
        .expect("add the slot");
    repo.write("d/change.txt", "changed\n");
    std::fs::remove_file(repo.path.join("d/delete.txt")).expect("rm");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "second"]);
    let second: CommitId = repo.git(&["rev-parse", "HEAD"]).trim().parse().expect("id");
    let outside = repo.beside("outside");
    write_in(&outside, "change.txt", "same\n");
    write_in(&outside, "delete.txt", "same\n");
    std::fs::remove_dir_all(slot.join("d")).expect("rm d");
    std::os::unix::fs::symlink(&outside, slot.join("d")).expect("plant the link");

    repo.handle()
        .switch_worktree(&slot, "story/2", Some(&second))
        .expect("switch");

    assert_eq!(
        std::fs::read(outside.join("change.txt")).expect("outside"),
        b"same\n"
    );
    assert!(
        outside.join("delete.txt").exists(),
        "deleted through the link"
    );
    assert_clean_as_git_sees_it(&repo, &slot, &second);
    assert_heads(&repo, &slot, &second);
}

/// The index a switch wrote is kept in memory for the next read, and only while the file holds
/// exactly what was written: git staging a mode change after it is seen by the next status,
/// and the next switch starts from git's index.
#[test]
fn an_index_git_rewrote_after_a_switch_is_read_as_git_left_it() {
    let (repo, slot, second) = slot_behind_main();
    let git = repo.handle();
    git.switch_worktree(&slot, "story/2", Some(&second))
        .expect("switch");
    assert!(!git.status(&slot, &[]).expect("status").is_dirty());

    repo.git_in(&slot, &["update-index", "--chmod=+x", "change.txt"]);

    assert_eq!(
        git.status(&slot, &[]).expect("status").paths,
        ["change.txt"],
        "the mode git staged"
    );
    // Something staged: the next switch is git's forced checkout, which drops it.
    repo.commit_file(&repo.path, "third.txt", "third\n", "third");
    let third: CommitId = repo.git(&["rev-parse", "HEAD"]).trim().parse().expect("id");
    git.switch_worktree(&slot, "story/3", Some(&third))
        .expect("switch again");
    assert_clean_as_git_sees_it(&repo, &slot, &third);
    assert!(!git.status(&slot, &[]).expect("status").is_dirty());
}
