//! Committing everything in a worktree (`git add -A` + `git commit`), and the fallback identity.
//!
//! gix writes commits, but has no `add -A` (building a tree from the worktree through the
//! index with git's filters, stat refresh and racy-timestamp handling); the command line does
//! both halves, so the index it leaves behind is exactly git's.

use std::ffi::OsString;
use std::path::Path;

use crate::cli::{args, words};
use crate::error::{Cause, CommitError};
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, CommitOutcome};

/// The name epic commits as where no identity is configured.
pub const FALLBACK_NAME: &str = "epic";
/// The email epic commits as where no identity is configured.
pub const FALLBACK_EMAIL: &str = "epic@localhost";

/// `-c user.name=epic` and `-c user.email=…` for whichever of the two git would not find.
///
/// Configuration is what counts, as git reads it in `worktree` with this handle's environment;
/// the variables that beat configuration (`GIT_AUTHOR_NAME`, `GIT_COMMITTER_EMAIL`, …) still win
/// over these `-c` values, and `EMAIL` counts as an email. The machine's login name and host
/// name, which git would otherwise guess from, do not count: a guessed identity is how commits
/// from a fresh CI machine end up as `root@localhost.localdomain`.
pub(crate) fn identity_args(git: &GixGit, worktree: &Path) -> Result<Vec<OsString>, Cause> {
    let output = git.cli.output(
        worktree,
        args!["config", "--get-regexp", r"^user\.(name|email)$"],
    )?;
    // Exit 1: none of the keys is set.
    if !output.status.success() && output.status.code() != Some(1) {
        return Err(Cause::Cli(crate::cli::failure(
            args!["config", "--get-regexp", r"^user\.(name|email)$"],
            &output,
        )));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let has = |key: &str| {
        text.lines().any(|line| {
            line.split_once(' ')
                .is_some_and(|(name, value)| name == key && !value.trim().is_empty())
        })
    };
    let mut out = Vec::new();
    if !has("user.name") {
        out.push("-c".into());
        out.push(format!("user.name={FALLBACK_NAME}").into());
    }
    if !has("user.email")
        && git
            .cli
            .env_var("EMAIL")
            .is_none_or(|email| email.is_empty())
    {
        out.push("-c".into());
        out.push(format!("user.email={FALLBACK_EMAIL}").into());
    }
    Ok(out)
}

pub(crate) fn commit_all(
    git: &GixGit,
    worktree: &Path,
    message: &str,
) -> Result<CommitOutcome, CommitError> {
    let fail = |source| CommitError::Failed {
        worktree: worktree.to_owned(),
        source,
    };
    git.cli
        .run(worktree, args!["add", "-A"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    let mut arguments = identity_args(git, worktree).map_err(fail)?;
    arguments.extend(
        [
            "commit",
            "--quiet",
            "--no-verify",
            "--allow-empty-message",
            "-m",
            message,
        ]
        .map(OsString::from),
    );
    let arguments: Vec<&std::ffi::OsStr> = arguments.iter().map(OsString::as_os_str).collect();
    let output = git
        .cli
        .output(worktree, &arguments)
        .map_err(|error| fail(Cause::Cli(error)))?;
    if !output.status.success() {
        let said = words(&output);
        if said.contains("nothing to commit") || said.contains("nothing added to commit") {
            return Ok(CommitOutcome::NothingToCommit);
        }
        return Err(fail(Cause::Cli(crate::cli::failure(&arguments, &output))));
    }
    let repo = git.repo_at(worktree).map_err(fail)?;
    let head = rev::head(&repo, worktree).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    Ok(CommitOutcome::Committed(CommitId(head)))
}
