//! A batch's candidate made: the epic branch checked (back at the proven head, its worktree
//! clean), each story branch checked unmoved since its checks, and the stories merged in turn
//! onto the proven head (in the object database where they changed separate files, git's merge
//! in the epic worktree where they did not); the epic worktree moved to a candidate.

use epic_git_ops::{CommitId, MergeFavor, MergeOutcome};
use epic_process::offload::{self, BoxError, GitFailed};

use super::batch::{Batch, Entry, copy_git_failed};
use super::journal::names;
use crate::failure::{Failure, Stop};
use crate::queue::Request;
use epic_events::Event;

impl Batch<'_> {
    /// Puts the epic branch back at the proven head if something other than epic moved it,
    /// and refuses a dirty epic worktree (failing every request); the requests, unless refused.
    pub(super) async fn check_epic(&self, requests: Vec<Request>) -> Option<Vec<Request>> {
        let shared = self.shared;
        let restored = match shared.restore_epic_head().await {
            Ok(restored) => restored,
            Err(error) => {
                Self::fail_all(requests, |_| Failure::Git(copy_git_failed(&error)));
                return None;
            }
        };
        if let Some(moved_to) = restored {
            let ids: Vec<String> = requests.iter().map(|r| r.story.id.clone()).collect();
            let message = shared.note_restored_epic_head(
                moved_to,
                &format!("found before merging {}", names(&ids)),
            );
            for request in &requests {
                self.emit(Event::Note {
                    story: request.story.id.clone(),
                    message: message.clone(),
                });
            }
        }
        let epic = shared.epic_worktree.clone();
        let dirty = offload::git(&shared.git, "read the status of the epic worktree", {
            let epic = epic.clone();
            move |git| git.status(&epic, &[])
        })
        .await;
        match dirty {
            Err(error) => {
                Self::fail_all(requests, |_| Failure::Git(copy_git_failed(&error)));
                None
            }
            Ok(dirty) if dirty.is_dirty() => {
                Self::fail_all(requests, |request| Failure::EpicWorktreeDirty {
                    worktree: epic.clone(),
                    paths: dirty.paths.clone(),
                    story: request.story.id.clone(),
                });
                None
            }
            Ok(_) => Some(requests),
        }
    }

    /// Fails unless the story branch is still at the commit its checks passed on: whatever
    /// moved it since (a commit made during the judge turn, a process an agent left running)
    /// was never checked.
    pub(super) async fn check_branch_unmoved(&self, request: &Request) -> Result<(), Stop> {
        let epic = self.shared.epic_worktree.clone();
        let branch = format!("refs/heads/{}", request.branch);
        let found = offload::git(&self.shared.git, "read the story branch", move |git| {
            git.rev_parse(&epic, &branch)
        })
        .await?;
        if found == request.checked {
            return Ok(());
        }
        Err(Failure::BranchMovedAfterChecks {
            branch: request.branch.clone(),
            checked: request.checked,
            found,
        }
        .into())
    }

    /// Merges `requests` in turn onto the proven head: the chain of those that merged; one that
    /// conflicts (or whose merge git refused) fails alone, the chain as it was before it. The
    /// merges are made in the object database where that is the whole of them (the stories
    /// changed separate files, the common case): the epic worktree stays at the proven head and
    /// is moved once, to the chain's end, before the gates run. A merge of stories that touched
    /// the same files is git's, in the epic worktree, brought to the chain so far first.
    pub(super) async fn build(&mut self, requests: Vec<Request>) -> Vec<Entry> {
        let shared = self.shared;
        let epic = shared.epic_worktree.clone();
        let mut head = self.base;
        let back = format!("{}: back to the proven head", shared.dir.epic_id());
        if let Err(error) = self.reset_to(self.base, back).await {
            Self::fail_all(requests, |_| Failure::Git(copy_git_failed(&error)));
            return Vec::new();
        }
        let mut chain = Vec::with_capacity(requests.len());
        for request in requests {
            self.emit(Event::MergeStarted {
                story: request.story.id.clone(),
                checkpoint: head.to_hex(),
            });
            let message = format!("{}: merge story {}", shared.dir.epic_id(), request.story.id);
            let merged = offload::git(&shared.git, "merge the story into the epic branch", {
                let (epic, checked, message) = (epic.clone(), request.checked, message.clone());
                move |git| git.merge_objects(&epic, &head, &checked, &message)
            })
            .await;
            let merged = match merged {
                Ok(Some(outcome)) => Ok(outcome),
                Ok(None) => self.merge_in_worktree(head, &request, message).await,
                Err(error) => Err(error),
            };
            let commit = match merged {
                Ok(MergeOutcome::Merged(commit)) => Some(commit),
                Ok(MergeOutcome::UpToDate) => None,
                Ok(MergeOutcome::Conflict { paths }) => {
                    self.emit(Event::MergeConflicted {
                        story: request.story.id.clone(),
                        paths: paths.clone(),
                    });
                    let failure = Failure::MergeConflict {
                        branch: request.branch.clone(),
                        epic_branch: shared.epic_branch.clone(),
                        paths,
                    };
                    self.answer_failed(request, failure.into());
                    continue;
                }
                Err(error) => {
                    self.answer_failed(request, error.into());
                    continue;
                }
            };
            let tip = commit.unwrap_or(head);
            chain.push(Entry {
                request,
                parent: head,
                tip,
                commit,
            });
            head = tip;
        }
        chain
    }

    /// Merges `request`'s story onto `head` with git in the epic worktree, brought to `head`
    /// first. A refused merge leaves the epic worktree as it was; made sure of.
    pub(super) async fn merge_in_worktree(
        &self,
        head: CommitId,
        request: &Request,
        message: String,
    ) -> Result<MergeOutcome, GitFailed> {
        let shared = self.shared;
        let so_far = format!(
            "{}: the merges before story {}",
            shared.dir.epic_id(),
            request.story.id
        );
        self.reset_to(head, so_far).await?;
        let merged = offload::git(&shared.git, "merge the story into the epic branch", {
            let (epic, commit) = (shared.epic_worktree.clone(), request.checked.to_hex());
            move |git| git.merge(&epic, &commit, &message, MergeFavor::None)
        })
        .await;
        if merged.is_err() {
            let story = request.story.id.clone();
            self.rollback(head, &[story], "the merge failed").await;
        }
        merged
    }

    /// Moves the epic worktree (and branch) to `to`, unless it is there and clean: a clean one
    /// by rewriting only the files that differ ([`Git::advance_worktree`], the reflog saying
    /// `reason`), any other (or one whose move failed) by a hard reset.
    ///
    /// [`Git::advance_worktree`]: epic_git_ops::Git::advance_worktree
    pub(super) async fn reset_to(&self, to: CommitId, reason: String) -> Result<(), GitFailed> {
        let epic = self.shared.epic_worktree.clone();
        offload::git(
            &self.shared.git,
            "move the epic branch to a candidate",
            move |git| {
                let head = git.checkpoint(&epic).map_err(BoxError::from)?;
                let clean = git
                    .status(&epic, &[])
                    .is_ok_and(|status| !status.is_dirty());
                if clean {
                    if head == to {
                        return Ok::<_, BoxError>(());
                    }
                    // Refused or failed, the reset below puts everything in its place.
                    if git.advance_worktree(&epic, &head, &to, &reason).is_ok() {
                        return Ok(());
                    }
                }
                git.rollback(&epic, &to).map_err(BoxError::from)
            },
        )
        .await
    }
}
