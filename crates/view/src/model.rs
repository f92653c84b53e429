//! What `epic watch` shows, as plain data: the [`Board`] (a header and a row per story) and
//! the [`Detail`] of one story. `--format json` prints the board as it is here, so every
//! field is part of the contract (docs/contract.md, `epic watch`).

use serde::Serialize;

/// One epic, as the view shows it at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Board {
    /// The epic's id.
    pub epic_id: String,
    /// Whether a run holds the epic's lock right now; `false`: the board shows the last run.
    pub running: bool,
    /// Stories done (merged) of all the stories known.
    pub done: usize,
    /// Every story known (the recorded plan's, then any other with a state file or in the
    /// report).
    pub total: usize,
    /// The merge queue's batch being proven, if one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merging: Option<Batch>,
    /// Each seat of the run's rosters with its state; empty when no run recorded them.
    pub seats: Vec<Seat>,
    /// What the epic has spent, in US dollars, across its runs (the report's, plus the turns
    /// of a run going on that it does not have yet, where they are priced).
    pub spent_usd: f64,
    /// The run's `--budget-usd`, when its options recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// Why the run stopped for its budget, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_reached: Option<String>,
    /// The stories, those that need a person first, then in plan order.
    pub stories: Vec<Row>,
}

/// The batch of the merge queue being proven.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Batch {
    /// Its number in the run.
    pub batch: u64,
    /// Its stories, in merge order.
    pub stories: Vec<String>,
}

/// One seat of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seat {
    /// The seat's name.
    pub seat: String,
    /// `working`, `paused` or `idle`.
    pub state: SeatState,
    /// How many of its turns are going on.
    pub turns: u32,
    /// Until when it is paused (RFC 3339), when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Why it is paused (`usage limit`, `outage`), when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a seat is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatState {
    /// A turn of it is going on.
    Working,
    /// A usage limit or an outage holds it.
    Paused,
    /// Nothing of it is going on.
    Idle,
}

/// Where a story is, as the view tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It waits for a person's answer (`epic answer`).
    Waiting,
    /// It failed.
    Failed,
    /// A person stopped it (`epic retry` runs it again).
    Stopped,
    /// A turn of it, or a step, is going on.
    Running,
    /// A seat it needs is paused: it waits for the seat.
    Paused,
    /// Started, with no run going on (a rerun resumes it).
    Started,
    /// Skipped: a story it depends on did not merge.
    Skipped,
    /// No run has started it.
    NotStarted,
    /// Merged into the epic branch.
    Done,
}

impl Status {
    /// Whether a person has something to do about it (answer, retry): it stands out and sorts
    /// first.
    pub fn needs_person(self) -> bool {
        matches!(self, Self::Waiting | Self::Failed | Self::Stopped)
    }

    /// The status in a word, as the table shows it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Started => "started",
            Self::Skipped => "skipped",
            Self::NotStarted => "pending",
            Self::Done => "done",
        }
    }
}

/// One story's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The story's id.
    pub id: String,
    /// Where it is.
    pub status: Status,
    /// Its wave in the plan (0: no dependencies), when the plan is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wave: Option<usize>,
    /// The seat of the turn going on, if one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<String>,
    /// The role of the turn going on (`coder`, `judge`, …), if one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Seconds since it started (to its end, once it ended), when it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_secs: Option<u64>,
    /// The agent's latest action (``running `cargo test` ``), or the latest step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doing: Option<String>,
    /// Judge rounds it has had.
    pub rounds: u32,
    /// Merge revisions it has had (its merge red on the epic head, back to its coder).
    pub revisions: u32,
    /// Tokens of its turns (reported or estimated).
    pub tokens: u64,
    /// Cost of its turns in US dollars, when priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Why it failed or was skipped, or the question it waits on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the detail pane shows of the story selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detail {
    /// Its tasks, from its checkpoint (`stories/<id>.plan.md`): each with whether it is done.
    pub tasks: Vec<(bool, String)>,
    /// The name of its latest transcript and its last lines.
    pub transcript: Option<(String, Vec<String>)>,
    /// The last gate failure of it: the command and what happened.
    pub gate_failure: Option<String>,
    /// The issues of its last judge round that did not clear it.
    pub judge_issues: Vec<String>,
    /// Its rejected patch, when one was set aside.
    pub rejected_patch: Option<String>,
}
