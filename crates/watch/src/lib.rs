//! Kernel notifications of changes to watched directories: one [`Watcher`] for every part of
//! epic that keeps what it read of a tree true between reads (git-ops' status monitor, the turn
//! guard's notifier), instead of one inotify loop each.
//!
//! On Linux, inotify queues an event for a directory's entry in the same system call that
//! changes it, before the call returns: once a directory is watched, every later change to its
//! entries is in the queue by the time the change is visible. A reader that watches a directory
//! *before* reading it, and drains the queue before trusting what it read, misses nothing. Where
//! that cannot hold (another platform, no inotify instance or watch left, a file system that
//! changes underneath the kernel: [`reports_every_change`]), [`Watcher::new`] or
//! [`Watcher::watch`] gives `None` and the caller reads everything every time.
//!
//! ```
//! use epic_watch::{Change, Watcher};
//!
//! let dir = tempfile::tempdir()?;
//! # #[cfg(target_os = "linux")]
//! # {
//! let watcher = Watcher::new().expect("an inotify instance");
//! let watch = watcher.watch(dir.path()).expect("a watch");
//! std::fs::write(dir.path().join("notes.txt"), "hello")?;
//! let events = watcher.drain().expect("a readable queue");
//! assert!(events.iter().any(|event| event.watch == watch
//!     && event.change == Change::Appeared
//!     && event.name.as_deref() == Some(&b"notes.txt"[..])));
//! # }
//! # Ok::<(), std::io::Error>(())
//! ```

mod watcher;

pub use watcher::{Change, Event, WatchId, Watcher, reports_every_change};
