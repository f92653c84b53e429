//! Reads of revisions with gix: rev-parse, is-ancestor, the current branch, worktree roots.

use std::path::{Path, PathBuf};

use crate::error::{Cause, RevError};
use crate::repo::{GixGit, Handle};
use crate::types::CommitId;

pub(crate) fn open<'a>(git: &'a GixGit, worktree: &Path) -> Result<Handle<'a>, RevError> {
    git.repo_at(worktree).map_err(|source| RevError::Open {
        worktree: worktree.to_owned(),
        source,
    })
}

pub(crate) fn worktree_root(git: &GixGit, dir: &Path) -> Result<PathBuf, RevError> {
    let repo = open(git, dir)?;
    repo.workdir()
        .map(Path::to_owned)
        .ok_or_else(|| RevError::Open {
            worktree: dir.to_owned(),
            source: Cause::Io(std::io::Error::other("the repository is bare")),
        })
}

/// Resolves `rev` to a commit in `repo`; `worktree` only names the place in errors.
pub(crate) fn resolve(
    repo: &gix::Repository,
    worktree: &Path,
    rev: &str,
) -> Result<gix::ObjectId, RevError> {
    if rev == "HEAD" || rev == "@" {
        return head(repo, worktree);
    }
    let not_found = |source: Cause| RevError::NotFound {
        rev: rev.to_owned(),
        source,
    };
    let id = repo.rev_parse_single(rev).map_err(|error| {
        if is_unborn(repo) && rev.starts_with("HEAD") {
            RevError::Unborn {
                worktree: worktree.to_owned(),
            }
        } else {
            not_found(Cause::gix(error))
        }
    })?;
    let object = id.object().map_err(|error| not_found(Cause::gix(error)))?;
    let commit = object
        .peel_to_commit()
        .map_err(|error| not_found(Cause::gix(error)))?;
    Ok(commit.id)
}

fn is_unborn(repo: &gix::Repository) -> bool {
    repo.head().is_ok_and(|head| head.is_unborn())
}

/// The head commit of `repo`, or [`RevError::Unborn`].
pub(crate) fn head(repo: &gix::Repository, worktree: &Path) -> Result<gix::ObjectId, RevError> {
    let head = repo.head().map_err(|error| RevError::Read {
        worktree: worktree.to_owned(),
        source: Cause::gix(error),
    })?;
    if head.is_unborn() {
        return Err(RevError::Unborn {
            worktree: worktree.to_owned(),
        });
    }
    let commit = repo.head_commit().map_err(|error| RevError::Read {
        worktree: worktree.to_owned(),
        source: Cause::gix(error),
    })?;
    Ok(commit.id)
}

pub(crate) fn rev_parse(git: &GixGit, worktree: &Path, rev: &str) -> Result<CommitId, RevError> {
    let repo = open(git, worktree)?;
    resolve(&repo, worktree, rev).map(CommitId)
}

pub(crate) fn is_ancestor(
    git: &GixGit,
    worktree: &Path,
    ancestor: &str,
    descendant: &str,
) -> Result<bool, RevError> {
    let repo = open(git, worktree)?;
    let ancestor = resolve(&repo, worktree, ancestor)?;
    let descendant = resolve(&repo, worktree, descendant)?;
    ancestor_of(&repo, worktree, ancestor, descendant)
}

pub(crate) fn on_first_parent_line(
    git: &GixGit,
    worktree: &Path,
    commit: &CommitId,
    tip: &str,
) -> Result<bool, RevError> {
    let repo = open(git, worktree)?;
    let tip = resolve(&repo, worktree, tip)?;
    // Not an ancestor at all: no need to walk the line down to its root.
    if !ancestor_of(&repo, worktree, commit.0, tip)? {
        return Ok(false);
    }
    let read = |source| RevError::Read {
        worktree: worktree.to_owned(),
        source,
    };
    let mut at = tip;
    loop {
        if at == commit.0 {
            return Ok(true);
        }
        let found = repo
            .find_commit(at)
            .map_err(|error| read(Cause::gix(error)))?;
        let Some(parent) = found.parent_ids().next() else {
            return Ok(false);
        };
        at = parent.detach();
    }
}

/// Whether `ancestor` is reachable from `descendant` (or is it).
pub(crate) fn ancestor_of(
    repo: &gix::Repository,
    worktree: &Path,
    ancestor: gix::ObjectId,
    descendant: gix::ObjectId,
) -> Result<bool, RevError> {
    if ancestor == descendant {
        return Ok(true);
    }
    // The merge base of an ancestor and its descendant is the ancestor itself, and only then.
    let base = repo
        .merge_base(ancestor, descendant)
        .map_err(|error| RevError::Read {
            worktree: worktree.to_owned(),
            source: Cause::gix(error),
        })?;
    Ok(base.is_some_and(|base| base.detach() == ancestor))
}

pub(crate) fn current_branch(git: &GixGit, worktree: &Path) -> Result<Option<String>, RevError> {
    let repo = open(git, worktree)?;
    let name = repo.head_name().map_err(|error| RevError::Read {
        worktree: worktree.to_owned(),
        source: Cause::gix(error),
    })?;
    Ok(name.and_then(|name| {
        let short = name.as_bstr().strip_prefix(b"refs/heads/")?;
        Some(String::from_utf8_lossy(short).into_owned())
    }))
}
