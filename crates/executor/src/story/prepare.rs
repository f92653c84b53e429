//! Step 1 of a story: its worktree and branch. The resume rules (a changed plan entry, or a
//! branch deleted outside epic, starts over; a merged story is done; a started or failed one
//! resumes on its branch; a new one gets a branch cut from the proven epic head), and what a run
//! that died left in the way: git's lock files, a worktree whose add never finished, a directory
//! without `.git`, an unfinished merge; and a worktree whose `.git` an agent pointed elsewhere.

use std::collections::BTreeSet;
use std::io;

use epic_state_store::{StoryStage, StoryState};

use super::slot;
use super::work::Work;
use crate::config::WorktreeMode;
use crate::failure::{Failure, Stop};
use epic_events::Event;
use epic_process::offload::{self, BoxError};

/// How [`Work::prepare`] found the story.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Prepared {
    /// A worktree to work in; `fresh` when it was just created (setup must run).
    Ready { fresh: bool },
    /// Merged already (a state written by a concurrent path; normally filtered before launch).
    Merged,
}

impl Work {
    /// The resume rules: a changed plan entry, or a branch deleted outside epic, starts over; a
    /// merged story is done; a started or failed one resumes on its branch; a new one gets a
    /// branch cut from the epic head.
    pub(super) async fn prepare(&mut self) -> Result<Prepared, Stop> {
        let hash = epic_story_plan::story_hash(&self.story);
        let path = self.state_path()?;
        let loaded = offload::blocking(move || epic_state_store::load::<StoryState>(&path)).await;
        let mut stored = match loaded {
            Ok(Ok(stored)) => stored,
            Ok(Err(error)) => return Err(Failure::StateUnreadable(error).into()),
            Err(_) => None,
        };
        let mut how = "fresh";
        let branch_gone = self.branch_gone(stored.as_ref(), &hash).await?;
        if let Some(old) = stored
            .as_ref()
            .filter(|old| old.hash != hash || branch_gone)
        {
            self.start_over(old, branch_gone).await?;
            stored = None;
            how = "restarted";
        }
        self.clear_stale_locks().await;
        let fresh = match stored {
            Some(old) if old.status == StoryStage::Merged => {
                self.has_state = true;
                return Ok(Prepared::Merged);
            }
            Some(old) => {
                how = "resumed";
                self.has_state = true;
                let mut fresh = false;
                // A slot the state still names holds nothing of the story's: the run's start
                // took every slot on the story's branch out of the rotation (`retire_slots`).
                if old.worktree != self.worktree
                    && old.worktree.join(".git").exists()
                    && !slot::is_slot(&self.shared.worktree_root, &old.worktree)
                {
                    let (from, to) = (old.worktree.clone(), self.worktree.clone());
                    self.admin(
                        "move the story's worktree",
                        vec![from.clone(), to.clone()],
                        move |git| git.move_worktree(&from, &to),
                    )
                    .await?;
                    self.note(format!("moved its worktree to {}", self.worktree.display()));
                }
                // Gone, or never finished: an add of it (a re-add) killed before its checkout
                // was complete would have the story commit the files not yet checked out as
                // deleted.
                if !self.worktree.join(".git").exists()
                    || epic_git_ops::add_interrupted(&self.worktree)
                {
                    if self.warm() {
                        self.remove_own_leftover().await?;
                        self.enter_slot(false).await?;
                    } else {
                        self.add_worktree().await?;
                    }
                    fresh = true;
                } else {
                    self.relink_worktree().await?;
                    self.abort_unfinished_merge().await?;
                }
                if old.worktree != self.worktree {
                    self.save_state(old.status).await?;
                }
                fresh
            }
            None => {
                if self.warm() {
                    self.enter_slot(true).await?;
                } else {
                    self.add_worktree().await?;
                }
                // Only now does the state name the worktree: a slot whose switch was killed is
                // named by no state, and the next story in it switches it again.
                self.save_state(StoryStage::Started).await?;
                true
            }
        };
        if fresh {
            self.seed().await;
        }
        self.emit(Event::StoryPrepared {
            story: self.id().to_owned(),
            branch: self.branch.clone(),
            worktree: self.worktree.display().to_string(),
            how: how.to_owned(),
        });
        Ok(Prepared::Ready { fresh })
    }

    /// Whether `stored`, a story to resume (its plan entry unchanged, `hash`, and not merged),
    /// lost its branch: deleted outside epic, its worktree's HEAD names nothing, so there is
    /// nothing to resume on.
    async fn branch_gone(&self, stored: Option<&StoryState>, hash: &str) -> Result<bool, Stop> {
        match stored {
            Some(old) if old.hash == hash && old.status != StoryStage::Merged => {
                let branch = old.branch.clone();
                Ok(!self
                    .git("look for the story branch", move |git| {
                        git.branch_exists(&branch)
                    })
                    .await?)
            }
            _ => Ok(false),
        }
    }

    /// Starts the story over: its old worktree and branch removed, its checkpoint deleted. For a
    /// changed plan entry, or a branch deleted outside epic (`branch_gone`).
    async fn start_over(&self, old: &StoryState, branch_gone: bool) -> Result<(), Stop> {
        if branch_gone {
            self.note(format!(
                "its branch `{}` is gone (deleted outside epic); starting over from the proven \
                 epic head",
                old.branch
            ));
        } else {
            self.note("plan entry changed since its branch was created; starting over");
        }
        for worktree in BTreeSet::from([old.worktree.clone(), self.worktree.clone()]) {
            let removed = self
                .admin(
                    "remove the old worktree",
                    vec![worktree.clone()],
                    move |git| git.remove_worktree(&worktree),
                )
                .await;
            if let Err(Stop::Failed(failure)) = removed {
                self.note(failure.reason());
            }
        }
        for branch in BTreeSet::from([old.branch.clone(), self.branch.clone()]) {
            self.git("delete the old story branch", move |git| {
                git.delete_branch(&branch)
            })
            .await?;
        }
        // The merge revisions go with the checkpoint: a story started over counts them from 1.
        for checkpoint in [
            self.shared.dir.story_plan(self.id()),
            self.shared.dir.story_revisions(self.id()),
        ] {
            let checkpoint = checkpoint.map_err(Failure::UnsafeId)?;
            let path = checkpoint.clone();
            let removed = self
                .shared
                .write(path, |path| epic_state_store::remove(path))
                .await;
            let source = match removed {
                Ok(Ok(_)) => None,
                Ok(Err(error)) => Some(error.into_io_error()),
                Err(error) => Some(io::Error::other(error)),
            };
            if let Some(source) = source {
                return Err(Failure::CheckpointNotRemoved {
                    path: checkpoint,
                    source,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Whether the story works in a slot worktree (`--worktrees warm`).
    fn warm(&self) -> bool {
        self.shared.config.worktrees == WorktreeMode::Warm
    }

    /// Copies the ignored files `.worktreeinclude` names from the main checkout into the new or
    /// switched worktree ([`Git::seed_worktree`](epic_git_ops::Git::seed_worktree)); a failure
    /// is a note, not the story's failure.
    async fn seed(&self) {
        let worktree = self.worktree.clone();
        let seeded = self
            .git("copy the files .worktreeinclude names", move |git| {
                git.seed_worktree(&worktree)
            })
            .await;
        match seeded {
            Ok(paths) if paths.is_empty() => {}
            Ok(paths) => self.emit(Event::WorktreeSeeded {
                story: self.id().to_owned(),
                paths,
            }),
            Err(Stop::Failed(failure)) => self.note(failure.reason()),
            Err(Stop::Cancelled) => {}
        }
    }

    /// Points the worktree's `.git` back at its own registration when something outside epic
    /// (an agent) made it name another worktree's, the epic's or a sibling's: every git command
    /// in it would act on that worktree, and the story would fail on every rerun.
    async fn relink_worktree(&self) -> Result<(), Stop> {
        let worktree = self.worktree.clone();
        let relinked = self
            .admin(
                "point the worktree's .git at its own registration",
                vec![worktree.clone()],
                move |git| git.relink_worktree(&worktree),
            )
            .await?;
        if relinked {
            self.note(
                "its worktree's `.git` named another worktree's administrative directory \
                 (rewritten outside epic); pointed it back at its own",
            );
        }
        Ok(())
    }

    /// Aborts the merge a killed run left in progress in the story's worktree (a catch-up
    /// killed half way), which every later merge there would refuse.
    async fn abort_unfinished_merge(&self) -> Result<(), Stop> {
        let worktree = self.worktree.clone();
        let aborted = self
            .git(
                "abort a merge a run that died left unfinished",
                move |git| git.abort_unfinished_merge(&worktree),
            )
            .await?;
        if aborted {
            self.note("aborted an unfinished merge left in its worktree by a run that died");
        }
        Ok(())
    }

    /// Removes the git lock files a killed run left in the story's worktree and branch
    /// ([`epic_git_ops::clear_stale_locks`]).
    pub(super) async fn clear_stale_locks(&self) {
        let (common, worktree, branch) = (
            self.shared.git.common_dir().to_path_buf(),
            self.worktree.clone(),
            self.branch.clone(),
        );
        let cleared =
            offload::blocking(move || epic_git_ops::clear_stale_locks(&common, &worktree, &branch))
                .await
                .unwrap_or_default();
        for path in cleared {
            self.note(format!(
                "removed {}, left by a git process of a run that died",
                path.display()
            ));
        }
    }

    /// Adds the story's worktree: on its branch if that exists, else on a new branch cut from
    /// the epic head. The run prunes stale worktree registrations once before any story starts;
    /// when the add fails (a worktree whose directory was deleted since is still registered, or
    /// an add killed half way left its path registered and locked, and git refuses the path or
    /// the branch), this drops the path's registration, prunes and tries once more.
    pub(super) async fn add_worktree(&self) -> Result<(), Stop> {
        // Whatever is where the worktree goes is what a run that died left: a `git worktree
        // add` killed half way (no `.git` yet), or one that finished just before the story's
        // state was first saved (then the story has no state, and no agent ever ran in it).
        if self.worktree.join(".git").exists() {
            let leftover = self.worktree.clone();
            self.admin(
                "remove a worktree left by a run that died",
                vec![leftover.clone()],
                move |git| git.remove_worktree(&leftover),
            )
            .await?;
        }
        let leftover = self.worktree.clone();
        let removed = offload::blocking(move || epic_git_ops::remove_leftover_dir(&leftover)).await;
        match removed {
            Ok(Ok(false)) => {}
            Ok(Ok(true)) => self.note(format!(
                "removed `{}`, a worktree left half made by a run that died",
                self.worktree.display()
            )),
            Ok(Err(source)) => {
                return Err(Failure::InTheWay {
                    worktree: self.worktree.clone(),
                    source,
                }
                .into());
            }
            Err(error) => {
                return Err(Failure::InTheWay {
                    worktree: self.worktree.clone(),
                    source: io::Error::other(error),
                }
                .into());
            }
        }
        let (worktree, branch, start) = (
            self.worktree.clone(),
            self.branch.clone(),
            self.shared.proven().to_hex(),
        );
        self.admin(
            "add the story's worktree",
            vec![worktree.clone()],
            move |git| {
                let add = || {
                    if git.branch_exists(&branch)? {
                        git.add_worktree(&worktree, &branch)?;
                    } else {
                        git.add_worktree_new_branch(&worktree, &branch, &start)?;
                    }
                    Ok::<(), BoxError>(())
                };
                if add().is_ok() {
                    return Ok(());
                }
                // What holds the path or the branch is a registration whose directory is gone: one
                // deleted since, or an add killed half way, whose lock keeps it from a plain prune
                // (the prune drops those a killed add left unreadable, which fail every add).
                git.prune_worktrees()?;
                // Best effort: when it was not that, the add's own error says what is.
                git.remove_worktree(&worktree).ok();
                add()
            },
        )
        .await
    }
}
