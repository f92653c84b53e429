//! [`Git`] for [`GixGit`]: each operation handed to the module of its concern (`branch`,
//! `worktree`, `status`, `commit`, `diff`, `merge`, `land`, …).

use std::path::{Path, PathBuf};

use crate::error::{
    AdvanceError, BranchError, CommitError, ConfigError, DiffError, GitCommandError, LandGitError,
    MergeError, NoteError, RestoreError, RevError, RollbackError, StatusError, WorktreeError,
};
use crate::git::Git;
use crate::repo::GixGit;
use crate::types::{
    BranchDiff, CommitId, CommitOutcome, FileChange, LineCommit, MergeFavor, MergeOutcome, Packed,
    Removal, Restored, Status, Symlink, TreeFile, Uncommitted, WorktreeInfo, WorktreeState,
};
use crate::{
    branch, commit, diff, land, links, maintain, merge, notes, reset, rev, status, tree_file,
    worktree,
};

impl Git for GixGit {
    fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    fn main_worktree(&self) -> Option<&Path> {
        self.main_worktree.as_deref()
    }

    fn worktree_root(&self, dir: &Path) -> Result<PathBuf, RevError> {
        rev::worktree_root(self, dir)
    }

    fn rev_parse(&self, worktree: &Path, rev: &str) -> Result<CommitId, RevError> {
        rev::rev_parse(self, worktree, rev)
    }

    fn is_ancestor(
        &self,
        worktree: &Path,
        ancestor: &str,
        descendant: &str,
    ) -> Result<bool, RevError> {
        rev::is_ancestor(self, worktree, ancestor, descendant)
    }

    fn on_first_parent_line(
        &self,
        worktree: &Path,
        commit: &CommitId,
        tip: &str,
    ) -> Result<bool, RevError> {
        rev::on_first_parent_line(self, worktree, commit, tip)
    }

    fn branch_exists(&self, name: &str) -> Result<bool, BranchError> {
        branch::exists(self, name)
    }

    fn branches_under(&self, directory: &str) -> Result<Vec<String>, BranchError> {
        branch::under(self, directory)
    }

    fn create_branch(&self, name: &str, at: &CommitId) -> Result<(), BranchError> {
        branch::create(self, name, at)
    }

    fn delete_branch(&self, name: &str) -> Result<(), BranchError> {
        branch::delete(self, name)
    }

    fn current_branch(&self, worktree: &Path) -> Result<Option<String>, RevError> {
        rev::current_branch(self, worktree)
    }

    fn add_worktree_new_branch(
        &self,
        path: &Path,
        branch: &str,
        start: &str,
    ) -> Result<(), WorktreeError> {
        worktree::add_new_branch(self, path, branch, start)
    }

    fn add_worktree(&self, path: &Path, branch: &str) -> Result<(), WorktreeError> {
        worktree::add_existing(self, path, branch)
    }

    fn worktrees(&self) -> Result<Vec<WorktreeInfo>, WorktreeError> {
        worktree::list(self)
    }

    fn remove_worktree(&self, path: &Path) -> Result<Removal, WorktreeError> {
        worktree::remove(self, path)
    }

    fn move_worktree(&self, from: &Path, to: &Path) -> Result<(), WorktreeError> {
        worktree::move_to(self, from, to)
    }

    fn prune_worktrees(&self) -> Result<(), WorktreeError> {
        worktree::prune(self)
    }

    fn switch_worktree(
        &self,
        path: &Path,
        branch: &str,
        start: Option<&CommitId>,
    ) -> Result<CommitId, WorktreeError> {
        worktree::switch(self, path, branch, start)
    }

    fn detach_worktree(&self, path: &Path) -> Result<(), WorktreeError> {
        worktree::detach(self, path)
    }

    fn seed_worktree(&self, path: &Path) -> Result<Vec<String>, WorktreeError> {
        crate::seed::seed(self, path)
    }

    fn relink_worktree(&self, path: &Path) -> Result<bool, WorktreeError> {
        worktree::relink(self, path)
    }

    fn status(&self, worktree: &Path, exclude: &[&str]) -> Result<Status, StatusError> {
        status::status(self, worktree, exclude)
    }

    fn uncommitted(&self, worktree: &Path) -> Result<Vec<Uncommitted>, StatusError> {
        status::uncommitted(self, worktree)
    }

    fn untracked_files(&self, worktree: &Path) -> Result<Vec<String>, StatusError> {
        status::untracked_files(self, worktree)
    }

    fn commit_all(&self, worktree: &Path, message: &str) -> Result<CommitOutcome, CommitError> {
        commit::commit_all(self, worktree, message)
    }

    fn diff_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
    ) -> Result<BranchDiff, DiffError> {
        diff::diff_vs_base(self, worktree, base, head)
    }

    fn changed_paths_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
    ) -> Result<Vec<String>, DiffError> {
        diff::changed_paths(self, worktree, base, head).map(|(_, _, paths)| paths)
    }

    fn file_changes_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
        keep: &dyn Fn(&str) -> bool,
        hold: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<FileChange>, DiffError> {
        diff::file_changes(self, worktree, (base, head), keep, hold)
    }

    fn changed_paths_and_links_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
    ) -> Result<(Vec<String>, Vec<Symlink>), DiffError> {
        links::changed(self, worktree, base, head)
    }

    fn symlinks_along(
        &self,
        worktree: &Path,
        rev: &str,
        paths: &[&str],
    ) -> Result<Vec<Symlink>, RevError> {
        links::along(self, worktree, rev, paths)
    }

    fn symlinks_in_worktree(
        &self,
        worktree: &Path,
        paths: &[&str],
    ) -> Result<Vec<Symlink>, StatusError> {
        links::in_worktree(worktree, paths)
    }

    fn tree_file(&self, worktree: &Path, rev: &str, path: &str) -> Result<TreeFile, RevError> {
        tree_file::tree_file(self, worktree, rev, path)
    }

    fn merge(
        &self,
        worktree: &Path,
        branch: &str,
        message: &str,
        favor: MergeFavor,
    ) -> Result<MergeOutcome, MergeError> {
        merge::merge(self, worktree, branch, message, favor)
    }

    fn merge_objects(
        &self,
        worktree: &Path,
        ours: &CommitId,
        theirs: &CommitId,
        message: &str,
    ) -> Result<Option<MergeOutcome>, MergeError> {
        merge::merge_objects(self, worktree, ours.0, theirs.0, message)
    }

    fn advance_worktree(
        &self,
        worktree: &Path,
        from: &CommitId,
        to: &CommitId,
        reason: &str,
    ) -> Result<(), AdvanceError> {
        merge::advance_worktree(self, worktree, from.0, to.0, reason)
    }

    fn abort_unfinished_merge(&self, worktree: &Path) -> Result<bool, MergeError> {
        merge::abort_unfinished(self, worktree)
    }

    fn maintain(&self) -> Result<Option<Packed>, GitCommandError> {
        maintain::maintain(self)
    }

    fn checkpoint(&self, worktree: &Path) -> Result<CommitId, RevError> {
        rev::rev_parse(self, worktree, "HEAD")
    }

    fn rollback(&self, worktree: &Path, to: &CommitId) -> Result<(), RollbackError> {
        reset::rollback(self, worktree, to)
    }

    fn worktree_patch(&self, worktree: &Path, base: &CommitId) -> Result<Vec<u8>, DiffError> {
        reset::worktree_patch(self, worktree, base)
    }

    fn worktree_state(&self, worktree: &Path) -> Result<WorktreeState, DiffError> {
        reset::worktree_state(self, worktree)
    }

    fn put_back(
        &self,
        worktree: &Path,
        state: &WorktreeState,
    ) -> Result<Option<Vec<String>>, RollbackError> {
        reset::put_back(self, worktree, state)
    }

    fn restore_paths(
        &self,
        worktree: &Path,
        source: &str,
        paths: &[&str],
    ) -> Result<Restored, RestoreError> {
        reset::restore_paths(self, worktree, source, paths)
    }

    fn write_notes(
        &self,
        worktree: &Path,
        notes_ref: &str,
        notes: &[(CommitId, String)],
    ) -> Result<(), NoteError> {
        notes::write_many(self, worktree, notes_ref, notes)
    }

    fn write_note(
        &self,
        worktree: &Path,
        notes_ref: &str,
        commit: &CommitId,
        text: &str,
    ) -> Result<(), NoteError> {
        notes::write(self, worktree, notes_ref, commit, text)
    }

    fn notes(
        &self,
        worktree: &Path,
        notes_ref: &str,
    ) -> Result<std::collections::BTreeMap<CommitId, String>, NoteError> {
        notes::read_all(self, worktree, notes_ref)
    }

    fn first_parent_line(
        &self,
        worktree: &Path,
        base: Option<&CommitId>,
        tip: &str,
    ) -> Result<(Vec<LineCommit>, bool), RevError> {
        notes::first_parent_line(self, worktree, base, tip)
    }

    fn start_merge(&self, worktree: &Path, rev: &str) -> Result<Vec<String>, LandGitError> {
        land::start_merge(self, worktree, rev)
    }

    fn file_at(
        &self,
        worktree: &Path,
        rev: &str,
        path: &str,
    ) -> Result<Option<Vec<u8>>, LandGitError> {
        land::file_at(self, worktree, rev, path)
    }

    fn commit_tree(
        &self,
        worktree: &Path,
        tree: &str,
        parents: &[CommitId],
        message: &str,
    ) -> Result<CommitId, LandGitError> {
        land::commit_tree(self, worktree, tree, parents, message)
    }

    fn swap_ref(
        &self,
        worktree: &Path,
        name: &str,
        new: &CommitId,
        old: &CommitId,
        reason: &str,
    ) -> Result<bool, LandGitError> {
        land::swap_ref(self, worktree, name, new, old, reason)
    }

    fn follow(&self, worktree: &Path, old: &CommitId, new: &CommitId) -> Result<(), LandGitError> {
        land::follow(self, worktree, old, new)
    }

    fn merge_conflicts(
        &self,
        worktree: &Path,
        ours: &str,
        theirs: &str,
    ) -> Result<Vec<String>, LandGitError> {
        land::merge_conflicts(self, worktree, ours, theirs)
    }

    fn push(&self, worktree: &Path, remote: &str, refspec: &str) -> Result<(), LandGitError> {
        land::push(self, worktree, remote, refspec)
    }

    fn upstream_remote(
        &self,
        worktree: &Path,
        branch: &str,
    ) -> Result<Option<String>, LandGitError> {
        land::upstream_remote(self, worktree, branch)
    }

    fn tree_changes(
        &self,
        worktree: &Path,
        from: &str,
        to: &str,
    ) -> Result<Vec<String>, LandGitError> {
        land::tree_changes(self, worktree, from, to)
    }

    fn merging(&self, worktree: &Path) -> Result<Option<CommitId>, LandGitError> {
        land::merging(self, worktree)
    }

    fn restart_merge(
        &self,
        worktree: &Path,
        before: &WorktreeState,
        theirs: &CommitId,
    ) -> Result<(), LandGitError> {
        land::restart_merge(self, worktree, before, theirs)
    }

    fn files_from(&self, worktree: &Path, tree: &str, paths: &[&str]) -> Result<(), LandGitError> {
        land::files_from(self, worktree, tree, paths)
    }

    fn config_changes(&self) -> Result<Vec<String>, ConfigError> {
        let fail = |source| ConfigError::Read { source };
        let Some(pin) = self.cli.pin().map_err(fail)? else {
            return Ok(Vec::new());
        };
        let Some(now) = self.cli.config_listing().map_err(fail)? else {
            return Ok(Vec::new());
        };
        Ok(pin.changes(&now))
    }
}
