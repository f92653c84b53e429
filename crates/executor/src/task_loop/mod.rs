//! The task loop of one story in its worktree: plan, then per open task a coder chat, review
//! rounds (gates, perimeter, reviewers), a commit and a tick in the checkpoint. By concern:
//!
//! - `job`: what a loop is given and gives back ([`StoryJob`], [`Seats`], [`LoopConfig`],
//!   [`NoopPolicy`], [`StoryRun`], [`TasksDone`]);
//! - `parts`: the loop ([`TaskLoop`]): the parts every story's run borrows;
//! - `context`: one run of it on a story (`Run`), the context every step takes: git and the
//!   chats;
//! - `plan`: the checkpoint, and the plan: asked of the coder, held to the cap and the story;
//! - `task`: one task: the coder's turns, the review rounds, the commit;
//! - `review`: a review round: the gates, the perimeter gate and the reviewers;
//! - `leftovers`: a failed task's changes, and what is uncommitted after the last task, set
//!   aside as a patch;
//! - `run`: the orchestration on top: [`TaskLoop::run`], the plan, then the tasks in turn.
//!
//! The files import one way: `job` and `parts` at the bottom, `context` on them, each step on
//! `context`, `run` on the steps.

mod context;
mod job;
mod leftovers;
mod parts;
mod plan;
mod review;
mod run;
mod task;

pub use job::{
    LoopConfig, NoopPolicy, PlannerPolicy, SMALL_STORY, Seats, StoryJob, StoryRun, TasksDone,
};
pub use parts::TaskLoop;
