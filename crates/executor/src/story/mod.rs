//! The lifecycle of one story, a step per file, in the order [`run_story`] takes them:
//!
//! 1. [`prepare`]: its worktree and branch, with the hash-guarded resume rules, and what a run
//!    that died left there (lock files, a half-made worktree, an unfinished merge);
//! 2. [`catch_up`]: a merge of the proven epic head into the story branch;
//! 3. [`setup`]: the setup commands in a fresh or caught-up worktree, then [`briefing`]: what
//!    the agents' prompts carry beyond the plan entry;
//! 4. the task loop ([`TaskLoop`], `task_loop/`);
//! 5. [`perimeter`]: strays put back, the perimeter enforced, the tests guarded;
//! 6. [`judge`]: the judge rounds, each but the last followed by a coder round on its findings;
//! 7. [`integrate`]: the merge under the merge lock, proven by the gates on the epic worktree or
//!    undone;
//!
//! and, as a cleanup of the run loop's once the story ended, [`cleanup`]: the removal of the
//! merged story's worktree. Here: what every story of a run shares ([`Shared`]), the story at
//! work ([`Work`]) and how it ends ([`StoryEnd`]); a failure is a [`Failure`] (`failure.rs`, the
//! one place its reason text is written).

mod briefing;
mod catch_up;
mod cleanup;
mod failure;
mod integrate;
mod judge;
mod perimeter;
mod prepare;
mod setup;
mod slot;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use epic_git_ops::{CommitId, CommitOutcome, Git};
use epic_report::{InPlace, Timestamp, UsageMeter};
use epic_state_store::{EpicDir, StoryStage, StoryState};
use epic_story_plan::{Story, StoryPlan};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

pub(crate) use cleanup::{Preparing, PreparingGuard, remove_merged_worktree};
pub(crate) use failure::{Failure, dirty_message, git_reason};
pub(crate) use slot::retire_slots;

use crate::chat::{Chat, ChatContext, Recorder};
use crate::error::StoryError;
use crate::event::{Event, EventSink};
use crate::gates::{GateResult, Gates};
use crate::merge_queue::MergeQueue;
use crate::prompts::Briefing;
use crate::run::RunConfig;
use crate::task_loop::{StoryJob, TaskLoop};
use epic_agents::{Role, SeatError};
use epic_guard::TurnGuard;
use epic_process::offload::{self, BoxError, GitFailed};
use epic_process::sandbox::Sandbox;

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
    /// The sandbox every process of a story runs in: turns, gates, setup.
    pub(crate) sandbox: Sandbox,
    pub(crate) tasks: TaskLoop,
    /// The gates stories are held to: every gate, or with a red baseline allowed, those that
    /// passed on it.
    pub(crate) story_gates: Gates,
    /// Every gate, run on the epic worktree after each merge.
    pub(crate) epic_gates: Gates,
    /// The merge lock; it guards the gates known to pass on the epic head.
    pub(crate) merge: Mutex<EpicHead>,
    /// The stories ready to integrate, waiting for the merge lock: whichever story takes it
    /// integrates up to `merge_batch` of them as one batch ([`MergeQueue`]).
    pub(crate) queue: MergeQueue,
    /// The proven epic head (see [`Shared::proven`]); moved forward under the merge lock.
    pub(crate) proven: std::sync::Mutex<epic_git_ops::CommitId>,
    /// The stories preparing their worktrees; merged worktrees are removed when none is.
    pub(crate) preparing: Preparing,
    pub(crate) events: EventSink,
    /// The guard on epic's own files around every agent turn; epic's own writes to them go
    /// through it ([`Shared::write`], [`Work::admin`]).
    /// The run's seat pauses: a usage limit or an outage pauses its seat for every story.
    pub(crate) pauses: Arc<crate::pause::SeatPauses>,
    pub(crate) guard: Arc<TurnGuard>,
    /// The run's budget (`--budget-usd`), checked before every agent turn.
    pub(crate) budget: Arc<crate::budget::Budget>,
    /// The run's number (as the report numbers runs), for the merges' attestations.
    pub(crate) run: u32,
}

impl Shared {
    /// Puts the epic branch back at the proven head when something other than epic moved it
    /// (an agent's `git update-ref`, a commit or an amend in the epic worktree, a reset): while
    /// a run holds the lock, only epic moves the epic branch, and only to a proven head. The
    /// worktree is reset with it, so the files the moved branch brought are gone too. Returns
    /// where the branch was found; the commits stay in git's reflog. Call it under the merge
    /// lock, or when no story runs.
    pub(crate) async fn restore_epic_head(&self) -> Result<Option<CommitId>, GitFailed> {
        let proven = self.proven();
        let (epic, tip) = (
            self.epic_worktree.clone(),
            format!("refs/heads/{}", self.epic_branch),
        );
        offload::git(
            &self.git,
            "put the epic branch back at its proven head",
            move |git| {
                let head = git.rev_parse(&epic, &tip)?;
                if head == proven {
                    return Ok::<_, BoxError>(None);
                }
                git.rollback(&epic, &proven)?;
                Ok(Some(head))
            },
        )
        .await
    }

    /// The note saying the epic branch was found at `moved_to` and put back; `found` says when.
    pub(crate) fn note_restored_epic_head(&self, moved_to: CommitId, found: &str) -> String {
        format!(
            "the epic branch {branch} was at {moved_to}, not at {proven}, the last head epic \
             proved ({found}): something other than epic moved it; it is back at {proven}, and \
             what it held stays in `git reflog {branch}`",
            branch = self.epic_branch,
            proven = self.proven(),
        )
    }

    /// The epic head whose gates were last proven: where stories are cut and catch up.
    pub(crate) fn proven(&self) -> epic_git_ops::CommitId {
        *self
            .proven
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Kills what escaped its turn without the sandbox ([`Sandbox::sweep`]), saying so: about
    /// `story` when it is a story's end, else about the run.
    pub(crate) async fn sweep_orphans(&self, story: Option<&str>) {
        for message in self.sandbox.sweep().await {
            (self.events)(match story {
                Some(story) => Event::Note {
                    story: story.to_owned(),
                    message,
                },
                None => Event::RunNote { message },
            });
        }
    }

    /// Runs epic's own write `op` of the guarded file `path` off the async workers, through the
    /// guard ([`TurnGuard::epic_write`]): it does not count as an agent's change.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        path: PathBuf,
        op: impl FnOnce(&std::path::Path) -> T + Send + 'static,
    ) -> Result<T, tokio::task::JoinError> {
        let guard = Arc::clone(&self.guard);
        offload::blocking(move || guard.epic_write(&path, || op(&path))).await
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
    /// Merged (now, or it already was; or found already in place); `proven_with`: the stories proven together with it by
    /// one gate run of the merge queue, itself included (empty when alone).
    Merged {
        judge: Option<String>,
        proven_with: Vec<String>,
        /// Set when it merged nothing because its work was already in place, with the evidence
        /// that showed it.
        in_place: Option<InPlace>,
    },
    /// Failed; when [`Failure::halts`], new stories must not start (the epic worktree is dirty).
    Failed(Failure),
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
pub(crate) enum Stop {
    Failed(Failure),
    Cancelled,
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Self {
        Self::Failed(failure)
    }
}

impl From<GitFailed> for Stop {
    fn from(error: GitFailed) -> Self {
        Self::Failed(Failure::Git(error))
    }
}

impl From<StoryError> for Stop {
    fn from(error: StoryError) -> Self {
        match error {
            StoryError::Cancelled => Self::Cancelled,
            StoryError::Blocked {
                story,
                need,
                verifier,
            } => Self::Failed(Failure::Blocked {
                story,
                need,
                verifier,
            }),
            StoryError::Agent {
                role,
                source: SeatError::GuardedFiles(tampered),
                ..
            } => Self::Failed(Failure::GuardedFiles { role, tampered }),
            error => Self::Failed(Failure::Tasks(error)),
        }
    }
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
        briefing: Arc::new(Briefing::bare(shared.worktree_root.join(&story.id))),
        pushed_back: AtomicBool::new(false),
        ready: false,
    };
    let result = work.run().await;
    let ending = match result {
        Ok(integrated) => Ending::Merged {
            judge: integrated.judge,
            proven_with: integrated.proven_with,
            in_place: integrated.in_place,
        },
        Err(Stop::Cancelled) => Ending::Cancelled,
        Err(Stop::Failed(failure)) => Ending::Failed(failure),
    };
    // Before the state says `failed`: a slot taken out of the rotation records its new place.
    work.leave_slot(&ending).await;
    if matches!(ending, Ending::Failed(_)) && work.has_state {
        work.mark_failed().await;
    }
    shared.sweep_orphans(Some(&story.id)).await;
    // A slot worktree stays for the next story in its slot.
    let merged_worktree = (work.merged
        && !shared.config.keep_worktrees
        && !slot::is_slot(&shared.worktree_root, &work.worktree))
    .then(|| work.worktree.clone());
    StoryEnd {
        ending,
        branch: work.has_state.then_some(branch),
        merged_worktree,
        usage: work.usage,
        started_at,
        finished_at: Timestamp::now(),
    }
}

/// One story at work. Its steps are `impl Work` blocks in the step's own file.
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
    /// What its agents' prompts carry beyond its plan entry, gathered once its worktree is ready
    /// (`briefing.rs`); bare until then.
    briefing: Arc<Briefing>,
    /// Whether the coder's one pushback turn after a rejected `BLOCKED_ON:` claim was used
    /// (in the task loop, or in a judge round's feedback turn).
    pushed_back: AtomicBool,
    /// Whether its worktree is prepared: its `.git` names its own registration (preparation
    /// points it back), so a link found elsewhere from then on is an agent's doing.
    ready: bool,
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

    /// Runs git-ops call `op` off the async workers ([`offload::git`]); an error is the story's
    /// failure. Once the worktree is prepared, an agent may have pointed its `.git` at another
    /// worktree's registration (the epic worktree's): then no git runs, since in the story's
    /// worktree it would act on that one, and the story fails (a rerun points the link back).
    async fn git<T, E>(
        &self,
        action: &str,
        op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
    ) -> Result<T, Stop>
    where
        T: Send + 'static,
        E: Into<offload::BoxError> + Send + 'static,
    {
        let worktree = self.worktree.clone();
        let linked = if self.ready {
            offload::blocking(move || {
                epic_git_ops::linked_elsewhere(&worktree).map(|other| (worktree, other))
            })
            .await
            .ok()
            .flatten()
        } else {
            None
        };
        if let Some((worktree, other)) = linked {
            return Err(Failure::Tasks(StoryError::LinkedElsewhere { worktree, other }).into());
        }
        Ok(offload::git(&self.shared.git, action, op).await?)
    }

    /// Runs git-ops call `op`, which administers the worktrees at `worktrees` (adds, removes,
    /// moves, relinks them), through the guard ([`TurnGuard::epic_worktrees`]): the
    /// registrations it writes do not count as an agent's change.
    async fn admin<T, E>(
        &self,
        action: &str,
        worktrees: Vec<PathBuf>,
        op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
    ) -> Result<T, Stop>
    where
        T: Send + 'static,
        E: Into<offload::BoxError> + Send + 'static,
    {
        let guard = Arc::clone(&self.shared.guard);
        self.git(action, move |git| {
            let worktrees: Vec<&std::path::Path> = worktrees.iter().map(PathBuf::as_path).collect();
            guard.epic_worktrees(&worktrees, || op(git))
        })
        .await
    }

    /// The steps, in order: the story's judge note once it merged, and the stories proven with
    /// it.
    async fn run(&mut self) -> Result<integrate::Integrated, Stop> {
        let prepared = self.prepare().await;
        // The worktree is ready (or never will be): removals of merged ones may go on.
        drop(self.preparing.take());
        let fresh = match prepared? {
            // No judge spoke in this run: the report keeps what the run that merged it said.
            prepare::Prepared::Merged => return Ok(integrate::Integrated::default()),
            prepare::Prepared::Ready { fresh } => fresh,
        };
        self.ready = true;
        self.check_cancel()?;
        let caught_up = self.catch_up().await?;
        if fresh || caught_up {
            self.setup().await?;
        }
        self.check_cancel()?;
        self.briefing = self.gather_briefing().await;
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
        .map_err(Failure::UnsafeId)?
        .with_briefing(Arc::clone(&self.briefing));
        let run = self.shared.tasks.run(&job, &self.cancel).await;
        self.usage.absorb(&run.usage);
        match run.result {
            Ok(done) => self.pushed_back = AtomicBool::new(done.pushed_back),
            Err(error) => {
                return Err(match Stop::from(error) {
                    Stop::Failed(failure) => Stop::Failed(failure.rejected(run.rejected)),
                    Stop::Cancelled => Stop::Cancelled,
                });
            }
        }
        self.check_cancel()?;
        self.catch_up().await?;
        if self.repair_perimeter().await? {
            self.commit(format!(
                "{}: put paths outside the perimeter back",
                self.id()
            ))
            .await?;
        }
        // From here on every check, and the merge, takes the commit the perimeter checked:
        // the branch may still move (a commit in the judge turn, a process an agent left), and
        // what moved it is never merged unchecked.
        let checked = self.enforce_perimeter().await?;
        self.guard_tests(&checked).await?;
        let judgement = self.judge(checked).await?;
        if judgement.note.is_some() && judgement.cleared != checked {
            // A judge round's feedback turn may have touched the tests too.
            self.guard_tests(&judgement.cleared).await?;
        }
        self.check_cancel()?;
        self.integrate(judgement).await
    }

    // The story's state, read and written by every step that changes it.

    fn state_path(&self) -> Result<PathBuf, Stop> {
        Ok(self
            .shared
            .dir
            .story_state(self.id())
            .map_err(Failure::UnsafeId)?)
    }

    async fn save_state(&mut self, status: StoryStage) -> Result<(), Stop> {
        self.save_state_with(status, None).await
    }

    /// Saves the story's state; `merge` is the epic branch's commit that holds its merge, once
    /// it merged ([`StoryState::merge`]).
    async fn save_state_with(
        &mut self,
        status: StoryStage,
        merge: Option<CommitId>,
    ) -> Result<(), Stop> {
        let path = self.state_path()?;
        let state = StoryState {
            id: self.id().to_owned(),
            hash: epic_story_plan::story_hash(&self.story),
            branch: self.branch.clone(),
            worktree: self.worktree.clone(),
            status,
            merge: merge.map(|commit| commit.to_hex()),
        };
        let saved = self
            .shared
            .write(path, move |path| epic_state_store::save(path, &state))
            .await;
        match saved {
            Ok(Ok(())) => {
                self.has_state = true;
                Ok(())
            }
            Ok(Err(error)) => Err(Failure::StateNotSaved(Some(error)).into()),
            Err(_) => Err(Failure::StateNotSaved(None).into()),
        }
    }

    /// Marks the state `failed` unless it says `merged`; best effort.
    async fn mark_failed(&mut self) {
        let Ok(path) = self.state_path() else {
            return;
        };
        self.shared
            .write(path, |path| {
                if let Ok(Some(mut state)) = epic_state_store::load::<StoryState>(path)
                    && state.status != StoryStage::Merged
                {
                    state.status = StoryStage::Failed;
                    epic_state_store::save(path, &state).ok();
                }
            })
            .await
            .ok();
    }

    /// Commits everything in the story's worktree: the commit, `None` when nothing changed.
    async fn commit(&self, message: String) -> Result<Option<String>, Stop> {
        let worktree = self.worktree.clone();
        let outcome = self
            .git("commit", move |git| git.commit_all(&worktree, &message))
            .await?;
        Ok(match outcome {
            CommitOutcome::Committed(id) => Some(id.to_hex()),
            CommitOutcome::NothingToCommit => None,
        })
    }

    /// A chat of `role` in the story's worktree, recording into `recorder`: the judge's seat for
    /// [`Role::Judge`] (the coder's when there is none), else the coder's.
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
            self.chat_context(task),
            Arc::clone(recorder),
        )
    }

    /// Where a chat of the story runs: its worktree, slot, deadline and sandbox.
    fn chat_context(&self, task: Option<&str>) -> ChatContext {
        ChatContext {
            epic: self.shared.dir.epic_id().to_owned(),
            story: Arc::clone(&self.story),
            task: task.map(str::to_owned),
            worktree: self.worktree.clone(),
            slot: self.slot,
            turn_timeout: self.shared.config.turn_timeout,
            cancel: self.cancel.clone(),
            sandbox: self.shared.sandbox.clone(),
        }
    }
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

pub(crate) fn millis(result: &GateResult) -> u64 {
    u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX)
}
