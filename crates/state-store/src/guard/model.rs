//! What a snapshot holds: the paths to watch ([`Watch`]), what each held ([`Entry`]), and the
//! snapshot itself ([`Snapshot`]), its paths keyed by their bytes so that what a directory holds
//! is one range of them; and what a snapshot answers about the paths it holds.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::stamp::Stamp;

/// Something to watch.
#[derive(Debug, Clone)]
pub enum Watch {
    /// One path, whatever it is (a file, a directory taken alone, a symbolic link) or whether it
    /// is there at all.
    File(PathBuf),
    /// A directory and everything under it (symbolic links are recorded, never followed), less
    /// what `keep` refuses. `keep` is given each path relative to `root`; a directory it refuses
    /// is not entered.
    Tree {
        /// The directory.
        root: PathBuf,
        /// Whether a path under `root` (relative to it) is watched.
        keep: fn(&Path) -> bool,
    },
}

impl Watch {
    /// The path this watch names, normalized: the file, or the tree's root.
    pub fn target(&self) -> PathBuf {
        match self {
            Self::File(path) | Self::Tree { root: path, .. } => normalized(path),
        }
    }

    /// Whether this watch covers `path` (normalized): the watched file, a tree's root, or a path
    /// under a root whose every step the tree's rule keeps.
    pub fn covers(&self, path: &Path) -> bool {
        self.covers_from(&self.target(), path)
    }

    /// [`covers`](Self::covers), given this watch's [`target`](Self::target).
    pub(super) fn covers_from(&self, target: &Path, path: &Path) -> bool {
        match self {
            Self::File(_) => target == path,
            Self::Tree { keep, .. } => path.strip_prefix(target).is_ok_and(|relative| {
                relative
                    .ancestors()
                    .filter(|step| !step.as_os_str().is_empty())
                    .all(keep)
            }),
        }
    }
}

/// What a path held when a snapshot was taken.
#[derive(Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file.
    File {
        /// Its permission bits (`0o755`).
        mode: u32,
        /// Its contents, shared by the snapshots that found them unchanged (a snapshot taken
        /// again copies none, and equal entries compare by pointer first).
        contents: Arc<[u8]>,
    },
    /// A directory.
    Dir {
        /// Its permission bits.
        mode: u32,
    },
    /// A symbolic link.
    Link {
        /// Where it points, as written.
        target: PathBuf,
    },
    /// A regular file larger than [`LARGEST`], whose contents are not kept (guarded files are
    /// small; a huge one planted there must not make its guard read it all). Compared by mode,
    /// size and modification time; a path that held one cannot be restored.
    Large {
        /// Its permission bits.
        mode: u32,
        /// Its size in bytes.
        len: u64,
        /// Its modification time, in nanoseconds since the Unix epoch (0 when unknown).
        modified: u128,
    },
}

/// The largest file whose contents a snapshot keeps: 16 MiB.
pub const LARGEST: u64 = 16 * 1024 * 1024;

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File { mode, contents } => f
                .debug_struct("File")
                .field("mode", &format_args!("{mode:o}"))
                .field("bytes", &contents.len())
                .finish(),
            Self::Dir { mode } => f
                .debug_struct("Dir")
                .field("mode", &format_args!("{mode:o}"))
                .finish(),
            Self::Link { target } => f.debug_struct("Link").field("target", target).finish(),
            Self::Large { mode, len, .. } => f
                .debug_struct("Large")
                .field("mode", &format_args!("{mode:o}"))
                .field("len", len)
                .finish_non_exhaustive(),
        }
    }
}

/// The watched paths and what each held, in the byte order of the paths (so a directory comes
/// before what it holds, and what it holds is one range of them). Two snapshots are equal when
/// their entries are.
///
/// A snapshot taken again from kernel notifications ([`take_notified`](Self::take_notified))
/// holds only what it read again: `partial` names those paths, each with everything under it.
/// Comparing it with the snapshot it was taken from compares those ranges alone, and taking it
/// in replaces them alone ([`take_in`](Self::take_in)), so a check costs what changed however
/// many paths the snapshot holds (copying and comparing the whole snapshot at every check made
/// each story of an epic cost more the more stories had written their state before it).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub(super) entries: BTreeMap<Key, Held>,
    /// The paths (normalized) read again, each with everything under it; `None` for a snapshot
    /// of every watched path.
    pub(super) partial: Option<Vec<PathBuf>>,
}

/// What a snapshot holds for one path: the entry and, for a regular file whose contents can be
/// trusted later, how the file looked when they were read ([`Stamp`]):
/// [`Snapshot::take_again`] reuses the contents of a file whose stamp is unchanged instead of
/// reading it again.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) entry: Entry,
    pub(super) stamp: Option<Stamp>,
}

/// A path as a snapshot keys it, ordered by its bytes: a comparison is one `memcmp` (where
/// `Path`'s own order walks components), and everything under a directory `d` is the one range
/// of keys that start with `d/`. Keys are [`normalized`], so that a path spelled `a//b` or
/// `a/./b` finds `a/b`.
#[derive(Debug, Clone)]
pub(super) struct Key(pub(super) PathBuf);

impl Key {
    pub(super) fn bytes(&self) -> &[u8] {
        bytes_of(&self.0)
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl Borrow<[u8]> for Key {
    fn borrow(&self) -> &[u8] {
        self.bytes()
    }
}

/// `path` with its empty and `.` components dropped, as [`Path::components`] reads it.
pub(super) fn normalized(path: &Path) -> PathBuf {
    path.components().collect()
}

/// The bytes of `path`, as keys compare them.
pub(super) fn bytes_of(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// The bytes every path under `dir` starts with: `dir/`.
pub(super) fn under(dir: &Path) -> Vec<u8> {
    let mut prefix = bytes_of(dir).to_vec();
    if prefix.last() != Some(&b'/') {
        prefix.push(b'/');
    }
    prefix
}

impl PartialEq for Snapshot {
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|((a, a_held), (b, b_held))| a == b && a_held.entry == b_held.entry)
    }
}

impl Eq for Snapshot {}

impl Snapshot {
    /// Drops `path` and everything under it.
    pub(super) fn forget(&mut self, path: &Path) {
        self.entries.remove(bytes_of(path));
        let under: Vec<Key> = self.range_under(path).map(|(key, _)| key.clone()).collect();
        for key in under {
            self.entries.remove(key.bytes());
        }
    }

    /// What `path` held, `None` when it was not there (or is not watched).
    pub fn get(&self, path: &Path) -> Option<&Entry> {
        self.held(path).map(|held| &held.entry)
    }

    pub(super) fn held(&self, path: &Path) -> Option<&Held> {
        self.entries.get(bytes_of(&normalized(path)))
    }

    #[cfg(test)]
    pub(super) fn stamped(&self, path: &Path) -> bool {
        self.held(path).is_some_and(|held| held.stamp.is_some())
    }

    /// The watched paths that were there, in order.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.entries.keys().map(|key| key.0.as_path())
    }

    /// The watched paths under `dir` (not `dir` itself) that were there, in order: one range of
    /// the snapshot, however much else it holds.
    pub fn paths_under(&self, dir: &Path) -> impl Iterator<Item = &Path> {
        self.range_under(dir).map(|(key, _)| key.0.as_path())
    }

    pub(super) fn range_under(&self, dir: &Path) -> impl Iterator<Item = (&Key, &Held)> {
        let prefix = under(&normalized(dir));
        self.entries
            .range::<[u8], _>((Bound::Included(prefix.as_slice()), Bound::Unbounded))
            .take_while(move |(key, _)| key.bytes().starts_with(&prefix))
    }
}
