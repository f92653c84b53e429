//! One batch of the merge queue ([`Batch`]): what it holds (its stories, as [`Entry`]s of the
//! candidate, the proven head it builds on, the stories still pending) and its course: the
//! candidate made, gated and, red, bisected down to its culprits. By concern, in the files
//! beside it: `candidate.rs` the candidate made (the epic checked, each story merged in turn),
//! `proof.rs` the gates' verdict on a candidate, `verdict.rs` a candidate accepted or a culprit
//! pinned and its merge undone, `attestation.rs` the proof each accepted merge carries.

use std::sync::Arc;

use epic_git_ops::CommitId;
use epic_process::chain;
use epic_process::offload::{BoxError, GitFailed};
use tokio_util::sync::CancellationToken;

use super::journal::{MergeJournal, ProvenCandidate, remove_journal};
use crate::failure::{Failure, Stop};
use crate::queue::Request;
use crate::shared::{EpicHead, Shared};
use epic_events::Event;

/// A story of a batch merged into the candidate: the head before and after its merge.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) request: Request,
    pub(super) parent: CommitId,
    pub(super) tip: CommitId,
    /// Its merge commit; `None` when the epic branch already had it all (then `tip == parent`).
    pub(super) commit: Option<CommitId>,
}

impl Entry {
    pub(super) fn id(&self) -> &str {
        &self.request.story.id
    }
}

/// One batch of the merge queue, integrated under the merge lock by whichever story took it.
pub(super) struct Batch<'a> {
    pub(super) shared: &'a Arc<Shared>,
    /// The integrating story's token when the batch is its own request alone, else the run's:
    /// cancelled by an interrupt or fail-fast (and, alone, by `epic stop`).
    pub(super) cancel: &'a CancellationToken,
    pub(super) head: &'a mut EpicHead,
    pub(super) number: u64,
    /// More than one story: batch events are emitted.
    pub(super) several: bool,
    /// The proven epic head: everything below it is proven.
    pub(super) base: CommitId,
    /// The stories neither proven nor failed yet, in merge order (the journal's).
    pub(super) pending: Vec<String>,
    /// Gate runs of this batch so far (the bisection step of the next).
    pub(super) steps: u32,
}

impl<'a> Batch<'a> {
    pub(super) fn new(
        shared: &'a Arc<Shared>,
        cancel: &'a CancellationToken,
        head: &'a mut EpicHead,
        number: u64,
    ) -> Self {
        Self {
            shared,
            cancel,
            head,
            number,
            several: false,
            base: shared.proven(),
            pending: Vec::new(),
            steps: 0,
        }
    }

    pub(super) fn emit(&self, event: Event) {
        (self.shared.events)(event);
    }

    /// Integrates `requests` as one batch; answers every one of them.
    pub(super) async fn integrate(mut self, requests: Vec<Request>) {
        if self.cancel.is_cancelled() {
            for request in requests {
                request.reply.send(Err(Stop::Cancelled)).ok();
            }
            return;
        }
        self.several = requests.len() > 1;
        let Some(requests) = self.check_epic(requests).await else {
            return;
        };
        self.base = self.shared.proven();
        self.pending = requests
            .iter()
            .map(|request| request.story.id.clone())
            .collect();
        if let Err(error) = self.journal(None).await {
            for request in requests {
                let failure = Failure::JournalNotWritten(error.to_string().into());
                request.reply.send(Err(failure.into())).ok();
            }
            return;
        }
        if self.several {
            self.emit(Event::MergeBatch {
                batch: self.number,
                stories: self.pending.clone(),
                checkpoint: self.base.to_hex(),
            });
        }
        let mut checked = Vec::with_capacity(requests.len());
        for request in requests {
            match self.check_branch_unmoved(&request).await {
                Ok(()) => checked.push(request),
                Err(stop) => self.answer_failed(request, stop),
            }
        }
        let chain = self.build(checked).await;
        self.settle(chain).await;
        if self.pending.is_empty() {
            remove_journal(self.shared, self.shared.dir.merge_journal()).await;
        }
    }

    /// Proves the chain `chain` built on the proven head: gates it whole; red, bisects it.
    async fn settle(&mut self, chain: Vec<Entry>) {
        let mut todo: Vec<(Vec<Entry>, Option<Failure>)> = vec![(chain, None)];
        while let Some((segment, red)) = todo.pop() {
            if self.cancel.is_cancelled() {
                todo.push((segment, None));
                self.interrupted(todo.into_iter().flat_map(|(segment, _)| segment))
                    .await;
                return;
            }
            // Built on a head that is no longer the proven one (a culprit before it was
            // dropped): merged again on the proven head, together with every part still to
            // come (all built on it too), as one new candidate whose verdict is unknown.
            let (mut segment, red) = match segment.first() {
                Some(first) if first.parent != self.base => {
                    let mut requests: Vec<Request> =
                        segment.into_iter().map(|entry| entry.request).collect();
                    while let Some((later, _)) = todo.pop() {
                        requests.extend(later.into_iter().map(|entry| entry.request));
                    }
                    (self.build(requests).await, None)
                }
                _ => (segment, red),
            };
            if segment.is_empty() {
                continue;
            }
            let red = match red {
                Some(red) => red,
                None => match self.gate(&segment).await {
                    Ok(results) => {
                        self.accept(segment, &results).await;
                        continue;
                    }
                    Err(Stop::Cancelled) => {
                        todo.push((segment, None));
                        self.interrupted(todo.into_iter().flat_map(|(segment, _)| segment))
                            .await;
                        return;
                    }
                    Err(Stop::Failed(red)) => red,
                },
            };
            if segment.len() == 1 {
                if let Some(culprit) = segment.pop() {
                    self.pin(culprit, red).await;
                }
                continue;
            }
            // Bisect: the first half on the proven head, then the rest on top of what proved
            // green; if the first half proves green, the rest on it is the candidate just
            // seen red.
            let rest = segment.split_off(segment.len() / 2);
            todo.push((rest, Some(red)));
            todo.push((segment, None));
        }
    }

    /// Answers every one of `requests` with its `failure`.
    pub(super) fn fail_all(requests: Vec<Request>, failure: impl Fn(&Request) -> Failure) {
        for request in requests {
            let failure = failure(&request);
            request.reply.send(Err(failure.into())).ok();
        }
    }

    pub(super) fn answer_failed(&mut self, request: Request, stop: Stop) {
        self.pending.retain(|story| *story != request.story.id);
        request.reply.send(Err(stop)).ok();
    }

    /// Writes the journal: the pending stories on the proven head, and `proven` if given.
    pub(super) async fn journal(&self, proven: Option<ProvenCandidate>) -> Result<(), BoxError> {
        let journal = MergeJournal {
            stories: self.pending.clone(),
            checkpoint: self.base.to_hex(),
            proven,
        };
        let saved = self
            .shared
            .write(self.shared.dir.merge_journal(), move |path| {
                epic_state_store::save(path, &journal)
            })
            .await;
        match saved {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(Box::new(error)),
            Err(error) => Err(Box::new(error)),
        }
    }
}

/// The same failure again, for another story of the batch.
pub(super) fn copy_git_failed(error: &GitFailed) -> GitFailed {
    GitFailed {
        action: error.action.clone(),
        source: chain(error.source.as_ref()).into(),
    }
}
