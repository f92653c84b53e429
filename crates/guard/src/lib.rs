//! Proof that a turn left alone what is not the agent's to change.
//!
//! - [`TurnGuard`] (`files`): epic's own files (the repository's configuration, `info/`,
//!   `hooks/`, the worktrees' registrations, the epic's state directory and lock, the plan file
//!   and `epic.toml`) snapshot before and checked after every agent turn, gate and setup command;
//!   a change is put back and named ([`Tampered`]).
//! - The test guard (`test_files`): what a story's diff did to the project's tests ([`tampering`]:
//!   test files deleted, renamed away, emptied, replaced by links, skip markers added), judged by
//!   the paths a test file has ([`DEFAULT_TEST_PATTERNS`]).
//!
//! ```
//! let patterns: Vec<String> =
//!     epic_guard::DEFAULT_TEST_PATTERNS.iter().map(|p| (*p).to_owned()).collect();
//! assert!(epic_guard::is_test_path("tests/cart.rs", &patterns));
//! assert!(!epic_guard::is_test_path("src/cart.rs", &patterns));
//! assert!(epic_guard::has_skip_marker("    #[ignore]"));
//! ```

#![warn(missing_docs)]

mod files;
mod test_files;

pub use files::{GuardedChange, Tampered, Turn, TurnGuard};
pub use test_files::{
    DEFAULT_TEST_PATTERNS, SKIP_MARKERS, Tampering, has_skip_marker, is_test_path, runs, tampering,
};
