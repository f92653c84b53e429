//! A batch's verdict carried out: a green candidate accepted (the one place a merge becomes
//! proven: attested, journaled, the stories' states and the proven head recorded, each story
//! answered), a culprit pinned and its merge undone, an interrupted batch's merges undone, and
//! the rollback of the epic worktree they share.

use epic_git_ops::CommitId;
use epic_process::{chain, offload};
use epic_state_store::{StoryStage, StoryState};

use super::batch::{Batch, Entry};
use super::journal::{ProvenCandidate, ProvenMerge};
use crate::failure::{Failure, Stop, git_reason};
use crate::queue::{Merged, Request};
use crate::shared::Shared;
use epic_branch::ProvenHead;
use epic_events::Event;
use epic_gates::GateResult;

impl Batch<'_> {
    /// The one place a story's merge is known proven: the candidate `segment` ends in passed
    /// the gates (`results`, run on its head, `segment`'s last `tip`), so every story of it is
    /// merged. The journal records the proven candidate first (a crash from here on finishes
    /// recording it), then each story's state, the proven head, and the journal moves on.
    pub(super) async fn accept(&mut self, segment: Vec<Entry>, results: &[GateResult]) {
        let Some(tip) = segment.last().map(|entry| entry.tip) else {
            return;
        };
        // Attested before anything records the merges as proven (the journal's proven
        // candidate, the states): a merge is attested by the time any record of it is.
        self.attest(&segment, results, tip).await;
        let proven = ProvenCandidate {
            head: tip.to_hex(),
            merges: segment
                .iter()
                .map(|entry| ProvenMerge {
                    story: entry.id().to_owned(),
                    commit: entry.commit.unwrap_or(entry.tip).to_hex(),
                })
                .collect(),
        };
        let journaled = self.journal(Some(proven)).await;
        let mut saved = Vec::with_capacity(segment.len());
        for entry in &segment {
            saved.push(
                save_merged(
                    self.shared,
                    &entry.request,
                    entry.commit.unwrap_or(entry.tip),
                )
                .await,
            );
        }
        if tip != self.base {
            *self
                .shared
                .proven
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = tip;
            if let Err(error) =
                ProvenHead::record(&self.shared.dir, tip, Some(&self.shared.guard)).await
            {
                self.emit(Event::RunNote {
                    message: format!(
                        "the proven epic head could not be recorded: {}",
                        chain(error.as_ref())
                    ),
                });
            }
        }
        self.base = tip;
        let stories: Vec<String> = segment.iter().map(|entry| entry.id().to_owned()).collect();
        self.pending.retain(|story| !stories.contains(story));
        if journaled.is_ok() && !self.pending.is_empty() {
            self.journal(None).await.ok();
        }
        if self.several {
            self.emit(Event::BatchProven {
                batch: self.number,
                stories: stories.clone(),
                commit: tip.to_hex(),
            });
        }
        let together = if segment.len() > 1 {
            stories
        } else {
            Vec::new()
        };
        for (entry, saved) in segment.into_iter().zip(saved) {
            let answer = saved.map(|()| Merged {
                commit: entry.commit,
                together: together.clone(),
            });
            entry.request.reply.send(answer).ok();
        }
    }

    /// Fails `culprit`, alone on the proven head with red gates (`red`): its merge is undone.
    pub(super) async fn pin(&mut self, culprit: Entry, red: Failure) {
        let story = culprit.id().to_owned();
        self.rollback(
            self.base,
            std::slice::from_ref(&story),
            "the gates turned red",
        )
        .await;
        let failure = if self.several {
            self.emit(Event::CulpritPinned {
                batch: self.number,
                story: story.clone(),
                commit: culprit.tip.to_hex(),
            });
            Failure::Culprit {
                batch: self.number,
                cause: Box::new(red),
            }
        } else {
            red
        };
        self.answer_failed(culprit.request, failure.into());
    }

    /// Interrupted before `unproven` were proven: their merges are undone and each ends
    /// cancelled.
    pub(super) async fn interrupted(&mut self, unproven: impl Iterator<Item = Entry>) {
        let unproven: Vec<Entry> = unproven.collect();
        let stories: Vec<String> = unproven
            .iter()
            .filter(|entry| entry.commit.is_some())
            .map(|entry| entry.id().to_owned())
            .collect();
        self.rollback(
            self.base,
            &stories,
            "the run was interrupted, or the story stopped, before its gates finished",
        )
        .await;
        for entry in unproven {
            self.answer_failed(entry.request, Stop::Cancelled);
        }
    }

    /// Resets the epic worktree to `to`, undoing the merges of `stories` (each told so).
    pub(super) async fn rollback(&self, to: CommitId, stories: &[String], why: &str) {
        let epic = self.shared.epic_worktree.clone();
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
        for story in stories {
            match &result {
                Ok(true) => self.emit(Event::StoryRolledBack {
                    story: story.clone(),
                    to: to.to_hex(),
                    reason: why.to_owned(),
                }),
                Ok(false) => {}
                Err(error) => self.emit(Event::RunNote {
                    message: format!(
                        "the merge of story '{story}' could not be undone ({}); reset the epic                          worktree `{}` to {to} by hand",
                        git_reason(error),
                        self.shared.epic_worktree.display()
                    ),
                }),
            }
        }
    }
}

/// Records `request`'s story merged, its merge held by `holds`.
async fn save_merged(shared: &Shared, request: &Request, holds: CommitId) -> Result<(), Stop> {
    let path = shared
        .dir
        .story_state(&request.story.id)
        .map_err(Failure::UnsafeId)?;
    let state = StoryState {
        id: request.story.id.clone(),
        hash: epic_story_plan::story_hash(&request.story),
        branch: request.branch.clone(),
        worktree: request.worktree.clone(),
        status: StoryStage::Merged,
        merge: Some(holds.to_hex()),
        hold: None,
    };
    let saved = shared
        .write(path, move |path| epic_state_store::save(path, &state))
        .await;
    match saved {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(Failure::StateNotSaved(Some(error)).into()),
        Err(_) => Err(Failure::StateNotSaved(None).into()),
    }
}
