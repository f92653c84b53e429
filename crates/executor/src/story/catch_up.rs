//! Step 2 of a story (and again after its tasks): catching up, a merge of the proven epic head
//! into the story branch with the epic side winning conflicting hunks, on a clean worktree only
//! (uncommitted changes are a stopped turn's, which only a coder turn may confirm).

use epic_git_ops::{MergeFavor, MergeOutcome};

use super::work::Work;
use crate::failure::{Failure, Stop};
use epic_events::Event;

impl Work {
    /// Merges the proven epic head into the story branch (the epic side winning conflicting
    /// hunks). Whether anything was merged.
    ///
    /// Never over uncommitted changes, and never by committing them: they can only be a killed
    /// run's turn's (a task commits its work, a failed task puts its worktree back at its
    /// checkpoint and keeps its rejected changes in a patch, [`StoryJob::rejected`], and the
    /// task loop sets aside what no coder turn confirmed before the catch-up after the tasks).
    /// Only a coder turn told of them may confirm them: committed here as work in progress, they
    /// would sit on the story branch below the resumed task's checkpoint, where a retry that
    /// fails can no longer take them back, and merge unconfirmed. So with changes the catch-up
    /// waits, with a note: the resumed task takes them up (its first turn is told what they
    /// are), and the catch-up after the tasks brings the epic head in.
    ///
    /// The proven head, not the epic branch's tip: while a merge is being proven the tip is a
    /// merge that may yet be undone, and a story that caught up with it would carry the undone
    /// story's work into the epic branch later.
    ///
    /// [`StoryJob::rejected`]: crate::task_loop::StoryJob::rejected
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
        let dirty = self
            .git("read the worktree's status", {
                let worktree = worktree.clone();
                move |git| git.status(&worktree, &[])
            })
            .await?
            .is_dirty();
        if dirty {
            self.note(format!(
                "the catch-up with {} waits until after the tasks: the worktree holds \
                 uncommitted changes a stopped turn left, which no coder turn has confirmed yet",
                self.shared.epic_branch
            ));
            return Ok(false);
        }
        let message = format!("{}: catch up with {}", self.id(), self.shared.epic_branch);
        let merged = self
            .git("catch up with the epic branch", move |git| {
                git.merge(&worktree, &proven, &message, MergeFavor::Incoming)
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
