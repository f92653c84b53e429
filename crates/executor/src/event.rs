//! What the executor reports as it works: typed [`Event`]s, sent to an [`EventSink`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::seat::Role;

/// One step of a story's work, as the live view shows it and `events.jsonl` records it.
///
/// Serialised with a `snake_case` `kind` tag: `{"kind":"task_committed","story":"a",…}`. The
/// writer of `events.jsonl` adds the `"at"` timestamp (`state_store::now_rfc3339`). The
/// scheduler adds its own kinds, hence `#[non_exhaustive]`.
///
/// ```
/// use executor::Event;
///
/// let event = Event::TaskCommitted {
///     story: "cart-api".into(),
///     task: "Add the model".into(),
///     commit: Some("e69de29b".into()),
/// };
/// let json = serde_json::to_string(&event)?;
/// assert!(json.starts_with(r#"{"kind":"task_committed","story":"cart-api""#));
/// assert_eq!(serde_json::from_str::<Event>(&json)?, event);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// An agent turn began.
    TurnStarted {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The seat's name.
        seat: String,
        /// The turn's number within the story (its transcript file's number).
        turn: u32,
        /// The task, for coder turns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
    },
    /// A piece of a turn's output, as it streams (high volume: a log may skip these).
    TurnOutput {
        /// The story.
        story: String,
        /// The turn's number.
        turn: u32,
        /// The text.
        text: String,
    },
    /// A turn's attempt failed with a transient error and is tried again.
    TurnRetried {
        /// The story.
        story: String,
        /// The turn's number.
        turn: u32,
        /// The attempt that failed, from 1.
        attempt: u32,
        /// Milliseconds until the next attempt.
        delay_ms: u64,
        /// The end of the failed attempt's output.
        reason: String,
    },
    /// An agent turn ended.
    TurnEnded {
        /// The story.
        story: String,
        /// The turn's role.
        role: Role,
        /// The turn's number.
        turn: u32,
        /// Whether it ended normally.
        ok: bool,
        /// Estimated tokens of the turn (prompt and reply).
        estimated_tokens: u64,
        /// Why it failed, when it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The story's tasks are known: planned now, or read from the checkpoint.
    TasksPlanned {
        /// The story.
        story: String,
        /// The task titles, in order.
        tasks: Vec<String>,
        /// How many of them were already done (resumed from the checkpoint).
        done: usize,
        /// Whether they came from an existing checkpoint rather than the planner.
        resumed: bool,
    },
    /// A task began.
    TaskStarted {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
        /// Its position, from 1.
        index: usize,
        /// How many tasks the plan has.
        of: usize,
    },
    /// A task's work was committed on the story branch and ticked in the checkpoint.
    TaskCommitted {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
        /// The commit, or `None` when the agent had committed the work itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
    },
    /// A task changed nothing and the coder confirmed it was already satisfied; ticked without
    /// a commit.
    TaskNoop {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
    },
    /// One review round of a task: gates and perimeter, then reviewers if those were green.
    ReviewRound {
        /// The story.
        story: String,
        /// The task's title.
        task: String,
        /// The round, from 1.
        round: u32,
        /// Whether the round was clean.
        clean: bool,
        /// How many issues it found.
        issues: usize,
        /// The round's summary (`gate failed: cargo test`, `perimeter: violated`, …).
        summary: String,
    },
    /// A gate command passed.
    GatePassed {
        /// The story.
        story: String,
        /// The command.
        command: String,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// A gate command failed (non-zero exit, deadline, or could not start).
    GateFailed {
        /// The story.
        story: String,
        /// The command.
        command: String,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
        /// What happened, in words (`exit code 1`, `timed out after 30s`).
        status: String,
    },
    /// The coder ended a reply with `BLOCKED_ON: <need>`: the story stops.
    Blocked {
        /// The story.
        story: String,
        /// What it needs.
        need: String,
    },
    /// Something worth telling that is not one of the steps above (a re-plan, a fallback, a
    /// transcript that could not be written).
    Note {
        /// The story.
        story: String,
        /// The message.
        message: String,
    },
}

/// Where events go: a callback shared by every story (it must be cheap and must not block; a
/// channel sender or a log append).
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// A sink that drops every event.
pub fn discard_events() -> EventSink {
    Arc::new(|_| {})
}
