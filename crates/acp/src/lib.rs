//! The Agent Client Protocol (ACP) from epic's side: one turn of an agent that speaks it over
//! its stdio ([`run_turn`], on the official SDK, `agent-client-protocol`), and the permission
//! policy that answers what the agent asks from the story's perimeter ([`decide`],
//! [`decide_write`]: an edit inside the owned paths allowed once, anything else rejected with a
//! reason the agent is shown; a read-only role edits nothing and runs only commands that read).
//!
//! epic starts the agent itself (its process group, its sandbox: `epic-agents`' `acp:` seat)
//! and hands this crate the pipes; what the agent does arrives as [`Note`]s for the seat to turn
//! into the turn's reply, activity and events.
//!
//! ```
//! use epic_acp::{Access, Ask, Decision, decide};
//! use epic_story_plan::Story;
//!
//! let story = Story::new("cart", "Cart", ["src/cart"]);
//! let worktree = std::path::Path::new("/work/cart");
//! let git = Ask::new(Some("edit"), Some("Edit .git/config"), [".git/config".into()], None);
//! assert!(matches!(decide(Access::Edit, &story, worktree, &git), Decision::Reject(_)));
//! ```

mod client;
mod disk;
mod lines;
mod policy;

pub use client::{AcpError, Ended, Note, Turn, run_turn};
pub use policy::{Access, Ask, Decision, decide, decide_write, inside, read_only, readable, shown};
