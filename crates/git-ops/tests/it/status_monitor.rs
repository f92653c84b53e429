//! Repeated statuses of one worktree, the way the executor runs them: after the first, the quick
//! pass trusts what the file-system monitor (`src/monitor.rs`) says has not changed. Each test
//! moves the worktree in a way a watch can lose track of, then checks every status against
//! `git status`. Their edits keep each file's size and modification time (to the nanosecond), so
//! that only the monitor (or the change time, which no program sets) can tell.

use std::path::Path;

use epic_git_ops::{Git, GixGit};

use crate::status_scan::{assert_like_git, committed};
use crate::support::Repo;

/// Rewrites `rel` with its content upper-cased: the same size, and the same time.
fn same_size_edit(repo: &Repo, rel: &str) {
    let path = repo.path.join(rel);
    let old = std::fs::read_to_string(&path).expect("read");
    write_keeping_time(&path, &path, &old.to_uppercase());
}

/// Writes `content` to `path` with the modification time `like` has now.
fn write_keeping_time(like: &Path, path: &Path, content: &str) {
    let time = std::fs::metadata(like)
        .and_then(|meta| meta.modified())
        .expect("a file's time");
    std::fs::write(path, content).expect("write");
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(time))
        .expect("set the file's time");
}

/// Edits each of `rels` size-for-size in the main worktree; the next status must name exactly
/// them, as `git status` does.
fn edits_are_seen(repo: &Repo, git: &GixGit, rels: &[&str]) {
    for rel in rels {
        same_size_edit(repo, rel);
    }
    assert_eq!(paths(git, &repo.path), rels, "after editing {rels:?}");
    assert_like_git(repo, git, &format!("editing {rels:?}"));
}

fn paths(git: &GixGit, dir: &Path) -> Vec<String> {
    git.status(dir, &[]).expect("status").paths
}

/// A repository from [`committed`] and a handle whose monitor has seen one status.
fn watched() -> (Repo, GixGit) {
    let repo = committed();
    let git = repo.handle();
    assert!(
        paths(&git, &repo.path).is_empty(),
        "a fresh commit is clean"
    );
    (repo, git)
}

#[test]
fn a_directory_moved_away_and_back_is_read_again() {
    let (repo, git) = watched();
    std::fs::rename(repo.path.join("src"), repo.path.join("elsewhere")).expect("rename");
    assert_like_git(&repo, &git, "src moved away");
    std::fs::rename(repo.path.join("elsewhere"), repo.path.join("src")).expect("rename");
    assert_like_git(&repo, &git, "src moved back");
    edits_are_seen(&repo, &git, &["src/deep/er/mod.rs", "src/lib.rs"]);
}

#[test]
fn two_directories_that_swap_places_are_both_read_again() {
    let (repo, git) = watched();
    let at = |rel: &str| repo.path.join(rel);
    std::fs::rename(at("src"), at("swap")).expect("rename");
    std::fs::rename(at("docs"), at("src")).expect("rename");
    std::fs::rename(at("swap"), at("docs")).expect("rename");
    assert_like_git(&repo, &git, "src and docs swapped");
    std::fs::rename(at("docs"), at("swap")).expect("rename");
    std::fs::rename(at("src"), at("docs")).expect("rename");
    std::fs::rename(at("swap"), at("src")).expect("rename");
    assert!(paths(&git, &repo.path).is_empty(), "swapped back: clean");
    edits_are_seen(&repo, &git, &["docs/guide.md"]);
}

#[test]
fn a_directory_removed_and_checked_out_again_is_read_again() {
    let (repo, git) = watched();
    std::fs::remove_dir_all(repo.path.join("src")).expect("remove");
    assert_like_git(&repo, &git, "src removed");
    repo.git(&["checkout", "--", "src"]);
    assert_like_git(&repo, &git, "src checked out again");
    edits_are_seen(&repo, &git, &["src/main.rs"]);
}

#[test]
fn an_atomic_save_is_seen() {
    let (repo, git) = watched();
    for rel in ["src/lib.rs", "ünï/日本.txt", "a.txt"] {
        let old = std::fs::read_to_string(repo.path.join(rel)).expect("read");
        let beside = repo.path.join(format!("{rel}.tmp"));
        write_keeping_time(&repo.path.join(rel), &beside, &old.to_uppercase());
        std::fs::rename(&beside, repo.path.join(rel)).expect("rename over");
        assert_like_git(&repo, &git, &format!("{rel} saved atomically"));
    }
    assert_eq!(
        paths(&git, &repo.path),
        ["a.txt", "src/lib.rs", "ünï/日本.txt"]
    );
}

#[test]
fn a_branch_switch_that_brings_new_directories_is_followed() {
    let (repo, git) = watched();
    repo.git(&["checkout", "-q", "-b", "other"]);
    repo.write("fresh/inner/new.rs", "new\n");
    repo.write("src/deep/added.rs", "added\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "new directories"]);
    repo.git(&["checkout", "-q", "main"]);
    assert!(paths(&git, &repo.path).is_empty(), "back on main: clean");
    repo.git(&["checkout", "-q", "other"]);
    assert!(paths(&git, &repo.path).is_empty(), "on other: clean");
    edits_are_seen(&repo, &git, &["fresh/inner/new.rs", "src/deep/added.rs"]);
}

#[test]
fn commits_resets_and_merges_between_statuses_are_followed() {
    let (repo, git) = watched();
    let start = repo.git(&["rev-parse", "HEAD"]);
    // An untracked file becomes tracked, then changes size-for-size.
    repo.write("notes/todo.txt", "todo\n");
    assert_eq!(paths(&git, &repo.path), ["notes/todo.txt"]);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "notes"]);
    assert!(paths(&git, &repo.path).is_empty(), "committed: clean");
    edits_are_seen(&repo, &git, &["notes/todo.txt"]);
    // A hard reset takes the directory away and the edit with it.
    repo.git(&["reset", "-q", "--hard", start.trim()]);
    assert_like_git(&repo, &git, "a hard reset");
    // A merge of a side branch writes files the monitor has never seen.
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("src/side.rs", "side\n");
    repo.write("docs/guide.md", "the guide, rewritten\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "side"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "main moved\n");
    repo.git(&["commit", "-q", "-am", "main"]);
    assert!(
        paths(&git, &repo.path).is_empty(),
        "before the merge: clean"
    );
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    assert!(paths(&git, &repo.path).is_empty(), "after the merge: clean");
    edits_are_seen(&repo, &git, &["docs/guide.md", "src/side.rs"]);
}

#[test]
fn a_linked_worktree_has_a_monitor_of_its_own() {
    let (repo, git) = watched();
    let linked = repo.beside("linked");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "story",
        linked.to_str().expect("utf-8 path"),
    ]);
    assert!(paths(&git, &linked).is_empty(), "a new worktree is clean");
    same_size_edit(&repo, "src/lib.rs");
    let guide = linked.join("docs/guide.md");
    write_keeping_time(&guide, &guide, "DOCS/GUIDE.MD\n");
    assert_eq!(paths(&git, &repo.path), ["src/lib.rs"]);
    assert_eq!(paths(&git, &linked), ["docs/guide.md"]);
    // Removed by hand and added again at the same place: nothing kept from before survives.
    std::fs::remove_dir_all(&linked).expect("remove");
    repo.git(&["worktree", "prune"]);
    repo.git(&[
        "worktree",
        "add",
        "-q",
        linked.to_str().expect("utf-8 path"),
        "story",
    ]);
    assert!(paths(&git, &linked).is_empty(), "added again: clean");
    same_size_edit(&repo, "src/main.rs");
    assert_eq!(paths(&git, &repo.path), ["src/lib.rs", "src/main.rs"]);
}

/// A status answers from the last one's paths while nothing it depends on changed (no event,
/// the same index, head and ignore files). These are the moves that must still be seen.
#[test]
fn a_kept_answer_gives_way_to_every_change_it_depends_on() {
    let (repo, git) = watched();
    // A second status with nothing changed: the kept answer.
    assert!(paths(&git, &repo.path).is_empty());
    // Inside an untracked directory, which the monitor does not watch: never kept.
    repo.write("fresh/one.txt", "1\n");
    assert_like_git(&repo, &git, "an untracked directory");
    repo.write("fresh/two.txt", "2\n");
    assert_like_git(&repo, &git, "a second file in it");
    repo.write("fresh/deeper/three.txt", "3\n");
    assert_like_git(&repo, &git, "a file deeper in it");
    std::fs::remove_dir_all(repo.path.join("fresh")).expect("rm");
    assert_like_git(&repo, &git, "the directory gone");
    // The ignore files outside the worktree: `info/exclude` hides, then shows, a file.
    repo.write("notes.todo", "a note\n");
    assert_like_git(&repo, &git, "an untracked file");
    let exclude = repo.path.join(".git/info/exclude");
    std::fs::create_dir_all(exclude.parent().expect("info")).expect("mkdir");
    std::fs::write(&exclude, "*.todo\n").expect("exclude");
    assert_like_git(&repo, &git, "excluded by info/exclude");
    std::fs::write(&exclude, "").expect("exclude");
    assert_like_git(&repo, &git, "no longer excluded");
    // The index: a path staged by hand, then unstaged.
    repo.git(&["add", "notes.todo"]);
    assert_like_git(&repo, &git, "staged");
    repo.git(&["reset", "-q", "notes.todo"]);
    assert_like_git(&repo, &git, "unstaged");
    // The head: moved with the worktree left alone.
    std::fs::remove_file(repo.path.join("notes.todo")).expect("rm");
    assert_like_git(&repo, &git, "clean again");
    repo.git(&["commit", "-q", "--allow-empty", "-m", "empty"]);
    repo.git(&["reset", "-q", "--soft", "HEAD~1"]);
    assert_like_git(&repo, &git, "the head moved back");
    edits_are_seen(&repo, &git, &["src/lib.rs"]);
}

/// Inside an ignored directory nothing counts: the answer is kept across writes there, and a
/// tracked file's edit beside it is seen all the same.
#[test]
fn writes_inside_an_ignored_directory_leave_the_answer_and_an_edit_is_still_seen() {
    let (repo, git) = watched();
    repo.write(".git/info/exclude", "build/\n");
    repo.write("build/out.o", "object\n");
    assert_like_git(&repo, &git, "an ignored directory");
    repo.write("build/more/out2.o", "object\n");
    assert_like_git(&repo, &git, "more in it");
    edits_are_seen(&repo, &git, &["src/lib.rs"]);
}
