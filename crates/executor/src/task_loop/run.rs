//! The task loop run on a story ([`TaskLoop::run`]) and its orchestration ([`Run::run`]): the
//! plan, then the open tasks in turn, each committed and ticked, a failed task's changes set
//! aside, and what is left uncommitted after the last set aside too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

use crate::error::StoryError;
use epic_chat::Recorder;
use epic_events::Event;

use super::context::Run;
use super::job::{StoryJob, StoryRun, TasksDone};
use super::parts::TaskLoop;
use super::plan::Origin;
use super::task::TaskEnd;

impl TaskLoop {
    /// Runs the story's open tasks in its worktree until all are done or one fails.
    ///
    /// # Cancel safety
    ///
    /// Cancelling `cancel` ends the running turn or gate (its process group is killed) and
    /// returns [`StoryError::Cancelled`]; dropping the future does the same without a result.
    /// Either way the checkpoint holds every task committed so far, and a rerun continues at
    /// the first open task.
    pub async fn run(&self, job: &StoryJob, cancel: &CancellationToken) -> StoryRun {
        let recorder = Arc::new(
            Recorder::new(
                job.story.id.clone(),
                job.transcripts.clone(),
                self.config.prices.clone(),
                Arc::clone(&self.events),
            )
            .with_guard(self.guard.clone())
            .with_budget(self.budget.clone())
            .with_pauses(self.pauses.clone()),
        );
        let mut run = Run {
            parts: self,
            job,
            recorder: Arc::clone(&recorder),
            cancel: cancel.clone(),
            rejected: None,
            pushed_back: AtomicBool::new(false),
        };
        let result = run.run().await;
        StoryRun {
            result,
            usage: recorder.usage(),
            rejected: run.rejected,
        }
    }
}

impl Run<'_> {
    pub(super) async fn run(&mut self) -> Result<TasksDone, StoryError> {
        self.check_branch().await?;
        let (mut plan, origin) = self.load_or_plan().await?;
        let resumed = origin == Origin::Checkpoint;
        let already_done = plan.tasks.iter().filter(|task| task.completed).count();
        self.emit(Event::TasksPlanned {
            story: self.story_id(),
            tasks: plan.tasks.iter().map(|task| task.title.clone()).collect(),
            done: already_done,
            resumed,
            planner: origin == Origin::Planner,
        });
        let mut committed = Vec::new();
        let mut noop = Vec::new();
        let of = plan.tasks.len();
        // The task a resumed run starts with may be the one an interrupted run was in.
        let mut interrupted = resumed;
        for index in 0..of {
            if plan.tasks[index].completed {
                continue;
            }
            self.check_cancel()?;
            let title = plan.tasks[index].title.clone();
            self.emit(Event::TaskStarted {
                story: self.story_id(),
                task: title.clone(),
                index: index + 1,
                of,
            });
            self.check_branch().await?;
            let start = self.head().await?;
            let end = match self.task(&plan, index, interrupted, &start).await {
                Ok(end) => end,
                Err(error) => {
                    self.rejected = self.reject(&error, &title, &start).await;
                    return Err(error);
                }
            };
            interrupted = false;
            plan.tasks[index].completed = true;
            self.save(&plan).await?;
            match end {
                TaskEnd::Committed(commit) => {
                    self.emit(Event::TaskCommitted {
                        story: self.story_id(),
                        task: title.clone(),
                        commit: commit.map(|id| id.to_hex()),
                    });
                    committed.push(title);
                }
                TaskEnd::Noop => {
                    self.emit(Event::TaskNoop {
                        story: self.story_id(),
                        task: title.clone(),
                    });
                    noop.push(title);
                }
                TaskEnd::NoopUnconfirmed => {
                    self.emit(Event::TaskNoopUnconfirmed {
                        story: self.story_id(),
                        task: title.clone(),
                    });
                    noop.push(title);
                }
            }
        }
        self.set_aside_leftovers().await?;
        Ok(TasksDone {
            plan,
            committed,
            noop,
            already_done,
            pushed_back: self.pushed_back.load(Ordering::Relaxed),
        })
    }
}
