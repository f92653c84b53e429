//! What `epic land` needs of git: a merge left open on its conflicts (the lander resolves them
//! in the worktree), a file's content at a commit (both sides of a conflict), a commit made of a
//! given tree and parents, a branch moved by compare-and-swap, a checkout brought along as
//! `git merge --ff-only` would, an in-memory merge that names the paths that would conflict, and
//! a push.
//!
//! Each goes through the git CLI but the in-memory merge (gix's tree merge, as [`crate::Git::merge`]
//! uses it): git's own merge machinery leaves the conflict markers and the index stages the
//! lander reads; `commit-tree` and `update-ref <new> <old>` are git's plumbing for exactly the
//! commit and the compare-and-swap epic wants; `read-tree -m -u` is the two-tree merge a
//! fast-forward makes in a checkout, keeping its local changes; a push needs git's transports.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::cli::{args, words};
use crate::error::{Cause, GitCommandError};
use crate::path_text::path_text;
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, MergeFavor};

/// An error of one of the landing's git operations ([`Git::start_merge`](crate::Git::start_merge)
/// and the others of `land.rs`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LandGitError {
    /// The operation failed.
    #[error("git failed to {action} in `{}`", worktree.display())]
    Failed {
        /// What was being done.
        action: String,
        /// Where.
        worktree: PathBuf,
        /// What went wrong.
        #[source]
        source: Cause,
    },
    /// git refused the operation, saying why (local changes in the way, a push rejected).
    #[error("git refused to {action} in `{}`: {detail}", worktree.display())]
    Refused {
        /// What was being done.
        action: String,
        /// Where.
        worktree: PathBuf,
        /// git's words.
        detail: String,
    },
}

fn failed(action: &str, worktree: &Path, source: impl Into<Cause>) -> LandGitError {
    LandGitError::Failed {
        action: action.to_owned(),
        worktree: worktree.to_owned(),
        source: source.into(),
    }
}

/// `git merge --no-ff --no-commit <rev>`: the merge staged, never committed; the conflicted
/// paths (sorted), left with their markers and index stages. Local changes in the way are
/// [`LandGitError::Refused`], the worktree as it was.
pub(crate) fn start_merge(
    git: &GixGit,
    worktree: &Path,
    rev: &str,
) -> Result<Vec<String>, LandGitError> {
    let action = format!("merge `{rev}`");
    let output = git
        .cli
        .output(
            worktree,
            args![
                "merge",
                "--no-ff",
                "--no-commit",
                "--no-verify",
                "--quiet",
                rev
            ],
        )
        .map_err(|error| failed(&action, worktree, error))?;
    let unmerged =
        unmerged_paths(git, worktree).map_err(|error| failed(&action, worktree, error))?;
    if output.status.success() || !unmerged.is_empty() {
        return Ok(unmerged);
    }
    Err(LandGitError::Refused {
        action,
        worktree: worktree.to_owned(),
        detail: words(&output),
    })
}

/// The paths of `worktree`'s index with unmerged stages, sorted.
fn unmerged_paths(git: &GixGit, worktree: &Path) -> Result<Vec<String>, GitCommandError> {
    let out = git.cli.run(
        worktree,
        args![
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--name-only",
            "-z",
            "--diff-filter=U"
        ],
    )?;
    let mut paths: Vec<String> = out
        .stdout
        .split(|byte| *byte == 0)
        .filter(|path| !path.is_empty())
        .map(path_text)
        .collect();
    paths.sort_unstable();
    paths.dedup();
    Ok(paths)
}

/// The content of `path` in the tree of `rev`, or `None` where that tree has no such file.
pub(crate) fn file_at(
    git: &GixGit,
    worktree: &Path,
    rev: &str,
    path: &str,
) -> Result<Option<Vec<u8>>, LandGitError> {
    let spec = format!("{rev}:{path}");
    let output = git
        .cli
        .output(worktree, args!["cat-file", "blob", &spec])
        .map_err(|error| failed("read a file of a commit", worktree, error))?;
    Ok(output.status.success().then_some(output.stdout))
}

/// `git commit-tree <tree> -p <parent>…` with `message`: the new commit, on no branch.
pub(crate) fn commit_tree(
    git: &GixGit,
    worktree: &Path,
    tree: &str,
    parents: &[CommitId],
    message: &str,
) -> Result<CommitId, LandGitError> {
    let action = "write a commit";
    let mut arguments: Vec<OsString> = vec!["commit-tree".into(), tree.into()];
    for parent in parents {
        arguments.extend(["-p".into(), parent.to_hex().into()]);
    }
    arguments.extend(["-F".into(), "-".into()]);
    let arguments: Vec<&std::ffi::OsStr> = arguments.iter().map(OsString::as_os_str).collect();
    let mut message = message.trim().to_owned();
    message.push('\n');
    let made = git
        .cli
        .run_with_input(worktree, &arguments, message.as_bytes())
        .map_err(|error| failed(action, worktree, error))?;
    let text = String::from_utf8_lossy(&made.stdout).trim().to_owned();
    text.parse::<gix::ObjectId>().map(CommitId).map_err(|_| {
        failed(
            action,
            worktree,
            std::io::Error::other(format!("git commit-tree printed `{text}`, not a commit id")),
        )
    })
}

/// Moves the ref `name` to `new` if it still points at `old` (`git update-ref <name> <new>
/// <old>`): whether it moved. A ref that points elsewhere is left as it is (`false`).
pub(crate) fn swap_ref(
    git: &GixGit,
    worktree: &Path,
    name: &str,
    new: &CommitId,
    old: &CommitId,
    reason: &str,
) -> Result<bool, LandGitError> {
    let action = format!("move `{name}`");
    let output = git
        .cli
        .output(
            worktree,
            args![
                "update-ref",
                "-m",
                reason,
                name,
                &new.to_hex(),
                &old.to_hex()
            ],
        )
        .map_err(|error| failed(&action, worktree, error))?;
    if output.status.success() {
        return Ok(true);
    }
    let repo = rev::open(git, worktree)
        .map_err(|error| failed(&action, worktree, Cause::Rev(Box::new(error))))?;
    let now = rev::resolve(&repo, worktree, name)
        .map_err(|error| failed(&action, worktree, Cause::Rev(Box::new(error))))?;
    if now != old.0 {
        return Ok(false);
    }
    Err(LandGitError::Refused {
        action,
        worktree: worktree.to_owned(),
        detail: words(&output),
    })
}

/// Brings `worktree`'s index and files from the tree of `old` to that of `new`, keeping its
/// local changes, as a fast-forward does (`git read-tree -m -u <old> <new>`); a local change
/// in a path the two differ in is [`LandGitError::Refused`], nothing changed.
pub(crate) fn follow(
    git: &GixGit,
    worktree: &Path,
    old: &CommitId,
    new: &CommitId,
) -> Result<(), LandGitError> {
    let action = "bring the checkout along";
    let output = git
        .cli
        .output(
            worktree,
            args!["read-tree", "-m", "-u", &old.to_hex(), &new.to_hex()],
        )
        .map_err(|error| failed(action, worktree, error))?;
    if output.status.success() {
        return Ok(());
    }
    Err(LandGitError::Refused {
        action: action.to_owned(),
        worktree: worktree.to_owned(),
        detail: words(&output),
    })
}

/// The paths a merge of `theirs` into `ours` would leave conflicted, merged in memory (nothing
/// written to the worktree, its index or its refs), sorted.
pub(crate) fn merge_conflicts(
    git: &GixGit,
    worktree: &Path,
    ours: &str,
    theirs: &str,
) -> Result<Vec<String>, LandGitError> {
    let action = "merge in memory";
    let fail = |error: Cause| failed(action, worktree, error);
    let repo = rev::open(git, worktree).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let ours =
        rev::resolve(&repo, worktree, ours).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let theirs =
        rev::resolve(&repo, worktree, theirs).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    crate::merge::tree_conflicts((*repo).clone(), ours, theirs, MergeFavor::None)
        .map_err(|error| fail(Cause::gix(error)))
}

/// `git push <remote> <refspec>`.
pub(crate) fn push(
    git: &GixGit,
    worktree: &Path,
    remote: &str,
    refspec: &str,
) -> Result<(), LandGitError> {
    let action = format!("push `{refspec}` to `{remote}`");
    let output = git
        .cli
        .output(worktree, args!["push", "--quiet", remote, refspec])
        .map_err(|error| failed(&action, worktree, error))?;
    if output.status.success() {
        return Ok(());
    }
    Err(LandGitError::Refused {
        action,
        worktree: worktree.to_owned(),
        detail: words(&output),
    })
}

/// The remote `branch` tracks (`branch.<name>.remote`), if it has one.
pub(crate) fn upstream_remote(
    git: &GixGit,
    worktree: &Path,
    branch: &str,
) -> Result<Option<String>, LandGitError> {
    let key = format!("branch.{branch}.remote");
    let output = git
        .cli
        .output(worktree, args!["config", "--get", &key])
        .map_err(|error| failed("read the branch's remote", worktree, error))?;
    let remote = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    Ok((output.status.success() && !remote.is_empty() && remote != ".").then_some(remote))
}
