//! The person's channel into an epic (`inbox/`): the commands `epic answer`, `epic tell`,
//! `epic stop` and `epic retry` give, each a file, kept until a run takes it.
//!
//! A command is written atomically as `inbox/<id>.json` ([`send`]): its id orders the commands
//! by the time they were given, and names it in the events and the report. A run takes the
//! waiting ones ([`waiting`]), in order: a command whose effect is durable elsewhere (a story's
//! state, stopped or to run again) is then removed ([`discard`]); a note or an answer for a
//! coder is moved aside, `inbox/held/<story>/<id>.json` ([`hold`]), until a coder turn of that
//! story has read it ([`held`], then [`discard`]). Each step is a rename or a removal of one
//! file, synced: a crash at any instant leaves every command either waiting, held, or done,
//! never lost and never in two places.
//!
//! The directory lies in the epic's state, which the sandbox keeps read-only to every agent:
//! a turn cannot give a command. The run's guard on epic's files leaves the inbox out, since
//! a person writes it while turns run.
//!
//! ```
//! use epic_state_store::EpicDir;
//! use epic_state_store::inbox::{self, Action, Command};
//!
//! let repo = tempfile::tempdir()?;
//! let dir = EpicDir::new(repo.path(), "shop")?;
//! let note = Command::new(Some("cart"), Action::Tell { text: "extend cart.rs".into() }, 1000);
//! let sent = inbox::send(&dir, &note)?;
//! let waiting = inbox::waiting(&dir)?;
//! assert_eq!(waiting.len(), 1);
//! assert!(waiting[0].as_ref().is_ok_and(|sent| sent.command == note));
//!
//! // A run holds the note for the story's next coder turn, which reads it once.
//! let held = inbox::hold(&dir, &sent)?;
//! assert!(inbox::waiting(&dir)?.is_empty());
//! assert_eq!(inbox::held(&dir, "cart")?.len(), 1);
//! inbox::discard(&held.path)?;
//! assert!(inbox::held(&dir, "cart")?.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::atomic::sync_dir;
use crate::document::{Document, LoadError, SaveError, load, save};
use crate::files::RemoveError;
use crate::layout::{EpicDir, IdKind, ListError, UnsafeId, check_id};
use crate::lock::rfc3339;

/// What a person asks of a story (or of the run, for [`Action::StopAll`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// `epic answer`: the answer to the question a story waits on.
    Answer {
        /// The answer, as the person wrote it.
        text: String,
    },
    /// `epic tell`: a note for the story's next coder turn.
    Tell {
        /// The note, as the person wrote it.
        text: String,
    },
    /// `epic stop STORY`: end the story's turn now and stop it.
    Stop,
    /// `epic stop --all`: stop the run, as Ctrl-C does.
    StopAll,
    /// `epic retry`: run a failed or stopped story again.
    Retry {
        /// From the epic head instead of its checkpoint (`--fresh`).
        #[serde(default)]
        fresh: bool,
    },
}

impl Action {
    /// The action as the events and the contract name it: `answer`, `tell`, `stop`,
    /// `stop_all`, `retry`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Answer { .. } => "answer",
            Self::Tell { .. } => "tell",
            Self::Stop => "stop",
            Self::StopAll => "stop_all",
            Self::Retry { .. } => "retry",
        }
    }
}

/// One command given to the epic: who gave it, when, for which story.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Command {
    /// The story it is for; none for [`Action::StopAll`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<String>,
    /// What is asked.
    #[serde(flatten)]
    pub action: Action,
    /// The user id of the process that gave it.
    pub uid: u32,
    /// When it was given (RFC 3339, UTC).
    pub at: String,
}

impl Command {
    /// `action` for `story`, given now by user `uid`.
    pub fn new(story: Option<&str>, action: Action, uid: u32) -> Self {
        Self {
            story: story.map(str::to_owned),
            action,
            uid,
            at: rfc3339(SystemTime::now()),
        }
    }
}

impl Document for Command {
    const NAME: &'static str = "command";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; the command is then not given";
}

/// A command on disk: its id (the file's stem), its file, what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The command's id: `<nanoseconds since 1970, 20 digits>-<pid>-<n>`, so that ids sort as
    /// the commands were given.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// The command.
    pub command: Command,
}

/// A file of the inbox that could not be read as a command: its path and why.
#[derive(Debug, thiserror::Error)]
#[error("`{}` is not a command epic can read", path.display())]
pub struct Unreadable {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: LoadError,
}

impl EpicDir {
    /// `inbox/`, the commands people gave that no run has taken yet.
    pub fn inbox(&self) -> PathBuf {
        self.root().join(INBOX)
    }

    /// `inbox/held/<story>/`, the notes and answers taken for a story's next coder turn.
    pub fn held(&self, story_id: &str) -> Result<PathBuf, UnsafeId> {
        check_id(IdKind::Story, story_id)?;
        Ok(self.inbox().join(HELD).join(story_id))
    }
}

/// The inbox's name in the state directory.
pub const INBOX: &str = "inbox";

/// The directory of held commands, in the inbox.
const HELD: &str = "held";

/// Writes `command` into the inbox, atomically and durably; the command as sent.
pub fn send(dir: &EpicDir, command: &Command) -> Result<Sent, SaveError> {
    let id = new_id();
    let path = dir.inbox().join(format!("{id}.json"));
    save(&path, command)?;
    Ok(Sent {
        id,
        path,
        command: command.clone(),
    })
}

/// Makes the inbox directory, so that it can be watched before the first command comes.
pub fn prepare(dir: &EpicDir) -> io::Result<()> {
    fs::create_dir_all(dir.inbox())
}

/// The commands waiting in the inbox, in the order they were given; a file that cannot be
/// read is there as its error, in its place.
pub fn waiting(dir: &EpicDir) -> Result<Vec<Result<Sent, Unreadable>>, ListError> {
    read_all(&dir.inbox())
}

/// The notes and answers held for `story`'s next coder turn, in the order they were given
/// (files that cannot be read are left out: a held file is one epic moved there itself).
pub fn held(dir: &EpicDir, story: &str) -> Result<Vec<Sent>, ListError> {
    let Ok(path) = dir.held(story) else {
        return Ok(Vec::new());
    };
    Ok(read_all(&path)?
        .into_iter()
        .filter_map(Result::ok)
        .collect())
}

/// Moves `sent` from the inbox to the commands held for its story, durably; the command as
/// held.
pub fn hold(dir: &EpicDir, sent: &Sent) -> io::Result<Sent> {
    let story = sent.command.story.as_deref().unwrap_or_default();
    let held = dir
        .held(story)
        .map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?;
    fs::create_dir_all(&held)?;
    let path = held.join(format!("{}.json", sent.id));
    fs::rename(&sent.path, &path)?;
    sync_dir(&held)?;
    if let Some(from) = sent.path.parent() {
        sync_dir(from)?;
    }
    Ok(Sent {
        path,
        ..sent.clone()
    })
}

/// Removes a command's file durably, once its effect is recorded elsewhere or its note read;
/// whether it was there.
pub fn discard(path: &Path) -> Result<bool, RemoveError> {
    crate::files::remove(path)
}

/// The commands of `dir` (its `*.json` files, by id), each read or its error.
fn read_all(dir: &Path) -> Result<Vec<Result<Sent, Unreadable>>, ListError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ListError {
                dir: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut ids = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ListError {
            dir: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|name| name.strip_suffix(".json")) else {
            continue;
        };
        // Atomic writes' temp files start with a dot; they are not commands yet.
        if !id.starts_with('.') && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            ids.push(id.to_owned());
        }
    }
    ids.sort();
    Ok(ids
        .into_iter()
        .filter_map(|id| {
            let path = dir.join(format!("{id}.json"));
            match load::<Command>(&path) {
                Ok(Some(command)) => Some(Ok(Sent { id, path, command })),
                // Taken by a run between the listing and the read.
                Ok(None) => None,
                Err(source) => Some(Err(Unreadable { path, source })),
            }
        })
        .collect())
}

/// A new command id: the time, this process, and a count within it.
fn new_id() -> String {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    format!(
        "{nanos:020}-{}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, EpicDir) {
        let repo = tempfile::tempdir().expect("temp dir");
        let dir = EpicDir::new(repo.path(), "e").expect("epic dir");
        (repo, dir)
    }

    #[test]
    fn commands_wait_in_the_order_they_were_given() {
        let (_repo, dir) = dir();
        let first = send(&dir, &Command::new(Some("a"), Action::Stop, 1)).expect("sent");
        let second = send(
            &dir,
            &Command::new(Some("b"), Action::Retry { fresh: true }, 2),
        )
        .expect("sent");
        let ids: Vec<String> = waiting(&dir)
            .expect("listed")
            .into_iter()
            .map(|sent| sent.expect("readable").id)
            .collect();
        assert_eq!(ids, [first.id, second.id]);
    }

    #[test]
    fn a_command_reads_as_its_action_with_who_and_when() {
        let (_repo, dir) = dir();
        let sent = send(
            &dir,
            &Command::new(
                Some("a"),
                Action::Answer {
                    text: "8080".into(),
                },
                1000,
            ),
        )
        .expect("sent");
        let text = fs::read_to_string(&sent.path).expect("written");
        let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(json["data"]["action"], "answer");
        assert_eq!(json["data"]["story"], "a");
        assert_eq!(json["data"]["text"], "8080");
        assert_eq!(json["data"]["uid"], 1000);
        assert!(
            json["data"]["at"]
                .as_str()
                .is_some_and(|at| at.ends_with('Z'))
        );
    }

    #[test]
    fn an_unreadable_file_is_named_in_its_place() {
        let (_repo, dir) = dir();
        send(&dir, &Command::new(None, Action::StopAll, 1)).expect("sent");
        fs::write(dir.inbox().join("zzz.json"), "not json").expect("planted");
        fs::write(dir.inbox().join(".tmp.json"), "half written").expect("temp");
        let listed = waiting(&dir).expect("listed");
        assert_eq!(listed.len(), 2);
        assert!(listed[0].is_ok());
        assert!(
            listed[1]
                .as_ref()
                .is_err_and(|error| error.path.ends_with("zzz.json"))
        );
    }

    #[test]
    fn a_held_note_leaves_the_inbox_and_is_read_until_discarded() {
        let (_repo, dir) = dir();
        let sent = send(
            &dir,
            &Command::new(Some("a"), Action::Tell { text: "x".into() }, 1),
        )
        .expect("sent");
        let held_note = hold(&dir, &sent).expect("held");
        assert!(!sent.path.exists());
        assert!(waiting(&dir).expect("listed").is_empty());
        assert_eq!(
            held(&dir, "a").expect("listed"),
            std::slice::from_ref(&held_note)
        );
        assert!(held(&dir, "b").expect("listed").is_empty());
        assert!(discard(&held_note.path).expect("removed"));
        assert!(held(&dir, "a").expect("listed").is_empty());
    }

    #[test]
    fn an_unsafe_story_id_holds_nothing() {
        let (_repo, dir) = dir();
        let sent = send(
            &dir,
            &Command::new(Some("../x"), Action::Tell { text: "x".into() }, 1),
        )
        .expect("sent");
        assert!(hold(&dir, &sent).is_err());
        assert!(held(&dir, "../x").expect("nothing").is_empty());
    }
}
