//! The lifecycle of one story, a step per file, in the order [`run_story`] takes them:
//!
//! 1. [`prepare`]: its worktree and branch, with the hash-guarded resume rules, and what a run
//!    that died left there (lock files, a half-made worktree, an unfinished merge);
//! 2. [`catch_up`]: a merge of the proven epic head into the story branch;
//! 3. [`setup`]: the setup commands in a fresh or caught-up worktree, then [`briefing`]: what
//!    the agents' prompts carry beyond the plan entry;
//! 4. the task loop ([`TaskLoop`], `task_loop/`);
//! 5. [`perimeter`]: strays put back, the perimeter enforced, the tests guarded;
//! 6. [`judge`]: the judge rounds, each but the last followed by a coder round on its findings;
//! 7. [`integrate`]: the merge under the merge lock, proven by the gates on the epic worktree or
//!    undone; undone, [`revise`]: a merge revision, the story back to its coder and through its
//!    steps again from 2 (`--merge-revisions`);
//!
//! and, as a cleanup of the run loop's once the story ended, [`cleanup`]: the removal of the
//! merged story's worktree. `shared.rs`: what every story of a run shares ([`Shared`]);
//! `work.rs`: the story at work ([`Work`]) and how it ends ([`StoryEnd`]); a failure is a [`Failure`] (`failure.rs`, the
//! one place its reason text is written).

mod briefing;
mod catch_up;
mod cleanup;
mod failure;
mod integrate;
mod judge;
mod perimeter;
mod prepare;
mod revise;
mod setup;
mod shared;
mod slot;
mod work;

#[cfg(doc)]
use crate::task_loop::TaskLoop;
pub(crate) use cleanup::{Preparing, remove_merged_worktree};
pub(crate) use failure::{Failure, dirty_message, git_reason};
pub use revise::{Revisions, RevisionsUnreadable};
pub(crate) use shared::{EpicHead, Shared};
pub(crate) use slot::retire_slots;
pub(crate) use work::{Ending, Stop, StoryEnd, millis, run_story};
use work::{Work, turn_failed};
