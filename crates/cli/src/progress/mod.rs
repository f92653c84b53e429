//! The view of a run as it goes, drawn from the executor's [`Event`](epic_events::Event)s.
//!
//! Progress goes to **stderr**, as cargo's does: stdout carries only the command's result (the
//! summary, or the report's JSON), so `epic run … > summary.txt` keeps it clean.
//!
//! - **Live** ([`Mode::Live`], stderr is a terminal): a header with the counts by state, the
//!   wave picture, and one line per running story (id, task i/n, current step, elapsed,
//!   estimated tokens), refreshed in place (indicatif); each transition is printed above it as
//!   a line that stays.
//! - **Plain** ([`Mode::Plain`], stderr is not a terminal, or `--no-progress`): the same
//!   transitions as timestamped lines, `HH:MM:SS story a: merged`, local time.
//! - **Silent** (`-q`): nothing.
//!
//! `-v` adds the minor steps (turns, gates, setup) and streams each agent's output as lines
//! prefixed by the story id (`a | …`).
//!
//! The executor's sink must not block, so events go through a channel to a thread of their own
//! that owns the terminal ([`ProgressDisplay`]).
//!
//! A file per concern: the renderer thread (`renderer.rs`), the views (`view.rs` the trait,
//! `live.rs`, `plain.rs`, `silent.rs`), the picture of the run the events paint
//! (`tracker.rs`), agents' output cut into lines (`output_lines.rs`), the line each event is
//! shown as (`describe/`, a file per family of events), and the figures and states in words
//! (`words.rs`).

mod describe;
mod live;
mod output_lines;
mod plain;
mod renderer;
mod silent;
mod tracker;
mod view;
mod words;

pub(crate) use renderer::{Mode, ProgressDisplay};
pub(crate) use words::{flaky, local, paused_until, thousands};
