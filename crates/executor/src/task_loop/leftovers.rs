//! What a task's turns leave that no coder turn confirmed, set aside as a patch: a failed
//! task's changes ([`Run::reject`]), and what the worktree still holds after the last task
//! ([`Run::set_aside_leftovers`]).

use std::path::PathBuf;

use epic_git_ops::CommitId;

use crate::error::StoryError;
use epic_process::offload;

use super::context::Run;
#[cfg(doc)]
use super::job::StoryJob;

/// Why [`Run::set_aside`] left the worktree as it was: the note saying so, and the patch if it
/// was kept (only the rollback failed).
struct NotSetAside {
    kept: Option<PathBuf>,
    problem: String,
}
impl Run<'_> {
    /// After task `title`, started at `start`, failed with `error`: keeps what it changed (its
    /// commits and uncommitted files, new ones included, ignored ones not) as a patch at
    /// [`StoryJob::rejected`], then puts the worktree back at `start`, so that a rerun starts
    /// the task again from its checkpoint instead of committing the rejected work as work in
    /// progress. Where the patch is, if one was kept. A cancelled run keeps its work in place
    /// (a rerun resumes it), and a worktree on another branch, or whose branch is gone, is not
    /// touched; when the patch cannot be kept, the worktree stays as it is. Best effort: what
    /// goes wrong is noted.
    pub(super) async fn reject(
        &self,
        error: &StoryError,
        title: &str,
        start: &CommitId,
    ) -> Option<PathBuf> {
        if matches!(
            error,
            StoryError::Cancelled | StoryError::BranchSwitched { .. }
        ) || self.cancel.is_cancelled()
            || self.check_branch().await.is_err()
        {
            return None;
        }
        // A story branch an agent deleted is left for the rerun to start over: resetting the
        // worktree would make it again.
        let branch = format!("refs/heads/{}", self.job.branch);
        if self
            .git("read the story branch", move |git, worktree| {
                git.rev_parse(worktree, &branch)
            })
            .await
            .is_err()
        {
            return None;
        }
        let what = format!("the failed task \"{title}\"");
        match self.set_aside(&what, start).await {
            Ok(kept) => {
                self.recorder.note(match &kept {
                    Some(path) => format!(
                        "the worktree is back at the checkpoint of {what}; its rejected changes \
                         are kept in `{}`",
                        path.display()
                    ),
                    None => format!("the worktree is back at the checkpoint of {what}"),
                });
                kept
            }
            Err(NotSetAside { kept, problem }) => {
                self.recorder.note(problem);
                kept
            }
        }
    }

    /// After the last task, what the worktree still holds uncommitted was confirmed by no
    /// coder turn: a killed run's turn's changes when no open task was left to take them up
    /// (the run was killed in a judge round's coder turn, say), or a gate's edits of tracked
    /// files after a task that changed nothing. They are set aside like a failed task's
    /// changes, a patch at [`StoryJob::rejected`], and the worktree put back at its head, so the
    /// steps after the tasks (the catch-up, the perimeter's commit) never commit them.
    pub(super) async fn set_aside_leftovers(&self) -> Result<(), StoryError> {
        if self.dirty_paths().await?.is_empty() {
            return Ok(());
        }
        let head = self.head().await?;
        match self
            .set_aside("the changes no coder turn confirmed", &head)
            .await
        {
            Ok(kept) => {
                self.recorder.note(format!(
                    "the worktree held uncommitted changes that no coder turn confirmed (a \
                     stopped turn's, with no open task left to take them up); they are set \
                     aside{}, never committed",
                    kept.map(|path| format!(" in `{}`", path.display()))
                        .unwrap_or_default()
                ));
                Ok(())
            }
            Err(NotSetAside { problem, .. }) => Err(StoryError::Git {
                action: "set aside the changes no coder turn confirmed".to_owned(),
                source: problem.into(),
            }),
        }
    }

    /// Keeps what the worktree changed since `start` (commits and uncommitted files, new ones
    /// included, ignored ones not) as a patch at [`StoryJob::rejected`], then puts the worktree
    /// back at `start`. `what` names the changes in what goes wrong. Where the patch is, if
    /// anything changed.
    async fn set_aside(
        &self,
        what: &str,
        start: &CommitId,
    ) -> Result<Option<PathBuf>, NotSetAside> {
        let base = *start;
        let diff = match self
            .git("keep the failed task's changes", move |git, worktree| {
                git.worktree_patch(worktree, &base)
            })
            .await
        {
            Ok(diff) => diff,
            Err(error) => {
                return Err(NotSetAside {
                    kept: None,
                    problem: format!(
                        "the changes of {what} could not be kept, so the worktree stays as it \
                         is: {}",
                        error.reason()
                    ),
                });
            }
        };
        let kept = if diff.is_empty() {
            None
        } else {
            let path = self.job.rejected.clone();
            let target = path.clone();
            let guard = self.parts.guard.clone();
            let written = offload::blocking(move || {
                let write = || epic_state_store::write_atomic(&target, &diff);
                match guard {
                    Some(guard) => guard.epic_write(&target, write),
                    None => write(),
                }
            })
            .await;
            let problem = match written {
                Ok(Ok(())) => None,
                Ok(Err(error)) => Some(error.to_string()),
                Err(error) => Some(error.to_string()),
            };
            if let Some(problem) = problem {
                return Err(NotSetAside {
                    kept: None,
                    problem: format!(
                        "the changes of {what} could not be kept in `{}`, so the worktree stays \
                         as it is: {problem}",
                        path.display()
                    ),
                });
            }
            Some(path)
        };
        if let Err(error) = self
            .git(
                "put the worktree back at the task's checkpoint",
                move |git, worktree| git.rollback(worktree, &base),
            )
            .await
        {
            return Err(NotSetAside {
                kept,
                problem: error.reason(),
            });
        }
        Ok(kept)
    }
}
