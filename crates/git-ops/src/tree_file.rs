//! Reading one path of a commit's tree, in process with gix (tree entries and one blob, no
//! process): what the executor checks a judge's evidence against, on the proven epic head
//! rather than in a worktree an agent can write.

use std::path::Path;

use crate::error::{Cause, RevError};
use crate::repo::GixGit;
use crate::rev;
use crate::types::TreeFile;

/// The entry at `path` (repo-relative, `/`-separated; empty and `.` segments skipped) of the
/// tree of `rev`, resolved in `worktree`'s repository. The empty path is the root directory.
pub(crate) fn tree_file(
    git: &GixGit,
    worktree: &Path,
    rev: &str,
    path: &str,
) -> Result<TreeFile, RevError> {
    let repo = rev::open(git, worktree)?;
    let id = rev::resolve(&repo, worktree, rev)?;
    let read = |error: gix::Error| RevError::Read {
        worktree: worktree.to_owned(),
        source: Cause::gix(error),
    };
    let mut tree = repo.find_commit(id).map_err(read)?.tree().map_err(read)?;
    let mut segments = path
        .split('/')
        .filter(|segment| !segment.is_empty() && *segment != ".")
        .peekable();
    while let Some(segment) = segments.next() {
        let Some((mode, id)) = tree
            .find_entry(segment)
            .map(|entry| (entry.mode(), entry.object_id()))
        else {
            return Ok(TreeFile::Missing);
        };
        let last = segments.peek().is_none();
        if mode.is_tree() {
            tree = repo.find_tree(id).map_err(read)?;
            continue;
        }
        if !last {
            // A file, link or submodule is no directory: nothing lies below it.
            return Ok(TreeFile::Missing);
        }
        return Ok(if mode.is_link() {
            let blob = repo.find_blob(id).map_err(read)?;
            TreeFile::Link(String::from_utf8_lossy(&blob.data).into_owned())
        } else if mode.is_commit() {
            TreeFile::Submodule
        } else {
            TreeFile::File(repo.find_blob(id).map_err(read)?.take_data())
        });
    }
    Ok(TreeFile::Directory)
}
