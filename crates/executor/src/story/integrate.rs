//! Step 7 of a story: integration, through the run's merge queue ([`MergeQueue`]): the story
//! enqueues its checked commit and waits for its batch to prove or fail it, taking the merge
//! lock to integrate a batch itself when its turn comes (`merge_queue/`).

use std::sync::Arc;

use epic_report::InPlace;
use tokio::sync::oneshot;

use super::judge::Judgement;
use super::work::Work;
#[cfg(doc)]
use crate::failure::Failure;
use crate::failure::Stop;
#[cfg(doc)]
use crate::queue::MergeQueue;
use crate::queue::Request;
use epic_events::Event;

impl Work {
    /// Integrates the story through the merge queue: enqueues exactly commit `checked` (the
    /// story branch's commit that passed every check; a branch that moved since fails the story,
    /// [`Failure::BranchMovedAfterChecks`]) and waits for its batch to prove or fail it, taking
    /// the merge lock to integrate a batch itself when its turn comes. The judge's note passes
    /// through. Its worktree is not removed here: the story ends once its merge is recorded, and
    /// the run loop removes the worktree ([`remove_merged_worktree`](super::remove_merged_worktree))
    /// while the dependents start.
    pub(super) async fn integrate(&mut self, judgement: Judgement) -> Result<Integrated, Stop> {
        let Judgement {
            note: judge,
            cleared: checked,
            in_place,
            seat: judge_seat,
        } = judgement;
        let shared = Arc::clone(&self.shared);
        let (reply, mut outcome) = oneshot::channel();
        let ticket = shared.queue.push(|ticket| Request {
            ticket,
            story: Arc::clone(&self.story),
            branch: self.branch.clone(),
            worktree: self.worktree.clone(),
            checked,
            judge: judge.clone(),
            judge_seat,
            reply,
        });
        self.emit(Event::MergeQueued {
            story: self.id().to_owned(),
        });
        let merged = loop {
            match outcome.try_recv() {
                Ok(result) => break result,
                Err(oneshot::error::TryRecvError::Closed) => break Err(Stop::Cancelled),
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            tokio::select! {
                biased;
                result = &mut outcome => break result.unwrap_or(Err(Stop::Cancelled)),
                () = self.cancel.cancelled() => {
                    if shared.queue.withdraw(ticket) {
                        break Err(Stop::Cancelled);
                    }
                    // A batch holds it: it answers once it is proven, failed or undone.
                    break (&mut outcome).await.unwrap_or(Err(Stop::Cancelled));
                }
                mut head = shared.merge.lock() => {
                    crate::merge_queue::drain(
                        &shared,
                        (&self.cancel, &self.batches),
                        &self.story.id,
                        &mut head,
                    )
                    .await;
                }
            }
        }?;
        self.has_state = true;
        self.merged = true;
        self.emit(Event::StoryMerged {
            story: self.id().to_owned(),
            commit: merged.commit.map(|commit| commit.to_hex()),
            judge: judge.clone(),
            in_place: in_place.clone(),
        });
        Ok(Integrated {
            judge,
            proven_with: merged.together,
            in_place,
        })
    }
}

/// A story's integration, for the run loop: the judge's note, the stories proven together with
/// it by one gate run (itself included; empty when alone), and the evidence of a story found
/// already in place.
#[derive(Debug, Default)]
pub(super) struct Integrated {
    pub(super) judge: Option<String>,
    pub(super) proven_with: Vec<String>,
    /// The checked evidence of a story found already in place.
    pub(super) in_place: Option<InPlace>,
}
