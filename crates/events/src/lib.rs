//! What a run and a landing report as they work, and what they leave for people to read.
//!
//! - **Events** ([`Event`], `event.rs`): one typed value per step of a story's work, sent to an
//!   [`EventSink`] ([`discard_events`] for none). The live view draws them, and `events.jsonl`
//!   records each as a [`LoggedEvent`] with its instant; [`events_schema`] is their JSON Schema
//!   (`epic schema events`).
//! - **Attention** (`attention.rs`, [`notifying`]): `--notify`'s command, run whenever a story
//!   needs a person.
//! - **The records** (`record.rs`): the sink that appends each event to the log before passing
//!   it on ([`logging_sink`]), the report written as `report.json` ([`ReportDocument`]) and
//!   `report.md` ([`write_report`]), and the [`Board`] (`board.md`, and a hook command fed every
//!   card's move).
//!
//! The run (`epic-executor`) and `epic land` (`epic-land`) both speak in these events, and the
//! chats and the gates they use (`epic-chat`, `epic-gates`) emit them too: a crate of its own so
//! that none of them names another for it.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//!
//! use epic_events::{Event, EventSink};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink: EventSink = {
//!     let seen = Arc::clone(&seen);
//!     Arc::new(move |event| seen.lock().unwrap().push(event))
//! };
//! sink(Event::TaskCommitted {
//!     story: "cart".into(),
//!     task: "Add the model".into(),
//!     commit: None,
//! });
//! assert_eq!(seen.lock().unwrap().len(), 1);
//! ```

#![warn(missing_docs)]

mod attention;
mod event;
mod record;

pub use attention::{Attention, Notify, Pauses, attention, notifying};
pub use event::{Event, EventSink, LoggedEvent, RejectedBy, discard_events, events_schema};
pub use record::{
    Board, Card, Column, Move, RENDER_EVERY, ReportDocument, logging_sink, pace, write_report,
};
