//! A branch's own changes: the diff of a head against its merge base with a base (three-dot).
//!
//! The changed paths and the per-file changes with their added lines come from gix (merge base,
//! tree diff, blobs; no process); the unified text from `git diff`, since gix produces hunks but
//! not git's patch format with its headers.

use std::collections::HashMap;
use std::path::Path;

use gix::bstr::ByteSlice;
use gix::object::tree::diff::ChangeDetached;

use crate::cli::args;
use crate::error::{Cause, DiffError};
use crate::path_text::path_text;
use crate::repo::GixGit;
use crate::rev;
use crate::types::{BranchDiff, CommitId, FileChange, FileChangeKind, FileMode, Symlink};

/// The merge base, the head and the changed paths of `base...head`.
pub(crate) fn changed_paths(
    git: &GixGit,
    worktree: &Path,
    base: &str,
    head: &str,
) -> Result<(CommitId, CommitId, Vec<String>), DiffError> {
    let fail = failed(base, head);
    let repo = rev::open(git, worktree)?;
    let (merge_base, head_id) = ends(&repo, worktree, base, head)?;
    let paths = tree_paths(&repo, merge_base, head_id).map_err(|error| fail(Cause::gix(error)))?;
    Ok((CommitId(merge_base), CommitId(head_id), paths))
}

/// The error of a diff of `base...head` that failed for `source`.
pub(crate) fn failed<'a>(base: &'a str, head: &'a str) -> impl Fn(Cause) -> DiffError + 'a {
    move |source| DiffError::Failed {
        base: base.to_owned(),
        head: head.to_owned(),
        source,
    }
}

/// The merge base of `base` and `head`, and `head`, resolved in `repo`.
pub(crate) fn ends(
    repo: &gix::Repository,
    worktree: &Path,
    base: &str,
    head: &str,
) -> Result<(gix::ObjectId, gix::ObjectId), DiffError> {
    let base_id = rev::resolve(repo, worktree, base)?;
    let head_id = rev::resolve(repo, worktree, head)?;
    let merge_base = rev::merge_base(repo, base_id, head_id)
        .map_err(|error| failed(base, head)(Cause::Gix(error)))?
        .ok_or_else(|| DiffError::NoMergeBase {
            base: base.to_owned(),
            head: head.to_owned(),
        })?;
    Ok((merge_base, head_id))
}

/// What `head`'s own changes since its merge base with `base` do to each file, in path order,
/// with renames found as `git diff` finds them (`diff.renames`, on unless configured off), the
/// modes of both sides, the lines each change adds that `keep` keeps (see
/// [`FileChange::added`]), and both sides' whole content for the paths `hold` names.
pub(crate) fn file_changes(
    git: &GixGit,
    worktree: &Path,
    (base, head): (&str, &str),
    keep: &dyn Fn(&str) -> bool,
    hold: &dyn Fn(&str) -> bool,
) -> Result<Vec<FileChange>, DiffError> {
    let fail = failed(base, head);
    let repo = rev::open(git, worktree)?;
    let (merge_base, head_id) = ends(&repo, worktree, base, head)?;
    let changes = (|| -> Result<_, gix::Error> {
        let old = repo.find_commit(merge_base)?.tree()?;
        let new = repo.find_commit(head_id)?.tree()?;
        // `None`: the repository's diff configuration, renames included, as `git diff` has it.
        repo.diff_tree_to_tree(&old, &new, None::<gix::diff::Options>)
    })()
    .map_err(|error| fail(Cause::gix(error)))?;
    let mut files = Vec::new();
    for change in changes {
        if change.entry_mode().is_tree() {
            continue;
        }
        let path = path_text(change.location());
        let (kind, old, new): (FileChangeKind, Side, Side) = match &change {
            ChangeDetached::Addition { entry_mode, id, .. } => {
                (FileChangeKind::Added, None, Some((*entry_mode, *id)))
            }
            ChangeDetached::Deletion { entry_mode, id, .. } => {
                (FileChangeKind::Deleted, Some((*entry_mode, *id)), None)
            }
            ChangeDetached::Modification {
                previous_entry_mode,
                previous_id,
                entry_mode,
                id,
                ..
            } => (
                FileChangeKind::Modified,
                Some((*previous_entry_mode, *previous_id)),
                Some((*entry_mode, *id)),
            ),
            ChangeDetached::Rewrite {
                source_location,
                source_entry_mode,
                source_id,
                entry_mode,
                id,
                copy,
                ..
            } => {
                let from = path_text(source_location);
                let kind = if *copy {
                    FileChangeKind::Copied { from }
                } else {
                    FileChangeKind::Renamed { from }
                };
                (
                    kind,
                    Some((*source_entry_mode, *source_id)),
                    Some((*entry_mode, *id)),
                )
            }
        };
        let wanted = match &kind {
            FileChangeKind::Renamed { from } | FileChangeKind::Copied { from } => {
                hold(&path) || hold(from)
            }
            _ => hold(&path),
        };
        let (old_blob, new_blob) = (
            old.and_then(|(mode, id)| blob(mode, id)),
            new.and_then(|(mode, id)| blob(mode, id)),
        );
        let added = match new_blob {
            Some(new) => {
                added_lines(&repo, old_blob, new, keep).map_err(|error| fail(Cause::gix(error)))?
            }
            None => Vec::new(),
        };
        let content = |blob: Option<gix::ObjectId>| -> Result<Option<Vec<u8>>, DiffError> {
            match blob {
                Some(id) if wanted => repo
                    .find_object(id)
                    .map(|object| Some(object.detach().data))
                    .map_err(|error| fail(Cause::gix(error))),
                _ => Ok(None),
            }
        };
        files.push(FileChange {
            content: content(new_blob)?,
            previous_content: content(old_blob)?,
            mode: new.map(|(mode, _)| file_mode(mode)),
            previous_mode: old.map(|(mode, _)| file_mode(mode)),
            path,
            kind,
            added,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// One side of a file change: its tree entry's mode and object, if it has that side.
type Side = Option<(gix::object::tree::EntryMode, gix::ObjectId)>;

/// The blob of a tree entry that has lines (a file or a symbolic link), not a submodule's commit.
fn blob(mode: gix::object::tree::EntryMode, id: gix::ObjectId) -> Option<gix::ObjectId> {
    mode.is_blob_or_symlink().then_some(id)
}

/// The [`FileMode`] of a tree entry that is not a tree.
fn file_mode(mode: gix::object::tree::EntryMode) -> FileMode {
    use gix::object::tree::EntryKind;
    match mode.kind() {
        EntryKind::BlobExecutable => FileMode::Executable,
        EntryKind::Link => FileMode::Symlink,
        EntryKind::Commit => FileMode::Submodule,
        EntryKind::Blob | EntryKind::Tree => FileMode::File,
    }
}

/// Whether `data` is binary by git's rule: a NUL byte in its first 8,000 bytes. `git diff`
/// shows no lines of a binary file.
fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

/// The lines of blob `new` that `keep` keeps and that blob `old` does not have as often: a line
/// added, or one more copy of a line. A line only moved within the file is not added.
fn added_lines(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: gix::ObjectId,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<String>, gix::Error> {
    let new = repo.find_object(new)?.detach().data;
    if is_binary(&new) {
        return Ok(Vec::new());
    }
    let mut before: HashMap<String, usize> = HashMap::new();
    if let Some(old) = old {
        let old = repo.find_object(old)?.detach().data;
        if is_binary(&old) {
            return Ok(Vec::new());
        }
        for line in kept_lines(&old, keep) {
            *before.entry(line).or_default() += 1;
        }
    }
    let mut added = Vec::new();
    for line in kept_lines(&new, keep) {
        match before.get_mut(&line) {
            Some(count) if *count > 0 => *count -= 1,
            _ => added.push(line),
        }
    }
    Ok(added)
}

/// The lines of `data` that `keep` keeps, each without its line ending.
fn kept_lines<'a>(
    data: &'a [u8],
    keep: &'a dyn Fn(&str) -> bool,
) -> impl Iterator<Item = String> + 'a {
    data.lines()
        .map(|line| line.to_str_lossy())
        .filter(|line| keep(line))
        .map(std::borrow::Cow::into_owned)
}

/// The paths of the files that differ between the trees of two commits. Without rename
/// tracking a rename is a deletion and an addition: both paths, as wanted.
fn tree_paths(
    repo: &gix::Repository,
    old: gix::ObjectId,
    new: gix::ObjectId,
) -> Result<Vec<String>, gix::Error> {
    tree_paths_and_links(repo, old, new, false).map(|(paths, _)| paths)
}

/// The paths a diff of the trees of commits `old` and `new` touches, sorted; and, when `links`
/// is asked for, the symbolic links `new` has among them (added or changed), with their targets,
/// in path order. One tree diff for both, without rename tracking (a rename is its two paths).
pub(crate) fn tree_paths_and_links(
    repo: &gix::Repository,
    old: gix::ObjectId,
    new: gix::ObjectId,
    links: bool,
) -> Result<(Vec<String>, Vec<Symlink>), gix::Error> {
    let old = repo.find_commit(old)?.tree()?;
    let new = repo.find_commit(new)?.tree()?;
    let mut paths = Vec::new();
    let mut found = Vec::new();
    for change in plain_tree_changes(repo, &old, &new)? {
        // The path, its mode, and its object in `new` (none when deleted).
        let (path, mode, now) = match change {
            TreeChange::Addition {
                entry_mode,
                oid,
                path,
                ..
            }
            | TreeChange::Modification {
                entry_mode,
                oid,
                path,
                ..
            } => (path, entry_mode, Some(oid)),
            TreeChange::Deletion {
                entry_mode, path, ..
            } => (path, entry_mode, None),
        };
        if mode.is_tree() {
            continue;
        }
        paths.push(path_text(path.as_bstr()));
        if let Some(id) = now.filter(|_| links && mode.is_link()) {
            found.push(Symlink {
                path: path_text(path.as_bstr()),
                target: repo.find_blob(id)?.data.to_str_lossy().into_owned(),
            });
        }
    }
    paths.sort_unstable();
    paths.dedup();
    found.sort();
    Ok((paths, found))
}

/// One change between two trees, as [`plain_tree_changes`] records it.
pub(crate) type TreeChange = gix::diff::tree::recorder::Change;

/// The changes from tree `old` to tree `new` (trees themselves included, with their full
/// paths), without rename tracking: gix's plain tree diff. gix's `diff_tree_to_tree` also sets
/// up the blob cache rename tracking needs, which reads the worktree's whole index for its
/// attributes (some milliseconds on a tree of 10,000 files, each time the index changed) even
/// when it never compares a blob.
pub(crate) fn plain_tree_changes(
    repo: &gix::Repository,
    old: &gix::Tree<'_>,
    new: &gix::Tree<'_>,
) -> Result<Vec<TreeChange>, gix::Error> {
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old.data, old.id.kind()),
        gix::objs::TreeRefIter::from_bytes(&new.data, new.id.kind()),
        gix::diff::tree::State::default(),
        &repo.objects,
        &mut recorder,
    )
    .map_err(gix::Error::from_error)?;
    Ok(recorder.records)
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
                "--no-textconv",
                &merge_base.to_hex(),
                &head_id.to_hex(),
            ],
        )
        .map_err(|error| failed(base, head)(Cause::Cli(error)))?;
    Ok(BranchDiff {
        text: String::from_utf8_lossy(&output.stdout).into_owned(),
        paths,
    })
}
