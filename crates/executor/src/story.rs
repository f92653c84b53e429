//! The lifecycle of one story: prepare its worktree (with the hash-guarded resume rules), catch
//! up with the epic branch, set up, run the task loop, put strays back, the judge rounds, and
//! integrate under the merge lock; then, as a cleanup of the run loop's, the removal of the merged
//! story's worktree.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitOutcome, Git, MergeFavor, MergeOutcome};
use epic_perimeter::Review;
use epic_report::{Timestamp, UsageMeter};
use epic_state_store::{EpicDir, StoryState, StoryStatus};
use epic_story_plan::{Story, StoryPlan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;

use crate::baseline::{GateBaseline, GateVerdict};
use crate::chat::{Chat, ChatContext, Recorder};
use crate::error::{StoryError, chain};
use crate::event::{Event, EventSink};
use crate::gates::{GateResult, Gates};
use crate::prompts;
use crate::replies::{blocked_on, parse_verdict};
use crate::run::RunConfig;
use crate::seat::{Role, SeatError};
use crate::task_loop::{StoryJob, TaskLoop};

/// What every story of a run shares.
pub(crate) struct Shared {
    pub(crate) git: Arc<dyn Git>,
    pub(crate) dir: EpicDir,
    pub(crate) plan: Arc<StoryPlan>,
    pub(crate) config: RunConfig,
    pub(crate) epic_branch: String,
    pub(crate) epic_worktree: PathBuf,
    /// `<repo-parent>/<repo-name>.worktrees/<epic>`: every story's worktree is `<root>/<id>`.
    pub(crate) worktree_root: PathBuf,
    pub(crate) tasks: TaskLoop,
    /// The gates stories are held to: every gate, or with a red baseline allowed, those that
    /// passed on it.
    pub(crate) story_gates: Gates,
    /// Every gate, run on the epic worktree after each merge.
    pub(crate) epic_gates: Gates,
    /// The merge lock; it guards the gates known to pass on the epic head.
    pub(crate) merge: Mutex<EpicHead>,
    /// The proven epic head (see [`Shared::proven`]); moved forward under the merge lock.
    pub(crate) proven: std::sync::Mutex<epic_git_ops::CommitId>,
    /// The stories preparing their worktrees; merged worktrees are removed when none is.
    pub(crate) preparing: Preparing,
    pub(crate) events: EventSink,
}

impl Shared {
    /// The epic head whose gates were last proven: where stories are cut and catch up.
    pub(crate) fn proven(&self) -> epic_git_ops::CommitId {
        *self
            .proven
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How many stories are between their launch and their worktree being ready.
///
/// Worktree administration is serialized (git-ops holds one lock for every `git worktree`
/// command), so the removal of a merged story's worktree would hold up the `git worktree add` of
/// the dependents its merge just made ready. [`remove_merged_worktree`] therefore waits until no
/// story is preparing ([`idle`](Self::idle)).
#[derive(Debug)]
pub(crate) struct Preparing(watch::Sender<usize>);

impl Preparing {
    pub(crate) fn new() -> Self {
        Self(watch::Sender::new(0))
    }

    /// Counts one more story preparing, until the guard is dropped. Taken by the run loop when it
    /// launches the story, so that a removal it spawns right after already waits for it.
    pub(crate) fn enter(&self) -> PreparingGuard {
        self.0.send_modify(|count| *count += 1);
        PreparingGuard(self.0.clone())
    }

    /// Resolves once no story is preparing its worktree.
    async fn idle(&self) {
        let mut count = self.0.subscribe();
        // The sender lives in `self`: the channel cannot close while this borrows it.
        count.wait_for(|count| *count == 0).await.ok();
    }
}

/// One story counted by [`Preparing`] until dropped.
#[derive(Debug)]
pub(crate) struct PreparingGuard(watch::Sender<usize>);

impl Drop for PreparingGuard {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count = count.saturating_sub(1));
    }
}

/// What the merge lock guards: the gate commands that pass on the epic head now.
#[derive(Debug)]
pub(crate) struct EpicHead {
    pub(crate) green: BTreeSet<String>,
}

/// How a story ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// Merged (now, or it already was).
    Merged { judge: Option<String> },
    /// Failed; `halt` set when new stories must not start (the epic worktree is dirty).
    Failed {
        reason: String,
        halt: Option<String>,
    },
    /// Cancelled from outside; its state stays resumable.
    Cancelled,
}

/// A story's result for the run loop.
#[derive(Debug)]
pub(crate) struct StoryEnd {
    pub(crate) ending: Ending,
    pub(crate) branch: Option<String>,
    /// The worktree of a story that merged in this run, for the run loop to remove
    /// ([`remove_merged_worktree`]); `None` with `keep_worktrees`.
    pub(crate) merged_worktree: Option<PathBuf>,
    pub(crate) usage: UsageMeter,
    pub(crate) started_at: Timestamp,
    pub(crate) finished_at: Timestamp,
}

/// Why a step stopped the story.
#[derive(Debug)]
enum Stop {
    Failed(String),
    Halt(String),
    Cancelled,
}

impl From<StoryError> for Stop {
    fn from(error: StoryError) -> Self {
        match error {
            StoryError::Cancelled => Self::Cancelled,
            StoryError::Blocked { story, need } => Self::Failed(format!(
                "missing dependency: story '{story}' is blocked on unplanned work: {need}. The \
                 coder stopped because the story needs something that another story should \
                 provide. Plan that work (a story this one depends on), then rerun."
            )),
            error => Self::Failed(error.reason()),
        }
    }
}

/// The in-flight merge, `merging.json`: written before a merge, removed once it is proven or
/// undone. A run that finds it at start died mid-integration and undoes the merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MergeJournal {
    /// The story being merged.
    pub(crate) story: String,
    /// The epic head before the merge.
    pub(crate) checkpoint: String,
}

impl epic_state_store::Document for MergeJournal {
    const NAME: &'static str = "merge journal";
    const VERSION: u32 = 1;
    const REMEDY: &'static str =
        "check the epic branch's last merge by hand (reset it if its gates fail), then remove it";
}

impl MergeJournal {
    pub(crate) fn path(dir: &EpicDir) -> PathBuf {
        dir.root().join("merging.json")
    }
}

/// Runs git-ops `op` in `spawn_blocking`; an error becomes the story's failure.
async fn blocking<T, E>(
    git: &Arc<dyn Git>,
    action: &str,
    op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
) -> Result<T, Stop>
where
    T: Send + 'static,
    E: Into<BoxError> + Send + 'static,
{
    let git = Arc::clone(git);
    match tokio::task::spawn_blocking(move || op(git.as_ref())).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => {
            let error: BoxError = error.into();
            Err(Stop::Failed(format!(
                "git failed to {action}: {}.",
                chain(error.as_ref())
            )))
        }
        Err(error) => Err(Stop::Failed(format!("git failed to {action}: {error}."))),
    }
}

/// Any error, boxed.
type BoxError = Box<dyn Error + Send + Sync>;

/// Runs a blocking closure that cannot fail in git's way (file I/O).
async fn blocking_io<T: Send + 'static>(op: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(op).await.ok()
}

/// Runs story `index` of the plan in concurrency slot `slot` to its end: right after its merge
/// is proven and recorded, so that its dependents can start; the removal of its worktree is left
/// to the caller ([`StoryEnd::merged_worktree`]). `preparing` counts the story in
/// [`Shared::preparing`] until its worktree is ready.
///
/// # Cancel safety
///
/// Meant to run to completion: cancel `cancel` and await it. Cancelled, it kills the running
/// agent or gate, undoes a merge whose gates had not finished, and leaves the state resumable.
/// Dropping it mid-merge could leave an unproven merge on the epic branch until the next run
/// undoes it (from `merging.json`).
pub(crate) async fn run_story(
    shared: Arc<Shared>,
    index: usize,
    slot: usize,
    preparing: PreparingGuard,
    cancel: CancellationToken,
) -> StoryEnd {
    let started_at = Timestamp::now();
    let story = Arc::new(shared.plan.stories[index].clone());
    let branch = format!("story/{}/{}", shared.dir.epic_id(), story.id);
    let mut work = Work {
        shared: Arc::clone(&shared),
        story: Arc::clone(&story),
        branch: branch.clone(),
        worktree: shared.worktree_root.join(&story.id),
        slot,
        cancel,
        usage: UsageMeter::new(shared.config.prices.clone()),
        has_state: false,
        merged: false,
        preparing: Some(preparing),
        base: shared.proven().to_hex(),
    };
    let result = work.run().await;
    let ending = match result {
        Ok(judge) => Ending::Merged { judge },
        Err(Stop::Cancelled) => Ending::Cancelled,
        Err(Stop::Failed(reason)) => Ending::Failed { reason, halt: None },
        Err(Stop::Halt(reason)) => Ending::Failed {
            reason: reason.clone(),
            halt: Some(reason),
        },
    };
    if matches!(ending, Ending::Failed { .. }) && work.has_state {
        work.mark_failed().await;
    }
    let merged_worktree =
        (work.merged && !shared.config.keep_worktrees).then(|| work.worktree.clone());
    StoryEnd {
        ending,
        branch: work.has_state.then_some(branch),
        merged_worktree,
        usage: work.usage,
        started_at,
        finished_at: Timestamp::now(),
    }
}

/// One story at work.
struct Work {
    shared: Arc<Shared>,
    story: Arc<Story>,
    branch: String,
    worktree: PathBuf,
    slot: usize,
    cancel: CancellationToken,
    usage: UsageMeter,
    has_state: bool,
    /// Set once the story merged in this run and its state says so.
    merged: bool,
    /// Counts the story in [`Shared::preparing`]; dropped once its worktree is ready.
    preparing: Option<PreparingGuard>,
    /// The proven epic head the story last caught up with: the base of its diffs.
    base: String,
}

/// How [`Work::prepare`] found the story.
#[derive(Debug, PartialEq, Eq)]
enum Prepared {
    /// A worktree to work in; `fresh` when it was just created (setup must run).
    Ready { fresh: bool },
    /// Merged already (a state written by a concurrent path; normally filtered before launch).
    Merged,
}

impl Work {
    fn id(&self) -> &str {
        &self.story.id
    }

    fn emit(&self, event: Event) {
        (self.shared.events)(event);
    }

    fn note(&self, message: impl Into<String>) {
        self.emit(Event::Note {
            story: self.id().to_owned(),
            message: message.into(),
        });
    }

    fn check_cancel(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            Err(Stop::Cancelled)
        } else {
            Ok(())
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("EPIC_EPIC".to_owned(), self.shared.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), self.id().to_owned()),
            (
                "EPIC_WORKTREE".to_owned(),
                self.worktree.display().to_string(),
            ),
            ("EPIC_SLOT".to_owned(), self.slot.to_string()),
        ]
    }

    async fn run(&mut self) -> Result<Option<String>, Stop> {
        let prepared = self.prepare().await;
        // The worktree is ready (or never will be): removals of merged ones may go on.
        drop(self.preparing.take());
        let fresh = match prepared? {
            Prepared::Merged => return Ok(Some("merged on a previous run".to_owned())),
            Prepared::Ready { fresh } => fresh,
        };
        self.check_cancel()?;
        let caught_up = self.catch_up().await?;
        if fresh || caught_up {
            self.setup().await?;
        }
        self.check_cancel()?;
        let job = StoryJob::new(
            &self.shared.dir,
            Arc::clone(&self.shared.plan),
            Arc::clone(&self.story),
            self.worktree.clone(),
            // The proven head the story caught up with, not the branch: the branch's tip may be
            // a merge still being proven, or moved by something outside epic.
            self.base.clone(),
            self.slot,
        )
        .map_err(|error| Stop::Failed(format!("{error}.")))?;
        let run = self.shared.tasks.run(&job, &self.cancel).await;
        self.usage.absorb(&run.usage);
        run.result?;
        self.check_cancel()?;
        self.catch_up().await?;
        if self.repair_perimeter().await? {
            self.commit(format!(
                "{}: put paths outside the perimeter back",
                self.id()
            ))
            .await?;
        }
        self.enforce_perimeter().await?;
        self.guard_tests().await?;
        let judge = self.judge().await?;
        if judge.is_some() {
            // A judge round's feedback turn may have touched the tests too.
            self.guard_tests().await?;
        }
        self.check_cancel()?;
        self.integrate(judge).await
    }

    // --- prepare -----------------------------------------------------------------------------

    fn state_path(&self) -> Result<PathBuf, Stop> {
        self.shared
            .dir
            .story_state(self.id())
            .map_err(|error| Stop::Failed(format!("{error}.")))
    }

    async fn save_state(&mut self, status: StoryStatus) -> Result<(), Stop> {
        let path = self.state_path()?;
        let state = StoryState {
            id: self.id().to_owned(),
            hash: epic_story_plan::story_hash(&self.story),
            branch: self.branch.clone(),
            worktree: self.worktree.clone(),
            status,
        };
        let saved = blocking_io(move || epic_state_store::save(&path, &state)).await;
        match saved {
            Some(Ok(())) => {
                self.has_state = true;
                Ok(())
            }
            Some(Err(error)) => Err(Stop::Failed(format!(
                "the story's state could not be saved: {}.",
                chain(&error)
            ))),
            None => Err(Stop::Failed(
                "the story's state could not be saved.".to_owned(),
            )),
        }
    }

    /// Marks the state `failed` unless it says `merged`; best effort.
    async fn mark_failed(&mut self) {
        let Ok(path) = self.state_path() else {
            return;
        };
        blocking_io(move || {
            if let Ok(Some(mut state)) = epic_state_store::load::<StoryState>(&path)
                && state.status != StoryStatus::Merged
            {
                state.status = StoryStatus::Failed;
                epic_state_store::save(&path, &state).ok();
            }
        })
        .await;
    }

    /// The resume rules: a changed plan entry starts over, a merged story is done, a started or
    /// failed one resumes on its branch, a new one gets a branch cut from the epic head.
    async fn prepare(&mut self) -> Result<Prepared, Stop> {
        let hash = epic_story_plan::story_hash(&self.story);
        let path = self.state_path()?;
        let loaded = blocking_io(move || epic_state_store::load::<StoryState>(&path)).await;
        let mut stored = match loaded {
            Some(Ok(stored)) => stored,
            Some(Err(error)) => {
                return Err(Stop::Failed(format!(
                    "the story's state cannot be read: {}.",
                    chain(&error)
                )));
            }
            None => None,
        };
        let mut how = "fresh";
        if let Some(old) = stored.as_ref().filter(|old| old.hash != hash) {
            self.note("plan entry changed since its branch was created; starting over");
            for worktree in BTreeSet::from([old.worktree.clone(), self.worktree.clone()]) {
                let removed = blocking(&self.shared.git, "remove the old worktree", move |git| {
                    git.remove_worktree(&worktree)
                })
                .await;
                if let Err(Stop::Failed(reason)) = removed {
                    self.note(reason);
                }
            }
            for branch in BTreeSet::from([old.branch.clone(), self.branch.clone()]) {
                blocking(
                    &self.shared.git,
                    "delete the old story branch",
                    move |git| git.delete_branch(&branch),
                )
                .await?;
            }
            let checkpoint = self
                .shared
                .dir
                .story_plan(self.id())
                .map_err(|error| Stop::Failed(format!("{error}.")))?;
            match std::fs::remove_file(&checkpoint) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(Stop::Failed(format!(
                        "the old task checkpoint `{}` cannot be removed: {error}.",
                        checkpoint.display()
                    )));
                }
            }
            stored = None;
            how = "restarted";
        }
        self.clear_stale_locks().await;
        let fresh = match stored {
            Some(old) if old.status == StoryStatus::Merged => {
                self.has_state = true;
                return Ok(Prepared::Merged);
            }
            Some(old) => {
                how = "resumed";
                self.has_state = true;
                let mut fresh = false;
                if old.worktree != self.worktree && old.worktree.join(".git").exists() {
                    let (from, to) = (old.worktree.clone(), self.worktree.clone());
                    blocking(&self.shared.git, "move the story's worktree", move |git| {
                        git.move_worktree(&from, &to)
                    })
                    .await?;
                    self.note(format!("moved its worktree to {}", self.worktree.display()));
                }
                // Gone, or never finished: an add of it (a re-add) killed before its checkout
                // was complete would have the story commit the files not yet checked out as
                // deleted.
                if !self.worktree.join(".git").exists()
                    || epic_git_ops::add_interrupted(&self.worktree)
                {
                    self.add_worktree().await?;
                    fresh = true;
                } else {
                    self.abort_unfinished_merge().await?;
                }
                if old.worktree != self.worktree {
                    self.save_state(old.status).await?;
                }
                fresh
            }
            None => {
                self.add_worktree().await?;
                self.save_state(StoryStatus::Started).await?;
                true
            }
        };
        self.emit(Event::StoryPrepared {
            story: self.id().to_owned(),
            branch: self.branch.clone(),
            worktree: self.worktree.display().to_string(),
            how: how.to_owned(),
        });
        Ok(Prepared::Ready { fresh })
    }

    /// Aborts the merge a killed run left in progress in the story's worktree (a catch-up
    /// killed half way), which every later merge there would refuse.
    async fn abort_unfinished_merge(&self) -> Result<(), Stop> {
        let worktree = self.worktree.clone();
        let aborted = blocking(
            &self.shared.git,
            "abort a merge a run that died left unfinished",
            move |git| git.abort_unfinished_merge(&worktree),
        )
        .await?;
        if aborted {
            self.note("aborted an unfinished merge left in its worktree by a run that died");
        }
        Ok(())
    }

    /// Removes the git lock files a killed run left in the story's worktree and branch.
    async fn clear_stale_locks(&self) {
        let (common, worktree, branch) = (
            self.shared.git.common_dir().to_path_buf(),
            self.worktree.clone(),
            self.branch.clone(),
        );
        let cleared = blocking_io(move || clear_stale_locks(&common, &worktree, &branch))
            .await
            .unwrap_or_default();
        for path in cleared {
            self.note(format!(
                "removed {}, left by a git process of a run that died",
                path.display()
            ));
        }
    }

    /// Adds the story's worktree: on its branch if that exists, else on a new branch cut from
    /// the epic head. The run prunes stale worktree registrations once before any story starts;
    /// when the add fails (a worktree whose directory was deleted since is still registered, or
    /// an add killed half way left its path registered and locked, and git refuses the path or
    /// the branch), this drops the path's registration, prunes and tries once more.
    async fn add_worktree(&self) -> Result<(), Stop> {
        // Whatever is where the worktree goes is what a run that died left: a `git worktree
        // add` killed half way (no `.git` yet), or one that finished just before the story's
        // state was first saved (then the story has no state, and no agent ever ran in it).
        if self.worktree.join(".git").exists() {
            let leftover = self.worktree.clone();
            blocking(
                &self.shared.git,
                "remove a worktree left by a run that died",
                move |git| git.remove_worktree(&leftover),
            )
            .await?;
        }
        if self.worktree.is_dir() {
            let leftover = self.worktree.clone();
            if let Some(Err(error)) = blocking_io(move || std::fs::remove_dir_all(&leftover)).await
            {
                return Err(Stop::Failed(format!(
                    "`{}` is in the way of the story's worktree and cannot be removed: {error}.",
                    self.worktree.display()
                )));
            }
            self.note(format!(
                "removed `{}`, a worktree left half made by a run that died",
                self.worktree.display()
            ));
        }
        let (worktree, branch, start) = (
            self.worktree.clone(),
            self.branch.clone(),
            self.shared.proven().to_hex(),
        );
        blocking(&self.shared.git, "add the story's worktree", move |git| {
            let add = || {
                if git.branch_exists(&branch)? {
                    git.add_worktree(&worktree, &branch)?;
                } else {
                    git.add_worktree_new_branch(&worktree, &branch, &start)?;
                }
                Ok::<(), BoxError>(())
            };
            if add().is_ok() {
                return Ok(());
            }
            // What holds the path or the branch is a registration whose directory is gone: one
            // deleted since, or an add killed half way, whose lock keeps it from a plain prune
            // (the prune drops those a killed add left unreadable, which fail every add).
            git.prune_worktrees()?;
            // Best effort: when it was not that, the add's own error says what is.
            git.remove_worktree(&worktree).ok();
            add()
        })
        .await
    }

    // --- catch up, setup ---------------------------------------------------------------------

    /// Merges the proven epic head into the story branch (the epic side winning conflicting
    /// hunks), committing uncommitted work first. Whether anything was merged.
    ///
    /// The proven head, not the epic branch's tip: while a merge is being proven the tip is a
    /// merge that may yet be undone, and a story that caught up with it would carry the undone
    /// story's work into the epic branch later.
    async fn catch_up(&mut self) -> Result<bool, Stop> {
        let worktree = self.worktree.clone();
        let proven = self.shared.proven().to_hex();
        self.base.clone_from(&proven);
        let up_to_date = blocking(&self.shared.git, "compare with the epic branch", {
            let worktree = worktree.clone();
            let proven = proven.clone();
            move |git| git.is_ancestor(&worktree, &proven, "HEAD")
        })
        .await?;
        if up_to_date {
            return Ok(false);
        }
        let wip = format!("{}: work in progress", self.id());
        let message = format!("{}: catch up with {}", self.id(), self.shared.epic_branch);
        let merged = blocking(&self.shared.git, "catch up with the epic branch", {
            move |git| {
                if git.status(&worktree, &[])?.is_dirty() {
                    git.commit_all(&worktree, &wip)?;
                }
                Ok::<_, BoxError>(git.merge(&worktree, &proven, &message, MergeFavor::Incoming)?)
            }
        })
        .await;
        match merged? {
            MergeOutcome::Merged(commit) => {
                self.emit(Event::StoryCaughtUp {
                    story: self.id().to_owned(),
                    commit: commit.to_hex(),
                });
                Ok(true)
            }
            MergeOutcome::UpToDate => Ok(false),
            MergeOutcome::Conflict { paths } => Err(Stop::Failed(format!(
                "catching up with {} conflicted on {} even with the epic side winning \
                 conflicting hunks (a file changed on one side and deleted on the other). \
                 Resolve it in the story's worktree `{}` (merge {} and commit), then rerun.",
                self.shared.epic_branch,
                paths.join(", "),
                self.worktree.display(),
                self.shared.epic_branch
            ))),
        }
    }

    async fn setup(&self) -> Result<(), Stop> {
        let commands = &self.shared.config.setup;
        if commands.is_empty() {
            return Ok(());
        }
        let setup = Gates::new(commands.iter().cloned(), self.shared.config.gate_timeout);
        let story = self.id().to_owned();
        let events = Arc::clone(&self.shared.events);
        let on_result = move |result: &GateResult| {
            events(Event::SetupRan {
                story: story.clone(),
                command: result.command.clone(),
                passed: result.passed,
                duration_ms: millis(result),
                status: result.status.clone(),
            });
        };
        let review = setup
            .run(&self.worktree, &self.env(), &self.cancel, &on_result)
            .await
            .map_err(|_| Stop::Cancelled)?;
        if review.clean {
            Ok(())
        } else {
            Err(Stop::Failed(format!(
                "worktree setup failed:\n{}\nFix the setup command or what it needs, then rerun.",
                prompts::issue_lines(&review)
            )))
        }
    }

    // --- perimeter, judge --------------------------------------------------------------------

    /// Paths changed against the epic head the story last caught up with, committed or not.
    async fn changed(&self) -> Result<Vec<String>, Stop> {
        let worktree = self.worktree.clone();
        let base = self.base.clone();
        blocking(
            &self.shared.git,
            "list the story's changed paths",
            move |git| {
                let mut paths: BTreeSet<String> = git
                    .changed_paths_vs_base(&worktree, &base, "HEAD")?
                    .into_iter()
                    .collect();
                paths.extend(git.status(&worktree, &[])?.paths);
                Ok::<_, BoxError>(paths.into_iter().collect::<Vec<_>>())
            },
        )
        .await
    }

    /// Puts paths changed outside the owned ones back as the epic head has them, uncommitted
    /// (the caller commits). A changed shared read-only path fails the story. Whether anything
    /// was restored.
    async fn repair_perimeter(&self) -> Result<bool, Stop> {
        let check = epic_perimeter::check(self.changed().await?, &self.story);
        if !check.shared_read_only.is_empty() {
            return Err(self.violation(check));
        }
        if check.outside.is_empty() {
            return Ok(false);
        }
        let (worktree, base, stray) = (
            self.worktree.clone(),
            self.base.clone(),
            check.outside.clone(),
        );
        blocking(
            &self.shared.git,
            "put paths outside the perimeter back",
            move |git| {
                let paths: Vec<&str> = stray.iter().map(String::as_str).collect();
                git.restore_paths(&worktree, &base, &paths)
            },
        )
        .await?;
        self.emit(Event::PerimeterRestored {
            story: self.id().to_owned(),
            paths: check.outside.clone(),
        });
        self.note(format!(
            "restored {} path(s) outside its perimeter from {}: {}",
            check.outside.len(),
            self.shared.epic_branch,
            check.outside.join(", ")
        ));
        Ok(true)
    }

    /// Fails unless every path the story's commits change (against the epic head it last caught
    /// up with) is inside its owned paths. Only the commits: called after the story's work is
    /// committed, and the merge takes only the branch's commits; uncommitted paths were seen by
    /// [`repair_perimeter`](Self::repair_perimeter) before that commit.
    async fn enforce_perimeter(&self) -> Result<(), Stop> {
        let (worktree, base) = (self.worktree.clone(), self.base.clone());
        let committed = blocking(
            &self.shared.git,
            "list the story's changed paths",
            move |git| git.changed_paths_vs_base(&worktree, &base, "HEAD"),
        )
        .await?;
        let check = epic_perimeter::check(committed, &self.story);
        if check.is_clean() {
            Ok(())
        } else {
            Err(self.violation(check))
        }
    }

    /// Fails the story when its diff deletes test files or adds skip markers, unless its plan
    /// entry sets `tests_change`: a gate is as green with its tests gone.
    async fn guard_tests(&self) -> Result<(), Stop> {
        if self.story.tests_change {
            return Ok(());
        }
        let (worktree, base) = (self.worktree.clone(), self.base.clone());
        let changes = blocking(
            &self.shared.git,
            "diff the story against the epic branch",
            move |git| {
                git.file_changes_vs_base(
                    &worktree,
                    &base,
                    "HEAD",
                    &crate::tests_guard::has_skip_marker,
                )
            },
        )
        .await?;
        let found = crate::tests_guard::tampering(&changes, &self.shared.config.test_patterns);
        if found.is_empty() {
            return Ok(());
        }
        let mut reason = format!(
            "story '{}' deletes or skips tests, and its plan entry does not allow it \
             (`tests_change`):",
            self.id()
        );
        for path in &found.deleted {
            reason.push_str("\n- ");
            reason.push_str(path);
            reason.push_str(": test file deleted");
        }
        for (path, marker) in &found.skipped {
            reason.push_str("\n- ");
            reason.push_str(path);
            reason.push_str(": adds the skip marker `");
            reason.push_str(marker);
            reason.push('`');
        }
        reason.push_str(
            "\nA gate proves nothing once its tests are gone. Restore the tests in the story's \
             worktree, or set `\"tests_change\": true` in the story's plan entry if changing them is \
             the point, then rerun.",
        );
        Err(Stop::Failed(reason))
    }

    fn violation(&self, check: epic_perimeter::PerimeterCheck) -> Stop {
        let shared = !check.shared_read_only.is_empty();
        let violation = check
            .into_violation(self.id())
            .map_or_else(String::new, |violation| violation.to_string());
        Stop::Failed(if shared {
            format!(
                "{violation}\nShared read-only paths belong to no story: plan the change in a \
                 story that owns the path, then rerun."
            )
        } else {
            format!(
                "{violation}\nThese paths could not be put back as the epic branch has them; \
                 revert them in the story's worktree `{}`, then rerun.",
                self.worktree.display()
            )
        })
    }

    async fn commit(&self, message: String) -> Result<Option<String>, Stop> {
        let worktree = self.worktree.clone();
        let outcome = blocking(&self.shared.git, "commit", move |git| {
            git.commit_all(&worktree, &message)
        })
        .await?;
        Ok(match outcome {
            CommitOutcome::Committed(id) => Some(id.to_hex()),
            CommitOutcome::NothingToCommit => None,
        })
    }

    fn chat(
        &self,
        role: Role,
        system: String,
        task: Option<&str>,
        recorder: &Arc<Recorder>,
    ) -> Chat {
        let seat = match role {
            Role::Judge => self
                .shared
                .config
                .judge
                .clone()
                .unwrap_or_else(|| Arc::clone(&self.shared.config.coder)),
            _ => Arc::clone(&self.shared.config.coder),
        };
        Chat::new(
            seat,
            role,
            system,
            ChatContext {
                epic: self.shared.dir.epic_id().to_owned(),
                story: Arc::clone(&self.story),
                task: task.map(str::to_owned),
                worktree: self.worktree.clone(),
                slot: self.slot,
                turn_timeout: self.shared.config.turn_timeout,
                cancel: self.cancel.clone(),
            },
            Arc::clone(recorder),
        )
    }

    /// The judge rounds; the judge's note when it cleared the story, `None` without a judge.
    async fn judge(&mut self) -> Result<Option<String>, Stop> {
        if self.shared.config.judge.is_none() {
            return Ok(None);
        }
        let transcripts = self
            .shared
            .dir
            .transcripts(self.id())
            .map_err(|error| Stop::Failed(format!("{error}.")))?;
        let recorder = Arc::new(Recorder::new(
            self.id().to_owned(),
            transcripts,
            self.shared.config.prices.clone(),
            Arc::clone(&self.shared.events),
        ));
        let result = self.judge_rounds(&recorder).await;
        self.usage.absorb(&recorder.usage());
        result.map(Some)
    }

    async fn judge_rounds(&self, recorder: &Arc<Recorder>) -> Result<String, Stop> {
        let rounds = self.shared.config.judge_rounds.max(1);
        for round in 1..=rounds {
            self.check_cancel()?;
            let (worktree, base) = (self.worktree.clone(), self.base.clone());
            let diff = blocking(
                &self.shared.git,
                "diff the story against the epic branch",
                move |git| git.diff_vs_base(&worktree, &base, "HEAD"),
            )
            .await?;
            if diff.paths.is_empty() {
                return Err(Stop::Failed(format!(
                    "the story branch has no changes against {}: there is nothing to judge or \
                     merge. Check the task checkpoint and the coder's transcripts, then rerun.",
                    self.shared.epic_branch
                )));
            }
            let mut chat = self.chat(
                Role::Judge,
                prompts::judge_rules(&self.story),
                None,
                recorder,
            );
            let reply = chat
                .ask(prompts::judge(&diff.text, round))
                .await
                .map_err(|error| turn_failed(Role::Judge, error))?;
            let verdict = parse_verdict(&reply.text);
            self.emit(Event::StoryJudged {
                story: self.id().to_owned(),
                round,
                cleared: verdict.clean,
                issues: verdict
                    .issues
                    .iter()
                    .map(|issue| issue.title.clone())
                    .collect(),
            });
            if verdict.clean {
                return Ok(format!("judge cleared (round {round})"));
            }
            if round == rounds {
                return Err(Stop::Failed(format!(
                    "judge not cleared after {rounds} round(s):\n{}",
                    prompts::issue_lines(&verdict)
                )));
            }
            self.address(&verdict, recorder).await?;
        }
        Err(Stop::Failed("the judge never ran.".to_owned()))
    }

    /// One coder round on the judge's findings: the turn, strays put back, the gates (which
    /// must stay green), a commit.
    async fn address(&self, verdict: &Review, recorder: &Arc<Recorder>) -> Result<(), Stop> {
        let task = "address judge feedback";
        let rules = prompts::story_rules(
            &self.shared.plan,
            &self.story,
            &self.worktree,
            &self.shared.config.extra_rules,
        );
        let mut chat = self.chat(Role::Coder, rules, Some(task), recorder);
        let reply = chat
            .ask(prompts::judge_feedback(&self.story, verdict))
            .await
            .map_err(|error| turn_failed(Role::Coder, error))?;
        if let Some(need) = blocked_on(&reply.text) {
            self.emit(Event::Blocked {
                story: self.id().to_owned(),
                need: need.clone(),
            });
            return Err(StoryError::Blocked {
                story: self.id().to_owned(),
                need,
            }
            .into());
        }
        self.repair_perimeter().await?;
        let story = self.id().to_owned();
        let events = Arc::clone(&self.shared.events);
        let on_result = move |result: &GateResult| {
            events(if result.passed {
                Event::GatePassed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms: millis(result),
                }
            } else {
                Event::GateFailed {
                    story: story.clone(),
                    command: result.command.clone(),
                    duration_ms: millis(result),
                    status: result.status.clone(),
                }
            });
        };
        let gates = self
            .shared
            .story_gates
            .run(&self.worktree, &self.env(), &self.cancel, &on_result)
            .await
            .map_err(|_| Stop::Cancelled)?;
        if !gates.clean {
            return Err(Stop::Failed(format!(
                "gates broke while addressing judge feedback:\n{}",
                prompts::issue_lines(&gates)
            )));
        }
        self.commit(format!("{}: address judge feedback", self.id()))
            .await?;
        self.enforce_perimeter().await
    }

    // --- integrate ---------------------------------------------------------------------------

    /// Merges the story into the epic branch under the merge lock and proves it with the
    /// gates; red, the merge is undone. The judge's note passes through. Its worktree is not
    /// removed here: the story ends once its merge is recorded, and the run loop removes the
    /// worktree ([`remove_merged_worktree`]) while the dependents start.
    async fn integrate(&mut self, judge: Option<String>) -> Result<Option<String>, Stop> {
        let shared = Arc::clone(&self.shared);
        let mut head = tokio::select! {
            head = shared.merge.lock() => head,
            () = self.cancel.cancelled() => return Err(Stop::Cancelled),
        };
        let journal_path = MergeJournal::path(&shared.dir);
        let epic = shared.epic_worktree.clone();
        self.check_epic_head().await?;
        let dirty = blocking(&shared.git, "read the status of the epic worktree", {
            let epic = epic.clone();
            move |git| git.status(&epic, &[])
        })
        .await?;
        if dirty.is_dirty() {
            return Err(Stop::Halt(dirty_message(
                &epic,
                &dirty.paths,
                Some(self.id()),
            )));
        }
        let (checkpoint, commit) = self.merge(&journal_path).await?;
        if let Some(commit) = &commit {
            match self.prove(&mut head, commit.to_hex()).await {
                Ok(()) => {
                    *shared
                        .proven
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = *commit;
                }
                Err(stop) => {
                    let why = match &stop {
                        Stop::Cancelled => "the run was interrupted before its gates finished",
                        _ => "the gates turned red",
                    };
                    self.rollback(&checkpoint, why).await;
                    remove_journal(&journal_path);
                    return Err(stop);
                }
            }
        }
        self.save_state(StoryStatus::Merged).await?;
        self.merged = true;
        remove_journal(&journal_path);
        drop(head);
        self.emit(Event::StoryMerged {
            story: self.id().to_owned(),
            commit: commit.map(|commit| commit.to_hex()),
            judge: judge.clone(),
        });
        Ok(judge)
    }

    /// Refuses to merge onto an epic branch that something else moved off the proven head (an
    /// agent's `git update-ref`, a reset): merged stories could be missing from it. Commits
    /// added on top of the proven head are not refused: the gates prove the merged tree.
    async fn check_epic_head(&self) -> Result<(), Stop> {
        let proven = self.shared.proven();
        let epic = self.shared.epic_worktree.clone();
        let branch = self.shared.epic_branch.clone();
        let (head, descends) = blocking(&self.shared.git, "read the epic branch", move |git| {
            let head = git.rev_parse(&epic, &format!("refs/heads/{branch}"))?;
            let descends =
                head == proven || git.is_ancestor(&epic, &proven.to_hex(), &head.to_hex())?;
            Ok::<_, BoxError>((head, descends))
        })
        .await?;
        if descends {
            return Ok(());
        }
        Err(Stop::Halt(format!(
            "the epic branch {} was moved from {proven} (the last proven head) to {head}, which \
             does not contain it (found before merging story '{}'); something outside epic moved \
             it, and merged stories may be missing from it. epic merges nothing onto it: put it \
             back (`git update-ref refs/heads/{} {proven}`, then `git -C {} reset --hard`), \
             then rerun.",
            self.shared.epic_branch,
            self.id(),
            self.shared.epic_branch,
            self.shared.epic_worktree.display()
        )))
    }

    /// Checkpoints the epic head, writes the merge journal and merges the story branch: the
    /// checkpoint, and the merge commit (`None` when the epic branch already had it all).
    async fn merge(
        &self,
        journal_path: &Path,
    ) -> Result<(epic_git_ops::CommitId, Option<epic_git_ops::CommitId>), Stop> {
        let shared = Arc::clone(&self.shared);
        let epic = shared.epic_worktree.clone();
        let checkpoint = blocking(&shared.git, "read the epic head", {
            let epic = epic.clone();
            move |git| git.checkpoint(&epic)
        })
        .await?;
        let journal = MergeJournal {
            story: self.id().to_owned(),
            checkpoint: checkpoint.to_hex(),
        };
        epic_state_store::save(journal_path, &journal).map_err(|error| {
            Stop::Failed(format!(
                "the merge journal could not be written: {}.",
                chain(&error)
            ))
        })?;
        self.emit(Event::MergeStarted {
            story: self.id().to_owned(),
            checkpoint: checkpoint.to_hex(),
        });
        let message = format!("{}: merge story {}", shared.dir.epic_id(), self.id());
        let merged = blocking(&shared.git, "merge the story into the epic branch", {
            let (epic, branch) = (epic.clone(), self.branch.clone());
            move |git| git.merge(&epic, &branch, &message, MergeFavor::None)
        })
        .await;
        let outcome = match merged {
            Ok(outcome) => outcome,
            Err(stop) => {
                // A refused merge leaves the epic worktree as it was; make sure of it.
                self.rollback(&checkpoint, "the merge failed").await;
                remove_journal(journal_path);
                return Err(stop);
            }
        };
        let commit = match outcome {
            MergeOutcome::Conflict { paths } => {
                remove_journal(journal_path);
                self.emit(Event::MergeConflicted {
                    story: self.id().to_owned(),
                    paths: paths.clone(),
                });
                return Err(Stop::Failed(format!(
                    "merging {} into {} conflicted on: {}. The epic branch is as it was. \
                     Another story changed these paths after this one caught up; rerun to \
                     catch up again (the epic side wins conflicting hunks) and retry the merge.",
                    self.branch,
                    shared.epic_branch,
                    paths.join(", ")
                )));
            }
            MergeOutcome::UpToDate => None,
            MergeOutcome::Merged(commit) => Some(commit),
        };
        Ok((checkpoint, commit))
    }

    /// Runs the gates on the merged epic head. Strict: every gate must pass. With a red
    /// baseline allowed: only a gate that passed on the head before the merge may not fail.
    /// Green, the verdict becomes the new baseline.
    async fn prove(&self, head: &mut EpicHead, commit: String) -> Result<(), Stop> {
        let shared = &self.shared;
        let story = self.id().to_owned();
        let events = Arc::clone(&shared.events);
        let on_result = move |result: &GateResult| {
            events(Event::EpicGate {
                story: Some(story.clone()),
                command: result.command.clone(),
                passed: result.passed,
                duration_ms: millis(result),
                status: result.status.clone(),
            });
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), shared.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), self.id().to_owned()),
            (
                "EPIC_WORKTREE".to_owned(),
                shared.epic_worktree.display().to_string(),
            ),
        ];
        let results = if shared.config.allow_red_baseline {
            shared
                .epic_gates
                .run_each(&shared.epic_worktree, &env, &self.cancel, &on_result)
                .await
                .map_err(|_| Stop::Cancelled)?
        } else {
            let review = shared
                .epic_gates
                .run(&shared.epic_worktree, &env, &self.cancel, &on_result)
                .await
                .map_err(|_| Stop::Cancelled)?;
            if !review.clean {
                return Err(Stop::Failed(format!(
                    "epic gates failed after merging; merge undone:\n{}",
                    prompts::issue_lines(&review)
                )));
            }
            Vec::new()
        };
        let regressions: Vec<String> = results
            .iter()
            .filter(|(result, _)| !result.passed && head.green.contains(&result.command))
            .filter_map(|(_, issue)| issue.as_ref())
            .map(|issue| format!("- {}: {}", issue.title, issue.description))
            .collect();
        if !regressions.is_empty() {
            return Err(Stop::Failed(format!(
                "epic gates that passed before this merge failed after it; merge undone:\n{}",
                regressions.join("\n")
            )));
        }
        let baseline = GateBaseline {
            commit,
            gates: shared
                .epic_gates
                .commands()
                .iter()
                .map(|command| GateVerdict {
                    command: command.clone(),
                    passed: !shared.config.allow_red_baseline
                        || results
                            .iter()
                            .any(|(result, _)| result.command == *command && result.passed),
                })
                .collect(),
        };
        head.green = baseline.passed();
        if let Err(error) = baseline.save(&shared.dir) {
            self.note(format!(
                "the gate baseline could not be cached: {}",
                chain(&error)
            ));
        }
        Ok(())
    }

    /// Resets the epic worktree to `checkpoint`.
    async fn rollback(&self, checkpoint: &epic_git_ops::CommitId, why: &str) {
        let epic = self.shared.epic_worktree.clone();
        let to = *checkpoint;
        let result = blocking(&self.shared.git, "undo the merge", move |git| {
            let head = git.checkpoint(&epic).map_err(|error| error.to_string());
            let status = git
                .status(&epic, &[])
                .map_or(true, |status| status.is_dirty());
            if head.as_ref().is_ok_and(|head| *head == to) && !status {
                return Ok::<bool, RollbackFailed>(false);
            }
            git.rollback(&epic, &to)
                .map(|()| true)
                .map_err(|error| RollbackFailed(chain(&error)))
        })
        .await;
        match result {
            Ok(true) => self.emit(Event::StoryRolledBack {
                story: self.id().to_owned(),
                to: checkpoint.to_hex(),
                reason: why.to_owned(),
            }),
            Ok(false) | Err(Stop::Cancelled | Stop::Halt(_)) => {}
            Err(Stop::Failed(reason)) => self.emit(Event::RunNote {
                message: format!(
                    "the merge of story '{}' could not be undone ({reason}); reset the epic \
                     worktree `{}` to {checkpoint} by hand",
                    self.id(),
                    self.shared.epic_worktree.display()
                ),
            }),
        }
    }
}

/// Removes the worktree of `story`, merged in this run (its branch stays), once no story is
/// preparing its worktree ([`Preparing`]); emits [`Event::WorktreeRemoved`], or a note when git
/// fails. Returns the worktree when `cancel` (the run's interrupt) came before the removal began:
/// it is left in place, and `epic clean` removes it.
///
/// # Cancel safety
///
/// Cancelled (`cancel`) while it waits, it returns at once. A removal under way runs to its end
/// in a blocking thread; dropping the future only stops waiting for it.
pub(crate) async fn remove_merged_worktree(
    shared: Arc<Shared>,
    story: String,
    worktree: PathBuf,
    cancel: CancellationToken,
) -> Option<(String, PathBuf)> {
    let interrupted = tokio::select! {
        biased;
        () = cancel.cancelled() => true,
        () = shared.preparing.idle() => false,
    };
    if interrupted {
        return Some((story, worktree));
    }
    let path = worktree.clone();
    match blocking(
        &shared.git,
        "remove the merged story's worktree",
        move |git| git.remove_worktree(&path),
    )
    .await
    {
        Ok(_) => (shared.events)(Event::WorktreeRemoved {
            story,
            worktree: worktree.display().to_string(),
        }),
        Err(Stop::Failed(reason)) => (shared.events)(Event::Note {
            story,
            message: reason,
        }),
        Err(Stop::Cancelled | Stop::Halt(_)) => {}
    }
    None
}

/// A rollback that failed, as an error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct RollbackFailed(String);

fn remove_journal(path: &Path) {
    std::fs::remove_file(path).ok();
}

fn turn_failed(role: Role, error: SeatError) -> Stop {
    match error {
        SeatError::Cancelled => Stop::Cancelled,
        source => StoryError::Agent {
            role,
            task: None,
            source,
        }
        .into(),
    }
}

fn millis(result: &GateResult) -> u64 {
    u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX)
}

/// Removes the lock files a git process killed mid-write leaves behind (`index.lock`,
/// `AUTO_MERGE.lock`, … at the top of the worktree's git directory, and `<branch>.lock` of the
/// branch it works on),
/// which would fail every later git command there. Only called under the epic's lock, by the
/// one run that works in these worktrees: a lock file found then belongs to a process of a run
/// that died. The paths removed.
pub(crate) fn clear_stale_locks(common_dir: &Path, worktree: &Path, branch: &str) -> Vec<PathBuf> {
    let dotgit = worktree.join(".git");
    let git_dir = if dotgit.is_dir() {
        Some(dotgit)
    } else {
        std::fs::read_to_string(&dotgit).ok().and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("gitdir:"))
                .map(|dir| worktree.join(dir.trim()))
        })
    };
    let mut candidates = Vec::new();
    if let Some(git_dir) = git_dir
        && let Ok(entries) = std::fs::read_dir(&git_dir)
    {
        // index.lock, HEAD.lock, AUTO_MERGE.lock, ORIG_HEAD.lock, MERGE_HEAD.lock, …
        candidates.extend(
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "lock") && path.is_file()),
        );
        candidates.sort();
    }
    if !branch.is_empty()
        && !branch
            .split('/')
            .any(|part| part == ".." || part.is_empty())
    {
        candidates.push(common_dir.join("refs/heads").join(format!("{branch}.lock")));
    }
    candidates
        .into_iter()
        .filter(|path| std::fs::remove_file(path).is_ok())
        .collect()
}

/// The message of a dirty epic worktree.
pub(crate) fn dirty_message(worktree: &Path, paths: &[String], after: Option<&str>) -> String {
    let found = after
        .map(|story| format!(" (found after story '{story}' finished)"))
        .unwrap_or_default();
    let mut out = format!(
        "the epic worktree `{}` has uncommitted changes{found}; something worked outside its \
         own worktree:",
        worktree.display()
    );
    for path in paths {
        out.push_str("\n- ");
        out.push_str(path);
    }
    out.push_str("\nMove each change into the owning story's worktree or discard it, then rerun.");
    out
}
