//! The task loop of one story in its worktree: plan, then per open task a coder chat, review
//! rounds (gates, perimeter, reviewers), a commit and a tick in the checkpoint. By concern:
//!
//! - `job`: what a loop is given and gives back ([`StoryJob`], [`Seats`], [`LoopConfig`],
//!   [`NoopPolicy`], [`StoryRun`], [`TasksDone`]);
//! - `run`: the loop ([`TaskLoop`]) and one run of it on a story: the tasks in turn, a failed
//!   task's changes kept, git and the chats;
//! - `plan`: the checkpoint, and the plan: asked of the coder, held to the cap and the story;
//! - `task`: one task: the coder's turns, the review rounds, the commit;
//! - `review`: a review round: the gates, the perimeter gate and the reviewers.

mod job;
mod plan;
mod review;
mod run;
mod task;

pub use job::{
    LoopConfig, NoopPolicy, PlannerPolicy, SMALL_STORY, Seats, StoryJob, StoryRun, TasksDone,
};
pub use run::TaskLoop;
