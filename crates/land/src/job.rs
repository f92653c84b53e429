//! What a landing is given: the job ([`LandJob`]), and the name its turns are recorded under
//! ([`LANDING`]).

use epic_story_plan::StoryPlan;

/// The name the landing's turns are recorded under (events, transcripts).
pub const LANDING: &str = "land";

/// One `epic land`: the epic's plan, the target, and what to do.
#[derive(Debug, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent switches of the command line, each its own flag"
)]
pub struct LandJob {
    /// The epic's plan: its stories' paths say who owns a conflict.
    pub plan: StoryPlan,
    /// The branch to land on (short name: `main`).
    pub target: String,
    /// Land what is merged although some stories are not (`--partial`).
    pub partial: bool,
    /// Say what a landing would do and change nothing (`--dry-run`).
    pub dry_run: bool,
    /// Keep the worktrees and story branches after landing (`--keep`).
    pub keep: bool,
    /// Land although commits of the epic branch carry no attestation (`--allow-unattested`).
    pub allow_unattested: bool,
    /// Stop once the epic branch is green with the target in it, without moving the target
    /// (`--pr`: the caller pushes the epic branch and opens a pull request).
    pub stop_before_target: bool,
}
