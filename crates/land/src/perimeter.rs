//! The lander's perimeter. A lander turn is as untrusted as a coder's: a turn on a story's
//! conflicts may change those conflicted paths, the final turn the conflicted paths no story
//! owns, a red-gate round the paths the epic's stories own (the gates' own scripts and
//! configuration only where a story owns them). The epic worktree's whole state is taken before
//! the turn (`worktree_state`); after it, every file it changed outside its reach (modified,
//! added, deleted, its mode changed) is put back as it was before the turn, and so is a commit
//! or branch move it made itself, before the gates run: what lands is what the turn was allowed
//! to do. During the conflict turns the merge stays open: the put-back begins it again
//! (`restart_merge`), so `MERGE_HEAD` and the index stages of the paths a later turn must still
//! resolve are git's own, and only then are the files set back, the resolutions made so far and
//! the turn's own within its reach included.
//!
//! Which paths are inside is `epic_perimeter::check`'s answer for a story that owns the reach:
//! the path semantics of `epic_story_plan::path`, as a story's perimeter has them.

use epic_git_ops::{CommitId, WorktreeState};
use epic_report::PutBack;
use epic_story_plan::Story;

use crate::error::Halt;
use crate::lander::Lander;
use epic_process::offload::BoxError;

/// What one lander turn may change.
pub(super) struct Reach {
    /// The paths (prefixes, as a story's owned paths) it may change.
    pub(super) paths: Vec<String>,
    /// The commit being merged while it runs (a conflict turn), kept open across the put-back.
    pub(super) merging: Option<CommitId>,
    /// The story whose conflicts it resolves (none: the final turn, or a red-gate round).
    pub(super) story: Option<String>,
    /// The red-gate round it fixes (none: a conflict turn).
    pub(super) round: Option<u32>,
}

impl Lander {
    /// The paths a red-gate round may change: every story's owned paths, in plan order.
    pub(super) fn owned_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for story in &self.plan.stories {
            for path in &story.owned {
                if !paths.contains(path) {
                    paths.push(path.clone());
                }
            }
        }
        paths
    }

    /// The whole state of the epic worktree, taken before a lander turn.
    pub(super) async fn before_turn(&self) -> Result<WorktreeState, Halt> {
        let epic = self.epic_worktree.clone();
        Ok(self
            .git_op("read the epic worktree before a lander turn", move |git| {
                git.worktree_state(&epic)
            })
            .await?)
    }

    /// Puts back what the turn that ran since `before` changed outside `reach`: what was put
    /// back, or `None` when the turn stayed inside.
    pub(super) async fn hold(
        &self,
        before: WorktreeState,
        reach: &Reach,
    ) -> Result<Option<PutBack>, Halt> {
        let (epic, from) = (self.epic_worktree.clone(), before.tree.clone());
        let (now, changed, merging) = self
            .git_op("read what the lander turn changed", move |git| {
                let now = git.worktree_state(&epic)?;
                let changed = git.tree_changes(&epic, &from, &now.tree)?;
                let merging = git.merging(&epic)?;
                Ok::<_, BoxError>((now, changed, merging))
            })
            .await?;
        let stray =
            epic_perimeter::check(&changed, &Story::new("", "", reach.paths.clone())).outside;
        let moved = now.head != before.head || now.branch != before.branch;
        let merge_lost = reach.merging.is_some() && merging != reach.merging;
        if stray.is_empty() && !moved && !merge_lost {
            return Ok(None);
        }
        let keep: Vec<String> = changed
            .into_iter()
            .filter(|path| !stray.contains(path))
            .collect();
        let (epic, theirs, tree) = (self.epic_worktree.clone(), reach.merging, now.tree);
        self.git_op(
            "put back what a lander turn changed outside its perimeter",
            move |git| {
                match theirs {
                    Some(theirs) => git.restart_merge(&epic, &before, &theirs)?,
                    None => {
                        git.put_back(&epic, &before)?;
                    }
                }
                let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
                git.files_from(&epic, &tree, &keep)?;
                Ok::<_, BoxError>(())
            },
        )
        .await?;
        if stray.is_empty() && !moved {
            // Only the merge was left (`git merge --abort` on its own paths): begun again,
            // nothing of the turn's was outside.
            self.note("a lander turn ended the merge in progress; epic began it again");
            return Ok(None);
        }
        let put = PutBack {
            story: reach.story.clone(),
            round: reach.round,
            paths: stray,
            moved_head: moved,
        };
        let mut what: Vec<String> = put.paths.clone();
        if put.moved_head {
            what.push("its own commits or branch move".to_owned());
        }
        self.note(format!(
            "{} changed what is outside its perimeter; put back: {}",
            put.turn(),
            what.join(", ")
        ));
        Ok(Some(put))
    }
}

#[cfg(test)]
mod tests {
    use epic_story_plan::Story;

    /// The reach is a story's owned paths to `epic_perimeter`: a conflicted file is a prefix of
    /// itself only, and the gate script at the root is outside every story.
    #[test]
    fn the_reach_is_judged_as_owned_paths() {
        let reach = Story::new("", "", ["a/a.txt"]);
        let check =
            epic_perimeter::check(["a/a.txt", "a/a.txt.orig", "check.sh", "b/b.txt"], &reach);
        assert_eq!(check.outside, ["a/a.txt.orig", "check.sh", "b/b.txt"]);
        let rounds = Story::new("", "", ["a", "b"]);
        let check = epic_perimeter::check(["a/x", "b/y/z", "check.sh", "ab"], &rounds);
        assert_eq!(check.outside, ["check.sh", "ab"]);
    }
}
