//! What a turn is for ([`Role`]): the one word every seat, prompt, event and transcript name
//! agrees on; below the seats and presets, which both speak of it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a turn is for; the seat's process sees it as `EPIC_ROLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The coder planning its story's tasks; replies with the task list as JSON.
    Planner,
    /// The coder implementing a task.
    Coder,
    /// The story-level judge; replies with a verdict as JSON.
    Judge,
    /// A per-task reviewer; replies with a verdict as JSON.
    Reviewer,
    /// The architect of `epic plan`, splitting an epic into a plan; replies with the plan as
    /// JSON. Runs in the repository's root, which it may read but not change.
    Architect,
    /// Settles a coder's `BLOCKED_ON:` claim the plan cannot settle (`--verifier`): reads the
    /// story's worktree without changing it and replies `{"blocked":bool,"reason":"…"}`.
    Verifier,
    /// The coder landing the epic (`epic land`): resolves the conflicts the target's merge into
    /// the epic branch left in the epic worktree (one turn per story that owns conflicted
    /// paths, a final one for the paths no story owns), and fixes red gates after it. Works in
    /// the epic worktree like a coder; epic commits.
    Lander,
}

impl Role {
    /// The lowercase name, as in `EPIC_ROLE` and in transcript file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planner => "planner",
            Self::Coder => "coder",
            Self::Judge => "judge",
            Self::Reviewer => "reviewer",
            Self::Architect => "architect",
            Self::Verifier => "verifier",
            Self::Lander => "lander",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
