//! Why a run or a landing could not start, or could not go on as a whole ([`RunError`]).

use std::path::{Path, PathBuf};

use epic_process::offload::GitFailed;
use epic_process::sandbox::SandboxUnavailable;
use epic_state_store::{Holder, LockError};

/// Why a run could not start (or could not go on as a whole). [`is_locked`](Self::is_locked)
/// is docs/contract.md's exit 3; everything else is exit 2.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The repository has no working tree of its own (bare): nowhere to put worktrees beside.
    #[error("the repository `{}` is bare; epic needs a repository with a working tree", common_dir.display())]
    Bare {
        /// Its git directory.
        common_dir: PathBuf,
    },
    /// Seats in use cannot take turns: a program is not installed, or not logged in (found by
    /// the preflight, before anything started), every one the check found.
    #[error(transparent)]
    SeatsNotReady(#[from] epic_agents::SeatsNotReady),
    /// The epic's id cannot name a state directory.
    #[error("the epic id cannot name a state directory")]
    EpicId(#[source] epic_state_store::UnsafeId),
    /// Another run holds the epic's lock (exit 3).
    #[error("another run of this epic is going on ({})", holder.as_ref().map_or_else(|| "its holder has not recorded itself".to_owned(), ToString::to_string))]
    Locked {
        /// Who holds it, when it recorded itself.
        holder: Option<Holder>,
        /// The lock error.
        #[source]
        source: LockError,
    },
    /// The epic's lock could not be taken for another reason.
    #[error("failed to take the epic's lock")]
    Lock(#[source] LockError),
    /// `--base` names no commit.
    #[error("the base `{base}` of the epic branch names no commit")]
    Base {
        /// The base as given.
        base: String,
        /// The git error.
        #[source]
        source: epic_git_ops::RevError,
    },
    /// The user's own checkout holds the epic branch; epic never switches or merges in it.
    #[error(
        "your checkout `{}` has the epic branch `{branch}` checked out; epic merges into that \
         branch in a worktree of its own and never touches your checkout. Switch your checkout \
         to another branch (`git switch -`), then rerun",
        checkout.display()
    )]
    EpicBranchCheckedOut {
        /// The epic branch.
        branch: String,
        /// The user's checkout.
        checkout: PathBuf,
    },
    /// Something other than the epic branch's worktree is in its place.
    #[error(
        "`{}` should be the epic branch's worktree but {found}; move it away, then rerun",
        path.display()
    )]
    EpicWorktree {
        /// The expected worktree.
        path: PathBuf,
        /// What is there instead.
        found: String,
    },
    /// An existing branch has the name of a directory of branches epic must create (`story`
    /// blocks `story/<epic>/<id>`), or lies under one it must create (`epic/e/old` blocks
    /// `epic/e`): git keeps a branch as a file under `refs/heads/`, so a name cannot be both a
    /// branch and a directory of branches.
    #[error(
        "the branch `{blocker}` exists, so git cannot create {wanted}: a branch name cannot also \
         be a directory of other branches. Rename it (`git branch -m {blocker} {}-old`), then \
         rerun",
        .blocker.replace('/', "-")
    )]
    BranchBlocked {
        /// The branch or branches epic must create, as the message names them.
        wanted: String,
        /// The existing branch in the way.
        blocker: String,
    },
    /// The epic worktree has uncommitted changes.
    #[error("{}", crate::dirty_message(worktree, paths, None))]
    DirtyEpicWorktree {
        /// The epic worktree.
        worktree: PathBuf,
        /// Its changed paths.
        paths: Vec<String>,
    },
    /// The gates fail on the epic head before any story, and a red baseline is not allowed.
    #[error(
        "the gates fail on the epic head {commit} before any story ran:\n{}\nFix them on the \
         epic branch, or pass --allow-red-baseline to hold stories only to the gates that pass",
        failing.join("\n")
    )]
    RedBaseline {
        /// The epic head.
        commit: String,
        /// Each failing gate, with the end of its output.
        failing: Vec<String>,
    },
    /// Stories whose state says merged are not on the epic branch any more: something outside
    /// epic moved or reset it. Running on would build on a branch that lost them.
    #[error(
        "the epic branch `{epic_branch}` no longer contains the merged {}: {}. Something outside \
         epic moved or reset it. Put the branch back where it was (`git reflog {epic_branch}` \
         shows where), or delete those stories' state files to merge them again, then rerun",
        if stories.len() == 1 { "story" } else { "stories" },
        stories.join(", ")
    )]
    MergedStoriesMissing {
        /// The epic branch.
        epic_branch: String,
        /// The merged stories it lacks, in plan order.
        stories: Vec<String>,
    },
    /// An owned or shared read-only path of a story is a symbolic link, or lies under one, in
    /// the epic head's tree: the story would write where the link points.
    #[error(
        "story `{story}` {} `{path}`, which {} the symbolic link `{}` -> `{}` on the epic \
         branch: whatever the story writes there lands where the link points, outside what epic \
         can check. Replace the link with the directory or file it stands for (or take the path \
         out of the story), then rerun",
        if *shared { "shares read-only" } else { "owns" },
        if path == link { "is" } else { "lies under" },
        link.escape_debug(),
        target.escape_debug()
    )]
    SymlinkedPath {
        /// The story.
        story: String,
        /// Its path, normalised.
        path: String,
        /// Whether the path is one of its shared read-only ones rather than an owned one.
        shared: bool,
        /// The symbolic link: the path itself or a directory above it.
        link: String,
        /// Where the link points, as its blob holds it.
        target: String,
    },
    /// A merge journal (`merging.json`) names a merge epic cannot have left: its checkpoint is
    /// not the last proven head epic recorded, or the epic branch does not descend from that
    /// head. Undoing it could move the epic branch onto commits nothing proved, so the branch
    /// was not moved.
    #[error(
        "the merge journal `{}` says a merge of story '{story}' onto {checkpoint} was left \
         unproven, but {}, and the epic branch `{epic_branch}` is at {head}. epic did not move \
         the branch. {} Then remove the journal and rerun",
        journal.display(),
        proven.as_ref().map_or_else(
            || "epic recorded no proven head".to_owned(),
            |proven| format!("the last proven head epic recorded is {proven}")
        ),
        proven.as_ref().map_or_else(
            || format!(
                "Check the epic branch's last merge by hand (`git log --first-parent \
                 {epic_branch}`), and reset it if its gates fail.",
            ),
            |proven| format!(
                "Check the commits after the proven head (`git log {proven}..{epic_branch}`); \
                 if they are not wanted, reset the branch to it (`git update-ref \
                 refs/heads/{epic_branch} {proven}`, then `git -C {} reset --hard`).",
                epic_worktree.display()
            )
        )
    )]
    MergeJournalRefused {
        /// The journal.
        journal: PathBuf,
        /// The story it names.
        story: String,
        /// The checkpoint it names.
        checkpoint: String,
        /// The last proven head epic recorded, if any.
        proven: Option<String>,
        /// The epic branch.
        epic_branch: String,
        /// Where the epic branch is.
        head: String,
        /// The epic worktree.
        epic_worktree: PathBuf,
    },
    /// The epic branch is not at the last head epic proved, and no merge of epic's own explains
    /// it: something other than epic moved it between runs (an agent's `git update-ref`, a
    /// commit, amend or reset on it). Nothing was started.
    #[error(
        "the epic branch `{epic_branch}` is at {head}, not at {proven}, the last head epic \
         proved: something other than epic moved it since (a commit, an amend, a reset or \
         `git update-ref` on it). Nothing was started. To build on what epic proved, put it \
         back: `git -C {} reset --hard {proven}` (what it held stays in `git reflog \
         {epic_branch}`). To keep the branch as it is and have epic build on it unjudged, \
         remove `{}`; then rerun",
        epic_worktree.display(),
        proven_file.display()
    )]
    EpicBranchMoved {
        /// The epic branch.
        epic_branch: String,
        /// Where it is.
        head: String,
        /// The last head epic proved.
        proven: String,
        /// The epic worktree.
        epic_worktree: PathBuf,
        /// The file recording the proven head (`proven.json`).
        proven_file: PathBuf,
    },
    /// The sandbox is required (`--sandbox on`) and cannot be made on this machine.
    #[error(transparent)]
    Sandbox(#[from] SandboxUnavailable),
    /// A git operation of the preflight failed.
    #[error("git failed to {action}")]
    Git {
        /// What was being done.
        action: String,
        /// The git-ops error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file of the epic's state directory could not be read or written.
    #[error("failed to {action}")]
    State {
        /// What was being done.
        action: String,
        /// The state-store error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl RunError {
    /// Whether another run holds the epic's lock (docs/contract.md: exit 3).
    pub fn is_locked(&self) -> bool {
        matches!(self, Self::Locked { .. })
    }

    /// A git failure while doing `action`.
    pub fn git(action: &str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Git {
            action: action.to_owned(),
            source: source.into(),
        }
    }
}

impl From<GitFailed> for RunError {
    fn from(error: GitFailed) -> Self {
        Self::Git {
            action: error.action,
            source: error.source,
        }
    }
}

/// The message of a dirty epic worktree, found after story `after` finished or (`None`) before
/// any story ran.
pub fn dirty_message(worktree: &Path, paths: &[String], after: Option<&str>) -> String {
    let found = after
        .map(|story| format!(" (found after story '{story}' finished)"))
        .unwrap_or_default();
    let mut out = format!(
        "the epic worktree `{}` has uncommitted changes{found}; something worked outside its \
         own worktree:",
        worktree.display()
    );
    for path in paths {
        out.push_str("\n- ");
        out.push_str(path);
    }
    out.push_str("\nMove each change into the owning story's worktree or discard it, then rerun.");
    out
}
