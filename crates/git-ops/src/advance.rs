//! Moving a clean worktree from one commit's tree to another's in process: what `git read-tree
//! -m -u FROM TO` does, for the case epic meets after almost every story.
//!
//! A slot switched to the next story's branch at the epic head, and the epic worktree brought
//! up to each merge, differ from where they were by a few files (the stories merged since), but
//! git's two-tree read walks both trees and the whole index (on a tree of 10,000 files some
//! 12 ms of CPU, and a slot's `checkout --force` stats every file too, some 20 ms). Here only
//! the trees that differ are read, only the files that differ are touched, and the index is read
//! and written once.
//!
//! It applies where nothing can surprise it, and declines ([`Advance::Declined`], before it has
//! touched anything) everywhere else, where the caller runs git: the index must be the one of
//! `from` exactly (its cached tree complete and equal to `from`'s tree: nothing staged), hold no
//! conflict, sparse, skip-worktree, intent-to-add or assume-unchanged entry and not be split;
//! every file to be rewritten or deleted must be unchanged since the index was written (by its
//! stat data, or as a status read it, see `scan::Verified`); nothing may stand where a new file
//! goes (an untracked or ignored file, a symbolic link on the way); no path may change between
//! file and directory, and no submodule may change; the file system must be case-sensitive.
//! Only epic's linked worktrees are moved this way: the main checkout's index is the user's.
//!
//! Files are written by gix's checkout, through the repository's filters and attributes, as a
//! clone writes them; the index keeps every untouched entry's stat data, gets a cached tree
//! built from `to`'s tree objects (reusing the old one's unchanged subtrees), and is written
//! without its checksum, as epic's git writes a linked worktree's index (see `cli`).

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;

use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage, Stat};
use gix::index::extension::Tree;

use crate::diff::TreeChange;
use crate::error::Cause;
use crate::monitor::{Kind, Meta};
use crate::repo::GixGit;
use crate::scan::{Options, Unchanged};

/// How [`advance`] went.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Advance {
    /// The worktree's files and index are `to`'s.
    Done,
    /// Nothing was touched; why git has to do it.
    Declined(&'static str),
}

/// Entries whose worktree file git would not write, or whose index state the move would drop.
const DECLINED_FLAGS: Flags = Flags::SKIP_WORKTREE
    .union(Flags::INTENT_TO_ADD)
    .union(Flags::ASSUME_VALID);

/// Moves the worktree at `worktree`, whose index is commit `from`'s tree, to commit `to`'s tree:
/// the files that differ rewritten or deleted, the index written. Its `HEAD` is left to the
/// caller. An error after files were touched leaves the worktree between the two trees, which
/// every caller repairs with git (a forced checkout, a reset).
pub(crate) fn advance(
    git: &GixGit,
    worktree: &Path,
    from: gix::ObjectId,
    to: gix::ObjectId,
) -> Result<Advance, Cause> {
    use Advance::Declined;

    let repo = git.repo_at(worktree)?;
    let (workdir, options) = match index_writable(&repo) {
        Ok(found) => found,
        Err(why) => return Ok(Declined(why)),
    };
    let tree_of = |commit: gix::ObjectId| -> Result<gix::Tree<'_>, gix::Error> {
        repo.find_commit(commit)?
            .tree()
            .map_err(gix::Error::from_error)
    };
    let (from_tree, to_tree) = (tree_of(from)?, tree_of(to)?);
    let mut index = crate::kept_index::owned(git, &repo)?;
    if let Some(why) = unsupported(&index, from_tree.id) {
        return Ok(Declined(why));
    }
    let changes = match Changes::between(&repo, &from_tree, &to_tree)? {
        Ok(changes) => changes,
        Err(why) => return Ok(Declined(why)),
    };
    // Read once: the paths they validate, the filters and attributes the writes go through.
    let checkout =
        repo.checkout_options(gix::worktree::stack::state::attributes::Source::IdMapping)?;
    let validate = checkout.validate;
    if let Some(why) = in_the_way(git, &repo, &workdir, &index, options, validate, &changes)? {
        return Ok(Declined(why));
    }
    let tree = cache_tree(&repo, to_tree.id, &[], index.tree())?;
    if let Some(why) = rewrite_entries(&mut index, &changes, &tree) {
        return Ok(Declined(why));
    }
    // The worktree: deletions first (a directory may give way to a file), then the writes.
    remove(&workdir, &changes.removed)?;
    write_files(&repo, &mut index, &workdir, checkout)?;
    if let Some(cached) = index.tree_mut() {
        *cached = tree;
    }
    crate::kept_index::write(git, &repo, index)?;
    Ok(Advance::Done)
}

/// The worktree of `repo` and how its files compare, where epic may write its index in process
/// (the move here, the staging of `stage`); why not otherwise: a bare repository, the main
/// checkout (its index is the user's), a configuration that does not read, a case-insensitive
/// file system, or `core.sharedRepository` (git writes the index with the permissions it asks
/// for; `kept_index` writes with the process's umask).
pub(crate) fn index_writable(repo: &gix::Repository) -> Result<(PathBuf, Options), &'static str> {
    let workdir = repo.workdir().ok_or("a bare repository")?.to_owned();
    if !workdir.join(".git").is_file() {
        return Err("the main checkout");
    }
    let options = Options::of(repo).ok_or("the configuration of file comparisons does not read")?;
    if options.case_folds {
        return Err("a case-insensitive file system");
    }
    if repo
        .config_snapshot()
        .string("core.sharedRepository")
        .is_some()
    {
        return Err("a shared repository's permissions");
    }
    Ok((workdir, options))
}

/// The index of `to` in memory: removed entries dropped, changed ones given their new blob and
/// mode (and no stat data, which the checkout supplies), new ones added; every entry but the
/// written ones marked skip-worktree for the checkout. Why not, if the new cached `tree` does
/// not count the result's entries.
fn rewrite_entries(
    index: &mut gix::index::File,
    changes: &Changes,
    tree: &Tree,
) -> Option<&'static str> {
    // Each pass below over all the entries only where it has something to do.
    if !changes.removed.is_empty() {
        let removed: HashSet<&BStr> = changes.removed.iter().map(|path| path.as_bstr()).collect();
        index.remove_entries(|_, path, _| removed.contains(path));
    }
    let mut added = Vec::new();
    for (path, id, mode) in &changes.written {
        match index.entry_mut_by_path_and_stage(path.as_bstr(), Stage::Unconflicted) {
            Some(entry) => {
                entry.id = *id;
                entry.mode = *mode;
                entry.stat = Stat::default();
            }
            None => added.push((path, id, mode)),
        }
    }
    if !added.is_empty() {
        for (path, id, mode) in added {
            index.dangerously_push_entry(
                Stat::default(),
                *id,
                Flags::empty(),
                *mode,
                path.as_bstr(),
            );
        }
        index.sort_entries();
    }
    if tree.num_entries != u32::try_from(index.entries().len()).ok() {
        return Some("the new tree does not count the new index's entries");
    }
    // Checkout writes every entry it is given but these: all marked, then the written ones
    // found by path (a set of the written paths would hash every entry's path).
    for entry in index.entries_mut() {
        entry.flags.insert(Flags::SKIP_WORKTREE);
    }
    for (path, ..) in &changes.written {
        if let Some(entry) = index.entry_mut_by_path_and_stage(path.as_bstr(), Stage::Unconflicted)
        {
            entry.flags.remove(Flags::SKIP_WORKTREE);
        }
    }
    None
}

/// Writes the entries of `index` not marked skip-worktree into `workdir` with gix's checkout
/// (filters, attributes, symbolic links, executable bits), which also records their stat data;
/// then clears the marks.
fn write_files(
    repo: &gix::Repository,
    index: &mut gix::index::File,
    workdir: &Path,
    mut checkout: gix::worktree::state::checkout::Options,
) -> Result<(), Cause> {
    checkout.destination_is_initially_empty = false;
    // What is overwritten was proven unchanged before.
    checkout.overwrite_existing = true;
    checkout.thread_limit = Some(1);
    let objects = repo.objects.clone().into_arc().map_err(io::Error::other)?;
    let outcome = gix::worktree::state::checkout(
        index,
        workdir,
        objects,
        &gix::progress::Discard,
        &gix::progress::Discard,
        &AtomicBool::new(false),
        checkout,
    )?;
    if let Some(error) = outcome.errors.first() {
        return Err(Cause::Io(io::Error::other(format!(
            "could not write `{}`: {}",
            error.path, error.error
        ))));
    }
    if let Some(collision) = outcome.collisions.first() {
        return Err(Cause::Io(io::Error::other(format!(
            "could not write `{}`: something else is there",
            collision.path
        ))));
    }
    for entry in index.entries_mut() {
        entry.flags.remove(Flags::SKIP_WORKTREE);
    }
    Ok(())
}

/// Why the index at hand is not one [`advance`] handles, if it is not: it must be exactly the
/// tree `from` (complete cached tree, equal), unconflicted, full, unsplit, plain entries only.
pub(crate) fn unsupported(index: &gix::index::State, from: gix::ObjectId) -> Option<&'static str> {
    if index.link().is_some() {
        return Some("a split index");
    }
    if index.is_sparse() {
        return Some("a sparse index");
    }
    let complete = index.tree().is_some_and(|tree| {
        tree.id == from
            && tree.num_entries.and_then(|n| usize::try_from(n).ok()) == Some(index.entries().len())
    });
    if !complete {
        return Some("the index is not exactly the current commit's tree");
    }
    if index
        .entries()
        .iter()
        .any(|entry| entry.stage_raw() != 0 || entry.flags.intersects(DECLINED_FLAGS))
    {
        return Some("a conflicted, skip-worktree, intent-to-add or assume-unchanged entry");
    }
    None
}

/// The file-level changes from one tree to the other.
#[derive(Debug, Default)]
struct Changes {
    /// Files (and symbolic links) that go.
    removed: Vec<BString>,
    /// Files that come or change: path, blob, mode.
    written: Vec<(BString, gix::ObjectId, Mode)>,
    /// Of `written`, those that change (the rest are new).
    modified: HashSet<BString>,
}

impl Changes {
    /// The changes, or why [`advance`] does not handle them: a submodule, or a path that is a
    /// file on one side and a directory on the other.
    fn between(
        repo: &gix::Repository,
        from: &gix::Tree<'_>,
        to: &gix::Tree<'_>,
    ) -> Result<Result<Self, &'static str>, gix::Error> {
        let mut changes = Self::default();
        for change in crate::diff::plain_tree_changes(repo, from, to)? {
            match change {
                TreeChange::Addition {
                    entry_mode,
                    oid,
                    path,
                    ..
                } => {
                    if entry_mode.is_tree() {
                        continue;
                    }
                    let Some(mode) = mode_of(entry_mode) else {
                        return Ok(Err("a submodule changes"));
                    };
                    changes.written.push((path, oid, mode));
                }
                TreeChange::Deletion {
                    entry_mode, path, ..
                } => {
                    if entry_mode.is_tree() {
                        continue;
                    }
                    if mode_of(entry_mode).is_none() {
                        return Ok(Err("a submodule changes"));
                    }
                    changes.removed.push(path);
                }
                TreeChange::Modification {
                    previous_entry_mode,
                    entry_mode,
                    oid,
                    path,
                    ..
                } => {
                    if previous_entry_mode.is_tree() != entry_mode.is_tree() {
                        return Ok(Err("a path changes between file and directory"));
                    }
                    if entry_mode.is_tree() {
                        continue;
                    }
                    let (Some(_), Some(mode)) = (mode_of(previous_entry_mode), mode_of(entry_mode))
                    else {
                        return Ok(Err("a submodule changes"));
                    };
                    changes.modified.insert(path.clone());
                    changes.written.push((path, oid, mode));
                }
            }
        }
        // A path on both sides, or a file where the other side has a directory, is a type
        // change: git's business.
        let mut paths: HashSet<&BStr> = HashSet::new();
        let all = changes
            .removed
            .iter()
            .chain(changes.written.iter().map(|(path, ..)| path));
        for path in all {
            if !paths.insert(path.as_bstr()) {
                return Ok(Err("a path changes type"));
            }
        }
        let all = changes
            .removed
            .iter()
            .chain(changes.written.iter().map(|(path, ..)| path));
        for path in all {
            let mut dirs = path.rfind_iter("/").map(|slash| &path[..slash]);
            if dirs.any(|dir| paths.contains(dir.as_bstr())) {
                return Ok(Err("a path changes between file and directory"));
            }
        }
        Ok(Ok(changes))
    }
}

/// The index mode of a tree entry's mode; `None` for a submodule (and a tree).
fn mode_of(mode: gix::objs::tree::EntryMode) -> Option<Mode> {
    use gix::objs::tree::EntryKind;
    match mode.kind() {
        EntryKind::Blob => Some(Mode::FILE),
        EntryKind::BlobExecutable => Some(Mode::FILE_EXECUTABLE),
        EntryKind::Link => Some(Mode::SYMLINK),
        EntryKind::Commit | EntryKind::Tree => None,
    }
}

/// Why the worktree is not ready for the move, if it is not: a file to rewrite or delete that
/// changed since the index was written, something where a new file goes, a path git would not
/// check out.
fn in_the_way(
    git: &GixGit,
    repo: &gix::Repository,
    workdir: &Path,
    index: &gix::index::State,
    options: Options,
    validate: gix::validate::path::component::Options,
    changes: &Changes,
) -> Result<Option<&'static str>, Cause> {
    let memo = git.memo(repo);
    let memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
    let mut reader = crate::scan::Reader::new(repo);
    let replaced = changes.removed.iter().chain(&changes.modified);
    for path in replaced {
        let Some(entry) = index.entry_by_path(path.as_bstr()) else {
            return Ok(Some("the index lacks a file of the current commit"));
        };
        let meta = match look(workdir, path.as_bstr())? {
            OnDisk::Present(metadata) => Meta::of(&metadata),
            // Already gone: deleting it is done, writing it is as for a new file.
            OnDisk::Absent => continue,
            // Never through a link planted where a directory was: what it leads to is not ours.
            OnDisk::Blocked => return Ok(Some("a directory on the way is a link or a file")),
        };
        let file = on_disk(workdir, path.as_bstr())?;
        let unchanged = match crate::scan::unchanged(entry, &meta, options, index) {
            Unchanged::Yes => true,
            // Racy, or touched: a status read it since, or its content tells, as for git.
            Unchanged::Unproven => {
                memo.verified.vouches(path.as_bstr(), &entry.id, &meta.stat)
                    || reader.is(
                        index,
                        &file,
                        path.as_bstr(),
                        meta.kind == Kind::Symlink && options.symlinks,
                        &entry.id,
                    ) == Some(true)
            }
            Unchanged::No => false,
        };
        if !unchanged {
            return Ok(Some("a file to replace was changed"));
        }
    }
    drop(memo);
    for (path, _, mode) in &changes.written {
        let mut components = path.split_str("/").peekable();
        while let Some(component) = components.next() {
            let kind = (components.peek().is_none() && *mode == Mode::SYMLINK)
                .then_some(gix::validate::path::component::Mode::Symlink);
            if gix::validate::path::component(component.as_bstr(), kind, validate).is_err() {
                return Ok(Some("a path git would not check out"));
            }
        }
        let new = !changes.modified.contains(path);
        if new && !matches!(look(workdir, path.as_bstr())?, OnDisk::Absent) {
            return Ok(Some("something stands where a new file goes"));
        }
    }
    Ok(None)
}

/// What lies at `path` (relative, `/`-separated) under `workdir`, as the moves and the staging
/// see it: they never go through a link planted where a directory was.
pub(crate) enum OnDisk {
    /// A directory on the way is a symbolic link or a file.
    Blocked,
    /// Nothing there (the path, or a directory on its way, is missing).
    Absent,
    /// The path's own `lstat`, every directory on its way a real directory.
    Present(std::fs::Metadata),
}

pub(crate) fn look(workdir: &Path, path: &BStr) -> Result<OnDisk, Cause> {
    let mut at = workdir.to_owned();
    let mut components = path.split_str("/").peekable();
    while let Some(component) = components.next() {
        at.push(
            component
                .to_os_str()
                .map_err(|error| Cause::Io(io::Error::other(error)))?,
        );
        match std::fs::symlink_metadata(&at) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(OnDisk::Absent),
            Err(error) => return Err(Cause::Io(error)),
            Ok(metadata) if components.peek().is_none() => return Ok(OnDisk::Present(metadata)),
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => return Ok(OnDisk::Blocked),
        }
    }
    Ok(OnDisk::Absent)
}

/// `path` (relative, `/`-separated) under `workdir`.
pub(crate) fn on_disk(workdir: &Path, path: &BStr) -> Result<PathBuf, Cause> {
    let relative =
        gix::path::from_byte_slice(path).map_err(|error| Cause::Io(io::Error::other(error)))?;
    Ok(workdir.join(relative))
}

/// Deletes the files at `paths`, then each directory they leave empty, deepest first, as git
/// does (one still holding something, an ignored file say, stays).
fn remove(workdir: &Path, paths: &[BString]) -> Result<(), Cause> {
    let mut dirs: Vec<&BStr> = Vec::new();
    for path in paths {
        match std::fs::remove_file(on_disk(workdir, path.as_bstr())?) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(Cause::Io(error)),
        }
        dirs.extend(path.rfind_iter("/").map(|slash| path[..slash].as_bstr()));
    }
    dirs.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    dirs.dedup();
    for dir in dirs {
        // Not empty (or already gone): it stays.
        std::fs::remove_dir(on_disk(workdir, dir)?).ok();
    }
    Ok(())
}

/// The cached tree (the index's `TREE` extension) of tree `id`, named `name`: each
/// directory's tree id and how many index entries lie below it, as git keeps it. Subtrees the
/// `old` cached tree has with the same id are taken from it without reading them.
pub(crate) fn cache_tree(
    repo: &gix::Repository,
    id: gix::ObjectId,
    name: &[u8],
    old: Option<&Tree>,
) -> Result<Tree, gix::Error> {
    if let Some(old) = old.filter(|old| old.id == id && old.num_entries.is_some()) {
        let mut same = old.clone();
        same.name = name.into();
        return Ok(same);
    }
    let tree = repo.find_tree(id)?;
    let decoded = tree.decode()?;
    let mut entries = 0u32;
    let mut children = Vec::new();
    for entry in &decoded.entries {
        if entry.mode.is_tree() {
            let name = entry.filename.as_bytes();
            let old = old.and_then(|old| {
                old.children
                    .iter()
                    .find(|child| child.name.as_slice() == name)
            });
            let child = cache_tree(repo, entry.oid.to_owned(), name, old)?;
            entries += child.num_entries.unwrap_or(0);
            children.push(child);
        } else {
            entries += 1;
        }
    }
    // git's order: shorter names first, then by bytes.
    children.sort_by(|a, b| {
        a.name
            .len()
            .cmp(&b.name.len())
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(Tree {
        name: name.into(),
        id,
        num_entries: Some(entries),
        children,
    })
}
