//! One story at work ([`Work`]): [`run_story`] takes it through its steps in order, each an
//! `impl Work` block in the step's own file, and says how it ended ([`StoryEnd`]).

#[cfg(doc)]
use super::remove_merged_worktree;
#[cfg(doc)]
use epic_guard::TurnGuard;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use epic_git_ops::{CommitId, CommitOutcome, Git};
use epic_report::{InPlace, Timestamp, UsageMeter};
use epic_state_store::{StoryStage, StoryState};
use epic_story_plan::Story;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::judge::Judgement;
use super::{Failure, Stop};
use super::{integrate, prepare, slot};
use crate::chat::{Chat, ChatContext, Recorder};
use crate::error::StoryError;
use crate::event::Event;
use crate::prompts::Briefing;
use crate::shared::PreparingGuard;
use crate::task_loop::StoryJob;
use epic_agents::{Role, SeatError};
use epic_process::offload;

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
    /// Its merge revisions so far, across runs (`--merge-revisions`).
    pub(crate) revisions: u32,
    pub(crate) started_at: Timestamp,
    pub(crate) finished_at: Timestamp,
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
        revisions: 0,
        revision: None,
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
        revisions: work.revisions,
        started_at,
        finished_at: Timestamp::now(),
    }
}

/// One story at work. Its steps are `impl Work` blocks in the step's own file.
pub(super) struct Work {
    pub(super) shared: Arc<Shared>,
    pub(super) story: Arc<Story>,
    pub(super) branch: String,
    pub(super) worktree: PathBuf,
    pub(super) slot: usize,
    pub(super) cancel: CancellationToken,
    pub(super) usage: UsageMeter,
    pub(super) has_state: bool,
    /// Set once the story merged in this run and its state says so.
    pub(super) merged: bool,
    /// Counts the story in [`Shared::preparing`]; dropped once its worktree is ready.
    pub(super) preparing: Option<PreparingGuard>,
    /// The proven epic head the story last caught up with: the base of its diffs.
    pub(super) base: String,
    /// What its agents' prompts carry beyond its plan entry, gathered once its worktree is ready
    /// (`briefing.rs`); bare until then.
    pub(super) briefing: Arc<Briefing>,
    /// Whether the coder's one pushback turn after a rejected `BLOCKED_ON:` claim was used
    /// (in the task loop, or in a judge round's feedback turn).
    pub(super) pushed_back: AtomicBool,
    /// Whether its worktree is prepared: its `.git` names its own registration (preparation
    /// points it back), so a link found elsewhere from then on is an agent's doing.
    pub(super) ready: bool,
    /// Its merge revisions so far, across runs (`revise.rs`).
    pub(super) revisions: u32,
    /// The merge revision in progress: its task is open in the checkpoint.
    pub(super) revision: Option<super::revise::Revision>,
}

impl Work {
    pub(super) fn id(&self) -> &str {
        &self.story.id
    }

    pub(super) fn emit(&self, event: Event) {
        (self.shared.events)(event);
    }

    pub(super) fn note(&self, message: impl Into<String>) {
        self.emit(Event::Note {
            story: self.id().to_owned(),
            message: message.into(),
        });
    }

    pub(super) fn check_cancel(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            Err(Stop::Cancelled)
        } else {
            Ok(())
        }
    }

    pub(super) fn env(&self) -> Vec<(String, String)> {
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
    pub(super) async fn git<T, E>(
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
    pub(super) async fn admin<T, E>(
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
    /// it. A merge red on the proven epic head goes back to the coder and through steps 2 to 7
    /// again while merge revisions are left ([`revise`](super::revise)).
    pub(super) async fn run(&mut self) -> Result<integrate::Integrated, Stop> {
        let prepared = self.prepare().await;
        // The worktree is ready (or never will be): removals of merged ones may go on.
        drop(self.preparing.take());
        let fresh = match prepared? {
            // No judge spoke in this run: the report keeps what the run that merged it said.
            prepare::Prepared::Merged => return Ok(integrate::Integrated::default()),
            prepare::Prepared::Ready { fresh } => fresh,
        };
        self.ready = true;
        let mut fresh = fresh;
        loop {
            self.check_cancel()?;
            let judgement = match self.checked(fresh).await {
                // A revision whose own gates stayed red on the combined tree is spent red:
                // the next revision, while any are left.
                Err(Stop::Failed(failure))
                    if self.revision.is_some() && failure.is_gates_never_green() =>
                {
                    fresh = false;
                    self.revise(failure).await?;
                    continue;
                }
                checked => checked?,
            };
            fresh = false;
            self.check_cancel()?;
            match self.integrate(judgement).await {
                // Red on the proven epic head: back to the coder while revisions are left.
                Err(Stop::Failed(failure)) if failure.is_red_merge() => {
                    self.revise(failure).await?;
                }
                integrated => return integrated,
            }
        }
    }

    /// Steps 2 to 6: the story caught up, set up, its open tasks done (a merge revision's
    /// among them), its perimeter enforced, its tests guarded and the judge rounds; the
    /// commit the judge cleared. `fresh`: its worktree was just made (setup must run).
    async fn checked(&mut self, fresh: bool) -> Result<Judgement, Stop> {
        let caught_up = self.catch_up().await?;
        if fresh || caught_up {
            self.setup().await?;
        }
        self.check_cancel()?;
        self.briefing = self.gather_briefing().await;
        self.resume_revision().await?;
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
                    Stop::Failed(failure) => {
                        Stop::Failed(self.revision_failure(failure.rejected(run.rejected)))
                    }
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
        Ok(judgement)
    }

    // The story's state, read and written by every step that changes it.

    pub(super) fn state_path(&self) -> Result<PathBuf, Stop> {
        Ok(self
            .shared
            .dir
            .story_state(self.id())
            .map_err(Failure::UnsafeId)?)
    }

    pub(super) async fn save_state(&mut self, status: StoryStage) -> Result<(), Stop> {
        self.save_state_with(status, None).await
    }

    /// Saves the story's state; `merge` is the epic branch's commit that holds its merge, once
    /// it merged ([`StoryState::merge`]).
    pub(super) async fn save_state_with(
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
    pub(super) async fn mark_failed(&mut self) {
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
    pub(super) async fn commit(&self, message: String) -> Result<Option<String>, Stop> {
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
    /// [`Role::Judge`] (the coder's when there is none), else the coder's. A coder's chat tells
    /// leftovers ([`Chat::telling_leftovers`]).
    pub(super) fn chat(
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
                .unwrap_or_else(|| self.shared.config.coder.clone()),
            _ => self.shared.config.coder.clone(),
        };
        let chat = Chat::new(
            seat,
            role,
            system,
            self.chat_context(task),
            Arc::clone(recorder),
        );
        if role == Role::Coder {
            chat.telling_leftovers(Arc::clone(&self.shared.git))
        } else {
            chat
        }
    }

    /// Where a chat of the story runs: its worktree, slot, deadline and sandbox.
    pub(super) fn chat_context(&self, task: Option<&str>) -> ChatContext {
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

pub(super) fn turn_failed(role: Role, error: SeatError) -> Stop {
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
