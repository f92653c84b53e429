//! How a story ended ([`Ending`]) and its result for the run loop ([`StoryEnd`]).

use std::path::PathBuf;

use epic_report::{InPlace, Timestamp, UsageMeter};

#[cfg(doc)]
use super::cleanup::remove_merged_worktree;
use crate::failure::Failure;

/// How a story ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// Merged (now, or it already was; or found already in place); `proven_with`: the stories proven together with it by
    /// one gate run of the merge queue, itself included (empty when alone).
    Merged {
        judge: Option<String>,
        proven_with: Vec<String>,
        /// Set when it merged nothing because its work was already in place, with the evidence
        /// that showed it.
        in_place: Option<InPlace>,
    },
    /// Failed; when [`Failure::halts`], new stories must not start (the epic worktree is dirty).
    Failed(Failure),
    /// Cancelled from outside; its state stays resumable.
    Cancelled,
    /// Its coder asked what only a person can answer (`--on-blocked ask`); its state says it
    /// waits, and stays resumable.
    Waiting {
        /// The question, in the coder's words.
        question: String,
    },
}

/// A story's result for the run loop.
#[derive(Debug)]
pub(crate) struct StoryEnd {
    pub(crate) ending: Ending,
    pub(crate) branch: Option<String>,
    /// The worktree of a story that merged in this run, for the run loop to remove
    /// ([`remove_merged_worktree`]); `None` with `keep_worktrees`.
    pub(crate) merged_worktree: Option<PathBuf>,
    pub(crate) usage: UsageMeter,
    /// Its merge revisions so far, across runs (`--merge-revisions`).
    pub(crate) revisions: u32,
    pub(crate) started_at: Timestamp,
    pub(crate) finished_at: Timestamp,
}
