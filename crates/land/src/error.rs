//! Why a landing could not be attempted ([`LandError`]), why an attempt stopped ([`Halt`]), and
//! a state file's failure as a [`LandError`] ([`state_error`]).

use std::path::PathBuf;

use epic_branch::RunError;
use epic_chat::SeatStop;
use epic_process::offload::GitFailed;
use epic_process::sandbox::SandboxUnavailable;

use crate::outcome::NotLanded;

/// Why a landing could not be attempted (docs/contract.md: exit 2, or 3 for a held lock).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandError {
    /// The repository has no working tree.
    #[error("the repository `{}` is bare; epic needs a repository with a working tree", common_dir.display())]
    Bare {
        /// Its git directory.
        common_dir: PathBuf,
    },
    /// The target branch does not exist.
    #[error("the target branch `{target}` does not exist")]
    NoTarget {
        /// The target.
        target: String,
    },
    /// The epic branch does not exist.
    #[error("the epic branch `{branch}` does not exist: has the epic run?")]
    NoEpicBranch {
        /// The branch.
        branch: String,
    },
    /// The target is the epic branch itself.
    #[error("the target `{target}` is the epic branch itself")]
    TargetIsEpicBranch {
        /// The target.
        target: String,
    },
    /// What `epic run` would refuse too: the lock held (exit 3), the epic worktree, the state.
    #[error(transparent)]
    Run(Box<RunError>),
    /// `--sandbox on` and no sandbox here.
    #[error(transparent)]
    Sandbox(#[from] SandboxUnavailable),
    /// Seats of the lander's roster (the coder's) cannot take turns: found by the seat check
    /// before the landing's first lander turn; the epic branch is put back, the target
    /// untouched.
    #[error(transparent)]
    SeatsNotReady(#[from] epic_agents::SeatsNotReady),
    /// A lander turn was stopped by its seats: every seat of the roster paused past
    /// `--max-wait`, or a seat not logged in. The epic branch is put back, the target untouched.
    #[error("{0}")]
    Stopped(SeatStop),
}

impl LandError {
    /// Whether another run holds the epic's lock (docs/contract.md: exit 3).
    pub fn is_locked(&self) -> bool {
        matches!(self, Self::Run(error) if error.is_locked())
    }
}

impl From<GitFailed> for LandError {
    fn from(error: GitFailed) -> Self {
        Self::Run(Box::new(error.into()))
    }
}

impl From<RunError> for LandError {
    fn from(error: RunError) -> Self {
        Self::Run(Box::new(error))
    }
}

/// Why an attempt stopped.
pub(crate) enum Halt {
    NotLanded(NotLanded),
    Cancelled,
    Error(LandError),
}

impl From<GitFailed> for Halt {
    fn from(error: GitFailed) -> Self {
        Self::Error(error.into())
    }
}

impl From<LandError> for Halt {
    fn from(error: LandError) -> Self {
        Self::Error(error)
    }
}

pub(crate) fn state_error(
    action: &str,
    error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> LandError {
    LandError::Run(Box::new(RunError::State {
        action: action.to_owned(),
        source: error.into(),
    }))
}
