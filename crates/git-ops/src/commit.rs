//! Committing everything in a worktree, and writing a commit object.
//!
//! What `git add -A` + `git commit` do, in git's plumbing: the changed paths come from this
//! crate's status (whose quick pass reads each file at most once, see `scan`), `git update-index
//! --add --remove` stages exactly those paths (in process where `stage` applies), `git
//! write-tree` writes the tree from the index, gix the commit (as `git commit-tree` would, see
//! [`write_commit`]), and `git update-ref` moves the branch, checking it still points where it
//! did. `git add -A` and `git commit` would each refresh the stat data of every tracked
//! file first, and read every file again while they are racy: right after a checkout, all of
//! them. A path the status cannot name exactly (not UTF-8) takes the
//! porcelain way.

use std::ffi::OsString;
use std::path::Path;

use crate::cli::{args, words};
use crate::error::{Cause, CommitError};
use crate::path_text::path_bytes;
use crate::repo::GixGit;
use crate::rev;
use crate::signature::plain_identity;
use crate::types::{CommitId, CommitOutcome};

pub(crate) fn commit_all(
    git: &GixGit,
    worktree: &Path,
    message: &str,
) -> Result<CommitOutcome, CommitError> {
    let fail = |source| CommitError::Failed {
        worktree: worktree.to_owned(),
        source,
    };
    let changed = crate::status::status(git, worktree, &[])
        .map_err(|error| fail(Cause::Status(Box::new(error))))?;
    if changed.paths.is_empty() {
        return Ok(CommitOutcome::NothingToCommit);
    }
    if changed.paths.iter().any(|path| path.contains('\u{fffd}')) {
        return commit_all_porcelain(git, worktree, message);
    }
    let repo = git.repo_at(worktree).map_err(fail)?;
    let parent = match rev::head(&repo, worktree) {
        Ok(id) => Some(id),
        Err(crate::RevError::Unborn { .. }) => None,
        Err(error) => return Err(fail(Cause::Rev(Box::new(error)))),
    };
    let parent_tree = match parent {
        Some(id) => Some(
            repo.find_commit(id)
                .map_err(|error| fail(Cause::gix(error)))?
                .tree_id()
                .map_err(|error| fail(Cause::gix(error)))?
                .detach(),
        ),
        None => None,
    };
    drop(repo);
    // The status writes odd names quoted (see `path_text`); git stages their real bytes.
    let names: Vec<gix::bstr::BString> = changed
        .paths
        .iter()
        .filter_map(|path| path_bytes(path))
        .map(|bytes| gix::bstr::BString::from(bytes.into_owned()))
        .collect();
    // In process where that applies (see `stage`); any failure there left the index as it was,
    // and git's plumbing does it.
    let staged = parent_tree
        .and_then(|parent| crate::stage::write_tree(git, worktree, &names, parent).ok())
        .flatten();
    let tree = match staged {
        Some(tree) => tree,
        None => {
            let mut paths = Vec::new();
            for name in &names {
                paths.extend_from_slice(name);
                paths.push(0);
            }
            git.cli
                .run_with_input(
                    worktree,
                    args!["update-index", "--add", "--remove", "-z", "--stdin"],
                    &paths,
                )
                .map_err(|error| fail(Cause::Cli(error)))?;
            let written = git
                .cli
                .run(worktree, args!["write-tree"])
                .map_err(|error| fail(Cause::Cli(error)))?;
            let printed = String::from_utf8_lossy(&written.stdout).trim().to_owned();
            printed.parse().map_err(|_| {
                fail(Cause::Io(std::io::Error::other(format!(
                    "git write-tree printed `{printed}`, not a tree id"
                ))))
            })?
        }
    };
    if parent_tree == Some(tree) {
        // Changes that undo each other, or stat data only.
        return Ok(CommitOutcome::NothingToCommit);
    }
    let message = clean_message(message);
    let parents: Vec<gix::ObjectId> = parent.into_iter().collect();
    let id = write_commit(git, worktree, tree, &parents, &message).map_err(fail)?;
    let subject = message.lines().next().unwrap_or_default();
    let reflog = if parent.is_some() {
        format!("commit: {subject}")
    } else {
        format!("commit (initial): {subject}")
    };
    // The old value makes the move fail, rather than drop a commit, if the branch moved since.
    crate::refs::update(git, worktree, "HEAD", id, parent, &reflog).map_err(fail)?;
    crate::status::committed(git, worktree, &changed.paths);
    Ok(CommitOutcome::Committed(CommitId(id)))
}

/// The message as `git commit -m` keeps it (its `whitespace` clean-up): no trailing
/// whitespace on a line, no blank lines at the start or the end, runs of blank lines as one,
/// and a final newline unless empty.
pub(crate) fn clean_message(message: &str) -> String {
    let mut out = String::new();
    let mut blank_run = false;
    for line in message.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run = !out.is_empty();
            continue;
        }
        if blank_run {
            out.push('\n');
            blank_run = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Writes the commit of `tree` on `parents` with `message` (as [`clean_message`] leaves it),
/// what `git commit-tree` writes: in process, with the pinned identity (see `pin`, `signature`) and the time
/// now in the local time zone. `git commit-tree` writes it where that could differ: epic's commits
/// are signed, a `GIT_AUTHOR_*` or `GIT_COMMITTER_*` variable names an identity or a date, the
/// configuration names an encoding for messages, or a name or an email has what git would trim
/// or refuse. One process less for every commit and merge of a story.
pub(crate) fn write_commit(
    git: &GixGit,
    worktree: &Path,
    tree: gix::ObjectId,
    parents: &[gix::ObjectId],
    message: &str,
) -> Result<gix::ObjectId, Cause> {
    if let Some([author, committer]) = plain_identity(git)? {
        let time = gix::date::Time::now_local_or_utc();
        let signature = |(name, email): (String, String)| gix::actor::Signature {
            name: name.into(),
            email: email.into(),
            time,
        };
        let commit = gix::objs::Commit {
            tree,
            parents: parents.iter().copied().collect(),
            author: signature(author),
            committer: signature(committer),
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let repo = git.repo_at(worktree)?;
        return Ok(repo.write_object(&commit).map_err(Cause::gix)?.detach());
    }
    let mut arguments: Vec<OsString> = vec!["commit-tree".into(), tree.to_string().into()];
    for parent in parents {
        arguments.extend(["-p".into(), parent.to_string().into()]);
    }
    if signs(git)? {
        arguments.push("-S".into());
    }
    arguments.extend(["-F".into(), "-".into()]);
    let arguments: Vec<&std::ffi::OsStr> = arguments.iter().map(OsString::as_os_str).collect();
    let made = git
        .cli
        .run_with_input(worktree, &arguments, message.as_bytes())?;
    let printed = String::from_utf8_lossy(&made.stdout).trim().to_owned();
    printed.parse().map_err(|_| {
        Cause::Io(std::io::Error::other(format!(
            "git commit-tree printed `{printed}`, not a commit id"
        )))
    })
}

/// Whether epic's commits are signed: `commit.gpgSign` as the configuration had it when the
/// handle pinned it (see `pin`), which `git commit` honours and `git commit-tree` only as `-S`.
/// A `commit.gpgSign` (or `gpg.program`) planted during a run changes nothing.
pub(crate) fn signs(git: &GixGit) -> Result<bool, Cause> {
    Ok(git.cli.pin()?.is_some_and(|pin| pin.sign()))
}

/// `git add -A` + `git commit`, for paths the plumbing way cannot name.
fn commit_all_porcelain(
    git: &GixGit,
    worktree: &Path,
    message: &str,
) -> Result<CommitOutcome, CommitError> {
    let fail = |source| CommitError::Failed {
        worktree: worktree.to_owned(),
        source,
    };
    git.cli
        .run(worktree, args!["add", "-A"])
        .map_err(|error| fail(Cause::Cli(error)))?;
    let arguments: Vec<OsString> = [
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty-message",
        "-m",
        message,
    ]
    .map(OsString::from)
    .into();
    let arguments: Vec<&std::ffi::OsStr> = arguments.iter().map(OsString::as_os_str).collect();
    let output = git
        .cli
        .output(worktree, &arguments)
        .map_err(|error| fail(Cause::Cli(error)))?;
    if !output.status.success() {
        let said = words(&output);
        if said.contains("nothing to commit") || said.contains("nothing added to commit") {
            return Ok(CommitOutcome::NothingToCommit);
        }
        return Err(fail(Cause::Cli(crate::cli::failure(&arguments, &output))));
    }
    let repo = git.repo_at(worktree).map_err(fail)?;
    let head = rev::head(&repo, worktree).map_err(|error| fail(Cause::Rev(Box::new(error))))?;
    Ok(CommitOutcome::Committed(CommitId(head)))
}
