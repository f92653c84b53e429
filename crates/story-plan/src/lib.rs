//! The model of an epic plan and the checks that decide whether it can run.
//!
//! # Using it alone
//!
//! `epic-story-plan` depends on no other crate of epic and does no I/O, so any tool that wants to
//! read a plan, check it and order its stories can take it by itself: pass the text in (read it
//! however you like), validate it, and ask the valid plan for its waves, dependents or critical
//! path.
//!
//! ```
//! use epic_story_plan::{PlanFormat, StoryPlan, ViolationKind};
//!
//! let text = r#"
//! epic_id = "checkout"
//!
//! [[stories]]
//! id = "cart-api"
//! title = "Cart API"
//! owned = ["src/cart"]
//!
//! [[stories]]
//! id = "pay-api"
//! title = "Payments API"
//! owned = ["src/pay"]
//!
//! [[stories]]
//! id = "cart-ui"
//! title = "Cart page"
//! depends_on = ["cart-api", "pay-api"]
//! owned = ["web/cart"]
//! "#;
//!
//! let plan = StoryPlan::parse(text, PlanFormat::Toml)?.validate()?;
//! for (n, wave) in plan.waves().iter().enumerate() {
//!     println!("wave {n}: {}", wave.join(", "));
//! }
//! assert_eq!(plan.waves(), [vec!["cart-api", "pay-api"], vec!["cart-ui"]]);
//! assert_eq!(plan.dependents("cart-api"), ["cart-ui"]);
//! assert_eq!(plan.critical_path().stories, ["cart-api", "cart-ui"]);
//!
//! // Validation reports every problem at once, each with a stable kind.
//! let broken = StoryPlan::parse(&text.replace("src/pay", "src/cart/pay"), PlanFormat::Toml)?;
//! let errors = broken.validate().unwrap_err();
//! assert_eq!(errors.violations()[0].kind, ViolationKind::OwnedOverlap);
//! println!("{errors}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What it holds
//!
//! A plan ([`StoryPlan`]) splits an epic into [`Story`]s, each with the stories it depends on and
//! the paths it owns. This crate reads plans ([`StoryPlan::parse`]: JSON, TOML, or Markdown with a
//! fenced `json storyplan` block; errors carry the file, line and column), finds every violation
//! at once ([`StoryPlan::validate`], [`PlanErrors`]), and answers the scheduler's questions about
//! a valid plan ([`ValidPlan`]: waves, dependents, dependencies, the critical path and the
//! weights it is computed from). [`story_hash`] fingerprints a story's entry so a rerun can tell
//! whether it changed; [`StoryPlan::to_markdown`] renders a plan for people and
//! [`plan_schema`] is the plan's JSON Schema. The [`path`] module is the one definition of path
//! normalisation, containment and safety that the rest of epic uses.
//!
//! It is pure: no I/O, no async, no git. Callers read files and pass the text in.

#![warn(missing_docs)]

mod graph;
mod hash;
mod model;
mod parse;
pub mod path;
mod read_first;
mod render;
mod validate;

pub use graph::{CriticalPath, ValidPlan};
pub use hash::story_hash;
pub use model::{Story, StoryPlan, plan_schema};
pub use parse::{ParseError, ParseErrorKind, PlanFormat, line_column};
pub use read_first::{PruneReason, PrunedAnchor};
pub use validate::{PlanErrors, Violation, ViolationKind};
