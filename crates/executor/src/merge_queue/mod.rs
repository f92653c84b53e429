//! The merge queue: integration onto the epic branch, a run-wide concern. A story whose checks
//! passed enqueues its checked commit and waits (its step 7, `story/integrate.rs`); whichever
//! story takes the merge lock integrates up to `--merge-batch` waiting stories, in the order they
//! became ready, as one batch: the epic branch must still be at the proven head and its worktree
//! clean; the batch is journaled (`merging.json`), each story branch (still at the commit its
//! checks passed on) merged in turn into a candidate on the epic worktree (a conflict fails that
//! story alone), and the gates run once on the candidate. Green, every story of it is proven
//! (each keeps its own merge commit; the candidate's head is the new proven head, recorded in the
//! stories' states and in `proven.json`). Red, the batch is bisected: the first half gated on
//! the proven head, the rest on top of what proved green, until each culprit is alone on the
//! proven head with red gates; a culprit fails with the gate output of that smallest red
//! candidate and its merge is undone, and the rest merge. The outcome is the one integrating one
//! at a time gives: a story that turns the gates red fails, and of two stories red only
//! together, the later one. A batch of one is exactly that one-at-a-time integration.
//!
//! Why bisection rather than speculative parallel gating (several candidates gated at once in
//! separate worktrees, as Zuul does): the goal is the fewest gate runs on a machine of a few
//! cores where the gate (a test suite) uses them all, so candidates gated at once only share
//! the cores; speculation pays only when gates are latency-bound (a `sleep`, a remote CI), and
//! it needs a worktree per candidate. A green batch, the common case, costs one gate run either
//! way.
//!
//! By concern:
//!
//! - `drain`: a batch taken out of the line of stories waiting (the crate's `queue.rs`,
//!   [`MergeQueue`](crate::queue::MergeQueue)) under the merge lock;
//! - `batch`: one batch ([`Batch`](batch::Batch)), what it holds and its course: integrated,
//!   its candidate gated whole and, red, bisected;
//! - `candidate`: the candidate made: the epic checked, each story merged in turn onto the
//!   proven head, the epic worktree moved to it;
//! - `proof`: the gates run once on a candidate, and their verdict;
//! - `verdict`: a green candidate accepted (its merges proven), a culprit pinned, an
//!   interrupted batch undone, and the rollback they share;
//! - `attestation`: the proof each accepted merge carries;
//! - `journal`: `merging.json` ([`MergeJournal`]) and the proven head (`proven.json`,
//!   [`ProvenHead`](epic_branch::ProvenHead)).

mod attestation;
mod batch;
mod candidate;
mod drain;
mod journal;
mod proof;
mod verdict;

pub(crate) use drain::drain;
pub(crate) use journal::{MergeJournal, ProvenCandidate, names};
