//! The exclusive lock of an epic, held for a whole run.
//!
//! It is an OS advisory lock (`flock` on Unix, through `File::try_lock`) on the epic's `lock`
//! file, so the OS drops it when its holder dies, however it dies: a crashed or killed run never
//! blocks the next one, and there is no stale lock to clean up by hand. While the lock is held,
//! the file records who holds it, for the message a second run gets and for `epic status`.
//!
//! The file itself is never removed: removing a locked file lets a second process lock a fresh
//! file of the same name while a third still holds the old one, and then two runs hold "the"
//! lock. On release it is emptied instead.
//!
//! Something else may remove it all the same (an agent runs as the user): so the lock that
//! decides is taken on the epic's directory itself, which stays while anything is in it
//! (removing it takes the epic's whole state with it), and the file's lock is taken under it. A second run, or `epic
//! status`, finds the epic locked whether or not the file is still there; only the holder's record
//! is lost with it.

use std::fmt;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::layout::EpicDir;

/// How long a reader waits for a fresh holder to record itself before calling it unknown: the
/// holder writes its record right after locking, so this is only ever waited out when the holder
/// died in between.
const RECORD_WAIT: Duration = Duration::from_millis(500);
const RECORD_POLL: Duration = Duration::from_millis(10);
/// How long an acquire keeps retrying before it believes a record: long enough to outlast the
/// shared lock a concurrent [`EpicLock::holder`] probe takes for a moment.
const PROBE_WAIT: Duration = Duration::from_millis(50);
/// How long an acquire keeps retrying when the recorded holder is a process of this host that
/// is gone: the lock then belongs to what its death left for a moment (a child forked to start
/// an agent in a session of its own holds the lock's descriptor until it `exec`s), and the OS
/// drops it as soon as that goes.
const DEAD_HOLDER_WAIT: Duration = Duration::from_secs(5);

/// Who holds an epic's lock, as its `lock` file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The holder's process id.
    pub pid: u32,
    /// The host it runs on.
    pub host: String,
    /// When it took the lock, RFC 3339 in UTC.
    pub started_at: String,
    /// Its command line.
    pub command: Vec<String>,
}

impl Holder {
    /// This process, now.
    pub(crate) fn current() -> Self {
        Self {
            pid: std::process::id(),
            host: hostname(),
            started_at: now_rfc3339(),
            command: std::env::args_os()
                .map(|arg| arg.to_string_lossy().into_owned())
                .collect(),
        }
    }
}

impl Holder {
    /// Whether this holder is a process of this host that no longer exists (Linux: no
    /// `/proc/<pid>`). Elsewhere, or on another host, it cannot tell: `false`.
    fn is_gone(&self) -> bool {
        cfg!(target_os = "linux")
            && self.host == hostname()
            && Path::new("/proc/self").exists()
            && !Path::new(&format!("/proc/{}", self.pid)).exists()
    }
}

impl fmt::Display for Holder {
    /// `pid 4242 on host `build-1` since 2026-08-01T09:30:00Z (`epic run plan.md`)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pid {} on host `{}` since {}",
            self.pid, self.host, self.started_at
        )?;
        if !self.command.is_empty() {
            write!(f, " (`{}`)", self.command.join(" "))?;
        }
        Ok(())
    }
}

/// Formats `time` as an RFC 3339 UTC timestamp to the second, such as `2026-08-01T09:30:00Z`: the
/// form of the lock's `started_at` (and of the events' `at`).
///
/// Fractions of a second are dropped, towards the past also before 1970
/// (`1969-12-31T23:59:59Z`), never rounded up. A time beyond jiff's range (about years -9999 to
/// 9999) is written as the end of that range.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
///
/// let time = UNIX_EPOCH + Duration::from_secs(1_785_576_600);
/// assert_eq!(epic_state_store::rfc3339(time), "2026-08-01T09:30:00Z");
/// ```
pub fn rfc3339(time: SystemTime) -> String {
    let at = Timestamp::try_from(time).unwrap_or(if time < UNIX_EPOCH {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    });
    // Precision 0 prints the UTC civil time without its fraction: truncation towards the past.
    format!("{at:.0}")
}

/// The current instant as [`rfc3339`] writes it.
pub(crate) fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// The host name: the kernel's, else `/etc/hostname`, else `unknown`.
fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .into_iter()
        .filter_map(|path| fs::read_to_string(path).ok())
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// An error returned by [`EpicLock::acquire`] and [`EpicLock::holder`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another process holds the lock: another run of this epic is going on.
    #[error("{}", held_message(path, holder.as_ref()))]
    Held {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, or `None` when it has not recorded itself (it died right after locking,
        /// or it is an older or foreign program).
        holder: Option<Holder>,
    },
    /// The epic's directory could not be created.
    #[error("failed to create directory `{}` for the epic lock", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The lock file could not be opened or created.
    #[error("failed to open epic lock file `{}`", path.display())]
    Open {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Locking failed for another reason than being held (a filesystem without locks).
    #[error("failed to lock epic lock file `{}`", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The lock was taken but the holder record could not be written; the lock is released
    /// again.
    #[error("failed to record the holder in epic lock file `{}`", path.display())]
    Record {
        /// The lock file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

fn held_message(path: &Path, holder: Option<&Holder>) -> String {
    let by = match holder {
        Some(holder) => format!("by {holder}"),
        None => "by a process that has not recorded who it is".to_owned(),
    };
    format!(
        "epic lock `{}` is held {by}: another run of this epic is going on; wait for it to \
         finish or stop it (a run that dies releases the lock by itself)",
        path.display()
    )
}

/// The exclusive lock of one epic, held for a whole run; released when dropped.
///
/// ```
/// use epic_state_store::{EpicDir, EpicLock, LockError};
///
/// let git = tempfile::tempdir()?;
/// let dir = EpicDir::new(git.path(), "checkout")?;
/// let lock = EpicLock::acquire(&dir)?;
/// assert_eq!(EpicLock::holder(&dir)?.map(|holder| holder.pid), Some(std::process::id()));
///
/// let Err(LockError::Held { holder: Some(holder), .. }) = EpicLock::acquire(&dir) else {
///     panic!("the epic is locked");
/// };
/// assert_eq!(holder.pid, std::process::id());
///
/// drop(lock);
/// assert_eq!(EpicLock::holder(&dir)?, None);
/// let _again = EpicLock::acquire(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[must_use = "the epic is unlocked as soon as the lock is dropped"]
pub struct EpicLock {
    /// The epic's directory, locked: the lock that decides (see the module docs).
    dir: File,
    file: File,
    path: PathBuf,
    holder: Holder,
}

impl EpicLock {
    /// Takes the lock of the epic `dir` without waiting, creating its directory and lock file if
    /// needed, and records this process as the holder.
    ///
    /// Fails with [`LockError::Held`], naming the holder, if another process (or another
    /// `EpicLock` in this one) holds it.
    pub fn acquire(dir: &EpicDir) -> Result<Self, LockError> {
        Self::acquire_file(&dir.lock())
    }

    fn acquire_file(path: &Path) -> Result<Self, LockError> {
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        fs::create_dir_all(parent).map_err(|source| LockError::CreateDir {
            dir: parent.to_path_buf(),
            source,
        })?;
        let dir = File::open(parent).map_err(|source| LockError::Open {
            path: parent.to_path_buf(),
            source,
        })?;
        lock_or_wait_for_record(&dir, path)?;
        // Never truncate on open: the file may be locked, and its record is the holder's.
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|source| LockError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        // Under the directory's lock nobody else holds the file's, but a run of an older epic
        // that locked only the file may.
        lock_or_wait_for_record(&file, path)?;
        let holder = Holder::current();
        let record = record_bytes(&holder);
        let recorded = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(&record));
        if let Err(source) = recorded {
            // Closing the file releases the lock.
            return Err(LockError::Record {
                path: path.to_path_buf(),
                source,
            });
        }
        Ok(Self {
            dir,
            file,
            path: path.to_path_buf(),
            holder,
        })
    }

    /// Who holds the lock of the epic `dir` right now, or `None` if nobody does (whatever the
    /// file says: a holder that died left its record behind, but not its lock).
    ///
    /// A holder that has not recorded itself is [`LockError::Held`] with no holder.
    pub fn holder(dir: &EpicDir) -> Result<Option<Holder>, LockError> {
        let path = dir.lock();
        let root = match File::open(dir.root()) {
            Ok(root) => root,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(LockError::Open {
                    path: dir.root().to_path_buf(),
                    source,
                });
            }
        };
        // A shared lock is granted only when nobody holds the exclusive one: on the directory
        // (this epic's runs), then on the file (a run of an older epic locked only the file).
        for locked in [Some(root), File::open(&path).ok()].into_iter().flatten() {
            match locked.try_lock_shared() {
                Ok(()) => {
                    locked.unlock().ok();
                }
                Err(TryLockError::WouldBlock) => {
                    return match File::open(&path)
                        .ok()
                        .and_then(|mut file| read_record(&mut file))
                    {
                        Some(holder) => Ok(Some(holder)),
                        None => Err(LockError::Held { path, holder: None }),
                    };
                }
                Err(TryLockError::Error(source)) => return Err(LockError::Lock { path, source }),
            }
        }
        Ok(None)
    }

    /// The holder this lock recorded: this process.
    pub fn holder_record(&self) -> &Holder {
        &self.holder
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for EpicLock {
    fn drop(&mut self) {
        // Clear the record while still holding the lock, then unlock; closing the file would
        // unlock too. Best effort: a record left behind is ignored by `holder` anyway.
        self.file.set_len(0).ok();
        self.file.unlock().ok();
        self.dir.unlock().ok();
    }
}

/// The record a holder writes: its JSON on one line.
fn record_bytes(holder: &Holder) -> Vec<u8> {
    let mut record = serde_json::to_vec(holder).unwrap_or_default();
    record.push(b'\n');
    record
}

/// Locks `file`; when it is held, waits briefly for the holder's record (a holder that just
/// locked is writing it) and returns [`LockError::Held`].
///
/// Also retries the lock meanwhile: a concurrent [`EpicLock::holder`] probes with a short-lived
/// shared lock, which must not make an acquire fail.
fn lock_or_wait_for_record(locked: &File, path: &Path) -> Result<(), LockError> {
    let mut waited = Duration::ZERO;
    loop {
        match locked.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(source)) => {
                return Err(LockError::Lock {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        // Until PROBE_WAIT has passed, the lock may only be a probe's; after it, a record names
        // the live holder. The record is read from the lock file, which may be gone.
        let holder = File::open(path)
            .ok()
            .and_then(|mut file| parse_record(&mut file));
        let dying = holder.as_ref().is_some_and(Holder::is_gone) && waited < DEAD_HOLDER_WAIT;
        if !dying && ((holder.is_some() && waited >= PROBE_WAIT) || waited >= RECORD_WAIT) {
            return Err(LockError::Held {
                path: path.to_path_buf(),
                holder,
            });
        }
        thread::sleep(RECORD_POLL);
        waited += RECORD_POLL;
    }
}

/// The holder record in `file`, waiting briefly for a holder that just locked to write it.
fn read_record(file: &mut File) -> Option<Holder> {
    let mut waited = Duration::ZERO;
    loop {
        if let Some(holder) = parse_record(file) {
            return Some(holder);
        }
        if waited >= RECORD_WAIT {
            return None;
        }
        thread::sleep(RECORD_POLL);
        waited += RECORD_POLL;
    }
}

fn parse_record(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(text.trim()).ok()
}
