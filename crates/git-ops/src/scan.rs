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
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};

use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Stat, stat};

use crate::monitor::{Kind, Listing, Meta, Monitor, Name, Slot, Watched, Watching, join};

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
    /// The suspects that are directories (untracked, ignored, submodules): what the monitor
    /// does not watch inside.
    pub(crate) directories: Vec<BString>,
    /// How many events the worktree's monitor had taken in when the walk began; `None`
    /// without one.
    pub(crate) generation: Option<u64>,
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
    pub(crate) fn vouches(&self, path: &BStr, id: &gix::oid, stat: &Stat) -> bool {
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

/// The worktree's monitor, started at the first status and caught up with every change since
/// the last; `None` where there is none.
pub(crate) fn monitor<'a>(
    watching: &'a mut Watching,
    workdir: &Path,
    entries: usize,
) -> Option<&'a mut Monitor> {
    if matches!(watching, Watching::Untried) {
        *watching = match Monitor::open(workdir) {
            // Listings cost memory in proportion to the worktree: not for a huge one.
            Some(monitor) if entries <= MAX_VERIFIED => Watching::On(monitor),
            _ => Watching::Off,
        };
    }
    if let Watching::On(monitor) = watching
        && !monitor.catch_up()
    {
        *watching = Watching::Off;
    }
    match watching {
        Watching::On(monitor) => Some(monitor),
        Watching::Untried | Watching::Off => None,
    }
}

/// Walks the worktree of `repo` against `index`; files in `verified` with the same stat data
/// and blob id are unchanged, and directories the monitor of `watching` kept need not be read
/// (both of the worktree's [`Memo`](crate::memo::Memo)).
pub(crate) fn scan(
    repo: &gix::Repository,
    index: &gix::index::State,
    verified: &Verified,
    watching: &mut Watching,
) -> Scanned {
    let declined = || Scanned {
        scan: Scan::Declined,
        candidates: Vec::new(),
        directories: Vec::new(),
        generation: None,
    };
    #[cfg(unix)]
    {
        let Some(workdir) = repo.workdir() else {
            return declined();
        };
        let Some(options) = Options::of(repo) else {
            return declined();
        };
        if options.case_folds || index.is_sparse() {
            return declined();
        }
        let Some(tree) = Tree::of(index) else {
            return declined();
        };
        let mut monitor = monitor(watching, workdir, index.entries().len());
        let cache = monitor.as_mut().map(|monitor| Mutex::new(monitor.take()));
        let walk = Walk {
            workdir,
            index,
            tree,
            options,
            verified,
            monitor: monitor.as_deref(),
            cache,
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
            attribute_files: OnceLock::new(),
        };
        let (mut scanned, kept) = walk.run(repo);
        if let Some(monitor) = monitor {
            scanned.generation = Some(monitor.generation());
            monitor.restore(kept.listings, kept.watched);
        }
        scanned
    }
    #[cfg(not(unix))]
    {
        let _ = (repo, index, verified, watching);
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
        let mut run: Option<(&BStr, Vec<(&BStr, usize)>)> = None;
        for (position, entry) in index.entries().iter().enumerate() {
            if entry.stage_raw() != 0 || entry.mode.is_sparse() {
                return None;
            }
            let path = entry.path(index);
            let (dir, name) = match path.rfind_byte(b'/') {
                Some(slash) => (&path[..slash], &path[slash + 1..]),
                None => (&path[..0], path),
            };
            // Entries are sorted by path, so each directory's names arrive in order, mostly one
            // after the other: a directory is looked up once for each run of its files.
            if run.as_ref().is_none_or(|(current, _)| *current != dir) {
                if let Some((current, names)) = run.take() {
                    files.entry(current).or_default().extend(names);
                }
                let mut ancestor = dir;
                while dirs.insert(ancestor) {
                    ancestor = match ancestor.rfind_byte(b'/') {
                        Some(slash) => &ancestor[..slash],
                        None => &ancestor[..0],
                    };
                }
                run = Some((dir, Vec::new()));
            }
            if let Some((_, names)) = run.as_mut() {
                names.push((name, position));
            }
        }
        if let Some((current, names)) = run {
            files.entry(current).or_default().extend(names);
        }
        Some(Self { files, dirs })
    }
}

impl Tree<'_> {
    /// The `.gitattributes` entries of `index` (the one this tree was made of), as an index of
    /// their own: the attributes of a file read through the repository's filters come from them
    /// where the worktree lacks the file (git's order for adding a file), and gix finds them by
    /// going through every entry of the index it is given, 10,000 at 10,000 files. Here each
    /// directory is asked for one name.
    fn attribute_files(&self, index: &gix::index::State) -> gix::index::State {
        let name = BStr::new(".gitattributes");
        let mut positions: Vec<usize> = self
            .files
            .values()
            .filter_map(|names| {
                let at = names.binary_search_by(|(file, _)| (*file).cmp(name)).ok()?;
                Some(names[at].1)
            })
            .collect();
        // In the index's order, which is by path.
        positions.sort_unstable();
        let mut files = gix::index::State::new(index.object_hash());
        for position in positions {
            let entry = &index.entries()[position];
            files.dangerously_push_entry(
                entry.stat,
                entry.id,
                entry.flags,
                entry.mode,
                entry.path(index),
            );
        }
        files
    }
}

/// How the repository's configuration says files compare with their index entries.
#[derive(Clone, Copy)]
pub(crate) struct Options {
    stat: stat::Options,
    pub(crate) symlinks: bool,
    pub(crate) executable_bit: bool,
    /// A case-insensitive or precomposing file system: a path in the index may name another
    /// spelling on disk.
    pub(crate) case_folds: bool,
}

impl Options {
    /// The repository's, `None` where its configuration does not read.
    pub(crate) fn of(repo: &gix::Repository) -> Option<Self> {
        let (Ok(stat), Ok(fs)) = (repo.stat_options(), repo.filesystem_options()) else {
            return None;
        };
        Some(Self {
            stat,
            symlinks: fs.symlink,
            executable_bit: fs.executable_bit,
            case_folds: fs.ignore_case || fs.precompose_unicode,
        })
    }
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
    /// Watches each directory the walk reads, where the worktree has a monitor.
    monitor: Option<&'a Monitor>,
    /// The monitor's listings: a directory found here is not read again.
    cache: Option<Mutex<HashMap<BString, Listing>>>,
    /// Which index entries the walk met on disk.
    seen: Vec<AtomicBool>,
    queue: Mutex<Queue>,
    ready: Condvar,
    declined: AtomicBool,
    /// The index's `.gitattributes` entries, found for the first file a worker reads.
    attribute_files: OnceLock<gix::index::State>,
}

impl Walk<'_> {
    fn run(&self, repo: &gix::Repository) -> (Scanned, Kept) {
        // Threads only for a walk that reads the directories: one the monitor's listings serve
        // is quicker alone than the threads are to start (and epic runs many at once).
        let served = self.cache.as_ref().is_some_and(|cache| {
            !cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
        });
        let workers = if served { 1 } else { parallelism() };
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
                        all.directories.extend(more.directories);
                        all.candidates.extend(more.candidates);
                        all.kept.listings.extend(more.kept.listings);
                        all.kept.watched.extend(more.kept.watched);
                    }
                    Err(_) => self.declined.store(true, Ordering::Relaxed),
                }
            }
            all
        });
        let kept = std::mem::take(&mut found.kept);
        if self.declined.load(Ordering::Relaxed) {
            let scanned = Scanned {
                scan: Scan::Declined,
                candidates: Vec::new(),
                directories: Vec::new(),
                generation: None,
            };
            return (scanned, kept);
        }
        for (entry, seen) in self.index.entries().iter().zip(&self.seen) {
            if !seen.load(Ordering::Relaxed) && !entry.flags.intersects(SKIPPED) {
                let path = entry.path(self.index).to_owned();
                if entry.mode.is_submodule() {
                    // A submodule is a directory: how it stands is gix's business.
                    found.directories.push(path.clone());
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
        let scanned = Scanned {
            scan,
            candidates: found.candidates,
            directories: found.directories,
            generation: None,
        };
        (scanned, kept)
    }

    /// One worker: reads directories from the queue until every directory has been read.
    fn work(&self, repo: &gix::Repository) -> Found {
        let mut suspects = Found::default();
        // Found once, for the first file read: most scans read none.
        let attribute_files = || {
            self.attribute_files
                .get_or_init(|| self.tree.attribute_files(self.index))
        };
        let mut reader = Reader {
            repo,
            pipeline: None,
            attribute_files: Some(&attribute_files),
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

    /// Reads one tracked directory (or takes the monitor's listing of it): compares its
    /// tracked files, notes what is not tracked, and returns its subdirectories that hold
    /// tracked paths. `None` declines the scan.
    #[cfg(unix)]
    fn visit(
        &self,
        dir: &BStr,
        found: &mut Found,
        reader: &mut Reader<'_>,
    ) -> Option<Vec<BString>> {
        use std::os::unix::ffi::OsStrExt as _;

        let path: PathBuf = if dir.is_empty() {
            self.workdir.to_owned()
        } else {
            self.workdir
                .join(std::ffi::OsStr::from_bytes(dir.as_bytes()))
        };
        let files = self.tree.files.get(dir).map_or(&[][..], Vec::as_slice);
        let tracked = |name: &BStr| {
            files
                .binary_search_by(|(file, _)| (*file).cmp(name))
                .ok()
                .map(|at| files[at].1)
        };
        let (mut listing, watched) = match self.listing(dir, &path, &tracked, &mut found.kept) {
            Ok(listing) => listing,
            // Gone or replaced since its parent was read: its tracked files stay unseen.
            Err(error) if gone(&error) => return Some(Vec::new()),
            Err(_) => return None,
        };
        let mut subdirs = Vec::new();
        let mut at = 0;
        // The listing's names and the directory's tracked files are both sorted by their bytes,
        // and each is unique in both: one pass through each finds every name's entry, and a
        // file found is passed, so a clean directory costs one comparison a name.
        let mut next_file = 0;
        while at < listing.slots.len() {
            let slot = &mut listing.slots[at];
            at += 1;
            let name = slot.name.as_bstr();
            if name == ".git" {
                if dir.is_empty() {
                    continue;
                }
                // A nested repository: how it shows is gix's business.
                return None;
            }
            let position = loop {
                let Some((file, position)) = files.get(next_file) else {
                    break None;
                };
                match (*file).cmp(name) {
                    std::cmp::Ordering::Less => next_file += 1,
                    std::cmp::Ordering::Equal => {
                        next_file += 1;
                        break Some(*position);
                    }
                    std::cmp::Ordering::Greater => break None,
                }
            };
            let stale = match slot.kind {
                None => true,
                Some(Kind::Dir) => false,
                Some(_) => position.is_some() && slot.meta.is_none(),
            };
            if stale {
                match std::fs::symlink_metadata(path.join(std::ffi::OsStr::from_bytes(name))) {
                    Ok(metadata) => {
                        let meta = Meta::of(&metadata);
                        slot.kind = Some(meta.kind);
                        slot.meta = position.is_some().then_some(meta);
                    }
                    Err(error) if gone(&error) => {
                        // Gone since: its entry, if any, stays unseen.
                        at -= 1;
                        listing.slots.remove(at);
                        continue;
                    }
                    Err(_) => return None,
                }
            }
            if slot.kind == Some(Kind::Dir) {
                let rela = join(dir, name);
                if self.tree.dirs.contains(rela.as_bstr()) {
                    subdirs.push(rela);
                } else {
                    // Untracked, ignored, or a submodule: gix tells which.
                    found.directories.push(rela.clone());
                    found.suspects.push(rela);
                }
                continue;
            }
            let Some(position) = position else {
                found.suspects.push(join(dir, name));
                continue;
            };
            self.seen[position].store(true, Ordering::Relaxed);
            let entry = &self.index.entries()[position];
            if entry.flags.intersects(SKIPPED) {
                continue;
            }
            let meta = slot.meta?;
            // Most files are unchanged by their stat data alone: no path is made for them.
            if !matches!(self.unchanged(entry, &meta), Unchanged::Yes) {
                let file = path.join(std::ffi::OsStr::from_bytes(name));
                self.judge(entry, &meta, join(dir, name), &file, found, reader);
            }
        }
        if watched {
            found.kept.listings.push((dir.to_owned(), listing));
        }
        Some(subdirs)
    }

    /// The listing of `dir` (at `path`): the monitor's, else read after watching it (the
    /// watch goes into `kept`); and whether the monitor may keep it.
    #[cfg(unix)]
    fn listing(
        &self,
        dir: &BStr,
        path: &Path,
        tracked: &dyn Fn(&BStr) -> Option<usize>,
        kept: &mut Kept,
    ) -> std::io::Result<(Listing, bool)> {
        let cached = self.cache.as_ref().and_then(|cache| {
            cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(dir)
        });
        if let Some(listing) = cached {
            return Ok((listing, true));
        }
        // Watched before it is read: a change after the read is an event.
        let watch = self.monitor.and_then(|monitor| monitor.watch(path));
        let listing = read(path, tracked)?;
        if let Some(watch) = watch {
            kept.watched.push((watch, dir.to_owned()));
        }
        Ok((listing, watch.is_some()))
    }

    /// Compares the tracked file `rela` (at `file`, with stat data `meta`) with its `entry`:
    /// unchanged, changed, or a suspect; reads it where its stat data cannot tell.
    fn judge(
        &self,
        entry: &gix::index::Entry,
        meta: &Meta,
        rela: BString,
        file: &Path,
        found: &mut Found,
        reader: &mut Reader<'_>,
    ) {
        match self.unchanged(entry, meta) {
            Unchanged::Yes => {}
            Unchanged::Unproven => {
                if self.verified.vouches(rela.as_bstr(), &entry.id, &meta.stat) {
                    return;
                }
                let symlink = meta.kind == Kind::Symlink && self.options.symlinks;
                let same = if meta.kind == Kind::File || symlink {
                    reader.is(self.index, file, rela.as_bstr(), symlink, &entry.id)
                } else {
                    None
                };
                match same {
                    // Read and found equal: unchanged, and kept for the next status.
                    Some(true) => found.candidates.push(Candidate {
                        path: rela,
                        id: entry.id,
                        stat: meta.stat,
                    }),
                    Some(false) => found.changed.push(rela),
                    None => found.suspects.push(rela),
                }
            }
            Unchanged::No => found.changed.push(rela),
        }
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

    fn unchanged(&self, entry: &gix::index::Entry, meta: &Meta) -> Unchanged {
        unchanged(entry, meta, self.options, self.index)
    }
}

/// Whether gix's status would find the file of `entry` (of `index`) unchanged from its stat data `meta` alone: the same rule, field for field
/// (`gix_status::index_as_worktree`).
pub(crate) fn unchanged(
    entry: &gix::index::Entry,
    meta: &Meta,
    options: Options,
    index: &gix::index::State,
) -> Unchanged {
    if entry.flags.contains(Flags::INTENT_TO_ADD) {
        return Unchanged::No;
    }
    let mode_change = entry.mode.change_to_match_fs_with_values(
        meta.kind == Kind::File,
        meta.kind == Kind::Dir,
        meta.kind == Kind::Symlink,
        meta.executable,
        options.symlinks,
        options.executable_bit,
    );
    if mode_change.is_some() {
        return Unchanged::No;
    }
    let now = meta.stat;
    if now.matches(&entry.stat, options.stat)
        && (!entry.id.is_empty_blob() || entry.stat.size == 0)
        && !now.is_racy(index.timestamp(), options.stat)
    {
        Unchanged::Yes
    } else {
        // Only its content can tell.
        Unchanged::Unproven
    }
}

/// Reads the directory at `path`: each name and its kind, and the stat data of the files
/// `tracked` names (an index position).
#[cfg(unix)]
fn read(path: &Path, tracked: &dyn Fn(&BStr) -> Option<usize>) -> std::io::Result<Listing> {
    use std::os::unix::ffi::OsStrExt as _;

    let mut slots = Vec::new();
    for dirent in std::fs::read_dir(path)? {
        let dirent = dirent?;
        let name = Name::from_slice(dirent.file_name().as_bytes());
        let kind = crate::monitor::kind(dirent.file_type()?);
        let mut meta = None;
        if kind != Kind::Dir && tracked(name.as_bstr()).is_some() {
            // Relative to the open directory: no path lookup.
            match dirent.metadata() {
                Ok(metadata) => meta = Some(Meta::of(&metadata)),
                // Gone since the directory was read: left out.
                Err(error) if gone(&error) => continue,
                Err(error) => return Err(error),
            }
        }
        slots.push(Slot {
            name,
            kind: Some(kind),
            meta,
        });
    }
    Ok(Listing::new(slots))
}

/// Reads worktree files as git reads them to add them: through the repository's filters.
pub(crate) struct Reader<'repo> {
    repo: &'repo gix::Repository,
    /// Made at the first file read: most scans read none.
    pipeline: Option<gix::filter::Pipeline<'repo>>,
    /// The index's `.gitattributes` entries, where the caller finds them without going through
    /// every entry (see [`Tree::attribute_files`]); else the whole index is searched for them.
    attribute_files: Option<&'repo dyn Fn() -> &'repo gix::index::State>,
}

impl<'repo> Reader<'repo> {
    pub(crate) fn new(repo: &'repo gix::Repository) -> Self {
        Self {
            repo,
            pipeline: None,
            attribute_files: None,
        }
    }

    /// Whether the file at `path` (`rela` in the worktree) holds blob `id`; `None` when it
    /// cannot be read or filtered (then gix's status decides).
    pub(crate) fn is(
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

    /// The content of the file at `path` (`rela` in the worktree) as git would store it:
    /// through the repository's filters, or a symbolic link's target; `None` when it cannot be
    /// read or filtered.
    pub(crate) fn read(
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
            // The attributes from the index at hand: `filter_pipeline` would read the index
            // file again.
            let attributes = self
                .repo
                .attributes_only(
                    self.attribute_files.map_or(index, |find| find()),
                    gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
                )
                .ok()?
                .detach();
            self.pipeline = Some(gix::filter::Pipeline::new(self.repo, attributes).ok()?);
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
    directories: Vec<BString>,
    candidates: Vec<Candidate>,
    kept: Kept,
}

/// What a walk gives back to the monitor: the listings it read or used, the watches it added.
#[derive(Default)]
struct Kept {
    listings: Vec<(BString, Listing)>,
    watched: Vec<Watched>,
}

/// Whether a tracked file is unchanged, as far as its stat data tell.
pub(crate) enum Unchanged {
    Yes,
    /// Same type and mode, but stat data that differ from the entry's or are racy: its content
    /// decides.
    Unproven,
    No,
}

/// Whether an error means the path is no longer there (or no longer a directory).
fn gone(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// The threads a walk that reads directories uses: the machine's, at most 8 (asked once: the
/// answer reads several files of `/sys` and `/proc`).
fn parallelism() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}
