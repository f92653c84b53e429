//! The task loop's parts ([`TaskLoop`]): the git, gates, seats, options and event sink every
//! story's run of the loop borrows, and the run's guard, budget and seat pauses around each turn.

use std::fmt;
use std::sync::Arc;

use epic_git_ops::Git;

use epic_chat::SeatPauses;
use epic_events::EventSink;
use epic_gates::Gates;
use epic_guard::TurnGuard;

#[cfg(doc)]
use super::job::StoryJob;
use super::job::{LoopConfig, Seats};
#[cfg(doc)]
use crate::error::StoryError;
#[cfg(doc)]
use epic_chat::Chat;
#[cfg(doc)]
use epic_events::Event;

/// The inner loop of one story: seats, gates and git, reused for every story of a run.
///
/// # Design
///
/// Everything the loop touches is passed in ([`Git`], [`Gates`], [`Seats`], an [`EventSink`]),
/// nothing is global, and [`run`](Self::run) borrows `&self`, so one `TaskLoop` in an `Arc` can
/// run many stories at once on a multi-threaded runtime (its futures are `Send`). Git calls and
/// the checkpoint's reads and writes block, so each runs in `spawn_blocking`. The checkpoint is
/// the only durable state: it is written (atomically) after the planner and after each task's
/// commit, never before, so a run killed at any instant redoes at most the task it was in, and a
/// rerun never re-plans.
///
/// Per story:
///
/// 1. **Plan**, unless the checkpoint exists (it wins, even if the plan changed: a changed
///    story is the scheduler's to restart). The coder, as planner, replies with the task list
///    as JSON; an unreadable reply is asked again once with the parse error, a second one
///    plans a single task, the whole story. A list longer than `max_tasks` is sent back once
///    with its length and the cap, and fails the story ([`StoryError::TooManyTasks`]) if the
///    re-plan is not within it. Tasks that name paths outside the story
///    ([`epic_perimeter::stray_tasks`]) are sent back once; tasks still naming another story's
///    paths are then dropped, unless that would drop them all (a re-plan longer than the cap
///    keeps the first plan).
/// 2. **Per open task**, a fresh coder chat whose standing instructions hold the perimeter
///    rules, the `BLOCKED_ON:` rule, that the runtime owns git, the story, and the plan so far.
///    A turn that changed nothing (no dirty path, no new commit) is asked once whether the task
///    is already satisfied (`TASK_ALREADY_SATISFIED`): if so it is ticked without a commit.
///    If it still changed nothing without confirming, the no-op policy decides
///    ([`LoopConfig::noop`]): `complete` ticks it with a warning
///    ([`Event::TaskNoopUnconfirmed`]) while its gates are green, `fail` fails the story.
/// 3. **Review rounds**, up to `max_rounds`: the gates and the perimeter gate (every path
///    changed against the epic branch, committed or not); red sends the issues to the coder;
///    green asks the reviewers (concurrently), whose issues go to the coder. A clean round, or
///    the last one, settles the task. The gates must be green to commit, else the story fails
///    naming the gate; unresolved reviewer issues do not block.
/// 4. **Commit** `<story>: <task>` if the worktree is still on the story branch, then tick.
///
/// **Nothing is committed that no coder turn confirmed.** epic commits a task's work only after
/// a coder turn of that task that replied, and a turn replies on the worktree as it finds it: so
/// every coder turn that takes up an attempt that never replied is told, after its prompt, what
/// the worktree holds uncommitted ([`Chat::telling_leftovers`]): a request the chat runs again
/// (after a stall, a loop, a usage limit or an outage, on this seat or the roster's next), an
/// attempt the seat retries after a transient failure, and the first turn of a task on a
/// worktree a killed run left changes in. A task whose turn fails puts the worktree back at its
/// checkpoint (`Run::reject`), so a stopped attempt's changes are committed only after a
/// later turn, told of them, replied. What the worktree still holds after the last task
/// (a killed run's changes with no open task to take them up) is set aside the same way
/// (`Run::set_aside_leftovers`); the story's catch-up never commits uncommitted changes.
///
/// A coder reply whose last non-empty line is `BLOCKED_ON: <need>` is checked against the plan
/// (and, if the plan cannot settle it, by the verifier seat): a claim on the story's own path, a
/// merged dependency's or a dependent's gets one pushback turn saying so, once per story; any
/// other claim, or a second one, ends the story at once as [`StoryError::Blocked`] (the
/// reference ran on to the end of the loop first; stopping saves the turns of a story that fails
/// anyway). An agent that commits on its own is tolerated: its
/// commits are on the story branch and count. One that switches its worktree to another branch
/// fails the story before anything is committed.
pub struct TaskLoop {
    pub(super) git: Arc<dyn Git>,
    pub(super) gates: Gates,
    pub(super) seats: Seats,
    pub(super) config: LoopConfig,
    pub(super) events: EventSink,
    /// The guard on epic's files, checked after every turn; none for a loop run on its own.
    pub(super) guard: Option<Arc<TurnGuard>>,
    /// The run's budget, checked before every turn; none for a loop run on its own.
    pub(super) budget: Option<Arc<epic_chat::Budget>>,
    /// The run's seat pauses around every turn; none for a loop run on its own.
    pub(super) pauses: Option<Arc<SeatPauses>>,
}

impl fmt::Debug for TaskLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLoop")
            .field("gates", &self.gates)
            .field("seats", &self.seats)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl TaskLoop {
    /// A loop over these parts.
    pub fn new(
        git: Arc<dyn Git>,
        gates: Gates,
        seats: Seats,
        config: LoopConfig,
        events: EventSink,
    ) -> Self {
        Self {
            git,
            gates,
            seats,
            config,
            events,
            guard: None,
            budget: None,
            pauses: None,
        }
    }

    /// This loop with the run's `budget` checked before every agent turn.
    #[must_use]
    pub(crate) fn with_budget(mut self, budget: Arc<epic_chat::Budget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// This loop with the run's seat pauses around every agent turn.
    #[must_use]
    pub(crate) fn with_pauses(mut self, pauses: Arc<SeatPauses>) -> Self {
        self.pauses = Some(pauses);
        self
    }

    /// This loop with `guard` checked after every agent turn, and its checkpoint writes made
    /// through it.
    #[must_use]
    pub(crate) fn with_guard(mut self, guard: Arc<TurnGuard>) -> Self {
        self.guard = Some(guard);
        self
    }
}
