//! What a worktree's statuses, moves and stagings keep for the next one ([`Memo`]), kept per
//! worktree by the [`GixGit`](crate::GixGit) handle: the files a status read and found equal
//! and the monitor of the worktree's directories (`scan`, `monitor`), the last status's answer
//! with what it depended on ([`Last`], [`Stamp`]: `status`), and the index epic last wrote
//! ([`Kept`]: `kept_index`). The types live here, below the handle that holds them and the
//! modules that fill them.

use std::path::Path;
use std::sync::Arc;

use crate::monitor::Watching;
use crate::scan::{Verified, monitor};

/// What a worktree's statuses, moves and stagings keep for the next one: the files read and
/// found equal, the monitor of its directories, the last answer and the last index epic wrote.
/// Kept per worktree by the [`GixGit`](crate::GixGit) handle.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    pub(crate) verified: Verified,
    pub(crate) watching: Watching,
    /// The last status's paths, while they are still the answer (see `status`).
    pub(crate) last: Option<Last>,
    /// The index epic last wrote here (see `kept_index`).
    pub(crate) index: Option<Kept>,
}

impl Memo {
    /// The last status's paths, if nothing a status depends on changed since: the same `stamp`
    /// and no event taken in by the worktree's monitor.
    pub(crate) fn reuse(&mut self, workdir: &Path, stamp: &Stamp) -> Option<Vec<String>> {
        if self.last.as_ref()?.stamp != *stamp {
            return None;
        }
        // A kept answer was taken with the monitor on: it is there (or gone off).
        if matches!(self.watching, Watching::Untried) {
            return None;
        }
        let generation = monitor(&mut self.watching, workdir, 0)?.generation();
        let last = self.last.as_ref()?;
        (last.generation == generation).then(|| last.paths.clone())
    }
}

/// A status's answer kept for the next (see [`Memo::reuse`]): what it depended on beyond the
/// worktree's files, the monitor's count of events when it began, and the paths it found.
#[derive(Debug)]
pub(crate) struct Last {
    pub(crate) stamp: Stamp,
    pub(crate) generation: u64,
    pub(crate) paths: Vec<String>,
}

/// What a status depends on beyond the worktree's files: the index file, the head, and the
/// ignore files outside the worktree (`info/exclude`, the global one). Equal stamps, no change.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    files: Vec<Option<FileStamp>>,
    head: Option<gix::ObjectId>,
}

/// A file's identity and last change, as an `lstat` gives them.
#[derive(Debug, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
    #[cfg(unix)]
    changed: (i64, i64),
}

impl FileStamp {
    fn of(path: &Path) -> Option<Self> {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt as _;
        let metadata = std::fs::symlink_metadata(path).ok()?;
        Some(Self {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            inode: (metadata.dev(), metadata.ino()),
            #[cfg(unix)]
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        })
    }
}

impl Stamp {
    pub(crate) fn of(repo: &gix::Repository) -> Self {
        let mut files = vec![repo.index_path(), repo.common_dir().join("info/exclude")];
        if let Ok(Some(global)) = repo.config_snapshot().trusted_path("core.excludesFile") {
            files.push(global);
        }
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")));
        if let Some(xdg) = xdg {
            files.push(xdg.join("git/ignore"));
        }
        Self {
            files: files.iter().map(|path| FileStamp::of(path)).collect(),
            head: repo.head_id().ok().map(gix::Id::detach),
        }
    }
}

/// An index epic wrote: its bytes on disk and the index they decode to.
#[derive(Debug)]
pub(crate) struct Kept {
    pub(crate) bytes: Vec<u8>,
    pub(crate) index: Arc<gix::index::File>,
}

impl Kept {
    /// Whether `repo`'s index file holds exactly these bytes. Read with the memo held: a write
    /// of this worktree's index by epic waits for it.
    ///
    /// Compared a piece at a time through one small buffer: reading the file whole allocated a
    /// fresh buffer of its size (a megabyte at 10,000 entries) at every check.
    pub(crate) fn on_disk(&self, repo: &gix::Repository) -> bool {
        same_bytes(&repo.index_path(), &self.bytes).unwrap_or(false)
    }
}

/// Whether the file at `path` holds exactly `expected`.
fn same_bytes(path: &Path, expected: &[u8]) -> std::io::Result<bool> {
    use std::io::Read as _;

    let mut file = std::fs::File::open(path)?;
    if file.metadata()?.len() != u64::try_from(expected.len()).unwrap_or(u64::MAX) {
        return Ok(false);
    }
    let mut buffer = vec![0_u8; 64 << 10];
    let mut rest = expected;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => return Ok(rest.is_empty()),
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let Some((head, tail)) = rest.split_at_checked(read) else {
            // Longer than when its size was read: not ours.
            return Ok(false);
        };
        if buffer[..read] != *head {
            return Ok(false);
        }
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    #[test]
    fn a_file_is_the_same_only_with_every_byte_equal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("index");
        // More than one piece of the comparison's buffer.
        let ours: Vec<u8> = (0..200_000_u32).flat_map(u32::to_le_bytes).collect();
        std::fs::write(&path, &ours).expect("write");
        assert!(same_bytes(&path, &ours).expect("read"));
        let mut last_differs = ours.clone();
        *last_differs.last_mut().expect("bytes") ^= 1;
        std::fs::write(&path, &last_differs).expect("write");
        assert!(
            !same_bytes(&path, &ours).expect("read"),
            "the last byte differs"
        );
        std::fs::write(&path, &ours[..ours.len() - 1]).expect("write");
        assert!(!same_bytes(&path, &ours).expect("read"), "one byte short");
        std::fs::write(&path, [&ours[..], b"x"].concat()).expect("write");
        assert!(!same_bytes(&path, &ours).expect("read"), "one byte more");
        std::fs::write(&path, b"").expect("write");
        assert!(same_bytes(&path, b"").expect("read"), "both empty");
        std::fs::remove_file(&path).expect("remove");
        assert!(same_bytes(&path, &ours).is_err(), "no file");
    }
}
