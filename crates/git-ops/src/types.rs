//! The values the operations take and return.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The id of a commit: a full object hash.
///
/// ```
/// use epic_git_ops::CommitId;
///
/// let id: CommitId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?;
/// assert_eq!(id.to_string(), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
/// assert!("not a hash".parse::<CommitId>().is_err());
/// # Ok::<(), epic_git_ops::ParseCommitIdError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommitId(pub(crate) gix::ObjectId);

impl CommitId {
    /// The id as lowercase hexadecimal.
    pub fn to_hex(&self) -> String {
        self.0.to_string()
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The error of parsing a [`CommitId`] from text that is not a full hexadecimal hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a full hexadecimal commit id")]
pub struct ParseCommitIdError {
    text: String,
}

impl FromStr for CommitId {
    type Err = ParseCommitIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        gix::ObjectId::from_hex(text.as_bytes())
            .map(CommitId)
            .map_err(|_| ParseCommitIdError { text: text.into() })
    }
}

/// A commit of a branch's first-parent line, as
/// [`Git::first_parent_line`](crate::Git::first_parent_line) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineCommit {
    /// The commit.
    pub id: CommitId,
    /// Its tree's id, in hexadecimal.
    pub tree: String,
    /// Its parents, the first parent first; two or more for a merge.
    pub parents: Vec<CommitId>,
    /// The first line of its message.
    pub summary: String,
    /// Its author, `Name <email>`.
    pub author: String,
}

/// One worktree of the repository, as [`Git::worktrees`](crate::Git::worktrees) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    /// The worktree's root directory, as registered.
    pub path: PathBuf,
    /// The commit checked out, or `None` in a repository without commits.
    pub head: Option<CommitId>,
    /// The branch checked out (short name, `story/e/a`), or `None` when the head is detached.
    pub branch: Option<String>,
    /// Whether this is the main worktree (the one holding the git directory).
    pub is_main: bool,
    /// Whether its directory is gone, so [`Git::prune_worktrees`](crate::Git::prune_worktrees)
    /// would drop its registration.
    pub prunable: bool,
    /// Whether it is locked against pruning and removal.
    pub locked: bool,
}

/// What [`Git::remove_worktree`](crate::Git::remove_worktree) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The directory and its registration were removed.
    Removed,
    /// The directory was already gone; the stale registration was pruned.
    Pruned,
    /// Neither a directory nor a registration existed: nothing to do.
    Absent,
}

/// The state of a worktree against its head: what [`Git::status`](crate::Git::status) returns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Status {
    /// Every changed path, repository-relative with `/` separators, sorted and unique:
    /// modified, added, deleted, untracked (each file, not its directory), and for a staged
    /// rename its new path. Excluded paths are left out.
    pub paths: Vec<String>,
}

impl Status {
    /// Whether anything changed, untracked files included.
    pub fn is_dirty(&self) -> bool {
        !self.paths.is_empty()
    }
}

/// A path a worktree changed and did not commit, with what became of it: what
/// [`Git::uncommitted`](crate::Git::uncommitted) returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncommitted {
    /// The path, as [`Status::paths`] lists it.
    pub path: String,
    /// What became of it against the head commit.
    pub kind: UncommittedKind,
}

/// What became of an uncommitted path against the head commit ([`Uncommitted::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UncommittedKind {
    /// The head commit has no file there; the worktree has one (untracked, or staged).
    Added,
    /// Both have it, and it differs (content, mode or type).
    Modified,
    /// The head commit has it; the worktree no longer does.
    Deleted,
}

impl UncommittedKind {
    /// The word for it: `added`, `modified`, `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Deleted => "deleted",
        }
    }
}

/// What [`Git::commit_all`](crate::Git::commit_all) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    /// A commit was made.
    Committed(CommitId),
    /// The worktree had no changes; nothing was committed.
    NothingToCommit,
}

/// A branch's own changes since it left another: what
/// [`Git::diff_vs_base`](crate::Git::diff_vs_base) returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchDiff {
    /// The unified diff, as `git diff base...head` prints it.
    pub text: String,
    /// Every path the diff touches, sorted and unique; a rename lists both its old and its new
    /// path.
    pub paths: Vec<String>,
}

/// One file of a branch's own changes: what
/// [`Git::file_changes_vs_base`](crate::Git::file_changes_vs_base) returns, file by file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file's path on the branch (for a deletion, the path deleted).
    pub path: String,
    /// What the branch did to it.
    pub kind: FileChangeKind,
    /// The lines the branch adds to the file that the caller's filter kept, in file order: a
    /// line of the new content that the old content (none for an added file, the source's for a
    /// rename) has fewer times. A line only moved within the file is not added; a binary file
    /// (a NUL byte in its first 8,000 bytes, git's rule) adds none.
    pub added: Vec<String>,
    /// What the file is on the branch; `None` for a deletion.
    pub mode: Option<FileMode>,
    /// What it was before (for a rename or copy, what the source was); `None` for an addition.
    pub previous_mode: Option<FileMode>,
    /// The file's whole content on the branch (a symbolic link's is its target), held only when
    /// the caller's `hold` asked for it; `None` otherwise, for a deletion and for a submodule.
    pub content: Option<Vec<u8>>,
    /// Its whole content before (for a rename or copy, the source's), held like
    /// [`content`](Self::content); `None` for an addition.
    pub previous_content: Option<Vec<u8>>,
}

/// What a tree entry of a file is ([`FileChange::mode`]): git's file modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// A regular file (`100644`).
    File,
    /// An executable file (`100755`).
    Executable,
    /// A symbolic link (`120000`): its content is its target.
    Symlink,
    /// A submodule's commit (`160000`).
    Submodule,
}

/// A symbolic link in a tree (mode `120000`): what
/// [`Git::changed_paths_and_links_vs_base`](crate::Git::changed_paths_and_links_vs_base) and
/// [`Git::symlinks_along`](crate::Git::symlinks_along) return.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Symlink {
    /// The link's repo-relative path, `/`-separated.
    pub path: String,
    /// Where it points: the content of its blob, as git checks the link out, not resolved. Bytes
    /// that are not UTF-8 become U+FFFD; `/` and `.` are kept, so its segments stay as they are.
    pub target: String,
}

/// What a branch did to a file ([`FileChange::kind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChangeKind {
    /// The file is new.
    Added,
    /// The file's content or mode changed.
    Modified,
    /// The file is gone.
    Deleted,
    /// The file was moved here from `from`, perhaps changed too.
    Renamed {
        /// The path it had.
        from: String,
    },
    /// The file is a copy of `from` (with `diff.renames = copies`); `from` is still there.
    Copied {
        /// The path copied.
        from: String,
    },
}

/// Which side wins hunks that both sides changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeFavor {
    /// Neither: such hunks are a conflict.
    None,
    /// The incoming branch's side (`-X theirs`). Conflicts of whole files (modified on one side,
    /// deleted on the other) are still conflicts.
    Incoming,
}

/// What [`Git::merge`](crate::Git::merge) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// A merge commit was made.
    Merged(CommitId),
    /// The branch was already contained in the head: nothing to do.
    UpToDate,
    /// The merge conflicts; the worktree, index and head are exactly as before.
    Conflict {
        /// The conflicting paths, sorted.
        paths: Vec<String>,
    },
}

/// What [`Git::maintain`](crate::Git::maintain) found: the repository's loose objects before
/// and after git's automatic maintenance ran (fewer after: it packed them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packed {
    /// Loose objects before (`git count-objects`).
    pub loose_before: u64,
    /// Loose objects after.
    pub loose_after: u64,
}

/// The whole state of a worktree, as [`Git::worktree_state`](crate::Git::worktree_state) takes
/// it: what [`Git::put_back`](crate::Git::put_back) brings the worktree back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeState {
    /// The branch checked out, `None` when detached.
    pub branch: Option<String>,
    /// The commit checked out.
    pub head: CommitId,
    /// The tree of every file, committed or not, untracked ones included and ignored ones not
    /// (hexadecimal id; the tree is written to the repository's objects).
    pub tree: String,
}

/// What [`Git::restore_paths`](crate::Git::restore_paths) did, path by path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Restored {
    /// Paths checked out from the source revision.
    pub checked_out: Vec<String>,
    /// Paths deleted because the source revision has none.
    pub deleted: Vec<String>,
}

/// What the tree of a commit holds at a path ([`Git::tree_file`](crate::Git::tree_file)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TreeFile {
    /// A file (plain or executable): its content.
    File(Vec<u8>),
    /// A symbolic link: its target.
    Link(String),
    /// A directory.
    Directory,
    /// A submodule's commit.
    Submodule,
    /// Nothing: no entry at that path, or a file or link on the way to it.
    Missing,
}

impl TreeFile {
    /// What it is, in a few words for a message: `a file`, `a symbolic link`, `a directory`,
    /// `a submodule`, `no such path`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::File(_) => "a file",
            Self::Link(_) => "a symbolic link",
            Self::Directory => "a directory",
            Self::Submodule => "a submodule",
            Self::Missing => "no such path",
        }
    }
}
