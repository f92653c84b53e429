//! One path of a commit's tree ([`Git::tree_file`]): a file with its content, a link, a
//! directory, nothing; the commit's, whatever the worktree holds now.

use std::os::unix::fs::symlink;

use epic_git_ops::{Git, RevError, TreeFile};

use crate::support::Repo;

#[test]
fn a_path_of_a_commits_tree_is_read_as_the_commit_has_it() {
    let repo = Repo::new();
    repo.write("src/cart/mod.rs", "pub struct Cart;\n");
    symlink("mod.rs", repo.path.join("src/cart/link.rs")).expect("symlink");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "cart"]);
    let commit = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    // The worktree moves on; the commit's tree does not.
    repo.write("src/cart/mod.rs", "changed\n");
    repo.write("src/cart/new.rs", "new\n");
    let git = repo.handle();
    let at = |path: &str| git.tree_file(&repo.path, &commit, path).expect("read");

    assert_eq!(
        at("src/cart/mod.rs"),
        TreeFile::File(b"pub struct Cart;\n".to_vec())
    );
    assert_eq!(at("./src//cart/mod.rs"), at("src/cart/mod.rs"));
    assert_eq!(at("src/cart/link.rs"), TreeFile::Link("mod.rs".to_owned()));
    assert_eq!(at("src/cart"), TreeFile::Directory);
    assert_eq!(at(""), TreeFile::Directory);
    assert_eq!(at("src/cart/new.rs"), TreeFile::Missing);
    // Below a file, or below a link, is nothing.
    assert_eq!(at("README.md/x"), TreeFile::Missing);
    assert_eq!(at("src/cart/link.rs/x"), TreeFile::Missing);
    assert_eq!(at("src/cart/mod.rs").kind(), "a file");
    assert_eq!(at("nothing").kind(), "no such path");
    assert!(matches!(
        git.tree_file(&repo.path, "no-such-branch", "README.md"),
        Err(RevError::NotFound { .. })
    ));
}
