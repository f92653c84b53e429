//! The durable state of an epic run, and the only code that writes it.
//!
//! # Using it alone
//!
//! `epic-state-store` depends on no other crate of epic and knows nothing of git: point it at a
//! directory and it gives any program crash-safe, versioned JSON documents, a lock that dies with
//! its holder, and an append-only log. Derive serde and schemars on your type, implement
//! [`Document`] (a name and a version), and [`save`] and [`load`] it.
//!
//! ```
//! use epic_state_store::{Document, EpicDir, EpicLock, EventLog, LockError, load, read_all, save};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! struct Checklist {
//!     done: Vec<String>,
//! }
//!
//! impl Document for Checklist {
//!     const NAME: &'static str = "checklist";
//!     const VERSION: u32 = 1;
//! }
//!
//! let git = tempfile::tempdir()?; // stands for `git rev-parse --git-common-dir`
//! let dir = EpicDir::new(git.path(), "checkout")?; // <git>/epic/checkout
//!
//! // One process per epic at a time: a second lock is refused, naming the holder.
//! let lock = EpicLock::acquire(&dir)?;
//! assert!(matches!(EpicLock::acquire(&dir), Err(LockError::Held { .. })));
//!
//! let path = dir.root().join("checklist.json");
//! assert_eq!(load::<Checklist>(&path)?, None); // nothing saved yet
//! let checklist = Checklist { done: vec!["cart-api".into()] };
//! save(&path, &checklist)?; // {"version":1,"data":{"done":["cart-api"]}}, replaced atomically
//! assert_eq!(load::<Checklist>(&path)?, Some(checklist));
//!
//! let log = EventLog::open(dir.events())?;
//! log.append(&serde_json::json!({"story": "cart-api", "event": "merged"}))?;
//! let events = read_all::<serde_json::Value>(dir.events())?;
//! assert_eq!(events.events[0]["event"], "merged");
//!
//! drop(lock); // the next run may start
//! assert!(EpicLock::holder(&dir)?.is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What it holds
//!
//! Everything `epic` must remember between runs, or must not lose in a crash, lives under
//! `<git-common-dir>/epic/<epic_id>/` ([`EpicDir`]). This crate writes it so that a crash at any
//! instant leaves it readable:
//!
//! - **Versioned JSON documents** ([`Document`], [`save`], [`load`]) inside the envelope
//!   `{"version":N,"data":…}`, such as each story's [`StoryState`]. A save replaces the file
//!   atomically ([`write_atomic`]: temp file, `sync_all`, rename, directory fsync), so a reader
//!   sees the old document or the new, never a torn one. A load checks the version: a newer one
//!   is refused rather than misread ([`LoadError::TooNew`]), an older one needs a migration, and
//!   a save refuses to overwrite a newer file ([`SaveError::TooNew`]) rather than lose it.
//! - **The epic lock** ([`EpicLock`]): one run per epic at a time, held through an OS advisory
//!   lock that dies with its holder, so a killed run never blocks the next.
//! - **The event log** ([`EventLog`], [`read_all`]): JSON lines appended whole; a line torn by
//!   a crash is skipped on reading and never glued to the next one.
//! - **Guarded files** ([`Snapshot`], [`Watch`]): what a set of files and directory trees held
//!   (type, mode, contents, link target), what changed since, and each change undone. epic
//!   snapshots its state directory, the repository's configuration, hooks and worktree
//!   registrations and the plan files around every agent turn, and puts back what a turn
//!   changed; restoring is this crate's atomic write, wherever the watched file is.
//!
//! It is synchronous and knows nothing of git: callers pass the git common dir as a path.
//!
//! # The story state
//!
//! epic's own document per story is [`StoryState`], kept at [`EpicDir::story_state`]:
//!
//! ```
//! use epic_state_store::{EpicDir, StoryState, StoryStage, load, save};
//!
//! let git = tempfile::tempdir()?;
//! let dir = EpicDir::new(git.path(), "checkout")?;
//! let path = dir.story_state("cart-api")?;
//! assert_eq!(load::<StoryState>(&path)?, None); // never started
//! let mut state = StoryState {
//!     id: "cart-api".into(),
//!     hash: "9f86d081".into(),
//!     branch: "story/checkout/cart-api".into(),
//!     worktree: "/src/shop.worktrees/checkout/cart-api".into(),
//!     status: StoryStage::Started,
//!     merge: None,
//!     hold: None,
//! };
//! save(&path, &state)?;
//! state.status = StoryStage::Merged;
//! state.merge = Some("4b825dc642cb6eb9a060e54bf8d69288fbee4904".into());
//! save(&path, &state)?;
//! assert_eq!(load::<StoryState>(&path)?, Some(state));
//! assert_eq!(dir.story_ids()?, ["cart-api"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Documents defined elsewhere
//!
//! A crate that cannot implement [`Document`] for its own type (the report model lives in a crate
//! that does not depend on this one) wraps it in a transparent newtype:
//!
//! ```
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Serialize, Deserialize, JsonSchema)]
//! # struct EpicReport { epic_id: String }
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! #[serde(transparent)]
//! struct ReportDocument(EpicReport);
//!
//! impl epic_state_store::Document for ReportDocument {
//!     const NAME: &'static str = "report";
//!     const VERSION: u32 = 1;
//!     const REMEDY: &'static str = "remove it; the next run writes a new one";
//! }
//! ```

#![warn(missing_docs)]

mod atomic;
mod document;
mod events;
mod files;
mod guard;
pub mod inbox;
mod layout;
mod lock;
mod story;

pub use atomic::{WriteError, write_atomic};
pub use document::{
    Document, DocumentKind, EnvelopeProblem, LoadError, Location, MigrateError, SaveError,
    envelope_schema, load, save,
};
pub use events::{
    AppendError, EventLog, Events, OpenLogError, ReadLogError, SkippedLine, TornTail, read_all,
};
pub use files::{RemoveError, create_transcript, last_transcript_number, read_if_exists, remove};
pub use guard::{
    Change, ChangeKind, Entry, GuardError, LARGEST, Notifier, SWEEP, Snapshot, Watch, resolved,
};
pub use layout::{EpicDir, IdKind, ListError, UnsafeId};
pub use lock::{EpicLock, Holder, LockError, rfc3339};
pub use story::{Hold, StoryStage, StoryState, state_schema};
