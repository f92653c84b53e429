//! The append-only JSON-lines event log, `events.jsonl`.
//!
//! Each event is one line, written with one `write` call on a file opened with `O_APPEND`, so
//! lines from concurrent writers never interleave. A crash can still leave the last line torn
//! (cut short, without its newline); reading skips it and says so, and opening the log for
//! appending first ends it with a newline, so the next event starts a line of its own instead of
//! being glued to the torn one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// An event log open for appending.
///
/// `append` takes `&self`: share one log between threads (`Arc<EventLog>`), or open the same
/// file several times; either way every event lands as a whole line.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use epic_state_store::{EventLog, read_all};
///
/// #[derive(Debug, PartialEq, Serialize, Deserialize)]
/// struct Event {
///     at: String,
///     kind: String,
/// }
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("events.jsonl");
/// let log = EventLog::open(&path)?;
/// log.append(&Event { at: "2026-08-01T09:30:00Z".into(), kind: "run_started".into() })?;
///
/// let read = read_all::<Event>(&path)?;
/// assert_eq!(read.events[0].kind, "run_started");
/// assert!(read.is_clean());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EventLog {
    file: File,
    path: PathBuf,
}

/// An error returned by [`EventLog::open`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenLogError {
    /// The log's directory could not be created.
    #[error("failed to create directory `{}` for the event log", dir.display())]
    CreateDir {
        /// The directory.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The log could not be opened or created.
    #[error("failed to open event log `{}` for appending", path.display())]
    Open {
        /// The log.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The log ends in a torn line that could not be terminated.
    #[error("failed to end the torn last line of event log `{}`", path.display())]
    Repair {
        /// The log.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// An error returned by [`EventLog::append`] and [`EventLog::sync`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppendError {
    /// The event could not be encoded as JSON; nothing was written.
    #[error("failed to encode an event for event log `{}`", path.display())]
    Encode {
        /// The log.
        path: PathBuf,
        /// The encoder's error.
        #[source]
        source: serde_json::Error,
    },
    /// Writing (or syncing) the log failed.
    #[error("failed to append to event log `{}`", path.display())]
    Write {
        /// The log.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// An error returned by [`read_all`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadLogError {
    /// The log exists but could not be read.
    #[error("failed to read event log `{}`", path.display())]
    Read {
        /// The log.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl EventLog {
    /// Opens the log at `path` for appending, creating it and its directory if needed.
    ///
    /// If the file does not end with a newline (a writer crashed mid-line), a newline is appended
    /// first, so the torn line stays a line of its own, which readers skip.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, OpenLogError> {
        let path = path.into();
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            fs::create_dir_all(parent).map_err(|source| OpenLogError::CreateDir {
                dir: parent.to_path_buf(),
                source,
            })?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|source| OpenLogError::Open {
                path: path.clone(),
                source,
            })?;
        if let Err(source) = end_torn_line(&mut file) {
            return Err(OpenLogError::Repair { path, source });
        }
        Ok(Self { file, path })
    }

    /// Appends `event` as one line of compact JSON, in a single write.
    ///
    /// The line reaches the OS before this returns (there is no buffer in between), but not
    /// necessarily the disk: [`sync`](Self::sync) for that.
    pub fn append<E: Serialize + ?Sized>(&self, event: &E) -> Result<(), AppendError> {
        // Compact JSON never contains a raw newline: newlines in strings are escaped.
        let mut line = serde_json::to_vec(event).map_err(|source| AppendError::Encode {
            path: self.path.clone(),
            source,
        })?;
        line.push(b'\n');
        // One `write` for the whole line; `write_all` loops only on a short write, which a
        // regular file gives only when the disk is full or a signal interrupts.
        (&self.file)
            .write_all(&line)
            .and_then(|()| (&self.file).flush())
            .map_err(|source| AppendError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Flushes the appended events to disk.
    pub fn sync(&self) -> Result<(), AppendError> {
        self.file.sync_data().map_err(|source| AppendError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Appends a newline if the file is not empty and does not end with one.
fn end_torn_line(file: &mut File) -> io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        // Appending mode: this lands at the end whatever the position.
        file.write_all(b"\n")?;
    }
    Ok(())
}

/// What [`read_all`] found in a log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Events<T> {
    /// The events of every whole line that decoded, in order.
    pub events: Vec<T>,
    /// Whole lines that did not decode as `T`: torn lines of earlier crashes that a later open
    /// terminated, or events of a kind this build does not know.
    pub skipped: Vec<SkippedLine>,
    /// The last line, when it lacks its newline and does not decode: a write a crash cut short.
    pub torn_tail: Option<TornTail>,
}

impl<T> Events<T> {
    /// Whether every line decoded and the log ends cleanly.
    pub fn is_clean(&self) -> bool {
        self.skipped.is_empty() && self.torn_tail.is_none()
    }
}

/// A whole line of the log that did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedLine {
    /// Its line number, from 1.
    pub line: usize,
    /// What the decoder found.
    pub reason: String,
}

/// A torn last line: the bytes a crash left of the final write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TornTail {
    /// Its line number, from 1.
    pub line: usize,
    /// How many bytes of it there are.
    pub bytes: usize,
}

/// Reads every event of the log at `path` as a `T`; a missing log has none.
///
/// Never fails over the contents: lines that do not decode are listed in
/// [`skipped`](Events::skipped), a torn last line in [`torn_tail`](Events::torn_tail), and blank
/// lines are ignored. Only an unreadable file is an error.
pub fn read_all<T: DeserializeOwned>(path: impl AsRef<Path>) -> Result<Events<T>, ReadLogError> {
    let path = path.as_ref();
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(ReadLogError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    Ok(parse_lines(&bytes))
}

fn parse_lines<T: DeserializeOwned>(bytes: &[u8]) -> Events<T> {
    let mut read = Events {
        events: Vec::new(),
        skipped: Vec::new(),
        torn_tail: None,
    };
    let mut lines = bytes.split(|&byte| byte == b'\n').enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        // `split` yields the part after the last newline as a final piece: empty for a log that
        // ends cleanly, the torn write otherwise.
        let is_tail = lines.peek().is_none();
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<T>(line) {
            Ok(event) => read.events.push(event),
            Err(_) if is_tail => {
                read.torn_tail = Some(TornTail {
                    line: index + 1,
                    bytes: line.len(),
                });
            }
            Err(error) => read.skipped.push(SkippedLine {
                line: index + 1,
                reason: crate::document::reason(&error),
            }),
        }
    }
    read
}
