//! `epic land`: a finished epic put on its target branch, proven ([`land_epic`]).
//!
//! The target comes to the epic, never the other way round. Under the epic's lock, in the epic
//! worktree: the target is merged into the epic branch; each conflicted path goes to the story
//! that owns it (one [`Role::Lander`](epic_agents::Role::Lander) turn per story with conflicts, its title, description,
//! `provides`, the paths and both sides' versions; `EPIC_STORY` is the story), the paths no
//! story owns to a final turn (`EPIC_STORY` empty); a file that still holds conflict markers is
//! not resolved. The merge is committed by epic (first parent the epic head, second the target),
//! then the gates run on it; red, the lander gets the failure (`--max-rounds` rounds, each fix
//! committed by epic and held to the test guard). Green, one merge commit
//! `<epic>: land epic/<id>` (first parent the target, tree the proven one) is made, and the
//! target moves to it by compare-and-swap against the commit the landing started from: moved
//! meanwhile, the landing goes back to the merge (at most twice). Giving up puts the epic branch
//! and worktree back where they were; the target is never touched until the epic branch is
//! green with the target's history in it.
//!
//! A journal (`landing.json`) makes it crash-safe: written before the merge, it gets the landing
//! commit before the target moves. A rerun that finds it sees that commit on the target (the
//! landing happened: recorded and finished) or not (the epic branch goes back to where the
//! landing found it, and the landing starts again): the target never gets two landing merges.
//!
//! A file per step: what a landing that died left (`recover.rs`), the course of a landing
//! (`attempt.rs`: the checks before anything is touched, the attempts and their journal, the dry
//! run), the merge of the target proven by the lander's turns and the gates (`prove.rs`), what
//! follows the move of the target (`finish.rs`), the lander's prompts (`prompt.rs`), the
//! documents of the epic's state (`record.rs`), and `--pr` (`pull_request.rs`). Here: what a
//! landing is given and gives back, and [`land_epic`].
//!
//! Every way a landing stops short says what to do next, the target untouched:
//!
//! ```
//! use epic_land::{NotLanded, Unmerged};
//!
//! let why = NotLanded::Unmerged {
//!     stories: vec![Unmerged { story: "cart-api".into(), status: "failed".into() }],
//! };
//! assert_eq!(
//!     why.to_string(),
//!     "a story is not merged: cart-api (failed). Finish them with `epic run`, or land what is \
//!      merged with --partial"
//! );
//! ```

mod attempt;
mod finish;
mod perimeter;
mod prompt;
mod prove;
mod pull_request;
mod record;
mod recover;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitId, Git};
use epic_report::{LandedConflict, Landing, PutBack};
use epic_state_store::{EpicDir, StoryStage, StoryState};
use epic_story_plan::{Story, StoryPlan};
use tokio_util::sync::CancellationToken;

pub use pull_request::{
    PullRequest, PullRequestError, PullRequestOpened, check_gh, open_pull_request,
};
pub use record::RunPlan;
pub(crate) use record::{Landed, LandingJournal};

use epic_executor::Gates;
use epic_executor::Recorder;
use epic_executor::{EPIC_WORKTREE_NAME, RunConfig, RunError, worktrees_root};
use epic_executor::{Event, EventSink, SeatPauses, SeatStop};
use epic_guard::TurnGuard;
use epic_process::offload::{self, BoxError, GitFailed};
use epic_process::sandbox::{Sandbox, SandboxUnavailable};

/// The name the landing's turns are recorded under (events, transcripts).
pub const LANDING: &str = "land";

/// How many times the landing goes back to the merge when the target moved meanwhile.
const RETRIES: u32 = 2;

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

/// Why a landing could not be attempted (docs/contract.md: exit 2, or 3 for a held lock).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandError {
    /// The repository has no working tree.
    #[error("the repository `{}` is bare; epic needs a repository with a working tree", common_dir.display())]
    Bare {
        /// Its git directory.
        common_dir: PathBuf,
    },
    /// The target branch does not exist.
    #[error("the target branch `{target}` does not exist")]
    NoTarget {
        /// The target.
        target: String,
    },
    /// The epic branch does not exist.
    #[error("the epic branch `{branch}` does not exist: has the epic run?")]
    NoEpicBranch {
        /// The branch.
        branch: String,
    },
    /// The target is the epic branch itself.
    #[error("the target `{target}` is the epic branch itself")]
    TargetIsEpicBranch {
        /// The target.
        target: String,
    },
    /// What `epic run` would refuse too: the lock held (exit 3), the epic worktree, the state.
    #[error(transparent)]
    Run(Box<RunError>),
    /// `--sandbox on` and no sandbox here.
    #[error(transparent)]
    Sandbox(#[from] SandboxUnavailable),
    /// Seats of the lander's roster (the coder's) cannot take turns: found by the seat check
    /// before the landing's first lander turn; the epic branch is put back, the target
    /// untouched.
    #[error(transparent)]
    SeatsNotReady(#[from] epic_agents::SeatsNotReady),
    /// A lander turn was stopped by its seats: every seat of the roster paused past
    /// `--max-wait`, or a seat not logged in. The epic branch is put back, the target untouched.
    #[error("{0}")]
    Stopped(SeatStop),
}

impl LandError {
    /// Whether another run holds the epic's lock (docs/contract.md: exit 3).
    pub fn is_locked(&self) -> bool {
        matches!(self, Self::Run(error) if error.is_locked())
    }
}

impl From<GitFailed> for LandError {
    fn from(error: GitFailed) -> Self {
        Self::Run(Box::new(error.into()))
    }
}

impl From<RunError> for LandError {
    fn from(error: RunError) -> Self {
        Self::Run(Box::new(error))
    }
}

/// Why an attempt stopped.
enum Halt {
    NotLanded(NotLanded),
    Cancelled,
    Error(LandError),
}

impl From<GitFailed> for Halt {
    fn from(error: GitFailed) -> Self {
        Self::Error(error.into())
    }
}

impl From<LandError> for Halt {
    fn from(error: LandError) -> Self {
        Self::Error(error)
    }
}

/// Lands the epic of `job.plan` on `job.target` with `config`'s seats, gates, sandbox, budget
/// and rounds; the landing's events go to `events` and `events.jsonl`.
///
/// # Cancel safety
///
/// Cancel `cancel` rather than dropping the future: the turn or gate in flight is killed, the
/// epic branch put back and [`LandOutcome::Interrupted`] returned. Dropping the future leaves
/// the journal; the next `epic land` finishes or undoes what it finds.
pub async fn land_epic(
    git: Arc<dyn Git>,
    job: LandJob,
    config: RunConfig,
    events: EventSink,
    cancel: CancellationToken,
) -> Result<LandOutcome, LandError> {
    let Some(main) = git.main_worktree().map(Path::to_path_buf) else {
        return Err(LandError::Bare {
            common_dir: git.common_dir().to_path_buf(),
        });
    };
    let epic = job.plan.epic_id.clone();
    let dir = EpicDir::new(git.common_dir(), &epic).map_err(RunError::EpicId)?;
    let epic_branch = config
        .epic_branch
        .clone()
        .unwrap_or_else(|| format!("epic/{epic}"));
    if epic_branch == job.target {
        return Err(LandError::TargetIsEpicBranch { target: job.target });
    }
    let worktree_root = worktrees_root(&main, &epic);
    let epic_worktree = worktree_root.join(EPIC_WORKTREE_NAME);
    let target_ref = format!("refs/heads/{}", job.target);
    let epic_ref = format!("refs/heads/{epic_branch}");
    let resolve = |name: String| {
        let main = main.clone();
        offload::git(&git, "resolve a branch", move |git| {
            Ok::<_, BoxError>(git.rev_parse(&main, &name).ok())
        })
    };
    if resolve(target_ref.clone()).await?.is_none() {
        return Err(LandError::NoTarget { target: job.target });
    }
    let Some(epic_head) = resolve(epic_ref.clone()).await? else {
        return Err(LandError::NoEpicBranch {
            branch: epic_branch,
        });
    };
    let unmerged = unmerged_stories(&dir, &job.plan).await;
    let lander = Lander {
        git: Arc::clone(&git),
        dir,
        plan: job.plan.clone(),
        config,
        epic_branch,
        epic_worktree,
        worktree_root,
        main,
        target: job.target.clone(),
        target_ref,
        events,
        cancel,
    };
    if job.dry_run {
        return lander
            .dry_run(epic_head, unmerged)
            .await
            .map(LandOutcome::DryRun);
    }
    let lock = epic_executor::take_lock(&lander.dir).await?;
    let log = epic_executor::open_log(&lander.dir).await?;
    let lander = Lander {
        events: epic_executor::logging_sink(log, Arc::clone(&lander.events)),
        ..lander
    };
    let outcome = lander.land(&job, unmerged).await;
    drop(lock);
    outcome
}

/// Which story owns `path`, if one does.
fn owner<'a>(plan: &'a StoryPlan, path: &str) -> Option<&'a Story> {
    plan.stories.iter().find(|story| {
        story
            .owned
            .iter()
            .any(|owned| epic_story_plan::path::within(path, owned))
    })
}

/// The stories of `plan` whose state does not say merged, in plan order.
async fn unmerged_stories(dir: &EpicDir, plan: &StoryPlan) -> Vec<Unmerged> {
    let stories: Vec<(String, Option<PathBuf>)> = plan
        .stories
        .iter()
        .map(|story| (story.id.clone(), dir.story_state(&story.id).ok()))
        .collect();
    offload::blocking(move || {
        stories
            .into_iter()
            .filter_map(|(id, path)| {
                let found =
                    path.and_then(|path| epic_state_store::load::<StoryState>(path).ok().flatten());
                let status = match found.map(|found| found.status) {
                    Some(StoryStage::Merged) => return None,
                    Some(other) => other.as_str().to_owned(),
                    None => "not started".to_owned(),
                };
                Some(Unmerged { story: id, status })
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// One landing at work.
struct Lander {
    git: Arc<dyn Git>,
    dir: EpicDir,
    plan: StoryPlan,
    config: RunConfig,
    epic_branch: String,
    epic_worktree: PathBuf,
    worktree_root: PathBuf,
    main: PathBuf,
    target: String,
    target_ref: String,
    events: EventSink,
    cancel: CancellationToken,
}

/// What an agent turn runs with during a landing.
struct Turns {
    recorder: Arc<Recorder>,
    guard: Arc<TurnGuard>,
    sandbox: Sandbox,
    gates: Gates,
    /// Whether the lander's seats were checked: once, before the landing's first turn.
    seats_checked: std::sync::atomic::AtomicBool,
    /// The seats' pauses: why a turn they stopped was cancelled.
    pauses: Arc<SeatPauses>,
}

/// The epic branch proven with the target in it.
struct Proven {
    head: CommitId,
    from: CommitId,
    conflicts: Vec<LandedConflict>,
    rounds: u32,
    /// The gates' results on the proven head, for the attestation of the landing's commits
    /// ([`Lander::attest_landing`]).
    gates: Vec<epic_executor::attest::AttestedGate>,
    /// The tree the gates passed on (the proven head's).
    tree: String,
    /// What the lander's turns changed outside their perimeter, put back.
    put_back: Vec<PutBack>,
}

impl Lander {
    fn note(&self, message: impl Into<String>) {
        (self.events)(Event::RunNote {
            message: message.into(),
        });
    }

    async fn git_op<T: Send + 'static, E: Into<BoxError> + Send + 'static>(
        &self,
        action: &str,
        op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
    ) -> Result<T, GitFailed> {
        offload::git(&self.git, action, op).await
    }

    async fn rev(&self, name: &str) -> Result<CommitId, GitFailed> {
        let (main, name) = (self.main.clone(), name.to_owned());
        self.git_op("resolve a branch", move |git| git.rev_parse(&main, &name))
            .await
    }

    async fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, GitFailed> {
        let (main, a, d) = (
            self.main.clone(),
            ancestor.to_owned(),
            descendant.to_owned(),
        );
        self.git_op("compare commits", move |git| git.is_ancestor(&main, &a, &d))
            .await
    }

    fn owned(&self, paths: Vec<String>) -> Vec<LandedConflict> {
        paths
            .into_iter()
            .map(|path| LandedConflict {
                story: owner(&self.plan, &path).map(|story| story.id.clone()),
                path,
            })
            .collect()
    }
}

/// Whether `text` holds a conflict marker line.
fn has_markers(text: &str) -> bool {
    text.lines().any(|line| {
        line.starts_with("<<<<<<< ")
            || line == "<<<<<<<"
            || line.starts_with(">>>>>>> ")
            || line == ">>>>>>>"
            || line == "======="
            || line.starts_with("||||||| ")
    })
}

/// A commit id the landing journal names.
fn parse(hex: &str) -> Result<CommitId, LandError> {
    hex.parse()
        .map_err(|error| state_error("read the landing journal", error))
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

fn state_error(
    action: &str,
    error: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> LandError {
    LandError::Run(Box::new(RunError::State {
        action: action.to_owned(),
        source: error.into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_markers_are_whole_lines() {
        assert!(has_markers(
            "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> main\n"
        ));
        assert!(has_markers("x\n=======\n"));
        assert!(!has_markers(
            "a heading\n=======  \nnot a marker: `<<<<<<<` inline\n"
        ));
        assert!(!has_markers("resolved\n"));
    }

    #[test]
    fn a_path_belongs_to_the_story_that_owns_it() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["src/a"]),
                Story::new("b", "B", ["src/b.rs"]),
            ],
        };
        assert_eq!(owner(&plan, "src/a/x.rs").map(|s| s.id.as_str()), Some("a"));
        assert_eq!(owner(&plan, "src/b.rs").map(|s| s.id.as_str()), Some("b"));
        assert!(owner(&plan, "src/ab.rs").is_none());
        assert!(owner(&plan, "README.md").is_none());
    }
}
