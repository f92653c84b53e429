//! The epic branch and the place an epic is worked in, as a run and a landing both need them:
//! the worktrees beside the repository ([`worktrees_root`]), the epic branch in a worktree of its
//! own ([`prepare_epic_worktree`], created from its base when absent, where it starts recorded),
//! the epic's lock ([`take_lock`]) and event log ([`open_log`]), the last epic head epic proved
//! ([`ProvenHead`], `proven.json`), and why a run or a landing could not start ([`RunError`]).
//!
//! A crate of its own so that `epic run` (`epic-executor`) and `epic land` (`epic-land`) share
//! one definition of where the epic branch lives and what proves it, and neither names the
//! other for it.
//!
//! ```
//! use std::path::Path;
//!
//! use epic_branch::{EPIC_WORKTREE_NAME, worktrees_root};
//!
//! let root = worktrees_root(Path::new("/src/shop"), "checkout");
//! assert_eq!(root.join(EPIC_WORKTREE_NAME), Path::new("/src/shop.worktrees/checkout/_epic"));
//! ```

#![warn(missing_docs)]

mod error;
mod place;
mod proven;
mod worktree;

pub use error::{RunError, dirty_message};
pub use place::{EPIC_WORKTREE_NAME, open_log, take_lock, worktrees_root};
pub use proven::ProvenHead;
pub use worktree::{
    blocking_branch, check_story_branches, prepare_epic_worktree, record_origin, same_path,
};
