//! Three-dot diffs: a branch's own changes since it left the base, text and paths.

use epic_git_ops::{DiffError, FileChange, FileChangeKind, FileMode, Git, Symlink};

use crate::support::{Repo, write_in};

#[test]
fn counts_only_the_branchs_own_changes() {
    let repo = Repo::new();
    let git = repo.handle();
    for (path, content) in [
        ("keep.txt", "keep"),
        (
            "old name.rs",
            "fn moved() {}\nfn and_more() {}\nfn lines() {}\n",
        ),
        ("doomed.txt", "d"),
        ("ä/edit.txt", "e"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.git(&["branch", "epic/e"]);

    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "epic/e")
        .expect("add");
    repo.git_in(&wt, &["mv", "old name.rs", "new name.rs"]);
    std::fs::remove_file(wt.join("doomed.txt")).expect("remove");
    write_in(&wt, "ä/edit.txt", "edited");
    write_in(&wt, "src/新.rs", "new");
    git.commit_all(&wt, "story work").expect("commit");

    // The epic moves on after the story left it: not the story's change.
    repo.git(&["checkout", "-q", "epic/e"]);
    repo.commit_file(&repo.path.clone(), "epic-only.txt", "e", "another story");

    let paths = git
        .changed_paths_vs_base(&wt, "epic/e", "HEAD")
        .expect("paths");
    assert_eq!(
        paths,
        [
            "doomed.txt",
            "new name.rs",
            "old name.rs",
            "src/新.rs",
            "ä/edit.txt"
        ]
    );
    let diff = git.diff_vs_base(&wt, "epic/e", "story/e/a").expect("diff");
    assert_eq!(diff.paths, paths);
    assert!(diff.text.starts_with("diff --git"), "{}", diff.text);
    assert!(!diff.text.contains("epic-only"), "{}", diff.text);
    assert!(diff.text.contains("+edited"), "{}", diff.text);
    // The same text as `git diff epic...story`.
    let theirs = repo.git_in(&wt, &["diff", "--no-color", "epic/e...story/e/a"]);
    assert_eq!(diff.text, theirs);
    // The same paths as git's name-only diff without rename detection.
    let mut names: Vec<String> = repo
        .git_in(
            &wt,
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-renames",
                "--name-only",
                "epic/e...HEAD",
            ],
        )
        .lines()
        .map(str::to_owned)
        .collect();
    names.sort();
    assert_eq!(names, paths);
}

#[test]
fn an_untouched_branch_has_no_changes_and_unrelated_histories_are_an_error() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.git(&["branch", "story/e/a"]);
    let diff = git
        .diff_vs_base(&repo.path, "main", "story/e/a")
        .expect("diff");
    assert!(diff.paths.is_empty() && diff.text.is_empty(), "{diff:?}");

    repo.git(&["checkout", "-q", "--orphan", "unrelated"]);
    repo.git(&["rm", "-rq", "--cached", "."]);
    repo.commit_file(&repo.path.clone(), "other.txt", "o", "root two");
    let error = git
        .changed_paths_vs_base(&repo.path, "main", "unrelated")
        .expect_err("no base");
    assert!(matches!(error, DiffError::NoMergeBase { .. }), "{error:?}");
    let error = git
        .changed_paths_vs_base(&repo.path, "main", "nope")
        .expect_err("no rev");
    assert!(matches!(error, DiffError::Rev(_)), "{error:?}");
}

#[test]
fn file_changes_follow_renames_as_git_does_and_keep_only_the_wanted_added_lines() {
    let repo = Repo::new();
    let git = repo.handle();
    let body = "fn one() {}\nfn two() {}\nfn three() {}\nfn four() {}\n";
    for (path, content) in [
        ("tests/old.rs", body),
        ("tests/moved_out.rs", body),
        ("tests/doomed.rs", "#[test]\nfn t() {}\n"),
        ("src/lib.rs", "// SKIP first\nfn a() {}\n// SKIP second\n"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.git(&["branch", "epic/e"]);

    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "epic/e")
        .expect("add");
    repo.git_in(&wt, &["mv", "tests/old.rs", "tests/new.rs"]);
    std::fs::create_dir_all(wt.join("attic")).expect("mkdir");
    repo.git_in(&wt, &["mv", "tests/moved_out.rs", "attic/moved_out.rs"]);
    std::fs::remove_file(wt.join("tests/doomed.rs")).expect("remove");
    // One line moved (not added), one more copy of a line (added once), one new line.
    write_in(
        &wt,
        "src/lib.rs",
        "// SKIP second\nfn a() {}\n// SKIP first\n// SKIP first\n// SKIP third\nfn b() {}\n",
    );
    write_in(&wt, "web/new.js", "// SKIP new\nlet x = 1;\n");
    // Binary by git's rule: no lines.
    write_in(&wt, "blob.bin", "\0// SKIP binary\n");
    git.commit_all(&wt, "story work").expect("commit");

    let keep = |line: &str| line.contains("SKIP");
    let changes = git
        .file_changes_vs_base(&wt, "epic/e", "HEAD", &keep, &|_| false)
        .expect("changes");
    // Every file here is a regular file on each side it has; no content is held.
    let change = |path: &str, kind: FileChangeKind, added: &[&str]| FileChange {
        path: path.to_owned(),
        mode: (kind != FileChangeKind::Deleted).then_some(FileMode::File),
        previous_mode: (kind != FileChangeKind::Added).then_some(FileMode::File),
        kind,
        added: added.iter().map(|line| (*line).to_owned()).collect(),
        content: None,
        previous_content: None,
    };
    let renamed = |from: &str| FileChangeKind::Renamed {
        from: from.to_owned(),
    };
    assert_eq!(
        changes,
        [
            change("attic/moved_out.rs", renamed("tests/moved_out.rs"), &[]),
            change("blob.bin", FileChangeKind::Added, &[]),
            change(
                "src/lib.rs",
                FileChangeKind::Modified,
                &["// SKIP first", "// SKIP third"]
            ),
            change("tests/doomed.rs", FileChangeKind::Deleted, &[]),
            change("tests/new.rs", renamed("tests/old.rs"), &[]),
            change("web/new.js", FileChangeKind::Added, &["// SKIP new"]),
        ]
    );
    // The kinds git's own diff finds, renames included.
    let status = repo.git_in(&wt, &["diff", "--name-status", "epic/e...HEAD"]);
    let mut theirs: Vec<String> = status
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[0].chars().next() {
                Some('R') => format!("R {} <- {}", fields[2], fields[1]),
                Some(kind) => format!("{kind} {}", fields[1]),
                None => String::new(),
            }
        })
        .collect();
    theirs.sort_by(|a, b| a[2..].cmp(&b[2..]));
    let ours: Vec<String> = changes
        .iter()
        .map(|change| match &change.kind {
            FileChangeKind::Renamed { from } => format!("R {} <- {from}", change.path),
            FileChangeKind::Added => format!("A {}", change.path),
            FileChangeKind::Modified => format!("M {}", change.path),
            FileChangeKind::Deleted => format!("D {}", change.path),
            FileChangeKind::Copied { from } => format!("C {} <- {from}", change.path),
        })
        .collect();
    assert_eq!(ours, theirs);

    // With rename detection configured off, a rename is a deletion and an addition, as in git.
    repo.git(&["config", "diff.renames", "false"]);
    let git = repo.handle();
    let changes = git
        .file_changes_vs_base(&wt, "epic/e", "HEAD", &keep, &|_| false)
        .expect("changes");
    assert!(
        changes
            .iter()
            .any(|change| change.path == "tests/old.rs" && change.kind == FileChangeKind::Deleted),
        "{changes:?}"
    );
}

#[test]
fn file_changes_give_each_sides_mode_and_hold_the_content_asked_for() {
    let repo = Repo::new();
    let git = repo.handle();
    for (path, content) in [
        ("tests/a_test.sh", "test 1 -eq 1\n"),
        ("tests/b_test.sh", "test 2 -eq 2\n"),
        ("tests/c_test.sh", "test 3 -eq 3\n"),
        ("src/lib.rs", "fn a() {}\n"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.git(&["branch", "epic/e"]);

    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "epic/e")
        .expect("add");
    // A test replaced by a symbolic link, one emptied, one made executable; a library change.
    std::fs::remove_file(wt.join("tests/a_test.sh")).expect("remove");
    std::os::unix::fs::symlink("c_test.sh", wt.join("tests/a_test.sh")).expect("symlink");
    write_in(&wt, "tests/b_test.sh", "");
    std::fs::set_permissions(
        wt.join("tests/c_test.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    write_in(&wt, "src/lib.rs", "fn a() {}\nfn b() {}\n");
    git.commit_all(&wt, "story work").expect("commit");

    let changes = git
        .file_changes_vs_base(&wt, "epic/e", "HEAD", &|_| false, &|path| {
            path.starts_with("tests/")
        })
        .expect("changes");
    let found: Vec<_> = changes
        .iter()
        .map(|change| {
            (
                change.path.as_str(),
                change.previous_mode,
                change.mode,
                change.previous_content.as_deref(),
                change.content.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "src/lib.rs",
                Some(FileMode::File),
                Some(FileMode::File),
                None,
                None
            ),
            (
                "tests/a_test.sh",
                Some(FileMode::File),
                Some(FileMode::Symlink),
                Some(&b"test 1 -eq 1\n"[..]),
                Some(&b"c_test.sh"[..])
            ),
            (
                "tests/b_test.sh",
                Some(FileMode::File),
                Some(FileMode::File),
                Some(&b"test 2 -eq 2\n"[..]),
                Some(&b""[..])
            ),
            (
                "tests/c_test.sh",
                Some(FileMode::File),
                Some(FileMode::Executable),
                Some(&b"test 3 -eq 3\n"[..]),
                Some(&b"test 3 -eq 3\n"[..])
            ),
        ]
    );
}

#[test]
fn symbolic_links_a_branch_adds_or_changes_are_listed_with_their_targets() {
    use std::os::unix::fs::symlink;

    let repo = Repo::new();
    let git = repo.handle();
    repo.write("keep.txt", "keep");
    repo.write("vendor/lib/mod.rs", "mod");
    symlink("vendor/lib", repo.path.join("lib")).expect("symlink");
    symlink("keep.txt", repo.path.join("retarget")).expect("symlink");
    symlink("keep.txt", repo.path.join("doomed")).expect("symlink");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "base"]);
    repo.git(&["branch", "epic/e"]);

    let wt = repo.beside("a");
    git.add_worktree_new_branch(&wt, "story/e/a", "epic/e")
        .expect("add");
    std::fs::create_dir_all(wt.join("src/a")).expect("mkdir");
    symlink("/etc/passwd", wt.join("src/a/passwd")).expect("symlink");
    symlink("../../../outside.txt", wt.join("src/a/out")).expect("symlink");
    std::fs::remove_file(wt.join("retarget")).expect("rm");
    symlink("../b/file.txt", wt.join("retarget")).expect("symlink");
    std::fs::remove_file(wt.join("doomed")).expect("rm");
    std::fs::remove_file(wt.join("keep.txt")).expect("rm");
    symlink("vendor/lib/mod.rs", wt.join("keep.txt")).expect("symlink");
    write_in(&wt, "src/a/plain.rs", "not a link");
    repo.git_in(&wt, &["add", "-A"]);
    repo.git_in(&wt, &["commit", "-q", "-m", "links"]);

    let (paths, links) = git
        .changed_paths_and_links_vs_base(&wt, "epic/e", "HEAD")
        .expect("links");
    let only_paths = git.changed_paths_vs_base(&wt, "epic/e", "HEAD");
    assert_eq!(paths, only_paths.expect("paths"), "changed_paths_vs_base's");
    let links = pairs(links);
    let expected = [
        ("keep.txt", "vendor/lib/mod.rs"),
        ("retarget", "../b/file.txt"),
        ("src/a/out", "../../../outside.txt"),
        ("src/a/passwd", "/etc/passwd"),
    ];
    assert_eq!(
        links,
        expected.map(|(path, target)| (path.to_owned(), target.to_owned()))
    );
    // The changed links of `git diff --raw` are these (and `doomed`, deleted).
    let raw = repo.git_in(&wt, &["diff", "--raw", "--no-renames", "epic/e...HEAD"]);
    let raw_links: Vec<&str> = raw
        .lines()
        .filter(|line| line.split_whitespace().nth(1) == Some("120000"))
        .filter_map(|line| line.split('\t').nth(1))
        .collect();
    assert_eq!(
        raw_links,
        ["keep.txt", "retarget", "src/a/out", "src/a/passwd"]
    );

    // On the way to paths in the base's tree: `lib` above two of them, listed once; a file
    // path, a path the tree lacks and a plain directory have none.
    let along = git
        .symlinks_along(
            &repo.path,
            "epic/e",
            &[
                "lib/x/y.rs",
                "./lib//z",
                "keep.txt/below",
                "nope/x",
                "vendor/lib",
                "retarget",
            ],
        )
        .expect("along");
    assert_eq!(
        pairs(along),
        [
            ("lib".to_owned(), "vendor/lib".to_owned()),
            ("retarget".to_owned(), "keep.txt".to_owned())
        ]
    );
    assert!(
        git.symlinks_along(&wt, "HEAD", &["src/a", "src/a/plain.rs"])
            .expect("along")
            .is_empty()
    );

    // In the worktree's files, committed or not: an uncommitted link counts, a path with no
    // file or under a file has none.
    symlink("../../.git/config", wt.join("src/a/uncommitted")).expect("symlink");
    let files = pairs(
        git.symlinks_in_worktree(
            &wt,
            &[
                "src/a/uncommitted",
                "src/a/plain.rs",
                "doomed",
                "keep.txt/x",
                "src/a/passwd",
            ],
        )
        .expect("worktree links"),
    );
    let expected = [
        ("src/a/passwd", "/etc/passwd"),
        ("src/a/uncommitted", "../../.git/config"),
    ];
    assert_eq!(
        files,
        expected.map(|(path, to)| (path.to_owned(), to.to_owned()))
    );
}

/// Each link as its path and target.
fn pairs(links: Vec<Symlink>) -> Vec<(String, String)> {
    links
        .into_iter()
        .map(|link| (link.path, link.target))
        .collect()
}
