//! Merges: clean ones make a merge commit; conflicts leave everything as it was.

use std::path::Path;

use epic_git_ops::{
    AdvanceError, CommitId, CommitOutcome, Git, MergeError, MergeFavor, MergeOutcome,
};

use crate::support::{Repo, write_in};

/// Every file of a worktree (but `.git`) with its content, to compare before and after.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.file_name().is_some_and(|name| name == ".git") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("under root")
                    .display()
                    .to_string();
                out.push((rel, std::fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A repository with an `epic/e` branch and a story worktree cut from it.
fn epic_and_story() -> (Repo, std::path::PathBuf) {
    let repo = Repo::new();
    for (path, content) in [
        ("shared.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"),
        (
            "rename me.rs",
            "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\n",
        ),
        ("delete me.txt", "bye\n"),
        ("both edit.txt", "base\n"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.git(&["checkout", "-q", "-b", "epic/e"]);
    let story = repo.beside("story");
    repo.handle()
        .add_worktree_new_branch(&story, "story/e/a", "epic/e")
        .expect("add");
    (repo, story)
}

#[test]
fn a_clean_merge_makes_a_merge_commit_even_when_it_could_fast_forward() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    write_in(&story, "story.txt", "s\n");
    git.commit_all(&story, "story").expect("commit");
    let before = git.checkpoint(&repo.path).expect("head");
    let outcome = git
        .merge(&repo.path, "story/e/a", "merge story a", MergeFavor::None)
        .expect("merge");
    let MergeOutcome::Merged(id) = outcome else {
        panic!("expected a merge, got {outcome:?}");
    };
    let parents = repo.git(&["log", "-1", "--format=%P%n%s", &id.to_hex()]);
    let story_head = repo.git(&["rev-parse", "story/e/a"]);
    assert_eq!(
        parents,
        format!("{before} {}\nmerge story a\n", story_head.trim())
    );
    assert!(repo.path.join("story.txt").is_file());
    assert!(repo.porcelain(&repo.path).is_empty());
    assert_eq!(
        git.current_branch(&repo.path).expect("branch"),
        Some("epic/e".into())
    );
    // Merging again: nothing to do.
    assert_eq!(
        git.merge(&repo.path, "story/e/a", "again", MergeFavor::None)
            .expect("merge"),
        MergeOutcome::UpToDate
    );
    repo.fsck();
}

#[test]
fn merges_renames_deletions_and_edits_from_both_sides() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    // The story renames, deletes and edits the top of a shared file.
    std::fs::create_dir_all(story.join("src")).expect("mkdir");
    repo.git_in(&story, &["mv", "rename me.rs", "src/renamed ü.rs"]);
    repo.git_in(&story, &["rm", "-q", "delete me.txt"]);
    write_in(
        &story,
        "shared.txt",
        "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n",
    );
    git.commit_all(&story, "story").expect("commit");
    // The epic edits the renamed file and the bottom of the shared file meanwhile.
    repo.write(
        "rename me.rs",
        "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\n",
    );
    repo.write("shared.txt", "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n");
    git.commit_all(&repo.path, "epic").expect("commit");

    let outcome = git
        .merge(&repo.path, "story/e/a", "merge", MergeFavor::None)
        .expect("merge");
    assert!(matches!(outcome, MergeOutcome::Merged(_)), "{outcome:?}");
    assert!(!repo.path.join("rename me.rs").exists());
    assert!(!repo.path.join("delete me.txt").exists());
    let renamed = std::fs::read_to_string(repo.path.join("src/renamed ü.rs")).expect("renamed");
    assert!(
        renamed.contains("fn e()"),
        "the epic's edit follows the rename: {renamed}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path.join("shared.txt")).expect("shared"),
        "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n"
    );
    assert!(repo.porcelain(&repo.path).is_empty());
    repo.fsck();
}

#[test]
fn a_conflict_names_the_paths_and_leaves_the_worktree_exactly_as_it_was() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    write_in(&story, "both edit.txt", "story\n");
    repo.git_in(&story, &["rm", "-q", "delete me.txt"]);
    git.commit_all(&story, "story").expect("commit");
    repo.write("both edit.txt", "epic\n");
    repo.write("delete me.txt", "epic edits what the story deleted\n");
    git.commit_all(&repo.path, "epic").expect("commit");
    // Local state the merge must not disturb.
    repo.write("untracked.txt", "mine");
    repo.write("shared.txt", "local edit\n");

    let before_head = git.checkpoint(&repo.path).expect("head");
    let before_files = snapshot(&repo.path);
    let before_status = repo.porcelain(&repo.path);
    let before_index = std::fs::read(repo.path.join(".git/index")).expect("index");

    let outcome = git
        .merge(&repo.path, "story/e/a", "merge", MergeFavor::None)
        .expect("merge");
    assert_eq!(
        outcome,
        MergeOutcome::Conflict {
            paths: vec!["both edit.txt".into(), "delete me.txt".into()]
        }
    );
    assert_eq!(git.checkpoint(&repo.path).expect("head"), before_head);
    assert_eq!(snapshot(&repo.path), before_files);
    assert_eq!(repo.porcelain(&repo.path), before_status);
    assert_eq!(
        std::fs::read(repo.path.join(".git/index")).expect("index"),
        before_index
    );
    assert!(!repo.path.join(".git/MERGE_HEAD").exists());
    repo.fsck();
}

#[test]
fn preferring_the_incoming_side_resolves_conflicting_hunks_only() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    // Catch-up: the epic is merged into the story, the epic's side winning.
    repo.write("both edit.txt", "epic\n");
    git.commit_all(&repo.path, "epic").expect("commit");
    write_in(&story, "both edit.txt", "story\n");
    write_in(&story, "story only.txt", "s\n");
    git.commit_all(&story, "story").expect("commit");

    let outcome = git
        .merge(&story, "epic/e", "catch up", MergeFavor::Incoming)
        .expect("merge");
    assert!(matches!(outcome, MergeOutcome::Merged(_)), "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(story.join("both edit.txt")).expect("read"),
        "epic\n"
    );
    assert!(story.join("story only.txt").is_file());
    assert!(repo.porcelain(&story).is_empty());

    // A file deleted on one side and edited on the other is still a conflict.
    repo.git(&["rm", "-q", "shared.txt"]);
    git.commit_all(&repo.path, "epic deletes").expect("commit");
    write_in(&story, "shared.txt", "story edits\n");
    git.commit_all(&story, "story edits").expect("commit");
    let before = git.checkpoint(&story).expect("head");
    let outcome = git
        .merge(&story, "epic/e", "catch up", MergeFavor::Incoming)
        .expect("merge");
    assert_eq!(
        outcome,
        MergeOutcome::Conflict {
            paths: vec!["shared.txt".into()]
        }
    );
    assert_eq!(git.checkpoint(&story).expect("head"), before);
    assert!(repo.porcelain(&story).is_empty());
}

#[test]
fn a_merge_git_refuses_for_local_changes_is_a_typed_refusal() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    write_in(&story, "shared.txt", "story\n");
    git.commit_all(&story, "story").expect("commit");
    repo.write("shared.txt", "uncommitted local edit\n");
    let error = git
        .merge(&repo.path, "story/e/a", "merge", MergeFavor::None)
        .expect_err("refused");
    let MergeError::Refused { detail, .. } = &error else {
        panic!("expected a refusal, got {error:?}");
    };
    assert!(detail.contains("shared.txt"), "{detail}");
    assert_eq!(
        std::fs::read_to_string(repo.path.join("shared.txt")).expect("read"),
        "uncommitted local edit\n"
    );
    assert!(matches!(
        git.merge(&repo.path, "no-such-branch", "m", MergeFavor::None),
        Err(MergeError::Rev(_))
    ));
}

#[test]
fn a_file_on_one_side_and_a_directory_on_the_other_is_a_conflict() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    write_in(&story, "clash/inner.txt", "story makes a directory\n");
    git.commit_all(&story, "story").expect("commit");
    repo.write("clash", "epic makes a file\n");
    git.commit_all(&repo.path, "epic").expect("commit");
    let before = git.checkpoint(&repo.path).expect("head");
    let outcome = git
        .merge(&repo.path, "story/e/a", "merge", MergeFavor::None)
        .expect("merge");
    let MergeOutcome::Conflict { paths } = outcome else {
        panic!("expected a conflict, got {outcome:?}");
    };
    assert!(
        paths.iter().any(|path| path.starts_with("clash")),
        "{paths:?}"
    );
    assert_eq!(git.checkpoint(&repo.path).expect("head"), before);
    assert!(repo.porcelain(&repo.path).is_empty());
}

#[test]
fn separate_additions_on_both_sides_merge_cleanly() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    write_in(&story, "dir/story.txt", "s\n");
    git.commit_all(&story, "story").expect("commit");
    repo.write("dir/epic.txt", "e\n");
    git.commit_all(&repo.path, "epic").expect("commit");
    let outcome = git
        .merge(&repo.path, "story/e/a", "merge", MergeFavor::None)
        .expect("merge");
    assert!(matches!(outcome, MergeOutcome::Merged(_)), "{outcome:?}");
    assert!(repo.path.join("dir/story.txt").is_file() && repo.path.join("dir/epic.txt").is_file());
    assert!(repo.porcelain(&repo.path).is_empty());
    repo.fsck();
}

#[test]
fn a_merge_killed_half_way_is_aborted_and_the_next_merge_goes_through() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    assert!(
        !git.abort_unfinished_merge(&story)
            .expect("nothing to abort")
    );
    write_in(&story, "story.txt", "s\n");
    git.commit_all(&story, "story").expect("commit");
    let before = snapshot(&story);
    let head = git.checkpoint(&story).expect("head");
    repo.commit_file(&repo.path.clone(), "epic.txt", "e\n", "epic moves on");
    // What a `git merge` killed before its commit leaves: the merge state, its result staged.
    repo.git_in(&story, &["merge", "--no-ff", "--no-commit", "-q", "epic/e"]);
    assert!(story.join("epic.txt").is_file());

    assert!(git.abort_unfinished_merge(&story).expect("abort"));
    assert_eq!(snapshot(&story), before);
    assert_eq!(git.checkpoint(&story).expect("head"), head);
    assert!(!git.abort_unfinished_merge(&story).expect("nothing left"));
    assert!(matches!(
        git.merge(&story, "epic/e", "catch up", MergeFavor::Incoming)
            .expect("merge"),
        MergeOutcome::Merged(_)
    ));
    assert!(repo.porcelain(&story).is_empty());
    repo.fsck();
}

#[test]
fn merging_a_commit_id_merges_exactly_that_commit_though_its_branch_moved_on() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    write_in(&story, "checked.txt", "c\n");
    let CommitOutcome::Committed(checked) = git.commit_all(&story, "checked").expect("commit")
    else {
        panic!("nothing committed");
    };
    // The branch moves on after `checked` was looked at.
    write_in(&story, "later.txt", "l\n");
    git.commit_all(&story, "later").expect("commit");
    let outcome = git
        .merge(
            &repo.path,
            &checked.to_hex(),
            "merge checked",
            MergeFavor::None,
        )
        .expect("merge");
    let MergeOutcome::Merged(id) = outcome else {
        panic!("expected a merge, got {outcome:?}");
    };
    let parents = repo.git(&["log", "-1", "--format=%P", &id.to_hex()]);
    assert!(parents.trim().ends_with(&checked.to_hex()), "{parents}");
    assert!(repo.path.join("checked.txt").is_file());
    assert!(!repo.path.join("later.txt").exists());
    repo.fsck();
}

#[test]
fn the_first_parent_line_holds_the_branchs_own_merges_not_the_merged_commits() {
    let (repo, story) = epic_and_story();
    let git = repo.handle();
    let base = git.checkpoint(&repo.path).expect("head");
    write_in(&story, "story.txt", "s\n");
    let CommitOutcome::Committed(side) = git.commit_all(&story, "story").expect("commit") else {
        panic!("nothing committed");
    };
    let MergeOutcome::Merged(merge) = git
        .merge(&repo.path, "story/e/a", "merge story a", MergeFavor::None)
        .expect("merge")
    else {
        panic!("expected a merge");
    };
    repo.commit_file(&repo.path, "after.txt", "a\n", "after");
    let on = |commit| {
        git.on_first_parent_line(&repo.path, commit, "epic/e")
            .expect("walk")
    };
    assert!(on(&merge));
    assert!(on(&base));
    let head = git.checkpoint(&repo.path).expect("head");
    assert!(on(&head));
    assert!(
        !on(&side),
        "the merged commit is on the second parent's line"
    );
    let unrelated = git.checkpoint(&story).expect("story head");
    assert!(
        !git.on_first_parent_line(&repo.path, &merge, "story/e/a")
            .expect("walk")
    );
    assert_eq!(unrelated, side);
}

/// A repository whose `epic/e` branch is checked out in a linked worktree (as epic's own is),
/// and `stories` story branches cut from it, each committing the files it is given.
fn linked_epic(stories: &[&[(&str, &str)]]) -> (Repo, std::path::PathBuf, Vec<CommitId>) {
    let repo = Repo::new();
    repo.commit_files(
        &[("shared.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n")],
        "base",
    );
    let git = repo.handle();
    let epic = repo.beside("epic");
    git.add_worktree_new_branch(&epic, "epic/e", "HEAD")
        .expect("epic worktree");
    let mut commits = Vec::new();
    for (n, files) in stories.iter().enumerate() {
        let story = repo.beside(&format!("story-{n}"));
        git.add_worktree_new_branch(&story, &format!("story/e/{n}"), "epic/e")
            .expect("story worktree");
        for (path, content) in *files {
            write_in(&story, path, content);
        }
        let CommitOutcome::Committed(commit) = git.commit_all(&story, "story").expect("commit")
        else {
            panic!("story {n} committed nothing");
        };
        commits.push(commit);
    }
    (repo, epic, commits)
}

/// The merge commit of `theirs` into `ours` that `merge_objects` makes; panics unless it makes
/// one.
fn merged_in_objects(
    git: &epic_git_ops::GixGit,
    epic: &Path,
    ours: &CommitId,
    theirs: &CommitId,
    message: &str,
) -> CommitId {
    match git
        .merge_objects(epic, ours, theirs, message)
        .expect("merge")
    {
        Some(MergeOutcome::Merged(merge)) => merge,
        outcome => panic!("expected a merge in the objects, got {outcome:?}"),
    }
}

#[test]
fn a_chain_of_merges_is_made_in_the_objects_and_checked_out_once() {
    let (repo, epic, stories) = linked_epic(&[
        &[("a/one.txt", "1\n")],
        &[("b/two.txt", "2\n")],
        &[("a/three.txt", "3\n"), ("c.txt", "c\n")],
    ]);
    let git = repo.handle();
    let start = git.checkpoint(&epic).expect("head");
    let files = snapshot(&epic);
    let reflog = repo.git(&["reflog", "show", "--format=%gs", "epic/e"]);

    let mut head = start;
    for (n, story) in stories.iter().enumerate() {
        let merge = merged_in_objects(&git, &epic, &head, story, &format!("merge story {n}"));
        let parents = repo.git(&["log", "-1", "--format=%P%n%s", &merge.to_hex()]);
        assert_eq!(parents, format!("{head} {story}\nmerge story {n}\n"));
        head = merge;
    }
    // Nothing moved: not the branch, not a file, not the index, not the reflog.
    assert_eq!(git.checkpoint(&epic).expect("head"), start);
    assert_eq!(snapshot(&epic), files);
    assert!(repo.porcelain(&epic).is_empty());
    assert_eq!(
        repo.git(&["reflog", "show", "--format=%gs", "epic/e"]),
        reflog
    );
    // Merging a story the chain holds again: up to date.
    assert_eq!(
        git.merge_objects(&epic, &head, &stories[0], "again")
            .expect("merge"),
        Some(MergeOutcome::UpToDate)
    );

    git.advance_worktree(&epic, &start, &head, "e: merge stories")
        .expect("advance");
    assert_eq!(git.checkpoint(&epic).expect("head"), head);
    assert_eq!(
        git.current_branch(&epic).expect("branch"),
        Some("epic/e".into())
    );
    for (path, content) in [
        ("a/one.txt", "1\n"),
        ("b/two.txt", "2\n"),
        ("a/three.txt", "3\n"),
    ] {
        assert_eq!(
            std::fs::read_to_string(epic.join(path)).expect("merged file"),
            content
        );
    }
    assert!(repo.porcelain(&epic).is_empty());
    assert_eq!(
        repo.git(&["reflog", "-1", "--format=%gs", "epic/e"]).trim(),
        "e: merge stories"
    );
    repo.fsck();
}

#[test]
fn merges_in_the_objects_leave_overlapping_changes_to_git_and_report_conflicts() {
    let (repo, epic, stories) = linked_epic(&[
        &[("shared.txt", "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\n")],
        &[("shared.txt", "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n")],
        &[("shared.txt", "uno\ntwo\nthree\nfour\nfive\nsix\nseven\n")],
    ]);
    let git = repo.handle();
    let start = git.checkpoint(&epic).expect("head");
    let first = merged_in_objects(&git, &epic, &start, &stories[0], "first");
    // The second story edited the same file (elsewhere): git's merge, in a worktree.
    assert_eq!(
        git.merge_objects(&epic, &first, &stories[1], "second")
            .expect("merge"),
        None
    );
    // The third edited the same line: a conflict, found without touching anything.
    let outcome = git
        .merge_objects(&epic, &first, &stories[2], "third")
        .expect("merge");
    assert_eq!(
        outcome,
        Some(MergeOutcome::Conflict {
            paths: vec!["shared.txt".to_owned()]
        })
    );
    assert_eq!(git.checkpoint(&epic).expect("head"), start);
    assert!(repo.porcelain(&epic).is_empty());

    // What the merge queue does with the second: the worktree brought to the chain, then git.
    git.advance_worktree(&epic, &start, &first, "e: the merges before")
        .expect("advance");
    let merged = git
        .merge(&epic, &stories[1].to_hex(), "second", MergeFavor::None)
        .expect("merge");
    assert!(matches!(merged, MergeOutcome::Merged(_)), "{merged:?}");
    assert_eq!(
        std::fs::read_to_string(epic.join("shared.txt")).expect("shared"),
        "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n"
    );
    repo.fsck();
}

#[test]
fn a_move_with_a_local_change_in_its_way_is_refused_and_touches_nothing() {
    let (repo, epic, stories) = linked_epic(&[&[("shared.txt", "changed\n"), ("new.txt", "n\n")]]);
    let git = repo.handle();
    let start = git.checkpoint(&epic).expect("head");
    let merge = merged_in_objects(&git, &epic, &start, &stories[0], "merge");
    write_in(&epic, "shared.txt", "a local change\n");
    let files = snapshot(&epic);
    let refused = git.advance_worktree(&epic, &start, &merge, "e: merge");
    assert!(
        matches!(refused, Err(AdvanceError::Refused { .. })),
        "{refused:?}"
    );
    assert_eq!(snapshot(&epic), files);
    assert_eq!(git.checkpoint(&epic).expect("head"), start);

    // Put back, the move goes through; an untracked file where the commits do not differ
    // stays, as it does with git.
    repo.git_in(&epic, &["checkout", "-q", "--", "shared.txt"]);
    write_in(&epic, "elsewhere.txt", "untracked, kept\n");
    git.advance_worktree(&epic, &start, &merge, "e: merge")
        .expect("advance");
    assert_eq!(
        std::fs::read_to_string(epic.join("elsewhere.txt")).expect("kept"),
        "untracked, kept\n"
    );
    assert_eq!(repo.porcelain(&epic), "?? elsewhere.txt\n");
    repo.fsck();
}

#[test]
fn a_merge_of_separate_changes_has_the_tree_git_merges() {
    let (repo, epic, stories) = linked_epic(&[
        // New directories, an edit next to the other side's, a new link, a mode change.
        &[
            ("deep/new/dir/one.txt", "1\n"),
            ("shared dir/theirs.txt", "t\n"),
            ("shared.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"),
        ],
        &[("shared dir/ours.txt", "o\n"), ("z last.txt", "z\n")],
    ]);
    let story = repo.beside("story-0");
    std::os::unix::fs::symlink("deep/new", story.join("link")).expect("link");
    repo.git_in(&story, &["update-index", "--chmod=+x", "shared.txt"]);
    repo.git_in(&story, &["add", "-A"]);
    repo.git_in(&story, &["commit", "-q", "-m", "link and mode"]);
    let theirs: CommitId = repo
        .git_in(&story, &["rev-parse", "HEAD"])
        .trim()
        .parse()
        .expect("id");
    let git = repo.handle();
    let start = git.checkpoint(&epic).expect("head");
    let ours = merged_in_objects(&git, &epic, &start, &stories[1], "ours");
    let merged = merged_in_objects(&git, &epic, &ours, &theirs, "theirs");
    let by_git = repo.git(&[
        "merge-tree",
        "--write-tree",
        &ours.to_hex(),
        &theirs.to_hex(),
    ]);
    assert_eq!(
        repo.git(&["rev-parse", &format!("{merged}^{{tree}}")])
            .trim(),
        by_git.lines().next().expect("a tree")
    );
    repo.fsck();
}
