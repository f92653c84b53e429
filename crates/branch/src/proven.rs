//! `proven.json`, the last epic head epic proved ([`ProvenHead`]).

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_guard::TurnGuard;
use epic_process::offload::{self, BoxError};
use epic_state_store::EpicDir;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `proven.json` ([`EpicDir::proven_head`](epic_state_store::EpicDir::proven_head)): the
/// last epic head epic itself proved, written by a run at its start (the head it builds on) and
/// after each merge it proved and recorded. A merge journal found at start is honoured only when
/// its checkpoint is this head, and the branch is moved back to nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProvenHead {
    /// The commit.
    pub commit: String,
}

impl epic_state_store::Document for ProvenHead {
    const NAME: &'static str = "proven epic head";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; the next run records the epic head it starts from";
}

impl ProvenHead {
    /// Records `commit` as the last proven epic head of the epic `dir`, off the async workers.
    /// With `guard` (once stories run), the write goes through it
    /// ([`TurnGuard::epic_write`](epic_guard::TurnGuard::epic_write)).
    pub async fn record(
        dir: &EpicDir,
        commit: CommitId,
        guard: Option<&Arc<TurnGuard>>,
    ) -> Result<(), BoxError> {
        let path = dir.proven_head();
        let record = Self {
            commit: commit.to_hex(),
        };
        let guard = guard.map(Arc::clone);
        let saved = offload::blocking(move || {
            let save = || epic_state_store::save(&path, &record);
            match guard {
                Some(guard) => guard.epic_write(&path, save),
                None => save(),
            }
        });
        match saved.await {
            Ok(saved) => saved.map_err(Into::into),
            Err(error) => Err(Box::new(error)),
        }
    }
}
