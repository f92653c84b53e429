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

impl GixGit {
    /// The files tracked in the index of `worktree` (any directory of a worktree of this
    /// repository), sorted, as repo-relative `/`-separated text; a name git can only show quoted
    /// is shown as git quotes it. What `epic plan` shows the architect of the repository.
    pub fn tracked_files(&self, worktree: &Path) -> Result<Vec<String>, RevError> {
        let repo = open(self, worktree)?;
        let index = repo.index_or_empty().map_err(|error| RevError::Read {
            worktree: worktree.to_owned(),
            source: Cause::gix(error),
        })?;
        Ok(index
            .entries()
            .iter()
            .map(|entry| crate::path_text::path_text(entry.path(&index)))
            .collect())
    }
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
    // A whole object id is that object, as git reads it (before any ref of that name): gix
    // would look it up as a prefix, listing a directory of loose objects that grows with
    // every commit.
    if rev.len() == repo.object_hash().len_in_hex()
        && let Ok(id) = gix::ObjectId::from_hex(rev.as_bytes())
    {
        let object = repo
            .find_object(id)
            .map_err(|error| not_found(Cause::gix(error)))?;
        let commit = object
            .peel_to_commit()
            .map_err(|error| not_found(Cause::gix(error)))?;
        return Ok(commit.id);
    }
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

/// Whether `ancestor` is reachable from `descendant` (or is it), walked by generation
/// (`generation.rs`). gix's own merge bases could keep a common ancestor that another one
/// reaches, and put it first, when commits share a timestamp (commits made within one second, as
/// epic's are: a story's last commit, the epic's merge of it), so an ancestor looked like none;
/// the test `merge_bases_of_commits_made_within_one_second_are_gits` builds such a history.
pub(crate) fn ancestor_of(
    repo: &gix::Repository,
    worktree: &Path,
    ancestor: gix::ObjectId,
    descendant: gix::ObjectId,
) -> Result<bool, RevError> {
    crate::generation::reaches(repo, descendant, ancestor).map_err(|source| RevError::Read {
        worktree: worktree.to_owned(),
        source: Cause::Gix(source),
    })
}

/// The merge base `git merge-base one two` gives: the newest of the best common ancestors (none
/// of which reaches another, see `generation.rs`); `None` for unrelated histories.
pub(crate) fn merge_base(
    repo: &gix::Repository,
    one: gix::ObjectId,
    two: gix::ObjectId,
) -> Result<Option<gix::ObjectId>, gix::Error> {
    Ok(crate::generation::merge_bases(repo, one, two)?
        .first()
        .copied())
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
