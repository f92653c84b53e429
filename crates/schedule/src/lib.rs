//! The scheduler's decisions over a valid plan, as a synchronous state machine with no runtime
//! and no I/O: which stories may start now, in the order of a [`Policy`], and what a finished or
//! failed story changes ([`Schedule`]).
//!
//! The run (`epic-executor`) is a thin async loop around it; a simulation or a benchmark drives
//! it alone, with a clock of its own (`cargo xtask bench`'s makespan replay does).
//!
//! ```
//! use epic_schedule::{Policy, Schedule};
//! use epic_story_plan::{Story, StoryPlan};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let plan = StoryPlan {
//!     epic_id: "shop".into(),
//!     epic: "A shop".into(),
//!     stories: vec![
//!         Story::new("api", "The API", ["src/api.rs"]),
//!         Story::new("ui", "The UI", ["src/ui.rs"]).depending_on(["api"]),
//!     ],
//! }
//! .validate()?;
//! let no_weights = |_: &Story| 1;
//! let mut schedule = Schedule::new(&plan, Policy::CriticalPath, no_weights, &Default::default(), 2);
//! assert_eq!(schedule.start_ready(2), [0], "ui waits for api");
//! schedule.done(0);
//! assert_eq!(schedule.start_ready(2), [1]);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod schedule;

pub use schedule::{Policy, Schedule, Standing};
