//! The line of stories waiting to integrate, in the order they became ready ([`MergeQueue`]):
//! every story enqueues its checked commit here and waits for its answer; whichever story takes
//! the merge lock takes a batch out (`merge_queue::drain`) and integrates it.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use epic_git_ops::CommitId;
use epic_story_plan::Story;
use tokio::sync::oneshot;

use crate::failure::Stop;

/// The stories ready to integrate, in the order they became ready, and the run's batch count.
#[derive(Debug, Default)]
pub(crate) struct MergeQueue {
    waiting: std::sync::Mutex<VecDeque<Request>>,
    /// Tickets handed out, to withdraw a request; and batches begun, to number them.
    tickets: AtomicU64,
    batches: AtomicU64,
}

/// One story waiting in the queue, and where its outcome goes.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) ticket: u64,
    pub(crate) story: Arc<Story>,
    pub(crate) branch: String,
    pub(crate) worktree: PathBuf,
    /// The commit of the story branch that passed every check: exactly that commit is merged.
    pub(crate) checked: CommitId,
    /// The judge's note, for the merge's attestation.
    pub(crate) judge: Option<String>,
    /// The seat of the judge's roster that cleared it, for the attestation.
    pub(crate) judge_seat: Option<String>,
    pub(crate) reply: oneshot::Sender<Result<Merged, Stop>>,
}

/// A story's merge, proven.
#[derive(Debug)]
pub(crate) struct Merged {
    /// Its merge commit; `None` when the epic branch already had it all.
    pub(crate) commit: Option<CommitId>,
    /// The stories proven together with it by one gate run, itself included; empty when it
    /// was proven alone.
    pub(crate) together: Vec<String>,
}

impl MergeQueue {
    pub(crate) fn push(&self, request: impl FnOnce(u64) -> Request) -> u64 {
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        self.lock().push_back(request(ticket));
        ticket
    }

    /// Takes out the first `most` waiting requests.
    pub(crate) fn take(&self, most: usize) -> Vec<Request> {
        let mut waiting = self.lock();
        let count = waiting.len().min(most.max(1));
        waiting.drain(..count).collect()
    }

    /// Takes request `ticket` back out, if no batch took it yet.
    pub(crate) fn withdraw(&self, ticket: u64) -> bool {
        let mut waiting = self.lock();
        let before = waiting.len();
        waiting.retain(|request| request.ticket != ticket);
        waiting.len() != before
    }

    /// Numbers a batch begun: 1, 2, …
    pub(crate) fn next_batch(&self) -> u64 {
        self.batches.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Request>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
