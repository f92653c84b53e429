//! Symbolic links: those a branch's own changes add or change (with its changed paths) and those on the way to given
//! paths (in trees, in process with gix: tree entries and blobs, no process), and those among
//! given paths of a worktree (the files themselves, committed or not).

use std::collections::BTreeMap;
use std::path::Path;

use gix::bstr::ByteSlice;

use crate::diff::{ends, failed, tree_paths_and_links};
use crate::error::{Cause, DiffError, RevError, StatusError};
use crate::repo::GixGit;
use crate::rev;
use crate::types::Symlink;

/// The changed paths of `base...head`, and those of them that `head` has as symbolic links,
/// with their targets: one tree diff.
pub(crate) fn changed(
    git: &GixGit,
    worktree: &Path,
    base: &str,
    head: &str,
) -> Result<(Vec<String>, Vec<Symlink>), DiffError> {
    let repo = rev::open(git, worktree)?;
    let (merge_base, head_id) = ends(&repo, worktree, base, head)?;
    tree_paths_and_links(&repo, merge_base, head_id, true)
        .map_err(|error| failed(base, head)(Cause::gix(error)))
}

/// The symbolic links of `rev`'s tree that are one of `paths` or a directory above one.
pub(crate) fn along(
    git: &GixGit,
    worktree: &Path,
    rev: &str,
    paths: &[&str],
) -> Result<Vec<Symlink>, RevError> {
    let repo = rev::open(git, worktree)?;
    let id = rev::resolve(&repo, worktree, rev)?;
    let read = |error: gix::Error| RevError::Read {
        worktree: worktree.to_owned(),
        source: Cause::gix(error),
    };
    let root = repo.find_commit(id).map_err(read)?.tree().map_err(read)?;
    // By path, so a link above several of the paths is listed once, and the list is sorted.
    let mut found = BTreeMap::new();
    for path in paths {
        let mut tree = root.clone();
        let mut so_far = String::new();
        for segment in path.split('/').filter(|s| !s.is_empty() && *s != ".") {
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(segment);
            let Some((mode, id)) = tree
                .find_entry(segment)
                .map(|entry| (entry.mode(), entry.object_id()))
            else {
                break;
            };
            if mode.is_link() {
                if !found.contains_key(&so_far) {
                    let target = target(&repo, id).map_err(read)?;
                    found.insert(so_far.clone(), target);
                }
                break;
            }
            if !mode.is_tree() {
                break;
            }
            tree = repo.find_tree(id).map_err(read)?;
        }
    }
    Ok(found
        .into_iter()
        .map(|(path, target)| Symlink { path, target })
        .collect())
}

/// The paths among `paths` that are symbolic links in `worktree`'s files, with their targets.
pub(crate) fn in_worktree(worktree: &Path, paths: &[&str]) -> Result<Vec<Symlink>, StatusError> {
    let failed = |source: std::io::Error| StatusError::Read {
        worktree: worktree.to_owned(),
        source: Cause::Io(source),
    };
    let mut links = Vec::new();
    for path in paths {
        let file = worktree.join(path);
        match std::fs::symlink_metadata(&file) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&file).map_err(failed)?;
                links.push(Symlink {
                    path: (*path).to_owned(),
                    target: target.to_string_lossy().into_owned(),
                });
            }
            Ok(_) => {}
            // Deleted, or under a path that is no directory any more: no link there.
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(error) => return Err(failed(error)),
        }
    }
    links.sort();
    links.dedup();
    Ok(links)
}

/// The target of the symbolic link whose blob is `id`.
fn target(repo: &gix::Repository, id: gix::ObjectId) -> Result<String, gix::Error> {
    let blob = repo.find_blob(id)?;
    Ok(blob.data.to_str_lossy().into_owned())
}
