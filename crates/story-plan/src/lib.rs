//! The model of an epic plan and the checks that decide whether it can run.
//!
//! A plan ([`StoryPlan`]) splits an epic into [`Story`]s, each with the stories it depends on and
//! the paths it owns. This crate reads plans ([`StoryPlan::parse`]: JSON, TOML, or Markdown with a
//! fenced `json storyplan` block), finds every violation at once ([`StoryPlan::validate`]), and
//! answers the scheduler's questions about a valid plan ([`ValidPlan`]: waves, the ready set,
//! dependents, the critical path). [`story_hash`] fingerprints a story's entry so a rerun can tell
//! whether it changed.
//!
//! It is pure: no I/O, no async, no git. Callers read files and pass the text in.
//!
//! ```
//! use epic_story_plan::{PlanFormat, StoryPlan};
//!
//! let plan = StoryPlan::parse(
//!     r#"
//! epic_id = "checkout"
//!
//! [[stories]]
//! id = "cart-api"
//! title = "Cart API"
//! owned = ["src/cart"]
//!
//! [[stories]]
//! id = "cart-ui"
//! title = "Cart page"
//! depends_on = ["cart-api"]
//! owned = ["web/cart"]
//! "#,
//!     PlanFormat::Toml,
//! )?;
//! let plan = plan.validate()?;
//! assert_eq!(plan.waves(), [vec!["cart-api"], vec!["cart-ui"]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod graph;
mod hash;
mod model;
mod parse;
pub mod path;
mod read_first;
mod render;
mod validate;

pub use graph::{CriticalPath, Progress, ValidPlan};
pub use hash::story_hash;
pub use model::{Story, StoryPlan};
pub use parse::{ParseError, ParseErrorKind, PlanFormat};
pub use read_first::{PruneReason, PrunedAnchor};
pub use validate::{MAX_ID_LEN, PlanErrors, Violation, ViolationKind};

/// The JSON Schema of the plan document (what `epic schema plan` prints).
pub fn plan_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(StoryPlan)).unwrap_or_default()
}
