//! A new repository with its first commit: on the branch asked for, every file committed by the
//! identity given, which the repository keeps for its later commits.

use epic_git_ops::{FirstCommit, Git, GixGit, init_repository};

use crate::support::Repo;

#[test]
fn a_new_repository_commits_every_file_on_its_branch_with_its_own_identity() {
    let checks = Repo::new();
    let dir = checks.beside("new");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/a.sh"), "a\n").unwrap();
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    init_repository(
        &dir,
        &FirstCommit {
            branch: "trunk",
            name: "Demo Person",
            email: "demo@example.invalid",
            message: "the project",
        },
    )
    .unwrap();
    // The identity is the repository's own configuration (an identity in the environment, as
    // CI exports, still wins for a commit, as git lets it).
    let log = checks.git_in(&dir, &["log", "--format=%s", "trunk"]);
    assert_eq!(log.trim(), "the project", "one commit");
    assert_eq!(
        checks.git_in(&dir, &["config", "user.name"]).trim(),
        "Demo Person"
    );
    assert_eq!(
        checks.git_in(&dir, &["config", "user.email"]).trim(),
        "demo@example.invalid"
    );
    let files = checks.git_in(&dir, &["ls-files"]);
    assert_eq!(files.lines().collect::<Vec<_>>(), ["README.md", "lib/a.sh"]);
    assert_eq!(
        checks.git_in(&dir, &["config", "commit.gpgsign"]).trim(),
        "false"
    );
    let git = GixGit::discover(&dir).unwrap();
    assert!(!git.status(&dir, &[]).unwrap().is_dirty());
}

#[test]
fn a_directory_git_cannot_make_a_repository_of_is_an_error_naming_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let error = init_repository(
        &missing,
        &FirstCommit {
            branch: "main",
            name: "n",
            email: "e@x.invalid",
            message: "m",
        },
    )
    .unwrap_err();
    assert!(error.to_string().contains("git init"), "{error}");
}
