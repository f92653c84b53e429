//! The task loop ([`TaskLoop`]) and one run of it on a story ([`Run`]): the open tasks in
//! turn, a failed task's changes kept aside, the git calls off the async workers, and the chats
//! each task's turns go through.

use std::collections::BTreeSet;
use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use epic_git_ops::{CommitId, Git};
use tokio_util::sync::CancellationToken;

use crate::blocked::{self, Claim};
use crate::chat::{Chat, ChatContext, Recorder};
use crate::error::StoryError;
use crate::event::{Event, EventSink};
use crate::gates::Gates;
use crate::pause::SeatPauses;
use crate::prompts::{self};
use epic_agents::{Reply, Role, SeatError};
use epic_guard::TurnGuard;
use epic_process::offload;

use super::job::{LoopConfig, Seats, StoryJob, StoryRun, TasksDone};
use super::task::TaskEnd;

/// The inner loop of one story: seats, gates and git, reused for every story of a run.
///
/// # Design
///
/// Everything the loop touches is passed in ([`Git`], [`Gates`], [`Seats`], an [`EventSink`]),
/// nothing is global, and [`run`](Self::run) borrows `&self`, so one `TaskLoop` in an `Arc` can
/// run many stories at once on a multi-threaded runtime (its futures are `Send`). Git calls and
/// the checkpoint's reads and writes block, so each runs in `spawn_blocking`. The checkpoint is
/// the only durable state: it is written (atomically) after the planner and after each task's
/// commit, never before, so a run killed at any instant redoes at most the task it was in, and a
/// rerun never re-plans.
///
/// Per story:
///
/// 1. **Plan**, unless the checkpoint exists (it wins, even if the plan changed: a changed
///    story is the scheduler's to restart). The coder, as planner, replies with the task list
///    as JSON; an unreadable reply is asked again once with the parse error, a second one
///    plans a single task, the whole story. A list longer than `max_tasks` is sent back once
///    with its length and the cap, and fails the story ([`StoryError::TooManyTasks`]) if the
///    re-plan is not within it. Tasks that name paths outside the story
///    ([`epic_perimeter::stray_tasks`]) are sent back once; tasks still naming another story's
///    paths are then dropped, unless that would drop them all (a re-plan longer than the cap
///    keeps the first plan).
/// 2. **Per open task**, a fresh coder chat whose standing instructions hold the perimeter
///    rules, the `BLOCKED_ON:` rule, that the runtime owns git, the story, and the plan so far.
///    A turn that changed nothing (no dirty path, no new commit) is asked once whether the task
///    is already satisfied (`TASK_ALREADY_SATISFIED`): if so it is ticked without a commit.
///    If it still changed nothing without confirming, the no-op policy decides
///    ([`LoopConfig::noop`]): `complete` ticks it with a warning
///    ([`Event::TaskNoopUnconfirmed`]) while its gates are green, `fail` fails the story.
/// 3. **Review rounds**, up to `max_rounds`: the gates and the perimeter gate (every path
///    changed against the epic branch, committed or not); red sends the issues to the coder;
///    green asks the reviewers (concurrently), whose issues go to the coder. A clean round, or
///    the last one, settles the task. The gates must be green to commit, else the story fails
///    naming the gate; unresolved reviewer issues do not block.
/// 4. **Commit** `<story>: <task>` if the worktree is still on the story branch, then tick.
///
/// **Nothing is committed that no coder turn confirmed.** epic commits a task's work only after
/// a coder turn of that task that replied, and a turn replies on the worktree as it finds it: so
/// every coder turn that takes up an attempt that never replied is told, after its prompt, what
/// the worktree holds uncommitted ([`Chat::telling_leftovers`]): a request the chat runs again
/// (after a stall, a loop, a usage limit or an outage, on this seat or the roster's next), an
/// attempt the seat retries after a transient failure, and the first turn of a task on a
/// worktree a killed run left changes in. A task whose turn fails puts the worktree back at its
/// checkpoint (`Run::reject`), so a stopped attempt's changes are committed only after a
/// later turn, told of them, replied. What the worktree still holds after the last task
/// (a killed run's changes with no open task to take them up) is set aside the same way
/// (`Run::set_aside_leftovers`); the story's catch-up never commits uncommitted changes.
///
/// A coder reply whose last non-empty line is `BLOCKED_ON: <need>` is checked against the plan
/// (and, if the plan cannot settle it, by the verifier seat): a claim on the story's own path, a
/// merged dependency's or a dependent's gets one pushback turn saying so, once per story; any
/// other claim, or a second one, ends the story at once as [`StoryError::Blocked`] (the
/// reference ran on to the end of the loop first; stopping saves the turns of a story that fails
/// anyway). An agent that commits on its own is tolerated: its
/// commits are on the story branch and count. One that switches its worktree to another branch
/// fails the story before anything is committed.
pub struct TaskLoop {
    pub(super) git: Arc<dyn Git>,
    pub(super) gates: Gates,
    pub(super) seats: Seats,
    pub(super) config: LoopConfig,
    pub(super) events: EventSink,
    /// The guard on epic's files, checked after every turn; none for a loop run on its own.
    pub(super) guard: Option<Arc<TurnGuard>>,
    /// The run's budget, checked before every turn; none for a loop run on its own.
    pub(super) budget: Option<Arc<crate::budget::Budget>>,
    /// The run's seat pauses around every turn; none for a loop run on its own.
    pub(super) pauses: Option<Arc<SeatPauses>>,
}

impl fmt::Debug for TaskLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLoop")
            .field("gates", &self.gates)
            .field("seats", &self.seats)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl TaskLoop {
    /// A loop over these parts.
    pub fn new(
        git: Arc<dyn Git>,
        gates: Gates,
        seats: Seats,
        config: LoopConfig,
        events: EventSink,
    ) -> Self {
        Self {
            git,
            gates,
            seats,
            config,
            events,
            guard: None,
            budget: None,
            pauses: None,
        }
    }

    /// This loop with the run's `budget` checked before every agent turn.
    #[must_use]
    pub(crate) fn with_budget(mut self, budget: Arc<crate::budget::Budget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// This loop with the run's seat pauses around every agent turn.
    #[must_use]
    pub(crate) fn with_pauses(mut self, pauses: Arc<SeatPauses>) -> Self {
        self.pauses = Some(pauses);
        self
    }

    /// This loop with `guard` checked after every agent turn, and its checkpoint writes made
    /// through it.
    #[must_use]
    pub(crate) fn with_guard(mut self, guard: Arc<TurnGuard>) -> Self {
        self.guard = Some(guard);
        self
    }

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

/// Why [`Run::set_aside`] left the worktree as it was: the note saying so, and the patch if it
/// was kept (only the rollback failed).
struct NotSetAside {
    kept: Option<PathBuf>,
    problem: String,
}

/// One run of the loop on one story.
pub(super) struct Run<'a> {
    pub(super) parts: &'a TaskLoop,
    pub(super) job: &'a StoryJob,
    pub(super) recorder: Arc<Recorder>,
    pub(super) cancel: CancellationToken,
    /// Where the failed task's rejected changes were kept ([`Run::reject`]).
    pub(super) rejected: Option<PathBuf>,
    /// Whether the one pushback turn after a rejected `BLOCKED_ON:` claim was used.
    pub(super) pushed_back: AtomicBool,
}

impl Run<'_> {
    pub(super) fn story_id(&self) -> String {
        self.job.story.id.clone()
    }

    pub(super) fn emit(&self, event: Event) {
        self.recorder.emit(event);
    }

    pub(super) fn check_cancel(&self) -> Result<(), StoryError> {
        if self.cancel.is_cancelled() {
            Err(StoryError::Cancelled)
        } else {
            Ok(())
        }
    }

    pub(super) async fn run(&mut self) -> Result<TasksDone, StoryError> {
        self.check_branch().await?;
        let (mut plan, origin) = self.load_or_plan().await?;
        let resumed = origin == super::plan::Origin::Checkpoint;
        let already_done = plan.tasks.iter().filter(|task| task.completed).count();
        self.emit(Event::TasksPlanned {
            story: self.story_id(),
            tasks: plan.tasks.iter().map(|task| task.title.clone()).collect(),
            done: already_done,
            resumed,
            planner: origin == super::plan::Origin::Planner,
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

    /// After task `title`, started at `start`, failed with `error`: keeps what it changed (its
    /// commits and uncommitted files, new ones included, ignored ones not) as a patch at
    /// [`StoryJob::rejected`], then puts the worktree back at `start`, so that a rerun starts
    /// the task again from its checkpoint instead of committing the rejected work as work in
    /// progress. Where the patch is, if one was kept. A cancelled run keeps its work in place
    /// (a rerun resumes it), and a worktree on another branch, or whose branch is gone, is not
    /// touched; when the patch cannot be kept, the worktree stays as it is. Best effort: what
    /// goes wrong is noted.
    pub(super) async fn reject(
        &self,
        error: &StoryError,
        title: &str,
        start: &CommitId,
    ) -> Option<PathBuf> {
        if matches!(
            error,
            StoryError::Cancelled | StoryError::BranchSwitched { .. }
        ) || self.cancel.is_cancelled()
            || self.check_branch().await.is_err()
        {
            return None;
        }
        // A story branch an agent deleted is left for the rerun to start over: resetting the
        // worktree would make it again.
        let branch = format!("refs/heads/{}", self.job.branch);
        if self
            .git("read the story branch", move |git, worktree| {
                git.rev_parse(worktree, &branch)
            })
            .await
            .is_err()
        {
            return None;
        }
        let what = format!("the failed task \"{title}\"");
        match self.set_aside(&what, start).await {
            Ok(kept) => {
                self.recorder.note(match &kept {
                    Some(path) => format!(
                        "the worktree is back at the checkpoint of {what}; its rejected changes \
                         are kept in `{}`",
                        path.display()
                    ),
                    None => format!("the worktree is back at the checkpoint of {what}"),
                });
                kept
            }
            Err(NotSetAside { kept, problem }) => {
                self.recorder.note(problem);
                kept
            }
        }
    }

    /// After the last task, what the worktree still holds uncommitted was confirmed by no
    /// coder turn: a killed run's turn's changes when no open task was left to take them up
    /// (the run was killed in a judge round's coder turn, say), or a gate's edits of tracked
    /// files after a task that changed nothing. They are set aside like a failed task's
    /// changes, a patch at [`StoryJob::rejected`], and the worktree put back at its head, so the
    /// steps after the tasks (the catch-up, the perimeter's commit) never commit them.
    pub(super) async fn set_aside_leftovers(&self) -> Result<(), StoryError> {
        if self.dirty_paths().await?.is_empty() {
            return Ok(());
        }
        let head = self.head().await?;
        match self
            .set_aside("the changes no coder turn confirmed", &head)
            .await
        {
            Ok(kept) => {
                self.recorder.note(format!(
                    "the worktree held uncommitted changes that no coder turn confirmed (a \
                     stopped turn's, with no open task left to take them up); they are set \
                     aside{}, never committed",
                    kept.map(|path| format!(" in `{}`", path.display()))
                        .unwrap_or_default()
                ));
                Ok(())
            }
            Err(NotSetAside { problem, .. }) => Err(StoryError::Git {
                action: "set aside the changes no coder turn confirmed".to_owned(),
                source: problem.into(),
            }),
        }
    }

    /// Keeps what the worktree changed since `start` (commits and uncommitted files, new ones
    /// included, ignored ones not) as a patch at [`StoryJob::rejected`], then puts the worktree
    /// back at `start`. `what` names the changes in what goes wrong. Where the patch is, if
    /// anything changed.
    async fn set_aside(
        &self,
        what: &str,
        start: &CommitId,
    ) -> Result<Option<PathBuf>, NotSetAside> {
        let base = *start;
        let diff = match self
            .git("keep the failed task's changes", move |git, worktree| {
                git.worktree_patch(worktree, &base)
            })
            .await
        {
            Ok(diff) => diff,
            Err(error) => {
                return Err(NotSetAside {
                    kept: None,
                    problem: format!(
                        "the changes of {what} could not be kept, so the worktree stays as it \
                         is: {}",
                        error.reason()
                    ),
                });
            }
        };
        let kept = if diff.is_empty() {
            None
        } else {
            let path = self.job.rejected.clone();
            let target = path.clone();
            let guard = self.parts.guard.clone();
            let written = offload::blocking(move || {
                let write = || epic_state_store::write_atomic(&target, &diff);
                match guard {
                    Some(guard) => guard.epic_write(&target, write),
                    None => write(),
                }
            })
            .await;
            let problem = match written {
                Ok(Ok(())) => None,
                Ok(Err(error)) => Some(error.to_string()),
                Err(error) => Some(error.to_string()),
            };
            if let Some(problem) = problem {
                return Err(NotSetAside {
                    kept: None,
                    problem: format!(
                        "the changes of {what} could not be kept in `{}`, so the worktree stays \
                         as it is: {problem}",
                        path.display()
                    ),
                });
            }
            Some(path)
        };
        if let Err(error) = self
            .git(
                "put the worktree back at the task's checkpoint",
                move |git, worktree| git.rollback(worktree, &base),
            )
            .await
        {
            return Err(NotSetAside {
                kept,
                problem: error.reason(),
            });
        }
        Ok(kept)
    }

    /// Runs a git-ops call on the story's worktree off the async workers ([`offload::git`]).
    pub(super) async fn git<T, E>(
        &self,
        action: &str,
        op: impl FnOnce(&dyn Git, &Path) -> Result<T, E> + Send + 'static,
    ) -> Result<T, StoryError>
    where
        T: Send + 'static,
        E: Error + Send + Sync + 'static,
    {
        let worktree = self.job.worktree.clone();
        // An agent may have pointed the worktree's `.git` at another worktree's registration:
        // git run there would act on that one (the epic worktree's index and branch).
        offload::git(
            &self.parts.git,
            action,
            move |git| match epic_git_ops::linked_elsewhere(&worktree) {
                Some(other) => Ok(Err(StoryError::LinkedElsewhere { worktree, other })),
                None => op(git, &worktree).map(Ok),
            },
        )
        .await
        .map_err(|error| StoryError::Git {
            action: error.action,
            source: error.source,
        })?
    }

    /// Fails unless the worktree is on the story branch.
    pub(super) async fn check_branch(&self) -> Result<(), StoryError> {
        let found = self
            .git("read the worktree's branch", |git, worktree| {
                git.current_branch(worktree)
            })
            .await?;
        if found.as_deref() == Some(self.job.branch.as_str()) {
            Ok(())
        } else {
            Err(StoryError::BranchSwitched {
                worktree: self.job.worktree.clone(),
                expected: self.job.branch.clone(),
                found,
            })
        }
    }

    pub(super) async fn head(&self) -> Result<CommitId, StoryError> {
        self.git("read the worktree's head", |git, worktree| {
            git.checkpoint(worktree)
        })
        .await
    }

    pub(super) async fn dirty_paths(&self) -> Result<Vec<String>, StoryError> {
        self.git("read the worktree's status", |git, worktree| {
            git.status(worktree, &[]).map(|status| status.paths)
        })
        .await
    }

    /// Whether the worktree changed since `head`: dirty paths, or new commits of the agent.
    pub(super) async fn changed_since(&self, head: &CommitId) -> Result<bool, StoryError> {
        Ok(!self.dirty_paths().await?.is_empty() || self.head().await? != *head)
    }

    /// Paths changed since `base` (a commit), committed or not.
    pub(super) async fn paths_changed_since(
        &self,
        base: String,
    ) -> Result<Vec<String>, StoryError> {
        let mut paths: BTreeSet<String> = self
            .git(
                "list the paths changed by the task",
                move |git, worktree| git.changed_paths_vs_base(worktree, &base, "HEAD"),
            )
            .await?
            .into_iter()
            .collect();
        paths.extend(self.dirty_paths().await?);
        Ok(paths.into_iter().collect())
    }

    pub(super) fn context(&self, task: Option<&str>) -> ChatContext {
        ChatContext {
            epic: self.job.epic.clone(),
            story: Arc::clone(&self.job.story),
            task: task.map(str::to_owned),
            worktree: self.job.worktree.clone(),
            slot: self.job.slot,
            turn_timeout: self.parts.config.turn_timeout,
            cancel: self.cancel.clone(),
            sandbox: self.parts.config.sandbox.clone(),
        }
    }

    /// What every role's standing instructions are built from.
    pub(super) fn prompt_context(&self) -> prompts::Context<'_> {
        prompts::Context {
            plan: &self.job.plan,
            story: &self.job.story,
            briefing: &self.job.briefing,
            rules: &self.parts.config.extra_rules,
        }
    }

    pub(super) fn rules(&self) -> String {
        prompts::story_rules(self.prompt_context())
    }

    /// Asks `chat`, turning a failed turn into the story's error.
    pub(super) async fn ask(
        &self,
        chat: &mut Chat,
        role: Role,
        task: Option<&str>,
        prompt: String,
    ) -> Result<Reply, StoryError> {
        chat.ask(prompt).await.map_err(|source| match source {
            SeatError::Cancelled => StoryError::Cancelled,
            source => StoryError::Agent {
                role,
                task: task.map(str::to_owned),
                source,
            },
        })
    }

    /// Asks the coder of task `task`. A reply ending with `BLOCKED_ON:` is checked
    /// ([`blocked::checked`]): rejected, and the story's one pushback not yet used, the coder is
    /// told why in the same chat and its reply to that is the turn's; else the story ends.
    pub(super) async fn ask_coder(
        &self,
        chat: &mut Chat,
        task: &str,
        prompt: String,
    ) -> Result<Reply, StoryError> {
        let reply = self.ask(chat, Role::Coder, Some(task), prompt).await?;
        let claim = Claim {
            plan: &self.job.plan,
            story: &self.job.story,
            task: Some(task),
            verifier: self.parts.seats.verifier.as_ref(),
            context: self.context(None),
            recorder: &self.recorder,
            pushed_back: &self.pushed_back,
        };
        blocked::checked(claim, chat, reply).await
    }
}
