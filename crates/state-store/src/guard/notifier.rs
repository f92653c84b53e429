//! Kernel notifications of changes to the watched paths ([`Notifier`], inotify on Linux), so
//! a snapshot reads only what changed, with every path read all the same each [`SWEEP`].

#[cfg(doc)]
use super::model::Snapshot;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use epic_watch::{Change, WatchId};

use super::model::normalized;

/// How often [`Snapshot::take_notified`] reads every watched path all the same.
pub const SWEEP: Duration = Duration::from_secs(2);

/// Kernel notifications of changes to the watched paths (inotify, on Linux), for
/// [`Snapshot::take_notified`]: every directory a snapshot taken with it read is watched (from
/// before it was read), and so are the directories that hold the watched files and trees.
#[derive(Debug)]
pub struct Notifier {
    pub(super) watcher: epic_watch::Watcher,
    /// Each watched directory, by its watch.
    pub(super) dirs: HashMap<WatchId, PathBuf>,
    /// The watched paths (files, trees' roots) whose changes are taken from events; every other
    /// watch is read again at each snapshot, by its stat data.
    pub(super) trusted: Vec<PathBuf>,
    /// When every watched path was last read.
    pub(super) swept: Instant,
    /// How long until the next read of every watched path: [`SWEEP`], or twenty times what the
    /// last one took where that is longer, so that on a state directory of tens of thousands of
    /// files (an epic of thousands of stories) sweeps take at most a twentieth of the time.
    pub(super) sweep_every: Duration,
    /// Whether events were drained that no snapshot then took in (a read failed): the next
    /// snapshot reads everything.
    pub(super) lost: bool,
}

impl Notifier {
    /// A notifier for the watches named by `trusted` (a file, or a tree's root), on a platform
    /// that has one and with an instance left (`fs.inotify.max_user_instances`); `None`
    /// otherwise, and every check reads all. The other watches are read again (by their stat
    /// data) at every snapshot: give it the large trees, whose cost is the point, and keep the
    /// few files a change to which matters most (a configuration) read every time, so that a
    /// write no event reports (through a shared memory map, or a hard link made elsewhere) is
    /// found there at once rather than at the next sweep.
    pub fn new(trusted: &[PathBuf]) -> Option<Self> {
        Some(Self {
            watcher: epic_watch::Watcher::new()?,
            dirs: HashMap::new(),
            trusted: trusted.iter().map(|path| normalized(path)).collect(),
            swept: Instant::now(),
            sweep_every: SWEEP,
            lost: false,
        })
    }

    /// Watches the directory `dir` (normalized). A directory the kernel refuses (gone, or no
    /// watch left) is not watched: its changes then show at the next sweep.
    pub(super) fn watch(&mut self, dir: &Path) {
        if let Some(watch) = self.watcher.watch(dir) {
            self.dirs.insert(watch, dir.to_path_buf());
        }
    }

    /// Watches the directories on the way to `path` (normalized), from the nearest one that
    /// exists down to its parent: each is watched before the next is looked for, so one made
    /// meanwhile is an event.
    pub(super) fn watch_down_to(&mut self, path: &Path) {
        let Some(parent) = path.parent() else {
            return;
        };
        let nearest = parent
            .ancestors()
            .find(|dir| dir.is_dir())
            .unwrap_or(parent);
        self.watch(nearest);
        let Ok(rest) = parent.strip_prefix(nearest) else {
            return;
        };
        let mut dir = nearest.to_path_buf();
        for step in rest.components() {
            dir.push(step);
            if !dir.is_dir() {
                return;
            }
            self.watch(&dir);
        }
    }

    /// The paths the events queued since the last call name (a directory's own events name the
    /// directory); `None` when events were lost or the queue could not be read.
    pub(super) fn drain(&mut self) -> Option<BTreeSet<PathBuf>> {
        let mut dirty = BTreeSet::new();
        for event in self.watcher.drain()? {
            if event.change == Change::Overflow {
                return None;
            }
            let Some(dir) = self.dirs.get(&event.watch) else {
                continue;
            };
            let path = match &event.name {
                Some(name) => {
                    use std::os::unix::ffi::OsStrExt as _;
                    dir.join(std::ffi::OsStr::from_bytes(name))
                }
                None => dir.clone(),
            };
            if event.change == Change::Unwatched {
                self.dirs.remove(&event.watch);
            }
            dirty.insert(path);
        }
        Some(dirty)
    }
}
