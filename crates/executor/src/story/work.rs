//! One story at work ([`Work`]), the context every step of its lifecycle takes: its story,
//! branch, worktree and slot, what the run shares, and the helpers every step uses (git off the
//! async workers, the story's state, its commits and chats).

#[cfg(doc)]
use epic_guard::TurnGuard;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use epic_git_ops::{CommitId, CommitOutcome, Git};
use epic_report::UsageMeter;
use epic_state_store::{Hold, StoryStage, StoryState};
use epic_story_plan::Story;
use tokio_util::sync::CancellationToken;

use super::revision::Revision;
use crate::error::StoryError;
use crate::failure::{Failure, Stop};
use crate::shared::{PreparingGuard, Shared};
use epic_agents::{Role, SeatError};
use epic_chat::{Chat, ChatContext, Recorder};
use epic_events::Event;
use epic_process::offload;
use epic_protocol::prompts::Briefing;

/// One story at work. Its steps are `impl Work` blocks in the step's own file.
pub(super) struct Work {
    pub(super) shared: Arc<Shared>,
    pub(super) story: Arc<Story>,
    pub(super) branch: String,
    pub(super) worktree: PathBuf,
    pub(super) slot: usize,
    pub(super) cancel: CancellationToken,
    /// The run's token, under which `cancel` is: a merge batch this story's task drives for
    /// other stories too is cancelled by it, not by `cancel` (see `merge_queue::drain`).
    pub(super) batches: CancellationToken,
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
    pub(super) revision: Option<Revision>,
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
            hold: None,
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

    /// Records where a person holds the story (`None`: nowhere) in its state file.
    pub(super) async fn mark_hold(&mut self, hold: Option<Hold>) {
        if let Ok(path) = self.state_path() {
            record_hold(&self.shared, path, hold).await;
        }
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
                .reading_notes(self.shared.dir.clone())
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

/// Records `hold` in the story state file at `path`, if the story has one and has not merged,
/// through the run's guard.
pub(crate) async fn record_hold(shared: &Shared, path: std::path::PathBuf, hold: Option<Hold>) {
    shared
        .write(path, move |path| {
            if let Ok(Some(mut state)) = epic_state_store::load::<StoryState>(path)
                && state.status != StoryStage::Merged
            {
                state.hold = hold;
                epic_state_store::save(path, &state).ok();
            }
        })
        .await
        .ok();
}

/// Records a retry in the story state file at `path`: no hold; `fresh`, a hash no plan entry
/// has, so that the story starts over from the epic head (as after a changed plan entry).
pub(crate) async fn record_retry(shared: &Shared, path: std::path::PathBuf, fresh: bool) {
    shared
        .write(path, move |path| {
            if let Ok(Some(mut state)) = epic_state_store::load::<StoryState>(path)
                && state.status != StoryStage::Merged
            {
                state.hold = None;
                if fresh {
                    "retried --fresh".clone_into(&mut state.hash);
                }
                epic_state_store::save(path, &state).ok();
            }
        })
        .await
        .ok();
}

/// Records in the story state file at `path` that the story failed, held nowhere.
pub(crate) async fn record_failed(shared: &Shared, path: std::path::PathBuf) {
    shared
        .write(path, move |path| {
            if let Ok(Some(mut state)) = epic_state_store::load::<StoryState>(path)
                && state.status != StoryStage::Merged
            {
                state.status = StoryStage::Failed;
                state.hold = None;
                epic_state_store::save(path, &state).ok();
            }
        })
        .await
        .ok();
}

/// Records a stop in the story state file at `path`: its hold, or, for a story without a
/// state, `fresh` (the state a stopped story that never ran has).
pub(crate) async fn record_stop(shared: &Shared, path: std::path::PathBuf, fresh: StoryState) {
    shared
        .write(path, move |path| {
            match epic_state_store::load::<StoryState>(path) {
                Ok(Some(mut state)) if state.status != StoryStage::Merged => {
                    state.hold = fresh.hold;
                    epic_state_store::save(path, &state).ok();
                }
                Ok(None) => {
                    epic_state_store::save(path, &fresh).ok();
                }
                _ => {}
            }
        })
        .await
        .ok();
}
