//! A linked worktree's index as epic last wrote it, kept in memory with its bytes.
//!
//! The in-process move and staging (`advance`, `stage`) write a worktree's index, and the status
//! that follows, the next move and the next staging read it again: on a tree of 10,000 files each
//! decode is some 10,000 entries parsed and allocated, several a story. What epic writes it keeps
//! (the bytes and the decoded index); a later read takes the file's bytes and, when they are
//! exactly the kept ones, the kept index, without decoding. Anything else (another writer, the
//! same bytes nowhere near) reads as before: the kept index only ever stands for the very bytes
//! on disk.

use std::sync::{Arc, PoisonError};

use crate::error::Cause;
use crate::memo::Kept;
use crate::repo::GixGit;

/// A worktree's index, for reading: the kept one, or gix's own snapshot of the file.
pub(crate) enum Index {
    Kept(Arc<gix::index::File>),
    Read(gix::worktree::Index),
}

impl std::ops::Deref for Index {
    type Target = gix::index::File;

    fn deref(&self) -> &gix::index::File {
        match self {
            Self::Kept(index) => index,
            Self::Read(index) => index,
        }
    }
}

/// The kept index of `repo`'s worktree, if the index file holds exactly its bytes.
fn kept(git: &GixGit, repo: &gix::Repository) -> Option<Arc<gix::index::File>> {
    let memo = git.memo(repo);
    let memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
    let kept = memo.index.as_ref()?;
    kept.on_disk(repo).then(|| Arc::clone(&kept.index))
}

/// `repo`'s index to read (a status's).
pub(crate) fn shared(git: &GixGit, repo: &gix::Repository) -> Result<Index, gix::Error> {
    match kept(git, repo) {
        Some(index) => Ok(Index::Kept(index)),
        None => Ok(Index::Read(repo.index_or_empty()?)),
    }
}

/// `repo`'s index to change and write (see [`write()`]): the kept one taken out of the memo (the
/// file is about to change), else read.
pub(crate) fn owned(git: &GixGit, repo: &gix::Repository) -> Result<gix::index::File, Cause> {
    let taken = {
        let memo = git.memo(repo);
        let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
        let same = memo.index.as_ref().is_some_and(|kept| kept.on_disk(repo));
        if same { memo.index.take() } else { None }
    };
    match taken {
        Some(kept) => Ok(Arc::unwrap_or_clone(kept.index)),
        None => Ok(repo.open_index()?),
    }
}

/// Writes `index` back (locked, replaced whole) with its cached tree, without the checksum, and
/// keeps it for the next read of `repo`'s index.
///
/// Serialised into memory first and written in one go: gix's own `File::write` hands each of an
/// entry's fifteen fields to a buffered file through a `dyn Write`, which at 10,000 entries cost
/// more than everything else the write does.
#[expect(
    clippy::default_trait_access,
    reason = "gix keeps the permissions type in a module it does not export"
)]
pub(crate) fn write(
    git: &GixGit,
    repo: &gix::Repository,
    mut index: gix::index::File,
) -> Result<(), Cause> {
    use std::io::Write as _;
    let options = gix::index::write::Options {
        extensions: gix::index::write::Extensions::Given {
            tree_cache: true,
            untracked_cache: false,
            end_of_index_entry: true,
        },
        skip_hash: true,
    };
    // Some 70 bytes an entry; the extensions are small beside them.
    let mut bytes = Vec::with_capacity(index.entries().len() * 80 + 4096);
    // `State`'s, generic over the writer: `File::write_to` goes through a `dyn Write`.
    gix::index::State::write_to(&index, &mut bytes, options).map_err(Cause::gix)?;
    // Without the checksum (`index.skipHash`), the trailer is all zeroes.
    bytes.extend_from_slice(index.object_hash().null().as_slice());
    let memo = git.memo(repo);
    let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
    // Forgotten first: whatever happens below, the file no longer holds what was kept.
    memo.index = None;
    let mut lock = gix::lock::File::acquire_to_update_resource(
        index.path(),
        gix::lock::acquire::Fail::Immediately,
        None,
        // The process's umask, as git writes it where `core.sharedRepository` is unset.
        Default::default(),
    )
    .map_err(Cause::gix)?;
    lock.write_all(&bytes)?;
    lock.commit().map_err(|error| Cause::Io(error.error))?;
    // The file's time, which git's rule for racily clean files compares entries with.
    let written = std::fs::metadata(index.path())?;
    index.set_timestamp(filetime::FileTime::from_last_modification_time(&written));
    memo.index = Some(Kept {
        bytes,
        index: Arc::new(index),
    });
    Ok(())
}
