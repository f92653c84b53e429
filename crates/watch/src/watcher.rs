//! The one inotify instance of a [`Watcher`], its watches and its queue of events, and whether
//! a file system reports every change ([`reports_every_change`]).

use std::path::Path;

/// A watch on one directory, as the kernel numbers it (unique within its [`Watcher`]).
pub type WatchId = i32;

/// What happened, by kind: each kernel event is one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// An entry was created or moved in.
    Appeared,
    /// An entry was removed or moved out.
    Vanished,
    /// An entry's content, mode or times changed, or a writer closed it.
    Touched,
    /// The watched directory itself was removed or moved: its watch no longer names its path.
    SelfGone,
    /// The kernel dropped the watch (its directory is gone, or its file system unmounted).
    Unwatched,
    /// Events were lost (the queue overflowed): nothing read before can be trusted.
    Overflow,
}

/// One event: which watch, which entry of its directory (`None` for the directory itself, and
/// for [`Change::Overflow`]), what happened, and whether the entry is a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The watch it came through (meaningless for [`Change::Overflow`]).
    pub watch: WatchId,
    /// The entry's name in the watched directory, as bytes.
    pub name: Option<Vec<u8>>,
    /// What happened.
    pub change: Change,
    /// Whether the entry is a directory.
    pub is_dir: bool,
}

/// An inotify instance: directories watched, events drained without blocking.
#[derive(Debug)]
pub struct Watcher {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

impl Watcher {
    /// A watcher, on a platform that has one and with an instance left
    /// (`fs.inotify.max_user_instances`); `None` otherwise.
    #[cfg(target_os = "linux")]
    pub fn new() -> Option<Self> {
        use rustix::fs::inotify::{CreateFlags, init};
        let fd = init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Self { fd })
    }

    /// A watcher, on a platform that has one: not this one.
    #[cfg(not(target_os = "linux"))]
    pub fn new() -> Option<Self> {
        None
    }

    /// Watches the directory `dir` (not a symbolic link to one) for changes to its entries and
    /// to itself; `None` when the kernel refuses (gone, not a directory, or no watch left:
    /// `fs.inotify.max_user_watches`). Watching a directory twice gives the same watch.
    #[cfg(target_os = "linux")]
    pub fn watch(&self, dir: &Path) -> Option<WatchId> {
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
            | WatchFlags::DONT_FOLLOW
            // A file unlinked from the directory is no longer at any path watched here.
            | WatchFlags::EXCL_UNLINK;
        add_watch(&self.fd, dir, flags).ok()
    }

    /// Watches nothing, on a platform without a watcher.
    #[cfg(not(target_os = "linux"))]
    pub fn watch(&self, _dir: &Path) -> Option<WatchId> {
        None
    }

    /// Stops watch `watch`; one already gone is no error (its [`Change::Unwatched`] may still
    /// be queued).
    pub fn unwatch(&self, watch: WatchId) {
        #[cfg(target_os = "linux")]
        rustix::fs::inotify::remove_watch(&self.fd, watch).ok();
        #[cfg(not(target_os = "linux"))]
        let _ = watch;
    }

    /// Every event queued since the last call, in order, without blocking; `None` when the
    /// queue cannot be read (then nothing it watched can be trusted).
    #[cfg(target_os = "linux")]
    pub fn drain(&self) -> Option<Vec<Event>> {
        use rustix::fs::inotify::{ReadFlags, Reader};
        let mut buffer = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut reader = Reader::new(&self.fd, &mut buffer);
        let mut events = Vec::new();
        loop {
            match reader.next() {
                Ok(event) => {
                    let flags = event.events();
                    let change = if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                        Change::Overflow
                    } else if flags.intersects(ReadFlags::IGNORED | ReadFlags::UNMOUNT) {
                        Change::Unwatched
                    } else if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                        Change::SelfGone
                    } else if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
                        Change::Appeared
                    } else if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
                        Change::Vanished
                    } else {
                        Change::Touched
                    };
                    let name = event
                        .file_name()
                        .map(|name| name.to_bytes().to_vec())
                        .filter(|name| !name.is_empty());
                    events.push(Event {
                        watch: event.wd(),
                        name,
                        change,
                        is_dir: flags.contains(ReadFlags::ISDIR),
                    });
                }
                Err(rustix::io::Errno::AGAIN) => return Some(events),
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => return None,
            }
        }
    }

    /// Waits until an event is queued or `limit` passes (`None`: no limit), without reading it;
    /// whether one is queued. Interrupted by a signal, it says none is, and the caller looks
    /// again.
    #[cfg(target_os = "linux")]
    pub fn wait(&self, limit: Option<std::time::Duration>) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
        let timeout = limit.and_then(|limit| Timespec::try_from(limit).ok());
        poll(&mut fds, timeout.as_ref()).is_ok_and(|ready| ready > 0)
    }

    /// Nothing ever comes, on a platform without a watcher: waits out `limit`.
    #[cfg(not(target_os = "linux"))]
    pub fn wait(&self, limit: Option<std::time::Duration>) -> bool {
        std::thread::sleep(limit.unwrap_or(std::time::Duration::MAX));
        false
    }

    /// Nothing to drain, on a platform without a watcher.
    #[cfg(not(target_os = "linux"))]
    pub fn drain(&self) -> Option<Vec<Event>> {
        None
    }
}

/// Whether the file system holding `path` is known to change only through this kernel, so its
/// every change is an event: local disk and memory file systems. Network and FUSE file systems
/// change underneath the kernel and are left out, as is everything on another platform.
#[cfg(target_os = "linux")]
pub fn reports_every_change(path: &Path) -> bool {
    rustix::fs::statfs(path).is_ok_and(|stat| LOCAL.contains(&stat.f_type))
}

/// Whether the file system holding `path` reports every change: never, on this platform.
#[cfg(not(target_os = "linux"))]
pub fn reports_every_change(_path: &Path) -> bool {
    false
}

/// File systems whose every change goes through this kernel (`statfs` magic numbers).
#[cfg(target_os = "linux")]
const LOCAL: [i64; 9] = [
    0xEF53,      // ext2, ext3, ext4
    0x0102_1994, // tmpfs
    0x5846_5342, // xfs
    0x9123_683E, // btrfs
    0xF2F5_2010, // f2fs
    0x2FC1_2FC1, // zfs
    0x794C_7630, // overlayfs (containers)
    0xCA45_1A4E, // bcachefs
    0x8584_58F6, // ramfs
];

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{Change, Event, Watcher, reports_every_change};

    fn changes(watcher: &Watcher) -> Vec<(Option<String>, Change, bool)> {
        watcher
            .drain()
            .expect("readable")
            .into_iter()
            .map(
                |Event {
                     name,
                     change,
                     is_dir,
                     ..
                 }| {
                    (
                        name.map(|name| String::from_utf8(name).expect("utf-8")),
                        change,
                        is_dir,
                    )
                },
            )
            .collect()
    }

    #[test]
    fn each_kind_of_change_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let watcher = Watcher::new().expect("inotify");
        let watch = watcher.watch(dir.path()).expect("watch");
        assert_eq!(
            watcher.watch(dir.path()),
            Some(watch),
            "the same watch twice"
        );
        assert!(changes(&watcher).is_empty(), "nothing yet");

        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        std::fs::write(dir.path().join("a"), "1").expect("write");
        std::fs::rename(dir.path().join("a"), dir.path().join("b")).expect("rename");
        std::fs::remove_file(dir.path().join("b")).expect("remove");
        let seen = changes(&watcher);
        let first = |name: &str, change| {
            seen.iter()
                .find(|(n, c, _)| n.as_deref() == Some(name) && *c == change)
                .cloned()
        };
        assert_eq!(
            first("sub", Change::Appeared),
            Some((Some("sub".into()), Change::Appeared, true))
        );
        assert!(first("a", Change::Appeared).is_some(), "{seen:?}");
        assert!(first("a", Change::Touched).is_some(), "{seen:?}");
        assert!(
            first("a", Change::Vanished).is_some(),
            "moved out: {seen:?}"
        );
        assert!(first("b", Change::Appeared).is_some(), "moved in: {seen:?}");
        assert!(first("b", Change::Vanished).is_some(), "removed: {seen:?}");
    }

    #[test]
    fn a_removed_directory_says_so_and_drops_its_watch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).expect("mkdir");
        let watcher = Watcher::new().expect("inotify");
        let watch = watcher.watch(&sub).expect("watch");
        std::fs::remove_dir(&sub).expect("rmdir");
        let events = watcher.drain().expect("readable");
        let on_it: Vec<Change> = events
            .iter()
            .filter(|event| event.watch == watch && event.name.is_none())
            .map(|event| event.change)
            .collect();
        assert_eq!(on_it, [Change::SelfGone, Change::Unwatched], "{events:?}");
        assert_eq!(watcher.watch(&sub), None, "gone: not watched");
    }

    #[test]
    fn an_unwatched_directory_is_quiet() {
        let dir = tempfile::tempdir().expect("tempdir");
        let watcher = Watcher::new().expect("inotify");
        let watch = watcher.watch(dir.path()).expect("watch");
        watcher.unwatch(watch);
        std::fs::write(dir.path().join("a"), "1").expect("write");
        let events = watcher.drain().expect("readable");
        assert!(
            events.iter().all(|event| event.change == Change::Unwatched),
            "{events:?}"
        );
    }

    #[test]
    fn a_wait_ends_when_a_change_is_queued() {
        let dir = tempfile::tempdir().expect("tempdir");
        let watcher = Watcher::new().expect("inotify");
        watcher.watch(dir.path()).expect("watch");
        assert!(
            !watcher.wait(Some(std::time::Duration::ZERO)),
            "nothing queued yet"
        );
        let path = dir.path().join("order.json");
        let writer = std::thread::spawn(move || std::fs::write(path, "{}").expect("write"));
        // No limit: only the change can end this wait.
        assert!(watcher.wait(None));
        writer.join().expect("the writer");
        assert!(!watcher.drain().expect("readable").is_empty());
    }

    #[test]
    fn a_temporary_directory_reports_every_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(reports_every_change(dir.path()));
        assert!(!reports_every_change(&dir.path().join("missing")));
    }
}
