//! What a landing gives back ([`LandOutcome`]): landed, landed before, a dry run's findings
//! ([`DryRun`]), ready for a pull request, or why it did not land ([`NotLanded`], with the
//! stories not merged, [`Unmerged`]).

use std::path::PathBuf;

use epic_report::{LandedConflict, Landing, PutBack};

/// A story that is not merged, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmerged {
    /// The story.
    pub story: String,
    /// `started`, `failed`, or `not started`.
    pub status: String,
}

/// What a dry run found.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRun {
    /// The target branch.
    pub target: String,
    /// Whether the target moved since the epic branch last held it (not an ancestor of it).
    pub target_moved: bool,
    /// The paths a merge of the target into the epic branch would leave conflicted, with the
    /// story that owns each.
    pub conflicts: Vec<LandedConflict>,
    /// The stories that are not merged.
    pub unmerged: Vec<Unmerged>,
    /// The commits of the epic branch that carry no attestation.
    pub unattested: Vec<String>,
}

/// Why the epic did not land (docs/contract.md: exit 1); the target is untouched.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NotLanded {
    /// Stories are not merged (and not `--partial`).
    #[error(
        "{} not merged: {}. Finish them with `epic run`, or land what is merged with --partial",
        if stories.len() == 1 { "a story is" } else { "stories are" },
        stories.iter().map(|s| format!("{} ({})", s.story, s.status)).collect::<Vec<_>>().join(", ")
    )]
    Unmerged {
        /// Each with its status, in plan order.
        stories: Vec<Unmerged>,
    },
    /// Commits of the epic branch carry no attestation (and not `--allow-unattested`).
    #[error(
        "commits of the epic branch carry no attestation: {}; pass --allow-unattested to land \
         them anyway",
        commits.join(", ")
    )]
    Unattested {
        /// The commits.
        commits: Vec<String>,
    },
    /// The target is checked out in the main checkout, which has changes in paths the landing
    /// changes.
    #[error(
        "your checkout `{}` has `{target}` checked out with uncommitted changes in paths the \
         landing changes: {}. Commit or stash them, then rerun",
        checkout.display(),
        paths.join(", ")
    )]
    DirtyCheckout {
        /// The checkout.
        checkout: PathBuf,
        /// The target.
        target: String,
        /// The paths.
        paths: Vec<String>,
    },
    /// Conflicts the lander's turns left unresolved.
    #[error(
        "the merge of `{target}` into the epic branch left conflicts nobody resolved: {}; the \
         epic branch is back where it was",
        paths.join(", ")
    )]
    Unresolved {
        /// The target.
        target: String,
        /// The paths still conflicted (or holding markers).
        paths: Vec<String>,
    },
    /// The gates stayed red after the rounds.
    #[error(
        "the gates stay red on the epic branch with `{target}` merged in after {rounds} \
         round(s): {failure}; the epic branch is back where it was"
    )]
    GatesRed {
        /// The target.
        target: String,
        /// Rounds taken.
        rounds: u32,
        /// The last failure.
        failure: String,
    },
    /// A fix deleted or skipped tests.
    #[error("a fix of the landing {found}; the epic branch is back where it was")]
    TestsTampered {
        /// What it did to the tests.
        found: String,
    },
    /// The target kept moving.
    #[error(
        "`{target}` moved during the landing {attempts} times; the epic branch is back where it \
         was and `{target}` is untouched. Rerun when it is quiet"
    )]
    TargetKeptMoving {
        /// The target.
        target: String,
        /// Attempts made.
        attempts: u32,
    },
    /// Files of the epic worktree changed while its gates ran, by something other than epic:
    /// what the gates passed on is not what would land.
    #[error(
        "files of the epic worktree changed while its gates ran: {}; something other than epic \
         wrote them (a process an agent left running?), so nothing is proven. The epic branch is \
         back where it was",
        paths.join(", ")
    )]
    WorktreeChanged {
        /// The changed paths.
        paths: Vec<String>,
    },
    /// A lander turn failed.
    #[error("a lander turn{} failed: {error}; the epic branch is back where it was", story.as_ref().map_or_else(String::new, |s| format!(" of story `{s}`")))]
    TurnFailed {
        /// The story of the turn; none: the final or a gate turn.
        story: Option<String>,
        /// Why.
        error: String,
    },
}

/// How a landing ended.
#[derive(Debug, Clone)]
#[must_use = "a landing may not have happened"]
pub enum LandOutcome {
    /// Landed now.
    Landed(Landing),
    /// Landed before: nothing to do.
    AlreadyLanded {
        /// The target.
        target: String,
        /// The landing commit, where recorded.
        commit: Option<String>,
    },
    /// `--dry-run`: what a landing would do.
    DryRun(DryRun),
    /// The epic branch is green with the target in it; the target was not moved (`--pr`).
    Ready {
        /// The epic branch.
        epic_branch: String,
        /// The target.
        target: String,
        /// The proven epic head.
        head: String,
        /// The conflicts met.
        conflicts: Vec<LandedConflict>,
        /// Gate rounds.
        rounds: u32,
        /// What the lander's turns changed outside their perimeter, put back.
        put_back: Vec<PutBack>,
    },
    /// Not landed (exit 1).
    NotLanded(NotLanded),
    /// Cancelled; the epic branch was put back, the target is untouched (exit 130).
    Interrupted,
}
