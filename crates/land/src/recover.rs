//! What a landing that died left: its lock files cleared, its journal honoured (the landing
//! finished when the target holds its commit, else the epic branch put back), and a landing
//! already done recognised.

use epic_git_ops::CommitId;
use epic_report::{Landing, Timestamp};

use crate::error::{LandError, state_error};
use crate::job::LandJob;
use crate::lander::Lander;
use crate::outcome::LandOutcome;
use crate::record::{Landed, LandingJournal};
use epic_process::offload::{self, BoxError};

/// A commit id the landing journal names.
fn parse(hex: &str) -> Result<CommitId, LandError> {
    hex.parse()
        .map_err(|error| state_error("read the landing journal", error))
}

impl Lander {
    /// What a landing that died left: its lock files cleared, and its journal honoured (the
    /// landing finished when the target holds its commit, else the epic branch put back). The
    /// outcome when it finished the landing.
    pub(super) async fn recover(&self, job: &LandJob) -> Result<Option<LandOutcome>, LandError> {
        // Under the epic's lock, a lock file on the epic worktree or branch is a dead landing's
        // (or run's): a `git merge` killed half way leaves `index.lock`.
        let (common, worktree, branch) = (
            self.git.common_dir().to_path_buf(),
            self.epic_worktree.clone(),
            self.epic_branch.clone(),
        );
        // The notes ref too, which the landing's attestation moves.
        let cleared = offload::blocking(move || {
            let mut cleared = epic_git_ops::clear_stale_locks(&common, &worktree, &branch);
            cleared.extend(epic_git_ops::clear_stale_ref_locks(
                &common,
                &[epic_attest::NOTES_REF],
            ));
            cleared
        })
        .await
        .unwrap_or_default();
        for path in cleared {
            self.note(format!(
                "removed {}, left by a git process that died",
                path.display()
            ));
        }
        let journal_path = self.dir.landing_journal();
        let journal = {
            let path = journal_path.clone();
            offload::blocking(move || epic_state_store::load::<LandingJournal>(path))
                .await
                .map_err(|error| state_error("read the landing journal", error))?
                .map_err(|error| state_error("read the landing journal", error))?
        };
        if let Some(journal) = journal {
            // A landing died: a lock file on the target's ref (an `update-ref` killed half way)
            // or on your checkout's index (the checkout following it) is that landing's.
            if journal.target == self.target {
                let (common, main, target) = (
                    self.git.common_dir().to_path_buf(),
                    self.main.clone(),
                    self.target.clone(),
                );
                let cleared = offload::blocking(move || {
                    epic_git_ops::clear_stale_locks(&common, &main, &target)
                })
                .await
                .unwrap_or_default();
                for path in cleared {
                    self.note(format!(
                        "removed {}, left by the landing that died",
                        path.display()
                    ));
                }
            }
            if let Some(commit) = &journal.commit
                && journal.target == self.target
                && self.is_ancestor(commit, &self.target_ref).await?
            {
                // The target moved to the landing commit before the last landing died.
                self.note(format!(
                    "a landing that died had already moved `{}` to {commit}: finishing it",
                    self.target
                ));
                let from: CommitId = parse(&journal.from)?;
                let commit: CommitId = parse(commit)?;
                let mut landing = journal.landing.clone().unwrap_or_else(|| {
                    Landing::new(
                        &self.target,
                        commit.to_hex(),
                        from.to_hex(),
                        Timestamp::now(),
                    )
                });
                landing.landed_at = Timestamp::now();
                return self
                    .finish(job, landing, from, commit, None)
                    .await
                    .map(Some);
            }
            self.undo_dead_landing(&journal).await?;
        }
        Ok(None)
    }

    /// The landing already done, if it is: `landed.json`'s commit on the target, or the epic
    /// branch already in the target's history.
    pub(super) async fn already_landed(&self) -> Result<Option<LandOutcome>, LandError> {
        let path = self.dir.landed();
        let landed = offload::blocking(move || epic_state_store::load::<Landed>(path))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        if let Some(Landed(landing)) = landed
            && landing.target == self.target
            && self.is_ancestor(&landing.commit, &self.target_ref).await?
        {
            return Ok(Some(LandOutcome::AlreadyLanded {
                target: self.target.clone(),
                commit: Some(landing.commit),
            }));
        }
        let epic_ref = format!("refs/heads/{}", self.epic_branch);
        let target = self.rev(&self.target_ref).await?;
        let head = self.rev(&epic_ref).await?;
        if head != target && self.is_ancestor(&epic_ref, &self.target_ref).await? {
            return Ok(Some(LandOutcome::AlreadyLanded {
                target: self.target.clone(),
                commit: None,
            }));
        }
        Ok(None)
    }

    /// Puts the epic branch back where a landing that died found it.
    pub(super) async fn undo_dead_landing(
        &self,
        journal: &LandingJournal,
    ) -> Result<(), LandError> {
        let checkpoint = parse(&journal.checkpoint)?;
        let epic_ref = format!("refs/heads/{}", self.epic_branch);
        let head = self.rev(&epic_ref).await?;
        if self.is_ancestor(&journal.checkpoint, &epic_ref).await? {
            // The branch back at the checkpoint, and the worktree with it: the merge the dead
            // landing left open aborted, what its turns and gates wrote removed.
            epic_branch::prepare_epic_worktree(
                &self.git,
                &self.dir,
                &self.main,
                "HEAD",
                &self.epic_branch,
                &self.epic_worktree,
            )
            .await?;
            let epic = self.epic_worktree.clone();
            self.git_op("undo the landing that died", move |git| {
                git.abort_unfinished_merge(&epic)?;
                git.rollback(&epic, &checkpoint).map_err(BoxError::from)
            })
            .await?;
            self.note(format!(
                "a landing that died left the epic branch at {head}; it is back at {checkpoint}, \
                 and the landing starts again"
            ));
        } else {
            // Something other than epic moved the branch since: it is not epic's to put back.
            self.note(format!(
                "a landing that died started from {checkpoint}, but the epic branch is at {head}, \
                 which does not descend from it; the branch is left as it is"
            ));
        }
        let path = self.dir.landing_journal();
        offload::blocking(move || epic_state_store::remove(path))
            .await
            .map_err(|error| state_error("remove the landing journal", error))?
            .map_err(|error| state_error("remove the landing journal", error))?;
        Ok(())
    }
}
