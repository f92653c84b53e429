//! The quick pass of a status: one parallel walk of the worktree that proves most of it
//! unchanged, and names the few paths (the suspects) a full status must look at.
//!
//! A status has two halves, both costly on a large worktree: an `lstat` of every tracked file,
//! compared with the stat data the index keeps, and a read of every directory for untracked
//! files. git and gix do them as two passes, the second single-threaded, each `lstat` resolving
//! the whole path. The scan does both in one walk: it reads each directory once, on every core,
//! and stats its tracked files relative to the open directory (`fstatat`), which spares the
//! kernel the path lookups. A file is proven unchanged by exactly the rule gix's status applies
//! (stat data equal under the repository's `core.trustCTime`/`core.checkStat` settings, the
//! same type and executable bit, not racily clean); anything else, and every path not in the
//! index, is a suspect, and gix's status, limited to the suspects by pathspec, decides: content
//! of racy files, ignore rules, submodules. So the scan never decides that something changed,
//! only that something did not.
//!
//! Where its assumptions do not hold it declines ([`Scan::Declined`]) and the caller runs the
//! full status: a case-insensitive or precomposing file system, a sparse or conflicted index, a
//! nested repository, a directory it cannot read, or more suspects than a pathspec handles well.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::index::entry::{Flags, Stat, stat};

/// More suspects than this and a pathspec-limited status costs more than the full one.
const MAX_SUSPECTS: usize = 128;

/// Entries whose worktree file git and gix do not look at.
const SKIPPED: Flags = Flags::UPTODATE
    .union(Flags::SKIP_WORKTREE)
    .union(Flags::ASSUME_VALID)
    .union(Flags::FSMONITOR_VALID);

/// What the quick pass found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// The paths, relative to the worktree root, that may have changed: tracked files whose
    /// stat data differ or are racy, tracked files not found, untracked files and directories.
    /// Empty: the worktree matches its index.
    Suspects(Vec<BString>),
    /// The pass does not apply here; run the full status.
    Declined,
}

/// Walks the worktree of `repo` against `index`.
pub(crate) fn scan(repo: &gix::Repository, index: &gix::index::State) -> Scan {
    #[cfg(unix)]
    {
        let Some(workdir) = repo.workdir() else {
            return Scan::Declined;
        };
        let (Ok(stat), Ok(fs)) = (repo.stat_options(), repo.filesystem_options()) else {
            return Scan::Declined;
        };
        if fs.ignore_case || fs.precompose_unicode || index.is_sparse() {
            return Scan::Declined;
        }
        let Some(tree) = Tree::of(index) else {
            return Scan::Declined;
        };
        let walk = Walk {
            workdir,
            index,
            tree,
            options: Options {
                stat,
                symlinks: fs.symlink,
                executable_bit: fs.executable_bit,
            },
            seen: index
                .entries()
                .iter()
                .map(|_| AtomicBool::new(false))
                .collect(),
            queue: Mutex::new(Queue {
                dirs: vec![BString::default()],
                busy: 0,
            }),
            ready: Condvar::new(),
            declined: AtomicBool::new(false),
        };
        walk.run()
    }
    #[cfg(not(unix))]
    {
        let _ = (repo, index);
        Scan::Declined
    }
}

/// The index as directories: the tracked files of each, and which directories hold any.
struct Tree<'a> {
    /// Each directory's tracked files, sorted by name, with their entry's position in the index.
    files: HashMap<&'a BStr, Vec<(&'a BStr, usize)>>,
    /// Every directory with a tracked path somewhere below it; the root is `""`.
    dirs: HashSet<&'a BStr>,
}

impl<'a> Tree<'a> {
    /// `None` for an index the scan does not handle: a conflicted one (several stages of a
    /// path) or a sparse one (directory entries).
    fn of(index: &'a gix::index::State) -> Option<Self> {
        let mut files: HashMap<&BStr, Vec<(&BStr, usize)>> = HashMap::new();
        let mut dirs: HashSet<&BStr> = HashSet::from([BStr::new("")]);
        for (position, entry) in index.entries().iter().enumerate() {
            if entry.stage_raw() != 0 || entry.mode.is_sparse() {
                return None;
            }
            let path = entry.path(index);
            let (dir, name) = match path.rfind_byte(b'/') {
                Some(slash) => (&path[..slash], &path[slash + 1..]),
                None => (&path[..0], path),
            };
            // Entries are sorted by path, so each directory's names arrive in order.
            files.entry(dir).or_default().push((name, position));
            let mut ancestor = dir;
            while dirs.insert(ancestor) {
                ancestor = match ancestor.rfind_byte(b'/') {
                    Some(slash) => &ancestor[..slash],
                    None => &ancestor[..0],
                };
            }
        }
        Some(Self { files, dirs })
    }
}

#[derive(Clone, Copy)]
struct Options {
    stat: stat::Options,
    symlinks: bool,
    executable_bit: bool,
}

/// Directories still to read, and how many workers are reading one.
struct Queue {
    dirs: Vec<BString>,
    busy: usize,
}

struct Walk<'a> {
    workdir: &'a Path,
    index: &'a gix::index::State,
    tree: Tree<'a>,
    options: Options,
    /// Which index entries the walk met on disk.
    seen: Vec<AtomicBool>,
    queue: Mutex<Queue>,
    ready: Condvar,
    declined: AtomicBool,
}

impl Walk<'_> {
    fn run(&self) -> Scan {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let mut suspects: Vec<BString> = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(|| self.work())).collect();
            let mut all = self.work();
            for helper in helpers {
                match helper.join() {
                    Ok(found) => all.extend(found),
                    Err(_) => self.declined.store(true, Ordering::Relaxed),
                }
            }
            all
        });
        if self.declined.load(Ordering::Relaxed) {
            return Scan::Declined;
        }
        for (entry, seen) in self.index.entries().iter().zip(&self.seen) {
            if !seen.load(Ordering::Relaxed) && !entry.flags.intersects(SKIPPED) {
                // Not where the index has it: deleted, or its directory replaced.
                suspects.push(entry.path(self.index).to_owned());
            }
            if suspects.len() > MAX_SUSPECTS {
                return Scan::Declined;
            }
        }
        suspects.sort_unstable();
        suspects.dedup();
        Scan::Suspects(suspects)
    }

    /// One worker: reads directories from the queue until every directory has been read.
    fn work(&self) -> Vec<BString> {
        let mut suspects = Vec::new();
        loop {
            let dir = {
                let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    if self.declined.load(Ordering::Relaxed) {
                        return suspects;
                    }
                    if let Some(dir) = queue.dirs.pop() {
                        queue.busy += 1;
                        break dir;
                    }
                    if queue.busy == 0 {
                        return suspects;
                    }
                    queue = self
                        .ready
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            let subdirs = self.visit(dir.as_bstr(), &mut suspects);
            if subdirs.is_none() || suspects.len() > MAX_SUSPECTS {
                self.declined.store(true, Ordering::Relaxed);
            }
            let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            queue.dirs.extend(subdirs.unwrap_or_default());
            queue.busy -= 1;
            drop(queue);
            self.ready.notify_all();
        }
    }

    /// Reads one tracked directory: compares its tracked files, notes what is not tracked, and
    /// returns its subdirectories that hold tracked paths. `None` declines the scan.
    #[cfg(unix)]
    fn visit(&self, dir: &BStr, suspects: &mut Vec<BString>) -> Option<Vec<BString>> {
        use std::os::unix::ffi::OsStrExt as _;

        let path: PathBuf = if dir.is_empty() {
            self.workdir.to_owned()
        } else {
            self.workdir.join(gix::path::from_bstr(dir).ok()?)
        };
        let entries = match std::fs::read_dir(&path) {
            Ok(entries) => entries,
            // Gone or replaced since its parent was read: its tracked files stay unseen.
            Err(error) if gone(&error) => return Some(Vec::new()),
            Err(_) => return None,
        };
        let files = self.tree.files.get(dir).map_or(&[][..], Vec::as_slice);
        let mut subdirs = Vec::new();
        for dirent in entries {
            let dirent = dirent.ok()?;
            let name = dirent.file_name();
            let name = BStr::new(name.as_bytes());
            if name == ".git" {
                if dir.is_empty() {
                    continue;
                }
                // A nested repository: how it shows is gix's business.
                return None;
            }
            let mut rela = BString::from(dir);
            if !rela.is_empty() {
                rela.push_byte(b'/');
            }
            rela.push_str(name);
            let kind = dirent.file_type().ok()?;
            if kind.is_dir() {
                if self.tree.dirs.contains(rela.as_bstr()) {
                    subdirs.push(rela);
                } else {
                    // Untracked, ignored, or a submodule: gix tells which.
                    suspects.push(rela);
                }
                continue;
            }
            let Ok(found) = files.binary_search_by(|(file, _)| (*file).cmp(name)) else {
                suspects.push(rela);
                continue;
            };
            let position = files[found].1;
            self.seen[position].store(true, Ordering::Relaxed);
            let entry = &self.index.entries()[position];
            if entry.flags.intersects(SKIPPED) {
                continue;
            }
            let unchanged = match dirent.metadata() {
                Ok(metadata) => self.unchanged(entry, kind, &metadata),
                Err(error) if gone(&error) => false,
                Err(_) => return None,
            };
            if !unchanged {
                suspects.push(rela);
            }
        }
        Some(subdirs)
    }

    #[cfg(not(unix))]
    fn visit(&self, _dir: &BStr, _suspects: &mut Vec<BString>) -> Option<Vec<BString>> {
        None
    }

    /// Whether gix's status would find the file of `entry` unchanged from its stat data alone:
    /// the same rule, field for field (`gix_status::index_as_worktree`).
    #[cfg(unix)]
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the index keeps the low 32 bits of device, inode and size, as git does"
    )]
    fn unchanged(
        &self,
        entry: &gix::index::Entry,
        kind: std::fs::FileType,
        metadata: &std::fs::Metadata,
    ) -> bool {
        use std::os::unix::fs::MetadataExt as _;

        if entry.flags.contains(Flags::INTENT_TO_ADD) {
            return false;
        }
        let options = self.options;
        let executable = metadata.mode() & 0o100 != 0;
        let mode_change = entry.mode.change_to_match_fs_with_values(
            kind.is_file(),
            kind.is_dir(),
            kind.is_symlink(),
            executable,
            options.symlinks,
            options.executable_bit,
        );
        if mode_change.is_some() {
            return false;
        }
        let now = Stat {
            mtime: time(metadata.mtime(), metadata.mtime_nsec()),
            ctime: time(metadata.ctime(), metadata.ctime_nsec()),
            dev: metadata.dev() as u32,
            ino: metadata.ino() as u32,
            uid: metadata.uid(),
            gid: metadata.gid(),
            size: metadata.size() as u32,
        };
        now.matches(&entry.stat, options.stat)
            && (!entry.id.is_empty_blob() || entry.stat.size == 0)
            && !now.is_racy(self.index.timestamp(), options.stat)
    }
}

/// A stat time as the index keeps it: seconds truncated to 32 bits; zero before the epoch.
#[cfg(unix)]
fn time(secs: i64, nsecs: i64) -> stat::Time {
    match (u64::try_from(secs), u32::try_from(nsecs)) {
        // Truncation on purpose: git and gix compare the low 32 bits.
        #[expect(clippy::cast_possible_truncation, reason = "the index keeps 32 bits")]
        (Ok(secs), Ok(nsecs)) => stat::Time {
            secs: secs as u32,
            nsecs,
        },
        _ => stat::Time::default(),
    }
}

/// Whether an error means the path is no longer there (or no longer a directory).
fn gone(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}
