//! The typed errors of every operation, and the causes they carry.
//!
//! Each operation family has its own enum whose variants name what failed with the context a
//! caller needs (the worktree, the branch, the revision). The underlying failure is the
//! variant's [`Cause`]: gix, the git command line, or the file system.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What failed underneath an operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Cause {
    /// gix reported an error.
    #[error(transparent)]
    Gix(#[from] gix::Error),
    /// The git command line failed.
    #[error(transparent)]
    Cli(#[from] GitCommandError),
    /// A file system operation failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A revision an operation depends on did not resolve.
    #[error(transparent)]
    Rev(Box<RevError>),
    /// The status an operation depends on could not be read.
    #[error(transparent)]
    Status(Box<StatusError>),
    /// The state of a worktree an operation depends on could not be taken.
    #[error(transparent)]
    Diff(Box<DiffError>),
}

impl Cause {
    pub(crate) fn gix(error: impl Into<gix::Error>) -> Self {
        Self::Gix(error.into())
    }
}

/// A failed run of the git command line: which command, how it ended, and what git said.
#[derive(Debug)]
pub struct GitCommandError {
    pub(crate) command: String,
    pub(crate) code: Option<i32>,
    pub(crate) detail: String,
    pub(crate) spawn: Option<io::Error>,
}

impl GitCommandError {
    /// The command as run, `git <args>` joined by spaces (without the `-c` options every call adds).
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The exit code, if git ran and exited normally.
    pub fn code(&self) -> Option<i32> {
        self.code
    }

    /// What git wrote to stderr and stdout, trimmed.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// Whether git could not be started at all (not on `PATH`, say), rather than ran and failed.
    pub fn not_started(&self) -> bool {
        self.spawn.is_some()
    }
}

impl fmt::Display for GitCommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.spawn, self.code) {
            (Some(_), _) => write!(f, "failed to run `{}`", self.command),
            (None, Some(code)) if self.detail.is_empty() => {
                write!(f, "`{}` exited with code {code}", self.command)
            }
            (None, None) if self.detail.is_empty() => {
                write!(f, "`{}` was killed by a signal", self.command)
            }
            (None, _) => write!(f, "`{}` failed: {}", self.command, self.detail),
        }
    }
}

impl std::error::Error for GitCommandError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.spawn
            .as_ref()
            .map(|error| error as &(dyn std::error::Error + 'static))
    }
}

/// An error returned by [`GixGit::discover`](crate::GixGit::discover).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// No repository contains the directory, or it could not be opened.
    #[error("failed to open a git repository at or above `{}`", dir.display())]
    Discover {
        /// The directory the search started from.
        dir: PathBuf,
        /// What gix reported.
        #[source]
        source: gix::Error,
    },
}

/// An error returned when resolving revisions, branches of worktrees, or the head.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RevError {
    /// The repository has no commits yet, so `HEAD` names nothing.
    #[error("the repository at `{}` has no commits yet", worktree.display())]
    Unborn {
        /// The worktree whose head was asked for.
        worktree: PathBuf,
    },
    /// The revision does not name a commit.
    #[error("revision `{rev}` does not name a commit")]
    NotFound {
        /// The revision as given.
        rev: String,
        /// What gix reported.
        #[source]
        source: Cause,
    },
    /// The directory is not inside a worktree of this repository.
    #[error("failed to open the worktree at `{}`", worktree.display())]
    Open {
        /// The directory as given.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
    /// Reading the repository failed.
    #[error("failed to read revisions in `{}`", worktree.display())]
    Read {
        /// The worktree the revisions were resolved in.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by the branch operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BranchError {
    /// The name is not a valid branch name.
    #[error("`{name}` is not a valid branch name")]
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// Creating a branch that already exists.
    #[error("branch `{name}` already exists")]
    AlreadyExists {
        /// The branch name.
        name: String,
    },
    /// The branch is checked out in a worktree, so it cannot be deleted.
    #[error("branch `{name}` is checked out in a worktree")]
    CheckedOut {
        /// The branch name.
        name: String,
    },
    /// The commit to create the branch at does not exist.
    #[error("commit {commit} does not exist")]
    MissingCommit {
        /// The commit.
        commit: crate::CommitId,
    },
    /// Reading or writing the reference failed.
    #[error("failed to update branch `{name}`")]
    Failed {
        /// The branch name.
        name: String,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::config_changes`](crate::Git::config_changes).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration could not be read.
    #[error("failed to read the repository's git configuration")]
    Read {
        /// What git said.
        #[source]
        source: GitCommandError,
    },
}

/// An error returned by the linked-worktree operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorktreeError {
    /// Adding a worktree for a new branch whose name is taken.
    #[error("branch `{branch}` already exists")]
    BranchExists {
        /// The branch name.
        branch: String,
    },
    /// Adding a worktree for an existing branch that does not exist.
    #[error("branch `{branch}` does not exist")]
    NoSuchBranch {
        /// The branch name.
        branch: String,
    },
    /// The branch is already checked out in another worktree.
    #[error("branch `{branch}` is already checked out in a worktree")]
    BranchCheckedOut {
        /// The branch name.
        branch: String,
    },
    /// The destination exists and is not an empty directory.
    #[error("`{}` already exists", path.display())]
    PathExists {
        /// The destination.
        path: PathBuf,
    },
    /// The start point of a new branch does not name a commit.
    #[error("failed to resolve the start point of a new worktree")]
    StartPoint(#[source] RevError),
    /// The branch name is invalid, or looking it up failed.
    #[error("failed to check the branch of a new worktree")]
    Branch(#[from] BranchError),
    /// A worktree switched to a branch ([`Git::switch_worktree`](crate::Git::switch_worktree))
    /// that is not proven clean after the switch.
    #[error("worktree `{}` is not clean after its switch: {what}", path.display())]
    NotClean {
        /// The worktree.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// git refused or failed.
    #[error("failed to {action} worktree `{}`", path.display())]
    Failed {
        /// What was attempted: `add`, `remove`, `move`, `list`, `prune`, `switch`, `detach`,
        /// `seed`.
        action: &'static str,
        /// The worktree (or the repository, for list and prune).
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::status`](crate::Git::status).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// Reading the status failed.
    #[error("failed to read the status of `{}`", worktree.display())]
    Read {
        /// The worktree.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::commit_all`](crate::Git::commit_all).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// Staging or committing failed.
    #[error("failed to commit the changes in `{}`", worktree.display())]
    Failed {
        /// The worktree.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by the three-dot diff operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// A side of the diff does not resolve.
    #[error("failed to resolve a side of the diff")]
    Rev(#[from] RevError),
    /// The two sides share no history.
    #[error("`{base}` and `{head}` have no common ancestor")]
    NoMergeBase {
        /// The base revision.
        base: String,
        /// The head revision.
        head: String,
    },
    /// Computing the diff failed.
    #[error("failed to diff `{head}` against `{base}`")]
    Failed {
        /// The base revision.
        base: String,
        /// The head revision.
        head: String,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::merge`](crate::Git::merge). A conflict is not an error but a
/// [`MergeOutcome::Conflict`](crate::MergeOutcome::Conflict).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// The branch or the worktree's head does not resolve.
    #[error("failed to resolve a side of the merge")]
    Rev(#[from] RevError),
    /// The two sides share no history.
    #[error("`{branch}` shares no history with the head of `{}`", worktree.display())]
    NoMergeBase {
        /// The branch being merged.
        branch: String,
        /// The worktree merged into.
        worktree: PathBuf,
    },
    /// git refused the merge without a conflict, for example because local changes would be
    /// overwritten. The worktree is as it was.
    #[error("git refused to merge `{branch}` into `{}`: {detail}", worktree.display())]
    Refused {
        /// The branch being merged.
        branch: String,
        /// The worktree merged into.
        worktree: PathBuf,
        /// git's words.
        detail: String,
    },
    /// The merge failed.
    #[error("failed to merge `{branch}` into `{}`", worktree.display())]
    Failed {
        /// The branch being merged.
        branch: String,
        /// The worktree merged into.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::advance_worktree`](crate::Git::advance_worktree).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdvanceError {
    /// Local changes stand where the two commits differ: nothing was touched.
    #[error("git refused to move `{}` to {to}: {detail}", worktree.display())]
    Refused {
        /// The worktree.
        worktree: PathBuf,
        /// Where it was to go.
        to: crate::CommitId,
        /// git's words.
        detail: String,
    },
    /// The move failed; the worktree may be between the two commits.
    #[error("failed to move `{}` to {to}", worktree.display())]
    Failed {
        /// The worktree.
        worktree: PathBuf,
        /// Where it was to go.
        to: crate::CommitId,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::write_note`](crate::Git::write_note) and
/// [`Git::notes`](crate::Git::notes).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NoteError {
    /// `git notes add` failed.
    #[error("failed to write the note on {commit} under `{notes_ref}`")]
    Write {
        /// The notes ref.
        notes_ref: String,
        /// The annotated commit.
        commit: crate::CommitId,
        /// What went wrong.
        #[source]
        source: Cause,
    },
    /// Listing or reading the notes failed.
    #[error("failed to read the notes under `{notes_ref}`")]
    Read {
        /// The notes ref.
        notes_ref: String,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::rollback`](crate::Git::rollback).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RollbackError {
    /// The reset or the clean-up failed.
    #[error("failed to roll `{}` back to {to}", worktree.display())]
    Failed {
        /// The worktree.
        worktree: PathBuf,
        /// The checkpoint.
        to: crate::CommitId,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error returned by [`Git::restore_paths`](crate::Git::restore_paths).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// The source revision does not resolve.
    #[error("failed to resolve the source of the restore")]
    Rev(#[from] RevError),
    /// A path is absolute or leaves the worktree.
    #[error("`{path}` is not a path inside the repository")]
    UnsafePath {
        /// The path as given.
        path: String,
    },
    /// Checking out or deleting failed.
    #[error("failed to restore paths in `{}` from `{source_rev}`", worktree.display())]
    Failed {
        /// The worktree.
        worktree: PathBuf,
        /// The revision restored from.
        source_rev: String,
        /// What went wrong.
        #[source]
        source: Cause,
    },
}

/// An error of one of the landing's git operations ([`Git::start_merge`](crate::Git::start_merge)
/// and the others of the landing, `land.rs`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandGitError {
    /// The operation failed.
    #[error("git failed to {action} in `{}`", worktree.display())]
    Failed {
        /// What was being done.
        action: String,
        /// Where.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
    /// git refused the operation, saying why (local changes in the way, a push rejected).
    #[error("git refused to {action} in `{}`: {detail}", worktree.display())]
    Refused {
        /// What was being done.
        action: String,
        /// Where.
        worktree: PathBuf,
        /// git's words.
        detail: String,
    },
}
