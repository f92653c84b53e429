//! Committing everything, "nothing to commit", and the fallback identity.

use epic_git_ops::{CommitOutcome, FALLBACK_EMAIL, FALLBACK_NAME, Git, GixGit};

use crate::support::{Repo, isolate_handle};

#[test]
fn commits_additions_edits_deletions_and_untracked_files() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.write("gone.txt", "g");
    repo.write("edit.txt", "e");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "setup"]);

    std::fs::remove_file(repo.path.join("gone.txt")).expect("remove");
    repo.write("edit.txt", "edited");
    repo.write("new dir/ünï code.txt", "n");
    let outcome = git
        .commit_all(&repo.path, "everything\n\nwith a body")
        .expect("commit");
    let CommitOutcome::Committed(id) = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    assert_eq!(repo.git(&["rev-parse", "HEAD"]).trim(), id.to_string());
    assert!(repo.porcelain(&repo.path).is_empty());
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());
    let files = repo.git(&[
        "-c",
        "core.quotePath=false",
        "show",
        "--name-status",
        "--format=%s%n%b",
        "HEAD",
    ]);
    assert!(files.starts_with("everything\nwith a body"), "{files}");
    assert!(files.contains("D\tgone.txt"), "{files}");
    assert!(files.contains("M\tedit.txt"), "{files}");
    assert!(files.contains("A\tnew dir/ünï code.txt"), "{files}");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae>"]).trim(),
        "Test Person <test@example.com>"
    );
    repo.fsck();
}

#[test]
fn nothing_to_commit_is_its_own_outcome() {
    let repo = Repo::new();
    let git = repo.handle();
    let before = git.checkpoint(&repo.path).expect("head");
    assert_eq!(
        git.commit_all(&repo.path, "nothing").expect("no error"),
        CommitOutcome::NothingToCommit
    );
    assert_eq!(git.checkpoint(&repo.path).expect("head"), before);
    // Ignored files alone are nothing too.
    repo.write(".gitignore", "*.log\n");
    git.commit_all(&repo.path, "ignore logs").expect("commit");
    repo.write("x.log", "log");
    assert_eq!(
        git.commit_all(&repo.path, "nothing").expect("no error"),
        CommitOutcome::NothingToCommit
    );
}

#[test]
fn commits_in_a_linked_worktree_land_on_its_branch() {
    let repo = Repo::new();
    let git = repo.handle();
    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "main")
        .expect("add");
    crate::support::write_in(&wt, "a.txt", "a");
    let CommitOutcome::Committed(id) = git.commit_all(&wt, "story a").expect("commit") else {
        panic!("expected a commit");
    };
    assert_eq!(repo.git(&["rev-parse", "story/e/a"]).trim(), id.to_string());
    assert_ne!(repo.git(&["rev-parse", "main"]).trim(), id.to_string());
    assert!(repo.porcelain(&repo.path).is_empty());
}

/// epic's commands write a linked worktree's index without its trailing checksum (git's
/// `index.skipHash`: no hash on every write and read of a large index), and leave the main
/// checkout's as git writes it; git and epic's own status read both.
#[test]
fn a_linked_worktrees_index_is_written_without_its_checksum_and_the_main_ones_with() {
    let repo = Repo::new();
    let git = repo.handle();
    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "main")
        .expect("add");
    crate::support::write_in(&wt, "a.txt", "a");
    git.commit_all(&wt, "story a").expect("commit");
    repo.write("b.txt", "b");
    git.commit_all(&repo.path, "main b").expect("commit");
    let trailer = |index: std::path::PathBuf| {
        let bytes = std::fs::read(&index).expect("index");
        bytes[bytes.len() - 20..].to_vec()
    };
    let linked = repo.path.join(".git/worktrees/a/index");
    assert_eq!(trailer(linked), vec![0; 20], "the linked worktree's index");
    assert_ne!(
        trailer(repo.path.join(".git/index")),
        vec![0; 20],
        "the main index"
    );
    assert!(repo.porcelain(&wt).is_empty());
    assert!(!git.status(&wt, &[]).expect("status").is_dirty());
    let fsck = repo.try_git_in(&repo.path, &["fsck", "--no-progress"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

#[test]
fn without_any_identity_commits_as_epic() {
    // No identity in the repository, an empty HOME, no system configuration, and none of the
    // identity variables a CI machine may export (the support module clears them).
    let repo = Repo::bare_identity();
    let git = repo.handle();
    let probe = repo.try_git_in(&repo.path, &["config", "user.name"]);
    assert!(
        !probe.status.success(),
        "the test repository must have no identity"
    );

    repo.write("a.txt", "a");
    let outcome = git
        .commit_all(&repo.path, "first")
        .expect("commit without identity");
    assert!(matches!(outcome, CommitOutcome::Committed(_)));
    let who = repo.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>"]);
    let expected = format!("{FALLBACK_NAME} <{FALLBACK_EMAIL}>");
    assert_eq!(who.trim(), format!("{expected}|{expected}"));

    // Merges commit too.
    repo.git(&["branch", "side"]);
    let side = repo.beside("side");
    git.add_worktree(&side, "side").expect("add");
    crate::support::write_in(&side, "b.txt", "b");
    git.commit_all(&side, "side").expect("commit");
    crate::support::write_in(&repo.path, "c.txt", "c");
    git.commit_all(&repo.path, "main").expect("commit");
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
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an"]).trim(),
        FALLBACK_NAME
    );
    repo.fsck();
}

#[test]
fn a_missing_identity_is_read_once_per_worktree_and_handle() {
    let repo = Repo::bare_identity();
    let git = repo.handle();
    repo.write("a.txt", "a");
    git.commit_all(&repo.path, "first").expect("commit");
    // An identity configured during the run: this handle keeps what it found, a new one (the
    // next run) sees it.
    repo.git(&["config", "user.name", "Later Person"]);
    repo.git(&["config", "user.email", "later@example.com"]);
    repo.write("b.txt", "b");
    git.commit_all(&repo.path, "second").expect("commit");
    let author = |repo: &Repo| repo.git(&["log", "-1", "--format=%an <%ae>"]);
    assert_eq!(
        author(&repo).trim(),
        format!("{FALLBACK_NAME} <{FALLBACK_EMAIL}>")
    );
    repo.write("c.txt", "c");
    repo.handle()
        .commit_all(&repo.path, "third")
        .expect("commit");
    assert_eq!(author(&repo).trim(), "Later Person <later@example.com>");
}

#[test]
fn an_identity_from_the_environment_beats_the_fallback() {
    let repo = Repo::bare_identity();
    let git = isolate_handle(GixGit::discover(&repo.path).expect("discover"), repo.home())
        .with_env("GIT_AUTHOR_NAME", Some("Env Author"))
        .with_env("GIT_AUTHOR_EMAIL", Some("author@example.com"));
    repo.write("a.txt", "a");
    git.commit_all(&repo.path, "first").expect("commit");
    let who = repo.git(&["log", "-1", "--format=%an <%ae>|%cn <%ce>"]);
    assert_eq!(
        who.trim(),
        format!("Env Author <author@example.com>|{FALLBACK_NAME} <{FALLBACK_EMAIL}>")
    );
}

#[test]
fn the_commit_is_the_one_git_commit_would_make() {
    let message = "  \n\nsubject line  \n\n\n\tbody, indented \n# not a comment to strip\n\n";
    let ours = Repo::new();
    let theirs = Repo::new();
    for repo in [&ours, &theirs] {
        repo.write("src/lib.rs", "pub fn f() {}\n");
        repo.write("staged then edited.txt", "first\n");
        repo.git(&["add", "--", "staged then edited.txt"]);
        repo.write("staged then edited.txt", "second\n");
    }
    let git = ours.handle();
    let CommitOutcome::Committed(id) = git.commit_all(&ours.path, message).expect("commit") else {
        panic!("expected a commit");
    };
    theirs.git(&["add", "-A"]);
    theirs.git(&["commit", "-q", "--allow-empty-message", "-m", message]);
    // The same tree and message (ids differ only by the commit time).
    for what in ["%T", "%B", "%an <%ae>"] {
        assert_eq!(
            ours.git(&["log", "-1", &format!("--format={what}")]),
            theirs.git(&["log", "-1", &format!("--format={what}")]),
            "{what}"
        );
    }
    assert_eq!(ours.git(&["rev-parse", "HEAD"]).trim(), id.to_string());
    assert_eq!(
        ours.git(&["reflog", "-1", "--format=%gs"]).trim(),
        "commit: subject line"
    );
    assert!(ours.porcelain(&ours.path).is_empty());
    ours.fsck();
}

#[test]
fn a_commit_right_after_a_checkout_takes_a_same_size_edit() {
    let repo = Repo::new();
    let git = repo.handle();
    for i in 0..50 {
        repo.write(&format!("d/f{i}.txt"), "original\n");
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "files"]);
    let story = repo.beside("story");
    git.add_worktree_new_branch(&story, "story/e/s", "main")
        .expect("add");
    // In the second of the checkout: every file racy, the edit invisible to stat data alone.
    std::fs::write(story.join("d/f7.txt"), "ORIGINAL\n").expect("edit");
    let CommitOutcome::Committed(_) = git.commit_all(&story, "edit").expect("commit") else {
        panic!("the edit was not seen");
    };
    assert_eq!(
        repo.git_in(&story, &["show", "--name-only", "--format=", "HEAD"])
            .trim(),
        "d/f7.txt"
    );
    assert_eq!(
        git.commit_all(&story, "again").expect("no error"),
        CommitOutcome::NothingToCommit
    );
}

fn epoch_now() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    i64::try_from(now.as_secs()).expect("seconds")
}

/// The commit `git commit-tree` makes of the same tree, parent and message at `date` (its
/// `<epoch> <zone>` as a commit header writes it), in `repo`.
fn commit_tree_at(repo: &Repo, tree: &str, parent: &str, message: &str, date: &str) -> String {
    let file = repo.beside("message");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
    std::fs::write(&file, message).expect("message");
    let mut command = std::process::Command::new("git");
    crate::support::isolate(&mut command, repo.home());
    let output = command
        .current_dir(&repo.path)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .args(["commit-tree", tree, "-p", parent, "-F"])
        .arg(&file)
        .output()
        .expect("run git");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn a_commit_object_is_written_in_process_byte_for_byte_as_git_commit_tree_writes_it() {
    let repo = Repo::new();
    let parent = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    repo.write("src/new.rs", "fn main() {}\n");
    let trace = repo.home().join("git-trace");
    let git = repo.handle().with_env("GIT_TRACE", Some(&trace));
    let before = epoch_now();
    let CommitOutcome::Committed(id) = git
        .commit_all(&repo.path, "subject\n\nbody\n")
        .expect("commit")
    else {
        panic!("expected a commit");
    };
    let after = epoch_now();

    let ran = crate::support::traced_commands(&trace);
    assert!(
        !ran.iter().any(|line| line.starts_with("git commit-tree")),
        "written in process: {ran:#?}"
    );
    let object = repo.git(&["cat-file", "commit", &id.to_hex()]);
    let committer = object
        .lines()
        .find_map(|line| line.strip_prefix("committer Test Person <test@example.com> "))
        .expect("committer line")
        .to_owned();
    let epoch: i64 = committer
        .split(' ')
        .next()
        .and_then(|epoch| epoch.parse().ok())
        .expect("epoch");
    assert!((before..=after).contains(&epoch), "{object}");
    // git, given the same moment, writes the very same object.
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]).trim().to_owned();
    assert_eq!(
        commit_tree_at(&repo, &tree, &parent, "subject\n\nbody\n", &committer),
        id.to_hex(),
        "{object}"
    );
    repo.fsck();
}

#[test]
fn a_name_git_would_trim_or_a_signing_configuration_leave_the_commit_to_git() {
    for (key, value) in [("user.name", " Spaced Name;"), ("commit.gpgSign", "true")] {
        let repo = Repo::new();
        repo.git(&["config", key, value]);
        // A signing program that signs nothing: git then fails the commit, which shows it ran.
        repo.git(&["config", "gpg.program", "false"]);
        repo.write("a.txt", "a\n");
        let trace = repo.home().join("git-trace");
        let git = repo.handle().with_env("GIT_TRACE", Some(&trace));
        let outcome = git.commit_all(&repo.path, "by git");
        let ran = crate::support::traced_commands(&trace);
        assert!(
            ran.iter().any(|line| line.starts_with("git commit-tree")),
            "{key}: {ran:#?}"
        );
        if key == "user.name" {
            outcome.expect("commit");
            assert_eq!(
                repo.git(&["log", "-1", "--format=%an|%cn"]).trim(),
                "Spaced Name|Spaced Name",
                "git's own clean-up of the name"
            );
        } else {
            assert!(outcome.is_err(), "{outcome:?}");
        }
    }
}
