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
//! same type and executable bit, not racily clean), or by its content (below). A tracked file
//! it finds missing, of another type or mode, or read and different is changed, as gix's status
//! would report it. Every other path (untracked files and directories, submodules, files it
//! could not read) is a suspect, and gix's status, limited to the suspects by pathspec,
//! decides: ignore rules, submodules, nested repositories.
//!
//! Where its assumptions do not hold it declines ([`Scan::Declined`]) and the caller runs the
//! full status: a case-insensitive or precomposing file system, a sparse or conflicted index, a
//! nested repository, a directory it cannot read, or more suspects than a pathspec handles well.
//!
//! # Files whose content a status already read
//!
//! A file written in the same second as the index that lists it is *racy*: its stat data cannot
//! prove it unchanged (a second write in that second keeps them), so every status reads it
//! again, and every git command that writes the index in that second leaves it racy. Right
//! after a checkout that is every file of the worktree, for as long as commands follow within
//! the second. The scan reads such files itself, through the repository's filters as git
//! would to add them, on every core, and compares their blob ids with the index's; and
//! [`Verified`] ends the rereading: the full stat data (nanoseconds included) and blob id of each
//! file found equal are kept, and a later scan takes a file whose stat data and entry are still
//! exactly those as unchanged. That holds because any write to a file sets its change time (`ctime`, which no
//! program can set back) to the time of the write: only files whose change time lies well
//! before the status began are kept ([`settled`]), so a later write shows as a new change time.

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

/// What the quick pass found. Paths are relative to the worktree root.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// Both empty: the worktree matches its index.
    Found {
        /// Tracked paths certainly changed: not found, read and found different, or of another
        /// type or mode, as gix's status reports them.
        changed: Vec<BString>,
        /// Paths only gix's status can judge: untracked files and directories (ignored or not,
        /// a submodule or not), tracked files the pass could not read.
        suspects: Vec<BString>,
    },
    /// The pass does not apply here; run the full status.
    Declined,
}

/// The quick pass's findings, and the tracked files among the suspects that a status reading
/// their content may find unchanged (see [`Verified::keep`]).
#[derive(Debug)]
pub(crate) struct Scanned {
    pub(crate) scan: Scan,
    pub(crate) candidates: Vec<Candidate>,
}

/// A tracked file the stat data of its index entry could not prove unchanged.
#[derive(Debug)]
pub(crate) struct Candidate {
    path: BString,
    id: gix::ObjectId,
    stat: Stat,
}

/// Files a status found equal to their index entries by reading them: path, the entry's blob
/// id, the file's full stat data then. Kept per worktree by the [`GixGit`](crate::GixGit) handle.
#[derive(Debug, Default)]
pub(crate) struct Verified {
    files: HashMap<BString, (gix::ObjectId, Stat)>,
}

/// More kept files than this and the memory goes back (many times a large worktree's files).
const MAX_VERIFIED: usize = 1 << 20;

impl Verified {
    /// Whether a status found this file, with exactly these stat data, equal to blob `id`.
    fn vouches(&self, path: &BStr, id: &gix::oid, stat: &Stat) -> bool {
        self.files
            .get(path)
            .is_some_and(|(known, known_stat)| known.as_ref() == id && known_stat == stat)
    }

    /// Keeps the candidates that a status which began at `began` did not report as changed,
    /// where their change time is settled.
    pub(crate) fn keep(
        &mut self,
        candidates: Vec<Candidate>,
        reported: &HashSet<BString>,
        began: std::time::SystemTime,
    ) {
        if self.files.len() + candidates.len() > MAX_VERIFIED {
            self.files.clear();
        }
        for candidate in candidates {
            if !reported.contains(&candidate.path) && settled(candidate.stat.ctime, began) {
                self.files
                    .insert(candidate.path, (candidate.id, candidate.stat));
            }
        }
    }
}

/// Whether a change time lies far enough before `began` that a write after `began` cannot have
/// left it as it is: the kernel stamps writes from a clock that ticks every few milliseconds,
/// hence 50 ms; a time without nanoseconds is taken for a file system that keeps whole seconds
/// (or two), hence 3 s.
fn settled(ctime: stat::Time, began: std::time::SystemTime) -> bool {
    let Ok(now) = began.duration_since(std::time::UNIX_EPOCH) else {
        return false;
    };
    let margin = if ctime.nsecs == 0 {
        std::time::Duration::from_secs(3)
    } else {
        std::time::Duration::from_millis(50)
    };
    // The index keeps the low 32 bits of the seconds: compare in that space.
    let then = std::time::Duration::new(u64::from(ctime.secs), ctime.nsecs);
    let now = std::time::Duration::new(now.as_secs() & u64::from(u32::MAX), now.subsec_nanos());
    then + margin < now
}

/// Walks the worktree of `repo` against `index`; files in `verified` with the same stat data
/// and blob id are unchanged.
pub(crate) fn scan(
    repo: &gix::Repository,
    index: &gix::index::State,
    verified: &Verified,
) -> Scanned {
    let declined = || Scanned {
        scan: Scan::Declined,
        candidates: Vec::new(),
    };
    #[cfg(unix)]
    {
        let Some(workdir) = repo.workdir() else {
            return declined();
        };
        let (Ok(stat), Ok(fs)) = (repo.stat_options(), repo.filesystem_options()) else {
            return declined();
        };
        if fs.ignore_case || fs.precompose_unicode || index.is_sparse() {
            return declined();
        }
        let Some(tree) = Tree::of(index) else {
            return declined();
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
            verified,
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
        walk.run(repo)
    }
    #[cfg(not(unix))]
    {
        let _ = (repo, index, verified);
        declined()
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
    verified: &'a Verified,
    /// Which index entries the walk met on disk.
    seen: Vec<AtomicBool>,
    queue: Mutex<Queue>,
    ready: Condvar,
    declined: AtomicBool,
}

impl Walk<'_> {
    fn run(&self, repo: &gix::Repository) -> Scanned {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let mut found: Found = std::thread::scope(|scope| {
            // Each worker reads file contents through its own handle: a handle is not `Sync`.
            let helpers: Vec<_> = (1..workers)
                .map(|_| {
                    let repo = repo.clone();
                    scope.spawn(move || self.work(&repo))
                })
                .collect();
            let mut all = self.work(repo);
            for helper in helpers {
                match helper.join() {
                    Ok(more) => {
                        all.changed.extend(more.changed);
                        all.suspects.extend(more.suspects);
                        all.candidates.extend(more.candidates);
                    }
                    Err(_) => self.declined.store(true, Ordering::Relaxed),
                }
            }
            all
        });
        if self.declined.load(Ordering::Relaxed) {
            return Scanned {
                scan: Scan::Declined,
                candidates: Vec::new(),
            };
        }
        for (entry, seen) in self.index.entries().iter().zip(&self.seen) {
            if !seen.load(Ordering::Relaxed) && !entry.flags.intersects(SKIPPED) {
                let path = entry.path(self.index).to_owned();
                if entry.mode.is_submodule() {
                    // A submodule is a directory: how it stands is gix's business.
                    found.suspects.push(path);
                } else {
                    // Not where the index has it: deleted, or its directory replaced.
                    found.changed.push(path);
                }
            }
        }
        // Past the limit the walk still went on: its candidates serve the full status.
        let scan = if found.suspects.len() > MAX_SUSPECTS {
            Scan::Declined
        } else {
            for paths in [&mut found.changed, &mut found.suspects] {
                paths.sort_unstable();
                paths.dedup();
            }
            Scan::Found {
                changed: found.changed,
                suspects: found.suspects,
            }
        };
        Scanned {
            scan,
            candidates: found.candidates,
        }
    }

    /// One worker: reads directories from the queue until every directory has been read.
    fn work(&self, repo: &gix::Repository) -> Found {
        let mut suspects = Found::default();
        let mut reader = Reader {
            repo,
            pipeline: None,
        };
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
            let subdirs = self.visit(dir.as_bstr(), &mut suspects, &mut reader);
            if subdirs.is_none() {
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
    fn visit(
        &self,
        dir: &BStr,
        found: &mut Found,
        reader: &mut Reader<'_>,
    ) -> Option<Vec<BString>> {
        use std::os::unix::ffi::OsStrExt as _;

        let suspects = &mut found.suspects;
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
            let Ok(at) = files.binary_search_by(|(file, _)| (*file).cmp(name)) else {
                suspects.push(rela);
                continue;
            };
            let position = files[at].1;
            self.seen[position].store(true, Ordering::Relaxed);
            let entry = &self.index.entries()[position];
            if entry.flags.intersects(SKIPPED) {
                continue;
            }
            let metadata = match dirent.metadata() {
                Ok(metadata) => metadata,
                Err(error) if gone(&error) => {
                    found.changed.push(rela);
                    continue;
                }
                Err(_) => return None,
            };
            match self.unchanged(entry, kind, &metadata) {
                Unchanged::Yes => {}
                Unchanged::Unproven(stat) => {
                    if self.verified.vouches(rela.as_bstr(), &entry.id, &stat) {
                        continue;
                    }
                    let symlink = kind.is_symlink() && self.options.symlinks;
                    let same = if kind.is_file() || symlink {
                        reader.is(
                            self.index,
                            &dirent.path(),
                            rela.as_bstr(),
                            symlink,
                            &entry.id,
                        )
                    } else {
                        None
                    };
                    match same {
                        // Read and found equal: unchanged, and kept for the next status.
                        Some(true) => found.candidates.push(Candidate {
                            path: rela,
                            id: entry.id,
                            stat,
                        }),
                        Some(false) => found.changed.push(rela),
                        None => suspects.push(rela),
                    }
                }
                Unchanged::No => found.changed.push(rela),
            }
        }
        Some(subdirs)
    }

    #[cfg(not(unix))]
    fn visit(
        &self,
        _dir: &BStr,
        _found: &mut Found,
        _reader: &mut Reader<'_>,
    ) -> Option<Vec<BString>> {
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
    ) -> Unchanged {
        use std::os::unix::fs::MetadataExt as _;

        if entry.flags.contains(Flags::INTENT_TO_ADD) {
            return Unchanged::No;
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
            return Unchanged::No;
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
        if now.matches(&entry.stat, options.stat)
            && (!entry.id.is_empty_blob() || entry.stat.size == 0)
            && !now.is_racy(self.index.timestamp(), options.stat)
        {
            Unchanged::Yes
        } else {
            // Only its content can tell.
            Unchanged::Unproven(now)
        }
    }
}

/// Reads worktree files as git reads them to add them: through the repository's filters.
struct Reader<'repo> {
    repo: &'repo gix::Repository,
    /// Made at the first file read: most scans read none.
    pipeline: Option<gix::filter::Pipeline<'repo>>,
}

impl Reader<'_> {
    /// Whether the file at `path` (`rela` in the worktree) holds blob `id`; `None` when it
    /// cannot be read or filtered (then gix's status decides).
    fn is(
        &mut self,
        index: &gix::index::State,
        path: &Path,
        rela: &BStr,
        symlink: bool,
        id: &gix::oid,
    ) -> Option<bool> {
        let data = self.read(index, path, rela, symlink)?;
        let hash = gix::objs::compute_hash(id.kind(), gix::objs::Kind::Blob, &data).ok()?;
        Some(hash == id)
    }

    fn read(
        &mut self,
        index: &gix::index::State,
        path: &Path,
        rela: &BStr,
        symlink: bool,
    ) -> Option<Vec<u8>> {
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
        use std::io::Read as _;

        if symlink {
            let target = std::fs::read_link(path).ok()?;
            return Some(gix::path::into_bstr(target).ok()?.into_owned().into());
        }
        if self.pipeline.is_none() {
            self.pipeline = Some(self.repo.filter_pipeline(None).ok()?.0);
        }
        let pipeline = self.pipeline.as_mut()?;
        let file = std::fs::File::open(path).ok()?;
        let rela = gix::path::from_bstr(rela).ok()?;
        let mut data = Vec::new();
        match pipeline.convert_to_git(file, &rela, index).ok()? {
            ToGitOutcome::Unchanged(mut file) => {
                file.read_to_end(&mut data).ok()?;
            }
            ToGitOutcome::Buffer(buffer) => data.extend_from_slice(buffer),
            ToGitOutcome::Process(mut read) => {
                read.read_to_end(&mut data).ok()?;
            }
        }
        Some(data)
    }
}

/// What one worker found.
#[derive(Default)]
struct Found {
    changed: Vec<BString>,
    suspects: Vec<BString>,
    candidates: Vec<Candidate>,
}

/// Whether a tracked file is unchanged, as far as its stat data tell.
enum Unchanged {
    Yes,
    /// Same type and mode, but stat data that differ from the entry's or are racy: its content
    /// decides; here are its stat data now.
    Unproven(Stat),
    No,
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
