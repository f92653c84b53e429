//! What a landing keeps in the epic's state: the journal of a landing under way
//! (`landing.json`), the record of a landing done (`landed.json`), and the plan with the branch
//! the epic started from (`plan.json`, written by `epic run`).

use epic_report::Landing;
use epic_story_plan::StoryPlan;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `landing.json`: a landing under way. Written before the target is merged into the epic
/// branch; `commit` is set, before the target moves, to the landing commit about to be put on
/// it. A rerun that finds it either sees `commit` on the target (the landing happened: it is
/// recorded and finished) or not (the epic branch goes back to `checkpoint` and the landing
/// starts again), so the target never gets two landing merges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct LandingJournal {
    /// The target branch (short name).
    pub(crate) target: String,
    /// The target's commit the landing started from (for this attempt).
    pub(crate) from: String,
    /// The epic head before the landing touched it.
    pub(crate) checkpoint: String,
    /// The landing commit, once made: the target moves to it by compare-and-swap against `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
    /// The landing as it is recorded once the target moved (conflicts, rounds, cost), set with
    /// `commit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) landing: Option<Landing>,
}

impl epic_state_store::Document for LandingJournal {
    const NAME: &'static str = "landing journal";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "check the target branch and the epic branch by hand (`git log \
         --first-parent`), then remove it";
}

/// `landed.json`: the epic's landing, as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Landed(pub(crate) Landing);

impl epic_state_store::Document for Landed {
    const NAME: &'static str = "landing record";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; `epic land` then checks the target again";
}

/// `plan.json`: the plan of the epic's last run and the branch the epic was started from, for
/// `epic land`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunPlan {
    /// The plan the last run ran.
    pub plan: StoryPlan,
    /// The branch checked out (or named as `--base`) when the epic branch was created, if it
    /// was a branch: where `epic land` lands by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_from: Option<String>,
}

impl epic_state_store::Document for RunPlan {
    const NAME: &'static str = "run plan";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; the next `epic run` records it again (pass `epic land \
         --plan PLAN` meanwhile)";
}
