//! Running a whole epic: the preflight (lock, epic worktree, baseline), the scheduler loop that
//! starts ready stories in free slots, and the files that show a live picture.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use epic_git_ops::{CommitId, Git};
use epic_report::{EpicReport, PriceTable, StoryOutcome, StoryStatus, UsageMeter};
use epic_state_store::{
    EpicDir, EpicLock, EventLog, Holder, LockError, StoryState, StoryStatus as Saved,
};
use epic_story_plan::ValidPlan;
use tokio::sync::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::baseline::{GateBaseline, GateVerdict};
use crate::error::chain;
use crate::event::{Event, EventSink};
use crate::gates::{GateResult, Gates};
use crate::record::{self, Board, Column, Move, ReportDocument};
use crate::schedule::{Policy, Schedule};
use crate::seat::Seat;
use crate::story::{self, Ending, EpicHead, MergeJournal, Preparing, Shared, StoryEnd};
use crate::task_loop::{LoopConfig, Seats, TaskLoop};

/// The directory under which the epic branch's own worktree lives, beside the story worktrees.
pub const EPIC_WORKTREE_NAME: &str = "_epic";

/// Every `epic run` option, resolved (CONTRACT.md, "`epic run`"): what the CLI hands to
/// [`run_epic`].
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Where the epic branch starts if it does not exist yet (`--base`, `HEAD`); resolved in the
    /// user's checkout.
    pub base: String,
    /// The integration branch (`--epic-branch`); `None` means `epic/<epic_id>`.
    pub epic_branch: Option<String>,
    /// Stories implemented at once, at least 1 (`--concurrency`, 3).
    pub concurrency: usize,
    /// Stop at the first failed story (`--fail-fast`).
    pub fail_fast: bool,
    /// The agent that plans and implements (`--coder`).
    pub coder: Arc<dyn Seat>,
    /// The story-level judge (`--judge`); none: no judge rounds.
    pub judge: Option<Arc<dyn Seat>>,
    /// Per-task reviewers (`--reviewer`).
    pub reviewers: Vec<Arc<dyn Seat>>,
    /// Gate commands, run with `sh -c` (`--gate`).
    pub gates: Vec<String>,
    /// Setup commands, run with `sh -c` in every fresh or caught-up story worktree (`--setup`).
    pub setup: Vec<String>,
    /// Judge attempts, each but the last followed by one coder round (`--judge-rounds`, 2).
    pub judge_rounds: u32,
    /// Review rounds per task (`--max-rounds`, 3).
    pub max_rounds: u32,
    /// The deadline of one agent turn (`--turn-timeout`, 1800 s).
    pub turn_timeout: Duration,
    /// The deadline of one gate or setup command (`--gate-timeout`, 1800 s).
    pub gate_timeout: Duration,
    /// Keep a story's worktree after it merged (`--keep-worktrees`).
    pub keep_worktrees: bool,
    /// Start although the gates fail on the epic head (`--allow-red-baseline`).
    pub allow_red_baseline: bool,
    /// The order among ready stories (`--schedule`).
    pub schedule: Policy,
    /// Prices for the usage estimates.
    pub prices: PriceTable,
    /// Extra standing instructions for the coder (house rules).
    pub extra_rules: String,
    /// The hook board: a command (`sh -c`) that gets each story transition as JSON on standard
    /// input; `None`: only `board.md`.
    pub board_hook: Option<String>,
    /// The deadline of one hook run.
    pub hook_timeout: Duration,
    /// What a test file looks like ([`is_test_path`](crate::is_test_path)): a story whose diff
    /// deletes one, or adds a skip marker ([`SKIP_MARKERS`](crate::SKIP_MARKERS)), fails unless
    /// its plan entry sets `tests_change` (`--test-pattern`, [`DEFAULT_TEST_PATTERNS`](crate::DEFAULT_TEST_PATTERNS)).
    pub test_patterns: Vec<String>,
}

impl RunConfig {
    /// CONTRACT.md's defaults with this coder: base `HEAD`, `epic/<epic_id>`, concurrency 3, no
    /// judge, reviewers, gates or setup, 2 judge rounds, 3 review rounds, 1800 s deadlines,
    /// worktrees removed after merging, a green baseline required, critical-path order, the
    /// default prices, no hook (30 s deadline when one is set), the default test patterns.
    pub fn new(coder: Arc<dyn Seat>) -> Self {
        Self {
            base: "HEAD".to_owned(),
            epic_branch: None,
            concurrency: 3,
            fail_fast: false,
            coder,
            judge: None,
            reviewers: Vec::new(),
            gates: Vec::new(),
            setup: Vec::new(),
            judge_rounds: 2,
            max_rounds: 3,
            turn_timeout: Duration::from_mins(30),
            gate_timeout: Duration::from_mins(30),
            keep_worktrees: false,
            allow_red_baseline: false,
            schedule: Policy::CriticalPath,
            prices: PriceTable::default(),
            extra_rules: String::new(),
            board_hook: None,
            hook_timeout: Duration::from_secs(30),
            test_patterns: crate::tests_guard::DEFAULT_TEST_PATTERNS
                .iter()
                .map(|pattern| (*pattern).to_owned())
                .collect(),
        }
    }
}

/// How a run ended, once it started: the report, and whether it was interrupted.
#[derive(Debug, Clone)]
#[must_use = "the report says whether every story is done"]
pub struct RunOutcome {
    /// The report, as written to `report.json` and `report.md`.
    pub report: EpicReport,
    /// Whether the run was cancelled (CONTRACT.md: exit 130; the state is kept, a rerun
    /// resumes).
    pub interrupted: bool,
    /// The epic branch's worktree.
    pub epic_worktree: PathBuf,
    /// The epic's state directory.
    pub state_dir: PathBuf,
}

impl RunOutcome {
    /// Whether every story is done (CONTRACT.md: exit 0; else 1, or 130 when interrupted).
    pub fn all_done(&self) -> bool {
        !self.interrupted && self.report.all_done()
    }
}

/// Why a run could not start (or could not go on as a whole). [`is_locked`](Self::is_locked)
/// is CONTRACT.md's exit 3; everything else is exit 2.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The repository has no working tree of its own (bare): nowhere to put worktrees beside.
    #[error("the repository `{}` is bare; epic needs a repository with a working tree", common_dir.display())]
    Bare {
        /// Its git directory.
        common_dir: PathBuf,
    },
    /// The epic's id cannot name a state directory.
    #[error("the epic id cannot name a state directory")]
    EpicId(#[source] epic_state_store::UnsafeId),
    /// Another run holds the epic's lock (exit 3).
    #[error("another run of this epic is going on ({})", holder.as_ref().map_or_else(|| "its holder has not recorded itself".to_owned(), ToString::to_string))]
    Locked {
        /// Who holds it, when it recorded itself.
        holder: Option<Holder>,
        /// The lock error.
        #[source]
        source: LockError,
    },
    /// The epic's lock could not be taken for another reason.
    #[error("failed to take the epic's lock")]
    Lock(#[source] LockError),
    /// `--base` names no commit.
    #[error("the base `{base}` of the epic branch names no commit")]
    Base {
        /// The base as given.
        base: String,
        /// The git error.
        #[source]
        source: epic_git_ops::RevError,
    },
    /// The user's own checkout holds the epic branch; epic never switches or merges in it.
    #[error(
        "your checkout `{}` has the epic branch `{branch}` checked out; epic merges into that \
         branch in a worktree of its own and never touches your checkout. Switch your checkout \
         to another branch (`git switch -`), then rerun",
        checkout.display()
    )]
    EpicBranchCheckedOut {
        /// The epic branch.
        branch: String,
        /// The user's checkout.
        checkout: PathBuf,
    },
    /// Something other than the epic branch's worktree is in its place.
    #[error(
        "`{}` should be the epic branch's worktree but {found}; move it away, then rerun",
        path.display()
    )]
    EpicWorktree {
        /// The expected worktree.
        path: PathBuf,
        /// What is there instead.
        found: String,
    },
    /// An existing branch has the name of a directory of branches epic must create (`story`
    /// blocks `story/<epic>/<id>`), or lies under one it must create (`epic/e/old` blocks
    /// `epic/e`): git keeps a branch as a file under `refs/heads/`, so a name cannot be both a
    /// branch and a directory of branches.
    #[error(
        "the branch `{blocker}` exists, so git cannot create {wanted}: a branch name cannot also \
         be a directory of other branches. Rename it (`git branch -m {blocker} {}-old`), then \
         rerun",
        .blocker.replace('/', "-")
    )]
    BranchBlocked {
        /// The branch or branches epic must create, as the message names them.
        wanted: String,
        /// The existing branch in the way.
        blocker: String,
    },
    /// The epic worktree has uncommitted changes.
    #[error("{}", story::dirty_message(worktree, paths, None))]
    DirtyEpicWorktree {
        /// The epic worktree.
        worktree: PathBuf,
        /// Its changed paths.
        paths: Vec<String>,
    },
    /// The gates fail on the epic head before any story, and a red baseline is not allowed.
    #[error(
        "the gates fail on the epic head {commit} before any story ran:\n{}\nFix them on the \
         epic branch, or pass --allow-red-baseline to hold stories only to the gates that pass",
        failing.join("\n")
    )]
    RedBaseline {
        /// The epic head.
        commit: String,
        /// Each failing gate, with the end of its output.
        failing: Vec<String>,
    },
    /// Stories whose state says merged are not on the epic branch any more: something outside
    /// epic moved or reset it. Running on would build on a branch that lost them.
    #[error(
        "the epic branch `{epic_branch}` no longer contains the merged {}: {}. Something outside \
         epic moved or reset it. Put the branch back where it was (`git reflog {epic_branch}` \
         shows where), or delete those stories' state files to merge them again, then rerun",
        if stories.len() == 1 { "story" } else { "stories" },
        stories.join(", ")
    )]
    MergedStoriesMissing {
        /// The epic branch.
        epic_branch: String,
        /// The merged stories it lacks, in plan order.
        stories: Vec<String>,
    },
    /// A git operation of the preflight failed.
    #[error("git failed to {action}")]
    Git {
        /// What was being done.
        action: String,
        /// The git-ops error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file of the epic's state directory could not be read or written.
    #[error("failed to {action}")]
    State {
        /// What was being done.
        action: String,
        /// The state-store error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl RunError {
    /// Whether another run holds the epic's lock (CONTRACT.md: exit 3).
    pub fn is_locked(&self) -> bool {
        matches!(self, Self::Locked { .. })
    }

    fn git(action: &str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Git {
            action: action.to_owned(),
            source: source.into(),
        }
    }
}

/// Runs `git` call `op` in `spawn_blocking`.
async fn blocking<T, E>(
    git: &Arc<dyn Git>,
    action: &str,
    op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
) -> Result<T, RunError>
where
    T: Send + 'static,
    E: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    let git = Arc::clone(git);
    match tokio::task::spawn_blocking(move || op(git.as_ref())).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(RunError::git(action, error)),
        Err(error) => Err(RunError::git(action, error)),
    }
}

/// Runs the epic: every story of `plan`, in parallel up to `config.concurrency`, each merged
/// into the epic branch only when proven good. Events go to `events` and to `events.jsonl`.
///
/// # Design
///
/// A thin async loop around the synchronous [`Schedule`]: the schedule decides which stories
/// may start ([`Schedule::start_ready`]) and what a finished one changes; the loop spawns each
/// started story into a [`JoinSet`] with a free concurrency slot (`EPIC_SLOT`) and a child
/// cancellation token, then waits in `select!` for the next story to end or for `cancel`. When
/// a story ends the loop records its outcome (board, report, events), frees its slot, and asks
/// the schedule again: completion of any story wakes it, there is no wave barrier (unless the
/// `waves` policy asks for one). A panic in a story task becomes that story's failure.
///
/// A story's task ends as soon as its merge is recorded; the removal of its worktree (unless
/// `keep_worktrees`) is a cleanup task in a second [`JoinSet`], spawned after the stories the
/// merge made ready, and it waits until none of them is still adding its worktree (worktree
/// administration is serialized). The run waits for every cleanup before its final report; an
/// interrupt skips the removals not yet begun (a note names the worktrees left; `epic clean`
/// removes them).
///
/// Story tasks are never aborted: fail-fast and cancellation cancel their tokens and the loop
/// drains the set, so each story kills its agent, undoes a merge whose gates had not finished,
/// and leaves its state resumable. Merges are serialized by one merge lock; stories are cut
/// from, and catch up with, the last *proven* epic head, never a merge still being gated.
///
/// Before any story: the epic's lock (held to the end), stale worktree registrations pruned
/// (once per run, not per story), the epic branch (created from `base` when absent) in its own
/// worktree `<repo-parent>/<repo-name>.worktrees/<epic>/_epic`, a merge left unproven by a run
/// that died (undone), a clean epic worktree, and the gates' baseline on the epic head (cached
/// per commit in `gates/baseline.json`).
///
/// # Cancel safety
///
/// Cancel `cancel` rather than dropping the future: the run then stops launching, cancels every
/// running story, waits for them (and for worktree removals under way) to wind down, writes the
/// report and returns with
/// [`RunOutcome::interrupted`] set. Dropping the future aborts the story tasks where they are;
/// their states stay resumable, and an unproven merge is undone by the next run.
pub async fn run_epic(
    git: Arc<dyn Git>,
    plan: ValidPlan,
    config: RunConfig,
    events: EventSink,
    cancel: CancellationToken,
) -> Result<RunOutcome, RunError> {
    let epic = plan.plan().epic_id.clone();
    let Ready {
        dir,
        lock,
        events,
        epic_branch,
        worktree_root,
        epic_worktree,
        head,
    } = preflight(&git, &plan, &config, events).await?;
    events(Event::RunStarted {
        epic: epic.clone(),
        epic_branch: epic_branch.clone(),
        epic_worktree: epic_worktree.display().to_string(),
        stories: plan.plan().stories.len(),
        concurrency: config.concurrency.max(1),
    });
    let all_gates = Gates::new(config.gates.iter().cloned(), config.gate_timeout);
    let Some(baseline) =
        check_baseline(&dir, &all_gates, &epic_worktree, head, &events, &cancel).await
    else {
        // Interrupted while the baseline ran: nothing started.
        let report = report_unstarted(&plan, &epic_branch, &dir, &config, &events);
        drop(lock);
        return Ok(RunOutcome {
            report,
            interrupted: true,
            epic_worktree,
            state_dir: dir.root().to_path_buf(),
        });
    };
    let failed = baseline.failed();
    if !failed.is_empty() && !config.allow_red_baseline {
        return Err(RunError::RedBaseline {
            commit: head.to_hex(),
            failing: failed
                .iter()
                .map(|command| format!("- {command}"))
                .collect(),
        });
    }
    if !failed.is_empty() {
        events(Event::RunNote {
            message: format!(
                "the gates {} fail on the epic head already; stories are held to the others, \
                 and a merge is undone only if a gate that passed before it fails",
                failed.join(", ")
            ),
        });
    }
    let green = baseline.passed();
    let story_gates = if config.allow_red_baseline {
        all_gates.only(|command| green.contains(command))
    } else {
        all_gates.clone()
    };
    let tasks = TaskLoop::new(
        Arc::clone(&git),
        story_gates.clone(),
        Seats {
            coder: Arc::clone(&config.coder),
            reviewers: config.reviewers.clone(),
        },
        LoopConfig {
            max_rounds: config.max_rounds,
            turn_timeout: config.turn_timeout,
            extra_rules: config.extra_rules.clone(),
            prices: config.prices.clone(),
        },
        Arc::clone(&events),
    );
    let previous = epic_state_store::load::<ReportDocument>(dir.report_json())
        .ok()
        .flatten()
        .map(|document| document.0);
    let shared = Arc::new(Shared {
        git,
        dir,
        plan: Arc::new(plan.plan().clone()),
        config,
        epic_branch,
        epic_worktree,
        worktree_root,
        tasks,
        story_gates,
        epic_gates: all_gates,
        merge: Mutex::new(EpicHead { green }),
        proven: std::sync::Mutex::new(head),
        preparing: Preparing::new(),
        events,
    });
    let outcome = Loop::new(Arc::clone(&shared), &plan, previous.as_ref())
        .run(cancel)
        .await;
    drop(lock);
    Ok(outcome)
}

fn base_report(plan: &ValidPlan, epic_branch: &str) -> EpicReport {
    EpicReport::new(&plan.plan().epic_id, epic_branch)
}

/// What the preflight leaves ready.
struct Ready {
    dir: EpicDir,
    lock: EpicLock,
    events: EventSink,
    epic_branch: String,
    worktree_root: PathBuf,
    epic_worktree: PathBuf,
    head: CommitId,
}

/// Everything before the baseline: the lock, the event log, stale worktree registrations
/// pruned, the epic branch and its worktree, an unproven merge undone, every merged story still
/// on the epic branch, a clean epic worktree, and its head.
async fn preflight(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    config: &RunConfig,
    events: EventSink,
) -> Result<Ready, RunError> {
    let Some(main) = git.main_worktree().map(Path::to_path_buf) else {
        return Err(RunError::Bare {
            common_dir: git.common_dir().to_path_buf(),
        });
    };
    let epic = plan.plan().epic_id.as_str();
    let dir = EpicDir::new(git.common_dir(), epic).map_err(RunError::EpicId)?;
    let lock = take_lock(&dir).await?;
    let log = EventLog::open(dir.events()).map_err(|error| RunError::State {
        action: "open the event log".to_owned(),
        source: Box::new(error),
    })?;
    let events = record::logging_sink(log, events);
    let epic_branch = config
        .epic_branch
        .clone()
        .unwrap_or_else(|| format!("epic/{epic}"));
    let worktree_root = worktrees_root(&main, epic);
    let epic_worktree = worktree_root.join(EPIC_WORKTREE_NAME);

    for path in story::clear_stale_locks(git.common_dir(), &epic_worktree, &epic_branch) {
        events(Event::RunNote {
            message: format!(
                "removed {}, left by a git process of a run that died",
                path.display()
            ),
        });
    }
    prepare_epic_worktree(git, &main, &config.base, &epic_branch, &epic_worktree).await?;
    // Every story branch is `story/<epic>/<id>`: a branch `story` or `story/<epic>` blocks them
    // all, and one under `story/<epic>/<id>/` blocks that story; better said once, here, than by
    // every story's worktree add.
    if let Some(blocker) = blocking_branch(git, &format!("story/{epic}/")).await? {
        return Err(RunError::BranchBlocked {
            wanted: format!("the story branches `story/{epic}/<id>`"),
            blocker,
        });
    }
    let under = blocking(git, "list the story branches", {
        let directory = format!("story/{epic}");
        move |git| git.branches_under(&directory)
    })
    .await?;
    let prefix = format!("story/{epic}/");
    for blocker in under {
        let Some((id, _)) = blocker
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once('/'))
        else {
            continue;
        };
        if plan.index_of(id).is_some() {
            return Err(RunError::BranchBlocked {
                wanted: format!("the branch `story/{epic}/{id}` of story '{id}'"),
                blocker,
            });
        }
    }
    recover_merge(git, &dir, &epic_worktree, &events).await?;
    // Before the status: a moved epic branch also leaves its worktree looking dirty, and the
    // lost stories are what the user must hear about.
    check_merged_stories(git, plan, &dir, &epic_worktree, &epic_branch).await?;
    let status = blocking(git, "read the status of the epic worktree", {
        let epic_worktree = epic_worktree.clone();
        move |git| git.status(&epic_worktree, &[])
    })
    .await?;
    if status.is_dirty() {
        return Err(RunError::DirtyEpicWorktree {
            worktree: epic_worktree,
            paths: status.paths,
        });
    }
    let head = blocking(git, "read the epic head", {
        let epic_worktree = epic_worktree.clone();
        move |git| git.checkpoint(&epic_worktree)
    })
    .await?;
    Ok(Ready {
        dir,
        lock,
        events,
        epic_branch,
        worktree_root,
        epic_worktree,
        head,
    })
}

/// Fails when a story whose state says merged (for its current plan entry) is not on the epic
/// branch: its story branch, when it still exists, must be an ancestor of the epic head.
async fn check_merged_stories(
    git: &Arc<dyn Git>,
    plan: &ValidPlan,
    dir: &EpicDir,
    epic_worktree: &Path,
    epic_branch: &str,
) -> Result<(), RunError> {
    let mut merged = Vec::new();
    for story in &plan.plan().stories {
        let state = dir
            .story_state(&story.id)
            .ok()
            .and_then(|path| epic_state_store::load::<StoryState>(path).ok().flatten());
        if let Some(state) = state
            && state.status == Saved::Merged
            && state.hash == epic_story_plan::story_hash(story)
        {
            merged.push((story.id.clone(), state.branch));
        }
    }
    if merged.is_empty() {
        return Ok(());
    }
    let missing = blocking(git, "check the merged stories are on the epic branch", {
        let (epic_worktree, epic_branch) = (epic_worktree.to_path_buf(), epic_branch.to_owned());
        move |git| {
            let mut missing = Vec::new();
            for (id, branch) in merged {
                if git.branch_exists(&branch)?
                    && !git.is_ancestor(
                        &epic_worktree,
                        &format!("refs/heads/{branch}"),
                        &format!("refs/heads/{epic_branch}"),
                    )?
                {
                    missing.push(id);
                }
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(missing)
        }
    })
    .await?;
    if missing.is_empty() {
        Ok(())
    } else {
        Err(RunError::MergedStoriesMissing {
            epic_branch: epic_branch.to_owned(),
            stories: missing,
        })
    }
}

/// The report of a run interrupted before any story started, written.
fn report_unstarted(
    plan: &ValidPlan,
    epic_branch: &str,
    dir: &EpicDir,
    config: &RunConfig,
    events: &EventSink,
) -> EpicReport {
    let mut outcomes = vec![None; plan.plan().stories.len()];
    skip_unfinished(
        plan,
        &mut outcomes,
        "not started: the run was interrupted",
        events,
    );
    let report = build_report(
        plan,
        epic_branch,
        &outcomes,
        &UsageMeter::new(config.prices.clone()),
    );
    if let Err(error) = record::write_report(dir, &report) {
        events(Event::RunNote {
            message: format!("the report could not be written: {error}"),
        });
    }
    report
}

/// Where the worktrees of epic `epic` live, for a repository whose main worktree is `main`:
/// `<repo-parent>/<repo-name>.worktrees/<epic>` (CONTRACT.md). Each story's worktree is the
/// story id under it, the epic branch's is [`EPIC_WORKTREE_NAME`].
///
/// ```
/// use std::path::Path;
///
/// let root = epic_executor::worktrees_root(Path::new("/src/shop"), "checkout");
/// assert_eq!(root, Path::new("/src/shop.worktrees/checkout"));
/// ```
pub fn worktrees_root(main: &Path, epic: &str) -> PathBuf {
    let name = main.file_name().map_or_else(
        || "repo".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    );
    main.parent()
        .unwrap_or(main)
        .join(format!("{name}.worktrees"))
        .join(epic)
}

async fn take_lock(dir: &EpicDir) -> Result<EpicLock, RunError> {
    let dir = dir.clone();
    let taken = tokio::task::spawn_blocking(move || EpicLock::acquire(&dir))
        .await
        .map_err(|error| RunError::State {
            action: "take the epic's lock".to_owned(),
            source: Box::new(error),
        })?;
    taken.map_err(|error| match error {
        LockError::Held { ref holder, .. } => RunError::Locked {
            holder: holder.clone(),
            source: error,
        },
        error => RunError::Lock(error),
    })
}

/// The existing branch, if any, that keeps git from creating the branch `name`: one named like
/// one of its directories (`story` and `story/e` for `story/e/a`), or one under it (`story/e/a/x`).
/// A trailing `/` makes `name` a directory: only the branches above it count.
async fn blocking_branch(git: &Arc<dyn Git>, name: &str) -> Result<Option<String>, RunError> {
    let directories: Vec<String> = name
        .match_indices('/')
        .map(|(at, _)| name[..at].to_owned())
        .collect();
    let own = (!name.ends_with('/')).then(|| name.to_owned());
    blocking(
        git,
        "look up the branches in the way of a new one",
        move |git| {
            for directory in directories {
                if git.branch_exists(&directory)? {
                    return Ok(Some(directory));
                }
            }
            match own {
                Some(name) => Ok(git.branches_under(&name)?.into_iter().next()),
                None => Ok::<_, epic_git_ops::BranchError>(None),
            }
        },
    )
    .await
}

/// Prunes stale worktree registrations (the run's one prune: a story's worktree add prunes
/// again only when it fails), creates the epic branch from `base` when absent, and makes sure
/// `path` is its worktree.
async fn prepare_epic_worktree(
    git: &Arc<dyn Git>,
    main: &Path,
    base: &str,
    branch: &str,
    path: &Path,
) -> Result<(), RunError> {
    let exists = blocking(git, "look up the epic branch", {
        let branch = branch.to_owned();
        move |git| git.branch_exists(&branch)
    })
    .await?;
    if !exists {
        if let Some(blocker) = blocking_branch(git, branch).await? {
            return Err(RunError::BranchBlocked {
                wanted: format!("the epic branch `{branch}`"),
                blocker,
            });
        }
        let start = {
            let (git, main, base) = (Arc::clone(git), main.to_path_buf(), base.to_owned());
            tokio::task::spawn_blocking(move || git.rev_parse(&main, &base))
                .await
                .map_err(|error| RunError::git("resolve the base", error))?
        };
        let start = start.map_err(|source| RunError::Base {
            base: base.to_owned(),
            source,
        })?;
        blocking(git, "create the epic branch", {
            let branch = branch.to_owned();
            move |git| git.create_branch(&branch, &start)
        })
        .await?;
    }
    blocking(git, "prune stale worktree registrations", |git| {
        git.prune_worktrees()
    })
    .await?;
    // An add of the epic worktree killed half way (its "initializing" lock still there) left
    // a partial checkout that no run has used: removed here, it is added again below.
    if epic_git_ops::add_interrupted(path) {
        let path = path.to_path_buf();
        blocking(
            git,
            "remove the epic worktree an add left half made",
            move |git| git.remove_worktree(&path),
        )
        .await?;
    }
    let worktrees = blocking(git, "list the worktrees", |git| git.worktrees()).await?;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut registered = false;
    for info in &worktrees {
        let here = same_path(&info.path, &absolute);
        let holds_branch = info.branch.as_deref() == Some(branch);
        if info.is_main && holds_branch {
            return Err(RunError::EpicBranchCheckedOut {
                branch: branch.to_owned(),
                checkout: info.path.clone(),
            });
        }
        if here {
            if info.prunable {
                continue;
            }
            if !holds_branch {
                return Err(RunError::EpicWorktree {
                    path: absolute,
                    found: info.branch.as_ref().map_or_else(
                        || "it has a detached head".to_owned(),
                        |found| format!("it has branch `{found}` checked out"),
                    ),
                });
            }
            registered = true;
        } else if holds_branch && !info.prunable {
            return Err(RunError::EpicWorktree {
                path: absolute,
                found: format!(
                    "the epic branch is checked out in `{}` instead",
                    info.path.display()
                ),
            });
        }
    }
    if !registered {
        if absolute.exists() {
            return Err(RunError::EpicWorktree {
                path: absolute,
                found: "it exists and is not a worktree of this repository".to_owned(),
            });
        }
        blocking(git, "add the epic branch's worktree", {
            let (path, branch) = (absolute.clone(), branch.to_owned());
            move |git| git.add_worktree(&path, &branch)
        })
        .await?;
    }
    Ok(())
}

/// Whether two paths name the same directory (canonically, when both exist).
fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Undoes a merge a previous run left unproven (it died while gating it), unless that story's
/// state says it merged.
async fn recover_merge(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    epic_worktree: &Path,
    events: &EventSink,
) -> Result<(), RunError> {
    let path = MergeJournal::path(dir);
    let journal = match epic_state_store::load::<MergeJournal>(&path) {
        Ok(Some(journal)) => journal,
        Ok(None) => return Ok(()),
        Err(error) => {
            return Err(RunError::State {
                action: "read the merge journal".to_owned(),
                source: Box::new(error),
            });
        }
    };
    let merged = dir
        .story_state(&journal.story)
        .ok()
        .and_then(|state| epic_state_store::load::<StoryState>(state).ok().flatten())
        .is_some_and(|state| state.status == Saved::Merged);
    if !merged {
        let to: CommitId = journal
            .checkpoint
            .parse()
            .map_err(|error| RunError::State {
                action: "read the merge journal".to_owned(),
                source: Box::new(error),
            })?;
        let epic_worktree = epic_worktree.to_path_buf();
        blocking(
            git,
            "undo the unproven merge of an interrupted run",
            move |git| git.rollback(&epic_worktree, &to),
        )
        .await?;
        events(Event::RunNote {
            message: format!(
                "a previous run stopped while proving the merge of story '{}'; the merge was \
                 undone (the epic branch is back at {})",
                journal.story, journal.checkpoint
            ),
        });
    }
    std::fs::remove_file(&path).map_err(|error| RunError::State {
        action: "remove the merge journal".to_owned(),
        source: Box::new(error),
    })
}

/// The gates' verdict on the epic head, per command, from the cache or by running them;
/// `None` when cancelled.
async fn check_baseline(
    dir: &EpicDir,
    gates: &Gates,
    epic_worktree: &Path,
    head: CommitId,
    events: &EventSink,
    cancel: &CancellationToken,
) -> Option<GateBaseline> {
    let commit = head.to_hex();
    if let Some(cached) = GateBaseline::cached(dir, &commit, gates.commands()) {
        events(Event::BaselineChecked {
            commit,
            passed: cached.passed().into_iter().collect(),
            failed: cached.failed(),
            cached: true,
        });
        return Some(cached);
    }
    let sink = Arc::clone(events);
    let on_result = move |result: &GateResult| {
        sink(Event::EpicGate {
            story: None,
            command: result.command.clone(),
            passed: result.passed,
            duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
            status: result.status.clone(),
        });
    };
    let env = vec![
        ("EPIC_EPIC".to_owned(), dir.epic_id().to_owned()),
        (
            "EPIC_WORKTREE".to_owned(),
            epic_worktree.display().to_string(),
        ),
    ];
    let results = gates
        .run_each(epic_worktree, &env, cancel, &on_result)
        .await
        .ok()?;
    let baseline = GateBaseline {
        commit: commit.clone(),
        gates: results
            .iter()
            .map(|(result, _)| GateVerdict {
                command: result.command.clone(),
                passed: result.passed,
            })
            .collect(),
    };
    if let Err(error) = baseline.save(dir) {
        events(Event::RunNote {
            message: format!("the gate baseline could not be cached: {}", chain(&error)),
        });
    }
    events(Event::BaselineChecked {
        commit,
        passed: baseline.passed().into_iter().collect(),
        failed: baseline.failed(),
        cached: false,
    });
    Some(baseline)
}

/// Marks every story without an outcome skipped with `reason`.
fn skip_unfinished(
    plan: &ValidPlan,
    outcomes: &mut [Option<StoryOutcome>],
    reason: &str,
    events: &EventSink,
) {
    for (story, outcome) in plan.plan().stories.iter().zip(outcomes.iter_mut()) {
        if outcome.is_none() {
            events(Event::StorySkipped {
                story: story.id.clone(),
                reason: reason.to_owned(),
            });
            *outcome = Some(
                StoryOutcome::new(&story.id, &story.title, StoryStatus::Skipped)
                    .with_reason(reason),
            );
        }
    }
}

/// The report of the outcomes known so far, in plan order.
fn build_report(
    plan: &ValidPlan,
    epic_branch: &str,
    outcomes: &[Option<StoryOutcome>],
    usage: &UsageMeter,
) -> EpicReport {
    let mut report = base_report(plan, epic_branch);
    for outcome in outcomes.iter().flatten() {
        report = report.with_story(outcome.clone());
    }
    report
        .with_critical_path(plan.critical_path().stories)
        .with_seats(usage.seat_usage())
}

/// The scheduler loop's state.
struct Loop {
    shared: Arc<Shared>,
    plan: ValidPlan,
    schedule: Schedule,
    outcomes: Vec<Option<StoryOutcome>>,
    usage: UsageMeter,
    board: Board,
    free_slots: BTreeSet<usize>,
    /// Why launching stopped (fail-fast, a dirty epic worktree, an interrupt).
    halted: Option<String>,
    /// Set when running stories were cancelled because of fail-fast.
    fail_fast: Option<String>,
    /// Worktrees of stories merged in this run, waiting for their cleanup task: (story, path).
    removals: Vec<(String, PathBuf)>,
}

impl fmt::Debug for Loop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loop")
            .field("schedule", &self.schedule)
            .field("halted", &self.halted)
            .finish_non_exhaustive()
    }
}

impl Loop {
    fn new(shared: Arc<Shared>, plan: &ValidPlan, previous: Option<&EpicReport>) -> Self {
        let n = plan.plan().stories.len();
        let mut outcomes = vec![None; n];
        let mut merged = HashSet::new();
        for (i, story) in plan.plan().stories.iter().enumerate() {
            let state = shared
                .dir
                .story_state(&story.id)
                .ok()
                .and_then(|path| epic_state_store::load::<StoryState>(path).ok().flatten());
            if let Some(state) = state
                && state.status == Saved::Merged
                && state.hash == epic_story_plan::story_hash(story)
            {
                merged.insert(story.id.clone());
                (shared.events)(Event::StoryAlreadyMerged {
                    story: story.id.clone(),
                    branch: state.branch.clone(),
                });
                outcomes[i] = Some(
                    StoryOutcome::new(&story.id, &story.title, StoryStatus::Done)
                        .on_branch(state.branch)
                        .with_judge("merged on a previous run"),
                );
            }
        }
        let weights = weights(plan, previous);
        let schedule = Schedule::new(
            plan,
            shared.config.schedule,
            |story| {
                plan.index_of(&story.id)
                    .and_then(|i| weights.get(i).copied())
                    .unwrap_or(1)
            },
            &merged,
            shared.config.concurrency.max(1),
        );
        if schedule.plan_order_is_faster() {
            (shared.events)(Event::RunNote {
                message: "critical-path: plan order finishes sooner with these stories' expected \
                          durations, so stories start in plan order"
                    .to_owned(),
            });
        }
        let hook = shared
            .config
            .board_hook
            .clone()
            .map(|command| (command, shared.config.hook_timeout));
        let mut board = Board::new(
            &shared.dir,
            plan,
            hook,
            shared.epic_worktree.clone(),
            Arc::clone(&shared.events),
        );
        for (i, outcome) in outcomes.iter().enumerate() {
            if let Some(outcome) = outcome {
                board.set(
                    i,
                    Column::Done,
                    Move {
                        branch: outcome.branch.clone(),
                        detail: outcome.judge.clone(),
                        ..Move::default()
                    },
                );
            }
        }
        board.publish_all();
        let concurrency = shared.config.concurrency.max(1);
        Self {
            usage: UsageMeter::new(shared.config.prices.clone()),
            shared,
            plan: plan.clone(),
            schedule,
            outcomes,
            board,
            free_slots: (0..concurrency).collect(),
            halted: None,
            fail_fast: None,
            removals: Vec::new(),
        }
    }

    fn emit(&self, event: Event) {
        (self.shared.events)(event);
    }

    async fn run(mut self, cancel: CancellationToken) -> RunOutcome {
        let stories = cancel.child_token();
        let mut set: JoinSet<StoryEnd> = JoinSet::new();
        // The removals of merged stories' worktrees, off the stories' path; each returns the
        // worktree it left in place when the interrupt came first.
        let mut cleanups: JoinSet<Option<(String, PathBuf)>> = JoinSet::new();
        let mut left: Vec<(String, PathBuf)> = Vec::new();
        let mut running: Vec<(tokio::task::Id, usize, usize)> = Vec::new();
        let mut interrupted = false;
        // Set when a story ended: the report is rewritten once the freed slots are filled, in
        // the background, so its writes (and their fsyncs) never hold up the loop; ends that
        // come while a write is under way are in the next one.
        let mut report_due = false;
        let mut report_writer: Option<tokio::task::JoinHandle<Result<(), String>>> = None;
        loop {
            if self.halted.is_none() && !interrupted {
                self.launch_ready(&mut set, &mut running, &stories);
            }
            // After the launches: each removal waits for the stories just started to have
            // their worktrees.
            self.spawn_removals(&mut cleanups, &cancel);
            self.board.flush();
            if report_writer.is_none() && std::mem::take(&mut report_due) {
                report_writer = Some(self.spawn_report_write());
            }
            if set.is_empty() && cleanups.is_empty() {
                break;
            }
            tokio::select! {
                // The interrupt first: a story that ended because of it must be recorded as
                // interrupted, not as the last story of a finished run.
                biased;
                () = cancel.cancelled(), if !interrupted => {
                    interrupted = true;
                    self.schedule.halt();
                    stories.cancel();
                    self.emit(Event::RunNote {
                        message: "interrupted: stopping every running story; their state is kept and a rerun resumes them".to_owned(),
                    });
                }
                Some(joined) = set.join_next_with_id() => {
                    self.joined(joined, &mut running, interrupted, &stories);
                    report_due = true;
                }
                written = async {
                    match report_writer.as_mut() {
                        Some(writer) => writer.await,
                        None => std::future::pending().await,
                    }
                }, if report_writer.is_some() => {
                    report_writer = None;
                    self.report_written(written.unwrap_or_else(|error| Err(error.to_string())));
                }
                Some(cleaned) = cleanups.join_next(), if !cleanups.is_empty() => {
                    // A panicked removal left its worktree too; `epic clean` removes it.
                    if let Ok(Some(kept)) = cleaned {
                        left.push(kept);
                    }
                }
            }
        }
        if let Some(writer) = report_writer {
            self.report_written(writer.await.unwrap_or_else(|error| Err(error.to_string())));
        }
        self.note_left(left);
        let reason = if interrupted {
            Some("not started: the run was interrupted".to_owned())
        } else {
            self.halted
                .as_ref()
                .map(|why| format!("not started: {why}"))
        };
        if let Some(reason) = reason {
            for index in 0..self.outcomes.len() {
                if self.outcomes[index].is_none() {
                    self.skip(index, &reason);
                }
            }
        }
        let report = self.write_report().await;
        let done = report.count(StoryStatus::Done);
        let failed = report.count(StoryStatus::Failed);
        self.emit(Event::RunFinished {
            done,
            failed,
            skipped: report.stories.len() - done - failed,
            interrupted,
        });
        let Self { board, shared, .. } = self;
        board.close().await;
        RunOutcome {
            report,
            interrupted,
            epic_worktree: shared.epic_worktree.clone(),
            state_dir: shared.dir.root().to_path_buf(),
        }
    }

    /// Starts the stories the schedule has ready, one per free slot.
    fn launch_ready(
        &mut self,
        set: &mut JoinSet<StoryEnd>,
        running: &mut Vec<(tokio::task::Id, usize, usize)>,
        stories: &CancellationToken,
    ) {
        for index in self.schedule.start_ready(self.free_slots.len()) {
            let Some(slot) = self.free_slots.pop_first() else {
                break;
            };
            let story = &self.plan.plan().stories[index];
            self.emit(Event::StoryStarted {
                story: story.id.clone(),
                slot,
            });
            self.board.set(index, Column::Active, Move::default());
            let handle = set.spawn(story::run_story(
                Arc::clone(&self.shared),
                index,
                slot,
                self.shared.preparing.enter(),
                stories.clone(),
            ));
            running.push((handle.id(), index, slot));
        }
    }

    /// Spawns the removal of each merged story's worktree queued by [`joined`](Self::joined).
    fn spawn_removals(
        &mut self,
        cleanups: &mut JoinSet<Option<(String, PathBuf)>>,
        cancel: &CancellationToken,
    ) {
        for (story, worktree) in self.removals.drain(..) {
            cleanups.spawn(story::remove_merged_worktree(
                Arc::clone(&self.shared),
                story,
                worktree,
                cancel.clone(),
            ));
        }
    }

    /// Names the merged stories' worktrees an interrupt left in place, if any.
    fn note_left(&self, mut left: Vec<(String, PathBuf)>) {
        if left.is_empty() {
            return;
        }
        left.sort();
        self.emit(Event::RunNote {
            message: format!(
                "interrupted before removing the worktrees of merged stories: {}; `epic clean` \
                 removes them",
                left.iter()
                    .map(|(story, worktree)| format!("{story} ({})", worktree.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }

    /// Records a story task that ended (a panic or abort is the story's failure) and queues the
    /// removal of its worktree when it merged; the caller rewrites the report and spawns the
    /// removal.
    fn joined(
        &mut self,
        joined: Result<(tokio::task::Id, StoryEnd), tokio::task::JoinError>,
        running: &mut Vec<(tokio::task::Id, usize, usize)>,
        interrupted: bool,
        stories: &CancellationToken,
    ) {
        let (id, end) = match joined {
            Ok((id, end)) => (id, Ok(end)),
            Err(error) => (error.id(), Err(error)),
        };
        let Some(at) = running.iter().position(|(task, _, _)| *task == id) else {
            return;
        };
        let (_, index, slot) = running.swap_remove(at);
        self.free_slots.insert(slot);
        let mut end = end.unwrap_or_else(|error| StoryEnd {
            ending: Ending::Failed {
                reason: if error.is_panic() {
                    "the story's task panicked; this is a bug in epic. Rerun to \
                     resume the story."
                        .to_owned()
                } else {
                    format!("the story's task ended unexpectedly: {error}.")
                },
                halt: None,
            },
            branch: None,
            merged_worktree: None,
            usage: UsageMeter::new(self.shared.config.prices.clone()),
            started_at: epic_report::Timestamp::now(),
            finished_at: epic_report::Timestamp::now(),
        });
        if let Some(worktree) = end.merged_worktree.take() {
            let story = self.plan.plan().stories[index].id.clone();
            self.removals.push((story, worktree));
        }
        self.finish(index, end, interrupted, stories);
    }

    fn skip(&mut self, index: usize, reason: &str) {
        let story = &self.plan.plan().stories[index];
        self.emit(Event::StorySkipped {
            story: story.id.clone(),
            reason: reason.to_owned(),
        });
        self.outcomes[index] = Some(
            StoryOutcome::new(&story.id, &story.title, StoryStatus::Skipped).with_reason(reason),
        );
        self.board.set(
            index,
            Column::Skipped,
            Move {
                detail: Some(reason.to_owned()),
                ..Move::default()
            },
        );
    }

    /// Records how story `index` ended and what that changes for the others.
    fn finish(
        &mut self,
        index: usize,
        end: StoryEnd,
        interrupted: bool,
        stories: &CancellationToken,
    ) {
        self.usage.absorb(&end.usage);
        let story = &self.plan.plan().stories[index];
        let totals = end.usage.totals();
        let mut outcome = StoryOutcome::new(&story.id, &story.title, StoryStatus::Done)
            .started(end.started_at)
            .finished(end.finished_at);
        if totals.turns > 0 {
            outcome = outcome.with_usage(&totals);
        }
        if let Some(branch) = &end.branch {
            outcome = outcome.on_branch(branch);
        }
        let change = Move {
            branch: end.branch.clone(),
            estimated_tokens: (totals.turns > 0).then_some(totals.usage.total),
            estimated_cost_usd: (totals.turns > 0).then(|| totals.cost_usd()).flatten(),
            detail: None,
        };
        match end.ending {
            Ending::Merged { judge } => {
                self.schedule.done(index);
                if let Some(judge) = &judge {
                    outcome = outcome.with_judge(judge);
                }
                self.outcomes[index] = Some(outcome);
                self.board.set(
                    index,
                    Column::Done,
                    Move {
                        detail: judge,
                        ..change
                    },
                );
            }
            Ending::Cancelled => {
                let reason = match (&self.fail_fast, interrupted) {
                    (Some(why), _) => format!("cancelled: {why}; a rerun resumes it"),
                    _ => "interrupted; a rerun resumes it".to_owned(),
                };
                self.emit(Event::StorySkipped {
                    story: story.id.clone(),
                    reason: reason.clone(),
                });
                outcome.status = StoryStatus::Skipped;
                self.outcomes[index] = Some(outcome.with_reason(&reason));
                self.board.set(
                    index,
                    Column::Skipped,
                    Move {
                        detail: Some(reason),
                        ..change
                    },
                );
            }
            Ending::Failed { reason, halt } => {
                self.emit(Event::StoryFailed {
                    story: story.id.clone(),
                    reason: reason.clone(),
                });
                outcome.status = StoryStatus::Failed;
                self.outcomes[index] = Some(outcome.with_reason(&reason));
                self.board.set(
                    index,
                    Column::Failed,
                    Move {
                        detail: Some(reason),
                        ..change
                    },
                );
                let id = story.id.clone();
                let skipped = self.schedule.fail(index);
                for dependent in skipped {
                    self.skip(dependent, &format!("blocked by {id}"));
                }
                if let Some(halt) = halt {
                    self.schedule.halt();
                    self.emit(Event::RunNote {
                        message: format!("stopped launching stories: {halt}"),
                    });
                    self.halted.get_or_insert(halt);
                }
                if self.shared.config.fail_fast && self.fail_fast.is_none() {
                    let why = format!("--fail-fast stopped the run after story '{id}' failed");
                    self.schedule.halt();
                    stories.cancel();
                    self.emit(Event::RunNote {
                        message: why.clone(),
                    });
                    self.halted.get_or_insert_with(|| why.clone());
                    self.fail_fast = Some(why);
                }
            }
        }
    }

    /// Rewrites `report.json` and `report.md` with the outcomes so far; returns the report.
    async fn write_report(&self) -> EpicReport {
        let report = build_report(
            &self.plan,
            &self.shared.epic_branch,
            &self.outcomes,
            &self.usage,
        );
        let (dir, copy) = (self.shared.dir.clone(), report.clone());
        let written = tokio::task::spawn_blocking(move || record::write_report(&dir, &copy))
            .await
            .unwrap_or_else(|error| Err(error.to_string()));
        self.report_written(written);
        report
    }

    /// Starts rewriting the report with the outcomes so far, in the background.
    fn spawn_report_write(&self) -> tokio::task::JoinHandle<Result<(), String>> {
        let report = build_report(
            &self.plan,
            &self.shared.epic_branch,
            &self.outcomes,
            &self.usage,
        );
        let dir = self.shared.dir.clone();
        tokio::task::spawn_blocking(move || record::write_report(&dir, &report))
    }

    /// Notes a report that could not be written.
    fn report_written(&self, written: Result<(), String>) {
        if let Err(error) = written {
            self.emit(Event::RunNote {
                message: format!("the report could not be written: {error}"),
            });
        }
    }
}

/// Each story's weight for the critical-path order, in milliseconds (whole seconds would make
/// every story under two seconds weigh the same): its duration in the previous run's report,
/// else its plan entry's `estimated_time`, else the mean of the known ones, else 1.
fn weights(plan: &ValidPlan, previous: Option<&EpicReport>) -> Vec<u64> {
    plan.weights_by(|story| {
        previous
            .and_then(|report| report.story(&story.id))
            .and_then(StoryOutcome::duration)
            .or_else(|| story.estimated_duration())
    })
    .0
}

#[cfg(test)]
mod tests {
    use epic_report::{EpicReport, StoryOutcome, StoryStatus, Timestamp};
    use epic_story_plan::{Story, StoryPlan};

    use super::weights;

    #[test]
    fn weights_are_the_previous_durations_in_milliseconds() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["a"]),
                Story::new("b", "B", ["b"]),
                Story::new("c", "C", ["c"]),
            ],
        }
        .validate()
        .unwrap();
        assert_eq!(weights(&plan, None), [1, 1, 1], "nothing known: all equal");
        let at = |text: &str| text.parse::<Timestamp>().unwrap();
        let ran = |id: &str, finish: &str| {
            StoryOutcome::new(id, id, StoryStatus::Done)
                .started(at("2026-01-01T00:00:00Z"))
                .finished(at(finish))
        };
        let previous = EpicReport::new("e", "epic/e")
            .with_story(ran("a", "2026-01-01T00:00:00.300Z"))
            .with_story(ran("b", "2026-01-01T00:00:01.900Z"));
        // Sub-second differences count (whole seconds would give 1 and 1); the unknown story
        // gets the mean of the known ones.
        assert_eq!(weights(&plan, Some(&previous)), [300, 1900, 1100]);
    }

    #[test]
    fn estimated_times_weigh_what_no_run_has_measured() {
        let plan = StoryPlan {
            epic_id: "e".into(),
            epic: String::new(),
            stories: vec![
                Story::new("a", "A", ["a"]).estimated("2s"),
                Story::new("b", "B", ["b"]).estimated("1m"),
                Story::new("c", "C", ["c"]),
            ],
        }
        .validate()
        .unwrap();
        assert_eq!(weights(&plan, None), [2000, 60_000, 31_000]);
        let previous = EpicReport::new("e", "epic/e").with_story(
            StoryOutcome::new("b", "b", StoryStatus::Done)
                .started("2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap())
                .finished("2026-01-01T00:00:05Z".parse::<Timestamp>().unwrap()),
        );
        // A measured duration wins over the estimate.
        assert_eq!(weights(&plan, Some(&previous)), [2000, 5000, 3500]);
    }
}
