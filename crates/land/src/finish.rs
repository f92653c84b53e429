//! After the target moved: the checkout brought along, the proven head and the landing
//! recorded (`proven.json`, `landed.json`, the report), the worktrees and the landed story
//! branches removed.

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_report::{EpicReport, Landing};

use crate::error::{LandError, state_error};
use crate::job::LandJob;
use crate::lander::{Lander, Turns};
use crate::outcome::LandOutcome;
use crate::record::Landed;
use epic_events::ReportDocument;
use epic_guard::TurnGuard;
use epic_process::chain;
use epic_process::offload::{self, BoxError};

impl Lander {
    /// After the target moved: the checkout brought along, the landing recorded (`landed.json`,
    /// the report), the journal removed, then (unless `--keep`) the worktrees and the story
    /// branches the target holds removed.
    pub(super) async fn finish(
        &self,
        job: &LandJob,
        landing: Landing,
        from: CommitId,
        commit: CommitId,
        turns: Option<&Turns>,
    ) -> Result<LandOutcome, LandError> {
        let (main, target) = (self.main.clone(), self.target.clone());
        let followed = self
            .git_op("bring your checkout along", move |git| {
                if git.current_branch(&main)?.as_deref() != Some(target.as_str()) {
                    return Ok::<_, BoxError>(false);
                }
                git.follow(&main, &from, &commit)?;
                Ok(true)
            })
            .await;
        match followed {
            Ok(true) => self.note(format!(
                "your checkout `{}` follows `{}` to {commit}",
                self.main.display(),
                self.target
            )),
            Ok(false) => {}
            Err(error) => self.note(format!(
                "your checkout `{}` has `{}` checked out but could not follow it ({}); bring it \
                 along with `git read-tree -m -u {from} {commit}`",
                self.main.display(),
                self.target,
                chain(&error)
            )),
        }
        // The epic head the landing proved (the landing commit's second parent) is the one a
        // later `epic run` builds on.
        if let Ok(head) = self.rev(&format!("{commit}^2")).await {
            self.record_proven(head, turns.map(|turns| &turns.guard))
                .await;
        }
        self.record(&landing).await?;
        match turns {
            Some(turns) => {
                self.remove_journal(&self.dir.landing_journal(), turns)
                    .await;
            }
            None => {
                let path = self.dir.landing_journal();
                offload::blocking(move || epic_state_store::remove(path).ok())
                    .await
                    .ok();
            }
        }
        if !job.keep {
            self.clean_up().await;
        }
        Ok(LandOutcome::Landed(landing))
    }

    /// Records `head` as the epic's proven head (`proven.json`): the landing proved it, and a
    /// later `epic run` must not take the branch at it for one something else moved. Best
    /// effort, a note when it fails.
    pub(super) async fn record_proven(&self, head: CommitId, guard: Option<&Arc<TurnGuard>>) {
        if let Err(error) = epic_branch::ProvenHead::record(&self.dir, head, guard).await {
            self.note(format!(
                "the proven epic head could not be recorded: {}",
                chain(error.as_ref())
            ));
        }
    }

    /// Writes `landed.json` and the report with the landing.
    pub(super) async fn record(&self, landing: &Landing) -> Result<(), LandError> {
        let (dir, landed, epic_branch) = (
            self.dir.clone(),
            Landed(landing.clone()),
            self.epic_branch.clone(),
        );
        offload::blocking(move || {
            epic_state_store::save(dir.landed(), &landed)
                .map_err(|error| Box::new(error) as BoxError)?;
            let report = epic_state_store::load::<ReportDocument>(dir.report_json())
                .ok()
                .flatten()
                .map_or_else(
                    || EpicReport::new(dir.epic_id(), epic_branch),
                    |document| document.0,
                );
            let mut report = report;
            report.landing = Some(landed.0);
            epic_events::write_report(&dir, &ReportDocument(report)).map_err(BoxError::from)
        })
        .await
        .map_err(|error| state_error("record the landing", error))?
        .map_err(|error| state_error("record the landing", error))
    }

    /// Removes the epic's worktrees and each story branch the target now holds; what cannot be
    /// removed is a note.
    pub(super) async fn clean_up(&self) {
        let (root, target_ref, main, epic) = (
            self.worktree_root.clone(),
            self.target_ref.clone(),
            self.main.clone(),
            self.dir.epic_id().to_owned(),
        );
        let result = self
            .git_op("remove the epic's worktrees", move |git| {
                let root = std::path::absolute(&root).unwrap_or(root);
                let mut notes = Vec::new();
                for info in git.worktrees()? {
                    if !info.is_main
                        && info.path.starts_with(&root)
                        && let Err(error) = git.remove_worktree(&info.path)
                    {
                        notes.push(format!(
                            "the worktree `{}` could not be removed: {}",
                            info.path.display(),
                            chain(&error)
                        ));
                    }
                }
                git.prune_worktrees()?;
                for branch in git.branches_under(&format!("story/{epic}"))? {
                    let name = format!("refs/heads/{branch}");
                    if git.is_ancestor(&main, &name, &target_ref)?
                        && let Err(error) = git.delete_branch(&branch)
                    {
                        notes.push(format!(
                            "the branch `{branch}` could not be deleted: {}",
                            chain(&error)
                        ));
                    }
                }
                Ok::<_, BoxError>(notes)
            })
            .await;
        match result {
            Ok(notes) => {
                for note in notes {
                    self.note(note);
                }
            }
            Err(error) => self.note(chain(&error)),
        }
    }
}
