//! Runs an epic: every story implemented by a coding agent in its own git worktree and branch,
//! in parallel, each merged into the epic branch only when proven good; and, inside, the inner
//! loop of one story: the seats (agents) that plan and implement it, the gates that check it,
//! and the task loop that turns a plan into commits.
//!
//! - **The run** ([`run_epic`] with a [`RunConfig`]): the epic's lock, the epic branch in its own
//!   worktree, the gates' baseline, then the scheduler ([`Schedule`], a synchronous state
//!   machine under a thin async loop) starting ready stories in free slots; a [`RunOutcome`]
//!   with the report, or a [`RunError`] when the run cannot start.
//! - **One story**: prepare its worktree (hash-guarded resume), catch up with the epic head,
//!   set up, the task loop, strays put back, the judge rounds, and the merge under the merge
//!   lock with the gates re-run on the epic worktree (red: the merge is undone).
//! - **What a run leaves** under `<git-common-dir>/epic/<epic>/`: `stories/<id>.json`,
//!   `events.jsonl`, `report.json` ([`ReportDocument`]) and `report.md`, `board.md`,
//!   `gates/baseline.json` (the gates' verdict per epic head), and `merging.json` only while a
//!   merge is being proven.
//!
//! - **Seats** ([`Seat`]): one agent turn in, a streamed reply out. [`CommandSeat`] runs any
//!   agent CLI per turn, a [`Preset`] (`claude`, `codex`, `gemini`, `aider`, `opencode`) or a
//!   shell command, in the worktree, in its own process group that dies with the turn.
//!   [`ScriptSeat`] is deterministic and offline: it applies the `file <path>` blocks of the
//!   story's description. A [`Chat`] renders its history into each next turn, records every
//!   turn under `transcripts/<story>/`, and estimates usage per seat.
//! - **Gates** ([`Gates`]): the project's checks, shell commands under a deadline; the first red
//!   one is the critical issue of a [`epic_perimeter::Review`].
//! - **The task loop** ([`TaskLoop`]): plan, then per task a coder chat, review rounds, a commit
//!   `<story>: <task>` and a tick in the checkpoint ([`TaskPlan`]), or a typed [`StoryError`].
//! - **Events** ([`Event`]): every step, sent to a caller-supplied [`EventSink`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use epic_executor::{CommandSeat, Preset, RunConfig, discard_events, run_epic};
//! use epic_git_ops::GixGit;
//!
//! # async fn run(plan: epic_story_plan::ValidPlan) -> Result<(), Box<dyn std::error::Error>> {
//! let git = Arc::new(GixGit::discover(".")?);
//! let mut config = RunConfig::new(Arc::new(CommandSeat::preset(Preset::Claude)));
//! config.gates = vec!["cargo test".into()];
//! let cancel = tokio_util::sync::CancellationToken::new(); // cancelled on Ctrl-C by the CLI
//! let outcome = run_epic(git, plan, config, discard_events(), cancel).await?;
//! println!("{} stories done", outcome.report.count(epic_report::OutcomeStatus::Done));
//! # Ok(()) }
//! ```
//!
//! One story's task loop on its own:
//!
//! ```no_run
//! use std::sync::Arc;
//! use epic_executor::{CommandSeat, Gates, LoopConfig, Preset, Seats, StoryJob, TaskLoop, discard_events};
//! use epic_git_ops::GixGit;
//!
//! # async fn run(plan: epic_story_plan::StoryPlan) -> Result<(), Box<dyn std::error::Error>> {
//! let git = Arc::new(GixGit::discover(".")?);
//! let dir = epic_state_store::EpicDir::new(epic_git_ops::Git::common_dir(git.as_ref()), &plan.epic_id)?;
//! let story = Arc::new(plan.stories[0].clone());
//! let job = StoryJob::new(&dir, Arc::new(plan), story, "../app.worktrees/e/s", "epic/e", 0)?;
//! let seats = Seats { coder: Arc::new(CommandSeat::preset(Preset::Claude)), reviewers: vec![] };
//! let gates = Gates::new(["cargo test"], std::time::Duration::from_secs(600));
//! let tasks = TaskLoop::new(git, gates, seats, LoopConfig::default(), discard_events());
//! let run = tasks.run(&job, &Default::default()).await;
//! match run.result {
//!     Ok(done) => println!("{} task(s) committed", done.committed.len()),
//!     Err(error) => println!("failed: {}", error.reason()),
//! }
//! # Ok(()) }
//! ```
//!
//! # Design
//!
//! - **Side effects behind seams.** Agents are [`Seat`]s, git is `epic_git_ops::Git` (called in
//!   `spawn_blocking`: it blocks), the checks are [`Gates`], progress is an [`EventSink`]. Files
//!   are `epic_state_store`'s (the state directory) and `epic_git_ops`'s (a repository's lock
//!   files and leftovers), their blocking I/O run in `spawn_blocking` too: the crate's
//!   `clippy.toml` forbids `std::fs`, `tokio::fs` and `std::process::Command` here. There is no
//!   global state: no statics, no signal handlers, no change to the process environment, so the
//!   scheduler can run many stories at once, each future `Send`.
//! - **Processes die with their turn.** Every agent and gate process leads its own process
//!   group, and the group is killed with `SIGKILL` when the turn ends: at its deadline, on
//!   cancellation, when the future is dropped, and after a normal exit (a forked `sleep 1000 &`
//!   must not outlive the turn). Standard input is written concurrently with reading the output,
//!   so an agent that never reads its prompt cannot deadlock.
//! - **Bounded memory.** A reply keeps its first and last 256 KiB in memory ([`ReplyLimits`]);
//!   a transcript stores at most 8 MiB of a reply ([`Recorder::with_file_limit`]) and notes the
//!   rest; a gate keeps the last 4000 bytes of its output. Usage is still counted over all of it.
//! - **Transient failures are retried, others are not.** A turn that exits non-zero with output
//!   that looks transient (rate limit, overload, 429/5xx, a reset connection) is retried with
//!   exponential backoff and jitter ([`RetryPolicy`], 3 attempts), each retry an event; a turn
//!   killed at its deadline used its budget and is not retried.
//! - **The checkpoint is the only durable state**, written atomically after planning and after
//!   each commit, so a crash redoes at most the task in progress and never re-plans.
//! - **Nothing reaches the epic branch unproven.** Merges are serialized by one lock; each is
//!   checkpointed and journaled (`merging.json`) before it is made, its gates run on the epic
//!   worktree, and red (or interrupted) it is reset to the checkpoint; a run that died
//!   mid-merge is undone by the next one. Stories are cut from, and catch up with, the last
//!   proven epic head, never a merge still being gated.
//! - **Estimates, not measurements.** Usage is estimated from character counts
//!   (`epic_report::estimate_tokens`), per seat name, priced from a `epic_report::PriceTable`; failed turns
//!   count too, since their output was produced.

#![warn(missing_docs)]

mod baseline;
mod bounded;
mod chat;
mod command;
mod error;
mod event;
mod gates;
mod offload;
mod preset;
mod process;
mod prompts;
mod record;
mod replies;
mod run;
mod schedule;
mod script;
mod seat;
mod story;
mod task_loop;
mod task_plan;
mod tests_guard;

pub use chat::{Chat, ChatContext, Recorder};
pub use command::{CommandSeat, ReplyLimits, RetryPolicy, is_transient};
pub use error::StoryError;
pub use event::{Event, EventSink, discard_events};
pub use gates::{GateResult, Gates, GatesCancelled};
pub use preset::{Preset, PromptVia, UnknownPreset};
pub use record::ReportDocument;
pub use replies::{blocked_on, parse_task_list, parse_verdict};
pub use run::{EPIC_WORKTREE_NAME, RunConfig, RunError, RunOutcome, run_epic, worktrees_root};
pub use schedule::{Policy, Schedule, Standing};
pub use script::{FileBlock, ScriptSeat, file_blocks};
pub use seat::{
    BoxFuture, Exchange, Progress, ProgressFn, Reply, Role, Seat, SeatError, TurnContext,
    TurnRequest,
};
pub use task_loop::{LoopConfig, Seats, StoryJob, StoryRun, TaskLoop, TasksDone};
pub use task_plan::{CheckpointError, NOOP_TOKEN, TaskPlan};
pub use tests_guard::{DEFAULT_TEST_PATTERNS, SKIP_MARKERS, is_test_path};
