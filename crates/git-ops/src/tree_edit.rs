//! A tree edited in process and written, checking only what the edit brings in.
//!
//! gix's own editor (`Repository::edit_tree`) checks, as it writes each changed tree, that every
//! entry's object exists (a `stat` of a loose object a blob) and that every entry's name is a
//! valid one, unchanged entries included: a merge that adds one file to a directory of 10,000
//! costs 10,000 `statx` calls, and an epic whose stories each add a file there pays it once a
//! story for every story before it. Here the names are checked as they come in, with the same
//! rules (`.git` and its look-alikes, and the Windows, NTFS and HFS+ names as the repository's
//! `core.protectWindows`, `core.protectNTFS` and `core.protectHFS` and gix's defaults say), and
//! the objects are the callers' own: blobs they just wrote or entries of trees in the
//! repository. Entries already in the tree were in a tree of the repository: they are taken as
//! they are, as `git write-tree` and `git merge` take them.

use std::io;

use gix::bstr::{BStr, ByteSlice};
use gix::objs::tree::EntryKind;
use gix::validate::path::component::{Mode, Options};

use crate::error::Cause;

/// An edit of one tree: paths upserted and removed, then written (only the subtrees on the way).
pub(crate) struct TreeEdit<'repo> {
    repo: &'repo gix::Repository,
    inner: gix::objs::tree::Editor<'repo>,
    rules: Options,
}

impl<'repo> TreeEdit<'repo> {
    /// An edit of the tree `tree` of `repo`.
    pub(crate) fn of(repo: &'repo gix::Repository, tree: gix::ObjectId) -> Result<Self, Cause> {
        let root = repo
            .find_tree(tree)
            .map_err(Cause::gix)?
            .decode()
            .map_err(Cause::gix)?
            .into();
        Ok(Self::on(repo, root))
    }

    /// An edit of the empty tree of `repo`.
    pub(crate) fn empty(repo: &'repo gix::Repository) -> Self {
        Self::on(repo, gix::objs::Tree::empty())
    }

    fn on(repo: &'repo gix::Repository, root: gix::objs::Tree) -> Self {
        let config = repo.config_snapshot();
        let flag = |key: &str, default: bool| config.boolean(key).unwrap_or(default);
        // gix's defaults: Windows names on Windows, HFS+ names on macOS, NTFS names always.
        let rules = Options {
            protect_windows: flag("core.protectWindows", cfg!(windows)),
            protect_hfs: flag("core.protectHFS", cfg!(target_os = "macos")),
            protect_ntfs: flag("core.protectNTFS", true),
        };
        Self {
            repo,
            inner: gix::objs::tree::Editor::new(root, &repo.objects, repo.object_hash()),
            rules,
        }
    }

    /// Puts `id` as `kind` at `path` (`/`-separated), creating the directories on the way;
    /// each of the path's names is checked first.
    pub(crate) fn upsert(
        &mut self,
        path: &BStr,
        kind: EntryKind,
        id: gix::ObjectId,
    ) -> Result<&mut Self, Cause> {
        let mut names = path.split_str("/").peekable();
        while let Some(name) = names.next() {
            let last = names.peek().is_none();
            let mode = (last && kind == EntryKind::Link).then_some(Mode::Symlink);
            gix::validate::path::component(name.as_bstr(), mode, self.rules).map_err(|error| {
                Cause::Io(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("`{path}` holds an invalid name: {error}"),
                ))
            })?;
        }
        self.inner
            .upsert(path.split_str("/"), kind, id)
            .map_err(Cause::gix)?;
        Ok(self)
    }

    /// Removes what is at `path`, if anything.
    pub(crate) fn remove(&mut self, path: &BStr) -> Result<&mut Self, Cause> {
        self.inner.remove(path.split_str("/")).map_err(Cause::gix)?;
        Ok(self)
    }

    /// Writes the trees that changed: the new root tree's id.
    pub(crate) fn write(&mut self) -> Result<gix::ObjectId, Cause> {
        let repo = self.repo;
        self.inner
            .write(|tree| repo.write_object(tree).map(gix::Id::detach))
            .map_err(Cause::gix)
    }
}
