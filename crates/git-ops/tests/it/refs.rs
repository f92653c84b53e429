//! Refs moved in process: what `git update-ref` leaves (the ref, the branch's reflog, the
//! worktree head's reflog), and git left to do it wherever something is unusual.

use std::path::{Path, PathBuf};

use epic_git_ops::{CommitOutcome, Git};

use crate::support::{Repo, traced_commands, write_in};

/// A repository with a linked worktree on branch `story/e/a`.
fn linked() -> (Repo, PathBuf) {
    let repo = Repo::new();
    let story = repo.beside("story");
    repo.handle()
        .add_worktree_new_branch(&story, "story/e/a", "HEAD")
        .expect("worktree");
    (repo, story)
}

/// The last line of the reflog at `path`, split: old, new, identity, time zone, message.
fn last_entry(path: &Path) -> [String; 5] {
    let log = std::fs::read_to_string(path).expect("reflog");
    let line = log.lines().last().expect("a line").to_owned();
    let (head, message) = line.split_once('\t').expect("a message");
    let fields: Vec<&str> = head.split(' ').collect();
    let [old, new, identity @ .., _seconds, zone] = fields.as_slice() else {
        panic!("not a reflog line: {line}");
    };
    [
        (*old).to_owned(),
        (*new).to_owned(),
        identity.join(" "),
        (*zone).to_owned(),
        message.to_owned(),
    ]
}

fn head_of(repo: &Repo, dir: &Path) -> String {
    repo.git_in(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

#[test]
fn a_commit_moves_its_branch_and_both_reflogs_as_git_update_ref_does() {
    let (repo, story) = linked();
    let common = repo.path.join(".git");
    let branch_log = common.join("logs/refs/heads/story/e/a");
    let head_log = common.join("worktrees/story/logs/HEAD");
    let trace = repo.beside("trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));
    let before = head_of(&repo, &story);

    write_in(&story, "ours.txt", "in process\n");
    let CommitOutcome::Committed(ours) = git.commit_all(&story, "ours").expect("commit") else {
        panic!("nothing committed");
    };
    assert!(
        !traced_commands(&trace)
            .iter()
            .any(|command| command.starts_with("git update-ref")),
        "{:#?}",
        traced_commands(&trace)
    );
    assert_eq!(head_of(&repo, &story), ours.to_hex());
    assert_eq!(
        std::fs::read_to_string(common.join("refs/heads/story/e/a")).expect("loose ref"),
        format!("{ours}\n")
    );
    let branch_entry = last_entry(&branch_log);
    assert_eq!(last_entry(&head_log), branch_entry);

    // git's own move, the same way, for comparison.
    write_in(&story, "theirs.txt", "by git\n");
    repo.git_in(&story, &["add", "theirs.txt"]);
    let tree = repo.git_in(&story, &["write-tree"]);
    let theirs = repo.git_in(
        &story,
        &[
            "commit-tree",
            tree.trim(),
            "-p",
            &ours.to_hex(),
            "-m",
            "theirs",
        ],
    );
    repo.git_in(
        &story,
        &[
            "update-ref",
            "-m",
            "commit: theirs",
            "HEAD",
            theirs.trim(),
            &ours.to_hex(),
        ],
    );
    let git_entry = last_entry(&branch_log);
    assert_eq!(last_entry(&head_log), git_entry);

    assert_eq!(branch_entry[..2], [before, ours.to_hex()]);
    assert_eq!(branch_entry[2], git_entry[2], "the same identity");
    assert_eq!(branch_entry[3], git_entry[3], "the same time zone");
    assert_eq!(branch_entry[4], "commit: ours");
    assert_eq!(
        repo.git_in(&story, &["reflog", "show", "--format=%gs", "HEAD"])
            .lines()
            .take(2)
            .collect::<Vec<_>>(),
        ["commit: theirs", "commit: ours"]
    );
    repo.fsck();
}

#[test]
fn a_locked_ref_is_left_to_git_which_refuses_and_the_lock_stays() {
    let (repo, story) = linked();
    let lock = repo.path.join(".git/refs/heads/story/e/a.lock");
    std::fs::write(&lock, "").expect("someone's lock");
    let before = head_of(&repo, &story);
    write_in(&story, "new.txt", "n\n");
    let refused = repo.handle().commit_all(&story, "blocked");
    assert!(refused.is_err(), "{refused:?}");
    assert!(
        format!("{refused:?}").contains(".lock"),
        "git's words name the lock: {refused:?}"
    );
    assert!(lock.exists(), "someone else's lock is never removed");
    assert_eq!(head_of(&repo, &story), before);
}

#[test]
fn with_reflogs_turned_off_git_moves_the_ref() {
    let (repo, story) = linked();
    repo.git(&["config", "core.logAllRefUpdates", "false"]);
    std::fs::remove_file(repo.path.join(".git/logs/refs/heads/story/e/a")).expect("no log");
    let trace = repo.beside("trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));
    write_in(&story, "new.txt", "n\n");
    let CommitOutcome::Committed(commit) = git.commit_all(&story, "new").expect("commit") else {
        panic!("nothing committed");
    };
    assert_eq!(head_of(&repo, &story), commit.to_hex());
    assert!(
        traced_commands(&trace)
            .iter()
            .any(|command| command.starts_with("git update-ref")),
        "{:#?}",
        traced_commands(&trace)
    );
    assert!(!repo.path.join(".git/logs/refs/heads/story/e/a").exists());
}
