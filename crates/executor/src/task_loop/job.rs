//! What the task loop is given and gives back: a story's place ([`StoryJob`]), its seats, its
//! limits and policies ([`LoopConfig`], [`NoopPolicy`]), and a story's result ([`StoryRun`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use epic_report::{PriceTable, UsageMeter};
use epic_state_store::{EpicDir, UnsafeId};
use epic_story_plan::{Story, StoryPlan};

use crate::error::StoryError;
use epic_agents::Roster;
use epic_process::sandbox::Sandbox;
use epic_protocol::TaskPlan;
use epic_protocol::prompts::Briefing;

#[cfg(doc)]
use super::parts::TaskLoop;
#[cfg(doc)]
use epic_gates::Gates;

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
    /// The epic whose inbox holds what people gave the story for its coder (`epic tell`, `epic
    /// answer`): a run's stories read them; a job of its own, none.
    pub(crate) notes: Option<EpicDir>,
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
            notes: None,
        })
    }

    /// This job, its coder turns reading what people gave the story in `dir`'s inbox.
    #[must_use]
    pub(crate) fn with_notes(mut self, dir: EpicDir) -> Self {
        self.notes = Some(dir);
        self
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
    pub coder: Roster,
    /// Review each task once its gates are green, concurrently; none is fine.
    pub reviewers: Vec<Roster>,
    /// Settles `BLOCKED_ON:` claims the plan cannot settle (`--verifier`); none: such a claim
    /// stands.
    pub verifier: Option<Roster>,
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

/// Whether a story's tasks are planned by a planner turn first (`--planner`).
//
// The doc comments here are also `epic run --help`'s and `epic schema config`'s text.
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
#[schemars(rename = "Planner")]
pub enum PlannerPolicy {
    /// A small story (description and acceptance criteria at most 800 characters together) is
    /// one task, implemented with no planner turn; a larger one is planned
    #[default]
    Auto,
    /// The coder plans every story's tasks first, in a read-only planner turn
    Always,
}

/// The most characters of description and acceptance criteria a story may have to be one task
/// without a planner turn (`--planner auto`): a paragraph or two, a change one turn makes.
pub const SMALL_STORY: usize = 800;

impl PlannerPolicy {
    /// Whether `story` gets a planner turn: always, or when it is larger than [`SMALL_STORY`].
    pub fn plans(self, story: &epic_story_plan::Story) -> bool {
        match self {
            Self::Always => true,
            Self::Auto => {
                let size = story.description.trim().chars().count()
                    + story
                        .acceptance
                        .iter()
                        .map(|criterion| criterion.chars().count())
                        .sum::<usize>();
                size > SMALL_STORY
            }
        }
    }
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
    /// Whether a story's tasks are planned by a planner turn first (`--planner`).
    pub planner: PlannerPolicy,
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
            planner: config.planner,
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
