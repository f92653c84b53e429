//! The task loop of one story in its worktree: plan, then per open task a coder chat, review
//! rounds (gates, perimeter, reviewers), a commit and a tick in the checkpoint.

use std::collections::BTreeSet;
use std::error::Error;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use epic_git_ops::{CommitId, CommitOutcome, Git};
use epic_perimeter::{Review, Task, stray_tasks};
use epic_report::{PriceTable, UsageMeter};
use epic_state_store::{EpicDir, UnsafeId};
use epic_story_plan::{Story, StoryPlan};
use tokio_util::sync::CancellationToken;

use crate::blocked::{self, Claim};
use crate::chat::{Chat, ChatContext, Recorder};
use crate::error::StoryError;
use crate::event::{Event, EventSink};
use crate::gates::{GateResult, Gates};
use crate::pause::SeatPauses;
use crate::prompts::{self, Briefing};
use crate::read_only;
use crate::replies::{parse_task_list, parse_verdict};
use crate::task_plan::TaskPlan;
use epic_agents::NOOP_TOKEN;
use epic_agents::{Reply, Role, Seat, SeatError};
use epic_guard::TurnGuard;
use epic_process::offload;
use epic_process::sandbox::Sandbox;

/// One story's place and identity: what [`TaskLoop::run`] works on.
#[derive(Debug, Clone)]
pub struct StoryJob {
    /// The epic's id.
    pub epic: String,
    /// The whole plan: the perimeter rules name the other stories, and stray tasks are judged
    /// against their paths.
    pub plan: Arc<StoryPlan>,
    /// The story.
    pub story: Arc<Story>,
    /// The story's worktree, checked out on `branch`.
    pub worktree: PathBuf,
    /// The story branch (`story/<epic>/<id>`); the loop commits only while it is checked out.
    pub branch: String,
    /// The base of the perimeter check's three-dot diff: the epic branch, or (as the run passes
    /// it) the proven commit of it the story caught up with.
    pub epic_branch: String,
    /// The concurrency slot (`EPIC_SLOT`).
    pub slot: usize,
    /// The task checkpoint, `stories/<id>.plan.md`.
    pub checkpoint: PathBuf,
    /// Where a failed task's rejected changes are kept, `stories/<id>.rejected.patch`.
    pub rejected: PathBuf,
    /// The story's transcript directory, `transcripts/<id>/`.
    pub transcripts: PathBuf,
    /// What the prompts carry beyond the plan entry; a run gathers it
    /// ([`with_briefing`](Self::with_briefing)), [`new`](Self::new) names only the worktree.
    pub(crate) briefing: Arc<Briefing>,
}

impl StoryJob {
    /// The job of story `story` of `plan`, with its branch `story/<epic>/<id>` and its
    /// checkpoint and transcripts in the epic's state directory `dir`.
    pub fn new(
        dir: &EpicDir,
        plan: Arc<StoryPlan>,
        story: Arc<Story>,
        worktree: impl Into<PathBuf>,
        epic_branch: impl Into<String>,
        slot: usize,
    ) -> Result<Self, UnsafeId> {
        let worktree: PathBuf = worktree.into();
        Ok(Self {
            briefing: Arc::new(Briefing::bare(worktree.clone())),
            epic: dir.epic_id().to_owned(),
            branch: format!("story/{}/{}", dir.epic_id(), story.id),
            checkpoint: dir.story_plan(&story.id)?,
            rejected: dir.rejected_patch(&story.id)?,
            transcripts: dir.transcripts(&story.id)?,
            plan,
            story,
            worktree,
            epic_branch: epic_branch.into(),
            slot,
        })
    }

    /// This job with the prompts' `briefing`, gathered by the run.
    #[must_use]
    pub(crate) fn with_briefing(mut self, briefing: Arc<Briefing>) -> Self {
        self.briefing = briefing;
        self
    }
}

/// The agents of a story.
#[derive(Debug, Clone)]
pub struct Seats {
    /// Plans the tasks and implements them.
    pub coder: Arc<dyn Seat>,
    /// Review each task once its gates are green, concurrently; none is fine.
    pub reviewers: Vec<Arc<dyn Seat>>,
    /// Settles `BLOCKED_ON:` claims the plan cannot settle (`--verifier`); none: such a claim
    /// stands.
    pub verifier: Option<Arc<dyn Seat>>,
}

/// What becomes of a task whose coder changed nothing, even when asked once more, and did not
/// confirm it was already satisfied (`--noop`).
//
// The doc comments here are also `epic run --help`'s and `epic schema config`'s text (the CLI
// parses `--noop` and `epic.toml` straight into this type).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Noop")]
pub enum NoopPolicy {
    /// Tick it without a commit, with a warning, when its gates are green
    #[default]
    Complete,
    /// Fail the story
    Fail,
}

/// How the loop runs.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    /// Review rounds per task, at least 1 (`--max-rounds`).
    pub max_rounds: u32,
    /// The most tasks a story's plan may have, at least 1 (`--max-tasks`): a longer plan is sent
    /// back once, then fails the story.
    pub max_tasks: usize,
    /// The deadline of one agent turn (`--turn-timeout`).
    pub turn_timeout: Duration,
    /// Extra standing instructions for the coder (house rules), after the perimeter rules.
    pub extra_rules: String,
    /// Prices for the usage estimates.
    pub prices: PriceTable,
    /// The sandbox the agents' turns run in (a run's own, [`RunConfig::sandbox`](crate::RunConfig::sandbox));
    /// the gates carry theirs ([`Gates::with_sandbox`]).
    pub sandbox: Sandbox,
    /// What becomes of a task whose coder changed nothing and did not confirm it (`--noop`).
    pub noop: NoopPolicy,
}

impl LoopConfig {
    /// The loop's part of a run's options ([`RunConfig`](crate::RunConfig)), its agents' turns in
    /// `sandbox`.
    pub(crate) fn of_run(config: &crate::RunConfig, sandbox: Sandbox) -> Self {
        Self {
            max_rounds: config.max_rounds,
            max_tasks: config.max_tasks,
            turn_timeout: config.turn_timeout,
            extra_rules: config.extra_rules.clone(),
            prices: config.prices.clone(),
            sandbox,
            noop: config.noop,
        }
    }
}

impl Default for LoopConfig {
    /// The loop's part of [`RunConfig::new`](crate::RunConfig::new)'s defaults, where each is
    /// defined, and no sandbox.
    fn default() -> Self {
        Self::of_run(
            &crate::RunConfig::new(Arc::new(epic_agents::ScriptSeat)),
            Sandbox::off(),
        )
    }
}

/// What a run of the loop achieved, and what it cost.
#[derive(Debug)]
#[must_use = "the story's result is in it"]
pub struct StoryRun {
    /// Every task done, or why the story failed.
    pub result: Result<TasksDone, StoryError>,
    /// The estimated usage of this run's turns, by seat (failed runs cost too).
    pub usage: UsageMeter,
    /// Where the changes of the task that failed were kept ([`StoryJob::rejected`]) when its
    /// worktree went back to the task's checkpoint; `None` when the run did not fail in a task,
    /// the task changed nothing, or they could not be kept (the worktree then stays as it was).
    pub rejected: Option<PathBuf>,
}

/// A story whose tasks are all done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TasksDone {
    /// The final plan, every task ticked.
    pub plan: TaskPlan,
    /// The tasks committed by this run, in order.
    pub committed: Vec<String>,
    /// The tasks this run found already satisfied (ticked without a commit).
    pub noop: Vec<String>,
    /// How many tasks were already done when this run started (resumed from the checkpoint).
    pub already_done: usize,
    /// Whether the coder's one pushback turn after a rejected `BLOCKED_ON:` claim was used:
    /// a later claim of the story fails it.
    pub pushed_back: bool,
}

/// How one task ended.
enum TaskEnd {
    Committed(Option<CommitId>),
    Noop,
    /// Changed nothing, unconfirmed, ticked by the no-op policy `complete`.
    NoopUnconfirmed,
}

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
/// A coder reply whose last non-empty line is `BLOCKED_ON: <need>` is checked against the plan
/// (and, if the plan cannot settle it, by the verifier seat): a claim on the story's own path, a
/// merged dependency's or a dependent's gets one pushback turn saying so, once per story; any
/// other claim, or a second one, ends the story at once as [`StoryError::Blocked`] (the
/// reference ran on to the end of the loop first; stopping saves the turns of a story that fails
/// anyway). An agent that commits on its own is tolerated: its
/// commits are on the story branch and count. One that switches its worktree to another branch
/// fails the story before anything is committed.
pub struct TaskLoop {
    git: Arc<dyn Git>,
    gates: Gates,
    seats: Seats,
    config: LoopConfig,
    events: EventSink,
    /// The guard on epic's files, checked after every turn; none for a loop run on its own.
    guard: Option<Arc<TurnGuard>>,
    /// The run's budget, checked before every turn; none for a loop run on its own.
    budget: Option<Arc<crate::budget::Budget>>,
    /// The run's seat pauses around every turn; none for a loop run on its own.
    pauses: Option<Arc<SeatPauses>>,
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

/// One run of the loop on one story.
struct Run<'a> {
    parts: &'a TaskLoop,
    job: &'a StoryJob,
    recorder: Arc<Recorder>,
    cancel: CancellationToken,
    /// Where the failed task's rejected changes were kept ([`Run::reject`]).
    rejected: Option<PathBuf>,
    /// Whether the one pushback turn after a rejected `BLOCKED_ON:` claim was used.
    pushed_back: AtomicBool,
}

impl Run<'_> {
    fn story_id(&self) -> String {
        self.job.story.id.clone()
    }

    fn emit(&self, event: Event) {
        self.recorder.emit(event);
    }

    fn check_cancel(&self) -> Result<(), StoryError> {
        if self.cancel.is_cancelled() {
            Err(StoryError::Cancelled)
        } else {
            Ok(())
        }
    }

    async fn run(&mut self) -> Result<TasksDone, StoryError> {
        self.check_branch().await?;
        let (mut plan, resumed) = self.load_or_plan().await?;
        let already_done = plan.tasks.iter().filter(|task| task.completed).count();
        self.emit(Event::TasksPlanned {
            story: self.story_id(),
            tasks: plan.tasks.iter().map(|task| task.title.clone()).collect(),
            done: already_done,
            resumed,
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
    async fn reject(&self, error: &StoryError, title: &str, start: &CommitId) -> Option<PathBuf> {
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
        let base = *start;
        let diff = match self
            .git("keep the failed task's changes", move |git, worktree| {
                git.worktree_patch(worktree, &base)
            })
            .await
        {
            Ok(diff) => diff,
            Err(error) => {
                self.recorder.note(format!(
                    "the changes of the failed task \"{title}\" could not be kept, so the \
                     worktree stays as it is: {}",
                    error.reason()
                ));
                return None;
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
                self.recorder.note(format!(
                    "the changes of the failed task \"{title}\" could not be kept in `{}`, so \
                     the worktree stays as it is: {problem}",
                    path.display()
                ));
                return None;
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
            self.recorder.note(error.reason());
            return kept;
        }
        self.recorder.note(match &kept {
            Some(path) => format!(
                "the worktree is back at the checkpoint of the failed task \"{title}\"; its \
                 rejected changes are kept in `{}`",
                path.display()
            ),
            None => {
                format!("the worktree is back at the checkpoint of the failed task \"{title}\"")
            }
        });
        kept
    }

    // --- git ---------------------------------------------------------------------------------

    /// Runs a git-ops call on the story's worktree off the async workers ([`offload::git`]).
    async fn git<T, E>(
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
    async fn check_branch(&self) -> Result<(), StoryError> {
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

    async fn head(&self) -> Result<CommitId, StoryError> {
        self.git("read the worktree's head", |git, worktree| {
            git.checkpoint(worktree)
        })
        .await
    }

    async fn dirty_paths(&self) -> Result<Vec<String>, StoryError> {
        self.git("read the worktree's status", |git, worktree| {
            git.status(worktree, &[]).map(|status| status.paths)
        })
        .await
    }

    /// Whether the worktree changed since `head`: dirty paths, or new commits of the agent.
    async fn changed_since(&self, head: &CommitId) -> Result<bool, StoryError> {
        Ok(!self.dirty_paths().await?.is_empty() || self.head().await? != *head)
    }

    /// Paths changed since `base` (a commit), committed or not.
    async fn paths_changed_since(&self, base: String) -> Result<Vec<String>, StoryError> {
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

    // --- the checkpoint ----------------------------------------------------------------------

    async fn load_or_plan(&self) -> Result<(TaskPlan, bool), StoryError> {
        let path = self.job.checkpoint.clone();
        let problem = |problem: String| StoryError::Checkpoint {
            path: path.clone(),
            problem,
        };
        let read = {
            let path = path.clone();
            offload::blocking(move || epic_state_store::read_if_exists(&path))
                .await
                .unwrap_or_else(|error| Err(std::io::Error::other(error)))
        };
        match read {
            Ok(Some(text)) => {
                let plan = TaskPlan::parse(&text)
                    .map_err(|error| problem(format!("is malformed: {error}")))?;
                if plan.tasks.is_empty() {
                    return Err(problem("holds no tasks".to_owned()));
                }
                Ok((plan, true))
            }
            Ok(None) => {
                let plan = self.plan().await?;
                self.save(&plan).await?;
                Ok((plan, false))
            }
            Err(error) => Err(problem(format!("cannot be read: {error}"))),
        }
    }

    async fn save(&self, plan: &TaskPlan) -> Result<(), StoryError> {
        let path = self.job.checkpoint.clone();
        let text = plan.render();
        let target = path.clone();
        let guard = self.parts.guard.clone();
        let written = offload::blocking(move || {
            let write = || epic_state_store::write_atomic(&target, text.as_bytes());
            match guard {
                Some(guard) => guard.epic_write(&target, write),
                None => write(),
            }
        })
        .await;
        let problem = match written {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(error)) => error.to_string(),
            Err(error) => error.to_string(),
        };
        Err(StoryError::Checkpoint {
            path,
            problem: format!("cannot be written: {problem}"),
        })
    }

    // --- chats -------------------------------------------------------------------------------

    fn context(&self, task: Option<&str>) -> ChatContext {
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
    fn prompt_context(&self) -> prompts::Context<'_> {
        prompts::Context {
            plan: &self.job.plan,
            story: &self.job.story,
            briefing: &self.job.briefing,
            rules: &self.parts.config.extra_rules,
        }
    }

    fn rules(&self) -> String {
        prompts::story_rules(self.prompt_context())
    }

    /// Asks `chat`, turning a failed turn into the story's error.
    async fn ask(
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
    async fn ask_coder(
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

    // --- planning ----------------------------------------------------------------------------

    async fn plan(&self) -> Result<TaskPlan, StoryError> {
        let story = &self.job.story;
        let mut chat = Chat::new(
            Arc::clone(&self.parts.seats.coder),
            Role::Planner,
            self.rules(),
            self.context(None),
            Arc::clone(&self.recorder),
        );
        let cap = self.parts.config.max_tasks.max(1);
        let reply = self
            .ask(
                &mut chat,
                Role::Planner,
                None,
                prompts::planning(story, cap),
            )
            .await?;
        let mut tasks = match parse_task_list(&reply.text) {
            Ok(tasks) => tasks,
            Err(error) => {
                self.recorder.note(format!(
                    "the task list could not be read ({error}); asking again"
                ));
                let reply = self
                    .ask(
                        &mut chat,
                        Role::Planner,
                        None,
                        prompts::replan_unreadable(&error),
                    )
                    .await?;
                match parse_task_list(&reply.text) {
                    Ok(tasks) => tasks,
                    Err(error) => {
                        self.recorder.note(format!(
                            "the task list could not be read again ({error}); planning the whole \
                             story as one task"
                        ));
                        return Ok(TaskPlan::new(
                            story.id.clone(),
                            vec![Task::new(story.title.clone(), prompts::story_prompt(story))],
                        ));
                    }
                }
            }
        };
        if tasks.len() > cap {
            tasks = self.cut(&mut chat, tasks.len(), cap).await?;
        }
        let tasks = self.without_strays(&mut chat, tasks, cap).await?;
        Ok(TaskPlan::new(story.id.clone(), tasks))
    }

    /// Sends tasks that name paths outside the story back once: the re-plan, with the tasks
    /// that still belong to other stories dropped (unless that drops them all); the first plan
    /// when the re-plan cannot be read or is longer than `cap`.
    async fn without_strays(
        &self,
        chat: &mut Chat,
        mut tasks: Vec<Task>,
        cap: usize,
    ) -> Result<Vec<Task>, StoryError> {
        let story = &self.job.story;
        let strays = stray_tasks(&self.job.plan, story, &tasks);
        if strays.is_empty() {
            return Ok(tasks);
        }
        let lines: Vec<String> = strays
            .iter()
            .map(|stray| format!("\"{}\": {}", stray.title, stray.paths.join(", ")))
            .collect();
        self.recorder.note(format!(
            "{} planned task(s) name paths outside the story; re-planning: {}",
            strays.len(),
            lines.join("; ")
        ));
        let reply = self
            .ask(chat, Role::Planner, None, prompts::replan_strays(&strays))
            .await?;
        match parse_task_list(&reply.text) {
            Ok(replanned) if replanned.len() > cap => self.recorder.note(format!(
                "the re-plan has {} tasks, more than the {cap} a story may have \
                 (max_tasks); keeping the first plan",
                replanned.len()
            )),
            Ok(replanned) => {
                let still = stray_tasks(&self.job.plan, story, &replanned);
                let foreign: BTreeSet<&str> = still
                    .iter()
                    .filter(|stray| stray.foreign)
                    .map(|stray| stray.title.as_str())
                    .collect();
                let kept: Vec<Task> = replanned
                    .iter()
                    .filter(|task| !foreign.contains(task.title.as_str()))
                    .cloned()
                    .collect();
                if !still.is_empty() {
                    let dropped = replanned.len() - kept.len();
                    self.recorder.note(format!(
                        "the re-plan still names paths outside the story{}",
                        if dropped > 0 && !kept.is_empty() {
                            format!("; dropped {dropped} task(s) that belong to other stories")
                        } else {
                            String::new()
                        }
                    ));
                }
                tasks = if kept.is_empty() { replanned } else { kept };
            }
            Err(error) => self.recorder.note(format!(
                "the re-plan could not be read ({error}); keeping the first plan"
            )),
        }
        Ok(tasks)
    }

    /// Sends a plan of `planned` tasks, more than `cap`, back once: the re-plan, if it is
    /// readable and within the cap; else the story fails.
    async fn cut(
        &self,
        chat: &mut Chat,
        planned: usize,
        cap: usize,
    ) -> Result<Vec<Task>, StoryError> {
        self.recorder.note(format!(
            "the plan has {planned} tasks, more than the {cap} a story may have (max_tasks); \
             re-planning"
        ));
        let reply = self
            .ask(
                chat,
                Role::Planner,
                None,
                prompts::replan_too_many(planned, cap),
            )
            .await?;
        match parse_task_list(&reply.text) {
            Ok(tasks) if tasks.len() <= cap => Ok(tasks),
            Ok(tasks) => Err(StoryError::TooManyTasks {
                planned,
                replanned: Some(tasks.len()),
                cap,
            }),
            Err(error) => {
                self.recorder
                    .note(format!("the re-plan could not be read ({error})"));
                Err(StoryError::TooManyTasks {
                    planned,
                    replanned: None,
                    cap,
                })
            }
        }
    }

    // --- one task ----------------------------------------------------------------------------

    /// One task, started on the story branch at `start`. `interrupted`: the first open task of
    /// a resumed run, which may already hold the work of the turn a crashed run was in.
    async fn task(
        &self,
        plan: &TaskPlan,
        index: usize,
        interrupted: bool,
        start: &CommitId,
    ) -> Result<TaskEnd, StoryError> {
        let task = &plan.tasks[index];
        let title = task.title.as_str();
        let start = *start;
        let mut chat = Chat::new(
            Arc::clone(&self.parts.seats.coder),
            Role::Coder,
            format!("{}\n{}", self.rules(), prompts::plan_so_far(plan, index)),
            self.context(Some(title)),
            Arc::clone(&self.recorder),
        );
        self.ask_coder(
            &mut chat,
            title,
            prompts::task(task, index, plan.tasks.len()),
        )
        .await?;
        if !self.changed_since(&start).await? {
            let reply = self
                .ask_coder(&mut chat, title, prompts::noop(title))
                .await?;
            if !self.changed_since(&start).await? {
                if reply.text.contains(NOOP_TOKEN) {
                    // "Already satisfied" holds only while the gates agree: a resumed story's
                    // branch can carry earlier work (committed as work in progress before a
                    // catch-up) that is still red. Then the claim is wrong and the review
                    // rounds below, which start with the gates, take over.
                    if self.gate().await?.clean {
                        return Ok(TaskEnd::Noop);
                    }
                } else if !interrupted {
                    match self.parts.config.noop {
                        NoopPolicy::Fail => {
                            return Err(StoryError::NoopNotConfirmed {
                                task: title.to_owned(),
                            });
                        }
                        // A prose "already done": ticked while the gates agree; on red gates
                        // the review rounds below take over, as for a confirmed claim.
                        NoopPolicy::Complete => {
                            if self.gate().await?.clean {
                                return Ok(TaskEnd::NoopUnconfirmed);
                            }
                        }
                    }
                }
                // The task an interrupted run was in: its work may already be here (left
                // uncommitted by the killed turn, or committed as work in progress by a
                // catch-up), so an agent redoing it changes nothing. The review rounds, gates
                // first, decide.
            }
        }

        let max_rounds = self.parts.config.max_rounds.max(1);
        let mut round = 0;
        loop {
            round += 1;
            self.check_cancel()?;
            let mut gate = self.gate().await?;
            if !gate.clean && round >= max_rounds && self.put_strays_back(&start).await? {
                gate = self.gate().await?;
            }
            if !gate.clean {
                self.review_round(title, round, &gate);
                if round >= max_rounds {
                    return Err(StoryError::GateNeverGreen {
                        task: title.to_owned(),
                        gate: gate
                            .issues
                            .first()
                            .map_or_else(|| gate.summary.clone(), |issue| issue.title.clone()),
                        rounds: round,
                        issues: gate.issues,
                    });
                }
                self.ask_coder(&mut chat, title, prompts::fix(&gate))
                    .await?;
                continue;
            }
            let verdict = self.review(task, &start).await?;
            self.review_round(title, round, &verdict);
            if verdict.clean || round >= max_rounds {
                break;
            }
            self.ask_coder(&mut chat, title, prompts::fix(&verdict))
                .await?;
        }

        self.check_branch().await?;
        let message = format!("{}: {}", self.job.story.id, title);
        let outcome = self
            .git("commit the task", move |git, worktree| {
                git.commit_all(worktree, &message)
            })
            .await?;
        Ok(TaskEnd::Committed(match outcome {
            CommitOutcome::Committed(id) => Some(id),
            CommitOutcome::NothingToCommit => None,
        }))
    }

    /// In the last round, puts paths changed outside the story's owned paths back as they were
    /// when the task started (then they equal the epic branch's: no task commits a stray), so a
    /// coder that ignored the perimeter feedback loses only its strays, not the task. A change
    /// to a shared read-only path is never put back: it fails the story. Whether anything was
    /// put back (the caller gates again).
    async fn put_strays_back(&self, start: &CommitId) -> Result<bool, StoryError> {
        let changed = self
            .paths_changed_since(self.job.epic_branch.clone())
            .await?;
        let check = epic_perimeter::check(&changed, &self.job.story);
        if !check.shared_read_only.is_empty() || check.outside.is_empty() {
            return Ok(false);
        }
        let (source, stray) = (start.to_hex(), check.outside.clone());
        self.git(
            "put paths outside the perimeter back",
            move |git, worktree| {
                let paths: Vec<&str> = stray.iter().map(String::as_str).collect();
                git.restore_paths(worktree, &source, &paths)
            },
        )
        .await?;
        self.recorder.note(format!(
            "put {} path(s) outside the perimeter back after the last round: {}",
            check.outside.len(),
            check.outside.join(", ")
        ));
        self.emit(Event::PerimeterRestored {
            story: self.story_id(),
            paths: check.outside,
        });
        Ok(true)
    }

    fn review_round(&self, task: &str, round: u32, review: &Review) {
        self.emit(Event::ReviewRound {
            story: self.story_id(),
            task: task.to_owned(),
            round,
            clean: review.clean,
            issues: review.issues.len(),
            summary: review.summary.clone(),
        });
    }

    /// The gates and the perimeter gate over every path changed against the epic branch,
    /// committed or not, the symbolic links among them judged by where they point.
    async fn gate(&self) -> Result<Review, StoryError> {
        let story = self.story_id();
        let events = Arc::clone(&self.parts.events);
        let on_result = move |result: &GateResult| {
            let duration_ms = u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX);
            events(if result.passed {
                Event::GatePassed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms,
                }
            } else {
                Event::GateFailed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms,
                    status: result.status.clone(),
                }
            });
            if let Some(event) = result.leftovers_event(Some(&story)) {
                events(event);
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), self.job.epic.clone()),
            ("EPIC_STORY".to_owned(), self.job.story.id.clone()),
            (
                "EPIC_WORKTREE".to_owned(),
                self.job.worktree.display().to_string(),
            ),
            ("EPIC_SLOT".to_owned(), self.job.slot.to_string()),
        ];
        let gates = self
            .parts
            .gates
            .run(&self.job.worktree, &env, &self.cancel, &on_result)
            .await
            .map_err(|_| StoryError::Cancelled)?;
        let changed = self
            .paths_changed_since(self.job.epic_branch.clone())
            .await?;
        let links = self
            .git("read the symbolic links the story changed", {
                let changed = changed.clone();
                move |git, worktree| {
                    let paths: Vec<&str> = changed.iter().map(String::as_str).collect();
                    git.symlinks_in_worktree(worktree, &paths)
                }
            })
            .await?;
        let story = &self.job.story;
        let perimeter = epic_perimeter::check(&changed, story)
            .with_links(
                links.iter().map(|link| (&link.path, &link.target)),
                story,
                &self.job.plan,
            )
            .into_review(story);
        Ok(gates.combine(perimeter))
    }

    /// The reviewers' verdicts on the task's changes since `start`, merged; clean without
    /// reviewers. A reviewer turn that fails is reported and left out.
    async fn review(&self, task: &Task, start: &CommitId) -> Result<Review, StoryError> {
        let reviewers = &self.parts.seats.reviewers;
        if reviewers.is_empty() {
            return Ok(Review::clean("no reviewers"));
        }
        let paths = self.paths_changed_since(start.to_hex()).await?;
        let since = *start;
        let diff = self
            .git(
                "diff the task's changes for its reviewers",
                move |git, worktree| git.worktree_patch(worktree, &since),
            )
            .await?;
        let prompt = prompts::review(
            task,
            &start.to_hex(),
            &paths,
            &String::from_utf8_lossy(&diff),
        );
        let before = self
            .git(
                "take the worktree's state before the reviewers' turns",
                |git, worktree| git.worktree_state(worktree),
            )
            .await?;
        let mut set = tokio::task::JoinSet::new();
        for (n, seat) in reviewers.iter().enumerate() {
            let mut chat = Chat::new(
                Arc::clone(seat),
                Role::Reviewer,
                prompts::reviewer_rules(self.prompt_context()),
                self.context(Some(&task.title)),
                Arc::clone(&self.recorder),
            );
            let prompt = prompt.clone();
            let name = seat.name().to_owned();
            set.spawn(async move { (n, name, chat.ask(prompt).await) });
        }
        let (mut verdicts, mut stop) = (Vec::new(), None);
        // Every reviewer ends before the worktree is put back, whatever one of them did.
        while let Some(joined) = set.join_next().await {
            let Ok((n, name, result)) = joined else {
                continue;
            };
            match result {
                Ok(reply) => verdicts.push((n, parse_verdict(&reply.text))),
                Err(SeatError::Cancelled) => stop = Some(StoryError::Cancelled),
                // A reviewer that changed epic's files fails the story like any other turn.
                Err(source @ SeatError::GuardedFiles(_)) => {
                    stop.get_or_insert(StoryError::Agent {
                        role: Role::Reviewer,
                        task: Some(task.title.clone()),
                        source,
                    });
                }
                Err(error) => self.recorder.note(format!(
                    "reviewer {name} failed and is left out of this round: {error}"
                )),
            }
        }
        let changed = self
            .git(
                "put back what the reviewers' turns changed",
                move |git, worktree| git.put_back(worktree, &before),
            )
            .await?;
        if let Some(files) = changed {
            self.recorder
                .note(read_only::discarded(Role::Reviewer, &files));
        }
        if let Some(stop) = stop {
            return Err(stop);
        }
        verdicts.sort_by_key(|(n, _)| *n);
        Ok(verdicts
            .into_iter()
            .map(|(_, verdict)| verdict)
            .fold(Review::clean(""), Review::combine))
    }
}
