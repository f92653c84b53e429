//! Atomic file replacement: temp file, `sync_all`, rename, directory fsync.
//!
//! A reader of the target sees either the old contents or the new, never a mix: the new bytes go
//! to a temp file in the same directory (so the rename stays on one filesystem, where POSIX makes
//! it atomic), are flushed to disk, and only then renamed over the target; the directory is
//! synced last so the rename itself survives a power cut. The temp file is removed on every
//! failure path, and a process's first write into a directory removes the temp files that
//! writers killed mid-write left there, as does its write of a file another process wrote since
//! (not every write: a directory of ten thousand story states is not listed again for each).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// A temp file of a process that no longer exists is removed; where liveness cannot be told
/// (no `/proc`), only one older than this.
const STALE_AGE: Duration = Duration::from_hours(1);

/// The buffer between a document's encoder and its temp file.
const WRITE_BUFFER: usize = 64 * 1024;

/// How often a temp name is drawn again if it already exists (it never should).
const TEMP_ATTEMPTS: u32 = 16;

/// An error returned by [`write_atomic`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The target path has no file name (it is empty, `/`, or ends in `..`).
    #[error("`{}` does not name a file", path.display())]
    NoFileName {
        /// The target.
        path: PathBuf,
    },
    /// The target's directory could not be created.
    #[error("failed to create directory `{}`", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// No temp file could be created beside the target.
    #[error("failed to create a temp file in `{}`", dir.display())]
    CreateTemp {
        /// The directory of the target.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing or syncing the temp file failed; the target is untouched.
    #[error("failed to write temp file `{}`", temp.display())]
    WriteTemp {
        /// The temp file (already removed again).
        temp: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Renaming the temp file over the target failed; the target is untouched.
    #[error("failed to rename `{}` onto `{}`", temp.display(), path.display())]
    Rename {
        /// The temp file (already removed again).
        temp: PathBuf,
        /// The target.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The new contents are in place but the directory could not be synced, so the rename may
    /// not survive a power cut.
    #[error("failed to sync directory `{}` after replacing `{}`", dir.display(), path.display())]
    SyncDir {
        /// The directory.
        dir: PathBuf,
        /// The target.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// Replaces the file at `path` with `contents`, atomically: a concurrent reader, or the next
/// reader after a crash at any instant, sees the old file or the new one, never a torn one.
///
/// Creates the parent directory if needed. The temp file is `.<name>.<pid>.<random>.tmp` beside
/// the target; it is removed on every failure path. Before this process's first write into a
/// directory, and before a write of a target another process wrote since this one did, the
/// temp files there left by writers that died (their process is gone) are removed.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("board.md");
/// epic_state_store::write_atomic(&path, b"# Board\n")?;
/// epic_state_store::write_atomic(&path, b"# Board: checkout\n")?;
/// assert_eq!(std::fs::read_to_string(&path)?, "# Board: checkout\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_atomic(path: impl AsRef<Path>, contents: &[u8]) -> Result<(), WriteError> {
    write_atomic_with(path.as_ref(), |out| out.write_all(contents))
}

/// [`write_atomic`], the new contents written by `write` into the temp file (through a buffer)
/// as they are made: a document of thousands of stories is never held whole in memory first.
/// An error `write` returns is a [`WriteError::WriteTemp`], the target untouched.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    let Some(name) = path.file_name() else {
        return Err(WriteError::NoFileName {
            path: path.to_path_buf(),
        });
    };
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(|source| WriteError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    if sweep_due(dir, path) {
        remove_stale_temps(dir);
    }

    let (temp, file) = create_temp(dir, name)?;
    let guard = TempGuard(Some(temp.clone()));
    let mut out = BufWriter::with_capacity(WRITE_BUFFER, &file);
    let written = write(&mut out)
        .and_then(|()| out.flush())
        .and_then(|()| file.sync_all());
    drop(out);
    drop(file);
    if let Err(source) = written {
        return Err(WriteError::WriteTemp { temp, source });
    }
    if let Err(source) = fs::rename(&temp, path) {
        return Err(WriteError::Rename {
            temp,
            path: path.to_path_buf(),
            source,
        });
    }
    guard.disarm();
    remember_written(path);
    sync_dir(dir).map_err(|source| WriteError::SyncDir {
        dir: dir.to_path_buf(),
        path: path.to_path_buf(),
        source,
    })
}

/// Removes the temp file it names when dropped, unless disarmed: every early return and every
/// panic between creating the temp file and renaming it cleans up.
struct TempGuard(Option<PathBuf>);

impl TempGuard {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(temp) = self.0.take() {
            // Best effort: the error being returned matters more than a leftover temp file,
            // which the next write removes anyway.
            fs::remove_file(temp).ok();
        }
    }
}

/// Creates a fresh temp file beside the target; `create_new` guarantees it is ours alone.
fn create_temp(dir: &Path, name: &OsStr) -> Result<(PathBuf, File), WriteError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let random = RandomState::new();
    let mut last = None;
    for _ in 0..TEMP_ATTEMPTS {
        let unique = random.hash_one(COUNTER.fetch_add(1, Ordering::Relaxed));
        let temp = dir.join(temp_name(name, std::process::id(), unique));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(source) => {
                return Err(WriteError::CreateTemp {
                    dir: dir.to_path_buf(),
                    source,
                });
            }
        }
    }
    Err(WriteError::CreateTemp {
        dir: dir.to_path_buf(),
        source: last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)),
    })
}

/// `.<name>.<pid>.<unique as hex>.tmp`.
fn temp_name(name: &OsStr, pid: u32, unique: u64) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".{pid}.{unique:016x}.tmp"));
    temp
}

/// The pid in a temp file name of the target `name`, or `None` if `entry` is not one.
#[cfg(test)]
fn temp_pid(entry: &OsStr, name: &OsStr) -> Option<u32> {
    let rest = entry.as_encoded_bytes().strip_prefix(b".")?;
    rest.strip_prefix(name.as_encoded_bytes())?;
    any_temp_pid(entry).filter(|_| {
        // The name is the whole part before `.<pid>.<unique>.tmp`.
        let tail = &rest[name.as_encoded_bytes().len()..];
        tail.split(|byte| *byte == b'.').count() == 4
    })
}

/// The pid in a temp file name of any target (`.<name>.<pid>.<unique as hex>.tmp`), or `None`
/// if `entry` is not one.
fn any_temp_pid(entry: &OsStr) -> Option<u32> {
    let rest = entry.as_encoded_bytes().strip_prefix(b".")?;
    let rest = rest.strip_suffix(b".tmp")?;
    let rest = std::str::from_utf8(rest).ok()?;
    let (rest, unique) = rest.rsplit_once('.')?;
    let (name, pid) = rest.rsplit_once('.')?;
    let is_hex = !unique.is_empty() && unique.bytes().all(|byte| byte.is_ascii_hexdigit());
    if name.is_empty()
        || !is_hex
        || pid.is_empty()
        || !pid.bytes().all(|byte| byte.is_ascii_digit())
    {
        return None;
    }
    pid.parse().ok()
}

/// What this process knows of its own writes: the directories it has swept, and the file each
/// target it wrote was left as (by a hash of its path: a collision costs at most a sweep).
#[derive(Default)]
struct Written {
    swept: HashSet<PathBuf>,
    files: HashMap<u64, Identity>,
}

static WRITTEN: Mutex<Option<Written>> = Mutex::new(None);

fn written() -> std::sync::MutexGuard<'static, Option<Written>> {
    WRITTEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn key_of(path: &Path) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::hash::DefaultHasher::new();
    path.hash(&mut hasher);
    hasher.finish()
}

/// Whether to look in `dir` for what dead writers left before writing `path`: at this
/// process's first write into `dir`, and whenever `path` is no longer the file this process
/// last wrote there (another process wrote it since, and may have died doing it again). A
/// directory of ten thousand story states is not listed again for every write into it.
fn sweep_due(dir: &Path, path: &Path) -> bool {
    let mut written = written();
    let written = written.get_or_insert_with(Written::default);
    if written.swept.insert(dir.to_path_buf()) {
        return true;
    }
    written.ours(path) == Some(false)
}

/// Whether `path` is still the file this process last wrote there: no other process has
/// replaced it since (every writer replaces, never rewrites in place).
pub(crate) fn still_ours(path: &Path) -> bool {
    written()
        .as_ref()
        .is_some_and(|written| written.ours(path) == Some(true))
}

impl Written {
    /// Whether `path` is the file this process last wrote there; `None` when it wrote none
    /// there, or the file's identity cannot be told.
    fn ours(&self, path: &Path) -> Option<bool> {
        let ours = self.files.get(&key_of(path))?;
        identity(path).map(|now| now == *ours)
    }
}

/// Records that `path` is now the file this process wrote.
fn remember_written(path: &Path) {
    if let Some(now) = identity(path) {
        let mut written = written();
        written
            .get_or_insert_with(Written::default)
            .files
            .insert(key_of(path), now);
    }
}

/// Which file a path is, and when it last changed: its device and inode, change time and size.
/// The inode alone is not enough: a file system reuses a freed inode number, so a file another
/// process renamed over this one's (freeing it) can get the same one.
type Identity = (u64, u64, i64, i64, u64);

/// The [`Identity`] of the file at `path`, where the platform tells.
#[cfg(unix)]
fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt as _;
    fs::symlink_metadata(path).ok().map(|metadata| {
        (
            metadata.dev(),
            metadata.ino(),
            metadata.ctime(),
            metadata.ctime_nsec(),
            metadata.len(),
        )
    })
}

#[cfg(not(unix))]
fn identity(_path: &Path) -> Option<Identity> {
    None
}

/// Removes the temp files in `dir` whose writer is gone. Best effort: a leftover temp file is
/// clutter, never a correctness problem, so errors are ignored.
fn remove_stale_temps(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let Some(pid) = any_temp_pid(&entry.file_name()) else {
            continue;
        };
        if pid != own && writer_is_gone(pid, &entry.path()) {
            fs::remove_file(entry.path()).ok();
        }
    }
}

/// Whether the process `pid` that wrote `temp` no longer exists. Where `/proc` cannot tell, a
/// temp file counts as abandoned only once it is old.
fn writer_is_gone(pid: u32, temp: &Path) -> bool {
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return !proc.join(pid.to_string()).exists();
    }
    fs::metadata(temp)
        .and_then(|metadata| metadata.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|age| age > STALE_AGE)
}

/// Syncs a directory so a rename in it is durable.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Directories cannot be opened for syncing here; the rename is as durable as the OS makes it.
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_recognised_for_their_target_only() {
        let name = OsStr::new("cart.json");
        let temp = temp_name(name, 4242, 0xdead_beef);
        assert_eq!(temp, ".cart.json.4242.00000000deadbeef.tmp");
        assert_eq!(temp_pid(&temp, name), Some(4242));
        assert_eq!(temp_pid(&temp, OsStr::new("cart")), None);
        assert_eq!(temp_pid(&temp, OsStr::new("cart.json.4242")), None);
        assert_eq!(temp_pid(OsStr::new("cart.json"), name), None);
        assert_eq!(temp_pid(OsStr::new(".cart.json.x.ff.tmp"), name), None);
        assert_eq!(temp_pid(OsStr::new(".cart.json.12.zz.tmp"), name), None);
        assert_eq!(temp_pid(OsStr::new(".cart.json.12.ff.tmp.bak"), name), None);
    }

    #[test]
    fn any_targets_temp_names_are_recognised() {
        let temp = temp_name(OsStr::new("s.json"), 77, 0xff);
        assert_eq!(any_temp_pid(&temp), Some(77));
        assert_eq!(any_temp_pid(OsStr::new(".a.b.json.12.ff.tmp")), Some(12));
        assert_eq!(any_temp_pid(OsStr::new("..12.ff.tmp")), None);
        assert_eq!(any_temp_pid(OsStr::new(".x.12.ff.tmp.bak")), None);
        assert_eq!(any_temp_pid(OsStr::new(".x.12.zz.tmp")), None);
    }

    #[test]
    fn the_first_write_into_a_directory_removes_what_dead_writers_left_there() {
        let dir = tempfile::tempdir().unwrap();
        // No process has this pid (above the kernel's limit), so its writer is gone.
        let dead = dir
            .path()
            .join(temp_name(OsStr::new("other.json"), 4_194_305, 1));
        let live = dir
            .path()
            .join(temp_name(OsStr::new("other.json"), std::process::id(), 2));
        fs::write(&dead, "torn").unwrap();
        fs::write(&live, "being written").unwrap();
        write_atomic(dir.path().join("story.json"), b"{}").unwrap();
        assert!(
            !dead.exists(),
            "a dead writer's temp file of another target is removed"
        );
        assert!(
            live.exists(),
            "this process's own temp files are left alone"
        );
        fs::write(&dead, "torn").unwrap();
        write_atomic(dir.path().join("story.json"), b"{}").unwrap();
        assert!(
            dead.exists(),
            "the directory is listed once per process, not per write"
        );
    }
}
