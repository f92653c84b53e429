//! An attestation recorded: the state's copy (`attestations/<commit>.json`) first, then the git
//! note under [`NOTES_REF`], so a note never exists without the state that backs it.

use std::path::Path;

use epic_git_ops::{CommitId, Git};
use epic_state_store::EpicDir;

use crate::model::{Attestation, NOTES_REF};

impl Attestation {
    /// Writes this attestation to the epic's state (`attestations/<commit>.json`, through
    /// `guard`, as every write of epic's own guarded files) and as the note on its commit, from
    /// `worktree`; the state first, so a note never exists without the state that backs it.
    /// Blocking.
    pub fn record(
        &self,
        git: &dyn Git,
        dir: &EpicDir,
        worktree: &Path,
        guard: &epic_guard::TurnGuard,
    ) -> Result<(), String> {
        Self::record_all(std::slice::from_ref(self), git, dir, worktree, guard)
    }

    /// [`record`](Self::record) for several attestations (a batch's merges): every state first,
    /// then the notes as one change of the notes ref ([`Git::write_notes`]). Blocking.
    pub fn record_all(
        attestations: &[Self],
        git: &dyn Git,
        dir: &EpicDir,
        worktree: &Path,
        guard: &epic_guard::TurnGuard,
    ) -> Result<(), String> {
        let mut notes = Vec::with_capacity(attestations.len());
        for attestation in attestations {
            let path = dir
                .attestation(&attestation.commit)
                .ok_or_else(|| format!("`{}` is not a commit id", attestation.commit))?;
            guard.epic_write(&path, || {
                epic_state_store::save(&path, attestation)
                    .map_err(|error| epic_process::chain(&error))
            })?;
            let commit: CommitId = attestation
                .commit
                .parse()
                .map_err(|error| format!("{error}"))?;
            notes.push((commit, attestation.to_note()));
        }
        git.write_notes(worktree, NOTES_REF, &notes)
            .map_err(|error| epic_process::chain(&error))
    }
}
