//! Versioned JSON documents: the `{"version":N,"data":…}` envelope, loading with a version check
//! and an optional migration, saving atomically without clobbering a newer file.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::atomic::{self, WriteError};

/// A JSON document kept on disk inside the `{"version":N,"data":…}` envelope.
///
/// `VERSION` is the format version this build writes and reads. Raise it whenever a change would
/// make older builds misread the data or lose part of it when they save it again (a new field, a
/// renamed field, a changed meaning). Older builds then refuse the file ([`LoadError::TooNew`])
/// rather than misread it, and refuse to overwrite it ([`SaveError::TooNew`]) rather than lose
/// what it holds. (Readers ignore fields they do not know, so an optional field that older builds
/// may safely drop needs no new version.)
///
/// A document written by an older build is refused too ([`LoadError::TooOld`]) unless
/// [`migrate`](Document::migrate) brings its data up to `VERSION`.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use epic_state_store::{Document, MigrateError, load, save};
///
/// #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
/// struct Notes {
///     lines: Vec<String>,
/// }
///
/// impl Document for Notes {
///     const NAME: &'static str = "notes";
///     const VERSION: u32 = 2;
///
///     // Version 1 kept a single `text`.
///     fn migrate(version: u32, data: serde_json::Value) -> Result<serde_json::Value, MigrateError> {
///         match (version, data.get("text").and_then(|text| text.as_str())) {
///             (1, Some(text)) => Ok(serde_json::json!({ "lines": text.lines().collect::<Vec<_>>() })),
///             (1, None) => Err(MigrateError::Invalid { reason: "no `text` string".into() }),
///             _ => Err(MigrateError::Unsupported),
///         }
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("notes.json");
/// std::fs::write(&path, r#"{"version":1,"data":{"text":"a\nb"}}"#)?;
/// let notes: Notes = load(&path)?.expect("the file exists");
/// assert_eq!(notes.lines, ["a", "b"]);
///
/// save(&path, &notes)?;
/// let text = std::fs::read_to_string(&path)?;
/// assert!(text.starts_with("{\n  \"version\": 2,\n  \"data\": {"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Document: Serialize + DeserializeOwned + JsonSchema {
    /// What the document is, as errors name it: `story state` gives "story state file `…`".
    const NAME: &'static str;
    /// The format version this build reads and writes.
    const VERSION: u32;
    /// What to do about a file that cannot be read as this document, as the end of an error
    /// message: "remove it to start that story over".
    const REMEDY: &'static str = "remove it to have it rebuilt";

    /// Brings `data`, found in a file of format `version` (older than [`VERSION`](Self::VERSION)),
    /// up to the current format.
    ///
    /// The default refuses every old version. A migration returns the data as `VERSION` shapes it;
    /// it is decoded afterwards, so a migration need not be complete to be checked.
    fn migrate(version: u32, data: Value) -> Result<Value, MigrateError> {
        let _ = version;
        drop(data);
        Err(MigrateError::Unsupported)
    }
}

/// Why [`Document::migrate`] could not bring old data up to date.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MigrateError {
    /// This build has no migration from that version.
    #[error("this build has no migration from that version")]
    Unsupported,
    /// The old data is not what that version should hold.
    #[error("the old data cannot be migrated: {reason}")]
    Invalid {
        /// What is wrong with it.
        reason: String,
    },
}

/// Which document an error is about: its [`Document::NAME`] and [`Document::REMEDY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocumentKind {
    /// What the document is, such as `story state`.
    pub name: &'static str,
    /// What to do about a file that cannot be read as it.
    pub remedy: &'static str,
}

/// The kind of `T`, one static per document type (errors stay small by pointing at it).
fn kind<T: Document>() -> &'static DocumentKind {
    const {
        &DocumentKind {
            name: T::NAME,
            remedy: T::REMEDY,
        }
    }
}

/// An error returned by [`load`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file exists but could not be read.
    #[error("failed to read {name} file `{}`", path.display(), name = document.name)]
    Read {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The file is empty or holds only whitespace (a crash of a writer that did not write
    /// atomically, or a file truncated by hand).
    #[error(
        "{name} file `{}` is empty; {remedy}",
        path.display(),
        name = document.name,
        remedy = document.remedy,
    )]
    Empty {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
    },
    /// The file is not JSON, or it ends before its document does.
    #[error(
        "{name} file `{}` is not valid JSON at {location}: {reason}; {remedy}",
        path.display(),
        name = document.name,
        remedy = document.remedy,
    )]
    Syntax {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// Where the first problem is.
        location: Location,
        /// What the JSON parser found.
        reason: String,
    },
    /// The file is JSON but not a `{"version":N,"data":…}` envelope.
    #[error(
        "{name} file `{}` is not a versioned document ({problem}); expected {{\"version\":N,\"data\":…}}; {remedy}",
        path.display(),
        name = document.name,
        remedy = document.remedy,
    )]
    Envelope {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// What is wrong with the envelope.
        problem: EnvelopeProblem,
    },
    /// The file was written by a newer build, in a format this one does not know.
    #[error(
        "{name} file `{}` has format version {found}, newer than version {supported} that this build of epic reads; use a newer epic",
        path.display(),
        name = document.name,
    )]
    TooNew {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The version in the file.
        found: u64,
        /// The version this build reads ([`Document::VERSION`]).
        supported: u32,
    },
    /// The file was written by an older build and [`Document::migrate`] cannot bring it up to
    /// date.
    #[error(
        "{name} file `{}` has format version {found}, older than version {supported} that this build of epic reads, and cannot be migrated; {remedy}",
        path.display(),
        name = document.name,
        remedy = document.remedy,
    )]
    TooOld {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        supported: u32,
        /// Why the migration failed.
        #[source]
        source: MigrateError,
    },
    /// The envelope is fine but its data does not match the document's schema.
    #[error(
        "{name} file `{}` does not match its schema at `{at}`{}: {reason}; {remedy}",
        path.display(),
        match location { Some(location) => format!(" ({location})"), None => String::new() },
        name = document.name,
        remedy = document.remedy,
    )]
    Data {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The element that failed to decode, such as `data.status`.
        at: String,
        /// Where in the file, when known (not for migrated data).
        location: Option<Location>,
        /// What the decoder found.
        reason: String,
    },
}

/// A position in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1 (0 when the file ends right after a newline).
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

impl LoadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Read { path, .. }
            | Self::Empty { path, .. }
            | Self::Syntax { path, .. }
            | Self::Envelope { path, .. }
            | Self::TooNew { path, .. }
            | Self::TooOld { path, .. }
            | Self::Data { path, .. } => path,
        }
    }
}

/// What is wrong with a document's envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeProblem {
    /// The top level is not a JSON object.
    NotAnObject,
    /// There is no `version`.
    MissingVersion,
    /// `version` is not a non-negative integer.
    BadVersion,
    /// There is no `data`.
    MissingData,
    /// There is a field besides `version` and `data`.
    ExtraField,
}

impl fmt::Display for EnvelopeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotAnObject => "the top level is not an object",
            Self::MissingVersion => "it has no `version`",
            Self::BadVersion => "its `version` is not a non-negative integer",
            Self::MissingData => "it has no `data`",
            Self::ExtraField => "it has fields besides `version` and `data`",
        })
    }
}

/// An error returned by [`save`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The document could not be encoded as JSON (a map with non-string keys, a path that is not
    /// UTF-8, a failing `Serialize` impl).
    #[error("failed to encode {name} for `{}`", path.display(), name = document.name)]
    Encode {
        /// The file it was meant for (untouched).
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The encoder's error.
        #[source]
        source: serde_json::Error,
    },
    /// The existing file could not be read to check its version, so it was left alone.
    #[error(
        "failed to read the existing {name} file `{}` to check its version",
        path.display(),
        name = document.name,
    )]
    ReadExisting {
        /// The file (untouched).
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The existing file has a newer format version; overwriting it would lose what it holds.
    #[error(
        "refusing to overwrite {name} file `{}`: it has format version {found}, newer than version {supported} that this build of epic writes; use a newer epic",
        path.display(),
        name = document.name,
    )]
    TooNew {
        /// The file (untouched).
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// The version in the file.
        found: u64,
        /// The version this build writes.
        supported: u32,
    },
    /// The atomic write failed; the old file, if any, is intact.
    #[error("failed to save {name} file `{}`", path.display(), name = document.name)]
    Write {
        /// The file.
        path: PathBuf,
        /// Which document it is.
        document: &'static DocumentKind,
        /// What went wrong.
        #[source]
        source: WriteError,
    },
}

/// The on-disk envelope. `deny_unknown_fields`: the envelope is exactly `version` and `data`.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Envelope<T> {
    /// The format version of `data`.
    version: u32,
    /// The document.
    data: T,
}

/// Loads the document at `path`: `Ok(None)` when there is no such file.
///
/// Every other failure is an error naming the file: unreadable, empty, not JSON (with line and
/// column), not an envelope, a newer version ([`LoadError::TooNew`]), an older version without a
/// migration, or data that does not match `T` (with the element, line and column).
///
/// ```
/// # use epic_state_store::{StoryState, StoryStage};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("cart-api.json");
/// assert_eq!(epic_state_store::load::<StoryState>(&path)?, None);
///
/// std::fs::write(&path, r#"{"version":1,"data":{"id":"cart-api"}}"#)?;
/// let err = epic_state_store::load::<StoryState>(&path).unwrap_err();
/// assert!(err.to_string().contains("does not match its schema at `data`"));
/// assert!(err.to_string().ends_with("remove it to start that story over"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load<T: Document>(path: impl AsRef<Path>) -> Result<Option<T>, LoadError> {
    let path = path.as_ref();
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LoadError::Read {
                path: path.to_path_buf(),
                document: kind::<T>(),
                source,
            });
        }
    };
    decode::<T>(path, &bytes).map(Some)
}

/// Decodes a document's bytes; `path` only names the file in errors.
fn decode<T: Document>(path: &Path, bytes: &[u8]) -> Result<T, LoadError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::Empty {
            path: path.to_path_buf(),
            document: kind::<T>(),
        });
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|error| LoadError::Syntax {
        path: path.to_path_buf(),
        document: kind::<T>(),
        location: Location {
            line: error.line(),
            column: error.column(),
        },
        reason: reason(&error),
    })?;
    let (found, data) = split_envelope(value).map_err(|problem| LoadError::Envelope {
        path: path.to_path_buf(),
        document: kind::<T>(),
        problem,
    })?;
    let data_error =
        |error: serde_path_to_error::Error<serde_json::Error>, prefix: &str| LoadError::Data {
            path: path.to_path_buf(),
            document: kind::<T>(),
            at: element(prefix, &error.path().to_string()),
            location: (error.inner().line() > 0).then(|| Location {
                line: error.inner().line(),
                column: error.inner().column(),
            }),
            reason: reason(error.inner()),
        };
    match u32::try_from(found) {
        Ok(found) if found == T::VERSION => {
            // Decode from the text rather than the parsed value, so errors carry line and column.
            let mut deserializer = serde_json::Deserializer::from_slice(bytes);
            let envelope: Envelope<T> = serde_path_to_error::deserialize(&mut deserializer)
                .map_err(|error| data_error(error, ""))?;
            Ok(envelope.data)
        }
        Ok(found) if found < T::VERSION => {
            let migrated = T::migrate(found, data).map_err(|source| LoadError::TooOld {
                path: path.to_path_buf(),
                document: kind::<T>(),
                found,
                supported: T::VERSION,
                source,
            })?;
            serde_path_to_error::deserialize(migrated).map_err(|error| data_error(error, "data"))
        }
        _ => Err(LoadError::TooNew {
            path: path.to_path_buf(),
            document: kind::<T>(),
            found,
            supported: T::VERSION,
        }),
    }
}

/// The version and data of an envelope.
fn split_envelope(value: Value) -> Result<(u64, Value), EnvelopeProblem> {
    let Value::Object(mut map) = value else {
        return Err(EnvelopeProblem::NotAnObject);
    };
    let version = map
        .remove("version")
        .ok_or(EnvelopeProblem::MissingVersion)?;
    let version = version.as_u64().ok_or(EnvelopeProblem::BadVersion)?;
    let data = map.remove("data").ok_or(EnvelopeProblem::MissingData)?;
    if !map.is_empty() {
        return Err(EnvelopeProblem::ExtraField);
    }
    Ok((version, data))
}

/// The version of whatever envelope `reader` reads, if it reads one: streamed, so only the
/// version is kept.
fn existing_version(reader: impl io::Read) -> Option<u64> {
    #[derive(Deserialize)]
    struct VersionOnly {
        version: u64,
    }
    serde_json::from_reader::<_, VersionOnly>(reader)
        .ok()
        .map(|envelope| envelope.version)
}

/// The element path `at` (from `serde_path_to_error`), under `prefix`; `.` means the root.
fn element(prefix: &str, at: &str) -> String {
    match (prefix.is_empty(), at == ".") {
        (true, true) => ".".to_owned(),
        (true, false) => at.to_owned(),
        (false, true) => prefix.to_owned(),
        (false, false) => format!("{prefix}.{at}"),
    }
}

/// The decoder's message without the ` at line L column C` that the error fields carry anyway.
pub(crate) fn reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&position) {
        Some(stripped) => stripped.to_owned(),
        None => text,
    }
}

/// Saves `document` to `path` atomically (see [`write_atomic`](crate::write_atomic)) as pretty
/// JSON (two-space indent, trailing newline) inside the `{"version":N,"data":…}` envelope.
///
/// Refuses ([`SaveError::TooNew`]) to overwrite a file whose envelope has a newer version than
/// `T::VERSION`, leaving it byte for byte as it was; a file that is not a readable envelope
/// (corrupt, torn, empty) is overwritten. A file this process wrote, and no other writer
/// replaced since, is not read again. The document is encoded straight into the temp file,
/// never whole in memory.
///
/// ```
/// use epic_state_store::{StoryState, StoryStage, load, save};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("stories/cart-api.json");
/// let state = StoryState {
///     id: "cart-api".into(),
///     hash: "9f86d081".into(),
///     branch: "story/checkout/cart-api".into(),
///     worktree: "/src/shop.worktrees/checkout/cart-api".into(),
///     status: StoryStage::Started,
///     merge: None,
///     hold: None,
/// };
/// save(&path, &state)?;
/// assert_eq!(load::<StoryState>(&path)?, Some(state));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save<T: Document>(path: impl AsRef<Path>, document: &T) -> Result<(), SaveError> {
    let path = path.as_ref();
    // A file this process wrote and no one replaced since has this build's version: it is not
    // read again (a report of ten thousand stories is megabytes, rewritten as stories finish).
    if !atomic::still_ours(path) {
        refuse_newer::<T>(path)?;
    }
    let mut encoding = None;
    atomic::write_atomic_with(path, |out| {
        encode_into(out, document).map_err(|error| {
            if error.is_io() {
                io::Error::from(error)
            } else {
                let message = error.to_string();
                encoding = Some(error);
                io::Error::other(message)
            }
        })
    })
    .map_err(|source| match encoding.take() {
        Some(source) => SaveError::Encode {
            path: path.to_path_buf(),
            document: kind::<T>(),
            source,
        },
        None => SaveError::Write {
            path: path.to_path_buf(),
            document: kind::<T>(),
            source,
        },
    })
}

/// Refuses to replace a file at `path` that a newer build wrote (its version is above `T`'s).
/// The file is read as a stream: only its version is kept.
fn refuse_newer<T: Document>(path: &Path) -> Result<(), SaveError> {
    match fs::File::open(path) {
        Ok(file) => match existing_version(io::BufReader::new(file)) {
            Some(found) if found > u64::from(T::VERSION) => Err(SaveError::TooNew {
                path: path.to_path_buf(),
                document: kind::<T>(),
                found,
                supported: T::VERSION,
            }),
            _ => Ok(()),
        },
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(SaveError::ReadExisting {
            path: path.to_path_buf(),
            document: kind::<T>(),
            source,
        }),
    }
}

/// Writes what [`save`] writes for `document` to `out`: its envelope as pretty JSON with a
/// trailing newline.
fn encode_into<T: Document>(
    out: &mut dyn io::Write,
    document: &T,
) -> Result<(), serde_json::Error> {
    let envelope = Envelope {
        version: T::VERSION,
        data: document,
    };
    serde_json::to_writer_pretty(&mut *out, &envelope)?;
    out.write_all(b"\n").map_err(serde_json::Error::io)
}

/// The JSON Schema of `T`'s file: the envelope, with `version` fixed to `T::VERSION` and `data`
/// described by `T`'s schema.
pub fn envelope_schema<T: Document>() -> Value {
    let mut schema = schemars::schema_for!(Envelope<T>);
    schema.insert(
        "title".to_owned(),
        Value::String(format!("{} document", T::NAME)),
    );
    schema.insert(
        "description".to_owned(),
        Value::String(format!(
            "A {} file: format version {} of its data, inside the versioned envelope.",
            T::NAME,
            T::VERSION
        )),
    );
    if let Some(version) = schema.pointer_mut("/properties/version")
        && let Some(version) = version.as_object_mut()
    {
        version.insert("const".to_owned(), Value::from(T::VERSION));
    }
    schema.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_lose_their_position_only() {
        let error = serde_json::from_str::<Value>("{\"a\": }").unwrap_err();
        assert_eq!(reason(&error), "expected value");
        assert_eq!((error.line(), error.column()), (1, 7));
    }

    #[test]
    fn element_paths() {
        assert_eq!(element("", "."), ".");
        assert_eq!(element("", "data.status"), "data.status");
        assert_eq!(element("data", "."), "data");
        assert_eq!(element("data", "status"), "data.status");
    }

    #[test]
    fn envelope_problems() {
        let check = |text: &str| split_envelope(serde_json::from_str(text).unwrap()).map(|_| ());
        assert_eq!(check("[]"), Err(EnvelopeProblem::NotAnObject));
        assert_eq!(
            check(r#"{"data":{}}"#),
            Err(EnvelopeProblem::MissingVersion)
        );
        assert_eq!(
            check(r#"{"version":"1","data":{}}"#),
            Err(EnvelopeProblem::BadVersion)
        );
        assert_eq!(
            check(r#"{"version":-1,"data":{}}"#),
            Err(EnvelopeProblem::BadVersion)
        );
        assert_eq!(check(r#"{"version":1}"#), Err(EnvelopeProblem::MissingData));
        assert_eq!(
            check(r#"{"version":1,"data":{},"x":0}"#),
            Err(EnvelopeProblem::ExtraField)
        );
        assert_eq!(check(r#"{"version":1,"data":null}"#), Ok(()));
    }
}
