//! Kernel notifications of changes to the watched paths ([`Notifier`], inotify on Linux), so
//! a snapshot reads only what changed, with every path read all the same each [`SWEEP`].

#[cfg(doc)]
use super::snapshot::Snapshot;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::snapshot::normalized;

/// How often [`Snapshot::take_notified`] reads every watched path all the same.
pub const SWEEP: Duration = Duration::from_secs(2);

/// Kernel notifications of changes to the watched paths (inotify, on Linux), for
/// [`Snapshot::take_notified`]: every directory a snapshot taken with it read is watched (from
/// before it was read), and so are the directories that hold the watched files and trees.
#[derive(Debug)]
pub struct Notifier {
    #[cfg(target_os = "linux")]
    pub(super) fd: std::os::fd::OwnedFd,
    /// Each watched directory, by its watch.
    pub(super) dirs: HashMap<i32, PathBuf>,
    /// The watched paths (files, trees' roots) whose changes are taken from events; every other
    /// watch is read again at each snapshot, by its stat data.
    pub(super) trusted: Vec<PathBuf>,
    /// When every watched path was last read.
    pub(super) swept: Instant,
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
    #[cfg(target_os = "linux")]
    pub fn new(trusted: &[PathBuf]) -> Option<Self> {
        use rustix::fs::inotify::{CreateFlags, init};
        let fd = init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Self {
            fd,
            dirs: HashMap::new(),
            trusted: trusted.iter().map(|path| normalized(path)).collect(),
            swept: Instant::now(),
            lost: false,
        })
    }

    /// A notifier, on a platform that has one: not this one.
    #[cfg(not(target_os = "linux"))]
    pub fn new(_trusted: &[PathBuf]) -> Option<Self> {
        None
    }

    /// Watches the directory `dir` (normalized). A directory the kernel refuses (gone, or no
    /// watch left) is not watched: its changes then show at the next sweep.
    #[cfg(target_os = "linux")]
    pub(super) fn watch(&mut self, dir: &Path) {
        use rustix::fs::inotify::{WatchFlags, add_watch};
        let flags = WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW;
        if let Ok(wd) = add_watch(&self.fd, dir, flags) {
            self.dirs.insert(wd, dir.to_path_buf());
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn watch(&mut self, _dir: &Path) {}

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
    #[cfg(target_os = "linux")]
    pub(super) fn drain(&mut self) -> Option<BTreeSet<PathBuf>> {
        use rustix::fs::inotify::{ReadFlags, Reader};
        let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut reader = Reader::new(&self.fd, &mut buffer);
        let mut dirty = BTreeSet::new();
        loop {
            match reader.next() {
                Ok(event) => {
                    let flags = event.events();
                    if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                        return None;
                    }
                    let Some(dir) = self.dirs.get(&event.wd()) else {
                        continue;
                    };
                    let path = match event.file_name() {
                        Some(name) if !name.to_bytes().is_empty() => {
                            use std::os::unix::ffi::OsStrExt as _;
                            dir.join(std::ffi::OsStr::from_bytes(name.to_bytes()))
                        }
                        _ => dir.clone(),
                    };
                    if flags.contains(ReadFlags::IGNORED) {
                        self.dirs.remove(&event.wd());
                    }
                    dirty.insert(path);
                }
                Err(rustix::io::Errno::AGAIN) => return Some(dirty),
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return None,
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn drain(&mut self) -> Option<BTreeSet<PathBuf>> {
        None
    }
}
