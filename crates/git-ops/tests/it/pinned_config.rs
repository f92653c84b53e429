//! The configuration a handle pins at its first git command: settings planted afterwards (by an
//! agent, in the repository's `.git/config` or `info/attributes`) do not run in its git or its
//! gix reads; settings there at the start keep working; changes are reported; replace refs are
//! ignored.

use std::path::{Path, PathBuf};

use epic_git_ops::{CommitOutcome, Git, GixGit, MergeFavor, MergeOutcome};

use crate::support::{Repo, write_in};

/// A directory beside the repository where planted programs leave their marks.
fn marks(repo: &Repo) -> PathBuf {
    let dir = repo.beside("marks");
    std::fs::create_dir_all(&dir).expect("marks dir");
    dir
}

/// The marks left, by name, sorted.
fn left(marks: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(marks)
        .expect("read marks")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// An executable shell script at `path` that leaves the mark `name`, then runs `then`.
fn script(path: &Path, marks: &Path, name: &str, then: &str) -> String {
    let body = format!("#!/bin/sh\ntouch '{}/{name}'\n{then}\n", marks.display());
    epic_test_support::executable(path, &body);
    path.display().to_string()
}

/// What an agent plants during its turn (sandbox off): programs in every place git takes one,
/// a filter and a merge driver named through `.git/info/attributes` that rewrite content, and
/// another identity.
fn plant(repo: &Repo, marks: &Path) {
    let bin = repo.beside("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let make = |name: &str, then: &str| script(&bin.join(name), marks, name, then);
    let fsmonitor = make("fsmonitor", "exit 1");
    let gpg = make("gpg", "exit 1");
    let clean = make("clean", "sed s/good/EVIL/");
    let smudge = make("smudge", "sed s/good/EVIL/");
    let process = make("process", "exit 1");
    let merge = make("merge", "echo EVIL > \"$1\"");
    let diff = make("diff", "exit 0");
    let textconv = make("textconv", "cat \"$1\"");
    let hooks = repo.beside("hooks");
    std::fs::create_dir_all(&hooks).expect("hooks");
    for hook in [
        "pre-commit",
        "post-commit",
        "post-merge",
        "post-checkout",
        "reference-transaction",
    ] {
        make(hook, "exit 0");
        std::fs::copy(bin.join(hook), hooks.join(hook)).expect("hook");
    }
    // Ignore rules and attributes of the agent's choosing: its files hidden from the status.
    let excludes = repo.beside("excludes");
    std::fs::write(&excludes, "*.new\n").expect("excludes");
    let attributes = repo.beside("attributes");
    std::fs::write(&attributes, "*.new filter=evil\n").expect("attributes");
    for (key, value) in [
        ("core.excludesFile", excludes.display().to_string().as_str()),
        (
            "core.attributesFile",
            attributes.display().to_string().as_str(),
        ),
        ("core.fsmonitor", fsmonitor.as_str()),
        ("gpg.program", gpg.as_str()),
        ("commit.gpgSign", "true"),
        ("filter.evil.clean", clean.as_str()),
        ("filter.evil.smudge", smudge.as_str()),
        ("filter.evil.process", process.as_str()),
        ("filter.evil.required", "true"),
        ("merge.evil.driver", &format!("{merge} %A")),
        ("diff.external", diff.as_str()),
        ("diff.evil.command", diff.as_str()),
        ("diff.evil.textconv", textconv.as_str()),
        ("core.hooksPath", &hooks.display().to_string()),
        ("user.name", "Mallory"),
        ("user.email", "mallory@example.com"),
        ("author.name", "Mallory"),
    ] {
        repo.git(&["config", key, value]);
    }
    write_in(
        &repo.path.join(".git/info"),
        "attributes",
        "* filter=evil merge=evil diff=evil\n",
    );
}

/// A repository whose `main` has `shared.txt` and `story.txt`, and a story worktree on
/// `story` that edits `story.txt`; the handle has run its first command (so it has pinned).
fn repo_with_story() -> (Repo, GixGit, PathBuf) {
    let repo = Repo::new();
    repo.write("shared.txt", "good\none\ntwo\nthree\nfour\nfive\n");
    repo.write("story.txt", "good\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    let git = repo.handle();
    let story = repo.beside("story");
    git.add_worktree_new_branch(&story, "story", "main")
        .expect("add story");
    (repo, git, story)
}

#[test]
fn settings_planted_after_the_pin_do_not_run_in_epics_git() {
    let (repo, git, story) = repo_with_story();
    let marks = marks(&repo);
    plant(&repo, &marks);

    // A story's commit: no fsmonitor, gpg, hook or filter runs, the start identity commits,
    // and a file the planted ignore rules name is committed all the same.
    write_in(&story, "story.txt", "good\nstory\n");
    write_in(&story, "extra.new", "good\n");
    let outcome = git.commit_all(&story, "story").expect("commit");
    assert!(
        matches!(outcome, CommitOutcome::Committed(_)),
        "{outcome:?}"
    );
    assert_eq!(
        repo.git_in(&story, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%G?"])
            .trim(),
        "Test Person <test@example.com>|Test Person <test@example.com>|N"
    );
    // The two sides edit `shared.txt` apart: git's text merge, not the planted driver.
    write_in(
        &story,
        "shared.txt",
        "good\none\ntwo\nthree\nfour\nfive\nstory\n",
    );
    git.commit_all(&story, "story shared").expect("commit");
    write_in(
        &repo.path,
        "shared.txt",
        "good\nmain\none\ntwo\nthree\nfour\nfive\n",
    );
    git.commit_all(&repo.path, "main shared").expect("commit");
    let merged = git
        .merge(&repo.path, "story", "merge story", MergeFavor::None)
        .expect("merge");
    assert!(matches!(merged, MergeOutcome::Merged(_)), "{merged:?}");
    let diff = git.diff_vs_base(&repo.path, "story", "main").expect("diff");
    assert!(diff.text.contains("+main"), "{}", diff.text);
    // A fresh worktree of the merged branch, a status there and in main, a rollback, a restore.
    let fresh = repo.beside("fresh");
    git.add_worktree_new_branch(&fresh, "fresh", "main")
        .expect("add fresh");
    assert!(!git.status(&fresh, &[]).expect("status").is_dirty());
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());
    let checkpoint = git.checkpoint(&repo.path).expect("checkpoint");
    write_in(&repo.path, "story.txt", "good\nchanged\n");
    git.rollback(&repo.path, &checkpoint).expect("rollback");
    git.restore_paths(&fresh, "HEAD~1", &["shared.txt"])
        .expect("restore");

    assert_eq!(left(&marks), Vec::<String>::new(), "planted programs ran");
    // The committed files and the checked-out ones are the bytes the stories wrote.
    let on_main = |path: &str| repo.git(&["cat-file", "blob", &format!("main:{path}")]);
    assert_eq!(on_main("story.txt"), "good\nstory\n");
    assert_eq!(on_main("extra.new"), "good\n");
    assert_eq!(
        on_main("shared.txt"),
        "good\nmain\none\ntwo\nthree\nfour\nfive\nstory\n"
    );
    assert_eq!(
        std::fs::read_to_string(fresh.join("story.txt")).expect("read"),
        "good\nstory\n"
    );
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an|%cn", "main"]).trim(),
        "Test Person|Test Person"
    );
}

#[test]
fn a_filter_planted_through_info_attributes_does_not_rewrite_a_committed_file() {
    // The sibling's file is committed on `main`; a filter planted after the pin would rewrite
    // it on checkout (smudge) and epic's next commit would take the rewritten bytes.
    let (repo, git, _story) = repo_with_story();
    let marks = marks(&repo);
    plant(&repo, &marks);
    let sibling = repo.beside("sibling");
    git.add_worktree_new_branch(&sibling, "sibling", "main")
        .expect("add sibling");
    write_in(&sibling, "own.txt", "own\n");
    git.commit_all(&sibling, "sibling").expect("commit");
    assert_eq!(
        repo.git(&["cat-file", "blob", "sibling:shared.txt"]),
        "good\none\ntwo\nthree\nfour\nfive\n"
    );
    assert_eq!(
        std::fs::read_to_string(sibling.join("shared.txt")).expect("read"),
        "good\none\ntwo\nthree\nfour\nfive\n"
    );
    assert_eq!(left(&marks), Vec::<String>::new(), "planted programs ran");
}

#[test]
fn settings_present_at_the_start_keep_working() {
    let repo = Repo::new();
    let marks = marks(&repo);
    let bin = repo.beside("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let clean = script(&bin.join("clean"), &marks, "clean", "cat");
    let smudge = script(&bin.join("smudge"), &marks, "smudge", "cat");
    repo.git(&["config", "filter.cat.clean", &clean]);
    repo.git(&["config", "filter.cat.smudge", &smudge]);
    repo.git(&["config", "commit.gpgSign", "false"]);
    repo.write(".gitattributes", "*.txt filter=cat\n");
    repo.write("a.txt", "a\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "filtered"]);
    std::fs::remove_file(marks.join("clean")).expect("the start filter ran for git add");
    let git = repo.handle();
    let story = repo.beside("story");
    git.add_worktree_new_branch(&story, "story", "main")
        .expect("add");
    // Changed during the run: the start values still count.
    let evil = script(&bin.join("evil"), &marks, "evil", "sed s/a/EVIL/");
    repo.git(&["config", "filter.cat.clean", &evil]);
    repo.git(&["config", "user.name", "Mallory"]);
    write_in(&story, "b.txt", "b\n");
    git.commit_all(&story, "b").expect("commit");
    assert_eq!(left(&marks), ["clean", "smudge"]);
    assert_eq!(repo.git(&["cat-file", "blob", "story:b.txt"]), "b\n");
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an", "story"]).trim(),
        "Test Person"
    );
}

#[test]
fn config_changes_name_the_keys_changed_since_the_pin() {
    let repo = Repo::new();
    let git = repo.handle();
    assert_eq!(git.config_changes().expect("read"), Vec::<String>::new());
    repo.git(&["config", "core.fsmonitor", "/tmp/x"]);
    repo.git(&["config", "user.name", "Mallory"]);
    repo.git(&["config", "filter.evil.clean", "x"]);
    assert_eq!(
        git.config_changes().expect("read"),
        ["core.fsmonitor", "filter.evil.clean", "user.name"]
    );
    // A new handle (the next run) pins what it finds.
    assert_eq!(
        repo.handle().config_changes().expect("read"),
        Vec::<String>::new()
    );
}

#[test]
fn a_replaced_commit_changes_nothing_epic_reads_or_merges() {
    let repo = Repo::new();
    repo.git(&["branch", "story"]);
    let story = repo.beside("story");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        &story.display().to_string(),
        "story",
    ]);
    repo.commit_file(&story, "story.txt", "good\n", "story");
    // A hostile commit on the same parent, put in the story head's place with `git replace`.
    repo.git(&["checkout", "-q", "-b", "hostile", "main"]);
    repo.write("story.txt", "EVIL\n");
    repo.write("payload.sh", "rm -rf /\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "hostile"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["replace", "story", "hostile"]);
    assert_eq!(repo.git(&["cat-file", "blob", "story:story.txt"]), "EVIL\n");

    let git = repo.handle();
    assert_eq!(
        git.changed_paths_vs_base(&repo.path, "main", "story")
            .expect("paths"),
        ["story.txt"]
    );
    write_in(&repo.path, "main.txt", "main\n");
    git.commit_all(&repo.path, "main").expect("commit");
    let merged = git
        .merge(&repo.path, "story", "merge story", MergeFavor::None)
        .expect("merge");
    assert!(matches!(merged, MergeOutcome::Merged(_)), "{merged:?}");
    assert_eq!(
        std::fs::read_to_string(repo.path.join("story.txt")).expect("read"),
        "good\n"
    );
    assert!(!repo.path.join("payload.sh").exists());
    let tree = repo.git(&["--no-replace-objects", "ls-tree", "--name-only", "main"]);
    assert!(!tree.contains("payload.sh"), "{tree}");
}

#[test]
fn a_filter_there_at_the_start_still_filters_in_gix_reads() {
    // A reversible filter (stored upper case, checked out lower case): a status that did not
    // run it would find every file of a fresh checkout changed.
    let repo = Repo::new();
    repo.git(&["config", "filter.up.clean", "tr a-z A-Z"]);
    repo.git(&["config", "filter.up.smudge", "tr A-Z a-z"]);
    repo.write(".gitattributes", "*.txt filter=up\n");
    repo.write("a.txt", "hello\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "filtered"]);
    assert_eq!(repo.git(&["cat-file", "blob", "HEAD:a.txt"]), "HELLO\n");
    let git = repo.handle();
    let story = repo.beside("story");
    git.add_worktree_new_branch(&story, "story", "main")
        .expect("add");
    assert_eq!(
        std::fs::read_to_string(story.join("a.txt")).expect("read"),
        "hello\n"
    );
    assert!(!git.status(&story, &[]).expect("status").is_dirty());
    write_in(&story, "a.txt", "hello\nworld\n");
    git.commit_all(&story, "more").expect("commit");
    assert_eq!(
        repo.git(&["cat-file", "blob", "story:a.txt"]),
        "HELLO\nWORLD\n"
    );
    assert!(!git.status(&story, &[]).expect("status").is_dirty());
}

#[test]
fn a_driver_planted_through_an_included_file_does_not_run() {
    let (repo, git, story) = repo_with_story();
    let marks = marks(&repo);
    let bin = repo.beside("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let clean = script(&bin.join("clean"), &marks, "clean", "sed s/good/EVIL/");
    let included = repo.beside("included.gitconfig");
    std::fs::write(
        &included,
        format!("[filter \"hidden\"]\n\tclean = {clean}\n\trequired = true\n"),
    )
    .expect("included");
    repo.git(&[
        "config",
        "includeIf.gitdir:/.path",
        &included.display().to_string(),
    ]);
    write_in(
        &repo.path.join(".git/info"),
        "attributes",
        "* filter=hidden\n",
    );
    write_in(&story, "story.txt", "good\nstory\n");
    git.commit_all(&story, "story").expect("commit");
    assert_eq!(
        repo.git(&["cat-file", "blob", "story:story.txt"]),
        "good\nstory\n"
    );
    assert_eq!(
        left(&marks),
        Vec::<String>::new(),
        "the included driver ran"
    );
    assert_eq!(
        git.config_changes().expect("read"),
        [
            "filter.hidden.clean",
            "filter.hidden.required",
            "includeif.gitdir:/.path"
        ]
    );
}
