//! Plain files of the state directory besides the versioned documents: a durable removal, a
//! read that tells a missing file from an unreadable one, and the transcript files of a story's
//! agent turns (`transcripts/<story>/NNNN-<role>.md`).
//!
//! They are here because this crate is the only code that writes the state directory: the
//! executor removes the merge journal and a task checkpoint, reads the checkpoint, and records
//! each turn through these functions, never with `std::fs` of its own.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use crate::atomic::sync_dir;

/// An error returned by [`remove`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoveError {
    /// The file could not be removed; it is still there.
    #[error("failed to remove `{}`", path.display())]
    Remove {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The file is gone but its directory could not be synced, so the removal may not survive a
    /// power cut.
    #[error("failed to sync directory `{}` after removing `{}`", dir.display(), path.display())]
    SyncDir {
        /// The directory.
        dir: PathBuf,
        /// The file removed.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl RemoveError {
    /// The OS error underneath.
    pub fn into_io_error(self) -> io::Error {
        match self {
            Self::Remove { source, .. } | Self::SyncDir { source, .. } => source,
        }
    }
}

/// Removes the file at `path` durably: once it returns, the removal survives a crash or a power
/// cut (the directory is synced). A file that is not there is no error. Whether a file was
/// removed.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("merging.json");
/// epic_state_store::write_atomic(&path, b"{}")?;
/// assert!(epic_state_store::remove(&path)?);
/// assert!(!path.exists());
/// assert!(!epic_state_store::remove(&path)?, "already gone");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn remove(path: impl AsRef<Path>) -> Result<bool, RemoveError> {
    let path = path.as_ref();
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(RemoveError::Remove {
                path: path.to_path_buf(),
                source,
            });
        }
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    sync_dir(dir).map_err(|source| RemoveError::SyncDir {
        dir: dir.to_path_buf(),
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

/// The text of the file at `path`, or `None` when there is no such file.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("cart-api.plan.md");
/// assert_eq!(epic_state_store::read_if_exists(&path)?, None);
/// epic_state_store::write_atomic(&path, b"- [ ] cart\n")?;
/// assert_eq!(epic_state_store::read_if_exists(&path)?.as_deref(), Some("- [ ] cart\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_if_exists(path: impl AsRef<Path>) -> io::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Creates (or truncates) the transcript file at `path`, creating its directory, for the
/// caller to stream a turn into. A transcript is a record of what happened, written as it
/// happens: not atomic, and not synced.
///
/// ```
/// use std::io::Write as _;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("transcripts/cart-api/0001-coder.md");
/// let mut file = epic_state_store::create_transcript(&path)?;
/// file.write_all(b"# Turn 1\n")?;
/// assert_eq!(epic_state_store::last_transcript_number(dir.path().join("transcripts/cart-api")), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_transcript(path: impl AsRef<Path>) -> io::Result<File> {
    let path = path.as_ref();
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        fs::create_dir_all(parent)?;
    }
    File::create(path)
}

/// The highest turn number among the transcript files `NNNN-<role>.md` in `dir`, so that a
/// resumed story numbers its turns on from there; 0 when there are none (or no `dir`).
pub fn last_transcript_number(dir: impl AsRef<Path>) -> u32 {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let name = name.to_str()?;
            name.split('-').next()?.parse::<u32>().ok()
        })
        .max()
        .unwrap_or(0)
}
