//! The guard on epic's own files around every agent turn ([`TurnGuard`]): the repository's
//! configuration, `info/` and `hooks/`, the worktrees' registrations, the epic's state directory
//! and lock, and the plan file and `epic.toml` in the user's checkout.
//!
//! # What is guarded
//!
//! In the git common dir: `config` and `config.worktree`; everything under `info/` (exclude,
//! attributes, …) but `info/refs`, which git's own maintenance rewrites (`update-server-info`,
//! run by every repack, automatic ones included); everything under `hooks/`; under `worktrees/`, each registration's directory and its
//! `HEAD`, `gitdir`, `commondir`, `config.worktree` and `locked` — not its `index`, `logs/`,
//! `ORIG_HEAD`, `MERGE_*`, `refs/` and the other files git itself churns while a worktree is
//! worked in. The turn's own worktree's `HEAD` is left to the task loop's branch check (an agent
//! that switched branches is told so). The registrations of another epic's worktrees
//! (`<repo-name>.worktrees/<other epic>/…`) are that epic's run's to add and remove, and its guard
//! watches them; so is a registration being added (no `gitdir` yet). In the epic's state directory: everything (story states,
//! task checkpoints, `merging.json`, `proven.json`, `gates/`, the lock), except the files epic
//! appends to or rewrites in the background while turns run — `events.jsonl`, `transcripts/`,
//! `report.json`, `report.md`, `board.md` — and the temp files of atomic writes. Outside the git
//! dir: the files the caller names (`RunConfig::guarded_files` of `epic-executor`), the plan
//! file and `epic.toml`. The main worktree's own `HEAD` and `index` are not guarded: the user may
//! work in the main checkout during a run.
//!
//! # One snapshot, kept up to date with epic's own writes
//!
//! Turns of several stories run at once, so there is one snapshot for the whole run, taken before
//! the first story starts. Every write epic itself makes to a guarded place during the run goes
//! through the guard ([`TurnGuard::epic_write`] for a state file, [`TurnGuard::epic_worktrees`]
//! for worktree administration, [`TurnGuard::epic_switch`] for a slot's switch), which takes the
//! written paths (and nothing else) into the snapshot once the write is done: so the snapshot is
//! what epic last wrote. Worktree administration runs under the guard's lock; a state file's
//! write and a switch run outside it, their paths named as being written meanwhile, which a
//! check then takes as it finds them: a check never blames epic's own write, half done or not,
//! and epic's writes never wait for one another.
//!
//! A check reads again only what changed since the snapshot read it. Where the kernel reports
//! changes (inotify, [`Notifier`]), only the paths it reported an event for are read
//! ([`Snapshot::take_notified`](epic_state_store::Snapshot::take_notified)), and everything at
//! least every [`SWEEP`](epic_state_store::SWEEP) (a write through a shared memory map raises no
//! event). Everything is read as
//! [`Snapshot::take_again`](epic_state_store::Snapshot::take_again) has it: a file whose device,
//! inode, size, mode and modification and change times are as they were keeps the contents the
//! snapshot has. Only root can set a change time back; a file changed within two seconds of
//! being read is read every time (git's racy-file rule), so a change within one tick of the
//! clock is not missed either. A check costs what changed, not the epic's every state file.
//!
//! When a turn ends, what the guarded places hold is compared with the snapshot
//! ([`Turn::end`]); every difference is undone (contents and mode restored, what was added
//! removed) and fails the story whose turn just ended, naming each file. A change made by a turn
//! of another story running at the same time is found by whichever turn ends first; the reason
//! then says that the change may be the concurrent turn's ([`Tampered::concurrent`]).
//!
//! Gates and setup commands run the story's code (its tests, its build scripts), so each is
//! checked when it ends too ([`TurnGuard::begin_command`]), but only when no agent turn is
//! running then: a running turn's end finds the change instead (its reason saying that a
//! concurrent command may have made it). A command that changed guarded files is a red gate (or
//! a failed setup), naming them; they are put back. So a change made outside any turn, by code
//! a gate ran, is found as well, and never blamed on a command while an agent could have made it.
//!
//! The guard detects and undoes; it prevents nothing. The sandbox (when on) is what keeps agents
//! from writing these places at all.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use epic_state_store::{ChangeKind, EpicDir, GuardError, Notifier, Snapshot, Watch, resolved};

/// The files under `worktrees/<name>/` that are guarded.
const REGISTRATION_FILES: &[&str] = &["HEAD", "gitdir", "commondir", "config.worktree", "locked"];

/// The entries of the state directory epic writes while turns run without the guard: the event
/// log, transcripts and the report and board, rewritten in the background; and the inbox, which
/// people write while turns run (`epic tell`, `epic stop`), and which the sandbox keeps
/// read-only to every turn.
const UNGUARDED_STATE: &[&str] = &[
    "events.jsonl",
    "transcripts",
    "report.json",
    "report.md",
    "board.md",
    epic_state_store::inbox::INBOX,
];

/// A change an agent turn made to a guarded file, undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedChange {
    /// The file (absolute).
    pub path: PathBuf,
    /// How it had changed.
    pub kind: ChangeKind,
}

/// What a turn did to the files epic guards: the changes found (each undone unless listed in
/// `not_restored`), and whether another story's turn ran at the same time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tampered {
    /// The changes, in path order.
    pub changes: Vec<GuardedChange>,
    /// The paths that could not be put back, with why.
    pub not_restored: Vec<(PathBuf, String)>,
    /// Why the guarded files could not be read at all, if they could not.
    pub unreadable: Option<String>,
    /// Whether a turn of another story overlapped this one, so the changes may be its.
    pub concurrent: bool,
}

impl Tampered {
    /// The changed paths, each with how it changed: `` `/repo/.git/config` (modified), … ``.
    pub fn paths(&self) -> String {
        if let Some(error) = &self.unreadable {
            return format!("they could not be read: {error}");
        }
        self.changes
            .iter()
            .map(|change| format!("`{}` ({})", change.path.display(), change.kind.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An agent turn, or a gate or setup command, in progress: from [`TurnGuard::begin`] (or
/// [`TurnGuard::begin_command`]) to [`Turn::end`]. It stops counting as running when it ends,
/// or when dropped (a chat's future dropped mid-turn).
#[derive(Debug)]
#[must_use = "a turn begun must be checked"]
pub struct Turn {
    guard: Arc<TurnGuard>,
    /// A gate or setup command rather than an agent turn.
    command: bool,
    /// Turns and commands running when this one began (itself excluded).
    others_at_start: usize,
    /// The count of turns and commands begun, after this one.
    begun: u64,
    /// Whether it still counts as running.
    counted: bool,
}

impl Turn {
    /// Ends this turn, run in `worktree`: compares the guarded files with the snapshot and
    /// undoes every difference ([`TurnGuard`]'s rules). Blocking (it reads and writes files).
    pub fn end(mut self, worktree: &Path) -> Result<(), Box<Tampered>> {
        let guard = Arc::clone(&self.guard);
        guard.check(&mut self, worktree)
    }

    /// Stops counting this turn as running (once).
    fn uncount(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.guard.running.fetch_sub(1, Ordering::SeqCst);
            if !self.command {
                self.guard.turns_running.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.uncount();
    }
}

/// The guard: the snapshot of the guarded files and what reads them.
#[derive(Debug)]
pub struct TurnGuard {
    watches: Vec<Watch>,
    /// `<common>/worktrees`.
    registrations: PathBuf,
    /// `<repo-parent>/<repo-name>.worktrees`, where every epic's worktrees go.
    epics_root: PathBuf,
    /// `<repo-parent>/<repo-name>.worktrees/<epic>`, this epic's.
    own_root: PathBuf,
    snapshot: Mutex<Snapshot>,
    /// The kernel's notifications of changes to the guarded places, where there are any: a
    /// check then reads only what changed (and all of it every [`SWEEP`](epic_state_store::SWEEP)).
    /// Locked after `snapshot`, never before.
    notifier: Mutex<Option<Notifier>>,
    /// The registrations' `HEAD`s that epic's own switch of a slot worktree is rewriting now
    /// ([`epic_switch`](Self::epic_switch)): a check meanwhile takes them as they are. Locked
    /// after `snapshot`, never before.
    switching: Mutex<Vec<PathBuf>>,
    /// The guarded paths epic's own writes are writing now ([`epic_write`](Self::epic_write),
    /// once a write): a check meanwhile takes them as they are. Locked after `snapshot`, never
    /// before.
    writing: Mutex<Vec<PathBuf>>,
    /// Agent turns, gates and setup commands running.
    running: AtomicUsize,
    /// Agent turns running.
    turns_running: AtomicUsize,
    begun: AtomicU64,
}

impl TurnGuard {
    /// The guard of the repository whose git common dir is `common_dir`, of the epic's state
    /// directory `dir` (its worktrees under `worktree_root`) and of the files `extra`, with its
    /// snapshot taken now.
    pub fn new(
        common_dir: &Path,
        dir: &EpicDir,
        worktree_root: &Path,
        extra: &[PathBuf],
    ) -> Result<Self, GuardError> {
        let mut watches = vec![
            Watch::File(common_dir.join("config")),
            Watch::File(common_dir.join("config.worktree")),
            Watch::Tree {
                root: common_dir.join("info"),
                keep: info_file,
            },
            Watch::Tree {
                root: common_dir.join("hooks"),
                keep: |_| true,
            },
            Watch::Tree {
                root: common_dir.join("worktrees"),
                keep: registration_file,
            },
            Watch::Tree {
                root: dir.root().to_path_buf(),
                keep: state_file,
            },
        ];
        watches.extend(extra.iter().cloned().map(Watch::File));
        // The state directory (a few files a story, thousands in a long epic) is read where the
        // kernel reports changes; the configuration, hooks and registrations (a few dozen files)
        // at every check.
        let mut notifier = Notifier::new(&[dir.root().to_path_buf()]);
        let snapshot = match notifier.as_mut() {
            Some(notifier) => Snapshot::take_watched(&watches, notifier)?,
            None => Snapshot::take(&watches)?,
        };
        Ok(Self {
            watches,
            registrations: common_dir.join("worktrees"),
            epics_root: resolved(worktree_root.parent().unwrap_or(worktree_root)),
            own_root: resolved(worktree_root),
            snapshot: Mutex::new(snapshot),
            notifier: Mutex::new(notifier),
            switching: Mutex::new(Vec::new()),
            writing: Mutex::new(Vec::new()),
            running: AtomicUsize::new(0),
            turns_running: AtomicUsize::new(0),
            begun: AtomicU64::new(0),
        })
    }

    /// Marks an agent turn's start.
    pub fn begin(self: &Arc<Self>) -> Turn {
        self.turns_running.fetch_add(1, Ordering::SeqCst);
        self.start(false)
    }

    /// Marks the start of a gate or setup command: it may run code the story's agent wrote.
    /// When it ends, the guarded files are checked only if no agent turn is running then (a
    /// running turn's own end finds the change, and says a concurrent command may have made
    /// it): so a change made outside any turn is still found, and never blamed on a command
    /// while an agent could have made it.
    pub fn begin_command(self: &Arc<Self>) -> Turn {
        self.start(true)
    }

    fn start(self: &Arc<Self>, command: bool) -> Turn {
        let others_at_start = self.running.fetch_add(1, Ordering::SeqCst);
        let begun = self.begun.fetch_add(1, Ordering::SeqCst) + 1;
        Turn {
            guard: Arc::clone(self),
            command,
            others_at_start,
            begun,
            counted: true,
        }
    }

    /// Ends `turn`, run in `worktree`: compares the guarded files with the snapshot and undoes
    /// every difference. It stops counting as running under the guard's lock, so a command that
    /// ends after it sees it ended. Blocking (it reads and writes files).
    fn check(&self, turn: &mut Turn, worktree: &Path) -> Result<(), Box<Tampered>> {
        let mut snapshot = self.lock();
        turn.uncount();
        if turn.command && self.turns_running.load(Ordering::SeqCst) > 0 {
            return Ok(());
        }
        let concurrent =
            turn.others_at_start > 0 || self.begun.load(Ordering::SeqCst) != turn.begun;
        // Only what changed since the snapshot read it is read again (see `take_notified` and
        // `take_again`).
        let taken = match self.notifier_lock().as_mut() {
            Some(notifier) => snapshot.take_notified(&self.watches, notifier),
            None => snapshot.take_again(&self.watches),
        };
        self.settle(&mut snapshot, taken, Some(worktree), concurrent)
    }

    /// Reads every guarded path, whatever the notifier reported, and undoes what changed since
    /// the snapshot: the run's last check, so that a change to a state file that raised no
    /// event (a write through a shared memory map, or a hard link made elsewhere) and was made
    /// after the last sweep does not outlive the run. Blocking.
    pub fn sweep(&self) -> Result<(), Box<Tampered>> {
        let mut snapshot = self.lock();
        let taken = snapshot.take_again(&self.watches);
        self.settle(&mut snapshot, taken, None, false)
    }

    /// Compares `taken` with the snapshot and undoes every difference (the HEAD of `worktree`'s
    /// registration, that of a slot being switched and another epic's registrations aside).
    fn settle(
        &self,
        snapshot: &mut Snapshot,
        taken: Result<Snapshot, GuardError>,
        worktree: Option<&Path>,
        concurrent: bool,
    ) -> Result<(), Box<Tampered>> {
        let now = match taken {
            Ok(now) => now,
            Err(error) => {
                return Err(Box::new(Tampered {
                    unreadable: Some(epic_process::chain(&error)),
                    concurrent,
                    ..Tampered::default()
                }));
            }
        };
        // The turn's own worktree's HEAD is the branch check's business, not the guard's; a
        // slot's that epic is switching is the switch's (it proves the head when done).
        if let Some(worktree) = worktree {
            for registration in self.registrations_of(snapshot, &now, worktree) {
                snapshot.absorb(&now, &registration.join("HEAD"));
            }
        }
        for path in self.switching_heads().iter().chain(&self.written_now()) {
            snapshot.absorb(&now, path);
        }
        // Another epic's run administers its own worktrees, and guards them itself.
        for registration in self.other_runs_registrations(snapshot, &now) {
            snapshot.absorb_tree(&now, &registration);
        }
        let changes = snapshot.changes(&now);
        if changes.is_empty() {
            // Equal throughout: `now`, with the stamps of what it read, is the snapshot.
            snapshot.take_in(now);
            return Ok(());
        }
        let mut tampered = Tampered {
            concurrent,
            ..Tampered::default()
        };
        for change in changes {
            if let Err(error) = snapshot.restore(&change.path) {
                tampered
                    .not_restored
                    .push((change.path.clone(), epic_process::chain(&error)));
            }
            tampered.changes.push(GuardedChange {
                path: change.path,
                kind: change.kind,
            });
        }
        // What could not be restored is now what the next check compares with, so that each
        // change fails one story, not every story after it.
        if !tampered.not_restored.is_empty()
            && let Ok(after) = Snapshot::take(&self.watches)
        {
            *snapshot = after;
        }
        Err(Box::new(tampered))
    }

    /// Runs epic's own write `op` of the guarded file `path` (written or removed), then takes
    /// what is there now into the snapshot, with the directories above it that a write may have
    /// created: only those paths are read again. The write itself runs outside the guard's lock,
    /// so epic's writes (each an atomic write with its fsyncs: a story's state, the merge
    /// queue's journal, attestations, states and proven head) do not wait for one another or
    /// for a check; a check meanwhile takes those paths as it finds them, and the write's own
    /// result is taken in once it is done. Blocking.
    pub fn epic_write<T>(&self, path: &Path, op: impl FnOnce() -> T) -> T {
        let written: Vec<PathBuf> = path
            .ancestors()
            .filter(|path| self.watched(path))
            .map(Path::to_path_buf)
            .collect();
        self.writing_lock().extend(written.iter().cloned());
        let result = op();
        let mut snapshot = self.lock();
        absorb_files(&mut snapshot, &written);
        let mut writing = self.writing_lock();
        for path in &written {
            if let Some(at) = writing.iter().position(|known| known == path) {
                writing.swap_remove(at);
            }
        }
        result
    }

    /// Whether `path` is one the watches cover: a watched file, a tree's root, or a path under a
    /// root whose every step the tree's rule keeps.
    fn watched(&self, path: &Path) -> bool {
        self.watches.iter().any(|watch| watch.covers(path))
    }

    /// Runs epic's own worktree administration `op` on the worktrees at `worktrees` (added,
    /// removed, moved, relinked), then takes their registrations (before and after) into the
    /// snapshot (with `worktrees/` itself, which the first add creates): only `worktrees/` is
    /// read again. Blocking.
    pub fn epic_worktrees<T>(&self, worktrees: &[&Path], op: impl FnOnce() -> T) -> T {
        let mut snapshot = self.lock();
        let result = op();
        let watch = [Watch::Tree {
            root: self.registrations.clone(),
            keep: registration_file,
        }];
        if let Ok(now) = Snapshot::take(&watch) {
            let registrations: Vec<PathBuf> = worktrees
                .iter()
                .flat_map(|worktree| self.registrations_of(&snapshot, &now, worktree))
                .collect();
            // `worktrees/` itself, which the first add creates, and each registration whole.
            snapshot.absorb(&now, &self.registrations);
            for registration in &registrations {
                snapshot.absorb_tree(&now, registration);
            }
        }
        result
    }

    /// Runs epic's switch `op` of the worktree at `worktree` to another branch (a slot worktree
    /// taking its next story), which rewrites the `HEAD` of its registration and nothing else
    /// the guard watches, without holding the guard's lock: a switch rewrites the files that
    /// differ and proves the worktree clean, tens of milliseconds on a large tree, and the turns
    /// that end, the writes of the state and the other switches meanwhile need not wait for it.
    /// While it runs, a check takes that `HEAD` as it finds it; the switch proves it (on the
    /// story's branch, at the expected commit) before the story starts, and its final `HEAD` is
    /// then taken into the snapshot. Blocking.
    pub fn epic_switch<T>(&self, worktree: &Path, op: impl FnOnce() -> T) -> T {
        let heads: Vec<PathBuf> = {
            let snapshot = self.lock();
            let heads: Vec<PathBuf> = self
                .registrations_of(&snapshot, &snapshot, worktree)
                .into_iter()
                .map(|registration| registration.join("HEAD"))
                .collect();
            self.switching_lock().extend(heads.iter().cloned());
            heads
        };
        let result = op();
        let mut snapshot = self.lock();
        absorb_files(&mut snapshot, &heads);
        let mut switching = self.switching_lock();
        for head in &heads {
            if let Some(at) = switching.iter().position(|known| known == head) {
                switching.swap_remove(at);
            }
        }
        result
    }

    fn notifier_lock(&self) -> std::sync::MutexGuard<'_, Option<Notifier>> {
        self.notifier.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn switching_heads(&self) -> Vec<PathBuf> {
        self.switching_lock().clone()
    }

    fn written_now(&self) -> Vec<PathBuf> {
        self.writing_lock().clone()
    }

    fn writing_lock(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.writing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn switching_lock(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.switching
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The registration directories (`worktrees/<name>`) whose `gitdir`, in `before` or `now`,
    /// names `worktree`.
    fn registrations_of(&self, before: &Snapshot, now: &Snapshot, worktree: &Path) -> Vec<PathBuf> {
        let dot_git = resolved(worktree).join(".git");
        let mut found = Vec::new();
        for snapshot in [before, now] {
            for path in snapshot.paths_under(&self.registrations) {
                let Ok(relative) = path.strip_prefix(&self.registrations) else {
                    continue;
                };
                if relative.components().count() != 2 || !path.ends_with("gitdir") {
                    continue;
                }
                if let Some(epic_state_store::Entry::File { contents, .. }) = snapshot.get(path)
                    && Path::new(String::from_utf8_lossy(contents).trim()) == dot_git
                    && let Some(registration) = path.parent()
                    && !found.iter().any(|known: &PathBuf| known == registration)
                {
                    found.push(registration.to_path_buf());
                }
            }
        }
        found
    }

    /// The registration directories that belong to another epic's run: their worktree, in
    /// `before` and `now` alike, lies under `<repo-name>.worktrees/<another epic>/`; or they are
    /// being added (no `gitdir` naming a `.git` yet, then or now). That run's guard watches
    /// them.
    fn other_runs_registrations(&self, before: &Snapshot, now: &Snapshot) -> Vec<PathBuf> {
        // `git worktree add` makes the directory, then creates `gitdir`, then writes it: only a
        // `gitdir` that names a `.git` says whose the registration is; until one does (then and
        // now), it is still being added.
        let gitdir = |snapshot: &Snapshot, registration: &Path| match snapshot
            .get(&registration.join("gitdir"))
        {
            Some(epic_state_store::Entry::File { contents, .. }) => Some(PathBuf::from(
                String::from_utf8_lossy(contents).trim().to_owned(),
            ))
            .filter(|worktree| worktree.ends_with(".git")),
            _ => None,
        };
        let foreign = |worktree: &Path| {
            worktree.starts_with(&self.epics_root) && !worktree.starts_with(&self.own_root)
        };
        let mut found: Vec<PathBuf> = Vec::new();
        for path in before
            .paths_under(&self.registrations)
            .chain(now.paths_under(&self.registrations))
        {
            let Ok(relative) = path.strip_prefix(&self.registrations) else {
                continue;
            };
            if relative.components().count() != 1 || found.iter().any(|known| known == path) {
                continue;
            }
            let (was, is) = (gitdir(before, path), gitdir(now, path));
            let adding = was.is_none() && is.is_none();
            let theirs = (was.is_some() || is.is_some())
                && was
                    .iter()
                    .chain(is.iter())
                    .all(|worktree| foreign(worktree));
            if adding || theirs {
                found.push(path.to_path_buf());
            }
        }
        found
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Takes into `snapshot` what the files (or directories, taken alone) at `paths` hold now, and
/// nothing else: epic's own writes of them.
fn absorb_files(snapshot: &mut Snapshot, paths: &[PathBuf]) {
    let watches: Vec<Watch> = paths.iter().cloned().map(Watch::File).collect();
    if let Ok(now) = Snapshot::take(&watches) {
        for path in paths {
            snapshot.absorb(&now, path);
        }
    }
}

/// Whether a path under `worktrees/` is guarded: a registration's directory and its
/// [`REGISTRATION_FILES`].
fn registration_file(relative: &Path) -> bool {
    let mut components = relative.components();
    match (components.next(), components.next(), components.next()) {
        (Some(_), None, None) => true,
        (Some(_), Some(file), None) => REGISTRATION_FILES
            .iter()
            .any(|name| file.as_os_str() == *name),
        _ => false,
    }
}

/// Whether a path of `info/` is guarded: all but what git's own maintenance writes there.
///
/// `info/refs` is what `git update-server-info` leaves, and every `git repack` (so every `git gc`,
/// automatic ones included) runs it: a background gc that the user's own git started, or that an
/// agent's commit set off, rewrites it while turns run. Only dumb-HTTP clients of this repository
/// read it; nothing git or epic does locally does, so it is not epic's to guard, and a turn is
/// never blamed for it.
fn info_file(relative: &Path) -> bool {
    relative != Path::new("refs")
}

/// Whether a path of the state directory is guarded: all but [`UNGUARDED_STATE`] and the temp
/// files of atomic writes (`.<name>.<pid>.<random>.tmp`).
fn state_file(relative: &Path) -> bool {
    let top = relative.components().next();
    if top.is_some_and(|top| UNGUARDED_STATE.iter().any(|name| top.as_os_str() == *name)) {
        return false;
    }
    let name = relative
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    !(name.starts_with('.') && name.ends_with(".tmp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_keep_their_stable_files_only() {
        assert!(registration_file(Path::new("a")));
        assert!(registration_file(Path::new("a/HEAD")));
        assert!(registration_file(Path::new("a/gitdir")));
        assert!(registration_file(Path::new("a/config.worktree")));
        assert!(!registration_file(Path::new("a/index")));
        assert!(!registration_file(Path::new("a/logs")));
        assert!(!registration_file(Path::new("a/logs/HEAD")));
        assert!(!registration_file(Path::new("a/ORIG_HEAD")));
    }

    #[test]
    fn info_leaves_out_only_what_git_maintenance_writes() {
        assert!(!info_file(Path::new("refs")));
        assert!(info_file(Path::new("exclude")));
        assert!(info_file(Path::new("attributes")));
        assert!(info_file(Path::new("grafts")));
        assert!(info_file(Path::new("refs.bak")));
    }

    #[test]
    fn the_state_directory_leaves_out_what_epic_writes_in_the_background() {
        assert!(state_file(Path::new("stories/a.json")));
        assert!(state_file(Path::new("merging.json")));
        assert!(state_file(Path::new("lock")));
        assert!(!state_file(Path::new("events.jsonl")));
        assert!(!state_file(Path::new("transcripts/a/0001-coder.md")));
        assert!(!state_file(Path::new("board.md")));
        assert!(!state_file(Path::new("stories/.a.json.123.456.tmp")));
    }

    /// Another epic's run adding a worktree, seen at each step of `git worktree add`: the
    /// registration's directory, its `locked`, its `gitdir` created empty, then written (half,
    /// then whole). None of it is a turn's change.
    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays git adding a worktree, writing files directly"
    )]
    fn another_runs_registration_being_added_is_not_a_change_at_any_step() {
        let repo = tempfile::tempdir().unwrap();
        let common = repo.path().join(".git");
        std::fs::create_dir_all(common.join("worktrees")).unwrap();
        let dir = EpicDir::new(&common, "two").unwrap();
        let root = repo.path().join("shop.worktrees/two");
        let guard = Arc::new(TurnGuard::new(&common, &dir, &root, &[]).unwrap());
        let registration = common.join("worktrees/a");
        let theirs = format!(
            "{}\n",
            repo.path().join("shop.worktrees/one/a/.git").display()
        );
        let steps: [&dyn Fn(); 4] = [
            &|| {
                std::fs::create_dir_all(&registration).unwrap();
                std::fs::write(registration.join("locked"), "initializing\n").unwrap();
            },
            &|| std::fs::write(registration.join("gitdir"), "").unwrap(),
            &|| std::fs::write(registration.join("gitdir"), &theirs[..theirs.len() / 2]).unwrap(),
            &|| std::fs::write(registration.join("gitdir"), &theirs).unwrap(),
        ];
        for (n, step) in steps.iter().enumerate() {
            let turn = guard.begin();
            step();
            assert_eq!(turn.end(&root.join("c")), Ok(()), "step {n}");
        }
    }

    /// The run's last check reads everything: a change to a state file that no check read (no
    /// turn ended after it) is found and undone.
    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays a process writing epic's state directly"
    )]
    fn the_runs_last_sweep_finds_and_undoes_what_no_check_read() {
        let repo = tempfile::tempdir().unwrap();
        let common = repo.path().join(".git");
        std::fs::create_dir_all(&common).unwrap();
        let dir = EpicDir::new(&common, "e").unwrap();
        let root = repo.path().join("shop.worktrees/e");
        let guard = Arc::new(TurnGuard::new(&common, &dir, &root, &[]).unwrap());
        let state = dir.story_state("a").unwrap();
        guard.epic_write(&state, || {
            epic_state_store::write_atomic(&state, b"{}").unwrap();
        });
        assert_eq!(guard.sweep(), Ok(()));
        std::fs::write(&state, "forged").unwrap();
        let tampered = guard.sweep().unwrap_err();
        assert_eq!(
            tampered.changes,
            [GuardedChange {
                path: state.clone(),
                kind: ChangeKind::Modified
            }]
        );
        assert!(!tampered.concurrent);
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "{}");
        assert_eq!(guard.sweep(), Ok(()));
    }

    /// A slot's switch runs without the guard's lock: a turn of another story that ends while
    /// the switch rewrites the slot's `HEAD` is not blamed for it, and still for what it changed
    /// itself; the switched `HEAD` is the snapshot's afterwards.
    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays git switching a worktree and the agent, writing files directly"
    )]
    fn a_switch_rewrites_its_slots_head_without_blocking_or_failing_other_turns() {
        let repo = tempfile::tempdir().unwrap();
        let common = repo.path().join(".git");
        let root = repo.path().join("shop.worktrees/e");
        let slot = root.join("_slot-0");
        let registration = common.join("worktrees/_slot-0");
        std::fs::create_dir_all(&registration).unwrap();
        std::fs::create_dir_all(&slot).unwrap();
        std::fs::write(common.join("config"), "[core]\n").unwrap();
        let gitdir = format!("{}\n", resolved(&slot).join(".git").display());
        std::fs::write(registration.join("gitdir"), gitdir).unwrap();
        std::fs::write(registration.join("HEAD"), "ref: refs/heads/story/e/a\n").unwrap();
        let dir = EpicDir::new(&common, "e").unwrap();
        let guard = Arc::new(TurnGuard::new(&common, &dir, &root, &[]).unwrap());

        let other = guard.begin();
        let ended = guard.epic_switch(&slot, || {
            std::fs::write(registration.join("HEAD"), "ref: refs/heads/story/e/b\n").unwrap();
            // Another story's turn ends mid-switch, having changed the configuration.
            std::fs::write(common.join("config"), "[core]\n\tfsmonitor = evil\n").unwrap();
            other.end(&root.join("_slot-1"))
        });
        let tampered = ended.unwrap_err();
        assert_eq!(
            tampered.changes,
            [GuardedChange {
                path: common.join("config"),
                kind: ChangeKind::Modified
            }],
            "the switched HEAD is not the turn's change"
        );
        // After the switch, its HEAD is what the snapshot holds; changing it again is a change.
        let turn = guard.begin();
        assert_eq!(turn.end(&root.join("_slot-1")), Ok(()));
        let turn = guard.begin();
        std::fs::write(registration.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let tampered = turn.end(&root.join("_slot-1")).unwrap_err();
        assert_eq!(tampered.changes[0].path, registration.join("HEAD"));
        assert_eq!(
            std::fs::read_to_string(registration.join("HEAD")).unwrap(),
            "ref: refs/heads/story/e/b\n"
        );
    }

    /// A repository with a configuration and hooks, epic `e`'s state directory, and the guard
    /// of both (its worktrees under `shop.worktrees/e`).
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays the repository's owner, writing its configuration directly"
    )]
    fn configured_repo() -> (tempfile::TempDir, EpicDir, Arc<TurnGuard>) {
        let repo = tempfile::tempdir().unwrap();
        let common = repo.path().join(".git");
        std::fs::create_dir_all(common.join("hooks")).unwrap();
        std::fs::write(common.join("config"), "[core]\n").unwrap();
        let dir = EpicDir::new(&common, "e").unwrap();
        let root = repo.path().join("shop.worktrees/e");
        let guard = Arc::new(TurnGuard::new(&common, &dir, &root, &[]).unwrap());
        (repo, dir, guard)
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays the repository's owner and the agent, writing files directly"
    )]
    fn epic_writes_are_taken_into_the_snapshot_and_agent_changes_are_undone() {
        let (repo, dir, guard) = configured_repo();
        let (common, root) = (
            repo.path().join(".git"),
            repo.path().join("shop.worktrees/e"),
        );
        assert!(guard.watched(&dir.story_state("a").unwrap()));
        assert!(!guard.watched(&dir.events()));

        // epic's own write, during a turn, is not the turn's change.
        let turn = guard.begin();
        let state = dir.story_state("a").unwrap();
        guard.epic_write(&state, || {
            epic_state_store::write_atomic(&state, b"{}").unwrap();
        });
        epic_state_store::write_atomic(dir.events(), b"{}\n").unwrap();
        turn.end(&root.join("a")).unwrap();

        // An agent's is, and is undone.
        let turn = guard.begin();
        std::fs::write(common.join("config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::write(&state, "forged").unwrap();
        let tampered = turn.end(&root.join("a")).unwrap_err();
        assert_eq!(
            tampered.changes,
            [
                GuardedChange {
                    path: common.join("config"),
                    kind: ChangeKind::Modified
                },
                GuardedChange {
                    path: state.clone(),
                    kind: ChangeKind::Modified
                },
            ]
        );
        assert!(!tampered.concurrent);
        assert_eq!(
            std::fs::read_to_string(common.join("config")).unwrap(),
            "[core]\n"
        );
        assert_eq!(std::fs::read_to_string(&state).unwrap(), "{}");
    }

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test plays the repository's owner and the agent, writing files directly"
    )]
    fn a_check_while_epic_writes_neither_waits_for_the_write_nor_blames_it() {
        let (repo, dir, guard) = configured_repo();
        let common = repo.path().join(".git");
        let state = dir.story_state("a").unwrap();
        let (written_tx, written_rx) = std::sync::mpsc::channel::<()>();
        let (checked_tx, checked_rx) = std::sync::mpsc::channel::<Result<(), Box<Tampered>>>();
        let sweeper = {
            let (guard, config) = (Arc::clone(&guard), common.join("config"));
            std::thread::spawn(move || {
                written_rx.recv().unwrap();
                // An agent's change meanwhile is found all the same.
                std::fs::write(config, "[core]\n\tfsmonitor = evil\n").unwrap();
                checked_tx.send(guard.sweep()).unwrap();
            })
        };
        guard.epic_write(&state, || {
            epic_state_store::write_atomic(&state, b"{}").unwrap();
            written_tx.send(()).unwrap();
            // The check runs to its end while this write is still in flight: under the old
            // lock it would wait for the write, and the write for it.
            let found = checked_rx
                .recv_timeout(std::time::Duration::from_mins(1))
                .expect("the check waited for the write")
                .unwrap_err();
            let paths: Vec<&Path> = found
                .changes
                .iter()
                .map(|change| change.path.as_path())
                .collect();
            assert_eq!(paths, [common.join("config").as_path()]);
        });
        sweeper.join().unwrap();
        // Taken in once done: the next check finds nothing.
        guard.sweep().unwrap();
        assert_eq!(std::fs::read(&state).unwrap(), b"{}");
    }
}
