//! After a story: the removal of a merged story's worktree, a cleanup the run loop spawns once
//! the story ended, held back while other stories are adding their worktrees ([`Preparing`]):
//! worktree administration is serialized, and the dependents the merge made ready come first.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::failure::git_reason;
use crate::event::Event;
use epic_process::offload;

/// How many stories are between their launch and their worktree being ready.
///
/// Worktree administration is serialized (git-ops holds one lock for every `git worktree`
/// command), so the removal of a merged story's worktree would hold up the `git worktree add` of
/// the dependents its merge just made ready. [`remove_merged_worktree`] therefore waits until no
/// story is preparing ([`idle`](Self::idle)).
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
    async fn idle(&self) {
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
    let (path, guard) = (worktree.clone(), Arc::clone(&shared.guard));
    match offload::git(
        &shared.git,
        "remove the merged story's worktree",
        move |git| guard.epic_worktrees(&[path.as_path()], || git.remove_worktree(&path)),
    )
    .await
    {
        Ok(_) => (shared.events)(Event::WorktreeRemoved {
            story,
            worktree: worktree.display().to_string(),
        }),
        Err(error) => (shared.events)(Event::Note {
            story,
            message: git_reason(&error),
        }),
    }
    None
}
