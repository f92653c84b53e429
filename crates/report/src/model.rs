//! The report's data ([`EpicReport`]): what happened to each story, in plan order, and what it
//! cost (estimated). Its JSON form is docs/contract.md's `report.json`.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use jiff::Timestamp;

use crate::in_place::InPlace;
use crate::usage::{UsageMeter, UsageSource, UsageTotals};

/// The report of an epic across its runs: every story of the plan, in plan order, with its
/// outcome as the run that last settled it left it.
///
/// Serialised, it is the data of `report.json`: `epic_id`, `epic_branch`,
/// `"estimated": true` and `stories`, plus fields beyond the contract that are left out
/// when empty: `critical_path`, `seats`, `runs` and, once `epic land` landed the epic,
/// `landing`. A report without `runs` (written before runs
/// were numbered) still loads. Optional fields are left out, never written as `null`.
/// The camelCase names of the reference (`epicId`, `estimatedTokens`, …) are accepted on input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "EpicReport")]
#[non_exhaustive]
pub struct EpicReport {
    /// The epic's id.
    #[serde(alias = "epicId")]
    pub epic_id: String,
    /// The integration branch the stories merged into.
    #[serde(alias = "epicBranch")]
    pub epic_branch: String,
    /// Always `true`, for readers of older reports, which took every figure for an estimate
    /// from character counts; where each figure came from is now in `usage.source`.
    #[serde(default)]
    pub estimated: Estimated,
    /// Every story of the plan, in plan order.
    pub stories: Vec<StoryOutcome>,
    /// The plan's critical path (its longest dependency chain), first story first, as the caller
    /// computed it (story-plan's `ValidPlan::critical_path`). Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "criticalPath")]
    pub critical_path: Vec<String>,
    /// Usage by seat over the epic's runs, in seat-name order: every turn, those of
    /// attempts that failed and were run again included. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seats: Vec<SeatUsage>,
    /// The epic's runs this report covers, oldest first; a story's `run` is one of their
    /// numbers. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunRecord>,
    /// How the epic landed on its target (`epic land`), once it did. Left out until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Landing")]
    pub landing: Option<Landing>,
}

/// How `epic land` put the epic on its target: the merge commit, the conflicts it met and who
/// resolved each, the gate rounds and what the landing's agent turns cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Landing {
    /// The branch the epic landed on.
    pub target: String,
    /// The landing's merge commit on it (first parent: the target as it was).
    pub commit: String,
    /// The target's commit the landing merged into the epic branch and moved from.
    pub from: String,
    /// Each path that conflicted when the target was merged into the epic branch, with the
    /// story whose turn resolved it (none: the final turn, for paths no story owns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<LandedConflict>,
    /// Coder rounds on red gates after the merge.
    pub rounds: u32,
    /// What the landing's agent turns cost, in US dollars (reported, else estimated).
    pub cost_usd: f64,
    /// The stories left out (`--partial`): not merged when the epic landed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// What lander turns changed outside their perimeter, put back before the gates ran: one
    /// entry per turn that strayed, in the order the turns ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub put_back: Vec<PutBack>,
    /// When it landed (RFC 3339).
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub landed_at: Timestamp,
}

impl Landing {
    /// A landing on `target` by `commit`, moved from `from`, at `landed_at`: no conflicts, no
    /// rounds, nothing spent, nothing left out.
    pub fn new(
        target: impl Into<String>,
        commit: impl Into<String>,
        from: impl Into<String>,
        landed_at: Timestamp,
    ) -> Self {
        Self {
            target: target.into(),
            commit: commit.into(),
            from: from.into(),
            conflicts: Vec::new(),
            rounds: 0,
            cost_usd: 0.0,
            left_out: Vec::new(),
            put_back: Vec::new(),
            landed_at,
        }
    }
}

/// A path that conflicted during a landing, and the story whose turn resolved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LandedConflict {
    /// The path.
    pub path: String,
    /// The story that owns it; none when no story does (the final turn resolved it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub story: Option<String>,
}

/// What one lander turn changed outside its perimeter, put back before the gates ran. A turn
/// for a story's conflicts may change those conflicted paths; the final conflict turn, the
/// conflicted paths no story owns; a red-gate round, the paths the epic's stories own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PutBack {
    /// The story whose conflicts the turn resolved; none for the final conflict turn and for a
    /// red-gate round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub story: Option<String>,
    /// The red-gate round (from 1) the turn fixed; none for a conflict turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub round: Option<u32>,
    /// The files it changed (modified, added, deleted, mode changed) outside its perimeter,
    /// put back as they were before the turn, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Whether it made commits or moved the branch itself: undone, its files judged as above.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub moved_head: bool,
}

impl PutBack {
    /// Who the turn was, for a reader: `story a's conflict turn`, `the final conflict turn`,
    /// `gate round 2`.
    pub fn turn(&self) -> String {
        match (&self.story, self.round) {
            (_, Some(round)) => format!("gate round {round}"),
            (Some(story), None) => format!("story {story}'s conflict turn"),
            (None, None) => "the final conflict turn".to_owned(),
        }
    }
}

/// One run of the epic, as the report lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RunRecord {
    /// The run's number: 1 for the epic's first run, then one more for each run.
    pub number: u32,
    /// When the run started (RFC 3339).
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub started_at: Timestamp,
    /// When the run finished (RFC 3339); absent while it runs, or when it was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub finished_at: Option<Timestamp>,
}

/// What happened to one story.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct StoryOutcome {
    /// The story's id.
    pub id: String,
    /// The story's title.
    pub title: String,
    /// How it ended.
    pub status: OutcomeStatus,
    /// The story's branch, `story/<epic_id>/<id>`, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub branch: Option<String>,
    /// Why it failed, or why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub reason: Option<String>,
    /// The judge's note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub judge: Option<String>,
    /// Tokens of the story's turns in the run that settled it: the agents' reported figures
    /// where they reported them, estimates from character counts where not (`usage.source`
    /// says which; the name is kept for older readers).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "estimatedTokens"
    )]
    #[schemars(with = "u64")]
    pub estimated_tokens: Option<u64>,
    /// Cost in US dollars of those turns, reported or estimated as `usage.source` says; absent
    /// when a turn had neither a reported cost nor a known price.
    #[serde(
        default,
        skip_serializing_if = "cost_absent",
        alias = "estimatedCostUsd"
    )]
    #[schemars(with = "f64")]
    pub estimated_cost_usd: Option<f64>,
    /// When the story started (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "startedAt")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub started_at: Option<Timestamp>,
    /// When the story finished: merged, failed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "finishedAt")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub finished_at: Option<Timestamp>,
    /// The number of the run (in the report's `runs`) this outcome is from: the run that merged
    /// the story, failed it or skipped it. Absent when no recorded run settled it (a story
    /// merged by a run whose report is lost, or a report written before runs were numbered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub run: Option<u32>,
    /// The tokens and cost of the story's turns, reported by the agents where they report them,
    /// estimated where not, and which ([`UsageSummary::source`]). `estimated_tokens` and
    /// `estimated_cost_usd` carry the same totals for readers of older reports. Absent in a
    /// report written before usage was reported, and for a story with no turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "UsageSummary")]
    pub usage: Option<UsageSummary>,
    /// The stories of the merge queue's batch proven together with it by one gate run on the
    /// epic head (`--merge-batch`), in merge order, itself included; absent when it was proven
    /// alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proven_with: Vec<String>,
    /// Set when the story merged nothing because its work was already on the epic branch: the
    /// judge's evidence, as epic checked it on the proven epic head. Its `status` is `done`;
    /// absent for a story that merged work (and in reports written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "InPlace")]
    pub in_place: Option<InPlace>,
    /// The gate commands that were red, then green when run again on the same tree
    /// (`--gate-reruns`), in the story's worktree or on the epic head after its merge, in the
    /// run that settled it, in order; each keeps its first, red run. Absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flaky_gates: Vec<FlakyGate>,
    /// How many of its agent turns, in the run that settled it, printed nothing for
    /// `--stall-timeout` and were ended as stalled. Absent when none was.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub stalled_turns: u32,
    /// How many of its agent turns, in the run that settled it, repeated the same tool call
    /// five times in a row and were ended as looping. Absent when none did.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub looping_turns: u32,
    /// How many requests of its ACP agents (`acp:` seats), in the run that settled it, epic
    /// rejected (`permission_rejected`: an edit outside its perimeter, of `.git`, any edit in a
    /// read-only turn). Absent when none was.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub permission_rejections: u32,
    /// How many times its merge was red on the proven epic head and it went back to its coder
    /// (`--merge-revisions`), across the runs that worked on it. Absent when never.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub merge_revisions: u32,
    /// The failing tests its gate commands named that were already red on the epic head before
    /// it (or on the baseline), by command: inherited, never charged to the story. Absent when
    /// none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherited_tests: Vec<InheritedTests>,
    /// The seats that took its agent turns in the run that settled it, in seat-name order, each
    /// with its turns, tokens and cost: with a roster (`--coder claude,codex`), which seat did
    /// what. Absent for a story with no turns (and in reports written before it existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seats: Vec<SeatUsage>,
    /// The commands people gave the story that the run took (`epic answer`, `tell`, `stop`,
    /// `retry`), in the order given. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<GivenCommand>,
}

/// A person's command a run took for a story.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GivenCommand {
    /// Its id (its file in the epic's inbox).
    pub id: String,
    /// `answer`, `tell`, `stop` or `retry`.
    pub action: String,
    /// The user id of who gave it.
    pub uid: u32,
    /// When it was given (RFC 3339, UTC).
    pub at: String,
}

/// The failing tests of one gate command that a story inherited
/// ([`StoryOutcome::inherited_tests`]): red before it, so not charged to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct InheritedTests {
    /// The command.
    pub command: String,
    /// The tests, sorted.
    pub tests: Vec<String>,
}

impl InheritedTests {
    /// The tests `tests` of command `command`.
    pub fn new(command: impl Into<String>, tests: Vec<String>) -> Self {
        Self {
            command: command.into(),
            tests,
        }
    }
}

/// A gate command red on its first run and green when run again on the same tree
/// ([`StoryOutcome::flaky_gates`]): it counted as passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct FlakyGate {
    /// The command.
    pub command: String,
    /// How many runs it took to pass, the first included.
    pub runs: u32,
    /// How its first run ended, in words (`exit code 1`, `timed out after 30s`).
    pub status: String,
    /// The end of its first run's output (at most 4000 bytes).
    pub output: String,
}

impl FlakyGate {
    /// Command `command`, green on run `runs` after a first run that ended with `status` and
    /// `output`.
    pub fn new(
        command: impl Into<String>,
        runs: u32,
        status: impl Into<String>,
        output: impl Into<String>,
    ) -> Self {
        Self {
            command: command.into(),
            runs,
            status: status.into(),
            output: output.into(),
        }
    }
}

/// Tokens and cost of some turns (a story's, a seat's), with where the figures came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct UsageSummary {
    /// Prompt (input) tokens, cached ones included.
    pub input_tokens: u64,
    /// Reply (output) tokens.
    pub output_tokens: u64,
    /// The cost in US dollars; absent when a turn had neither a reported cost nor a known price.
    #[serde(default, skip_serializing_if = "cost_absent")]
    #[schemars(with = "f64")]
    pub cost_usd: Option<f64>,
    /// `reported` (every figure the agents' own), `estimated` (every figure estimated from
    /// character counts and priced from the table) or `mixed`; a turn with reported tokens but
    /// no reported cost (Codex) makes it `mixed`.
    pub source: UsageSource,
}

impl UsageSummary {
    /// The summary of some turns' totals.
    pub fn of(totals: &UsageTotals) -> Self {
        Self {
            input_tokens: totals.usage.prompt,
            output_tokens: totals.usage.completion,
            cost_usd: totals.cost_usd(),
            source: totals.source(),
        }
    }

    /// Tokens in all.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// These figures with `other`'s added: the cost is known only when both are.
    #[must_use]
    pub fn plus(&self, other: &Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cost_usd: self.cost_usd.zip(other.cost_usd).map(|(a, b)| a + b),
            source: self.source.and(other.source),
        }
    }
}

/// How a story ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// The JSON Schema keeps the definition name `epic schema` has always printed.
#[schemars(rename = "StoryStatus")]
pub enum OutcomeStatus {
    /// Merged into the epic branch.
    Done,
    /// Failed; the outcome's `reason` says why.
    Failed,
    /// Not run because a story it depends on failed (or the run stopped first).
    Skipped,
    /// Stopped by a person (`epic stop`); it runs again only after `epic retry`.
    Stopped,
}

/// Usage of one seat over the epic's runs, as the report carries it: reported by the agent
/// where it reported it, estimated where not (`usage.source` says which; the field names keep
/// "estimated" for older readers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct SeatUsage {
    /// The seat (or model) name the turns were priced by.
    pub seat: String,
    /// Number of turns.
    pub turns: u64,
    /// Estimated prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Estimated completion (reply) tokens.
    pub completion_tokens: u64,
    /// Estimated tokens in all.
    pub estimated_tokens: u64,
    /// Estimated cost in US dollars; absent when any turn had no known price.
    #[serde(default, skip_serializing_if = "cost_absent")]
    #[schemars(with = "f64")]
    pub estimated_cost_usd: Option<f64>,
    /// Turns whose seat had no known price. Left out when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_turns: u64,
    /// The seat's tokens and cost with where they came from (reported by the agent, estimated,
    /// or mixed); the fields above carry the same totals for readers of older reports. Absent
    /// in a report written before usage was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "UsageSummary")]
    pub usage: Option<UsageSummary>,
}

/// The `"estimated": true` marker of a report: its figures are estimates, never measurements.
///
/// Serialised as `true`; reading `false` is an error, since no report of this crate measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Estimated;

impl EpicReport {
    /// A report of no stories yet.
    ///
    /// ```
    /// use epic_report::{EpicReport, StoryOutcome, OutcomeStatus};
    ///
    /// let mut report = EpicReport::new("checkout", "epic/checkout");
    /// report.stories.push(StoryOutcome::new("cart-api", "Cart API", OutcomeStatus::Done));
    /// report.stories.push(
    ///     StoryOutcome::new("cart-ui", "Cart page", OutcomeStatus::Skipped)
    ///         .with_reason("depends on failed story cart-api"),
    /// );
    /// assert_eq!(report.count(OutcomeStatus::Done), 1);
    /// assert!(!report.all_done());
    /// ```
    pub fn new(epic_id: impl Into<String>, epic_branch: impl Into<String>) -> Self {
        Self {
            epic_id: epic_id.into(),
            epic_branch: epic_branch.into(),
            estimated: Estimated,
            stories: Vec::new(),
            critical_path: Vec::new(),
            seats: Vec::new(),
            runs: Vec::new(),
            landing: None,
        }
    }

    /// This report with `run` added at the end of its runs (runs go oldest first).
    #[must_use]
    pub fn with_run(mut self, run: RunRecord) -> Self {
        self.runs.push(run);
        self
    }

    /// The number of the latest run the report covers, if it lists any.
    pub fn latest_run(&self) -> Option<u32> {
        self.runs.last().map(|run| run.number)
    }

    /// Whether the latest run settled no story: every story's outcome is from an earlier run (a
    /// rerun with nothing to do). False for a report of no stories or no runs.
    ///
    /// ```
    /// use epic_report::{EpicReport, OutcomeStatus, RunRecord, StoryOutcome};
    ///
    /// let at = "2026-03-01T09:00:00Z".parse()?;
    /// let report = EpicReport::new("e", "epic/e")
    ///     .with_run(RunRecord::new(1, at))
    ///     .with_run(RunRecord::new(2, at))
    ///     .with_story(StoryOutcome::new("a", "A", OutcomeStatus::Done).in_run(1));
    /// assert!(report.latest_run_settled_nothing());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn latest_run_settled_nothing(&self) -> bool {
        self.latest_run().is_some_and(|latest| {
            !self.stories.is_empty() && self.stories.iter().all(|story| story.run != Some(latest))
        })
    }

    /// This report with `story` added at the end (stories go in plan order).
    #[must_use]
    pub fn with_story(mut self, story: StoryOutcome) -> Self {
        self.stories.push(story);
        self
    }

    /// This report with the plan's critical path, first story first.
    #[must_use]
    pub fn with_critical_path(mut self, ids: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.critical_path = ids.into_iter().map(Into::into).collect();
        self
    }

    /// This report with the run's usage by seat.
    #[must_use]
    pub fn with_seats(mut self, seats: Vec<SeatUsage>) -> Self {
        self.seats = seats;
        self
    }

    /// The first story with this id.
    pub fn story(&self, id: &str) -> Option<&StoryOutcome> {
        self.stories.iter().find(|story| story.id == id)
    }

    /// How many stories ended in `status`.
    pub fn count(&self, status: OutcomeStatus) -> usize {
        self.stories
            .iter()
            .filter(|story| story.status == status)
            .count()
    }

    /// Whether every story is done (an empty epic is).
    pub fn all_done(&self) -> bool {
        self.stories
            .iter()
            .all(|story| story.status == OutcomeStatus::Done)
    }

    /// The sum of the stories' estimated tokens, or `None` if no story has any. Wide enough that
    /// it cannot overflow.
    pub fn estimated_tokens(&self) -> Option<u128> {
        self.stories
            .iter()
            .filter_map(|story| story.estimated_tokens)
            .map(u128::from)
            .reduce(|a, b| a + b)
    }

    /// The sum of the estimated tokens of the stories whose outcome is from the latest run (of
    /// every story, when the report lists no runs), or `None` if none has any.
    pub fn latest_run_estimated_tokens(&self) -> Option<u128> {
        let latest = self.latest_run();
        self.stories
            .iter()
            .filter(|story| latest.is_none() || story.run == latest)
            .filter_map(|story| story.estimated_tokens)
            .map(u128::from)
            .reduce(|a, b| a + b)
    }

    /// The sum of the stories' estimated costs that are known, or `None` if none is. It leaves
    /// out the stories with estimated tokens but no known cost (a seat without a price).
    pub fn estimated_cost_usd(&self) -> Option<f64> {
        self.stories
            .iter()
            .filter_map(StoryOutcome::cost)
            .reduce(|a, b| a + b)
    }

    /// What the epic's turns cost so far, over every run the report covers: the sum of the
    /// seats' costs (reported where the agents reported them, estimated where not); a seat
    /// with turns of no known price counts nothing.
    pub fn spent_usd(&self) -> f64 {
        self.seats
            .iter()
            .filter_map(|seat| seat.summary().cost_usd)
            .filter(|cost| cost.is_finite())
            .sum()
    }

    /// Whether some figure of the report is an estimate (or it has no figures at all): what the
    /// estimates banner is shown for.
    pub fn has_estimates(&self) -> bool {
        let stories = self
            .stories
            .iter()
            .filter(|story| story.estimated_tokens.is_some() || story.usage.is_some())
            .map(StoryOutcome::usage_source);
        let seats = self.seats.iter().map(|seat| seat.summary().source);
        let mut sources = stories.chain(seats).peekable();
        sources.peek().is_none() || sources.any(|source| source != UsageSource::Reported)
    }

    /// Whether some figure of the report is the agents' own report.
    pub fn has_reported(&self) -> bool {
        self.stories
            .iter()
            .map(StoryOutcome::usage_source)
            .chain(self.seats.iter().map(|seat| seat.summary().source))
            .any(|source| source != UsageSource::Estimated)
    }

    /// Stories with estimated tokens but no known cost: the cost total leaves them out.
    pub(crate) fn unpriced_stories(&self) -> impl Iterator<Item = &StoryOutcome> {
        self.stories
            .iter()
            .filter(|story| story.estimated_tokens.is_some() && story.cost().is_none())
    }
}

impl StoryOutcome {
    /// An outcome with no optional field set.
    pub fn new(id: impl Into<String>, title: impl Into<String>, status: OutcomeStatus) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            status,
            branch: None,
            reason: None,
            judge: None,
            estimated_tokens: None,
            estimated_cost_usd: None,
            started_at: None,
            finished_at: None,
            run: None,
            usage: None,
            proven_with: Vec::new(),
            in_place: None,
            flaky_gates: Vec::new(),
            stalled_turns: 0,
            looping_turns: 0,
            permission_rejections: 0,
            merge_revisions: 0,
            inherited_tests: Vec::new(),
            seats: Vec::new(),
            commands: Vec::new(),
        }
    }

    /// With the commands people gave it ([`StoryOutcome::commands`]).
    #[must_use]
    pub fn with_commands(mut self, commands: Vec<GivenCommand>) -> Self {
        self.commands = commands;
        self
    }

    /// With the seats that took its turns ([`StoryOutcome::seats`]).
    #[must_use]
    pub fn with_seats(mut self, seats: Vec<SeatUsage>) -> Self {
        self.seats = seats;
        self
    }

    /// With the failing tests it inherited ([`StoryOutcome::inherited_tests`]).
    #[must_use]
    pub fn with_inherited_tests(mut self, tests: Vec<InheritedTests>) -> Self {
        self.inherited_tests = tests;
        self
    }

    /// With its merge revisions ([`StoryOutcome::merge_revisions`]).
    #[must_use]
    pub fn with_merge_revisions(mut self, revisions: u32) -> Self {
        self.merge_revisions = revisions;
        self
    }

    /// With how many of its turns were ended as stalled and as looping
    /// ([`StoryOutcome::stalled_turns`], [`StoryOutcome::looping_turns`]).
    #[must_use]
    pub fn with_ended_turns(mut self, stalled: u32, looping: u32) -> Self {
        self.stalled_turns = stalled;
        self.looping_turns = looping;
        self
    }

    /// With the requests of its ACP agents epic rejected
    /// ([`StoryOutcome::permission_rejections`]).
    #[must_use]
    pub fn with_permission_rejections(mut self, rejected: u32) -> Self {
        self.permission_rejections = rejected;
        self
    }

    /// With the gate commands that were flaky for it ([`StoryOutcome::flaky_gates`]).
    #[must_use]
    pub fn with_flaky_gates(mut self, gates: Vec<FlakyGate>) -> Self {
        self.flaky_gates = gates;
        self
    }

    /// Found already in place, with the evidence epic checked ([`InPlace`]).
    #[must_use]
    pub fn already_in_place(mut self, in_place: InPlace) -> Self {
        self.in_place = Some(in_place);
        self
    }

    /// With the stories proven together with it by one gate run, itself included.
    #[must_use]
    pub fn proven_with(mut self, stories: Vec<String>) -> Self {
        self.proven_with = stories;
        self
    }

    /// With the number of the run this outcome is from.
    #[must_use]
    pub fn in_run(mut self, number: u32) -> Self {
        self.run = Some(number);
        self
    }

    /// With the story's branch.
    #[must_use]
    pub fn on_branch(mut self, branch: impl Into<String>) -> Self {
        self.branch = Some(branch.into());
        self
    }

    /// With why it failed or was skipped.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// With the judge's note.
    #[must_use]
    pub fn with_judge(mut self, note: impl Into<String>) -> Self {
        self.judge = Some(note.into());
        self
    }

    /// With estimated tokens and, if known, cost.
    #[must_use]
    pub fn with_estimate(mut self, tokens: u64, cost_usd: Option<f64>) -> Self {
        self.estimated_tokens = Some(tokens);
        self.estimated_cost_usd = cost_usd;
        self
    }

    /// With the figures of a story's usage totals: its tokens, and its cost only if every turn
    /// had a reported cost or a known price (see [`UsageTotals::cost_usd`]), with their source.
    #[must_use]
    pub fn with_usage(mut self, totals: &UsageTotals) -> Self {
        self.usage = Some(UsageSummary::of(totals));
        self.with_estimate(totals.usage.total, totals.cost_usd())
    }

    /// Where the story's figures came from: its `usage.source`, else `estimated` (a report
    /// written before usage was reported only estimated).
    pub fn usage_source(&self) -> UsageSource {
        self.usage
            .map_or(UsageSource::Estimated, |usage| usage.source)
    }

    /// With when it started.
    #[must_use]
    pub fn started(mut self, at: Timestamp) -> Self {
        self.started_at = Some(at);
        self
    }

    /// With when it finished.
    #[must_use]
    pub fn finished(mut self, at: Timestamp) -> Self {
        self.finished_at = Some(at);
        self
    }

    /// The note a rendering shows: the reason, else the judge's note.
    pub fn note(&self) -> Option<&str> {
        self.reason.as_deref().or(self.judge.as_deref())
    }

    /// How long it ran, when it has a start and a finish no earlier than the start.
    pub fn duration(&self) -> Option<Duration> {
        elapsed(self.started_at?, self.finished_at?)
    }

    /// The estimated cost, when it is a finite number.
    pub(crate) fn cost(&self) -> Option<f64> {
        self.estimated_cost_usd.filter(|cost| cost.is_finite())
    }
}

impl SeatUsage {
    /// A seat's totals as the report carries them.
    pub fn new(seat: impl Into<String>, totals: &UsageTotals) -> Self {
        Self {
            seat: seat.into(),
            turns: totals.turns,
            prompt_tokens: totals.usage.prompt,
            completion_tokens: totals.usage.completion,
            estimated_tokens: totals.usage.total,
            estimated_cost_usd: totals.cost_usd(),
            unpriced_turns: totals.unpriced_turns,
            usage: Some(UsageSummary::of(totals)),
        }
    }

    /// The seat's figures as a summary: its `usage`, else (a report written before usage was
    /// reported) its estimated fields.
    pub fn summary(&self) -> UsageSummary {
        self.usage.unwrap_or(UsageSummary {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            cost_usd: self.estimated_cost_usd,
            source: UsageSource::Estimated,
        })
    }
}

impl SeatUsage {
    /// This seat's figures with `other`'s added (the same seat over two runs): the cost is known
    /// only when both are.
    #[must_use]
    pub fn plus(&self, other: &Self) -> Self {
        Self {
            seat: self.seat.clone(),
            turns: self.turns.saturating_add(other.turns),
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            estimated_tokens: self.estimated_tokens.saturating_add(other.estimated_tokens),
            estimated_cost_usd: self
                .estimated_cost_usd
                .zip(other.estimated_cost_usd)
                .map(|(a, b)| a + b),
            unpriced_turns: self.unpriced_turns.saturating_add(other.unpriced_turns),
            usage: Some(self.summary().plus(&other.summary())),
        }
    }
}

impl RunRecord {
    /// Run `number`, started at `started_at`, not finished yet.
    pub fn new(number: u32, started_at: Timestamp) -> Self {
        Self {
            number,
            started_at,
            finished_at: None,
        }
    }

    /// With when it finished.
    #[must_use]
    pub fn finished(mut self, at: Timestamp) -> Self {
        self.finished_at = Some(at);
        self
    }
}

impl OutcomeStatus {
    /// The status as the report writes it: `done`, `failed`, `skipped` or `stopped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Stopped => "stopped",
        }
    }
}

impl fmt::Display for OutcomeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Estimated {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for Estimated {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if bool::deserialize(deserializer)? {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom(
                "`estimated` must be true: report figures are always estimates",
            ))
        }
    }
}

impl JsonSchema for Estimated {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Estimated".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "boolean", "const": true })
    }
}

impl UsageMeter {
    /// Each seat's totals as the report carries them, in seat-name order.
    pub fn seat_usage(&self) -> Vec<SeatUsage> {
        self.seats()
            .map(|(seat, totals)| SeatUsage::new(seat, totals))
            .collect()
    }
}

/// How long after `start` `finish` is, or `None` if it is before `start`.
pub(crate) fn elapsed(start: Timestamp, finish: Timestamp) -> Option<Duration> {
    Duration::try_from(finish.duration_since(start)).ok()
}

/// A cost is left out of the JSON when unknown or not finite: JSON has no NaN, and `serde_json`
/// would write `null`.
#[expect(
    clippy::ref_option,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn cost_absent(cost: &Option<f64>) -> bool {
    !cost.is_some_and(f64::is_finite)
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether a count is zero (a count field left out of the JSON).
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::PutBack;

    #[test]
    fn a_put_back_names_its_turn() {
        let put = |story: Option<&str>, round| PutBack {
            story: story.map(str::to_owned),
            round,
            paths: vec!["check.sh".into()],
            moved_head: false,
        };
        assert_eq!(put(Some("a"), None).turn(), "story a's conflict turn");
        assert_eq!(put(None, None).turn(), "the final conflict turn");
        assert_eq!(put(None, Some(2)).turn(), "gate round 2");
    }
}
