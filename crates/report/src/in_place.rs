//! A story found already in place ([`InPlace`]): its work was on the epic branch before it
//! changed anything, as the files a judge named ([`Evidence`]) show.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// For the docs' links only: the schema takes the doc comments as they are written.
#[cfg(doc)]
use crate::StoryOutcome;

/// A story found already in place: its work was on the epic branch before it changed anything,
/// as a judge confirmed with evidence epic checked ([`StoryOutcome::in_place`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct InPlace {
    /// The proven epic head the evidence was checked on (a full commit id).
    pub commit: String,
    /// The files that hold the story's work, each with the names of the story's `provides` it
    /// provides; at least one.
    pub evidence: Vec<Evidence>,
}

impl InPlace {
    /// The evidence `evidence`, checked on commit `commit`.
    pub fn new(commit: impl Into<String>, evidence: Vec<Evidence>) -> Self {
        Self {
            commit: commit.into(),
            evidence,
        }
    }

    /// The evidence's paths, in order, joined by `, `: `src/cart/mod.rs, src/cart/api.rs`.
    pub fn paths(&self) -> String {
        self.evidence
            .iter()
            .map(|evidence| evidence.path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One file a judge names as holding a story's work: its JSON form is an entry of the judge's
/// `evidence`, `{"path":"src/cart/mod.rs","provides":["cart::Cart"]}` (`provides` may be left
/// out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Evidence {
    /// The file, repo-relative with `/` separators.
    pub path: String,
    /// The names of the story's `provides` this file provides. May be left out of the input.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<String>,
}

impl Evidence {
    /// The file `path`, providing `provides`.
    pub fn new(
        path: impl Into<String>,
        provides: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            path: path.into(),
            provides: provides.into_iter().map(Into::into).collect(),
        }
    }
}
