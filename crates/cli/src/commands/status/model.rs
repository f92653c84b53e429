//! What `epic status` shows, as `--format json` prints it ([`StatusJson`], or [`EpicsJson`]
//! when several epics have run): plain data, gathered by `gather.rs` and drawn as text by
//! `text.rs`. docs/contract.md documents its keys.

use std::path::PathBuf;

use epic_state_store::{Hold, Holder, StoryStage};
use serde::Serialize;

/// `epic status --format json`: one epic.
#[derive(Debug, Serialize)]
pub(super) struct StatusJson {
    /// The epic's id.
    pub(super) epic_id: String,
    /// Whether a run holds the epic's lock right now.
    pub(super) running: bool,
    /// Who holds it (`pid`, `host`, `started_at`, `command`); `null` when no run does, or the
    /// holder has not recorded itself.
    pub(super) holder: Option<Holder>,
    /// Every story with a state file or in the last report: the report's (plan) order first,
    /// then the others by id.
    pub(super) stories: Vec<StoryJson>,
    /// The last report's totals, when there is a report.
    pub(super) report: Option<ReportJson>,
    /// The seats the running run has paused (a usage limit, an outage), per its events; left
    /// out when there are none (no run going, or no seat paused).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) paused: Vec<PausedJson>,
    /// What the agents of the running run are doing, per its events (the last tool call of each
    /// story's turn still going, from a preset that streams); left out when there is nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) doing: Vec<DoingJson>,
    /// Every seat of the running run's rosters with its state (`working`, `paused`, `idle`),
    /// per its events; left out when no run is going on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) seats: Vec<SeatJson>,
    /// Where and by which commit `epic land` landed the epic, per its report; left out until
    /// it landed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) landed: Option<LandedJson>,
}

/// The landing in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
pub(super) struct LandedJson {
    /// The branch it landed on.
    pub(super) target: String,
    /// The landing commit.
    pub(super) commit: String,
}

/// A paused seat in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
pub(super) struct PausedJson {
    /// The seat's name.
    pub(super) seat: String,
    /// When turns on it start again (RFC 3339): a limit's reset, an outage's next probe.
    pub(super) until: String,
    /// When the pause began (RFC 3339): for an outage, since when its service is unreachable.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(super) since: String,
    /// `usage limit` or `outage`.
    pub(super) reason: String,
    /// The story whose turn met it.
    pub(super) story: String,
}

/// One seat of the running run, in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
pub(super) struct SeatJson {
    /// The seat's name.
    pub(super) seat: String,
    /// `working` (a turn of it is going on), `paused` (a usage limit or an outage, until
    /// `until`) or `idle`.
    pub(super) state: &'static str,
    /// How many of its turns are going on.
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) turns: u32,
    /// Until when it is paused (RFC 3339), when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) until: Option<String>,
}

/// What one story's agent is doing, in [`StatusJson`].
#[derive(Debug, Clone, Serialize)]
pub(super) struct DoingJson {
    /// The story.
    pub(super) story: String,
    /// The turn's role (`coder`, `judge`, …).
    pub(super) role: String,
    /// What it does: ``running `cargo test` ``, `editing src/lib.rs`.
    pub(super) doing: String,
}

/// One story in [`StatusJson`].
#[derive(Debug, Serialize)]
pub(super) struct StoryJson {
    pub(super) id: String,
    /// `started`, `merged` or `failed` from the story's state file; `null` when it has none
    /// (never started).
    pub(super) status: Option<StoryStage>,
    /// The story branch (from the state file, else the report).
    pub(super) branch: Option<String>,
    /// The story's worktree (from the state file), when it still exists.
    pub(super) worktree: Option<PathBuf>,
    /// `done`, `failed` or `skipped` in the last report; `null` when not in one.
    pub(super) outcome: Option<epic_report::OutcomeStatus>,
    /// Why the story failed or was skipped, per the last report.
    pub(super) reason: Option<String>,
    /// Set when the story is done with nothing merged because its work was already on the epic
    /// branch, per the last report: the commit its evidence was checked on and the evidence
    /// (`{"commit","evidence":[{"path","provides"}]}`). Left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) in_place: Option<epic_report::InPlace>,
    /// How many of its turns epic ended as stalled, per the last report; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) stalled_turns: u32,
    /// How many of its turns epic ended as looping, per the last report; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) looping_turns: u32,
    /// How many requests of its ACP agents epic rejected (an edit outside its perimeter, a
    /// write a read-only turn may not make), per the last report; left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) permission_rejections: u32,
    /// How many times its merge was red on the epic head and it went back to its coder
    /// (`--merge-revisions`), per its revisions file (so while a run goes on too). Left out when
    /// never.
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) merge_revisions: u32,
    /// Where a person holds it, from its state file: `{"hold":"waiting","question","since"}`
    /// while it waits on `epic answer`, `{"hold":"stopped","uid","at"}` once `epic stop`
    /// stopped it. Left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) hold: Option<Hold>,
}

/// Whether a count is zero (left out of the JSON).
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn is_zero(count: &u32) -> bool {
    *count == 0
}

/// The last report's totals in [`StatusJson`].
#[derive(Debug, Serialize)]
pub(super) struct ReportJson {
    pub(super) epic_branch: String,
    pub(super) done: usize,
    pub(super) failed: usize,
    pub(super) skipped: usize,
    /// The stories a person stopped (`epic stop`); left out when none.
    #[serde(skip_serializing_if = "is_none_stopped")]
    pub(super) stopped: usize,
}

/// Whether no story was stopped (left out of the JSON).
#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's `skip_serializing_if` passes a reference"
)]
fn is_none_stopped(count: &usize) -> bool {
    *count == 0
}

/// `epic status --format json` without EPIC when several epics have run.
#[derive(Debug, Serialize)]
pub(super) struct EpicsJson {
    pub(super) epics: Vec<EpicSummary>,
}

/// One epic in [`EpicsJson`].
#[derive(Debug, Serialize)]
pub(super) struct EpicSummary {
    pub(super) epic_id: String,
    pub(super) running: bool,
}
