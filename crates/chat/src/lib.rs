//! Agent turns as epic takes them, whoever asks: a story's coder, reviewers, verifier and judge
//! (the run), the lander (`epic land`), the architect (`epic plan`).
//!
//! - **Chats** ([`Chat`], `chat.rs`): a seat, standing instructions and the history of earlier
//!   exchanges, rendered into each next turn; every turn recorded as a transcript file and its
//!   usage (reported by the agent, else estimated) counted per seat by the [`Recorder`] all the
//!   chats of a run share; epic's own files checked around each turn.
//! - **Pauses** ([`SeatPauses`], `pause.rs`): a usage limit or an outage pauses the seat it hit
//!   for the whole run, until the reset or a probe that passes, instead of failing the story
//!   whose turn met it; a wait longer than allowed stops the run ([`SeatStop`]).
//! - **The budget** ([`Budget`], `budget.rs`): the epic's spend across runs against
//!   `--budget-usd`, checked before every turn.
//! - **Read-only turns** (`read_only.rs`): the warning for what a judge or reviewer turn changed
//!   and epic put back ([`discarded`]).
//!
//! A crate of its own so that the run, `epic land` and `epic plan` take turns the same way, and
//! none of them names another for it.

#![warn(missing_docs)]

mod budget;
mod chat;
mod pause;
mod read_only;

pub use budget::{Budget, BudgetReached};
pub use chat::{Chat, ChatContext, Recorder};
pub use pause::{After, OUTAGE_CAP, OUTAGE_FIRST, OutageWatch, SeatPauses, SeatStop};
pub use read_only::discarded;
