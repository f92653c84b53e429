//! What a story may touch.
//!
//! # Using it alone
//!
//! Of epic's crates, `epic-perimeter` needs only `epic-story-plan` (for
//! [`Story`](epic_story_plan::Story) and [`StoryPlan`](epic_story_plan::StoryPlan)), and it
//! does no I/O: give it the paths a change touched, as `git diff --name-only` prints them, and a
//! story, and it tells which paths the story was allowed to change. Depend on both crates: build
//! the story with `epic-story-plan`, in code or from a plan it parsed.
//!
//! ```
//! use epic_perimeter::{Placement, check, classify, enforce};
//! use epic_story_plan::Story;
//!
//! let story = Story::new("cart-api", "Cart API", ["src/cart"]).sharing(["src/lib.rs"]);
//! let changed = ["src/cart/mod.rs", "src/lib.rs", "README.md"];
//!
//! assert_eq!(classify("src/cart/mod.rs", &story), Placement::Owned);
//! let verdict = check(&changed, &story);
//! assert_eq!(verdict.shared_read_only, ["src/lib.rs"]);
//! assert_eq!(verdict.outside, ["README.md"]);
//!
//! let err = enforce(&changed, &story).unwrap_err();
//! println!("{err}");
//! assert!(err.to_string().contains("README.md (not in the story's owned paths)"));
//! assert!(enforce(&["src/cart/item.rs"], &story).is_ok());
//! ```
//!
//! # What it answers
//!
//! A story in an epic plan owns some path prefixes (it may create or change anything under them)
//! and may declare others shared read-only (it may read them, never change them). This crate
//! answers the questions the executor asks about that perimeter:
//!
//! - [`check()`] sorts the paths a story's branch changed into accepted, shared read-only (the
//!   worse offence) and outside; [`classify`] places a single path; [`enforce`] turns a dirty
//!   check into a [`PerimeterViolation`].
//! - [`gate()`] is the same check as a [`Review`], the verdict shape the executor's gates, judges
//!   and reviewers share, so a coder hears about a stray edit in the same round as a red test.
//! - [`paths_named_in`] and [`stray_tasks`] read a planned task's prose for paths that belong to
//!   somebody else, so a plan that wanders can be re-planned before any code is written.
//! - [`owner_of`] names the story that owns a path.
//! - [`check_links`] (or [`PerimeterCheck::with_links`]) judges the symbolic links a story added
//!   or changed, given their targets: one that points outside the repository, into `.git`, or
//!   into another story's owned paths or a shared read-only path is a violation.
//!
//! Paths are compared through the path primitives of `epic-story-plan`
//! ([`normalize`](epic_story_plan::path::normalize), [`within`](epic_story_plan::path::within),
//! [`check_safe`](epic_story_plan::path::check_safe), …), the one definition of what two
//! spellings of a path have in common; import them from [`epic_story_plan::path`].
//!
//! It is pure: paths in, verdicts out. It never reads the filesystem or runs git; callers pass
//! repo-relative, `/`-separated paths as git reports them.
//!
//! # Hostile paths
//!
//! A changed path that is not a safe repo-relative path
//! ([`check_safe`](epic_story_plan::path::check_safe): absolute, with a drive letter, with a `..`
//! segment, under `.git`, with a control character, or empty) is never accepted, whatever prefix
//! it seems to start with: `src/a/../../etc/passwd` is outside a story that owns `src/a`. The same
//! holds for [`owner_of`] and the allowed paths of [`stray_tasks`]. Likewise an unsafe owned or
//! shared prefix (which a validated plan never has) grants nothing: an owned `/` does not open the
//! whole repository.

#![warn(missing_docs)]

mod check;
mod escaped;
mod gate;
mod links;
mod named;
mod placement;
mod review;
mod stray;

pub use check::{PerimeterCheck, PerimeterViolation, check, enforce};
pub use gate::gate;
pub use links::{LinkProblem, LinkViolation, check_links};
pub use named::{owner_of, paths_named_in};
pub use placement::{Placement, classify};
pub use review::{Issue, Review, Severity};
pub use stray::{StrayTask, Task, stray_tasks};
