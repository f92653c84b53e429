//! `epic plan`'s architect: an agent splits an epic into a plan of stories, round after round,
//! until the plan validates or the rounds run out ([`plan_epic`] with an [`ArchitectJob`]).
//!
//! The architect is a seat of [`Role::Architect`](epic_agents::Role::Architect) in a chat of
//! `epic-chat`, told the epic, the repository's files and its README ([`ArchitectBrief`]); each
//! reply is read by `epic-protocol` and validated by `epic-story-plan`, and every violation of a
//! round goes back to it. It only reads: in the sandbox, the repository is read-only to it.
//!
//! A crate of its own, above the chats and beside the run: planning an epic needs none of the
//! run's machinery, and the run none of the architect's.
//!
//! ```
//! use epic_architect::ArchitectBrief;
//!
//! let brief = ArchitectBrief {
//!     epic: "Add a shopping cart".into(),
//!     files: vec!["src/lib.rs".into()],
//!     readme: Some("# shop\n".into()),
//! };
//! let prompt = brief.prompt();
//! assert!(prompt.contains("Add a shopping cart"));
//! assert!(prompt.contains("owned_overlap"), "every validation rule, by its kind");
//! ```

#![warn(missing_docs)]

mod plan;

pub use plan::{
    ArchitectBrief, ArchitectError, ArchitectJob, ArchitectOutcome, Rejection, plan_epic,
};
