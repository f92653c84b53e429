//! The [`Git`] trait: the git operations epic needs, whatever does them.

use std::path::{Path, PathBuf};

use crate::error::{
    AdvanceError, BranchError, CommitError, ConfigError, DiffError, GitCommandError, LandGitError,
    MergeError, NoteError, RestoreError, RevError, RollbackError, StatusError, WorktreeError,
};
use crate::types::{
    BranchDiff, CommitId, CommitOutcome, FileChange, LineCommit, MergeFavor, MergeOutcome, Packed,
    Removal, Restored, Status, Symlink, TreeFile, Uncommitted, WorktreeInfo, WorktreeState,
};

/// The git operations epic needs, synchronous and shareable across threads.
///
/// Paths named `worktree` are the root (or any directory) of a worktree of the repository: the
/// main one or a linked one. Repository paths (`exclude`, `paths`, and the returned ones) are
/// relative to the worktree root with `/` separators. Revisions are anything `git rev-parse`
/// takes (`HEAD`, a branch, a commit id); they resolve in the worktree given, so `HEAD` is that
/// worktree's head.
///
/// From async code, call through `tokio::task::spawn_blocking` with the handle in an `Arc`: every
/// method blocks on the file system or on a git process.
pub trait Git: Send + Sync {
    /// The repository's common git directory, shared by every worktree (`.git` of the main one).
    fn common_dir(&self) -> &Path;

    /// The root of the main worktree, or `None` for a bare repository.
    fn main_worktree(&self) -> Option<&Path>;

    /// The root of the worktree that contains `dir`.
    fn worktree_root(&self, dir: &Path) -> Result<PathBuf, RevError>;

    /// Resolves a revision to the commit it names (`git rev-parse <rev>^{commit}`).
    fn rev_parse(&self, worktree: &Path, rev: &str) -> Result<CommitId, RevError>;

    /// Whether `ancestor` is an ancestor of `descendant` or the same commit
    /// (`git merge-base --is-ancestor`).
    fn is_ancestor(
        &self,
        worktree: &Path,
        ancestor: &str,
        descendant: &str,
    ) -> Result<bool, RevError>;

    /// Whether `commit` is on the first-parent line of `tip`: `tip` itself, its first parent,
    /// that commit's first parent, and so on (`git rev-list --first-parent <tip>` lists it).
    /// The line a branch's own merges make, which commits merged into it are not on.
    fn on_first_parent_line(
        &self,
        worktree: &Path,
        commit: &CommitId,
        tip: &str,
    ) -> Result<bool, RevError>;

    /// Whether the local branch `name` (short, as `story/e/a`) exists.
    fn branch_exists(&self, name: &str) -> Result<bool, BranchError>;

    /// The local branches named `directory/…` (short names, sorted): any of them keeps git from
    /// creating a branch named `directory`.
    fn branches_under(&self, directory: &str) -> Result<Vec<String>, BranchError>;

    /// Creates the local branch `name` at `at`; fails if it exists.
    fn create_branch(&self, name: &str, at: &CommitId) -> Result<(), BranchError>;

    /// Deletes the local branch `name` whether or not it is merged (`git branch -D`); a missing
    /// branch is not an error. A branch checked out in a worktree is refused.
    fn delete_branch(&self, name: &str) -> Result<(), BranchError>;

    /// The branch checked out in `worktree`, or `None` when its head is detached.
    fn current_branch(&self, worktree: &Path) -> Result<Option<String>, RevError>;

    /// Adds a linked worktree at `path` on a new branch `branch` cut at `start`
    /// (`git worktree add -b <branch> <path> <start>`).
    fn add_worktree_new_branch(
        &self,
        path: &Path,
        branch: &str,
        start: &str,
    ) -> Result<(), WorktreeError>;

    /// Adds a linked worktree at `path` for the existing branch `branch`
    /// (`git worktree add <path> <branch>`).
    fn add_worktree(&self, path: &Path, branch: &str) -> Result<(), WorktreeError>;

    /// Every worktree, the main one first (`git worktree list`).
    fn worktrees(&self) -> Result<Vec<WorktreeInfo>, WorktreeError>;

    /// Removes the linked worktree at `path` with whatever changes it has
    /// (`git worktree remove --force`). A worktree whose directory is gone is pruned instead.
    fn remove_worktree(&self, path: &Path) -> Result<Removal, WorktreeError>;

    /// Moves the linked worktree at `from` to `to`, creating `to`'s parent directories.
    fn move_worktree(&self, from: &Path, to: &Path) -> Result<(), WorktreeError>;

    /// Switches the linked worktree at `path` to `branch` as a new story's slot: an unfinished
    /// rebase dropped, `git checkout --force` onto `branch` (reset to `start` with `-B`, or at
    /// its own tip when `start` is `None`) so that only the files that differ are rewritten and
    /// ignored files stay (for a clean slot moved to `start`, the same done in process where it
    /// applies: see the crate docs), untracked files that are not ignored removed (`git clean -ffd`), and
    /// then proven: no merge, cherry-pick, revert or rebase in progress, the head on `branch` at
    /// the expected commit (returned), no tracked change and no untracked file that is not
    /// ignored ([`WorktreeError::NotClean`] otherwise). A branch checked out in another worktree
    /// is refused ([`WorktreeError::BranchCheckedOut`]). Killed at any step, it can be run again.
    fn switch_worktree(
        &self,
        path: &Path,
        branch: &str,
        start: Option<&CommitId>,
    ) -> Result<CommitId, WorktreeError>;

    /// Detaches the head of the linked worktree at `path` at its commit, leaving its files and
    /// index alone, so that the branch it was on can be checked out elsewhere.
    fn detach_worktree(&self, path: &Path) -> Result<(), WorktreeError>;

    /// Copies into the worktree at `path` the files of the main checkout that are ignored and
    /// match a pattern of its `.worktreeinclude` (gitignore patterns, Claude Code's convention):
    /// `.env`, local settings. A file already in the worktree is left alone (a switched slot
    /// keeps what it has), as is one whose way there passes a symbolic link. The copy shares
    /// the file's blocks where the file system can (`copy_file_range`, a reflink on btrfs and
    /// XFS). The copied paths, sorted; none without a `.worktreeinclude` or a main checkout.
    fn seed_worktree(&self, path: &Path) -> Result<Vec<String>, WorktreeError>;

    /// Points the `.git` file of the linked worktree at `path` back at its own registration
    /// when it names another one (an agent rewrote it: every git command there then acted on
    /// that other worktree, the epic's or a sibling's). Whether it was rewritten; a worktree
    /// whose `.git` is its own, or that no registration names, is left as it is.
    fn relink_worktree(&self, path: &Path) -> Result<bool, WorktreeError>;

    /// Drops the registrations of worktrees whose directories are gone (`git worktree prune`),
    /// and those a `git worktree add` killed half way left unreadable, which would fail every
    /// `git worktree list` (with the add's directory, where it got that far).
    fn prune_worktrees(&self) -> Result<(), WorktreeError>;

    /// The changed paths of `worktree`, untracked ones included, leaving out each path in
    /// `exclude` and everything under it.
    fn status(&self, worktree: &Path, exclude: &[&str]) -> Result<Status, StatusError>;

    /// The paths of `worktree`'s [`status`](Self::status), each with what became of it against
    /// the head commit: added, modified or deleted. In path order; a path the head commit lacks
    /// and the worktree too (staged, then deleted) is left out: a commit would take nothing of
    /// it. What a retried agent turn is told the attempt before it left behind.
    fn uncommitted(&self, worktree: &Path) -> Result<Vec<Uncommitted>, StatusError>;

    /// The untracked files of `worktree` that are not ignored, as `git ls-files --others
    /// --exclude-standard` lists them from the worktree root: sorted, a name git can only show
    /// quoted shown as git quotes it (what [`restore_paths`](Self::restore_paths) takes back).
    fn untracked_files(&self, worktree: &Path) -> Result<Vec<String>, StatusError>;

    /// Stages everything, as `git add -A` would (every path the status lists: edits, deletions,
    /// untracked files that are not ignored), and commits it with `message`, cleaned up as
    /// `git commit -m` cleans it. Without a configured identity, the commit is made as
    /// `epic <epic@localhost>`.
    fn commit_all(&self, worktree: &Path, message: &str) -> Result<CommitOutcome, CommitError>;

    /// The diff of `head` against its merge base with `base` (`git diff base...head`): text and
    /// paths.
    fn diff_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
    ) -> Result<BranchDiff, DiffError>;

    /// The paths of [`diff_vs_base`](Self::diff_vs_base) only, without the text: cheaper.
    fn changed_paths_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
    ) -> Result<Vec<String>, DiffError>;

    /// The files of [`diff_vs_base`](Self::diff_vs_base), each with what it became (renames
    /// found as `git diff` finds them), its mode before and after, and the lines added to it
    /// that `keep` keeps; in path order. The whole content of both sides is held only for the
    /// files whose path (or, for a rename or copy, source path) `hold` names. In process, and
    /// holding only the kept lines and held files: for a question about a few lines or files of
    /// a diff that may be large.
    fn file_changes_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
        keep: &dyn Fn(&str) -> bool,
        hold: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<FileChange>, DiffError>;

    /// The paths of [`changed_paths_vs_base`](Self::changed_paths_vs_base), and the symbolic
    /// links among them: each changed path that `head`'s tree has as a symbolic link (mode
    /// `120000`), with its target, in path order. In process, one tree diff for both.
    fn changed_paths_and_links_vs_base(
        &self,
        worktree: &Path,
        base: &str,
        head: &str,
    ) -> Result<(Vec<String>, Vec<Symlink>), DiffError>;

    /// The symbolic links on the way to `paths` in the tree of `rev`: each of the paths, or a
    /// directory above one, that the tree has as a symbolic link, with its target; in path
    /// order, each once. Paths are repo-relative and `/`-separated (empty and `.` segments are
    /// skipped); a path the tree lacks has none. In process, one tree read per directory on the
    /// way, and no process.
    fn symlinks_along(
        &self,
        worktree: &Path,
        rev: &str,
        paths: &[&str],
    ) -> Result<Vec<Symlink>, RevError>;

    /// What the tree of `rev` holds at `path` (repo-relative, `/`-separated; empty and `.`
    /// segments skipped): a file with its content, a symbolic link with its target, a
    /// directory, a submodule, or nothing. In process, one tree read per directory on the way,
    /// and no process: a commit's content, not a worktree's files an agent can change.
    fn tree_file(&self, worktree: &Path, rev: &str, path: &str) -> Result<TreeFile, RevError>;

    /// The paths among `paths` (repo-relative, as a status lists them) that are symbolic links
    /// among `worktree`'s files, committed or not, with their targets as the file system
    /// reads them; in path order. A path with no file is none.
    fn symlinks_in_worktree(
        &self,
        worktree: &Path,
        paths: &[&str],
    ) -> Result<Vec<Symlink>, StatusError>;

    /// Merges `branch` into the branch checked out in `worktree` with a merge commit (never a
    /// fast-forward). A conflict leaves the worktree exactly as it was. `branch` may be any
    /// revision: a commit id ([`CommitId::to_hex`]) merges exactly that commit, wherever its
    /// branch has moved since (the revision is resolved once, and git merges the commit it
    /// named).
    fn merge(
        &self,
        worktree: &Path,
        branch: &str,
        message: &str,
        favor: MergeFavor,
    ) -> Result<MergeOutcome, MergeError>;

    /// Merges commit `theirs` into commit `ours` in the object database alone, where that is
    /// the whole of it: [`MergeOutcome::Merged`] with a new merge commit (parents `ours`,
    /// `theirs`) when the two changed clearly separate files since their one merge base,
    /// [`MergeOutcome::UpToDate`], or [`MergeOutcome::Conflict`]. No worktree, index or branch
    /// moves: a chain of merges is built this way and checked out once
    /// ([`advance_worktree`](Self::advance_worktree)). `None` when the merge is git's to make in
    /// a worktree (the sides touched the same files without conflict, or have several merge
    /// bases): check out `ours` and [`merge`](Self::merge). `worktree` names the repository and
    /// the configuration the commit is made with.
    fn merge_objects(
        &self,
        worktree: &Path,
        ours: &CommitId,
        theirs: &CommitId,
        message: &str,
    ) -> Result<Option<MergeOutcome>, MergeError>;

    /// Moves `worktree` from commit `from`, its head, to commit `to` (any commit, not only a
    /// descendant): its files and index first, only the paths where the two trees differ (a
    /// local change in one of them refuses the move, [`AdvanceError::Refused`], before anything
    /// is touched), then its branch, only if it still points at `from`, the reflog saying
    /// `reason` (`git read-tree -m -u` and `git update-ref`, done in process where nothing can
    /// surprise it). Files that differ from `from` elsewhere stay as they are.
    fn advance_worktree(
        &self,
        worktree: &Path,
        from: &CommitId,
        to: &CommitId,
        reason: &str,
    ) -> Result<(), AdvanceError>;

    /// Aborts the merge in progress in `worktree` (`git merge --abort`), if there is one: what a
    /// `git merge` killed half way leaves, refusing every later merge there. Whether one was.
    fn abort_unfinished_merge(&self, worktree: &Path) -> Result<bool, MergeError>;

    /// Runs git's automatic maintenance once, in the foreground, as the repository configures
    /// it: past `gc.auto` loose objects by git's own estimate, `git gc --auto` (the one git
    /// command epic runs without `gc.auto=0`) and the loose objects before and after; below it,
    /// nothing (`None`, no git process). For a moment when nothing else works in the
    /// repository (the end of a run).
    fn maintain(&self) -> Result<Option<Packed>, GitCommandError>;

    /// The head commit of `worktree`, to [`rollback`](Self::rollback) to later.
    fn checkpoint(&self, worktree: &Path) -> Result<CommitId, RevError>;

    /// Resets `worktree`'s branch, index and files to `to` and removes untracked files that are
    /// not ignored (`git reset --hard <to> && git clean -fd`).
    fn rollback(&self, worktree: &Path, to: &CommitId) -> Result<(), RollbackError>;

    /// Everything `worktree` changed against `base`, committed or not, untracked files
    /// included and ignored ones not, as a binary patch that `git apply` takes in a worktree at
    /// `base` (`git diff --binary <base>` over a temporary index holding every file); empty
    /// when nothing changed. The worktree, its index and its branch are left as they are.
    fn worktree_patch(&self, worktree: &Path, base: &CommitId) -> Result<Vec<u8>, DiffError>;

    /// The whole state of `worktree`: its branch, its head commit and the tree of its files,
    /// committed or not (untracked ones included, ignored ones not). Leaves the worktree and
    /// its index as they are.
    fn worktree_state(&self, worktree: &Path) -> Result<WorktreeState, DiffError>;

    /// Brings `worktree` back to `state` if it is not there: the branch checked out again at
    /// its head (a commit made since is dropped from the branch), the files as they were
    /// (uncommitted changes included; untracked files added since deleted, ignored ones left).
    /// Returns the files that differed, sorted (empty when only commits or the branch had
    /// moved), or `None` when the worktree was as `state` says.
    fn put_back(
        &self,
        worktree: &Path,
        state: &WorktreeState,
    ) -> Result<Option<Vec<String>>, RollbackError>;

    /// Restores each path from `source`: checked out where `source` has it, deleted where it has
    /// none. The changes are left uncommitted.
    fn restore_paths(
        &self,
        worktree: &Path,
        source: &str,
        paths: &[&str],
    ) -> Result<Restored, RestoreError>;

    /// The configuration keys whose values differ now from the configuration this handle
    /// pinned at its first git command (added, removed or changed since, in any file git reads
    /// for the repository), sorted, as `git config --list` names them (`core.fsmonitor`,
    /// `filter.x.clean`). Epic's own git never honours such a change (the pin wins); this says
    /// that someone made one. One `git config` process.
    fn config_changes(&self) -> Result<Vec<String>, ConfigError>;

    /// Writes `text` as the note on `commit` under `notes_ref` (`refs/notes/epic`), replacing
    /// the note it had (`git notes --ref <notes_ref> add -f`). Run from `worktree`.
    fn write_note(
        &self,
        worktree: &Path,
        notes_ref: &str,
        commit: &CommitId,
        text: &str,
    ) -> Result<(), NoteError>;

    /// Writes each `(commit, text)` of `notes` as the note on that commit under `notes_ref`,
    /// replacing the note it had, as one change of the notes ref where that applies (one
    /// commit adding them all), else one `git notes add -f` each. The note's text is kept as
    /// `git notes add -F` keeps it (trailing whitespace and blank lines at its ends dropped).
    fn write_notes(
        &self,
        worktree: &Path,
        notes_ref: &str,
        notes: &[(CommitId, String)],
    ) -> Result<(), NoteError>;

    /// Every note under `notes_ref`, by the commit it annotates; empty when the ref does not
    /// exist. A note that is not UTF-8 is read lossily.
    fn notes(
        &self,
        worktree: &Path,
        notes_ref: &str,
    ) -> Result<std::collections::BTreeMap<CommitId, String>, NoteError>;

    /// The first-parent line of `tip` down to `base`, oldest first, `base` itself left out; and
    /// whether `base` was met (false: the line ran down to its root without it, and holds it
    /// all). With no `base`, the whole line.
    fn first_parent_line(
        &self,
        worktree: &Path,
        base: Option<&CommitId>,
        tip: &str,
    ) -> Result<(Vec<LineCommit>, bool), RevError>;

    /// Starts merging `rev` into the branch checked out in `worktree` without committing
    /// (`git merge --no-ff --no-commit`), for `epic land`: the conflicted paths, sorted, left
    /// with their markers and index stages for someone to resolve (empty: the merge is staged,
    /// clean). Local changes in the way are refused, the worktree as it was. The merge is
    /// concluded by a commit of the worktree's files ([`commit_tree`](Self::commit_tree)) and
    /// abandoned by a [`rollback`](Self::rollback).
    fn start_merge(&self, worktree: &Path, rev: &str) -> Result<Vec<String>, LandGitError>;

    /// The content of `path` in the tree of `rev`, or `None` where that tree has no such file.
    fn file_at(
        &self,
        worktree: &Path,
        rev: &str,
        path: &str,
    ) -> Result<Option<Vec<u8>>, LandGitError>;

    /// A new commit of `tree` (a tree id, or a revision such as `<commit>^{tree}`) with these
    /// parents, in order, and `message` (`git commit-tree`); no branch moves.
    fn commit_tree(
        &self,
        worktree: &Path,
        tree: &str,
        parents: &[CommitId],
        message: &str,
    ) -> Result<CommitId, LandGitError>;

    /// Moves the ref `name` (`refs/heads/main`) to `new` only if it still points at `old`, the
    /// reflog saying `reason` (`git update-ref`): whether it moved. Never overwrites a ref that
    /// moved meanwhile.
    fn swap_ref(
        &self,
        worktree: &Path,
        name: &str,
        new: &CommitId,
        old: &CommitId,
        reason: &str,
    ) -> Result<bool, LandGitError>;

    /// Brings `worktree`'s index and files from `old`'s tree to `new`'s, keeping its local
    /// changes, as `git merge --ff-only` does once its branch moved (`git read-tree -m -u`); a
    /// local change in a path the two trees differ in is refused.
    fn follow(&self, worktree: &Path, old: &CommitId, new: &CommitId) -> Result<(), LandGitError>;

    /// The paths a merge of `theirs` into `ours` would leave conflicted, sorted; merged in
    /// memory with gix, so nothing is written.
    fn merge_conflicts(
        &self,
        worktree: &Path,
        ours: &str,
        theirs: &str,
    ) -> Result<Vec<String>, LandGitError>;

    /// Pushes `refspec` to `remote` (`git push`).
    fn push(&self, worktree: &Path, remote: &str, refspec: &str) -> Result<(), LandGitError>;

    /// The remote the local branch `branch` tracks (`branch.<branch>.remote`), if any.
    fn upstream_remote(
        &self,
        worktree: &Path,
        branch: &str,
    ) -> Result<Option<String>, LandGitError>;

    /// The files that differ between the trees `from` and `to` (hexadecimal ids, as
    /// [`WorktreeState::tree`] holds them), sorted (`git diff-tree -r --no-renames`).
    fn tree_changes(
        &self,
        worktree: &Path,
        from: &str,
        to: &str,
    ) -> Result<Vec<String>, LandGitError>;

    /// The commit being merged in `worktree` (`MERGE_HEAD`), if a merge is in progress there.
    fn merging(&self, worktree: &Path) -> Result<Option<CommitId>, LandGitError>;

    /// Brings `worktree`, where a merge of `theirs` was in progress when `before` was taken
    /// ([`start_merge`](Self::start_merge)), back to `before` with that merge open again: the
    /// branch at `before`'s head, `MERGE_HEAD`, the index stages of the paths still conflicted,
    /// and every file as `before` had it, whatever was committed, staged, aborted or checked
    /// out since. Ignored files are left.
    fn restart_merge(
        &self,
        worktree: &Path,
        before: &WorktreeState,
        theirs: &CommitId,
    ) -> Result<(), LandGitError>;

    /// Sets each of the files `paths` names in `worktree` to what the tree `tree` has, deleting
    /// those it lacks; the index is left alone.
    fn files_from(&self, worktree: &Path, tree: &str, paths: &[&str]) -> Result<(), LandGitError>;
}
