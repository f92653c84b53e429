//! `epic status [EPIC]`: each story's state, whether a run is going on, and the last report's
//! outcomes.
//!
//! It only reads `<git-common-dir>/epic/<epic>/`: state files are replaced atomically and the lock
//! is probed without being taken, so it is safe (and live) while a run is going.
//!
//! `--format json` prints [`StatusJson`](model::StatusJson); without EPIC, when several epics
//! have run, it prints [`EpicsJson`](model::EpicsJson) instead (and exits 0).
//!
//! A file per concern: the model `--format json` prints (`model.rs`), the gathering of it from
//! the epic's state directory (`gather.rs`), its rendering as text (`text.rs`), and the command
//! that wires them (`command.rs`); the unit tests' hand-built models are `fixtures.rs`, and `shape.rs` holds the JSON to the
//! contract's shape.

mod command;
#[cfg(test)]
mod fixtures;
mod gather;
mod model;
#[cfg(test)]
mod shape;
mod text;

pub(crate) use command::run;
