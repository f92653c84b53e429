//! What `epic land` needs of git: a merge left open on its conflicts (the lander resolves them
//! in the worktree), a file's content at a commit (both sides of a conflict), a commit made of a
//! given tree and parents, a branch moved by compare-and-swap, a checkout brought along as
//! `git merge --ff-only` would, an in-memory merge that names the paths that would conflict, a
//! push, and a lander turn's changes outside its perimeter put back (the merge in progress
//! begun again, so that it stays open on the conflicts still to resolve).
//!
//! Each goes through the git CLI but the in-memory merge (gix's tree merge, as [`crate::Git::merge`]
//! uses it): git's own merge machinery leaves the conflict markers and the index stages the
//! lander reads; `commit-tree` and `update-ref <new> <old>` are git's plumbing for exactly the
//! commit and the compare-and-swap epic wants; `read-tree -m -u` is the two-tree merge a
//! fast-forward makes in a checkout, keeping its local changes; a push needs git's transports.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::cli::{args, words};
use crate::error::{Cause, GitCommandError, LandGitError};
use crate::path_text::path_text;
use crate::repo::GixGit;
use crate::rev;
use crate::types::{CommitId, MergeFavor, WorktreeState};

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

/// The files that differ between two trees (hexadecimal ids), sorted: each path a file,
/// symbolic link or submodule (`git diff-tree -r --no-renames`).
pub(crate) fn tree_changes(
    git: &GixGit,
    worktree: &Path,
    from: &str,
    to: &str,
) -> Result<Vec<String>, LandGitError> {
    let out = git
        .cli
        .run(
            worktree,
            args![
                "diff-tree",
                "-r",
                "-z",
                "--name-only",
                "--no-renames",
                from,
                to
            ],
        )
        .map_err(|error| failed("compare two trees", worktree, error))?;
    let mut paths: Vec<String> = out
        .stdout
        .split(|byte| *byte == 0)
        .filter(|path| !path.is_empty())
        .map(path_text)
        .collect();
    paths.sort_unstable();
    Ok(paths)
}

/// The commit being merged in `worktree` (`MERGE_HEAD`), if a merge is in progress there.
pub(crate) fn merging(git: &GixGit, worktree: &Path) -> Result<Option<CommitId>, LandGitError> {
    let action = "read the merge in progress";
    let output = git
        .cli
        .output(
            worktree,
            args!["rev-parse", "--quiet", "--verify", "MERGE_HEAD^{commit}"],
        )
        .map_err(|error| failed(action, worktree, error))?;
    if !output.status.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    text.parse::<gix::ObjectId>()
        .map(|id| Some(CommitId(id)))
        .map_err(|_| {
            failed(
                action,
                worktree,
                std::io::Error::other(format!("git rev-parse printed `{text}`, not a commit id")),
            )
        })
}

/// Brings `worktree`, where a merge of `theirs` into `before.head` was in progress when `before`
/// was taken, back to `before`, the merge begun again ([`start_merge`]): its head, `MERGE_HEAD`
/// and the index stages of every path still conflicted are git's own again, whatever a turn did
/// to them (a commit, `git add`, `git merge --abort`, another branch checked out); then the
/// files are set to `before`'s, the resolutions made before it included.
pub(crate) fn restart_merge(
    git: &GixGit,
    worktree: &Path,
    before: &WorktreeState,
    theirs: &CommitId,
) -> Result<(), LandGitError> {
    let action = "begin the merge again";
    let fail = |error: Cause| failed(action, worktree, error);
    let root = crate::Git::worktree_root(git, worktree)
        .map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    let head = before.head.to_hex();
    // `reset --hard` ends whatever merge the turn left (or began) and the branch goes
    // back to the head the merge started from; untracked files go with `clean`.
    crate::reset::force_checkout(git, worktree, before.branch.as_deref(), &head)
        .map_err(|error| fail(Cause::Cli(error)))?;
    git.cli
        .run(worktree, args!["reset", "--hard", "--quiet", &head])
        .map_err(|error| fail(Cause::Cli(error)))?;
    git.cli
        .run(worktree, args!["clean", "-f", "-d", "--quiet"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    start_merge(git, worktree, &theirs.to_hex())?;
    git.cli
        .run(
            &root,
            args![
                "restore",
                "--quiet",
                "--worktree",
                "--source",
                &before.tree,
                "--",
                "."
            ],
        )
        .map_err(|error| fail(Cause::Cli(error)))?;
    Ok(())
}

/// Sets each of the files `keep` names in `worktree` to what the tree `after` has, deleting
/// those it lacks; the index is left alone.
pub(crate) fn files_from(
    git: &GixGit,
    worktree: &Path,
    after: &str,
    keep: &[&str],
) -> Result<(), LandGitError> {
    if keep.is_empty() {
        return Ok(());
    }
    let fail = |error: Cause| failed("keep files a lander turn changed", worktree, error);
    let root = crate::Git::worktree_root(git, worktree)
        .map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    files_at(git, &root, after, keep).map_err(fail)
}

fn files_at(git: &GixGit, root: &Path, after: &str, keep: &[&str]) -> Result<(), Cause> {
    let mut paths = Vec::with_capacity(keep.len());
    for path in keep {
        let Some(clean) = crate::reset::clean_path(path) else {
            return Err(Cause::Io(std::io::Error::other(format!(
                "`{path}` is not a path inside the worktree"
            ))));
        };
        paths.push(clean);
    }
    let with_paths = |head: &[&str]| -> Vec<OsString> {
        let mut all: Vec<OsString> = head.iter().map(OsString::from).collect();
        all.push("--".into());
        all.extend(paths.iter().map(|path| path.as_os_str().to_owned()));
        all
    };
    let listed = with_paths(&["ls-tree", "-r", "-z", "--name-only", "--full-tree", after]);
    let listed: Vec<&std::ffi::OsStr> = listed.iter().map(OsString::as_os_str).collect();
    let present = git.cli.run(root, &listed).map_err(Cause::Cli)?;
    let present: Vec<PathBuf> = present
        .stdout
        .split(|byte| *byte == 0)
        .filter(|path| !path.is_empty())
        .filter_map(|path| gix::path::from_byte_slice(path).ok().map(Path::to_owned))
        .collect();
    // What `after` lacks goes first: a file that became a directory is deleted before the
    // directory's files come back.
    for path in paths.iter().filter(|path| !present.contains(path)) {
        match std::fs::symlink_metadata(root.join(path)) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => std::fs::remove_file(root.join(path)).map_err(Cause::Io)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(Cause::Io(error)),
        }
    }
    if present.is_empty() {
        return Ok(());
    }
    let mut restore: Vec<OsString> = ["restore", "--quiet", "--worktree", "--source", after, "--"]
        .iter()
        .map(OsString::from)
        .collect();
    restore.extend(present.iter().map(|path| path.as_os_str().to_owned()));
    let restore: Vec<&std::ffi::OsStr> = restore.iter().map(OsString::as_os_str).collect();
    git.cli.run(root, &restore).map_err(Cause::Cli)?;
    Ok(())
}
