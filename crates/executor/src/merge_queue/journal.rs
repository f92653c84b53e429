//! The merge queue's durable records: `merging.json`, the batch in flight ([`MergeJournal`]),
//! and `proven.json`, the last epic head epic proved ([`ProvenHead`](epic_branch::ProvenHead)).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::Shared;

/// The in-flight batch, `merging.json` ([`EpicDir::merge_journal`](epic_state_store::EpicDir::merge_journal)):
/// written before a batch's first merge, rewritten as parts of it are proven, removed once every
/// story of it is proven or undone. A run that finds it at start died mid-integration: without
/// [`proven`](Self::proven) it undoes every merge past the checkpoint; with it, it finishes
/// recording that proven candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MergeJournal {
    /// The stories of the batch not proven yet, in merge order.
    pub(crate) stories: Vec<String>,
    /// The proven epic head the merges build on: where the epic branch goes back to.
    pub(crate) checkpoint: String,
    /// A candidate whose gates passed, while its stories are being recorded merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) proven: Option<ProvenCandidate>,
}

/// A candidate of a batch proven green: its head and each story's merge on the way to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProvenCandidate {
    /// The candidate's head, the new proven head.
    pub(crate) head: String,
    /// Each story of it and the commit that holds its merge, in merge order.
    pub(crate) merges: Vec<ProvenMerge>,
}

/// One story of a [`ProvenCandidate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProvenMerge {
    /// The story.
    pub(crate) story: String,
    /// Its merge commit (or the head that already had it all).
    pub(crate) commit: String,
}

impl epic_state_store::Document for MergeJournal {
    const NAME: &'static str = "merge journal";
    const VERSION: u32 = 2;
    const REMEDY: &'static str =
        "check the epic branch's last merges by hand (reset it if its gates fail), then remove it";

    /// Version 1 named one story (`story`) and its checkpoint.
    fn migrate(
        version: u32,
        mut data: serde_json::Value,
    ) -> Result<serde_json::Value, epic_state_store::MigrateError> {
        if version != 1 {
            return Err(epic_state_store::MigrateError::Unsupported);
        }
        let Some(fields) = data.as_object_mut() else {
            return Err(epic_state_store::MigrateError::Invalid {
                reason: "not an object".into(),
            });
        };
        let story = fields.remove("story").unwrap_or(serde_json::Value::Null);
        fields.insert("stories".to_owned(), serde_json::Value::Array(vec![story]));
        Ok(data)
    }
}

impl MergeJournal {
    /// The stories it names, as a note says them: `story 'a'`, `stories 'a', 'b'`.
    pub(crate) fn names(&self) -> String {
        names(&self.stories)
    }
}

/// `story 'a'`, `stories 'a', 'b'`.
pub(crate) fn names(stories: &[String]) -> String {
    let quoted: Vec<String> = stories.iter().map(|story| format!("'{story}'")).collect();
    match quoted.as_slice() {
        [one] => format!("story {one}"),
        _ => format!("stories {}", quoted.join(", ")),
    }
}

/// Removes the merge journal once its merge is proven or undone; best effort (a journal left
/// behind names a merge the next run finds recorded or undoes again).
pub(super) async fn remove_journal(shared: &Shared, path: PathBuf) {
    shared
        .write(path, |path| epic_state_store::remove(path).ok())
        .await
        .ok();
}
