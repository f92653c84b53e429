//! The project's gates: the shell commands (its tests, linters, builds) that must all pass for
//! a story's work to go on and for a merge to stand.
//!
//! - **Running them** ([`Gates`], `gates.rs`): each command as `sh -c` in a directory, in its
//!   own process group, in the sandbox, under a deadline and a cancellation token, its output
//!   kept bounded; the first red one is the round's critical issue ([`Gates::run`]), a red
//!   one that passes on a rerun is a [`Flake`], what a gate left in the worktree is put back.
//! - **Charging tests** (`charged.rs`, [`GateTests`]): the failing tests a red command named
//!   (its output, or its JUnit file, read by `epic-test-failures`), split into those the story
//!   turned red and those already red on the epic head; a command whose every failure was
//!   inherited counts as passed.
//! - **The baseline** (`baseline.rs`, [`GateBaseline`]): the gates' verdict on each epic head,
//!   command by command, cached in `gates/baseline.json`.
//!
//! The run proves each story and each merge with them, and `epic land` the landing: a crate of
//! its own so that both name it, and neither the other.
//!
//! ```
//! use std::time::Duration;
//!
//! use epic_gates::Gates;
//! use tokio_util::sync::CancellationToken;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let gates = Gates::new(["test -d ."], Duration::from_secs(60));
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let review = runtime.block_on(gates.run(dir.path(), &[], &CancellationToken::new(), &|_| {}))?;
//! assert!(review.clean, "{}", review.summary);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod baseline;
mod charged;
mod gates;

pub use baseline::{GateBaseline, GateVerdict};
pub use charged::{GateTests, Inherited, JunitFile, TestsUnread, failing_tests};
pub use gates::{Flake, GateResult, Gates, GatesCancelled, millis};
