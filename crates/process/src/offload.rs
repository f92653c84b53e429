//! The one way blocking work leaves the async workers: git-ops calls (every one blocks) and the
//! state store's file I/O (which fsyncs) run on tokio's blocking pool through [`blocking`],
//! [`spawn`] or, for git, [`git`], whose failure is a [`GitFailed`] that each caller turns into
//! its own error (a story's failure, a task loop's `StoryError::Git`, a run's `RunError::Git`).

use std::error::Error;
use std::sync::Arc;

use epic_git_ops::Git;
use tokio::task::{JoinError, JoinHandle};

/// Any error, boxed.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// A git-ops call that failed, or whose blocking thread died: what was being done, and why.
#[derive(Debug, thiserror::Error)]
#[error("git failed to {action}")]
pub struct GitFailed {
    /// What was being done (`merge the story into the epic branch`).
    pub action: String,
    /// The git-ops error, or the [`JoinError`] of a thread that panicked.
    #[source]
    pub source: BoxError,
}

/// Runs `op` on the blocking pool and waits for it; `Err` only when its thread panicked (or the
/// runtime is shutting down).
///
/// # Cancel safety
///
/// Dropping the future stops waiting; `op` still runs to its end.
pub async fn blocking<T: Send + 'static>(
    op: impl FnOnce() -> T + Send + 'static,
) -> Result<T, JoinError> {
    tokio::task::spawn_blocking(op).await
}

/// Starts `op` on the blocking pool without waiting for it: the handle resolves to its result
/// (the report rewritten in the background while the run loop goes on).
pub fn spawn<T: Send + 'static>(op: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
    tokio::task::spawn_blocking(op)
}

/// Runs git-ops call `op` on the blocking pool; an error (or a panic) becomes a [`GitFailed`]
/// naming `action`.
///
/// # Cancel safety
///
/// Dropping the future stops waiting; the git call still runs to its end.
pub async fn git<T, E>(
    git: &Arc<dyn Git>,
    action: &str,
    op: impl FnOnce(&dyn Git) -> Result<T, E> + Send + 'static,
) -> Result<T, GitFailed>
where
    T: Send + 'static,
    E: Into<BoxError> + Send + 'static,
{
    let git = Arc::clone(git);
    let fail = |source: BoxError| GitFailed {
        action: action.to_owned(),
        source,
    };
    match blocking(move || op(git.as_ref())).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(fail(error.into())),
        Err(error) => Err(fail(Box::new(error))),
    }
}
