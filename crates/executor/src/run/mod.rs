//! Running a whole epic ([`run_epic`]), a step per file: what a run is given and gives back
//! ([`RunConfig`], [`RunOutcome`], `epic_branch::RunError`, in the crate's `config.rs`), everything before the first story
//! (`preflight.rs`: the lock, the baseline; `epic_branch.rs`: the epic branch in its worktree;
//! `recover.rs`: a merge a dead run left unproven, the stories merged on earlier runs), the scheduler loop that starts
//! ready stories in free slots and records how they end (`event_loop.rs`; each story's flaky gates
//! from `flakes.rs`), and the report as it stands (`report.rs`).

mod epic;
mod event_loop;
mod flakes;
mod inbox;
mod preflight;
mod recover;
mod report;

pub use crate::config::{
    DEFAULT_MAX_WAIT, DEFAULT_MERGE_BATCH, DEFAULT_STALL_TIMEOUT, OnBlocked, RunConfig, RunOutcome,
    WorktreeMode,
};
pub use epic::run_epic;
