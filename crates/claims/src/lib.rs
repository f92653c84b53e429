//! What an agent claims, checked before epic acts on it: a claim counts only with evidence epic
//! can check.
//!
//! - **`BLOCKED_ON:`** (`blocked.rs`, [`checked`]): a coder that stops for something it says is
//!   missing is checked against the plan first (its own paths, a merged dependency's, a
//!   dependent's) and, where the plan cannot settle it, by a verifier seat in a read-only turn;
//!   a rejected claim earns one pushback turn, a claim that stands is [`ClaimError::Blocked`].
//! - **"Already in place"** (`evidence.rs`, [`check`]): a judge that clears a story which changed
//!   nothing must name files and words epic finds on the proven epic head ([`Problem`] says what
//!   is missing).
//!
//! ```
//! use epic_claims::{Problem, check};
//! use epic_story_plan::Story;
//!
//! // A judge says the story's work is in place but names no evidence: that is not enough.
//! let story = Story::new("cart", "The cart", ["src/cart.rs"]);
//! let read = |_: &str| -> Result<epic_git_ops::TreeFile, std::convert::Infallible> {
//!     unreachable!("nothing to read")
//! };
//! assert_eq!(check(&story, Ok(&[]), read), Ok(Err(vec![Problem::NoEvidence])));
//! ```

#![warn(missing_docs)]

mod blocked;
mod evidence;

pub use blocked::{Claim, ClaimError, checked};
pub use evidence::{Problem, check};
