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
/// Encoded into memory first (see [`encode`]) and written in one go.
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
    let bytes = encode(&index)?;
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

/// What gix's `State::write_to` writes with the cached tree, no untracked cache and the
/// end-of-entries marker, followed by the all-zero trailer of an index without its checksum
/// (`index.skipHash`).
fn options() -> gix::index::write::Options {
    gix::index::write::Options {
        extensions: gix::index::write::Extensions::Given {
            tree_cache: true,
            untracked_cache: false,
            end_of_index_entry: true,
        },
        skip_hash: true,
    }
}

/// `index` as [`options`] encode it, byte for byte (debug builds check each one against gix's
/// own encoding), but each entry's fields copied into place at once.
///
/// gix writes an entry field by field through `std::io::Write` (fifteen calls, each counted and
/// bounds-checked): at 10,000 entries some 1 ms a write, three writes a story, more than all
/// the rest of a write. Entries with extended flags (rare: skip-worktree, intent-to-add) and a
/// sparse index take gix's own path.
fn encode(index: &gix::index::State) -> Result<Vec<u8>, Cause> {
    use gix::index::entry::Flags;

    if index.is_sparse() {
        return encode_with_gix(index);
    }
    let too_large = || Cause::Io(std::io::Error::other("an index of more than 4 GiB"));
    let entries = index.entries();
    // Some 70 bytes an entry; the extensions are small beside them.
    let mut bytes = Vec::with_capacity(entries.len() * 80 + 4096);
    let extended = entries
        .iter()
        .any(|entry| entry.flags.contains(Flags::EXTENDED));
    let kept = entries
        .iter()
        .filter(|entry| !entry.flags.contains(Flags::REMOVE))
        .count();
    bytes.extend_from_slice(b"DIRC");
    bytes.extend_from_slice(&(if extended { 3_u32 } else { 2 }).to_be_bytes());
    bytes.extend_from_slice(&u32::try_from(kept).map_err(|_| too_large())?.to_be_bytes());
    let header = bytes.len();
    for entry in entries {
        if entry.flags.contains(Flags::REMOVE) {
            continue;
        }
        if entry.flags.contains(Flags::EXTENDED) {
            entry.write_to(&mut bytes, index)?;
        } else {
            encode_entry(entry, entry.path(index), &mut bytes);
        }
        // Each entry padded with NULs to a multiple of eight bytes from the first entry.
        let over = (bytes.len() - header) % 8;
        if over != 0 {
            bytes.extend_from_slice(&[0; 8][over..]);
        }
    }
    let extensions = u32::try_from(bytes.len()).map_err(|_| too_large())?;
    let mut written = Vec::new();
    if let Some(tree) = index.tree() {
        let start = bytes.len();
        tree.write_to(&mut bytes)?;
        // An extension's size leaves out its signature and the size itself.
        let size = u32::try_from(bytes.len() - start - 8).map_err(|_| too_large())?;
        written.push((gix::index::extension::tree::SIGNATURE, size));
    }
    if !entries.is_empty() && !written.is_empty() {
        gix::index::extension::end_of_index_entry::write_to(
            &mut bytes,
            index.object_hash(),
            extensions,
            written,
        )
        .map_err(Cause::gix)?;
    }
    bytes.extend_from_slice(index.object_hash().null().as_slice());
    debug_assert!(
        encode_with_gix(index).is_ok_and(|theirs| theirs == bytes),
        "the index is encoded as gix encodes it"
    );
    Ok(bytes)
}

/// One entry without extended flags, as gix's `Entry::write_to` writes it (without padding).
fn encode_entry(entry: &gix::index::Entry, path: &gix::bstr::BStr, out: &mut Vec<u8>) {
    let stat = &entry.stat;
    // A path of 0xfff bytes or more says so, and ends at its NUL.
    let path_len = u16::try_from(path.len().min(0xfff)).unwrap_or(0xfff);
    let flags = entry.flags.to_storage().bits() | path_len;
    let mut fixed = [0_u8; 40];
    for (at, field) in [
        stat.ctime.secs,
        stat.ctime.nsecs,
        stat.mtime.secs,
        stat.mtime.nsecs,
        stat.dev,
        stat.ino,
        entry.mode.bits(),
        stat.uid,
        stat.gid,
        stat.size,
    ]
    .into_iter()
    .enumerate()
    {
        fixed[at * 4..at * 4 + 4].copy_from_slice(&field.to_be_bytes());
    }
    out.extend_from_slice(&fixed);
    out.extend_from_slice(entry.id.as_bytes());
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(path);
    out.push(0);
}

/// [`encode`] by gix's own `State::write_to`.
fn encode_with_gix(index: &gix::index::State) -> Result<Vec<u8>, Cause> {
    let mut bytes = Vec::with_capacity(index.entries().len() * 80 + 4096);
    gix::index::State::write_to(index, &mut bytes, options()).map_err(Cause::gix)?;
    bytes.extend_from_slice(index.object_hash().null().as_slice());
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use gix::bstr::BStr;
    use gix::index::entry::{Flags, Mode, Stat, stat};

    use super::{encode, encode_with_gix};

    fn stat(seed: u32) -> Stat {
        let time = |secs: u32| stat::Time {
            secs,
            nsecs: seed.wrapping_mul(7_919) % 1_000_000_000,
        };
        Stat {
            mtime: time(seed.wrapping_mul(31)),
            ctime: time(u32::MAX - seed),
            dev: seed ^ 0xdead_beef,
            ino: seed.rotate_left(13),
            uid: seed % 65_536,
            gid: u32::MAX,
            size: seed.wrapping_mul(1_000_003),
        }
    }

    #[test]
    fn every_kind_of_entry_is_encoded_as_gix_encodes_it() {
        let repo = epic_test_support::Repo::builder()
            .files(&[("a", "a\n"), ("dir/b", "b\n"), ("dir/sub/c", "c\n")])
            .build();
        // Staged and written: the index has a cached tree.
        repo.git(&["write-tree"]);
        let index_path = repo.common_dir().join("index");
        let read = gix::index::File::at(
            &index_path,
            gix::hash::Kind::Sha1,
            false,
            gix::index::decode::Options::default(),
        )
        .expect("read the index");
        let mut index: gix::index::State = read.into();
        assert!(index.tree().is_some(), "the index has a cached tree");
        let same = |index: &gix::index::State, what: &str| {
            let ours = encode(index).expect("encode");
            let theirs = encode_with_gix(index).expect("gix encodes");
            assert!(ours == theirs, "{what}: the encodings differ");
        };
        same(&index, "as git wrote it");

        let id = index.entries()[0].id;
        let long = "d/".repeat(2_100) + "long";
        let entries: [(&str, Flags, Mode); 6] = [
            ("b-exec", Flags::empty(), Mode::FILE_EXECUTABLE),
            ("b-link", Flags::ASSUME_VALID, Mode::SYMLINK),
            (
                "c-conflict",
                Flags::from_stage(gix::index::entry::Stage::Ours),
                Mode::FILE,
            ),
            (
                "c-hidden",
                Flags::EXTENDED | Flags::SKIP_WORKTREE,
                Mode::FILE,
            ),
            ("c-removed", Flags::REMOVE, Mode::FILE),
            (&long, Flags::EXTENDED | Flags::INTENT_TO_ADD, Mode::FILE),
        ];
        for (seed, (path, flags, mode)) in (1_u32..).zip(entries) {
            index.dangerously_push_entry(stat(seed), id, flags, mode, BStr::new(path));
        }
        index.sort_entries();
        same(&index, "with every kind of entry");

        let without_extended: Vec<_> = index
            .entries()
            .iter()
            .map(|entry| entry.flags.contains(Flags::EXTENDED))
            .collect();
        index.remove_entries(|at, _, _| without_extended[at]);
        same(&index, "version 2");

        let tree = index.tree_mut().expect("a cached tree");
        tree.num_entries = None;
        tree.children.clear();
        same(&index, "an invalidated cached tree");

        let empty = gix::index::State::new(gix::hash::Kind::Sha1);
        same(&empty, "an empty index");
    }
}
