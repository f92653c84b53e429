//! Step 2 of a story (and again after its tasks): catching up, a merge of the proven epic head
//! into the story branch with the epic side winning conflicting hunks, after committing the
//! story's uncommitted work.

use epic_git_ops::{MergeFavor, MergeOutcome};

use super::{Failure, Stop, Work};
use crate::event::Event;
use epic_process::offload::BoxError;

impl Work {
    /// Merges the proven epic head into the story branch (the epic side winning conflicting
    /// hunks), committing uncommitted work first. Whether anything was merged.
    ///
    /// Uncommitted work here is a killed run's, or the tasks' of this run: a task that failed
    /// left its worktree at its checkpoint and its rejected changes in a patch
    /// ([`StoryJob::rejected`](crate::task_loop::StoryJob::rejected)), so they are never
    /// committed as work in progress.
    ///
    /// The proven head, not the epic branch's tip: while a merge is being proven the tip is a
    /// merge that may yet be undone, and a story that caught up with it would carry the undone
    /// story's work into the epic branch later.
    pub(super) async fn catch_up(&mut self) -> Result<bool, Stop> {
        let worktree = self.worktree.clone();
        let proven = self.shared.proven().to_hex();
        self.base.clone_from(&proven);
        let up_to_date = self
            .git("compare with the epic branch", {
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
        let merged = self
            .git("catch up with the epic branch", move |git| {
                if git.status(&worktree, &[])?.is_dirty() {
                    git.commit_all(&worktree, &wip)?;
                }
                Ok::<_, BoxError>(git.merge(&worktree, &proven, &message, MergeFavor::Incoming)?)
            })
            .await?;
        match merged {
            MergeOutcome::Merged(commit) => {
                self.emit(Event::StoryCaughtUp {
                    story: self.id().to_owned(),
                    commit: commit.to_hex(),
                });
                Ok(true)
            }
            MergeOutcome::UpToDate => Ok(false),
            MergeOutcome::Conflict { paths } => Err(Failure::CatchUpConflict {
                epic_branch: self.shared.epic_branch.clone(),
                paths,
                worktree: self.worktree.clone(),
            }
            .into()),
        }
    }
}
