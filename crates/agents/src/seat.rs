//! The [`Seat`] trait: one agent turn in, a reply out.

use std::fmt::{self, Write as _};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use epic_story_plan::Story;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::readiness::NotReady;
use crate::role::Role;
use crate::stream::ToolCall;
use epic_process::sandbox::Sandbox;
use epic_process::{Clock, Watchdog};

/// The token a coder replies with to confirm that a task needs no change
/// (`TASK_ALREADY_SATISFIED`): the protocol's word, which the script seat answers and the task
/// loop reads.
pub const NOOP_TOKEN: &str = "TASK_ALREADY_SATISFIED";

/// A boxed, `Send` future: what [`Seat::turn`] returns, spelled short for the crate's own seats.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One earlier exchange of a chat: what was asked and what the seat replied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The prompt of that turn.
    pub prompt: String,
    /// The reply (bounded, see [`Reply::text`]).
    pub reply: String,
}

/// Where and for whom a turn runs: the seat process's environment and limits.
#[derive(Debug, Clone)]
pub struct TurnContext {
    /// The epic's id (`EPIC_EPIC`).
    pub epic: String,
    /// The story (`EPIC_STORY` is its id; the script seat reads its description).
    pub story: Arc<Story>,
    /// The task's title, for coder turns (`EPIC_TASK`).
    pub task: Option<String>,
    /// The story's worktree: the seat's working directory (`EPIC_WORKTREE`).
    pub worktree: PathBuf,
    /// The concurrency slot, 0 to N-1 (`EPIC_SLOT`), so parallel stories can offset ports.
    pub slot: usize,
    /// When the turn must be over, retries included; the seat kills its process then.
    pub deadline: Instant,
    /// Cancels the turn (and kills its process) from outside.
    pub cancel: CancellationToken,
    /// The sandbox a seat's processes run in, with the worktree writable ([`Sandbox`]);
    /// [`Sandbox::off`] outside a run. A seat that runs no process (the script seat) has nothing
    /// to put in it.
    pub sandbox: Sandbox,
    /// Ends the turn's process once it printed nothing, on standard output or standard error,
    /// for the watchdog's silence ([`SeatError::Stalled`]); `None`: never (`--stall-timeout 0`,
    /// or outside a run).
    pub watchdog: Option<Watchdog>,
    /// What a retry's backoff waits on: the run's clock, so a test moves it instead of waiting
    /// ([`Clock::system`] outside a run). The deadline stays on tokio's timer: it bounds a real
    /// process.
    pub clock: Clock,
    /// Reads what an attempt that never replied left in the worktree, for the next attempt to be
    /// told ([`TurnRequest::leftovers_note`]); a seat that runs an attempt again itself (a
    /// command seat's retry of a transient failure) reads it before that attempt. `None`: the
    /// turn's chat tells nothing (every role but a run's coder, and outside a run).
    pub leftovers: Option<Leftovers>,
}

/// Reads, when asked, what the attempts of a request that never replied left in the worktree: a
/// note to put after the prompt of the next attempt (the paths not committed, each added,
/// modified or deleted), or `None` when they left nothing. The caller builds the note (a run's
/// coder chats, with the protocol's wording); a seat only passes it on ([`TurnContext::leftovers`]).
#[derive(Clone)]
pub struct Leftovers(Arc<dyn Fn() -> BoxFuture<'static, Option<String>> + Send + Sync>);

impl Leftovers {
    /// Leftovers read by `read`, called afresh before each attempt that takes them up.
    pub fn new(
        read: impl Fn() -> BoxFuture<'static, Option<String>> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(read))
    }

    /// The note on what the worktree holds now, or `None` when there is nothing to tell.
    pub async fn note(&self) -> Option<String> {
        (self.0)().await
    }
}

impl fmt::Debug for Leftovers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Leftovers(..)")
    }
}

/// One turn: who, what for, and the conversation so far.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// What the turn is for.
    pub role: Role,
    /// The chat's standing instructions (rules, perimeter, plan so far).
    pub system: String,
    /// The chat's earlier exchanges, oldest first.
    pub history: Vec<Exchange>,
    /// The new prompt.
    pub prompt: String,
    /// What the attempt before this one left in the worktree and never replied on, rendered
    /// after the prompt ([`Leftovers`]); `None` for a turn that takes up nothing.
    pub leftovers_note: Option<String>,
    /// Where and for whom.
    pub context: TurnContext,
}

impl TurnRequest {
    /// The whole turn as one text: what a command seat writes to the agent's standard input.
    ///
    /// Seats are stateless, so a chat's memory is this rendering: the standing instructions,
    /// then each earlier exchange, then the new request, and after it the note on what an
    /// attempt that never replied left ([`leftovers_note`](Self::leftovers_note)).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use epic_agents::{Exchange, Role, TurnContext, TurnRequest};
    /// # let context = TurnContext {
    /// #     epic: "e".into(),
    /// #     story: Arc::new(epic_story_plan::Story::new("s", "S", ["src"])),
    /// #     task: None,
    /// #     worktree: "/tmp".into(),
    /// #     slot: 0,
    /// #     deadline: tokio::time::Instant::now(),
    /// #     cancel: Default::default(),
    /// #     sandbox: Default::default(),
    /// #     watchdog: None,
    /// #     clock: Default::default(),
    /// #     leftovers: None,
    /// # };
    /// let request = TurnRequest {
    ///     role: Role::Coder,
    ///     system: "Stay inside src/.".into(),
    ///     history: vec![Exchange { prompt: "Add a test.".into(), reply: "Added.".into() }],
    ///     prompt: "Fix the failing gate.".into(),
    ///     leftovers_note: Some("Note: the worktree holds `src/half.rs`.".into()),
    ///     context,
    /// };
    /// let text = request.render();
    /// assert!(text.starts_with("Stay inside src/."));
    /// assert!(text.find("Added.").unwrap() < text.find("Fix the failing gate.").unwrap());
    /// assert!(text.ends_with("Fix the failing gate.\n\nNote: the worktree holds `src/half.rs`.\n"));
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::new();
        let system = self.system.trim();
        if !system.is_empty() {
            out.push_str(system);
            out.push_str("\n\n");
        }
        if !self.history.is_empty() {
            out.push_str("# Earlier in this conversation\n\n");
            for (n, exchange) in self.history.iter().enumerate() {
                let n = n + 1;
                let _ = write!(
                    out,
                    "## Request {n}\n\n{}\n\n## Your reply {n}\n\n{}\n\n",
                    exchange.prompt.trim(),
                    exchange.reply.trim()
                );
            }
            out.push_str("# Current request\n\n");
        }
        out.push_str(self.prompt.trim());
        out.push('\n');
        if let Some(note) = &self.leftovers_note {
            out.push('\n');
            out.push_str(note.trim());
            out.push('\n');
        }
        out
    }

    /// The environment of docs/contract.md for this turn: `EPIC_EPIC`, `EPIC_STORY`, `EPIC_ROLE`,
    /// `EPIC_TASK` (empty when there is no task), `EPIC_WORKTREE`, `EPIC_SLOT`.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let context = &self.context;
        vec![
            ("EPIC_EPIC", context.epic.clone()),
            ("EPIC_STORY", context.story.id.clone()),
            ("EPIC_ROLE", self.role.as_str().to_owned()),
            ("EPIC_TASK", context.task.clone().unwrap_or_default()),
            ("EPIC_WORKTREE", context.worktree.display().to_string()),
            ("EPIC_SLOT", context.slot.to_string()),
        ]
    }
}

/// What a seat reports while a turn runs.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Progress<'a> {
    /// A piece of the reply, as it streams.
    Chunk(&'a str),
    /// The attempt failed with a transient error; the turn is tried again after `delay`.
    Retrying {
        /// The attempt that failed, from 1.
        attempt: u32,
        /// How long until the next attempt.
        delay: Duration,
        /// Why it failed (the tail of its output).
        reason: &'a str,
    },
    /// The agent's stream reported a tool call (a preset's structured stream): what it is
    /// doing now.
    Activity(&'a ToolCall),
    /// epic rejected what an ACP agent asked (an edit outside the story's perimeter, of `.git`,
    /// any edit in a read-only turn, a file write or read it may not make): nothing was done.
    PermissionRejected {
        /// What was asked: the path, the command, the call's title.
        subject: &'a str,
        /// Why, as the agent was told.
        reason: &'a str,
    },
}

/// The callback a seat reports [`Progress`] to.
pub type ProgressFn<'a> = &'a (dyn Fn(Progress<'_>) + Send + Sync);

/// A finished turn's reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The reply text, bounded: a huge reply keeps its head and tail with a note between them
    /// naming how much was left out.
    pub text: String,
    /// Characters the seat printed in all, kept or not (UTF-16 code units, for estimates).
    pub chars: u64,
    /// How many attempts the turn took (1 without retries).
    pub attempts: u32,
    /// The tokens and cost the agent reported for the turn (a preset's structured output), or
    /// `None`: the turn's usage is then estimated from its characters.
    pub usage: Option<epic_report::ReportedUsage>,
}

impl Reply {
    /// A reply of exactly this text, in one attempt.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            chars: epic_report::count_chars(&text),
            text,
            attempts: 1,
            usage: None,
        }
    }

    /// This reply with the usage the agent reported.
    #[must_use]
    pub fn with_usage(mut self, usage: epic_report::ReportedUsage) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Why a turn failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeatError {
    /// The agent could not be started.
    #[error("failed to start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The agent exited unsuccessfully (after retries, if its output looked transient).
    #[error(
        "`{program}` failed with {status} after {attempts} attempt(s); its output ends with:\n{tail}"
    )]
    Failed {
        /// The program.
        program: String,
        /// The exit status, in words.
        status: String,
        /// How many attempts were made.
        attempts: u32,
        /// The end of its output (stdout and stderr).
        tail: String,
        /// What the agent reported this failed turn used, where its structured output said
        /// (Claude Code's result object at a usage limit: no tokens, no cost); `None`: estimated.
        usage: Option<Box<epic_report::ReportedUsage>>,
    },
    /// The turn's deadline passed; its whole process group was killed.
    #[error("`{program}` did not finish within its deadline ({}s) and was killed", after.as_secs())]
    TimedOut {
        /// The program.
        program: String,
        /// How long the turn had.
        after: Duration,
    },
    /// The turn was cancelled; its whole process group was killed.
    #[error("the turn was cancelled")]
    Cancelled,
    /// The agent printed nothing, on standard output or standard error, for `silent`
    /// (`--stall-timeout`); its whole process group was killed as at a deadline.
    #[error(
        "`{program}` printed nothing for {}s and was ended as stalled",
        silent.as_secs()
    )]
    Stalled {
        /// The program.
        program: String,
        /// How long it was silent.
        silent: Duration,
    },
    /// The agent's stream showed the same tool call (same tool, same input)
    /// [`LOOP_REPEATS`](crate::LOOP_REPEATS) times in a row; its whole process group was killed.
    #[error("`{program}` called {call} {times} times in a row and was ended as looping")]
    Looping {
        /// The program.
        program: String,
        /// The call it repeated.
        call: Box<ToolCall>,
        /// How many times in a row.
        times: u32,
    },
    /// A seat-specific failure (the script seat's missing file block, an unwritable file).
    #[error("{0}")]
    Other(String),
    /// A coder turn in the sandbox wrote refs it may not (another story's branch, its own
    /// deleted or made symbolic): none of it reached the repository, which only epic moves.
    #[error("`{program}` wrote refs a turn may not move (none reached the repository): {}", .refused.join("; "))]
    Refs {
        /// The program.
        program: String,
        /// What it wrote, a line each.
        refused: Vec<String>,
    },
    /// The turn changed files epic guards (the repository's configuration, hooks, worktree
    /// registrations, epic's state, the plan); epic put them back. Set by epic after the turn,
    /// never by a seat.
    #[error("the turn changed files epic guards: {}", .0.paths())]
    GuardedFiles(Box<epic_guard::Tampered>),
}

/// An agent: takes one turn at a time, remembers nothing between turns.
///
/// The crate's seats are [`CommandSeat`](crate::CommandSeat) (any agent CLI) and
/// [`ScriptSeat`](crate::ScriptSeat) (offline, deterministic); a seat of your own (an HTTP
/// API, a test double) implements this trait. What the reply must hold depends on the turn's
/// [`Role`] (docs/contract.md):
///
/// - [`Role::Planner`]: the story's tasks as JSON, `{"tasks":[{"title":…,"description":…}]}`,
///   bare or in a fenced block.
/// - [`Role::Coder`]: anything; the work is the changes in the worktree. A last non-empty line
///   `BLOCKED_ON: <need>` ends the story as blocked; asked whether a task that changed nothing
///   is already satisfied, the reply `TASK_ALREADY_SATISFIED` confirms it.
/// - [`Role::Judge`], [`Role::Reviewer`]: a verdict as JSON,
///   `{"clean":bool,"issues":[{"severity":"critical|major|minor","title":…,"description":…}]}`.
/// - [`Role::Architect`]: a whole plan (`epic schema plan`), bare JSON or in one fenced block.
/// - [`Role::Verifier`]: whether a `BLOCKED_ON:` claim holds, as JSON
///   `{"blocked":bool,"reason":"…"}`, bare or in a fenced block; anything else lets the claim
///   stand.
///
/// ```
/// use std::pin::Pin;
///
/// use epic_agents::{ProgressFn, Reply, Role, Seat, SeatError, TurnRequest};
///
/// /// A reviewer that finds every change clean.
/// #[derive(Debug)]
/// struct Approver;
///
/// impl Seat for Approver {
///     fn name(&self) -> &str {
///         "approver"
///     }
///
///     fn turn<'a>(
///         &'a self,
///         request: &'a TurnRequest,
///         _progress: ProgressFn<'a>,
///     ) -> Pin<Box<dyn Future<Output = Result<Reply, SeatError>> + Send + 'a>> {
///         Box::pin(async move {
///             match request.role {
///                 Role::Judge | Role::Reviewer => Ok(Reply::new(r#"{"clean":true,"issues":[]}"#)),
///                 _ => Err(SeatError::Other("a reviewer only".into())),
///             }
///         })
///     }
/// }
///
/// // A run holds its seats as `Arc<dyn Seat>` (`RunConfig::reviewers` of `epic-executor`).
/// let reviewer: std::sync::Arc<dyn Seat> = std::sync::Arc::new(Approver);
/// assert_eq!(reviewer.name(), "approver");
/// ```
///
/// # Why a boxed future
///
/// The CLI picks seats at run time (`--coder claude`, `--reviewer exec:…`), so the executor
/// holds them as `Arc<dyn Seat>`; a trait with `async fn` or `-> impl Future` is not
/// dyn-compatible. An enum of the known seats would close the set to this crate, where a boxed
/// future keeps it open (a user's HTTP seat, a test's) at the cost of one allocation per turn,
/// nothing next to an agent turn that takes minutes. The future is `Send` so turns run on any
/// runtime thread, and borrows the seat and the request (`'a`) so nothing needs cloning.
pub trait Seat: Send + Sync + fmt::Debug {
    /// The seat's name: the preset (`claude`), `script`, or `exec:COMMAND`. Usage is estimated
    /// and priced under this name.
    fn name(&self) -> &str;

    /// Takes one turn: the request in, [`Progress`] reported as it happens, the reply out.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future ends the turn; a seat that runs a process kills its whole process
    /// group. Cancelling [`TurnContext::cancel`] does the same and returns
    /// [`SeatError::Cancelled`].
    fn turn<'a>(
        &'a self,
        request: &'a TurnRequest,
        progress: ProgressFn<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Reply, SeatError>> + Send + 'a>>;

    /// Checks, without spending a token, that this seat can take turns (its program is
    /// installed, it is logged in), with `dir` as the working directory. A run asks each seat
    /// in use before its first story. The default has nothing to check.
    fn ready<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, Result<(), NotReady>> {
        let _ = dir;
        Box::pin(std::future::ready(Ok(())))
    }

    /// What logs this seat in again, for a run stopped because it is not logged in: by default
    /// the fix of the preset its name is ([`login_fix`](crate::classify::login_fix)).
    fn login_fix(&self) -> String {
        crate::classify::login_fix(self.name())
    }
}
