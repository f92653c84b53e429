//! [`GixGit`]: the repository handle and its per-worktree gix handles.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::cli::Cli;
use crate::error::{Cause, OpenError};
use crate::memo::Memo;

/// `path` made absolute against the current directory, lexically (git and gix may run elsewhere).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// A gix handle of one linked worktree, valid while its `.git` file says the same.
#[derive(Debug)]
struct Cached {
    dir: PathBuf,
    dotgit: Vec<u8>,
    repo: gix::ThreadSafeRepository,
    /// Thread-local handles of finished calls, see [`Handle`].
    idle: Vec<gix::Repository>,
}

/// How many finished thread-local handles to keep per worktree: one per call that runs at once
/// on the same worktree, which is rarely more than two.
const IDLE: usize = 2;

/// The object cache of each thread-local handle: the trees and commits a story's diffs read.
/// A megabyte holds the epic head's trees on a tree of 10,000 files (some 100 trees of a few
/// kilobytes); the caches of the idle handles fill to their bound over a long run, and at
/// 4 MiB they held 80 MB of a 10,000-story run (two idle handles for each of ten worktrees).
const OBJECT_CACHE: usize = 1024 * 1024;

/// A thread-local gix handle lent for one call. Dropped, it goes back to its worktree's idle
/// handles, so the next call finds the trees and commits it read still in its object cache
/// (objects are immutable; refs, the index and new packs are re-read by gix as they change).
#[derive(Debug)]
pub(crate) struct Handle<'a> {
    repo: Option<gix::Repository>,
    home: Home<'a>,
}

/// Where a [`Handle`] goes back to.
#[derive(Debug)]
enum Home<'a> {
    Main(&'a GixGit),
    Linked(&'a GixGit, PathBuf, Vec<u8>),
    /// Found by discovery from a subdirectory: not kept.
    Nowhere,
}

impl std::ops::Deref for Handle<'_> {
    type Target = gix::Repository;

    fn deref(&self) -> &gix::Repository {
        self.repo
            .as_ref()
            .unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

impl std::ops::DerefMut for Handle<'_> {
    fn deref_mut(&mut self) -> &mut gix::Repository {
        self.repo
            .as_mut()
            .unwrap_or_else(|| unreachable!("taken only on drop"))
    }
}

/// How many reusable buffers a handle keeps when it goes back idle. gix returns every object's
/// buffer to its handle's free list when the object is dropped, and the list has no bound: an
/// object made outside it (a clone, an edited tree) adds one for good, so a handle lent for every
/// story gathered buffers in proportion to the epic (17 MB of attestation trees at 5,000 stories).
const FREE_BUFFERS: usize = 4;

/// `repo` with at most [`FREE_BUFFERS`] of its reusable buffers.
fn trimmed(mut repo: gix::Repository) -> gix::Repository {
    if let Some(mut buffers) = repo.set_freelist(None) {
        buffers.truncate(FREE_BUFFERS);
        repo.set_freelist(Some(buffers));
    }
    repo
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        let Some(repo) = self.repo.take() else {
            return;
        };
        let repo = trimmed(repo);
        match &self.home {
            Home::Main(git) => {
                let mut idle = git.main_idle.lock().unwrap_or_else(PoisonError::into_inner);
                if idle.len() < IDLE {
                    idle.push(repo);
                }
            }
            Home::Linked(git, dir, dotgit) => {
                let mut handles = git.handles.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(cached) = handles
                    .iter_mut()
                    .find(|cached| &cached.dir == dir && &cached.dotgit == dotgit)
                    && cached.idle.len() < IDLE
                {
                    cached.idle.push(repo);
                }
            }
            Home::Nowhere => {}
        }
    }
}

/// Every gix handle ignores replace refs (`git replace`), as epic's git does
/// (`GIT_NO_REPLACE_OBJECTS`): an agent's replacement never changes what epic reads. And it
/// reads an index on the thread that asks: epic reads the indexes of many worktrees at once, and
/// threads started for each read (gix's default past a few thousand entries) only add their
/// cost.
const HANDLE_OVERRIDES: [&str; 2] = ["core.useReplaceRefs=false", "index.threads=1"];

/// How many worktree handles to keep: more than the stories that run at once.
const CACHED: usize = 64;

/// The [`Git`](crate::Git) implementation: gix where it does the operation natively, the git
/// command line where it does not (see the crate docs for which is which). The trait's methods
/// are in `delegate.rs`, each handed to the module of its concern.
///
/// It holds thread-safe gix handles, one for the main worktree and one for each linked worktree
/// used, so reads do not reopen the repository. No global state: two handles on the same
/// repository are independent.
#[derive(Debug)]
pub struct GixGit {
    main: gix::ThreadSafeRepository,
    pub(crate) common_dir: PathBuf,
    pub(crate) main_worktree: Option<PathBuf>,
    pub(crate) cli: Cli,
    handles: Mutex<Vec<Cached>>,
    main_idle: Mutex<Vec<gix::Repository>>,
    /// Per worktree root: the files a status read and found unchanged, and the monitor of its
    /// directories (see `memo`).
    memos: Mutex<Vec<(PathBuf, Arc<Mutex<Memo>>)>>,
}

impl GixGit {
    /// Opens the repository that contains `dir`, which may be any directory of any of its
    /// worktrees.
    pub fn discover(dir: impl AsRef<Path>) -> Result<Self, OpenError> {
        let dir = dir.as_ref();
        let fail = |source| OpenError::Discover {
            dir: dir.to_owned(),
            source,
        };
        let found = gix::ThreadSafeRepository::discover_opts(
            dir,
            gix::discover::upwards::Options::default(),
            |options, _| options.config_overrides(HANDLE_OVERRIDES),
        )
        .map(gix::Repository::from)
        .map_err(fail)?;
        let main = found.main_repo().map_err(fail)?;
        let common_dir = absolute(main.common_dir());
        let main_worktree = main.workdir().map(absolute);
        let anchor = main_worktree.clone().unwrap_or_else(|| common_dir.clone());
        Ok(Self {
            main: main.into_sync(),
            cli: Cli::for_repository(common_dir.clone(), anchor),
            common_dir,
            main_worktree,
            handles: Mutex::new(Vec::new()),
            main_idle: Mutex::new(Vec::new()),
            memos: Mutex::new(Vec::new()),
        })
    }

    /// Sets (`Some`) or removes (`None`) an environment variable for every git command this
    /// handle runs, on top of the process environment and the clean environment of the crate
    /// docs. Tests use it to isolate git from the machine's configuration (`HOME`,
    /// `GIT_CONFIG_NOSYSTEM`).
    #[must_use]
    pub fn with_env(
        mut self,
        key: impl Into<OsString>,
        value: Option<impl Into<OsString>>,
    ) -> Self {
        self.cli.set_env(key.into(), value.map(Into::into));
        self
    }

    /// Runs `program` instead of the `git` found on `PATH`.
    #[must_use]
    pub fn with_git_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.cli.set_program(program.into());
        self
    }

    /// A gix handle on the main repository (refs and objects are shared by every worktree).
    pub(crate) fn main_repo(&self) -> Handle<'_> {
        let idle = self
            .main_idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let repo = idle.unwrap_or_else(|| {
            let mut repo = self.main.to_thread_local();
            repo.object_cache_size_if_unset(OBJECT_CACHE);
            repo
        });
        Handle {
            repo: Some(repo),
            home: Home::Main(self),
        }
    }

    /// A gix handle on the worktree containing `dir`.
    pub(crate) fn repo_at(&self, dir: &Path) -> Result<Handle<'_>, Cause> {
        if self.main_worktree.as_deref() == Some(dir) {
            return Ok(self.main_repo());
        }
        let dotgit = match std::fs::read(dir.join(".git")) {
            Ok(content) => content,
            // The main worktree under another spelling: `.git` is a directory.
            Err(error) if error.kind() == io::ErrorKind::IsADirectory => Vec::new(),
            // A subdirectory, or not a worktree at all: search upwards, uncached.
            Err(_) => {
                let mut repo = gix::ThreadSafeRepository::discover_opts(
                    dir,
                    gix::discover::upwards::Options::default(),
                    |options, _| options.config_overrides(HANDLE_OVERRIDES),
                )
                .map(gix::Repository::from)
                .map_err(Cause::gix)?;
                self.pin_gix(&mut repo)?;
                repo.object_cache_size_if_unset(OBJECT_CACHE);
                return Ok(Handle {
                    repo: Some(repo),
                    home: Home::Nowhere,
                });
            }
        };
        let home = Home::Linked(self, dir.to_owned(), dotgit.clone());
        let mut handles = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cached) = handles
            .iter_mut()
            .find(|cached| cached.dir == dir && cached.dotgit == dotgit)
        {
            let repo = cached.idle.pop().unwrap_or_else(|| {
                let mut repo = cached.repo.to_thread_local();
                repo.object_cache_size_if_unset(OBJECT_CACHE);
                repo
            });
            return Ok(Handle {
                repo: Some(repo),
                home,
            });
        }
        drop(handles);
        let mut repo = gix::open_opts(
            dir,
            gix::open::Options::default().config_overrides(HANDLE_OVERRIDES),
        )
        .map_err(Cause::gix)?;
        self.pin_gix(&mut repo)?;
        let mut handles = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        handles.retain(|cached| cached.dir != dir);
        if handles.len() >= CACHED {
            handles.remove(0);
        }
        handles.push(Cached {
            dir: dir.to_owned(),
            dotgit,
            repo: repo.clone().into_sync(),
            idle: Vec::new(),
        });
        drop(handles);
        repo.object_cache_size_if_unset(OBJECT_CACHE);
        Ok(Handle {
            repo: Some(repo),
            home,
        })
    }

    /// Gives a gix handle opened now the configuration pinned at the start (see `pin`).
    fn pin_gix(&self, repo: &mut gix::Repository) -> Result<(), Cause> {
        if let Some(pin) = self.cli.pin()? {
            pin.pin_gix(repo).map_err(Cause::Gix)?;
        }
        Ok(())
    }

    /// Forgets the cached handle of `dir` (after the worktree was removed or moved), what its
    /// statuses verified, and its monitor.
    pub(crate) fn forget(&self, dir: &Path) {
        self.handles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|cached| cached.dir != dir);
        self.memos
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(root, _)| root != dir);
    }

    /// What earlier statuses of the worktree of `repo` kept for the next one.
    pub(crate) fn memo(&self, repo: &gix::Repository) -> Arc<Mutex<Memo>> {
        let root = repo.workdir().map(Path::to_owned).unwrap_or_default();
        let mut all = self.memos.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, memo)) = all.iter().find(|(dir, _)| *dir == root) {
            return Arc::clone(memo);
        }
        if all.len() >= CACHED {
            all.remove(0);
        }
        let memo = Arc::new(Mutex::new(Memo::default()));
        all.push((root, Arc::clone(&memo)));
        memo
    }

    /// Where to run repository-wide git commands: the main worktree, else the git directory.
    pub(crate) fn anchor(&self) -> &Path {
        self.main_worktree.as_deref().unwrap_or(&self.common_dir)
    }
}
