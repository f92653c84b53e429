//! `epic land`: a finished epic put on its target branch, proven ([`land_epic`]).
//!
//! The target comes to the epic, never the other way round. Under the epic's lock, in the epic
//! worktree: the target is merged into the epic branch; each conflicted path goes to the story
//! that owns it (one [`Role::Lander`](epic_agents::Role::Lander) turn per story with conflicts, its title, description,
//! `provides`, the paths and both sides' versions; `EPIC_STORY` is the story), the paths no
//! story owns to a final turn (`EPIC_STORY` empty); a file that still holds conflict markers is
//! not resolved. The merge is committed by epic (first parent the epic head, second the target),
//! then the gates run on it; red, the lander gets the failure (`--max-rounds` rounds, each fix
//! committed by epic and held to the test guard). Green, one merge commit
//! `<epic>: land epic/<id>` (first parent the target, tree the proven one) is made, and the
//! target moves to it by compare-and-swap against the commit the landing started from: moved
//! meanwhile, the landing goes back to the merge (at most twice). Giving up puts the epic branch
//! and worktree back where they were; the target is never touched until the epic branch is
//! green with the target's history in it.
//!
//! A journal (`landing.json`) makes it crash-safe: written before the merge, it gets the landing
//! commit before the target moves. A rerun that finds it sees that commit on the target (the
//! landing happened: recorded and finished) or not (the epic branch goes back to where the
//! landing found it, and the landing starts again): the target never gets two landing merges.
//!
//! A file per step: what a landing that died left (`recover.rs`), the course of a landing
//! (`attempt.rs`: the checks before anything is touched, the attempts and their journal, the dry
//! run), the merge of the target proven by the lander's turns and the gates (`prove.rs`), what
//! follows the move of the target (`finish.rs`), the lander's prompts (`prompt.rs`), the
//! documents of the epic's state (`record.rs`), and `--pr` (`pull_request.rs`). Beneath them:
//! what a landing is given (`job.rs`) and gives back (`outcome.rs`), its errors (`error.rs`), and
//! one landing at work, the context every step takes (`lander.rs`); on top, [`land_epic`]
//! (`land.rs`). Here: only declarations and re-exports.
//!
//! Every way a landing stops short says what to do next, the target untouched:
//!
//! ```
//! use epic_land::{NotLanded, Unmerged};
//!
//! let why = NotLanded::Unmerged {
//!     stories: vec![Unmerged { story: "cart-api".into(), status: "failed".into() }],
//! };
//! assert_eq!(
//!     why.to_string(),
//!     "a story is not merged: cart-api (failed). Finish them with `epic run`, or land what is \
//!      merged with --partial"
//! );
//! ```

mod attempt;
mod config;
mod error;
mod finish;
mod job;
mod land;
mod lander;
mod outcome;
mod perimeter;
mod prompt;
mod prove;
mod pull_request;
mod record;
mod recover;

pub use config::LandConfig;
pub use error::LandError;
pub use job::{LANDING, LandJob};
pub use land::land_epic;
pub use outcome::{DryRun, LandOutcome, NotLanded, Unmerged};
pub use pull_request::{
    PullRequest, PullRequestError, PullRequestOpened, check_gh, open_pull_request,
};
pub use record::RunPlan;
