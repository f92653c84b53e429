//! Atomic file replacement: temp file, `sync_all`, rename, directory fsync.
//!
//! A reader of the target sees either the old contents or the new, never a mix: the new bytes go
//! to a temp file in the same directory (so the rename stays on one filesystem, where POSIX makes
//! it atomic), are flushed to disk, and only then renamed over the target; the directory is
//! synced last so the rename itself survives a power cut. The temp file is removed on every
//! failure path, and a later write removes the temp files that writers killed mid-write left
//! behind.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// A temp file of a process that no longer exists is removed; where liveness cannot be told
/// (no `/proc`), only one older than this.
const STALE_AGE: Duration = Duration::from_hours(1);

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
/// the target; it is removed on every failure path. Before writing, temp files of the same target
/// left by writers that died (their process is gone) are removed.
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
    let path = path.as_ref();
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
    remove_stale_temps(dir, name);

    let (temp, mut file) = create_temp(dir, name)?;
    let guard = TempGuard(Some(temp.clone()));
    let written = file.write_all(contents).and_then(|()| file.sync_all());
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
fn temp_pid(entry: &OsStr, name: &OsStr) -> Option<u32> {
    let entry = entry.as_encoded_bytes();
    let name = name.as_encoded_bytes();
    let rest = entry.strip_prefix(b".")?.strip_prefix(name)?;
    let rest = rest.strip_prefix(b".")?.strip_suffix(b".tmp")?;
    let rest = std::str::from_utf8(rest).ok()?;
    let (pid, unique) = rest.split_once('.')?;
    let is_hex = !unique.is_empty() && unique.bytes().all(|byte| byte.is_ascii_hexdigit());
    if !is_hex || pid.is_empty() || !pid.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Removes the temp files of the target `name` in `dir` whose writer is gone. Best effort: a
/// leftover temp file is clutter, never a correctness problem, so errors are ignored.
fn remove_stale_temps(dir: &Path, name: &OsStr) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let Some(pid) = temp_pid(&entry.file_name(), name) else {
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
}
