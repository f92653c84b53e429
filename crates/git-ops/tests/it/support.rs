//! Real repositories in temporary directories (`epic-test-support`'s), and the git command line
//! to build and check them.
//!
//! Every git run here and every [`GixGit`] made here is isolated from the machine: `HOME` is an
//! empty directory of the test's own, the system configuration is off, and identity variables a
//! CI machine may export are removed, so no test depends on `~/.gitconfig`.

use std::path::{Path, PathBuf};
use std::process::Command;

use epic_git_ops::GixGit;
use epic_test_support::Isolation;

/// A repository of `epic-test-support` with the git-ops tests' own additions: the main
/// worktree as a field (`repo.path`, as every test here names it) and a [`GixGit`] isolated like
/// the test's git ([`handle`](Self::handle)). Everything else is the shared builder's, through
/// `Deref`.
pub(crate) struct Repo {
    inner: epic_test_support::Repo,
    /// The main worktree.
    pub(crate) path: PathBuf,
}

impl Repo {
    /// A repository on branch `main` with one commit (`README.md`) and a local identity.
    pub(crate) fn new() -> Self {
        Self::from(builder().build())
    }

    /// A repository on branch `main` with a local identity and no commits.
    pub(crate) fn empty() -> Self {
        Self::from(builder().no_commit().build())
    }

    /// A repository without commits and without any identity configured anywhere.
    pub(crate) fn bare_identity() -> Self {
        Self::from(
            builder()
                .identity(epic_test_support::Identity::Unconfigured)
                .no_commit()
                .build(),
        )
    }

    /// A [`GixGit`] on this repository, isolated like the test's own git.
    pub(crate) fn handle(&self) -> GixGit {
        isolate_handle(GixGit::discover(&self.path).expect("discover"), self.home())
    }
}

impl From<epic_test_support::Repo> for Repo {
    fn from(inner: epic_test_support::Repo) -> Self {
        let path = inner.path().to_owned();
        Self { inner, path }
    }
}

impl std::ops::Deref for Repo {
    type Target = epic_test_support::Repo;

    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

/// The builder of every repository here: temporary directories named for the crate.
fn builder() -> epic_test_support::Builder {
    epic_test_support::Repo::builder().prefix("git-ops-")
}

/// Points `command` at `home` and away from the machine's configuration, in the C locale.
pub(crate) fn isolate(command: &mut Command, home: &Path) {
    Isolation::new(home).apply(command).env("LC_ALL", "C");
}

/// The same isolation for the git processes of a [`GixGit`].
pub(crate) fn isolate_handle(mut git: GixGit, home: &Path) -> GixGit {
    for (key, value) in Isolation::new(home).variables() {
        git = git.with_env(key, value);
    }
    git
}

/// The git commands a `GIT_TRACE` file recorded (`git update-ref …`), but the configuration
/// read a handle makes at its first command.
pub(crate) fn traced_commands(trace: &Path) -> Vec<String> {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            line.split_once("trace: built-in: ")
                .map(|(_, command)| command)
        })
        .filter(|command| !command.starts_with("git config"))
        .map(str::to_owned)
        .collect()
}

pub(crate) use epic_test_support::{sorted_lines, write_in};

#[test]
fn the_fixtures_clear_every_identity_variable_git_ops_knows() {
    // git-ops' list and the fixtures' are kept apart (the fixtures do not depend on git-ops):
    // this holds them together.
    for key in epic_git_ops::IDENTITY_VARIABLES {
        assert!(
            epic_test_support::IDENTITY_VARIABLES.contains(&key),
            "{key} is cleared by git-ops but not by epic-test-support's isolation"
        );
    }
}
