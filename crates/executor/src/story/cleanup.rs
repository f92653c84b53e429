//! After a story: the removal of a merged story's worktree, a cleanup the run loop spawns once
//! the story ended, held back while other stories are adding their worktrees ([`Preparing`](crate::shared::Preparing)):
//! worktree administration is serialized, and the dependents the merge made ready come first.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::failure::git_reason;
use crate::shared::Shared;
use epic_events::Event;
use epic_process::offload;

/// Removes the worktree of `story`, merged in this run (its branch stays), once no story is
/// preparing its worktree ([`Preparing`](crate::shared::Preparing)); emits [`Event::WorktreeRemoved`], or a note when git
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
