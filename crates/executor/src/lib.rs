//! Runs an epic: every story of a plan implemented by a coding agent in its own git worktree and
//! branch, in parallel, each merged into the epic branch only when its gates prove it good. Give
//! [`run_epic`] a repository, a validated plan and a [`RunConfig`] naming the agent (a [`Seat`](epic_agents::Seat));
//! it returns a [`RunOutcome`] with the report, and the epic branch `epic/<epic_id>` holds every
//! story that passed. Nothing else is needed: no CLI, no configuration file, no network.
//!
//! The example runs a real epic end to end, offline: a fresh repository, two stories whose
//! descriptions carry the files to write as `file <path>` blocks, the built-in [`ScriptSeat`](epic_agents::ScriptSeat)
//! as the coder (deterministic, no model: it writes each story's file blocks) and one gate. A
//! real run passes an agent instead: `CommandSeat::preset(Preset::Claude)` (or `Codex`,
//! `Gemini`, `Aider`, `Opencode`; see [`CommandSeat`](epic_agents::CommandSeat) and [`Preset`](epic_agents::Preset)), or any agent CLI as
//! `CommandSeat::shell("my-agent --yes")`.
//!
//! ```
//! use std::sync::Arc;
//!
//! use epic_agents::ScriptSeat;
//! use epic_events::Event;
//! use epic_executor::{RunConfig, run_epic};
//! use epic_git_ops::{FirstCommit, GixGit, init_repository};
//! use epic_report::OutcomeStatus;
//! use epic_story_plan::{Story, StoryPlan};
//! use tokio_util::sync::CancellationToken;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A project with one commit on `main`, in a directory of its own: the stories' worktrees go
//! // beside it, in `app.worktrees/`.
//! let temp = tempfile::tempdir()?;
//! let repo = temp.path().join("app");
//! std::fs::create_dir(&repo)?;
//! std::fs::write(repo.join("README.md"), "# app\n")?;
//! let first = FirstCommit {
//!     branch: "main",
//!     name: "Ada",
//!     email: "ada@example.invalid",
//!     message: "the app",
//! };
//! init_repository(&repo, &first)?;
//!
//! // Two stories, each owning the file it writes; `bonjour` starts once `hello` is merged.
//! let mut hello = Story::new("hello", "Say hello", ["hello.txt"]);
//! hello.description = "Greet in English.\n\n```file hello.txt\nhello\n```\n".into();
//! let mut bonjour = Story::new("bonjour", "Say bonjour", ["bonjour.txt"]).depending_on(["hello"]);
//! bonjour.description = "Greet in French.\n\n```file bonjour.txt\nbonjour\n```\n".into();
//! let plan = StoryPlan {
//!     epic_id: "greetings".into(),
//!     epic: "Greetings".into(),
//!     stories: vec![hello, bonjour],
//! }
//! .validate()?;
//!
//! // The gates must pass on the epic branch before the run, after each task in its story's
//! // worktree, and after each merge: here, no `bonjour.txt` without `hello.txt`.
//! let mut config = RunConfig::new(Arc::new(ScriptSeat));
//! config.gates = vec!["test ! -e bonjour.txt || test -f hello.txt".into()];
//!
//! // Every step is an `Event`; a caller shows them live (or passes `discard_events()`).
//! let merged = Arc::new(std::sync::Mutex::new(Vec::new()));
//! let events = {
//!     let merged = Arc::clone(&merged);
//!     Arc::new(move |event: Event| {
//!         if let Event::StoryMerged { story, .. } = event {
//!             merged.lock().unwrap().push(story);
//!         }
//!     })
//! };
//!
//! let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
//! let git = Arc::new(GixGit::discover(&repo)?);
//! let cancel = CancellationToken::new(); // `epic run` cancels it on Ctrl-C
//! let outcome = runtime.block_on(run_epic(git, plan, config, events, cancel))?;
//!
//! assert!(outcome.all_done());
//! assert_eq!(outcome.report.count(OutcomeStatus::Done), 2);
//! assert_eq!(*merged.lock().unwrap(), ["hello", "bonjour"]);
//! // The epic branch's worktree holds both stories' work.
//! let bonjour = std::fs::read_to_string(outcome.epic_worktree.join("bonjour.txt"))?;
//! assert_eq!(bonjour, "bonjour\n");
//! assert!(outcome.epic_worktree.join("hello.txt").is_file());
//! # Ok(()) }
//! ```
//!
//! # The building blocks
//!
//! - **The run** ([`run_epic`] with a [`RunConfig`]): the epic's lock, the epic branch in its own
//!   worktree (`epic-branch`), the gates' baseline (`epic-gates`), then the scheduler
//!   (`epic-schedule`) starting ready stories in free slots; a [`RunOutcome`] with the report,
//!   or an `epic_branch::RunError` when the run cannot start. Every step is an
//!   `epic_events::Event`, sent to a caller-supplied sink.
//! - **One story**, inside the run: prepare its worktree (hash-guarded resume), catch up with
//!   the epic head, set up, the task loop, strays put back, the judge rounds, and the merge under
//!   the merge lock with the gates re-run on the epic worktree (red: the merge is undone).
//! - **What a run leaves** under `<git-common-dir>/epic/<epic>/`: `stories/<id>.json`,
//!   `stories/<id>.plan.md` (each story's task checkpoint), `transcripts/<id>/` (every agent
//!   turn), `events.jsonl`, `report.json` and `report.md`, `board.md`, `gates/baseline.json`,
//!   `proven.json` (the last epic head a run proved, the only one an unproven merge is undone
//!   to), and `merging.json` only while a merge is being proven.
//! - **Seats** are `epic-agents`' ([`Seat`](epic_agents::Seat)), their turns taken through
//!   `epic-chat`'s chats; `epic plan`'s architect is `epic-architect`.
//! - **The task loop of one story** ([`TaskLoop`], on a [`StoryJob`] with [`Seats`], [`Gates`](epic_gates::Gates)
//!   and a [`LoopConfig`]): plan, then per task a coder turn, review rounds, a commit
//!   `<story>: <task>` and a tick in the checkpoint; [`TasksDone`] (with the final [`TaskPlan`]),
//!   or a typed [`StoryError`]. The run uses one for every story; it also runs alone, in a
//!   worktree of your own:
//!
//! ```no_run
//! use std::sync::Arc;
//! use epic_agents::{CommandSeat, Preset};
//! use epic_events::discard_events;
//! use epic_executor::{LoopConfig, Seats, StoryJob, TaskLoop};
//! use epic_gates::Gates;
//! use epic_git_ops::GixGit;
//!
//! # async fn run(plan: epic_story_plan::StoryPlan) -> Result<(), Box<dyn std::error::Error>> {
//! let git = Arc::new(GixGit::discover(".")?);
//! let dir = epic_state_store::EpicDir::new(epic_git_ops::Git::common_dir(git.as_ref()), &plan.epic_id)?;
//! let story = Arc::new(plan.stories[0].clone());
//! let job = StoryJob::new(&dir, Arc::new(plan), story, "../app.worktrees/e/s", "epic/e", 0)?;
//! let coder = Arc::new(CommandSeat::preset(Preset::Claude));
//! let seats = Seats { coder: coder.into(), reviewers: vec![], verifier: None };
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
//! - **Side effects behind seams.** Agents are [`Seat`](epic_agents::Seat)s, git is `epic_git_ops::Git` (called in
//!   `spawn_blocking`: it blocks), the checks are `epic_gates::Gates`, progress is an
//!   `epic_events::EventSink`. Files are `epic_state_store`'s (the state directory) and
//!   `epic_git_ops`'s (a repository's lock files and leftovers), their blocking I/O run in
//!   `spawn_blocking` too: the crate's `clippy.toml` forbids `std::fs`, `tokio::fs` and
//!   `std::process::Command` here. There is no global state: no statics, no signal handlers, no
//!   change to the process environment, so the scheduler can run many stories at once, each
//!   future `Send`.
//! - **Turns are `epic-chat`'s, processes `epic-process`'s.** Every agent and gate process leads
//!   its own process group, killed when its turn ends, its output kept bounded; a failed turn is
//!   classified once (`epic-agents`), retried, or pauses its seat until a reset, timed on
//!   `RunConfig::clock` ([`Clock`]; a test moves a [`ManualClock`]); only a failure of the
//!   story's own fails the story.
//! - **A stalled or looping turn is ended early.** A turn that prints nothing for
//!   `RunConfig::stall_timeout` (measured on the same clock) or whose stream shows one tool call
//!   five times in a row is killed as at its deadline and its request runs again once (after a
//!   loop, with a note naming the call); a second time fails the story.
//! - **The checkpoint is the only durable state**, written atomically after planning and after
//!   each commit, so a crash redoes at most the task in progress and never re-plans.
//! - **Nothing reaches the epic branch unproven.** Merges are serialized by one lock; each
//!   takes exactly the commit of the story branch that passed the perimeter, the test guard and
//!   the judge (a branch that moved since fails the story), is checkpointed and journaled
//!   (`merging.json`) before it is made, its gates run on the epic worktree, and red (or
//!   interrupted) it is reset to the checkpoint; a run that died mid-merge is undone by the next
//!   one, back to the proven head epic recorded and nowhere else. A story counts as merged on a
//!   later run only while the merge commit its state records is on the epic branch's
//!   first-parent line. Stories are cut from, and catch up with, the last proven epic head,
//!   never a merge still being gated.

#![warn(missing_docs)]

mod config;
mod error;
mod failure;
mod merge_queue;
mod queue;
mod run;
mod shared;
mod story;
mod task_loop;

pub use epic_process::{Clock, ManualClock};
pub use epic_protocol::TaskPlan;
pub use error::StoryError;
pub use run::{
    DEFAULT_MAX_WAIT, DEFAULT_MERGE_BATCH, DEFAULT_STALL_TIMEOUT, OnBlocked, RunConfig, RunOutcome,
    WorktreeMode, run_epic,
};
pub use story::{Revisions, RevisionsUnreadable};
pub use task_loop::{
    LoopConfig, NoopPolicy, PlannerPolicy, SMALL_STORY, Seats, StoryJob, StoryRun, TaskLoop,
    TasksDone,
};
