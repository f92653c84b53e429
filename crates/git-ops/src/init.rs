//! Creating a repository with its first commit: what `epic demo` builds its throwaway project
//! with, through the same clean, non-interactive git every other operation uses.

use std::path::Path;

use crate::cli::{Cli, args};
use crate::error::GitCommandError;

/// Who makes a new repository's commits, and what its first commit says.
#[derive(Debug, Clone, Copy)]
pub struct FirstCommit<'a> {
    /// The initial branch (`main`).
    pub branch: &'a str,
    /// `user.name`, written to the new repository's own configuration.
    pub name: &'a str,
    /// `user.email`, written to the new repository's own configuration.
    pub email: &'a str,
    /// The first commit's message.
    pub message: &'a str,
}

/// Makes `dir` (which exists and holds the project's files) a git repository on
/// `first.branch` whose first commit holds every file in it. The repository's own configuration
/// gets the identity and `commit.gpgSign=false`, so its later commits need nothing from the
/// machine's configuration; no hook runs.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("README.md"), "hello\n")?;
/// epic_git_ops::init_repository(
///     dir.path(),
///     &epic_git_ops::FirstCommit {
///         branch: "main",
///         name: "Demo",
///         email: "demo@example.invalid",
///         message: "the project",
///     },
/// )?;
/// assert!(dir.path().join(".git").is_dir());
/// # Ok(()) }
/// ```
pub fn init_repository(dir: &Path, first: &FirstCommit<'_>) -> Result<(), GitCommandError> {
    let cli = Cli::new();
    let branch = format!("--initial-branch={}", first.branch);
    cli.run(dir, args!["init", "--quiet", &branch])?;
    cli.run(dir, args!["config", "user.name", first.name])?;
    cli.run(dir, args!["config", "user.email", first.email])?;
    cli.run(dir, args!["config", "commit.gpgsign", "false"])?;
    cli.run(dir, args!["add", "--all"])?;
    cli.run(
        dir,
        args!["commit", "--quiet", "--no-verify", "-m", first.message],
    )?;
    Ok(())
}
