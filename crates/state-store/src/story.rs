//! The durable state of one story, `stories/<id>.json`.

use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::document::{Document, envelope_schema};

/// What a rerun needs to know about a story it met before: which plan entry it started from,
/// where its work is, and how far it got.
///
/// Kept at `stories/<id>.json` ([`EpicDir::story_state`](crate::EpicDir::story_state)) inside
/// the versioned envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "StoryState")]
pub struct StoryState {
    /// The story's id in the plan.
    pub id: String,
    /// The story hash of the plan entry the branch was cut for; a rerun whose plan entry hashes
    /// differently starts the story over.
    pub hash: String,
    /// The story branch, `story/<epic_id>/<story_id>`.
    pub branch: String,
    /// The absolute path of the story's worktree (it may since have been removed).
    pub worktree: PathBuf,
    /// How far the story got.
    pub status: StoryStage,
    /// The commit of the epic branch that holds the story's merge (its merge commit, or the
    /// epic head that already had all of it), recorded when it merged. A story counts as merged
    /// only while this commit is on the epic branch's first-parent line; a state that says
    /// `merged` without it (an older file, or one edited by hand) is not trusted. Absent from
    /// files that have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<String>,
    /// Where a person holds the story, if anywhere: it waits for their answer, or they stopped
    /// it. Absent from files that have none; an older build, which does not know it, runs the
    /// story again as its `status` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Hold>,
}

/// Where a person holds a story.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "hold", rename_all = "snake_case")]
pub enum Hold {
    /// Its coder asked a question the plan and the verifier could not settle (`--on-blocked
    /// ask`): the story waits for `epic answer`, its slot given to others.
    Waiting {
        /// The question, in the coder's words.
        question: String,
        /// Since when it waits (RFC 3339, UTC).
        since: String,
    },
    /// A person stopped it (`epic stop`): it runs again only after `epic retry`.
    Stopped {
        /// The user id of who stopped it.
        uid: u32,
        /// When (RFC 3339, UTC).
        at: String,
    },
}

/// How far a story got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// The JSON Schema keeps the definition name `epic schema` has always printed.
#[schemars(rename = "StoryStatus")]
pub enum StoryStage {
    /// Its branch and worktree exist; a rerun resumes it on its branch.
    Started,
    /// It is merged into the epic branch; a rerun skips it.
    Merged,
    /// It failed; a rerun resumes it on its branch.
    Failed,
}

impl StoryStage {
    /// The status as the file spells it: `started`, `merged` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Merged => "merged",
            Self::Failed => "failed",
        }
    }
}

impl fmt::Display for StoryStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Document for StoryState {
    const NAME: &'static str = "story state";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it to start that story over";
}

/// The JSON Schema of a story state file (what `epic schema state` prints): the versioned
/// envelope around [`StoryState`].
///
/// ```
/// let schema = epic_state_store::state_schema();
/// assert_eq!(schema["properties"]["version"]["const"], 1);
/// assert_eq!(schema["required"], serde_json::json!(["version", "data"]));
/// ```
pub fn state_schema() -> serde_json::Value {
    envelope_schema::<StoryState>()
}
