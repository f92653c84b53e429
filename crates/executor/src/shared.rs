//! What every story of a run shares ([`Shared`]), what the merge lock guards ([`EpicHead`]),
//! and the count of stories preparing their worktrees ([`Preparing`]).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use epic_git_ops::{CommitId, Git};
use epic_state_store::EpicDir;
use epic_story_plan::StoryPlan;
use tokio::sync::{Mutex, watch};

use crate::config::RunConfig;
use crate::queue::MergeQueue;
use crate::task_loop::TaskLoop;
use epic_events::{Event, EventSink};
use epic_gates::Gates;
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
    /// through it ([`Shared::write`], the story's `admin`).
    /// The run's seat pauses: a usage limit or an outage pauses its seat for every story.
    pub(crate) pauses: Arc<epic_chat::SeatPauses>,
    pub(crate) guard: Arc<TurnGuard>,
    /// The run's budget (`--budget-usd`), checked before every agent turn.
    pub(crate) budget: Arc<epic_chat::Budget>,
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

/// What the merge lock guards: the gate commands that pass on the epic head now, and the
/// failing tests of those red on it that named them.
#[derive(Debug)]
pub(crate) struct EpicHead {
    pub(crate) green: BTreeSet<String>,
    /// The tests red on the epic head, by command: a merge is not charged with them.
    pub(crate) inherited: epic_gates::Inherited,
}

/// How many stories are between their launch and their worktree being ready.
///
/// Worktree administration is serialized (git-ops holds one lock for every `git worktree`
/// command), so the removal of a merged story's worktree would hold up the `git worktree add` of
/// the dependents its merge just made ready. `remove_merged_worktree` (`story/cleanup.rs`)
/// therefore waits until no story is preparing ([`idle`](Self::idle)).
///
/// It also holds the switch lock of the slot worktrees (`--worktrees warm`, `slot.rs`): each
/// switch takes its shared side, so switches of different slots run side by side; freeing a
/// story's branch from another slot, or taking a slot out of the rotation, takes it whole, so
/// that no story is switching that slot meanwhile.
#[derive(Debug)]
pub(crate) struct Preparing {
    count: watch::Sender<usize>,
    /// Shared while a slot worktree is switched; whole while a branch is freed from another
    /// slot or a slot is taken out of the rotation.
    pub(crate) switching: Arc<tokio::sync::RwLock<()>>,
}

impl Preparing {
    pub(crate) fn new() -> Self {
        Self {
            count: watch::Sender::new(0),
            switching: Arc::new(tokio::sync::RwLock::new(())),
        }
    }

    /// Counts one more story preparing, until the guard is dropped. Taken by the run loop when it
    /// launches the story, so that a removal it spawns right after already waits for it.
    pub(crate) fn enter(&self) -> PreparingGuard {
        self.count.send_modify(|count| *count += 1);
        PreparingGuard(self.count.clone())
    }

    /// Resolves once no story is preparing its worktree.
    pub(crate) async fn idle(&self) {
        let mut count = self.count.subscribe();
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
