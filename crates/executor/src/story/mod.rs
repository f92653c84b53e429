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
//! merged story's worktree.
//!
//! The files import one way. At the bottom: `work.rs`, the story at work (`Work`), the
//! context every step takes; `end.rs`, how a story ended ([`Ending`], [`StoryEnd`]);
//! `revision.rs`, the record of its merge revisions ([`Revisions`]). On them, each step in its
//! own file. On top, `run.rs`: [`run_story`] and the order of the steps. What every story of a
//! run shares ([`Shared`](crate::shared::Shared)) and why a story failed
//! ([`Failure`](crate::failure::Failure)) are the crate's `shared.rs` and `failure.rs`: the
//! merge queue and the run read them too.

mod briefing;
mod catch_up;
mod cleanup;
mod end;
mod integrate;
mod judge;
mod perimeter;
mod prepare;
mod revise;
mod revision;
mod run;
mod setup;
mod slot;
mod work;

#[cfg(doc)]
use crate::task_loop::TaskLoop;
pub(crate) use cleanup::remove_merged_worktree;
pub(crate) use end::{Ending, StoryEnd};
pub use revision::{Revisions, RevisionsUnreadable};
pub(crate) use run::run_story;
pub(crate) use slot::retire_slots;
pub(crate) use work::{record_failed, record_hold, record_retry, record_stop};
