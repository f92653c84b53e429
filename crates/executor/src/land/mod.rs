//! `epic land`: a finished epic put on its target branch, proven ([`land_epic`]).
//!
//! The target comes to the epic, never the other way round. Under the epic's lock, in the epic
//! worktree: the target is merged into the epic branch; each conflicted path goes to the story
//! that owns it (one [`Role::Lander`] turn per story with conflicts, its title, description,
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

mod prompt;
mod pull_request;
mod record;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitId, CommitOutcome, FileHead, Git};
use epic_report::{EpicReport, LandedConflict, Landing, Timestamp};
use epic_state_store::{EpicDir, StoryStage, StoryState};
use epic_story_plan::{Story, StoryPlan};
use tokio_util::sync::CancellationToken;

pub use pull_request::{
    PullRequest, PullRequestError, PullRequestOpened, check_gh, open_pull_request,
};
pub use record::RunPlan;
pub(crate) use record::{Landed, LandingJournal};

use crate::budget::Budget;
use crate::chat::{Chat, ChatContext, Recorder};
use crate::error::chain;
use crate::event::{Event, EventSink};
use crate::gates::{GateResult, Gates};
use crate::guard::TurnGuard;
use crate::offload::{self, BoxError, GitFailed};
use crate::pause::SeatPauses;
use crate::record::ReportDocument;
use crate::run::{EPIC_WORKTREE_NAME, RunConfig, RunError, worktrees_root};
use crate::sandbox::{self, Layout, Sandbox, SandboxUnavailable};
use crate::seat::{Role, SeatError};
use land_prompt::Sides;
use prompt as land_prompt;

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

/// Why the epic did not land (CONTRACT.md: exit 1); the target is untouched.
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
    },
    /// Not landed (exit 1).
    NotLanded(NotLanded),
    /// Cancelled; the epic branch was put back, the target is untouched (exit 130).
    Interrupted,
}

/// Why a landing could not be attempted (CONTRACT.md: exit 2, or 3 for a held lock).
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
}

impl LandError {
    /// Whether another run holds the epic's lock (CONTRACT.md: exit 3).
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
    let lock = crate::run::take_lock(&lander.dir).await?;
    let log = crate::run::open_log(&lander.dir).await?;
    let lander = Lander {
        events: crate::record::logging_sink(log, Arc::clone(&lander.events)),
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

/// The commits of the epic branch that carry no attestation, oldest first.
///
/// This is where the lead's `epic verify` (issue #25, point 5: the attestations written as git
/// notes under `refs/notes/epic`) plugs in: until it does, every commit counts as attested and
/// the list is empty. `epic land` refuses a non-empty list unless `--allow-unattested`, and then
/// lists the commits in the landing commit's message.
fn unattested_commits(_git: &Arc<dyn Git>, _epic_branch: &str) -> Vec<String> {
    Vec::new()
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
}

/// The epic branch proven with the target in it.
struct Proven {
    head: CommitId,
    from: CommitId,
    conflicts: Vec<LandedConflict>,
    rounds: u32,
    /// The gates' results on the proven head (command, how it ended, passed), for the
    /// attestation of the landing's commits ([`Lander::attest_landing`]).
    gates: Vec<(String, String, bool)>,
    /// The tree the gates passed on (the proven head's).
    tree: String,
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

    async fn dry_run(
        &self,
        epic_head: CommitId,
        unmerged: Vec<Unmerged>,
    ) -> Result<DryRun, LandError> {
        let from = self.rev(&self.target_ref).await?;
        let moved = !self
            .is_ancestor(&from.to_hex(), &epic_head.to_hex())
            .await?;
        let conflicts = if moved {
            let (main, ours, theirs) = (self.main.clone(), epic_head.to_hex(), from.to_hex());
            self.git_op("merge the target in memory", move |git| {
                git.merge_conflicts(&main, &ours, &theirs)
            })
            .await?
        } else {
            Vec::new()
        };
        Ok(DryRun {
            target: self.target.clone(),
            target_moved: moved,
            conflicts: self.owned(conflicts),
            unmerged,
            unattested: unattested_commits(&self.git, &self.epic_branch),
        })
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

    /// What a landing that died left: its lock files cleared, and its journal honoured (the
    /// landing finished when the target holds its commit, else the epic branch put back). The
    /// outcome when it finished the landing.
    async fn recover(&self, job: &LandJob) -> Result<Option<LandOutcome>, LandError> {
        // Under the epic's lock, a lock file on the epic worktree or branch is a dead landing's
        // (or run's): a `git merge` killed half way leaves `index.lock`.
        let (common, worktree, branch) = (
            self.git.common_dir().to_path_buf(),
            self.epic_worktree.clone(),
            self.epic_branch.clone(),
        );
        let cleared =
            offload::blocking(move || epic_git_ops::clear_stale_locks(&common, &worktree, &branch))
                .await
                .unwrap_or_default();
        for path in cleared {
            self.note(format!(
                "removed {}, left by a git process that died",
                path.display()
            ));
        }
        let journal_path = self.dir.landing_journal();
        let journal = {
            let path = journal_path.clone();
            offload::blocking(move || epic_state_store::load::<LandingJournal>(path))
                .await
                .map_err(|error| state_error("read the landing journal", error))?
                .map_err(|error| state_error("read the landing journal", error))?
        };
        if let Some(journal) = journal {
            // A landing died: a lock file on the target's ref (an `update-ref` killed half way)
            // or on your checkout's index (the checkout following it) is that landing's.
            if journal.target == self.target {
                let (common, main, target) = (
                    self.git.common_dir().to_path_buf(),
                    self.main.clone(),
                    self.target.clone(),
                );
                let cleared = offload::blocking(move || {
                    epic_git_ops::clear_stale_locks(&common, &main, &target)
                })
                .await
                .unwrap_or_default();
                for path in cleared {
                    self.note(format!(
                        "removed {}, left by the landing that died",
                        path.display()
                    ));
                }
            }
            if let Some(commit) = &journal.commit
                && journal.target == self.target
                && self.is_ancestor(commit, &self.target_ref).await?
            {
                // The target moved to the landing commit before the last landing died.
                self.note(format!(
                    "a landing that died had already moved `{}` to {commit}: finishing it",
                    self.target
                ));
                let from: CommitId = parse(&journal.from)?;
                let commit: CommitId = parse(commit)?;
                let mut landing = journal.landing.clone().unwrap_or_else(|| {
                    Landing::new(
                        &self.target,
                        commit.to_hex(),
                        from.to_hex(),
                        Timestamp::now(),
                    )
                });
                landing.landed_at = Timestamp::now();
                return self
                    .finish(job, landing, from, commit, None)
                    .await
                    .map(Some);
            }
            self.undo_dead_landing(&journal).await?;
        }
        Ok(None)
    }

    async fn land(self, job: &LandJob, unmerged: Vec<Unmerged>) -> Result<LandOutcome, LandError> {
        if let Some(finished) = self.recover(job).await? {
            return Ok(finished);
        }
        if let Some(outcome) = self.already_landed().await? {
            return Ok(outcome);
        }
        if !unmerged.is_empty() && !job.partial {
            return Ok(LandOutcome::NotLanded(NotLanded::Unmerged {
                stories: unmerged,
            }));
        }
        let unattested = unattested_commits(&self.git, &self.epic_branch);
        if !unattested.is_empty() && !job.allow_unattested {
            return Ok(LandOutcome::NotLanded(NotLanded::Unattested {
                commits: unattested,
            }));
        }
        // Before anything is touched: a checkout of the user's in the way of the landing.
        let checkpoint = self
            .rev(&format!("refs/heads/{}", self.epic_branch))
            .await?;
        if let Some(refused) = self.dirty_checkout(&checkpoint).await? {
            return Ok(LandOutcome::NotLanded(refused));
        }
        crate::run::prepare_epic_worktree(
            &self.git,
            &self.main,
            "HEAD",
            &self.epic_branch,
            &self.epic_worktree,
        )
        .await?;
        let epic = self.epic_worktree.clone();
        self.git_op("abort a merge left in the epic worktree", move |git| {
            git.abort_unfinished_merge(&epic)
        })
        .await?;
        let epic = self.epic_worktree.clone();
        let status = self
            .git_op("read the status of the epic worktree", move |git| {
                git.status(&epic, &[])
            })
            .await?;
        if status.is_dirty() {
            return Err(RunError::DirtyEpicWorktree {
                worktree: self.epic_worktree.clone(),
                paths: status.paths,
            }
            .into());
        }
        let turns = self.turns().await?;
        let left_out: Vec<String> = unmerged.into_iter().map(|u| u.story).collect();
        self.attempts(job, &turns, checkpoint, &unattested, left_out)
            .await
    }

    /// Merges the target into the epic branch and proves it, then moves the target by
    /// compare-and-swap; a target that moved meanwhile is merged again, at most [`RETRIES`]
    /// times.
    async fn attempts(
        &self,
        job: &LandJob,
        turns: &Turns,
        checkpoint: CommitId,
        unattested: &[String],
        left_out: Vec<String>,
    ) -> Result<LandOutcome, LandError> {
        let journal_path = self.dir.landing_journal();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let proven = match self.prove(turns, checkpoint, &journal_path).await {
                Ok(proven) => proven,
                Err(halt) => return self.give_up(halt, checkpoint, &journal_path).await,
            };
            self.attest_landing(&proven);
            if job.stop_before_target {
                self.record_proven(proven.head, Some(&turns.guard)).await;
                self.remove_journal(&journal_path, turns).await;
                return Ok(LandOutcome::Ready {
                    epic_branch: self.epic_branch.clone(),
                    target: self.target.clone(),
                    head: proven.head.to_hex(),
                    conflicts: proven.conflicts,
                    rounds: proven.rounds,
                });
            }
            let message = self.landing_message(unattested, &left_out);
            let (main, tree, parents) = (
                self.main.clone(),
                format!("{}^{{tree}}", proven.head.to_hex()),
                [proven.from, proven.head],
            );
            let commit = self
                .git_op("write the landing commit", move |git| {
                    git.commit_tree(&main, &tree, &parents, &message)
                })
                .await?;
            // The landing as it will be recorded, in the journal before the target moves: a
            // rerun that finds the target moved records it whole.
            let mut landing = Landing::new(
                &self.target,
                commit.to_hex(),
                proven.from.to_hex(),
                Timestamp::now(),
            );
            landing.conflicts.clone_from(&proven.conflicts);
            landing.rounds = proven.rounds;
            landing.cost_usd = turns
                .recorder
                .usage()
                .totals()
                .cost_usd()
                .unwrap_or_default();
            landing.left_out.clone_from(&left_out);
            let journal = LandingJournal {
                target: self.target.clone(),
                from: proven.from.to_hex(),
                checkpoint: checkpoint.to_hex(),
                commit: Some(commit.to_hex()),
                landing: Some(landing.clone()),
            };
            self.save_journal(&journal_path, journal, turns).await?;
            self.note(format!(
                "the epic branch is green with `{}` in it: moving `{}` to the landing commit \
                 {commit}",
                self.target, self.target
            ));
            let (main, name, reason) = (
                self.main.clone(),
                self.target_ref.clone(),
                format!("epic land: {}", self.dir.epic_id()),
            );
            let from = proven.from;
            let swapped = self
                .git_op("move the target", move |git| {
                    git.swap_ref(&main, &name, &commit, &from, &reason)
                })
                .await?;
            if swapped {
                self.note(format!("`{}` moved to {commit}: landed", self.target));
                landing.landed_at = Timestamp::now();
                return self
                    .finish(job, landing, proven.from, commit, Some(turns))
                    .await;
            }
            if attempt > RETRIES {
                let halt = Halt::NotLanded(NotLanded::TargetKeptMoving {
                    target: self.target.clone(),
                    attempts: attempt,
                });
                return self.give_up(halt, checkpoint, &journal_path).await;
            }
            self.note(format!(
                "`{}` moved during the landing: merging it into the epic branch again",
                self.target
            ));
        }
    }

    /// Attests the landing's own commits on the epic branch (the merge of the target and the
    /// lander's fixes, `proven.from`'s merge up to `proven.head`) with the gates' results and
    /// the tree they passed on (`proven.gates`, `proven.tree`).
    ///
    /// This is where the lead's attestations (issue #25, point 5: git notes under
    /// `refs/notes/epic`, written when a merge is proven) plug in; until they do, it records
    /// nothing.
    fn attest_landing(&self, proven: &Proven) {
        let _ = (self, &proven.gates, &proven.tree);
    }

    /// The landing commit's message: `<epic>: land epic/<id>`, then the stories left out and
    /// the commits landed without attestation.
    fn landing_message(&self, unattested: &[String], left_out: &[String]) -> String {
        let mut message = format!("{}: land {}\n", self.dir.epic_id(), self.epic_branch);
        if !left_out.is_empty() {
            let _ = write!(
                message,
                "\nLeft out (not merged): {}\n",
                left_out.join(", ")
            );
        }
        if !unattested.is_empty() {
            let _ = write!(
                message,
                "\nLanded without attestation: {}\n",
                unattested.join(", ")
            );
        }
        message
    }

    /// The landing already done, if it is: `landed.json`'s commit on the target, or the epic
    /// branch already in the target's history.
    async fn already_landed(&self) -> Result<Option<LandOutcome>, LandError> {
        let path = self.dir.landed();
        let landed = offload::blocking(move || epic_state_store::load::<Landed>(path))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        if let Some(Landed(landing)) = landed
            && landing.target == self.target
            && self.is_ancestor(&landing.commit, &self.target_ref).await?
        {
            return Ok(Some(LandOutcome::AlreadyLanded {
                target: self.target.clone(),
                commit: Some(landing.commit),
            }));
        }
        let epic_ref = format!("refs/heads/{}", self.epic_branch);
        let target = self.rev(&self.target_ref).await?;
        let head = self.rev(&epic_ref).await?;
        if head != target && self.is_ancestor(&epic_ref, &self.target_ref).await? {
            return Ok(Some(LandOutcome::AlreadyLanded {
                target: self.target.clone(),
                commit: None,
            }));
        }
        Ok(None)
    }

    /// Puts the epic branch back where a landing that died found it.
    async fn undo_dead_landing(&self, journal: &LandingJournal) -> Result<(), LandError> {
        let checkpoint = parse(&journal.checkpoint)?;
        let epic_ref = format!("refs/heads/{}", self.epic_branch);
        let head = self.rev(&epic_ref).await?;
        if self.is_ancestor(&journal.checkpoint, &epic_ref).await? {
            // The branch back at the checkpoint, and the worktree with it: the merge the dead
            // landing left open aborted, what its turns and gates wrote removed.
            crate::run::prepare_epic_worktree(
                &self.git,
                &self.main,
                "HEAD",
                &self.epic_branch,
                &self.epic_worktree,
            )
            .await?;
            let epic = self.epic_worktree.clone();
            self.git_op("undo the landing that died", move |git| {
                git.abort_unfinished_merge(&epic)?;
                git.rollback(&epic, &checkpoint).map_err(BoxError::from)
            })
            .await?;
            self.note(format!(
                "a landing that died left the epic branch at {head}; it is back at {checkpoint}, \
                 and the landing starts again"
            ));
        } else {
            // Something other than epic moved the branch since: it is not epic's to put back.
            self.note(format!(
                "a landing that died started from {checkpoint}, but the epic branch is at {head}, \
                 which does not descend from it; the branch is left as it is"
            ));
        }
        let path = self.dir.landing_journal();
        offload::blocking(move || epic_state_store::remove(path))
            .await
            .map_err(|error| state_error("remove the landing journal", error))?
            .map_err(|error| state_error("remove the landing journal", error))?;
        Ok(())
    }

    /// Refuses a main checkout that has the target checked out with changes in paths the
    /// landing changes.
    async fn dirty_checkout(&self, epic_head: &CommitId) -> Result<Option<NotLanded>, LandError> {
        let (main, target, head) = (self.main.clone(), self.target.clone(), epic_head.to_hex());
        let target_ref = self.target_ref.clone();
        let found = self
            .git_op("read your checkout", move |git| {
                if git.current_branch(&main)?.as_deref() != Some(target.as_str()) {
                    return Ok::<_, BoxError>(Vec::new());
                }
                let status = git.status(&main, &[])?;
                if !status.is_dirty() {
                    return Ok(Vec::new());
                }
                let changes = git.changed_paths_vs_base(&main, &target_ref, &head)?;
                Ok(status
                    .paths
                    .into_iter()
                    .filter(|path| {
                        changes.iter().any(|changed| {
                            epic_story_plan::path::within(changed, path)
                                || epic_story_plan::path::within(path, changed)
                        })
                    })
                    .collect())
            })
            .await?;
        Ok((!found.is_empty()).then(|| NotLanded::DirtyCheckout {
            checkout: self.main.clone(),
            target: self.target.clone(),
            paths: found,
        }))
    }

    /// The sandbox, the guard, the budget and the seat pauses of the landing's turns and gates.
    async fn turns(&self) -> Result<Turns, LandError> {
        let layout = Layout::new(&self.main, self.git.common_dir(), &self.worktree_root);
        let resolved = sandbox::resolve(self.config.sandbox, layout).await?;
        if let Some(message) = resolved.note {
            self.note(message);
        }
        let mut sandbox = resolved.sandbox;
        if !sandbox.is_on() {
            // As a run does: a daemon that escapes its turn is found as an orphan this process
            // adopts (`PR_SET_CHILD_SUBREAPER`).
            match crate::process::adopt_orphans() {
                Ok(()) => sandbox = sandbox.adopting(),
                Err(error) => self.note(format!(
                    "processes that escape their turn cannot be looked for (epic could not \
                     become their subreaper: {error})"
                )),
            }
        }
        if sandbox.is_on() {
            let common = self.git.common_dir().to_path_buf();
            offload::blocking(move || epic_git_ops::ensure_logs_dir(&common))
                .await
                .map_err(|error| state_error("create the reflog directory", error))?
                .map_err(|error| state_error("create the reflog directory", error))?;
        }
        let guard = {
            let (common, dir, root, extra) = (
                self.git.common_dir().to_path_buf(),
                self.dir.clone(),
                self.worktree_root.clone(),
                self.config.guarded_files.clone(),
            );
            offload::blocking(move || TurnGuard::new(&common, &dir, &root, &extra))
                .await
                .map_err(|error| state_error("read the files epic guards", error))?
                .map_err(|error| state_error("read the files epic guards", error))?
        };
        let guard = Arc::new(guard);
        let earlier = {
            let path = self.dir.report_json();
            offload::blocking(move || epic_state_store::load::<ReportDocument>(path))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .map_or(0.0, |report| report.0.spent_usd())
        };
        let budget = Arc::new(Budget::new(self.config.budget_usd, earlier));
        let pauses = Arc::new(SeatPauses::new(
            self.config.max_wait,
            self.config.outage_wait,
            Arc::clone(&self.events),
        ));
        let recorder = Recorder::new(
            LANDING,
            self.dir.transcripts_dir().join(format!("_{LANDING}")),
            self.config.prices.clone(),
            Arc::clone(&self.events),
        )
        .with_guard(Some(Arc::clone(&guard)))
        .with_budget(Some(budget))
        .with_pauses(Some(pauses));
        let gates = Gates::new(self.config.gates.iter().cloned(), self.config.gate_timeout)
            .with_sandbox(sandbox.clone())
            .with_tidying(Arc::clone(&self.git))
            .with_guard(Arc::clone(&guard));
        Ok(Turns {
            recorder: Arc::new(recorder),
            guard,
            sandbox,
            gates,
        })
    }

    async fn save_journal(
        &self,
        path: &Path,
        journal: LandingJournal,
        turns: &Turns,
    ) -> Result<(), LandError> {
        let guard = Arc::clone(&turns.guard);
        let path = path.to_path_buf();
        offload::blocking(move || {
            guard.epic_write(&path, || epic_state_store::save(&path, &journal))
        })
        .await
        .map_err(|error| state_error("write the landing journal", error))?
        .map_err(|error| state_error("write the landing journal", error))
    }

    async fn remove_journal(&self, path: &Path, turns: &Turns) {
        let guard = Arc::clone(&turns.guard);
        let path = path.to_path_buf();
        offload::blocking(move || guard.epic_write(&path, || epic_state_store::remove(&path).ok()))
            .await
            .ok();
    }

    /// Merges the target into the epic branch, has the conflicts resolved and the gates made
    /// green: the proven epic head.
    async fn prove(
        &self,
        turns: &Turns,
        checkpoint: CommitId,
        journal_path: &Path,
    ) -> Result<Proven, Halt> {
        let from = self.rev(&self.target_ref).await?;
        self.save_journal(
            journal_path,
            LandingJournal {
                target: self.target.clone(),
                from: from.to_hex(),
                checkpoint: checkpoint.to_hex(),
                commit: None,
                landing: None,
            },
            turns,
        )
        .await?;
        let head = self
            .rev(&format!("refs/heads/{}", self.epic_branch))
            .await?;
        let mut conflicts = Vec::new();
        let merged = if self.is_ancestor(&from.to_hex(), &head.to_hex()).await? {
            head
        } else {
            let (epic, rev) = (self.epic_worktree.clone(), from.to_hex());
            let paths = self
                .git_op("merge the target into the epic branch", move |git| {
                    git.start_merge(&epic, &rev)
                })
                .await?;
            self.note(format!(
                "merged `{}` ({from}) into the epic branch{}",
                self.target,
                if paths.is_empty() {
                    String::new()
                } else {
                    format!("; conflicts: {}", paths.join(", "))
                }
            ));
            if !paths.is_empty() {
                conflicts = self.owned(paths);
                self.resolve(turns, head, from, &conflicts).await?;
            }
            let message = format!(
                "{}: merge {} into {}",
                self.dir.epic_id(),
                self.target,
                self.epic_branch
            );
            let epic = self.epic_worktree.clone();
            self.git_op("commit the merge of the target", move |git| {
                let state = git.worktree_state(&epic)?;
                let commit = git.commit_tree(&epic, &state.tree, &[head, from], &message)?;
                git.rollback(&epic, &commit)?;
                Ok::<_, BoxError>(commit)
            })
            .await?
        };
        let (rounds, gates) = self.green(turns, merged).await?;
        // What lands is the head's tree: the gates proved it only if the files they ran on are
        // exactly that tree. Something that wrote the worktree meanwhile (a process a turn left
        // behind) leaves nothing proven.
        let epic = self.epic_worktree.clone();
        let status = self
            .git_op("read the status of the epic worktree", move |git| {
                git.status(&epic, &[])
            })
            .await?;
        if status.is_dirty() {
            return Err(Halt::NotLanded(NotLanded::WorktreeChanged {
                paths: status.paths,
            }));
        }
        let head = self
            .rev(&format!("refs/heads/{}", self.epic_branch))
            .await?;
        let epic = self.epic_worktree.clone();
        let tree = self
            .git_op("read the proven tree", move |git| git.worktree_state(&epic))
            .await?
            .tree;
        Ok(Proven {
            head,
            from,
            conflicts,
            rounds,
            gates,
            tree,
        })
    }

    /// One lander turn per story with conflicts, then one for the paths no story owns; fails
    /// while a path is still unmerged or holds conflict markers.
    async fn resolve(
        &self,
        turns: &Turns,
        ours: CommitId,
        theirs: CommitId,
        conflicts: &[LandedConflict],
    ) -> Result<(), Halt> {
        let mut by_story: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        for conflict in conflicts {
            by_story
                .entry(conflict.story.clone())
                .or_default()
                .push(conflict.path.clone());
        }
        // Stories in plan order, the unowned paths last.
        let mut groups: Vec<(Option<&Story>, Vec<String>)> = self
            .plan
            .stories
            .iter()
            .filter_map(|story| {
                by_story
                    .get(&Some(story.id.clone()))
                    .map(|paths| (Some(story), paths.clone()))
            })
            .collect();
        if let Some(paths) = by_story.get(&None) {
            groups.push((None, paths.clone()));
        }
        for (story, paths) in groups {
            let sides = self.sides(ours, theirs, &paths).await?;
            let prompt = land_prompt::conflicts(story, &self.target, &sides);
            let story =
                story.map_or_else(|| Story::new("", "", Vec::<String>::new()), Clone::clone);
            self.ask(turns, Arc::new(story), prompt).await?;
        }
        let left = self.unresolved(conflicts).await?;
        if left.is_empty() {
            return Ok(());
        }
        Err(Halt::NotLanded(NotLanded::Unresolved {
            target: self.target.clone(),
            paths: left,
        }))
    }

    /// Both sides of each path.
    async fn sides(
        &self,
        ours: CommitId,
        theirs: CommitId,
        paths: &[String],
    ) -> Result<Vec<Sides>, Halt> {
        let (epic, paths) = (self.epic_worktree.clone(), paths.to_vec());
        Ok(self
            .git_op("read both sides of the conflicts", move |git| {
                paths
                    .into_iter()
                    .map(|path| {
                        Ok::<_, epic_git_ops::LandGitError>(Sides {
                            ours: git.file_at(&epic, &ours.to_hex(), &path)?,
                            theirs: git.file_at(&epic, &theirs.to_hex(), &path)?,
                            path,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .await?)
    }

    /// The conflicted paths that still hold conflict markers.
    async fn unresolved(&self, conflicts: &[LandedConflict]) -> Result<Vec<String>, Halt> {
        let (epic, paths): (PathBuf, Vec<String>) = (
            self.epic_worktree.clone(),
            conflicts.iter().map(|c| c.path.clone()).collect(),
        );
        let left = offload::blocking(move || {
            paths
                .into_iter()
                .filter(
                    |path| match epic_git_ops::read_head(&epic, path, 64 * 1024 * 1024) {
                        Ok(FileHead::Text { text, .. }) => has_markers(&text),
                        Ok(FileHead::Binary { .. } | FileHead::Missing | FileHead::Directory) => {
                            false
                        }
                        Ok(_) | Err(_) => true,
                    },
                )
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        Ok(left)
    }

    /// One lander turn on `story` (empty id: the epic's).
    async fn ask(&self, turns: &Turns, story: Arc<Story>, prompt: String) -> Result<(), Halt> {
        let mut chat = Chat::new(
            Arc::clone(&self.config.coder),
            Role::Lander,
            land_prompt::system(
                self.dir.epic_id(),
                &self.plan.epic,
                &self.target,
                &self.config.extra_rules,
            ),
            ChatContext {
                epic: self.dir.epic_id().to_owned(),
                story: Arc::clone(&story),
                task: None,
                worktree: self.epic_worktree.clone(),
                slot: 0,
                turn_timeout: self.config.turn_timeout,
                sandbox: turns.sandbox.clone(),
                cancel: self.cancel.clone(),
            },
            Arc::clone(&turns.recorder),
        );
        let asked = chat.ask(prompt).await;
        // Without the sandbox, what the turn left running is found as an orphan and killed.
        for message in turns.sandbox.sweep().await {
            self.note(message);
        }
        match asked {
            Ok(_) => Ok(()),
            Err(SeatError::Cancelled) => Err(Halt::Cancelled),
            Err(error) => Err(Halt::NotLanded(NotLanded::TurnFailed {
                story: (!story.id.is_empty()).then(|| story.id.clone()),
                error: chain(&error),
            })),
        }
    }

    /// Runs the gates on the epic worktree; red, up to `max_rounds` lander rounds, each fix
    /// committed and held to the test guard. The rounds taken, and the gates' results on the
    /// green head.
    async fn green(
        &self,
        turns: &Turns,
        merged: CommitId,
    ) -> Result<(u32, Vec<(String, String, bool)>), Halt> {
        let rounds = self.config.max_rounds.max(1);
        let mut round = 0;
        loop {
            let (failure, results) = self.gates(turns).await?;
            let Some(failure) = failure else {
                return Ok((round, results));
            };
            if round >= rounds {
                return Err(Halt::NotLanded(NotLanded::GatesRed {
                    target: self.target.clone(),
                    rounds: round,
                    failure: first_line(&failure),
                }));
            }
            round += 1;
            let prompt = land_prompt::red_gates(&failure, round, rounds);
            self.ask(
                turns,
                Arc::new(Story::new("", "", Vec::<String>::new())),
                prompt,
            )
            .await?;
            let (epic, message) = (
                self.epic_worktree.clone(),
                format!(
                    "{}: land: fix the gates (round {round})",
                    self.dir.epic_id()
                ),
            );
            let committed = self
                .git_op("commit the lander's fix", move |git| {
                    git.commit_all(&epic, &message)
                })
                .await?;
            if matches!(committed, CommitOutcome::Committed(_)) {
                self.check_tests(merged).await?;
            }
        }
    }

    /// Runs the gates once: the failure, if red, and each gate's result (command, how it
    /// ended, passed).
    async fn gates(
        &self,
        turns: &Turns,
    ) -> Result<(Option<String>, Vec<(String, String, bool)>), Halt> {
        let events = Arc::clone(&self.events);
        let results = Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = Arc::clone(&results);
        let on_result = move |result: &GateResult| {
            kept.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((result.command.clone(), result.status.clone(), result.passed));
            events(Event::EpicGate {
                story: None,
                command: result.command.clone(),
                passed: result.passed,
                duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
                status: result.status.clone(),
            });
            if let Some(event) = result.leftovers_event(None) {
                events(event);
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), self.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), String::new()),
            (
                "EPIC_WORKTREE".to_owned(),
                self.epic_worktree.display().to_string(),
            ),
        ];
        let review = turns
            .gates
            .run(&self.epic_worktree, &env, &self.cancel, &on_result)
            .await
            .map_err(|_| Halt::Cancelled)?;
        let results = std::mem::take(
            &mut *results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if review.clean {
            return Ok((None, results));
        }
        let mut failure = review.summary.clone();
        for issue in &review.issues {
            let _ = write!(failure, "\n{}\n{}", issue.title, issue.description);
        }
        Ok((Some(failure), results))
    }

    /// Fails when the lander's fixes since `merged` deleted or skipped tests.
    async fn check_tests(&self, merged: CommitId) -> Result<(), Halt> {
        let patterns = self.config.test_patterns.clone();
        let (epic, base) = (self.epic_worktree.clone(), merged.to_hex());
        let changes = self
            .git_op("diff the lander's fixes", move |git| {
                git.file_changes_vs_base(
                    &epic,
                    &base,
                    "HEAD",
                    &crate::tests_guard::has_skip_marker,
                    &|path| crate::tests_guard::is_test_path(path, &patterns),
                )
            })
            .await?;
        let found = crate::tests_guard::tampering(&changes, &self.config.test_patterns);
        if found.is_empty() {
            return Ok(());
        }
        let mut what = Vec::new();
        if !found.deleted.is_empty() {
            what.push(format!("deleted {}", found.deleted.join(", ")));
        }
        for (from, to) in &found.renamed {
            what.push(format!("renamed {from} to {to}"));
        }
        if !found.linked.is_empty() {
            what.push(format!("replaced {} by links", found.linked.join(", ")));
        }
        if !found.emptied.is_empty() {
            what.push(format!("emptied {}", found.emptied.join(", ")));
        }
        for (file, marker) in &found.skipped {
            what.push(format!("skipped a test in {file} (`{marker}`)"));
        }
        Err(Halt::NotLanded(NotLanded::TestsTampered {
            found: what.join("; "),
        }))
    }

    /// Puts the epic branch and worktree back at `checkpoint` and says why the landing stopped.
    async fn give_up(
        &self,
        halt: Halt,
        checkpoint: CommitId,
        journal_path: &Path,
    ) -> Result<LandOutcome, LandError> {
        let epic = self.epic_worktree.clone();
        let undone = self
            .git_op("put the epic branch back", move |git| {
                git.abort_unfinished_merge(&epic)?;
                git.rollback(&epic, &checkpoint).map_err(BoxError::from)
            })
            .await;
        if let Err(error) = &undone {
            self.note(format!(
                "the epic branch could not be put back at {checkpoint}: {}",
                chain(error)
            ));
        }
        if undone.is_ok() {
            let path = journal_path.to_path_buf();
            offload::blocking(move || epic_state_store::remove(path).ok())
                .await
                .ok();
        }
        match halt {
            Halt::NotLanded(why) => Ok(LandOutcome::NotLanded(why)),
            Halt::Cancelled => Ok(LandOutcome::Interrupted),
            Halt::Error(error) => Err(error),
        }
    }

    /// After the target moved: the checkout brought along, the landing recorded (`landed.json`,
    /// the report), the journal removed, then (unless `--keep`) the worktrees and the story
    /// branches the target holds removed.
    async fn finish(
        &self,
        job: &LandJob,
        landing: Landing,
        from: CommitId,
        commit: CommitId,
        turns: Option<&Turns>,
    ) -> Result<LandOutcome, LandError> {
        let (main, target) = (self.main.clone(), self.target.clone());
        let followed = self
            .git_op("bring your checkout along", move |git| {
                if git.current_branch(&main)?.as_deref() != Some(target.as_str()) {
                    return Ok::<_, BoxError>(false);
                }
                git.follow(&main, &from, &commit)?;
                Ok(true)
            })
            .await;
        match followed {
            Ok(true) => self.note(format!(
                "your checkout `{}` follows `{}` to {commit}",
                self.main.display(),
                self.target
            )),
            Ok(false) => {}
            Err(error) => self.note(format!(
                "your checkout `{}` has `{}` checked out but could not follow it ({}); bring it \
                 along with `git read-tree -m -u {from} {commit}`",
                self.main.display(),
                self.target,
                chain(&error)
            )),
        }
        // The epic head the landing proved (the landing commit's second parent) is the one a
        // later `epic run` builds on.
        if let Ok(head) = self.rev(&format!("{commit}^2")).await {
            self.record_proven(head, turns.map(|turns| &turns.guard))
                .await;
        }
        self.record(&landing).await?;
        match turns {
            Some(turns) => {
                self.remove_journal(&self.dir.landing_journal(), turns)
                    .await;
            }
            None => {
                let path = self.dir.landing_journal();
                offload::blocking(move || epic_state_store::remove(path).ok())
                    .await
                    .ok();
            }
        }
        if !job.keep {
            self.clean_up().await;
        }
        Ok(LandOutcome::Landed(landing))
    }

    /// Records `head` as the epic's proven head (`proven.json`): the landing proved it, and a
    /// later `epic run` must not take the branch at it for one something else moved. Best
    /// effort, a note when it fails.
    async fn record_proven(&self, head: CommitId, guard: Option<&Arc<TurnGuard>>) {
        if let Err(error) = crate::story::ProvenHead::record(&self.dir, head, guard).await {
            self.note(format!(
                "the proven epic head could not be recorded: {}",
                chain(error.as_ref())
            ));
        }
    }

    /// Writes `landed.json` and the report with the landing.
    async fn record(&self, landing: &Landing) -> Result<(), LandError> {
        let (dir, landed, epic_branch) = (
            self.dir.clone(),
            Landed(landing.clone()),
            self.epic_branch.clone(),
        );
        offload::blocking(move || {
            epic_state_store::save(dir.landed(), &landed)
                .map_err(|error| Box::new(error) as BoxError)?;
            let report = epic_state_store::load::<ReportDocument>(dir.report_json())
                .ok()
                .flatten()
                .map_or_else(
                    || EpicReport::new(dir.epic_id(), epic_branch),
                    |document| document.0,
                );
            let mut report = report;
            report.landing = Some(landed.0);
            crate::record::write_report(&dir, &report).map_err(BoxError::from)
        })
        .await
        .map_err(|error| state_error("record the landing", error))?
        .map_err(|error| state_error("record the landing", error))
    }

    /// Removes the epic's worktrees and each story branch the target now holds; what cannot be
    /// removed is a note.
    async fn clean_up(&self) {
        let (root, target_ref, main, epic) = (
            self.worktree_root.clone(),
            self.target_ref.clone(),
            self.main.clone(),
            self.dir.epic_id().to_owned(),
        );
        let result = self
            .git_op("remove the epic's worktrees", move |git| {
                let root = std::path::absolute(&root).unwrap_or(root);
                let mut notes = Vec::new();
                for info in git.worktrees()? {
                    if !info.is_main
                        && info.path.starts_with(&root)
                        && let Err(error) = git.remove_worktree(&info.path)
                    {
                        notes.push(format!(
                            "the worktree `{}` could not be removed: {}",
                            info.path.display(),
                            chain(&error)
                        ));
                    }
                }
                git.prune_worktrees()?;
                for branch in git.branches_under(&format!("story/{epic}"))? {
                    let name = format!("refs/heads/{branch}");
                    if git.is_ancestor(&main, &name, &target_ref)?
                        && let Err(error) = git.delete_branch(&branch)
                    {
                        notes.push(format!(
                            "the branch `{branch}` could not be deleted: {}",
                            chain(&error)
                        ));
                    }
                }
                Ok::<_, BoxError>(notes)
            })
            .await;
        match result {
            Ok(notes) => {
                for note in notes {
                    self.note(note);
                }
            }
            Err(error) => self.note(chain(&error)),
        }
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
