//! Staging a commit's paths and writing its tree in process: what `git update-index --add
//! --remove` of those paths and `git write-tree` do, for the case a story's commit meets.
//!
//! On a tree of 10,000 files each of the two commands reads and writes the whole index (some
//! 6 ms of CPU each). Here the index is read and written once, only the changed files are read
//! (through the repository's filters, as git reads a file to add it) and written as blobs, the
//! tree is the parent's with those paths edited (only the subtrees on their way are rewritten),
//! and the index's cached tree is rebuilt from it reusing the unchanged subtrees.
//!
//! It applies to plain files and deletions in an index that is exactly the parent commit's tree
//! (nothing staged, no conflicted, sparse, skip-worktree, intent-to-add or assume-unchanged
//! entry, not split), in an epic linked worktree whose configuration tracks executable bits and
//! symbolic links on a case-sensitive file system, without `core.safecrlf` or
//! `core.sharedRepository` (the same conditions as `advance`'s). Anything else, a symbolic
//! link, a directory, a pipe or a device, a file over 32 MiB (git streams it), a submodule, a
//! `.gitattributes` among the paths (it changes how the others are read), a path changing
//! between file and directory or under a link planted where a directory was, declines with the
//! index untouched, and the caller runs git's plumbing.

use std::collections::HashSet;
use std::path::Path;

use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage};
use gix::objs::tree::EntryKind;

use crate::advance::{OnDisk, cache_tree, index_writable, look, on_disk, unsupported};
use crate::error::Cause;
use crate::monitor::{Kind, Meta};
use crate::repo::GixGit;

/// The largest file staged in process, read whole into memory; a larger one goes to git, which
/// streams it (`core.bigFileThreshold`).
const IN_MEMORY: u64 = 32 << 20;

/// Stages `paths` (repository-relative, as the status named them) of the worktree at
/// `worktree`, whose index is the tree `parent`, and writes the tree: its id, or `None` where
/// this does not apply (nothing was written to the index).
pub(crate) fn write_tree(
    git: &GixGit,
    worktree: &Path,
    paths: &[BString],
    parent: gix::ObjectId,
) -> Result<Option<gix::ObjectId>, Cause> {
    let repo = git.repo_at(worktree)?;
    let Ok((workdir, options)) = index_writable(&repo) else {
        return Ok(None);
    };
    if !options.executable_bit || !options.symlinks {
        return Ok(None);
    }
    // `core.safecrlf` may make git refuse (or warn about) a file whose line endings would not
    // come back as they are: git's own staging says so.
    let safecrlf = repo.config_snapshot().string("core.safecrlf").is_some();
    if safecrlf || !plain_paths(paths) {
        return Ok(None);
    }
    let mut index = crate::kept_index::owned(git, &repo)?;
    if unsupported(&index, parent).is_some() {
        return Ok(None);
    }
    let mut reader = crate::scan::Reader::new(&repo);
    let mut editor = crate::tree_edit::TreeEdit::of(&repo, parent)?;
    let mut added = Vec::new();
    let mut removed = HashSet::new();
    for path in paths {
        let entry = index.entry_index_by_path_and_stage(path.as_bstr(), Stage::Unconflicted);
        if entry.is_some_and(|at| index.entries()[at].mode == Mode::COMMIT) {
            return Ok(None);
        }
        let metadata = match look(&workdir, path.as_bstr())? {
            OnDisk::Present(metadata) => metadata,
            OnDisk::Absent => {
                if entry.is_some() {
                    editor.remove(path.as_bstr())?;
                    removed.insert(path.as_bstr());
                }
                continue;
            }
            // Never read through a link planted where a directory was (git refuses such paths).
            OnDisk::Blocked => return Ok(None),
        };
        // Stat data before the content: a write in between shows as a change at the next status.
        let meta = Meta::of(&metadata);
        // A pipe or a device is not read at all; a large file is git's to stream.
        if meta.kind != Kind::File || metadata.len() > IN_MEMORY {
            return Ok(None);
        }
        // Through the repository's filters, as git reads a file to add it.
        let file = on_disk(&workdir, path.as_bstr())?;
        let Some(data) = reader.read(&index, &file, path.as_bstr(), false) else {
            return Ok(None);
        };
        let id = repo.write_blob(&data)?.detach();
        let (kind, mode) = if meta.executable {
            (EntryKind::BlobExecutable, Mode::FILE_EXECUTABLE)
        } else {
            (EntryKind::Blob, Mode::FILE)
        };
        editor.upsert(path.as_bstr(), kind, id)?;
        match entry {
            Some(at) => {
                let entry = &mut index.entries_mut()[at];
                entry.id = id;
                entry.mode = mode;
                entry.stat = meta.stat;
            }
            None => added.push((path, id, mode, meta.stat)),
        }
    }
    let tree = editor.write()?;
    // Each pass over all the entries only where it has something to do.
    if !removed.is_empty() {
        index.remove_entries(|_, path, _| removed.contains(path));
    }
    if !added.is_empty() {
        for (path, id, mode, stat) in added {
            index.dangerously_push_entry(stat, id, Flags::empty(), mode, path.as_bstr());
        }
        index.sort_entries();
    }
    let cached = cache_tree(&repo, tree, &[], index.tree())?;
    if cached.num_entries != u32::try_from(index.entries().len()).ok() {
        // The index and the tree disagree: git decides (nothing was written yet).
        return Ok(None);
    }
    if let Some(old) = index.tree_mut() {
        *old = cached;
    }
    crate::kept_index::write(git, &repo, index)?;
    Ok(Some(tree))
}

/// Whether no path is `.gitattributes` (it changes how the others are read) or a directory of
/// another (a path changing between file and directory).
fn plain_paths(paths: &[BString]) -> bool {
    let all: HashSet<&BStr> = paths.iter().map(|path| path.as_bstr()).collect();
    paths.iter().all(|path| {
        let name = path.rsplit_str("/").next().unwrap_or_default();
        name != b".gitattributes"
            && !path
                .rfind_iter("/")
                .any(|slash| all.contains(path[..slash].as_bstr()))
    })
}
