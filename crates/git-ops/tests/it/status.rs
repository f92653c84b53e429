//! Status: dirty or not, and the changed paths as `git status --porcelain` sees them, each
//! with what became of it against the head.

use epic_git_ops::Git;

use crate::support::{Repo, write_in};

/// The paths of `git status --porcelain=v1 -z --untracked-files=all`, a rename as its new path.
pub(crate) fn git_status_paths(repo: &Repo, dir: &std::path::Path) -> Vec<String> {
    let out = repo.git_in(
        dir,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    );
    let mut paths = Vec::new();
    let mut fields = out.split('\0').filter(|field| !field.is_empty());
    while let Some(field) = fields.next() {
        let (code, path) = field.split_at(3);
        paths.push(path.to_owned());
        if code.starts_with('R') || code.starts_with('C') {
            fields.next(); // the old path
        }
    }
    paths.sort();
    paths
}

#[test]
fn a_fresh_checkout_is_clean() {
    let repo = Repo::new();
    let status = repo.handle().status(&repo.path, &[]).expect("status");
    assert!(!status.is_dirty(), "{status:?}");
}

#[test]
fn lists_every_kind_of_change_like_git() {
    let repo = Repo::new();
    let git = repo.handle();
    for (path, content) in [
        ("src/keep.rs", "k"),
        ("src/edit.rs", "e"),
        ("src/gone.rs", "g"),
        ("old name.txt", "rename me\nwith enough\ncontent\n"),
        ("staged.rs", "s"),
        (".gitignore", "target/\n*.log\n"),
    ] {
        repo.write(path, content);
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "files"]);

    repo.write("src/edit.rs", "edited");
    std::fs::remove_file(repo.path.join("src/gone.rs")).expect("remove");
    repo.git(&["mv", "old name.txt", "new näme.txt"]);
    repo.write("staged.rs", "staged change");
    repo.git(&["add", "staged.rs"]);
    repo.write("deep/er/untracked file.txt", "u");
    repo.write("ünïcode/日本.txt", "u");
    repo.write("target/build.o", "ignored");
    repo.write("debug.log", "ignored");
    std::fs::create_dir_all(repo.path.join("empty/dir")).expect("empty dir");

    let status = git.status(&repo.path, &[]).expect("status");
    assert!(status.is_dirty());
    assert_eq!(
        status.paths,
        [
            "deep/er/untracked file.txt",
            "new näme.txt",
            "src/edit.rs",
            "src/gone.rs",
            "staged.rs",
            "ünïcode/日本.txt",
        ]
    );
    assert_eq!(status.paths, git_status_paths(&repo, &repo.path));
}

#[test]
fn excludes_the_paths_the_caller_names() {
    let repo = Repo::new();
    let git = repo.handle();
    repo.write(".llm4ts/trace-1.jsonl", "{}");
    repo.write(".llm4ts-not/x", "x");
    repo.write("src/a.rs", "a");
    let status = git
        .status(&repo.path, &[".llm4ts", "src/"])
        .expect("status");
    assert_eq!(status.paths, [".llm4ts-not/x"]);
    let status = git
        .status(&repo.path, &[".llm4ts", ".llm4ts-not", "src"])
        .expect("status");
    assert!(!status.is_dirty());
}

#[test]
fn reads_the_status_of_linked_worktrees_independently() {
    let repo = Repo::new();
    let git = repo.handle();
    let a = repo.beside("a");
    let b = repo.beside("b");
    git.add_worktree_new_branch(&a, "story/e/a", "main")
        .expect("add");
    git.add_worktree_new_branch(&b, "story/e/b", "main")
        .expect("add");
    write_in(&a, "only-in-a.txt", "a");
    assert_eq!(
        git.status(&a, &[]).expect("status").paths,
        ["only-in-a.txt"]
    );
    assert!(!git.status(&b, &[]).expect("status").is_dirty());
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());
    // A subdirectory of a worktree reports the whole worktree, with root-relative paths.
    std::fs::create_dir_all(a.join("sub")).expect("mkdir");
    write_in(&a, "sub/x.txt", "x");
    assert_eq!(
        git.status(&a.join("sub"), &[]).expect("status").paths,
        ["only-in-a.txt", "sub/x.txt"]
    );
    assert_eq!(git_status_paths(&repo, &a), ["only-in-a.txt", "sub/x.txt"]);
}

#[test]
fn a_file_modified_with_the_same_size_in_the_same_second_is_still_seen() {
    let repo = Repo::new();
    let git = repo.handle();
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());
    repo.write("README.md", "HELLO\n");
    assert_eq!(
        git.status(&repo.path, &[]).expect("status").paths,
        ["README.md"]
    );
}

#[test]
fn odd_names_are_listed_quoted_like_git_and_staged_restored_by_their_bytes() {
    use std::os::unix::ffi::OsStrExt as _;
    let repo = Repo::new();
    let git = repo.handle();
    assert!(!git.status(&repo.path, &[]).expect("status").is_dirty());
    repo.write("src/done.txt", "d");
    repo.write("src/two\nlines.txt", "x");
    let raw = repo
        .path
        .join(std::ffi::OsStr::from_bytes(b"src/raw\xff.txt"));
    std::fs::write(&raw, "y").expect("write the raw name");
    let status = git.status(&repo.path, &[]).expect("status");
    let quoted = [r#""src/raw\377.txt""#, r#""src/two\nlines.txt""#];
    assert_eq!(status.paths, [quoted[0], quoted[1], "src/done.txt"]);
    git.commit_all(&repo.path, "odd").expect("commit");
    assert_eq!(
        repo.git(&["ls-tree", "-r", "--name-only", "HEAD"]),
        "README.md\nsrc/done.txt\n\"src/raw\\377.txt\"\n\"src/two\\nlines.txt\"\n",
        "the real bytes are committed (git quotes them the same way)"
    );
    let restored = git
        .restore_paths(&repo.path, "HEAD~1", &quoted)
        .expect("restore");
    assert_eq!(restored.deleted, quoted);
    assert!(!raw.exists());
    assert!(!repo.path.join("src/two\nlines.txt").exists());
}

#[test]
fn uncommitted_says_what_became_of_each_path_against_the_head() {
    use epic_git_ops::{Uncommitted, UncommittedKind};
    use std::os::unix::ffi::OsStrExt as _;
    let repo = Repo::new();
    let git = repo.handle();
    assert_eq!(git.uncommitted(&repo.path).expect("uncommitted"), []);
    let raw = repo
        .path
        .join(std::ffi::OsStr::from_bytes(b"src/raw\xff.txt"));
    repo.write("src/edit.rs", "e");
    repo.write("src/gone.rs", "g");
    std::fs::write(&raw, "y").expect("write the raw name");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "files"]);

    repo.write("src/edit.rs", "edited");
    std::fs::remove_file(repo.path.join("src/gone.rs")).expect("remove");
    std::fs::write(&raw, "changed").expect("change the raw name");
    repo.write("src/half.rs", "fn half(");
    repo.write("staged.rs", "s");
    repo.git(&["add", "staged.rs"]);
    // Staged, then deleted: neither the head nor the worktree has it, a commit takes nothing.
    repo.write("brief.rs", "b");
    repo.git(&["add", "brief.rs"]);
    std::fs::remove_file(repo.path.join("brief.rs")).expect("remove");

    let change = |path: &str, kind| Uncommitted {
        path: path.to_owned(),
        kind,
    };
    assert_eq!(
        git.uncommitted(&repo.path).expect("uncommitted"),
        [
            change(r#""src/raw\377.txt""#, UncommittedKind::Modified),
            change("src/edit.rs", UncommittedKind::Modified),
            change("src/gone.rs", UncommittedKind::Deleted),
            change("src/half.rs", UncommittedKind::Added),
            change("staged.rs", UncommittedKind::Added),
        ]
    );
}

#[test]
fn untracked_files_leave_out_tracked_and_ignored_ones() {
    let repo = crate::support::Repo::new();
    let git = repo.handle();
    repo.write(".gitignore", "*.keep\n");
    repo.write("src/tracked.rs", "t\n");
    git.commit_all(&repo.path, "base").expect("commit");
    repo.write("src/tracked.rs", "changed\n");
    repo.write("cache.keep", "ignored\n");
    repo.write("__pycache__/m.pyc", "x\n");
    repo.write("odd\nname.txt", "x\n");
    repo.write("test-results.xml", "r\n");
    // From a subdirectory too: the paths are from the worktree's root.
    assert_eq!(
        git.untracked_files(&repo.path.join("src"))
            .expect("untracked"),
        [
            "\"odd\\nname.txt\"",
            "__pycache__/m.pyc",
            "test-results.xml"
        ]
    );
}
