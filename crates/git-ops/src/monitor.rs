//! A file-system monitor for the quick pass: what a worktree's directories held when the last
//! status read them, kept true between statuses by the kernel's change notifications, so a
//! status reads and stats only what changed since.
//!
//! # Why this holds
//!
//! On Linux, inotify queues an event for a directory's entry in the same system call that
//! changes it (a write, a truncation, a change of mode or times, a creation, a removal or a
//! rename), before the call returns. So once a directory is watched, any change made to its
//! entries after that, by any process, is in the queue by the time the change is visible; and a
//! status that first drains the queue, then uses what it read of the directory before, sees
//! every change that happened before the status began. The order matters, and the walk keeps it:
//! a directory is watched *before* it is read and its files are statted, so nothing falls
//! between the read and the watch.
//!
//! What is kept is only the raw listing: the names of each directory, their kinds, and the stat
//! data of the files the index tracks. Every judgement (does the stat data prove the file
//! unchanged, is a name untracked or ignored, what the index says) is made afresh by each
//! status, against the index of the moment. A name touched since is statted again; a directory
//! that appeared, vanished or moved is forgotten with everything below it, and read again where
//! the index still has files in it.
//!
//! Where it cannot hold, there is no monitor and every status reads the worktree: a file system
//! not known to be local (a network file system changes under the kernel without telling it),
//! no inotify instance or watch left (`fs.inotify.max_user_instances`, `max_user_watches`), or a
//! platform without inotify. After a queue overflow every directory is read again. Writes
//! through a shared memory map raise no event (as with git's own file-system monitor); their
//! change shows once the file is touched any other way.

use std::collections::HashMap;

use epic_watch::{Change, Event, WatchId, Watcher};
use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::index::entry::Stat;

/// What a directory entry is, as far as a status cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

/// The stat data a status compares with a file's index entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    pub(crate) kind: Kind,
    pub(crate) executable: bool,
    pub(crate) stat: Stat,
}

impl Meta {
    /// From the result of an `lstat`.
    #[cfg(unix)]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the index keeps the low 32 bits of device, inode and size, as git does"
    )]
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;

        Self {
            kind: kind(metadata.file_type()),
            executable: metadata.mode() & 0o100 != 0,
            stat: Stat {
                mtime: time(metadata.mtime(), metadata.mtime_nsec()),
                ctime: time(metadata.ctime(), metadata.ctime_nsec()),
                dev: metadata.dev() as u32,
                ino: metadata.ino() as u32,
                uid: metadata.uid(),
                gid: metadata.gid(),
                size: metadata.size() as u32,
            },
        }
    }
}

/// The kind of a file type read from a directory or an `lstat`.
pub(crate) fn kind(file_type: std::fs::FileType) -> Kind {
    if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_symlink() {
        Kind::Symlink
    } else if file_type.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

/// A stat time as the index keeps it: seconds truncated to 32 bits; zero before the epoch.
#[cfg(unix)]
fn time(secs: i64, nsecs: i64) -> gix::index::entry::stat::Time {
    match (u64::try_from(secs), u32::try_from(nsecs)) {
        // Truncation on purpose: git and gix compare the low 32 bits.
        #[expect(clippy::cast_possible_truncation, reason = "the index keeps 32 bits")]
        (Ok(secs), Ok(nsecs)) => gix::index::entry::stat::Time {
            secs: secs as u32,
            nsecs,
        },
        _ => gix::index::entry::stat::Time::default(),
    }
}

/// A directory entry's name, kept inline when short (most are): a status compares every name
/// of a listing with the index's, and names each on the heap of its own had the walk wait on
/// memory at every comparison.
pub(crate) type Name = smallvec::SmallVec<[u8; 24]>;

/// One name of a directory.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) name: Name,
    /// `None`: created since the read, not looked at yet.
    pub(crate) kind: Option<Kind>,
    /// Kept for tracked files only; `None` when never statted or touched since.
    pub(crate) meta: Option<Meta>,
}

/// A directory's names, sorted, as read and then patched by the events since.
#[derive(Clone, Debug, Default)]
pub(crate) struct Listing {
    pub(crate) slots: Vec<Slot>,
}

impl Listing {
    /// Sorts freshly read slots.
    pub(crate) fn new(mut slots: Vec<Slot>) -> Self {
        slots.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Self { slots }
    }

    fn find(&self, name: &BStr) -> Result<usize, usize> {
        self.slots
            .binary_search_by(|slot| slot.name.as_bstr().cmp(name))
    }

    /// The file `name` was written to, truncated, or had its mode or times changed.
    fn touched(&mut self, name: &BStr) {
        if let Ok(at) = self.find(name) {
            self.slots[at].meta = None;
        }
    }

    /// `name` appeared (created, or moved here), a directory or of a kind still unknown.
    fn appeared(&mut self, name: &BStr, dir: bool) {
        let slot = Slot {
            name: Name::from_slice(name),
            kind: dir.then_some(Kind::Dir),
            meta: None,
        };
        match self.find(name) {
            Ok(at) => self.slots[at] = slot,
            Err(at) => self.slots.insert(at, slot),
        }
    }

    /// `name` went away (removed, or moved elsewhere).
    fn vanished(&mut self, name: &BStr) {
        if let Ok(at) = self.find(name) {
            self.slots.remove(at);
        }
    }
}

/// Directory listings of one worktree, and the kernel notifications that keep them true.
#[derive(Debug)]
pub(crate) struct Monitor {
    watcher: Watcher,
    /// Each watch's directory, relative to the worktree root (`""` for the root).
    dirs: HashMap<WatchId, BString>,
    /// Listings read after their directory was watched, patched by every event since.
    listings: HashMap<BString, Listing>,
    /// How many events it has taken in: unchanged, nothing it watches changed.
    generation: u64,
}

/// A monitor's state for one worktree.
#[derive(Debug, Default)]
pub(crate) enum Watching {
    /// No status yet: the next one tries to start a monitor.
    #[default]
    Untried,
    On(Monitor),
    /// Not possible here, or given up: every status reads the whole worktree.
    Off,
}

/// A directory watched during a walk: its watch and its path relative to the root.
pub(crate) type Watched = (WatchId, BString);

impl Monitor {
    /// A monitor for the worktree at `workdir`, if its file system is known to report every
    /// change to the kernel's notifications and an instance is available.
    pub(crate) fn open(workdir: &std::path::Path) -> Option<Self> {
        if !epic_watch::reports_every_change(workdir) {
            return None;
        }
        Some(Self {
            watcher: Watcher::new()?,
            dirs: HashMap::new(),
            listings: HashMap::new(),
            generation: 0,
        })
    }

    /// Watches the directory at `path` (`rela` in the worktree); `None` when the kernel refuses
    /// (no watch left, or the directory is gone).
    pub(crate) fn watch(&self, path: &std::path::Path) -> Option<WatchId> {
        self.watcher.watch(path)
    }

    /// Applies every event queued since the last call to the listings. `false` when the queue
    /// cannot be read: the monitor is useless then.
    pub(crate) fn catch_up(&mut self) -> bool {
        let Some(events) = self.watcher.drain() else {
            return false;
        };
        self.generation = self
            .generation
            .saturating_add(u64::try_from(events.len()).unwrap_or(u64::MAX));
        for Event {
            watch,
            name,
            change,
            is_dir,
        } in events
        {
            if change == Change::Overflow {
                // Events were lost: nothing read before can be trusted.
                self.listings.clear();
                continue;
            }
            let Some(dir) = self.dirs.get(&watch).cloned() else {
                continue;
            };
            match change {
                Change::Unwatched => {
                    self.dirs.remove(&watch);
                    self.forget(dir.as_bstr());
                    continue;
                }
                // Its watch (and those below it) no longer name that path.
                Change::SelfGone => {
                    self.forget(dir.as_bstr());
                    continue;
                }
                _ => {}
            }
            let Some(name) = name.map(BString::from) else {
                continue;
            };
            let child = join(dir.as_bstr(), name.as_bstr());
            if is_dir && matches!(change, Change::Appeared | Change::Vanished) {
                // A directory appeared, vanished or moved: what was known of that path is not.
                self.forget(child.as_bstr());
            }
            let Some(listing) = self.listings.get_mut(&dir) else {
                continue;
            };
            match change {
                Change::Appeared => listing.appeared(name.as_bstr(), is_dir),
                Change::Vanished => listing.vanished(name.as_bstr()),
                _ => listing.touched(name.as_bstr()),
            }
        }
        true
    }

    /// How many events it has taken in so far (see [`catch_up`](Self::catch_up)).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Forgets the listings of `dir` and of everything below it, and stops watching the
    /// directories below it (their watches may now sit anywhere); the parent's listing, which
    /// names `dir`, is patched by the parent's own event.
    fn forget(&mut self, dir: &BStr) {
        let below = |path: &BStr| {
            dir.is_empty()
                || path
                    .strip_prefix(dir.as_bytes())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
        };
        self.listings.retain(|path, _| !below(path.as_bstr()));
        let gone: Vec<i32> = self
            .dirs
            .iter()
            .filter(|(_, path)| below(path.as_bstr()))
            .map(|(wd, _)| *wd)
            .collect();
        for wd in gone {
            self.dirs.remove(&wd);
            self.watcher.unwatch(wd);
        }
    }

    /// The listings, for a walk to use (and give back through [`Monitor::restore`]).
    pub(crate) fn take(&mut self) -> HashMap<BString, Listing> {
        std::mem::take(&mut self.listings)
    }

    /// Keeps what a walk read or used: its listings, and the directories it watched.
    pub(crate) fn restore(&mut self, listings: Vec<(BString, Listing)>, watched: Vec<Watched>) {
        self.dirs.extend(watched);
        self.listings.extend(listings);
    }
}

/// `dir/name`, or `name` at the root.
pub(crate) fn join(dir: &BStr, name: &BStr) -> BString {
    let mut path = BString::from(dir);
    if !path.is_empty() {
        path.push_byte(b'/');
    }
    path.push_str(name);
    path
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::path::Path;

    use gix::bstr::{BStr, BString, ByteSlice};

    use super::{Kind, Listing, Meta, Monitor, Name, Slot};

    fn file(name: &str) -> Slot {
        Slot {
            name: Name::from_slice(name.as_bytes()),
            kind: Some(Kind::File),
            meta: Some(Meta {
                kind: Kind::File,
                executable: false,
                stat: gix::index::entry::Stat::default(),
            }),
        }
    }

    fn dir(name: &str) -> Slot {
        Slot {
            name: Name::from_slice(name.as_bytes()),
            kind: Some(Kind::Dir),
            meta: None,
        }
    }

    /// A monitor of `root` that has read `root` (`a`, `sub/`) and `root/sub` (`b`).
    fn watching(root: &Path) -> Option<Monitor> {
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        std::fs::write(root.join("a"), "a").expect("write");
        std::fs::write(root.join("sub/b"), "b").expect("write");
        let Some(mut monitor) = Monitor::open(root) else {
            assert!(
                !epic_watch::reports_every_change(root),
                "no monitor on a local file system"
            );
            return None;
        };
        let top = monitor.watch(root).expect("watch");
        let sub = monitor.watch(&root.join("sub")).expect("watch");
        monitor.restore(
            vec![
                (
                    BString::default(),
                    Listing::new(vec![file("a"), dir("sub")]),
                ),
                ("sub".into(), Listing::new(vec![file("b")])),
            ],
            vec![(top, BString::default()), (sub, "sub".into())],
        );
        Some(monitor)
    }

    fn names(monitor: &Monitor, dir: &str) -> Option<Vec<(String, Option<Kind>, bool)>> {
        let listing = monitor.listings.get(BStr::new(dir))?;
        Some(
            listing
                .slots
                .iter()
                .map(|slot| {
                    let name = slot.name.to_str_lossy().into_owned();
                    (name, slot.kind, slot.meta.is_some())
                })
                .collect(),
        )
    }

    #[test]
    fn a_write_a_creation_and_a_removal_patch_the_listings() {
        let root = tempfile::tempdir().expect("tempdir");
        let Some(mut monitor) = watching(root.path()) else {
            return;
        };
        assert!(monitor.catch_up());
        assert_eq!(
            names(&monitor, ""),
            Some(vec![
                ("a".into(), Some(Kind::File), true),
                ("sub".into(), Some(Kind::Dir), false),
            ]),
            "nothing happened yet"
        );
        std::fs::write(root.path().join("a"), "again").expect("write");
        std::fs::write(root.path().join("c"), "new").expect("write");
        std::fs::remove_file(root.path().join("sub/b")).expect("remove");
        assert!(monitor.catch_up());
        assert_eq!(
            names(&monitor, ""),
            Some(vec![
                ("a".into(), Some(Kind::File), false),
                ("c".into(), None, false),
                ("sub".into(), Some(Kind::Dir), false),
            ])
        );
        assert_eq!(names(&monitor, "sub"), Some(Vec::new()));
    }

    #[test]
    fn a_moved_directory_is_forgotten_with_its_watch() {
        let root = tempfile::tempdir().expect("tempdir");
        let Some(mut monitor) = watching(root.path()) else {
            return;
        };
        std::fs::rename(root.path().join("sub"), root.path().join("moved")).expect("rename");
        assert!(monitor.catch_up());
        assert_eq!(
            names(&monitor, "sub"),
            None,
            "the old path's listing is gone"
        );
        assert!(
            !monitor.dirs.values().any(|dir| dir == "sub"),
            "its watch no longer names it"
        );
        assert_eq!(
            names(&monitor, ""),
            Some(vec![
                ("a".into(), Some(Kind::File), true),
                ("moved".into(), Some(Kind::Dir), false),
            ])
        );
        // A write below the moved directory names no path the monitor keeps.
        std::fs::write(root.path().join("moved/b"), "b2").expect("write");
        assert!(monitor.catch_up());
        assert_eq!(names(&monitor, "sub"), None);
    }

    #[test]
    fn a_lost_event_forgets_everything() {
        let root = tempfile::tempdir().expect("tempdir");
        let Some(mut monitor) = watching(root.path()) else {
            return;
        };
        let limit: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(16_384);
        // One event per write, more than the queue holds: the kernel drops the rest. The
        // writes alternate between two files, since the kernel merges an event identical to the
        // one queued last.
        let mut files = ["busy", "other"]
            .map(|name| std::fs::File::create(root.path().join(name)).expect("create"));
        for round in 0..=limit {
            std::io::Write::write_all(&mut files[round % 2], b"x").expect("write");
        }
        assert!(monitor.catch_up());
        assert!(monitor.listings.is_empty(), "every listing is read again");
    }

    #[test]
    fn a_removed_root_leaves_nothing_kept() {
        let root = tempfile::tempdir().expect("tempdir");
        let Some(mut monitor) = watching(root.path()) else {
            return;
        };
        std::fs::remove_dir_all(root.path().join("sub")).expect("remove");
        assert!(monitor.catch_up());
        assert_eq!(names(&monitor, "sub"), None);
        assert!(!monitor.dirs.values().any(|dir| dir == "sub"));
    }
}
