//! `epic watch`'s live view of an epic: what it shows, read from the epic's state directory
//! without its lock ([`read_board`], [`read_detail`]; the event log read as it grows, [`LogTail`]), the view's state and its keys ([`App`],
//! [`KEYS`]), changes to the state followed by kernel notification ([`Follow`]), the full screen drawn with ratatui from that state alone ([`draw()`]), and the same
//! table as plain text for a pipe ([`plain`]). The CLI owns the terminal, the loop and the
//! commands a key queues; nothing here writes.
//!
//! ```
//! use epic_view::{App, Effect, Key, Status};
//!
//! assert!(Status::Waiting.needs_person());
//! assert!(!Status::Running.needs_person());
//! # let board = epic_view::Board {
//! #     epic_id: "shop".into(), running: false, done: 0, total: 0, merging: None,
//! #     seats: vec![], spent_usd: 0.0, budget_usd: None, budget_reached: None, stories: vec![],
//! # };
//! let mut app = App::new(board, false);
//! assert_eq!(app.key(Key::Char('q')), Effect::Quit);
//! ```

mod app;
mod draw;
mod events;
mod figures;
#[cfg(test)]
mod fixtures;
mod follow;
mod gather;
mod model;
mod text;

pub use app::{Action, App, Effect, KEYS, Key, Mode, Verb};
pub use draw::draw;
pub use events::LogTail;
pub use follow::Follow;
pub use gather::{Known, ReadError, read_board, read_detail};
pub use model::{Batch, Board, Detail, Row, Seat, SeatState, Status};
pub use text::{NEEDS_PERSON, header, plain};
