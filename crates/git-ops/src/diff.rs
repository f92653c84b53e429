//! A branch's own changes: the diff of a head against its merge base with a base (three-dot).
//!
//! The changed paths come from gix (merge base and tree diff, no process); the unified text from
//! `git diff`, since gix produces hunks but not git's patch format with its headers.

use std::path::Path;

use gix::bstr::ByteSlice;

use crate::cli::args;
use crate::error::{Cause, DiffError};
use crate::repo::GixGit;
use crate::rev;
use crate::types::{BranchDiff, CommitId};

/// The merge base, the head and the changed paths of `base...head`.
pub(crate) fn changed_paths(
    git: &GixGit,
    worktree: &Path,
    base: &str,
    head: &str,
) -> Result<(CommitId, CommitId, Vec<String>), DiffError> {
    let fail = |source| DiffError::Failed {
        base: base.to_owned(),
        head: head.to_owned(),
        source,
    };
    let repo = rev::open(git, worktree)?;
    let base_id = rev::resolve(&repo, worktree, base)?;
    let head_id = rev::resolve(&repo, worktree, head)?;
    let merge_base = repo
        .merge_base(base_id, head_id)
        .map_err(|error| fail(Cause::gix(error)))?
        .ok_or_else(|| DiffError::NoMergeBase {
            base: base.to_owned(),
            head: head.to_owned(),
        })?
        .detach();
    let paths = tree_paths(&repo, merge_base, head_id).map_err(|error| fail(Cause::gix(error)))?;
    Ok((CommitId(merge_base), CommitId(head_id), paths))
}

/// The paths of the files that differ between the trees of two commits. Without rename
/// tracking a rename is a deletion and an addition: both paths, as wanted.
fn tree_paths(
    repo: &gix::Repository,
    old: gix::ObjectId,
    new: gix::ObjectId,
) -> Result<Vec<String>, gix::Error> {
    let old = repo.find_commit(old)?.tree()?;
    let new = repo.find_commit(new)?.tree()?;
    let changes = repo.diff_tree_to_tree(&old, &new, gix::diff::Options::default())?;
    let mut paths = Vec::new();
    for change in &changes {
        if change.entry_mode().is_tree() {
            continue;
        }
        paths.push(change.location().to_str_lossy().into_owned());
        let source = change.source_location();
        if source != change.location() {
            paths.push(source.to_str_lossy().into_owned());
        }
    }
    paths.sort_unstable();
    paths.dedup();
    Ok(paths)
}

pub(crate) fn diff_vs_base(
    git: &GixGit,
    worktree: &Path,
    base: &str,
    head: &str,
) -> Result<BranchDiff, DiffError> {
    let (merge_base, head_id, paths) = changed_paths(git, worktree, base, head)?;
    let output = git
        .cli
        .run(
            worktree,
            args![
                "diff",
                "--no-color",
                "--no-ext-diff",
                &merge_base.to_hex(),
                &head_id.to_hex(),
            ],
        )
        .map_err(|error| DiffError::Failed {
            base: base.to_owned(),
            head: head.to_owned(),
            source: Cause::Cli(error),
        })?;
    Ok(BranchDiff {
        text: String::from_utf8_lossy(&output.stdout).into_owned(),
        paths,
    })
}
