//! The record of a story's merge revisions (`revisions/<id>.json`, [`Revisions`]): what each
//! revision was given, read by the story's `revise.rs` step and by `epic status`.

use epic_state_store::EpicDir;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `revisions/<id>.json`
/// ([`EpicDir::story_revisions`](epic_state_store::EpicDir::story_revisions)): a story's merge
/// revisions so far, in order (`--merge-revisions`), as `epic status` reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Revisions {
    /// Each revision, from the first.
    pub(crate) revisions: Vec<Revision>,
}

impl Revisions {
    /// The merge revisions of story `story` of the epic `dir`; none when it has no record.
    pub fn load(dir: &EpicDir, story: &str) -> Result<Self, RevisionsUnreadable> {
        let path = dir.story_revisions(story)?;
        Ok(epic_state_store::load::<Self>(&path)?.unwrap_or_default())
    }

    /// How many there were.
    pub fn count(&self) -> u32 {
        u32::try_from(self.revisions.len()).unwrap_or(u32::MAX)
    }
}

/// An error returned by [`Revisions::load`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RevisionsUnreadable {
    /// The story's id names no file of the state directory.
    #[error(transparent)]
    UnsafeId(#[from] epic_state_store::UnsafeId),
    /// The file cannot be read.
    #[error(transparent)]
    Load(#[from] epic_state_store::LoadError),
}

/// One merge revision: what sent the story back and what its coder was told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Revision {
    /// Its number, from 1.
    pub(crate) number: u32,
    /// The red gates' output on the combined tree.
    pub(crate) red: String,
    /// The proven epic head when it began, which the story catches up with.
    pub(crate) head: String,
    /// The stories merged since the story last caught up.
    pub(crate) met: Vec<MetStory>,
    /// The title of its task in the story's checkpoint.
    pub(crate) task: String,
}

/// A story whose work a revised story meets on the epic head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MetStory {
    /// Its id.
    pub(crate) id: String,
    /// Its title.
    pub(crate) title: String,
    /// What it provides (its plan entry's `provides`).
    pub(crate) provides: Vec<String>,
    /// The paths its merge changed (its owned paths when its merge commit cannot be read).
    pub(crate) paths: Vec<String>,
}

impl epic_state_store::Document for Revisions {
    const NAME: &'static str = "merge revisions";
    const VERSION: u32 = 1;
    const REMEDY: &'static str =
        "remove it; the story's next red merge then counts its revisions from 1";
}
