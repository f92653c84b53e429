//! Warm worktrees (`--worktrees warm`): the slot worktrees `<root>/_slot-<i>`, one per
//! concurrency slot `i` (the story's `EPIC_SLOT`), that outlive the stories run in them.
//!
//! A story starts in its slot switched to its branch at the proven epic head
//! ([`Git::switch_worktree`]): only the files that differ
//! are rewritten and ignored files (build caches, dependencies) stay; the switch ends with the
//! proof that the slot is clean (no tracked change, no untracked file that is not ignored, no
//! merge or rebase in progress, the head on the story's branch at the expected commit). The
//! story's state names the slot only once the switch is proven, so a switch killed at any step
//! leaves a slot no state names: the next story in it switches it again, with `--force`.
//!
//! A slot that holds a story's unmerged work is taken out of the rotation: moved to the story's
//! own place, `<root>/<story>`, where a fresh worktree would be (a failed or interrupted story,
//! at its end, and at the start of a run what a killed run left, [`retire_slots`]), and so is a
//! merged story's slot with `--keep-worktrees`. The next story of that concurrency slot gets a
//! new slot worktree in its place. A resumed story works where its state says, as with fresh
//! worktrees; one whose worktree is gone takes its slot, switched to its branch's tip.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::Git;
use epic_state_store::{EpicDir, StoryStage, StoryState};

use super::end::Ending;
use super::work::Work;
use crate::failure::Stop;
use epic_events::{Event, EventSink};
use epic_process::offload::{self, BoxError};

/// How a slot worktree's directory name starts; story ids never start with `_`.
pub(crate) const SLOT_PREFIX: &str = "_slot-";

/// The slot worktree of concurrency slot `slot` under the epic's worktree `root`.
pub(crate) fn slot_path(root: &Path, slot: usize) -> PathBuf {
    root.join(format!("{SLOT_PREFIX}{slot}"))
}

/// Whether `path` is a slot worktree under `root`.
pub(crate) fn is_slot(root: &Path, path: &Path) -> bool {
    path.parent() == Some(root)
        && path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| {
                name.strip_prefix(SLOT_PREFIX).is_some_and(|index| {
                    !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit())
                })
            })
}

impl Work {
    /// Puts the story in its slot worktree: switched to its branch, reset to the proven epic
    /// head when `reset` (a new story), else at the branch's tip (a resumed story whose worktree
    /// is gone). A slot that is missing, or whose add never finished, is added afresh; one that
    /// cannot be switched is removed and added afresh. Switches of different slots run side by
    /// side (each under the switch lock's shared side); freeing a branch a killed run left
    /// checked out in another slot, or taking a slot out of the rotation, takes it whole.
    pub(super) async fn enter_slot(&mut self, reset: bool) -> Result<(), Stop> {
        let root = self.shared.worktree_root.clone();
        let slot = slot_path(&root, self.slot);
        if reset {
            self.remove_own_leftover().await?;
        }
        self.free_branch(&slot).await?;
        // Only this story switches a worktree to its branch: once freed, it stays free.
        let switching = Arc::clone(&self.shared.preparing.switching);
        let _shared = switching.read().await;
        self.worktree.clone_from(&slot);
        let usable = slot.join(".git").exists() && !epic_git_ops::add_interrupted(&slot);
        if !usable {
            return self.add_worktree().await;
        }
        self.clear_stale_locks().await;
        let (path, branch) = (slot.clone(), self.branch.clone());
        let start = reset.then(|| self.shared.proven());
        let switched = async {
            // An agent of the slot's last story may have pointed its `.git` at another
            // worktree: a forced checkout there would act on that one.
            let relink = path.clone();
            self.admin(
                "point the slot worktree's `.git` at its own registration",
                vec![slot.clone()],
                move |git| git.relink_worktree(&relink),
            )
            .await?;
            let guard = Arc::clone(&self.shared.guard);
            self.git(
                "switch the slot worktree to the story's branch",
                move |git| {
                    guard.epic_switch(&path, || {
                        git.switch_worktree(&path, &branch, start.as_ref())
                    })
                },
            )
            .await
        }
        .await;
        match switched {
            Ok(at) => {
                self.emit(Event::SlotSwitched {
                    story: self.id().to_owned(),
                    slot: self.slot,
                    worktree: slot.display().to_string(),
                    commit: at.to_hex(),
                });
                Ok(())
            }
            Err(Stop::Cancelled) => Err(Stop::Cancelled),
            Err(Stop::Failed(failure)) => {
                self.note(format!(
                    "its slot worktree could not be switched ({}); adding it afresh",
                    failure.reason()
                ));
                self.add_worktree().await
            }
        }
    }

    /// Removes what a run that died left at the story's own place `<root>/<story>` (a fresh
    /// worktree added just before the story's state was first saved): a new story has nothing
    /// there, and its branch must be free for the slot.
    pub(super) async fn remove_own_leftover(&self) -> Result<(), Stop> {
        let own = self.shared.worktree_root.join(self.id());
        if own.join(".git").exists() {
            let leftover = own.clone();
            self.admin(
                "remove a worktree left by a run that died",
                vec![leftover.clone()],
                move |git| git.remove_worktree(&leftover),
            )
            .await?;
        }
        let leftover = own.clone();
        let removed = offload::blocking(move || epic_git_ops::remove_leftover_dir(&leftover)).await;
        if matches!(removed, Ok(Ok(true))) {
            self.note(format!(
                "removed `{}`, a worktree left half made by a run that died",
                own.display()
            ));
        }
        Ok(())
    }

    /// Detaches the story's branch from any other slot worktree that has it checked out: a
    /// switch killed after its checkout, before the story's state named the slot. Detaching takes
    /// the switch lock whole, so no other story is switching that slot meanwhile. One git
    /// process, only when the branch exists already.
    async fn free_branch(&self, slot: &Path) -> Result<(), Stop> {
        let branch = self.branch.clone();
        let exists = self
            .git("look for the story branch", move |git| {
                git.branch_exists(&branch)
            })
            .await?;
        if !exists {
            return Ok(());
        }
        if self.branch_holders(slot).await?.is_empty() {
            return Ok(());
        }
        // Listed again under the whole lock: a slot that held the branch may have been switched
        // to its own story's since, and must not be detached under it.
        let switching = Arc::clone(&self.shared.preparing.switching);
        let _whole = switching.write().await;
        let holders = self.branch_holders(slot).await?;
        for holder in holders {
            let path = holder.clone();
            self.admin(
                "free the story branch from another slot",
                vec![holder.clone()],
                move |git| git.detach_worktree(&path),
            )
            .await?;
            self.note(format!(
                "detached its branch from `{}`, where a run that died had switched it",
                holder.display()
            ));
        }
        Ok(())
    }

    /// The slot worktrees other than `slot` that have the story's branch checked out.
    async fn branch_holders(&self, slot: &Path) -> Result<Vec<PathBuf>, Stop> {
        let branch = self.branch.clone();
        let root = self.shared.worktree_root.clone();
        let slot = slot.to_path_buf();
        Ok(self
            .git("list the worktrees", move |git| git.worktrees())
            .await?
            .into_iter()
            .filter(|info| info.branch.as_deref() == Some(branch.as_str()))
            .map(|info| info.path)
            .filter(|path| is_slot(&root, path) && *path != slot)
            .collect())
    }

    /// After the story: its slot taken out of the rotation when it holds work to keep (a story
    /// that failed or was cancelled with its state saved, or merged with `--keep-worktrees`),
    /// moved to `<root>/<story>` with its state saying so. Whether the slot's worktree is one a
    /// merged story leaves for removal: never (a slot stays for the next story).
    pub(super) async fn leave_slot(&mut self, ending: &Ending) {
        let root = self.shared.worktree_root.clone();
        if !is_slot(&root, &self.worktree) || !self.has_state {
            return;
        }
        let keep = match ending {
            Ending::Merged { .. } => self.shared.config.keep_worktrees && self.merged,
            Ending::Failed(_) | Ending::Cancelled | Ending::Waiting { .. } => true,
        };
        if !keep {
            return;
        }
        let switching = Arc::clone(&self.shared.preparing.switching);
        let _whole = switching.write().await;
        let (from, to) = (self.worktree.clone(), root.join(self.id()));
        if to.exists() {
            self.note(format!(
                "`{}` is in the way: its slot worktree `{}` stays",
                to.display(),
                from.display()
            ));
            return;
        }
        let moved = {
            let (from, to) = (from.clone(), to.clone());
            let guard = Arc::clone(&self.shared.guard);
            offload::git(
                &self.shared.git,
                "take the slot worktree out of the rotation",
                move |git| {
                    guard.epic_worktrees(&[from.as_path(), to.as_path()], || {
                        git.move_worktree(&from, &to)
                    })
                },
            )
            .await
        };
        if let Err(error) = moved {
            self.note(crate::failure::git_reason(&error));
            return;
        }
        self.worktree.clone_from(&to);
        let Ok(path) = self.state_path() else {
            return;
        };
        let worktree = to.clone();
        self.shared
            .write(path, move |path| {
                if let Ok(Some(mut state)) = epic_state_store::load::<StoryState>(path) {
                    state.worktree = worktree;
                    epic_state_store::save(path, &state).ok();
                }
            })
            .await
            .ok();
        self.emit(Event::SlotRetired {
            story: self.id().to_owned(),
            slot: from.display().to_string(),
            worktree: to.display().to_string(),
        });
    }
}

/// At the start of a run, before any story: every slot worktree that a story's unmerged state
/// names, and that is on that story's branch, is moved to `<root>/<story>`, out of the rotation
/// (a run killed while the story worked in it), with the state saying so. A slot on another
/// branch holds nothing of the story's (its switch never finished) and stays in the rotation.
pub(crate) async fn retire_slots(
    git: &Arc<dyn Git>,
    dir: &EpicDir,
    root: &Path,
    events: &EventSink,
) {
    let (states_dir, root_path) = (dir.clone(), root.to_path_buf());
    let states = offload::blocking(move || {
        let mut found = Vec::new();
        for id in states_dir.story_ids().unwrap_or_default() {
            let Ok(path) = states_dir.story_state(&id) else {
                continue;
            };
            if let Ok(Some(state)) = epic_state_store::load::<StoryState>(&path)
                && state.status != StoryStage::Merged
                && is_slot(&root_path, &state.worktree)
                && state.worktree.join(".git").exists()
            {
                found.push((path, state));
            }
        }
        found
    })
    .await
    .unwrap_or_default();
    for (path, mut state) in states {
        let to = root.join(&state.id);
        let (from, to_path, branch) = (state.worktree.clone(), to.clone(), state.branch.clone());
        let moved = offload::git(
            git,
            "take a slot worktree out of the rotation",
            move |git| {
                if to_path.exists()
                    || git.current_branch(&from)?.as_deref() != Some(branch.as_str())
                {
                    return Ok::<_, BoxError>(false);
                }
                git.move_worktree(&from, &to_path)?;
                Ok(true)
            },
        )
        .await;
        match moved {
            Ok(false) => {}
            Ok(true) => {
                let slot = std::mem::replace(&mut state.worktree, to.clone());
                let saved = offload::blocking(move || epic_state_store::save(&path, &state)).await;
                if !matches!(saved, Ok(Ok(()))) {
                    // The next preparation finds the worktree at `<root>/<story>` all the same.
                    events(Event::RunNote {
                        message: format!(
                            "could not record that `{}` moved to `{}`",
                            slot.display(),
                            to.display()
                        ),
                    });
                }
                events(Event::RunNote {
                    message: format!(
                        "the slot worktree `{}` holds an unfinished story's work: moved to `{}`, out \
                         of the rotation",
                        slot.display(),
                        to.display()
                    ),
                });
            }
            Err(error) => events(Event::RunNote {
                message: format!("{error}: {}", epic_process::chain(&error)),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{is_slot, slot_path};

    #[test]
    fn slots_are_named_by_their_index_under_the_root() {
        let root = Path::new("/r.worktrees/e");
        assert_eq!(slot_path(root, 3), Path::new("/r.worktrees/e/_slot-3"));
        assert!(is_slot(root, &slot_path(root, 0)));
        assert!(!is_slot(root, &root.join("cart-api")));
        assert!(!is_slot(root, &root.join("_epic")));
        assert!(!is_slot(root, &root.join("_slot-")));
        assert!(!is_slot(root, Path::new("/elsewhere/_slot-1")));
    }
}
