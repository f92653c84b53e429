//! Where an epic's run or landing works: the worktrees beside the repository
//! ([`worktrees_root`], the epic branch's [`EPIC_WORKTREE_NAME`]), the epic's lock
//! ([`take_lock`]) and its event log ([`open_log`]).

use std::path::{Path, PathBuf};

use epic_process::offload;
use epic_state_store::{EpicDir, EpicLock, EventLog, LockError};

use crate::error::RunError;

/// The directory under which the epic branch's own worktree lives, beside the story worktrees.
pub const EPIC_WORKTREE_NAME: &str = "_epic";

/// Where the worktrees of epic `epic` live, for a repository whose main worktree is `main`:
/// `<repo-parent>/<repo-name>.worktrees/<epic>` (docs/contract.md). Each story's worktree is the
/// story id under it, the epic branch's is [`EPIC_WORKTREE_NAME`].
///
/// ```
/// use std::path::Path;
///
/// let root = epic_branch::worktrees_root(Path::new("/src/shop"), "checkout");
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

/// The epic's event log, opened for appending.
pub async fn open_log(dir: &EpicDir) -> Result<EventLog, RunError> {
    let path = dir.events();
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| RunError::State {
        action: "open the event log".to_owned(),
        source,
    };
    offload::blocking(move || EventLog::open(path))
        .await
        .map_err(|error| failed(Box::new(error)))?
        .map_err(|error| failed(Box::new(error)))
}

/// Takes the epic's lock (another run or landing holding it: [`RunError::Locked`]).
pub async fn take_lock(dir: &EpicDir) -> Result<EpicLock, RunError> {
    let dir = dir.clone();
    let taken = offload::blocking(move || EpicLock::acquire(&dir))
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
