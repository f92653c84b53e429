//! Step 7 of a story: integration, under the merge lock. The epic branch must still descend from
//! the proven head and its worktree be clean, and the story branch must still be at the commit
//! its checks passed on; the epic head is checkpointed and journaled (`merging.json`), exactly
//! that checked commit merged, and the gates run on the merged epic worktree: green, the merged
//! head is the new proven head (recorded in the story's state and in `proven.json`); red (or
//! interrupted, or the merge refused), the epic worktree is reset to the checkpoint.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use epic_git_ops::{CommitId, MergeFavor, MergeOutcome};
use epic_state_store::{EpicDir, StoryStage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::failure::git_reason;
use super::{EpicHead, Failure, Shared, Stop, Work, millis};
use crate::attest::{Attestation, AttestedGate, AttestedKind, JudgeVerdict};
use crate::baseline::{GateBaseline, GateVerdict};
use crate::error::chain;
use crate::event::Event;
use crate::gates::GateResult;
use crate::guard::TurnGuard;
use crate::offload::{self, BoxError};

/// The in-flight merge, `merging.json` ([`EpicDir::merge_journal`](epic_state_store::EpicDir::merge_journal)): written before a merge, removed once it is proven or
/// undone. A run that finds it at start died mid-integration and undoes the merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct MergeJournal {
    /// The story being merged.
    pub(crate) story: String,
    /// The epic head before the merge.
    pub(crate) checkpoint: String,
}

impl epic_state_store::Document for MergeJournal {
    const NAME: &'static str = "merge journal";
    const VERSION: u32 = 1;
    const REMEDY: &'static str =
        "check the epic branch's last merge by hand (reset it if its gates fail), then remove it";
}

/// `proven.json` ([`EpicDir::proven_head`](epic_state_store::EpicDir::proven_head)): the
/// last epic head epic itself proved, written by a run at its start (the head it builds on) and
/// after each merge it proved and recorded. A merge journal found at start is honoured only when
/// its checkpoint is this head, and the branch is moved back to nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct ProvenHead {
    /// The commit.
    pub(crate) commit: String,
}

impl epic_state_store::Document for ProvenHead {
    const NAME: &'static str = "proven epic head";
    const VERSION: u32 = 1;
    const REMEDY: &'static str = "remove it; the next run records the epic head it starts from";
}

impl ProvenHead {
    /// Records `commit` as the last proven epic head of the epic `dir`, off the async workers.
    /// With `guard` (once stories run), the write goes through it
    /// ([`TurnGuard::epic_write`](crate::guard::TurnGuard::epic_write)).
    pub(crate) async fn record(
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

impl Work {
    /// Merges the story into the epic branch under the merge lock and proves it with the
    /// gates; red, the merge is undone. The judge's note passes through. Its worktree is not
    /// removed here: the story ends once its merge is recorded, and the run loop removes the
    /// worktree ([`remove_merged_worktree`](super::remove_merged_worktree)) while the dependents
    /// start.
    ///
    /// `checked` is the commit of the story branch that passed every check: exactly that commit
    /// is merged, and a branch that moved since fails the story
    /// ([`Failure::BranchMovedAfterChecks`]).
    pub(super) async fn integrate(
        &mut self,
        judge: Option<String>,
        checked: CommitId,
    ) -> Result<Option<String>, Stop> {
        let shared = Arc::clone(&self.shared);
        let mut head = tokio::select! {
            head = shared.merge.lock() => head,
            () = self.cancel.cancelled() => return Err(Stop::Cancelled),
        };
        let journal_path = shared.dir.merge_journal();
        let epic = shared.epic_worktree.clone();
        self.check_epic_head().await?;
        let dirty = self
            .git("read the status of the epic worktree", {
                let epic = epic.clone();
                move |git| git.status(&epic, &[])
            })
            .await?;
        if dirty.is_dirty() {
            return Err(Failure::EpicWorktreeDirty {
                worktree: epic,
                paths: dirty.paths,
                story: self.id().to_owned(),
            }
            .into());
        }
        self.check_branch_unmoved(checked).await?;
        let (checkpoint, commit) = self.merge(&journal_path, checked).await?;
        let mut gates = Vec::new();
        if let Some(commit) = &commit {
            match self.prove(&mut head, commit.to_hex()).await {
                Ok(ran) => {
                    gates = ran;
                    *shared
                        .proven
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = *commit;
                }
                Err(stop) => {
                    let why = match &stop {
                        Stop::Cancelled => "the run was interrupted before its gates finished",
                        Stop::Failed(_) => "the gates turned red",
                    };
                    self.rollback(&checkpoint, why).await;
                    remove_journal(&self.shared, journal_path).await;
                    return Err(stop);
                }
            }
        }
        // The merge's own commit, or (nothing to merge) the head that already had it all.
        let holds = commit.unwrap_or(checkpoint);
        if let Some(commit) = commit {
            // Before the state says merged: a merge is attested by the time any record of it is.
            self.attest([checkpoint, commit], checked, judge.as_deref(), gates)
                .await;
        }
        self.save_state_with(StoryStage::Merged, Some(holds))
            .await?;
        self.merged = true;
        if commit.is_some() {
            self.record_proven(holds).await;
        }
        remove_journal(&self.shared, journal_path).await;
        drop(head);
        self.emit(Event::StoryMerged {
            story: self.id().to_owned(),
            commit: commit.map(|commit| commit.to_hex()),
            judge: judge.clone(),
        });
        Ok(judge)
    }

    /// Puts the epic branch back at the proven head if something other than epic moved it
    /// (see [`Shared::restore_epic_head`](super::Shared::restore_epic_head)): a merge builds only on what epic proved, never on a
    /// commit an agent put there, whether or not it descends from the proven head. A note says
    /// where the branch was.
    async fn check_epic_head(&self) -> Result<(), Stop> {
        if let Some(moved_to) = self.shared.restore_epic_head().await? {
            let message = self.shared.note_restored_epic_head(
                moved_to,
                &format!("found before merging story '{}'", self.id()),
            );
            self.emit(Event::Note {
                story: self.id().to_owned(),
                message,
            });
        }
        Ok(())
    }

    /// Fails unless the story branch is still at `checked`, the commit its checks passed on:
    /// whatever moved it since (a commit made during the judge turn, a process an agent left
    /// running) was never checked.
    async fn check_branch_unmoved(&self, checked: CommitId) -> Result<(), Stop> {
        let epic = self.shared.epic_worktree.clone();
        let branch = format!("refs/heads/{}", self.branch);
        let found = self
            .git("read the story branch", move |git| {
                git.rev_parse(&epic, &branch)
            })
            .await?;
        if found == checked {
            return Ok(());
        }
        Err(Failure::BranchMovedAfterChecks {
            branch: self.branch.clone(),
            checked,
            found,
        }
        .into())
    }

    /// Records `commit` as the last proven epic head ([`ProvenHead`]); best effort: without it,
    /// a merge left unproven by a crash is not undone but refused, naming what to check.
    async fn record_proven(&self, commit: CommitId) {
        if let Err(error) =
            ProvenHead::record(&self.shared.dir, commit, Some(&self.shared.guard)).await
        {
            self.note(format!(
                "the proven epic head could not be recorded: {}",
                chain(error.as_ref())
            ));
        }
    }

    /// Checkpoints the epic head, writes the merge journal and merges commit `checked` of the
    /// story branch: the checkpoint, and the merge commit (`None` when the epic branch already
    /// had it all).
    async fn merge(
        &self,
        journal_path: &Path,
        checked: CommitId,
    ) -> Result<(CommitId, Option<CommitId>), Stop> {
        let shared = Arc::clone(&self.shared);
        let epic = shared.epic_worktree.clone();
        let checkpoint = self
            .git("read the epic head", {
                let epic = epic.clone();
                move |git| git.checkpoint(&epic)
            })
            .await?;
        let journal = MergeJournal {
            story: self.id().to_owned(),
            checkpoint: checkpoint.to_hex(),
        };
        let path = journal_path.to_path_buf();
        let saved = shared
            .write(path, move |path| epic_state_store::save(path, &journal))
            .await;
        match saved {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(Failure::JournalNotWritten(Box::new(error)).into()),
            Err(error) => return Err(Failure::JournalNotWritten(Box::new(error)).into()),
        }
        self.emit(Event::MergeStarted {
            story: self.id().to_owned(),
            checkpoint: checkpoint.to_hex(),
        });
        let message = format!("{}: merge story {}", shared.dir.epic_id(), self.id());
        let merged = self
            .git("merge the story into the epic branch", {
                let (epic, commit) = (epic.clone(), checked.to_hex());
                move |git| git.merge(&epic, &commit, &message, MergeFavor::None)
            })
            .await;
        let outcome = match merged {
            Ok(outcome) => outcome,
            Err(stop) => {
                // A refused merge leaves the epic worktree as it was; make sure of it.
                self.rollback(&checkpoint, "the merge failed").await;
                remove_journal(&self.shared, journal_path.to_path_buf()).await;
                return Err(stop);
            }
        };
        let commit = match outcome {
            MergeOutcome::Conflict { paths } => {
                remove_journal(&self.shared, journal_path.to_path_buf()).await;
                self.emit(Event::MergeConflicted {
                    story: self.id().to_owned(),
                    paths: paths.clone(),
                });
                return Err(Failure::MergeConflict {
                    branch: self.branch.clone(),
                    epic_branch: shared.epic_branch.clone(),
                    paths,
                }
                .into());
            }
            MergeOutcome::UpToDate => None,
            MergeOutcome::Merged(commit) => Some(commit),
        };
        Ok((checkpoint, commit))
    }

    /// Records the attestation of the proven merge `commit` (on the epic head `checkpoint`) of
    /// the story commit `checked` ([`Attestation`]): in the epic's state and as its git note.
    /// Best effort: a merge without it is proven all the same, and `epic verify` names it; a
    /// note says why.
    async fn attest(
        &self,
        [checkpoint, commit]: [CommitId; 2],
        checked: CommitId,
        judge: Option<&str>,
        gates: Vec<AttestedGate>,
    ) {
        let shared = &self.shared;
        let epic = shared.epic_worktree.clone();
        let tree = {
            let (git, epic) = (Arc::clone(&shared.git), epic.clone());
            offload::blocking(move || {
                git.first_parent_line(&epic, Some(&checkpoint), &commit.to_hex())
                    .map(|(line, _)| line.last().map(|last| last.tree.clone()))
            })
            .await
        };
        let tree = match tree {
            Ok(Ok(Some(tree))) => tree,
            Ok(Ok(None)) => String::new(),
            Ok(Err(error)) => {
                self.note(format!(
                    "the merge {commit} could not be attested: {}",
                    chain(&error)
                ));
                return;
            }
            Err(error) => {
                self.note(format!("the merge {commit} could not be attested: {error}"));
                return;
            }
        };
        let attestation = Attestation {
            kind: AttestedKind::Story,
            epic: shared.dir.epic_id().to_owned(),
            run: shared.run,
            commit: commit.to_hex(),
            story: Some(self.id().to_owned()),
            checked: Some(checked.to_hex()),
            perimeter: Some("passed".to_owned()),
            test_guard: Some("passed".to_owned()),
            judge: shared.config.judge.as_ref().map(|seat| JudgeVerdict {
                seat: seat.name().to_owned(),
                verdict: "cleared".to_owned(),
                note: judge.map(str::to_owned),
            }),
            gates,
            gated_commit: commit.to_hex(),
            gated_tree: tree,
        };
        let (git, dir, guard) = (
            Arc::clone(&shared.git),
            shared.dir.clone(),
            Arc::clone(&shared.guard),
        );
        let recorded = offload::blocking(move || {
            attestation.record(git.as_ref(), &dir, &epic, |path, attestation| {
                guard.epic_write(path, || {
                    epic_state_store::save(path, attestation).map_err(|error| chain(&error))
                })
            })
        })
        .await;
        let failed = match recorded {
            Ok(Ok(())) => return,
            Ok(Err(error)) => error,
            Err(error) => error.to_string(),
        };
        self.note(format!(
            "the merge {commit} could not be attested: {failed}"
        ));
    }

    /// Runs the gates on the merged epic head. Strict: every gate must pass. With a red
    /// baseline allowed: only a gate that passed on the head before the merge may not fail.
    /// Green, the verdict becomes the new baseline. Returns each gate as it ran, for the
    /// merge's attestation.
    async fn prove(&self, head: &mut EpicHead, commit: String) -> Result<Vec<AttestedGate>, Stop> {
        let shared = &self.shared;
        let story = self.id().to_owned();
        let events = Arc::clone(&shared.events);
        let ran = Arc::new(std::sync::Mutex::new(Vec::new()));
        let known_red: BTreeSet<String> = shared
            .epic_gates
            .commands()
            .iter()
            .filter(|command| shared.config.allow_red_baseline && !head.green.contains(*command))
            .cloned()
            .collect();
        let on_result = {
            let ran = Arc::clone(&ran);
            move |result: &GateResult| {
                ran.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(AttestedGate::from_result(
                        result,
                        known_red.contains(&result.command),
                    ));
                events(Event::EpicGate {
                    story: Some(story.clone()),
                    command: result.command.clone(),
                    passed: result.passed,
                    duration_ms: millis(result),
                    status: result.status.clone(),
                });
                if let Some(event) = result.leftovers_event(Some(&story)) {
                    events(event);
                }
            }
        };
        let env = vec![
            ("EPIC_EPIC".to_owned(), shared.dir.epic_id().to_owned()),
            ("EPIC_STORY".to_owned(), self.id().to_owned()),
            (
                "EPIC_WORKTREE".to_owned(),
                shared.epic_worktree.display().to_string(),
            ),
        ];
        let results = if shared.config.allow_red_baseline {
            shared
                .epic_gates
                .run_each(&shared.epic_worktree, &env, &self.cancel, &on_result)
                .await
                .map_err(|_| Stop::Cancelled)?
        } else {
            let review = shared
                .epic_gates
                .run(&shared.epic_worktree, &env, &self.cancel, &on_result)
                .await
                .map_err(|_| Stop::Cancelled)?;
            if !review.clean {
                return Err(Failure::EpicGatesRed(review).into());
            }
            Vec::new()
        };
        let regressions: Vec<_> = results
            .iter()
            .filter(|(result, _)| !result.passed && head.green.contains(&result.command))
            .filter_map(|(_, issue)| issue.clone())
            .collect();
        if !regressions.is_empty() {
            return Err(Failure::EpicGatesRegressed(regressions).into());
        }
        let baseline = GateBaseline {
            commit,
            gates: shared
                .epic_gates
                .commands()
                .iter()
                .map(|command| GateVerdict {
                    command: command.clone(),
                    passed: !shared.config.allow_red_baseline
                        || results
                            .iter()
                            .any(|(result, _)| result.command == *command && result.passed),
                })
                .collect(),
        };
        head.green = baseline.passed();
        let dir = shared.dir.clone();
        let saved = shared
            .write(GateBaseline::path(&dir), move |_| {
                baseline.save(&dir).map_err(|error| chain(&error))
            })
            .await
            .unwrap_or_else(|error| Err(error.to_string()));
        if let Err(error) = saved {
            self.note(format!("the gate baseline could not be cached: {error}"));
        }
        let ran = std::mem::take(
            &mut *ran
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        Ok(ran)
    }

    /// Resets the epic worktree to `checkpoint`.
    async fn rollback(&self, checkpoint: &CommitId, why: &str) {
        let epic = self.shared.epic_worktree.clone();
        let to = *checkpoint;
        let result = offload::git(&self.shared.git, "undo the merge", move |git| {
            let head = git.checkpoint(&epic).map_err(|error| error.to_string());
            let status = git
                .status(&epic, &[])
                .map_or(true, |status| status.is_dirty());
            if head.as_ref().is_ok_and(|head| *head == to) && !status {
                return Ok(false);
            }
            git.rollback(&epic, &to).map(|()| true)
        })
        .await;
        match result {
            Ok(true) => self.emit(Event::StoryRolledBack {
                story: self.id().to_owned(),
                to: checkpoint.to_hex(),
                reason: why.to_owned(),
            }),
            Ok(false) => {}
            Err(error) => self.emit(Event::RunNote {
                message: format!(
                    "the merge of story '{}' could not be undone ({}); reset the epic \
                     worktree `{}` to {checkpoint} by hand",
                    self.id(),
                    git_reason(&error),
                    self.shared.epic_worktree.display()
                ),
            }),
        }
    }
}

/// Removes the merge journal once its merge is proven or undone; best effort (a journal left
/// behind names a merge the next run finds recorded or undoes again).
async fn remove_journal(shared: &Shared, path: PathBuf) {
    shared
        .write(path, |path| epic_state_store::remove(path).ok())
        .await
        .ok();
}
