//! What a snapshot holds ([`Snapshot`]: each watched path's [`Entry`]), how one is taken, what
//! changed since ([`Change`]), and a change undone ([`Snapshot::restore`]).

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::error::GuardError;
use super::notifier::{Notifier, SWEEP};
use super::platform::{set_mode, symlink};
use super::read::{Reader, read_watch};
use super::stamp::{RACY_NS, Read, Stamp, now_ns};
use crate::atomic::{sync_dir, write_atomic};

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

/// How a path differs from its snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// It was not there.
    Added,
    /// It is no longer there.
    Removed,
    /// Its contents, mode, link target or type changed.
    Modified,
}

impl ChangeKind {
    /// `added`, `removed`, `modified`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Modified => "modified",
        }
    }
}

/// One path that differs between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The path.
    pub path: PathBuf,
    /// How it differs.
    pub kind: ChangeKind,
}

/// The watched paths and what each held, in the byte order of the paths (so a directory comes
/// before what it holds, and what it holds is one range of them). Two snapshots are equal when
/// their entries are.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub(super) entries: BTreeMap<Key, Held>,
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
    /// What `watches` hold now. A watched path that is not there is simply absent from it.
    pub fn take(watches: &[Watch]) -> Result<Self, GuardError> {
        Self::take_with(watches, None, RACY_NS, None)
    }

    /// What `watches` hold now, as [`take`](Self::take) finds it, reading again only the files
    /// that changed since this snapshot read them: a file whose device, inode, size, mode,
    /// modification and change times are all as they were (and whose change was not recent when
    /// it was read) keeps the contents this snapshot has. What a guard checks after every turn
    /// costs what changed, not everything it guards.
    pub fn take_again(&self, watches: &[Watch]) -> Result<Self, GuardError> {
        Self::take_with(watches, Some(self), RACY_NS, None)
    }

    /// What `watches` hold now, as [`take`](Self::take) finds it, with `notifier` watching every
    /// directory read (and the directories that hold the watched paths) from before it is read:
    /// the first snapshot [`take_notified`](Self::take_notified) can build on.
    pub fn take_watched(watches: &[Watch], notifier: &mut Notifier) -> Result<Self, GuardError> {
        notifier.swept = Instant::now();
        Self::take_with(watches, None, RACY_NS, Some(notifier))
    }

    /// What `watches` hold now, reading only the paths `notifier` reported an event for since
    /// this snapshot (or the last one taken with it) was taken: a check costs what changed,
    /// however many files are guarded. The kernel queues an event for a change in the system
    /// call that makes it, so every change made before this call is among them. Taken whole
    /// ([`take_again`](Self::take_again)) when events were lost, and at least every
    /// [`SWEEP`]: a write through a shared memory map of a file raises no event, only its
    /// times change.
    pub fn take_notified(
        &self,
        watches: &[Watch],
        notifier: &mut Notifier,
    ) -> Result<Self, GuardError> {
        let dirty = notifier.drain();
        let lost = std::mem::take(&mut notifier.lost);
        let Some(dirty) = dirty.filter(|_| !lost && notifier.swept.elapsed() < SWEEP) else {
            // An event during the sweep is the next call's: the sweep may have read it already.
            notifier.swept = Instant::now();
            let taken = Self::take_with(watches, Some(self), RACY_NS, Some(notifier));
            notifier.lost = taken.is_err();
            return taken;
        };
        let taken = self.take_paths(watches, dirty, notifier);
        notifier.lost = taken.is_err();
        taken
    }

    /// This snapshot with `dirty`, the paths events named, read again.
    pub(super) fn take_paths(
        &self,
        watches: &[Watch],
        dirty: BTreeSet<PathBuf>,
        notifier: &mut Notifier,
    ) -> Result<Self, GuardError> {
        let read_at = Read {
            at: now_ns(),
            racy_ns: RACY_NS,
        };
        let mut now = self.clone();
        let reader = Reader {
            previous: Some(self),
            read_at,
        };
        let (trusted, others): (Vec<_>, Vec<_>) = watches
            .iter()
            .map(|watch| (watch, watch.target()))
            .partition(|(_, target)| notifier.trusted.contains(target));
        for (watch, target) in &others {
            now.forget(target);
            read_watch(watch, target, reader, &mut now, None)?;
        }
        // In order, so a directory comes before what it holds (read again with it).
        for path in dirty {
            // A directory on the way to a watched path (made, removed, moved): that watch whole.
            for (watch, target) in &trusted {
                if *target != path && target.starts_with(&path) {
                    now.forget(target);
                    notifier.watch_down_to(target);
                    read_watch(watch, target, reader, &mut now, Some(notifier))?;
                }
            }
            if let Some((watch, _)) = trusted
                .iter()
                .find(|(watch, target)| watch.covers_from(target, &path))
            {
                now.forget(&path);
                read_watch(watch, &path, reader, &mut now, Some(notifier))?;
            }
        }
        Ok(now)
    }

    pub(super) fn take_with(
        watches: &[Watch],
        previous: Option<&Self>,
        racy_ns: i128,
        mut notifier: Option<&mut Notifier>,
    ) -> Result<Self, GuardError> {
        let mut taken = Self::default();
        let reader = Reader {
            previous,
            read_at: Read {
                at: now_ns(),
                racy_ns,
            },
        };
        for watch in watches {
            let target = watch.target();
            // Only the watches the notifier is trusted with are watched (the others are read at
            // every snapshot): from where the path appears, should it be missing now, or goes.
            let mut watching = notifier
                .as_deref_mut()
                .filter(|watcher| watcher.trusted.contains(&target));
            if let Some(watcher) = watching.as_deref_mut() {
                watcher.watch_down_to(&target);
            }
            read_watch(watch, &target, reader, &mut taken, watching)?;
        }
        Ok(taken)
    }

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

    /// Every path that differs between this snapshot and `now`, in order.
    pub fn changes(&self, now: &Self) -> Vec<Change> {
        let mut changes = Vec::new();
        let mut before = self.entries.iter().peekable();
        let mut after = now.entries.iter().peekable();
        loop {
            let (key, kind) = match (before.peek(), after.peek()) {
                (None, None) => break,
                (Some((key, _)), None) => {
                    let change = (*key, ChangeKind::Removed);
                    before.next();
                    change
                }
                (None, Some((key, _))) => {
                    let change = (*key, ChangeKind::Added);
                    after.next();
                    change
                }
                (Some((old_key, old)), Some((new_key, new))) => match old_key.cmp(new_key) {
                    std::cmp::Ordering::Less => {
                        let change = (*old_key, ChangeKind::Removed);
                        before.next();
                        change
                    }
                    std::cmp::Ordering::Greater => {
                        let change = (*new_key, ChangeKind::Added);
                        after.next();
                        change
                    }
                    std::cmp::Ordering::Equal => {
                        let (key, same) = (*old_key, old.entry == new.entry);
                        before.next();
                        after.next();
                        if same {
                            continue;
                        }
                        (key, ChangeKind::Modified)
                    }
                },
            };
            changes.push(Change {
                path: key.0.clone(),
                kind,
            });
        }
        changes
    }

    /// Takes into this snapshot what `now` holds for `path` (there or not): how a caller records
    /// its own write of a path, so that it does not count as a change.
    pub fn absorb(&mut self, now: &Self, path: &Path) {
        let path = normalized(path);
        match now.entries.get(bytes_of(&path)) {
            Some(held) => {
                self.entries.insert(Key(path), held.clone());
            }
            None => {
                self.entries.remove(bytes_of(&path));
            }
        }
    }

    /// Takes into this snapshot what `now` holds for `dir` and everything under it.
    pub fn absorb_tree(&mut self, now: &Self, dir: &Path) {
        self.forget(&normalized(dir));
        self.absorb(now, dir);
        for (key, held) in now.range_under(dir) {
            self.entries.insert(key.clone(), held.clone());
        }
    }

    /// Puts `path` back as this snapshot has it: a file's contents and mode (written
    /// atomically), a directory (with its mode), a symbolic link; a path the snapshot does not
    /// have is removed, with everything under it. Missing parent directories are created.
    pub fn restore(&self, path: &Path) -> Result<(), GuardError> {
        let fail = |source| GuardError::Restore {
            path: path.to_path_buf(),
            source,
        };
        let expected = self.get(path);
        if let Some(Entry::Large { len, .. }) = expected {
            return Err(fail(io::Error::other(format!(
                "it held {len} bytes, more than a snapshot keeps; left as it is"
            ))));
        }
        let current = fs::symlink_metadata(path);
        // Whatever is there and is not of the expected type goes first.
        if let Ok(metadata) = &current {
            let keep = match expected {
                Some(Entry::Dir { .. }) => metadata.is_dir(),
                Some(Entry::File { .. }) => metadata.is_file(),
                _ => false,
            };
            if !keep {
                if metadata.is_dir() {
                    fs::remove_dir_all(path).map_err(fail)?;
                } else {
                    fs::remove_file(path).map_err(fail)?;
                }
                if let Some(parent) = path.parent() {
                    sync_dir(parent).map_err(fail)?;
                }
            }
        }
        match expected {
            // A Large entry was refused above, before anything was touched.
            None | Some(Entry::Large { .. }) => Ok(()),
            Some(Entry::Dir { mode }) => {
                fs::create_dir_all(path).map_err(fail)?;
                set_mode(path, *mode).map_err(fail)
            }
            Some(Entry::File { mode, contents }) => {
                write_atomic(path, contents)
                    .map_err(|error| fail(io::Error::other(error.to_string())))?;
                set_mode(path, *mode).map_err(fail)
            }
            Some(Entry::Link { target }) => {
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent).map_err(fail)?;
                }
                symlink(target, path).map_err(fail)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::platform::mode_of;
    use crate::guard::read::resolved;

    /// Snapshots that stamp every file, however recent its change: what `take` and `take_again`
    /// do with files older than the racy margin, without waiting for one to be.
    fn stamping(watches: &[Watch], previous: Option<&Snapshot>) -> Snapshot {
        Snapshot::take_with(watches, previous, -1_000_000_000_000, None).unwrap()
    }

    #[test]
    fn an_unchanged_stamp_reuses_what_was_read_and_any_change_reads_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        fs::write(&file, "{\"a\":1}").unwrap();
        let watches = [Watch::File(file.clone())];
        let mut stored = stamping(&watches, None);
        assert!(stored.stamped(&file));
        // Unchanged on disk: the stored contents are taken as they are, not read again (a
        // stored entry that differs from the file shows which).
        let held = stored.entries.get_mut(bytes_of(&file)).unwrap();
        held.entry = Entry::File {
            mode: mode_of(&fs::metadata(&file).unwrap()),
            contents: b"as stored".as_slice().into(),
        };
        let again = stamping(&watches, Some(&stored));
        assert!(stored.changes(&again).is_empty());

        // Rewritten in place with the same size and its modification time put back, as an agent
        // hiding a change would, within the racy margin of the snapshot (so within one tick of
        // the file times' clock, where even the change time may not move): read again, found.
        let modified = fs::metadata(&file).unwrap().modified().unwrap();
        let stored = Snapshot::take(&watches).unwrap();
        fs::write(&file, "{\"a\":2}").unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let changes = stored.changes(&stored.take_again(&watches).unwrap());
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].kind, ChangeKind::Modified);

        // Replaced by another file of the same size and times (a new inode): read again, found,
        // however old the stamp.
        let stored = stamping(&watches, None);
        let other = dir.path().join("other.json");
        fs::write(&other, "{\"a\":3}").unwrap();
        fs::File::options()
            .write(true)
            .open(&other)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        fs::rename(&other, &file).unwrap();
        let changes = stored.changes(&stamping(&watches, Some(&stored)));
        assert_eq!(changes.len(), 1, "{changes:?}");
    }

    #[test]
    fn a_recent_change_is_never_stamped_and_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        fs::write(&file, "x").unwrap();
        let watches = [Watch::File(file.clone())];
        // Just written: within the racy margin, no stamp; read every time.
        let snapshot = Snapshot::take(&watches).unwrap();
        assert!(!snapshot.stamped(&file));
        let again = snapshot.take_again(&watches).unwrap();
        assert!(!again.stamped(&file));
        // Older than the margin: stamped.
        assert!(stamping(&watches, Some(&snapshot)).stamped(&file));
    }

    /// With a notifier, a check reads what events name: a same-size rewrite with its
    /// modification time put back (which stat data alone cannot tell within the racy margin), a
    /// file in a directory made since, a removal; nothing else changes the snapshot.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_notified_snapshot_reads_what_events_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("state");
        fs::create_dir_all(root.join("stories")).unwrap();
        let state = root.join("stories/a.json");
        fs::write(&state, "{\"a\":1}").unwrap();
        fs::write(root.join("gone"), "x").unwrap();
        let config = dir.path().join("config");
        fs::write(&config, "[core]\n").unwrap();
        let watches = [
            Watch::File(config.clone()),
            Watch::Tree {
                root: root.clone(),
                keep: |path| path != Path::new("skipped"),
            },
        ];
        let mut notifier = Notifier::new(std::slice::from_ref(&root)).expect("inotify");
        let mut snapshot = Snapshot::take_watched(&watches, &mut notifier).unwrap();
        let unchanged = snapshot.take_notified(&watches, &mut notifier).unwrap();
        assert!(snapshot.changes(&unchanged).is_empty());
        // In the trusted tree, a path no event named is not read at all (its stored entry, made
        // to differ from the file, stays), however recent its change; the configuration, not
        // trusted to events, is read every time.
        for path in [&state, &config] {
            let held = snapshot.entries.get_mut(bytes_of(path)).unwrap();
            held.entry = Entry::File {
                mode: mode_of(&fs::metadata(path).unwrap()),
                contents: b"as stored".as_slice().into(),
            };
        }
        let unread = snapshot.take_notified(&watches, &mut notifier).unwrap();
        let stored = |snapshot: &Snapshot, path: &Path| matches!(snapshot.get(path), Some(Entry::File { contents, .. }) if &contents[..] == b"as stored");
        assert!(stored(&unread, &state));
        assert!(!stored(&unread, &config));
        let snapshot = Snapshot::take_watched(&watches, &mut notifier).unwrap();

        let modified = fs::metadata(&state).unwrap().modified().unwrap();
        fs::write(&state, "{\"a\":2}").unwrap();
        fs::File::options()
            .write(true)
            .open(&state)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        fs::create_dir_all(root.join("gates/deep")).unwrap();
        fs::write(root.join("gates/deep/new"), "n").unwrap();
        fs::remove_file(root.join("gone")).unwrap();
        fs::write(root.join("skipped"), "not watched").unwrap();
        fs::write(dir.path().join("beside-config"), "not watched").unwrap();
        let now = snapshot.take_notified(&watches, &mut notifier).unwrap();
        let changes: Vec<(PathBuf, ChangeKind)> = snapshot
            .changes(&now)
            .into_iter()
            .map(|change| (change.path, change.kind))
            .collect();
        assert_eq!(
            changes,
            [
                (root.join("gates"), ChangeKind::Added),
                (root.join("gates/deep"), ChangeKind::Added),
                (root.join("gates/deep/new"), ChangeKind::Added),
                (root.join("gone"), ChangeKind::Removed),
                (state.clone(), ChangeKind::Modified),
            ]
        );
        // What a full read finds, and the events of the new directory are watched too.
        assert_eq!(now, Snapshot::take(&watches).unwrap());
        fs::write(root.join("gates/deep/new"), "changed").unwrap();
        let later = now.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(now.changes(&later).len(), 1);
        fs::write(&config, "[core]\n\tfsmonitor = evil\n").unwrap();
        let last = later.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(later.changes(&last)[0].path, config);
    }

    /// A tree whose root and the directories above it are made after the first snapshot: its
    /// files are found by the next notified snapshot, and later changes in it too.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tree_made_after_the_first_snapshot_is_found_through_its_parents() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("epic/e");
        let watches = [Watch::Tree {
            root: root.clone(),
            keep: |_| true,
        }];
        let mut notifier = Notifier::new(std::slice::from_ref(&root)).expect("inotify");
        let snapshot = Snapshot::take_watched(&watches, &mut notifier).unwrap();
        assert_eq!(snapshot.paths().count(), 0);
        fs::create_dir_all(root.join("stories")).unwrap();
        fs::write(root.join("stories/a.json"), "{}").unwrap();
        let now = snapshot.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(now, Snapshot::take(&watches).unwrap());
        assert!(now.get(&root.join("stories/a.json")).is_some());
        fs::write(root.join("stories/a.json"), "forged").unwrap();
        let later = now.take_notified(&watches, &mut notifier).unwrap();
        assert_eq!(now.changes(&later).len(), 1);
    }

    #[test]
    fn a_tree_is_restored_with_modes_links_and_removals() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("hooks");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("post-commit"), "#!/bin/sh\n").unwrap();
        set_mode(&root.join("post-commit"), 0o755).unwrap();
        symlink(Path::new("post-commit"), &root.join("link")).unwrap();
        let watches = [Watch::Tree {
            root: root.clone(),
            keep: |path| path != Path::new("skipped"),
        }];
        let snapshot = Snapshot::take(&watches).unwrap();

        fs::write(root.join("post-commit"), "#!/bin/sh\nevil\n").unwrap();
        fs::remove_file(root.join("link")).unwrap();
        fs::create_dir(root.join("link")).unwrap();
        fs::create_dir_all(root.join("new/deeper")).unwrap();
        fs::write(root.join("skipped"), "not watched").unwrap();
        let now = Snapshot::take(&watches).unwrap();
        let changes = snapshot.changes(&now);
        let kinds: Vec<_> = changes
            .iter()
            .map(|change| {
                (
                    change.path.strip_prefix(&root).unwrap().to_owned(),
                    change.kind,
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (PathBuf::from("link"), ChangeKind::Modified),
                (PathBuf::from("new"), ChangeKind::Added),
                (PathBuf::from("new/deeper"), ChangeKind::Added),
                (PathBuf::from("post-commit"), ChangeKind::Modified),
            ]
        );
        for change in &changes {
            snapshot.restore(&change.path).unwrap();
        }
        assert_eq!(snapshot, Snapshot::take(&watches).unwrap());
        assert_eq!(
            fs::read_link(root.join("link")).unwrap(),
            Path::new("post-commit")
        );
        assert!(root.join("skipped").exists(), "not watched, not touched");
    }

    #[test]
    fn resolved_resolves_what_exists_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        symlink(&real, &dir.path().join("link")).unwrap();
        let real = fs::canonicalize(&real).unwrap();
        assert_eq!(
            resolved(&dir.path().join("link/not/yet")),
            real.join("not/yet")
        );
        assert_eq!(
            resolved(Path::new("relative/nowhere")),
            Path::new("relative/nowhere")
        );
    }

    #[test]
    fn absorb_takes_only_the_selected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let watches = [Watch::File(a.clone()), Watch::File(b.clone())];
        let mut snapshot = Snapshot::take(&watches).unwrap();
        fs::write(&a, "1").unwrap();
        fs::write(&b, "2").unwrap();
        let now = Snapshot::take(&watches).unwrap();
        // Spelled otherwise, the same path.
        snapshot.absorb(&now, &dir.path().join(".//a"));
        let changes = snapshot.changes(&now);
        assert_eq!(
            changes,
            [Change {
                path: b,
                kind: ChangeKind::Added
            }]
        );
        assert!(snapshot.get(&a).is_some());
    }

    /// Everything under a directory is one range of keys, whatever sorts between the directory
    /// and its first child (`d-x`, `d.x` come before `d/` byte for byte).
    #[test]
    fn absorb_tree_takes_a_directory_and_all_under_it_and_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("d/e")).unwrap();
        fs::write(root.join("d-x"), "beside").unwrap();
        fs::write(root.join("d.x"), "beside").unwrap();
        fs::write(root.join("d/e/f"), "under").unwrap();
        let watches = [Watch::Tree {
            root: root.clone(),
            keep: |_| true,
        }];
        let mut snapshot = Snapshot::take(&watches).unwrap();
        fs::write(root.join("d-x"), "changed").unwrap();
        fs::write(root.join("d.x"), "changed").unwrap();
        fs::remove_file(root.join("d/e/f")).unwrap();
        fs::write(root.join("d/g"), "added").unwrap();
        fs::write(root.join("d0"), "added").unwrap();
        let now = Snapshot::take(&watches).unwrap();
        assert_eq!(
            now.paths_under(&root.join("d"))
                .map(|path| path.strip_prefix(&root).unwrap().to_owned())
                .collect::<Vec<_>>(),
            [PathBuf::from("d/e"), PathBuf::from("d/g")]
        );
        snapshot.absorb_tree(&now, &root.join("d"));
        let changed: Vec<PathBuf> = snapshot
            .changes(&now)
            .into_iter()
            .map(|change| change.path.strip_prefix(&root).unwrap().to_owned())
            .collect();
        assert_eq!(
            changed,
            [
                PathBuf::from("d-x"),
                PathBuf::from("d.x"),
                PathBuf::from("d0")
            ]
        );
    }

    #[test]
    fn a_huge_file_is_not_read_and_its_removal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        let file = fs::File::create(&big).unwrap();
        file.set_len(LARGEST + 1).unwrap();
        let watches = [Watch::File(big.clone())];
        let snapshot = Snapshot::take(&watches).unwrap();
        assert!(
            matches!(snapshot.get(&big), Some(Entry::Large { len, .. }) if *len == LARGEST + 1)
        );
        fs::remove_file(&big).unwrap();
        let changes = snapshot.changes(&Snapshot::take(&watches).unwrap());
        assert_eq!(changes.len(), 1);
        assert!(snapshot.restore(&big).is_err());
    }
}
