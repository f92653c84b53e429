//! The command seat: any agent CLI (or script) run as a child process per turn.

use std::collections::hash_map::RandomState;
use std::ffi::OsString;
use std::hash::{BuildHasher as _, Hasher as _};
use std::path::Path;
use std::time::Duration;

use tokio::time::Instant;

use epic_report::ReportedUsage;

use crate::acp::{self as acp_seat, AcpCommand, AcpPreset};
use crate::agent_output;
use crate::classify;
use crate::preset::{Preset, PromptVia};
use crate::readiness::{self, NotReady};
use crate::role::Role;
use crate::seat::{BoxFuture, Progress, ProgressFn, Reply, Seat, SeatError, TurnRequest};
use crate::shell::shell_quote;
use crate::stream::{LOOP_REPEATS, StreamWatch};
use crate::tail::{ERROR_TAIL, NO_LOGGED_REPLY, failure_tail};
use epic_process::sandbox::Access;
use epic_process::{self as process, Ending, Limits, Spec};

/// Variables a seat process never inherits: they would point its git at another repository or
/// index than its worktree's.
const GIT_REDIRECTS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
];

/// When a failed turn is tried again.
///
/// A turn whose process exits unsuccessfully with output that looks transient (a rate limit,
/// an overloaded or unavailable service, an HTTP 429 or 5xx standing alone, a reset or refused
/// connection, a network time-out) is retried after an exponential backoff with jitter,
/// up to `attempts` attempts in all; any other failure fails at once. Retries share the turn's
/// deadline: a backoff that would end past it is not waited for, and a turn killed at its
/// deadline is never retried (it used its whole budget). A cancelled turn is not retried. The
/// backoff is waited on the turn's clock ([`TurnContext::clock`](crate::TurnContext::clock)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, at least 1.
    pub attempts: u32,
    /// The delay before the second attempt; each later one doubles it.
    pub first_delay: Duration,
    /// The longest delay.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, 5 s then 10 s (each with up to half taken off at random), at most 60 s.
    fn default() -> Self {
        Self {
            attempts: 3,
            first_delay: Duration::from_secs(5),
            max_delay: Duration::from_mins(1),
        }
    }
}

impl RetryPolicy {
    /// One attempt: never retry.
    pub fn never() -> Self {
        Self {
            attempts: 1,
            ..Self::default()
        }
    }

    /// The delay after failed attempt `attempt` (from 1): `first_delay × 2^(attempt-1)`, capped
    /// at `max_delay`, then scaled by a random factor in [0.5, 1] so parallel stories hitting
    /// the same rate limit do not retry in lockstep.
    pub fn delay(&self, attempt: u32) -> Duration {
        let doubling = 2_u32.saturating_pow(attempt.saturating_sub(1));
        let base = self
            .first_delay
            .saturating_mul(doubling)
            .min(self.max_delay);
        let random = RandomState::new().build_hasher().finish();
        // 0.5 + a fraction in [0, 0.5], in thousandths.
        let factor = 500 + u32::try_from(random % 501).unwrap_or(500);
        base.saturating_mul(factor) / 1000
    }
}

/// How much of a reply is kept in memory.
///
/// The default keeps the first 256 KiB and the last 256 KiB of what the agent prints, so one
/// turn holds at most about 768 KiB however much it prints (the tail buffer compacts when it
/// doubles); the rest is still streamed to the transcript and counted for usage. A planner's JSON
/// and a `BLOCKED_ON:` last line fit either end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyLimits {
    /// Bytes kept from the start of the output.
    pub head: usize,
    /// Bytes kept from the end of the output.
    pub tail: usize,
    /// Bytes kept from the end of standard error, for error messages.
    pub stderr_tail: usize,
}

impl Default for ReplyLimits {
    fn default() -> Self {
        Self {
            head: 256 * 1024,
            tail: 256 * 1024,
            stderr_tail: 16 * 1024,
        }
    }
}

/// How the command is started.
#[derive(Debug, Clone)]
enum Invocation {
    /// `sh -c COMMAND`, prompt on stdin.
    Shell(String),
    /// A preset's argv.
    Preset(Preset),
    /// An agent spoken to over ACP (`acp:COMMAND`, an ACP preset): `crate::acp`.
    Acp(AcpCommand),
}

/// A seat that runs a command per turn: a preset agent CLI or any shell command.
///
/// Each turn spawns the process with its working directory in the story's worktree, the
/// environment of docs/contract.md (`EPIC_EPIC`, `EPIC_STORY`, `EPIC_ROLE`, `EPIC_TASK`,
/// `EPIC_WORKTREE`, `EPIC_SLOT`), and the rendered turn ([`TurnRequest::render`]) as its prompt,
/// on standard input or as the preset takes it. Standard output is the reply, streamed as it
/// comes; standard error is kept (bounded) for the error message. The process leads its own
/// process group and the whole group is killed when the turn ends, at the deadline, on
/// cancellation, or after a normal exit, so nothing the agent forked outlives the turn. In a
/// run, the process runs in the run's sandbox ([`TurnContext::sandbox`](crate::TurnContext::sandbox)):
/// its worktree and what a commit writes are writable, the repository, the other worktrees and
/// the epic's state are not, and it has a PID namespace of its own that dies with the turn.
///
/// Exit status 0 ends the turn normally. Otherwise the turn fails with the tail of the output,
/// after retries when that output looks transient ([`RetryPolicy`]). A retry is told what the
/// failed attempt left in the worktree, when the turn's chat reads that
/// ([`TurnContext::leftovers`](crate::TurnContext::leftovers)): its prompt is rendered again
/// with the note.
///
/// With a watchdog ([`TurnContext::watchdog`](crate::TurnContext::watchdog)), a process that
/// prints nothing on either stream for its silence is killed as at the deadline
/// ([`SeatError::Stalled`]). A preset's stream is read line by line as it arrives: each tool call
/// is reported ([`Progress::Activity`]), and the same call (same tool, same input)
/// [`LOOP_REPEATS`] times in a row ends the turn ([`SeatError::Looping`]). Neither is retried
/// here: the caller decides.
///
/// ```
/// use epic_agents::{CommandSeat, Preset, Seat};
///
/// let seat = CommandSeat::shell("./agent.sh --fast");
/// assert_eq!(seat.name(), "exec:./agent.sh --fast");
/// assert_eq!(seat.command_line(), "sh -c './agent.sh --fast' < prompt");
/// assert_eq!(CommandSeat::preset(Preset::Claude).name(), "claude");
/// ```
#[derive(Debug, Clone)]
pub struct CommandSeat {
    name: String,
    invocation: Invocation,
    env: Vec<(OsString, Option<OsString>)>,
    retry: RetryPolicy,
    limits: ReplyLimits,
}

impl CommandSeat {
    /// A seat running `sh -c COMMAND` with the prompt on standard input; named `exec:COMMAND`.
    pub fn shell(command: impl Into<String>) -> Self {
        let command = command.into();
        Self::with_invocation(format!("exec:{command}"), Invocation::Shell(command))
    }

    /// A seat speaking the Agent Client Protocol to `sh -c COMMAND` over its stdio; named
    /// `acp:COMMAND`. Each turn is one ACP session in the story's worktree, one prompt, the
    /// reply the agent's message; what it asks to do is answered from the story's perimeter.
    pub fn acp(command: impl Into<String>) -> Self {
        let command = command.into();
        Self::with_invocation(
            format!("acp:{command}"),
            Invocation::Acp(AcpCommand::Shell(command)),
        )
    }

    /// A seat speaking ACP to a known agent ([`AcpPreset`]); named after the preset.
    pub fn acp_preset(preset: AcpPreset) -> Self {
        Self::with_invocation(
            preset.name().to_owned(),
            Invocation::Acp(AcpCommand::Preset(preset)),
        )
    }

    /// A seat running a preset agent CLI, found on `PATH`; named after the preset.
    pub fn preset(preset: Preset) -> Self {
        Self::with_invocation(preset.name().to_owned(), Invocation::Preset(preset))
    }

    fn with_invocation(name: String, invocation: Invocation) -> Self {
        Self {
            name,
            invocation,
            env: Vec::new(),
            retry: RetryPolicy::default(),
            limits: ReplyLimits::default(),
        }
    }

    /// This seat under another name: a named seat of `epic.toml` (`[seats.NAME]`), paused,
    /// reported and priced under `name` (a second account of a preset, say).
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// This seat with a variable set for its processes (on top of the inherited environment and
    /// docs/contract.md's). Setting `PATH` also changes where a preset's program is looked up.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// This seat with a variable removed from its processes' environment.
    #[must_use]
    pub fn without_env(mut self, key: impl Into<OsString>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// This seat with another retry policy.
    #[must_use]
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// This seat with other reply limits.
    #[must_use]
    pub fn with_limits(mut self, limits: ReplyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The command line each turn runs, with where the prompt goes (`< prompt`, `PROMPT_FILE`).
    pub fn command_line(&self) -> String {
        match &self.invocation {
            Invocation::Shell(command) => format!("sh -c {} < prompt", shell_quote(command)),
            Invocation::Preset(preset) => preset.command_line(),
            Invocation::Acp(AcpCommand::Shell(command)) => {
                format!("sh -c {} (ACP on stdio)", shell_quote(command))
            }
            Invocation::Acp(AcpCommand::Preset(preset)) => {
                format!("{} (ACP on stdio)", preset.command_line())
            }
        }
    }

    /// The process of one attempt; `prompt_file` is where a file-taking preset's prompt is.
    fn spec(
        &self,
        request: &TurnRequest,
        prompt: &str,
        prompt_file: Option<&std::path::Path>,
    ) -> Spec {
        let (program, args, stdin): (OsString, Vec<OsString>, Option<Vec<u8>>) =
            match &self.invocation {
                Invocation::Shell(command) => (
                    "sh".into(),
                    vec!["-c".into(), command.into()],
                    Some(prompt.as_bytes().to_vec()),
                ),
                Invocation::Preset(preset) => {
                    let base = preset.args(request.role);
                    let mut args: Vec<OsString> = base.iter().map(OsString::from).collect();
                    let stdin = match preset.prompt_via() {
                        PromptVia::Stdin => Some(prompt.as_bytes().to_vec()),
                        PromptVia::File { flag, replies } => {
                            args.push(flag.into());
                            args.push(prompt_file.map(OsString::from).unwrap_or_default());
                            if let Some(replies) = replies {
                                args.push(replies.into());
                                args.push(
                                    prompt_file
                                        .map(|file| reply_log(file).into_os_string())
                                        .unwrap_or_default(),
                                );
                            }
                            None
                        }
                    };
                    (preset.program().into(), args, stdin)
                }
                Invocation::Acp(command) => {
                    let (program, args) = command.argv();
                    (program, args, None)
                }
            };
        let mut env: Vec<(OsString, Option<OsString>)> = GIT_REDIRECTS
            .iter()
            .map(|key| (OsString::from(key), None))
            .collect();
        env.extend(
            request
                .env()
                .into_iter()
                .map(|(key, value)| (key.into(), Some(value.into()))),
        );
        env.extend(self.env.iter().cloned());
        Spec {
            program,
            args,
            cwd: request.context.worktree.clone(),
            env,
            stdin,
        }
    }

    /// The reply of an attempt that exited with `status`, or the tail of its failure: a preset
    /// with a structured output is read for its reply, usage and error
    /// ([`agent_output`]), and an error it reports fails the turn even with exit status 0; a
    /// preset that logs its model's replies to a file replies what that log holds (`logged`),
    /// its output otherwise.
    fn read_output(
        &self,
        finished: &mut process::Finished,
        status: std::process::ExitStatus,
        attempt: u32,
        logged: Option<String>,
    ) -> Result<Reply, (String, Option<ReportedUsage>)> {
        let raw = finished.stdout.text();
        let decoded = match &self.invocation {
            Invocation::Preset(preset) if agent_output::is_structured(*preset) => Some(
                agent_output::decode(*preset, &raw, &finished.stderr.last(ERROR_TAIL)),
            ),
            _ => None,
        };
        // A preset that logs its model's replies (aider) and logged none got no answer from its
        // model, whatever its exit status: aider gives up on a rate limit, a server error or an
        // unreachable server with exit 0, its errors on standard output.
        let logs_replies = matches!(
            &self.invocation,
            Invocation::Preset(preset)
                if matches!(preset.prompt_via(), PromptVia::File { replies: Some(_), .. })
        );
        let reported_error = decoded
            .as_ref()
            .and_then(|decoded| decoded.error.clone())
            .or_else(|| (logs_replies && logged.is_none()).then(|| NO_LOGGED_REPLY.to_owned()));
        let reported_usage = decoded.as_ref().and_then(|decoded| decoded.usage);
        if status.success() && reported_error.is_none() {
            let (text, usage) = match decoded {
                Some(decoded) => (decoded.text, decoded.usage),
                None => (logged.unwrap_or(raw), None),
            };
            return Ok(Reply {
                chars: finished.stdout.total_chars(),
                text,
                attempts: attempt,
                usage,
            });
        }
        let tail = failure_tail(
            reported_error.as_deref(),
            &finished.stdout.last(ERROR_TAIL),
            &finished.stderr.last(ERROR_TAIL),
        );
        Err((tail, reported_usage))
    }

    /// Runs one attempt's process, its output streamed to `progress`, under the turn's deadline
    /// and watchdog: what it left, and the call it repeated if that ended it. A preset's stream
    /// is read as it arrives for what the agent does; a call it repeats ends the attempt (its
    /// own token, so nothing else is cancelled).
    async fn run_attempt(
        &self,
        spec: &Spec,
        context: &crate::TurnContext,
        limits: Limits,
        progress: ProgressFn<'_>,
    ) -> Result<(process::Finished, Option<crate::ToolCall>), SeatError> {
        let watch = self.stream_watch();
        let attempt_cancel = context.cancel.child_token();
        let on_stdout = |text: &str| {
            progress(Progress::Chunk(text));
            let Some(watch) = &watch else { return };
            let (calls, looping) = {
                let mut watch = watch
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                (watch.chunk(text), watch.looping().is_some())
            };
            for call in &calls {
                progress(Progress::Activity(call));
            }
            if looping {
                attempt_cancel.cancel();
            }
        };
        let finished = process::run_watched(
            spec,
            context.deadline,
            &attempt_cancel,
            limits,
            context.watchdog.as_ref(),
            &on_stdout,
        )
        .await
        .map_err(|source| SeatError::Spawn {
            program: spec.program.to_string_lossy().into_owned(),
            source,
        })?;
        let looping = watch.and_then(|watch| {
            watch
                .into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .looping()
                .cloned()
        });
        Ok((finished, looping))
    }

    /// A watch over an attempt's stream, for a preset whose output is structured.
    fn stream_watch(&self) -> Option<std::sync::Mutex<StreamWatch>> {
        match &self.invocation {
            Invocation::Preset(preset) if agent_output::is_structured(*preset) => {
                Some(std::sync::Mutex::new(StreamWatch::new(*preset)))
            }
            _ => None,
        }
    }

    /// The exit status of an attempt that ended with `ending`, or the error of one that was
    /// ended: at the deadline of the turn started at `started`, for silence, or (cancelled with
    /// the turn still wanted) for the call `looping` repeated.
    fn exit_status(
        &self,
        ending: Ending,
        looping: Option<crate::ToolCall>,
        context: &crate::TurnContext,
        started: Instant,
    ) -> Result<std::process::ExitStatus, SeatError> {
        match ending {
            Ending::Exited(status) => Ok(status),
            Ending::TimedOut => Err(SeatError::TimedOut {
                program: self.name.clone(),
                after: context.deadline.saturating_duration_since(started),
            }),
            // Neither is tried again here: the chat decides (a stalled or looping turn runs
            // again once, with a note for a loop).
            Ending::Stalled => Err(SeatError::Stalled {
                program: self.name.clone(),
                silent: context
                    .watchdog
                    .as_ref()
                    .map_or(Duration::ZERO, |watchdog| watchdog.silence),
            }),
            Ending::Cancelled => Err(match looping {
                Some(call) if !context.cancel.is_cancelled() => SeatError::Looping {
                    program: self.name.clone(),
                    call: Box::new(call),
                    times: LOOP_REPEATS,
                },
                _ => SeatError::Cancelled,
            }),
        }
    }

    /// `spec` in the turn's sandbox. The architect and the verifier read the repository and
    /// reply; the coder works in it and commits on its story branch (in directories of the
    /// turn's own, settled after it); everyone else works in it (a lander, or a judge's stray
    /// edit, put back) and moves no ref: epic commits for them.
    async fn sandboxed(
        &self,
        spec: Spec,
        request: &TurnRequest,
    ) -> Result<(Spec, Option<epic_git_ops::PrivateBranch>), SeatError> {
        let context = &request.context;
        let (sandbox, worktree) = (&context.sandbox, &context.worktree);
        Ok(match request.role {
            Role::Architect | Role::Verifier => {
                (sandbox.wrap(spec, worktree, Access::ReadOnly).await, None)
            }
            Role::Coder => sandbox
                .wrap_commit(spec, worktree, &context.story.id)
                .await
                .map_err(|error| SeatError::Spawn {
                    program: self.name.clone(),
                    source: std::io::Error::other(error.to_string()),
                })?,
            Role::Planner | Role::Judge | Role::Reviewer | Role::Lander => {
                (sandbox.wrap(spec, worktree, Access::Stage).await, None)
            }
        })
    }

    /// One turn of an ACP seat ([`acp_seat::turn`]), in the sandbox as any other, its story
    /// branch settled after it. Not retried here: the chat decides.
    async fn run_acp_turn(
        &self,
        request: &TurnRequest,
        progress: ProgressFn<'_>,
    ) -> Result<Reply, SeatError> {
        let spec = self.spec(request, "", None);
        let (spec, branch) = self.sandboxed(spec, request).await?;
        let limits = (self.limits.head, self.limits.tail);
        let preset = match &self.invocation {
            Invocation::Acp(AcpCommand::Preset(preset)) => Some(*preset),
            _ => None,
        };
        let turned = acp_seat::turn(&self.name, preset, &spec, request, limits, progress).await;
        if let Some(branch) = branch {
            settle(branch, &self.name).await?;
        }
        turned
    }

    async fn run_turn(
        &self,
        request: &TurnRequest,
        progress: ProgressFn<'_>,
    ) -> Result<Reply, SeatError> {
        if matches!(self.invocation, Invocation::Acp(_)) {
            return self.run_acp_turn(request, progress).await;
        }
        let context = &request.context;
        let started = Instant::now();
        let mut prompt = request.render();
        let limits = Limits {
            stdout_head: self.limits.head,
            stdout_tail: self.limits.tail,
            stderr_tail: self.limits.stderr_tail,
        };
        let attempts = self.retry.attempts.max(1);
        let mut attempt = 1;
        loop {
            // A file-taking preset gets its prompt in a directory of its own outside the
            // worktree, so the file never shows up as a change of the story.
            let prompt_dir = match &self.invocation {
                Invocation::Preset(preset)
                    if matches!(preset.prompt_via(), PromptVia::File { .. }) =>
                {
                    Some(
                        prompt_file(&prompt)
                            .await
                            .map_err(|source| SeatError::Spawn {
                                program: self.name.clone(),
                                source,
                            })?,
                    )
                }
                _ => None,
            };
            let spec = self.spec(
                request,
                &prompt,
                prompt_dir.as_ref().map(|(_, path)| path.as_path()),
            );
            let (spec, branch) = self.sandboxed(spec, request).await?;
            let attempted = self.run_attempt(&spec, context, limits, progress).await;
            if let Some(branch) = branch {
                settle(branch, &self.name).await?;
            }
            let (mut finished, looping) = attempted?;
            // A preset that logs its model's replies beside its prompt file (aider) replies what
            // that log holds; no log, no such preset.
            let logged = match &prompt_dir {
                Some((_, file)) => logged_reply(file).await,
                None => None,
            };
            drop(prompt_dir);
            let status = self.exit_status(finished.ending, looping, context, started)?;
            let (tail, usage) = match self.read_output(&mut finished, status, attempt, logged) {
                Ok(reply) => return Ok(reply),
                Err(failed) => failed,
            };
            let status = process::describe_status(status);
            let transient = classify::classify_now(&status, &tail).is_transient();
            let failed = || SeatError::Failed {
                program: self.name.clone(),
                status: status.clone(),
                attempts: attempt,
                tail: tail.trim().to_owned(),
                usage: usage.map(Box::new),
            };
            if attempt >= attempts || !transient {
                return Err(failed());
            }
            let delay = self.retry.delay(attempt);
            if Instant::now() + delay >= context.deadline {
                return Err(failed());
            }
            // On the run's clock, which a test moves; the deadline above is tokio's. Taken
            // before the retry is told, so that a test that reads it and moves the clock moves it
            // past this time.
            let until = context
                .clock
                .now()
                .checked_add(jiff::SignedDuration::try_from(delay).unwrap_or_default())
                .unwrap_or_else(|_| context.clock.now());
            progress(Progress::Retrying {
                attempt,
                delay,
                reason: tail.trim(),
            });
            tokio::select! {
                () = context.clock.wait_until(until) => {}
                () = context.cancel.cancelled() => return Err(SeatError::Cancelled),
            }
            // The failed attempt may have written files before it failed: the next one is told
            // what the worktree now holds, as a turn the chat runs again is.
            if let Some(leftovers) = &context.leftovers {
                let mut again = request.clone();
                again.leftovers_note = leftovers.note().await;
                prompt = again.render();
            }
            attempt += 1;
        }
    }
}

impl Seat for CommandSeat {
    fn name(&self) -> &str {
        &self.name
    }

    /// The preset's fix; for a named seat with variables of its own (a second account's
    /// configuration directory), with them: a directory's value shown, any other variable (a
    /// key) only named.
    fn login_fix(&self) -> String {
        let preset = match &self.invocation {
            Invocation::Preset(preset) => *preset,
            Invocation::Acp(AcpCommand::Preset(acp)) => acp.login_preset(),
            _ => return classify::login_fix(&self.name),
        };
        let fix = classify::login_fix(preset.name());
        let own: Vec<String> = self
            .env
            .iter()
            .filter_map(|(key, value)| {
                let (key, value) = (key.to_string_lossy(), value.as_ref()?.to_string_lossy());
                Some(if key.ends_with("_DIR") || key.ends_with("_HOME") {
                    format!("{key}={value}")
                } else {
                    key.into_owned()
                })
            })
            .collect();
        if self.name == preset.name() || own.is_empty() {
            fix
        } else {
            format!(
                "{fix}, with seat `{}`'s variables set ({})",
                self.name,
                own.join(", ")
            )
        }
    }

    fn turn<'a>(
        &'a self,
        request: &'a TurnRequest,
        progress: ProgressFn<'a>,
    ) -> BoxFuture<'a, Result<Reply, SeatError>> {
        Box::pin(self.run_turn(request, progress))
    }

    /// A preset's program must start and, for `claude`, `codex` and `gemini`, be logged in
    /// (`claude auth status`, `codex login status`, Gemini's auth variables or settings); a
    /// shell command is the user's, and is not checked.
    fn ready<'a>(&'a self, dir: &'a Path) -> BoxFuture<'a, Result<(), NotReady>> {
        Box::pin(async move {
            match &self.invocation {
                Invocation::Shell(_) | Invocation::Acp(AcpCommand::Shell(_)) => Ok(()),
                Invocation::Acp(AcpCommand::Preset(preset)) => {
                    acp_seat::check(&self.name, *preset, &self.env)
                }
                Invocation::Preset(preset) => {
                    readiness::check_preset(&self.name, *preset, &self.env, dir).await
                }
            }
        })
    }
}

/// Settles a coder turn's own story branch ([`epic_git_ops::PrivateBranch::settle`]): the real
/// branch moved where the turn's commits left it; anything else the turn wrote among the refs
/// (another story's branch made or moved, a branch deleted or made symbolic) is a trespass,
/// [`SeatError::Refs`], whatever the turn replied.
async fn settle(branch: epic_git_ops::PrivateBranch, program: &str) -> Result<(), SeatError> {
    let settled = process::offload::blocking(move || branch.settle())
        .await
        .map_err(|error| SeatError::Other(error.to_string()))?
        .map_err(|error| SeatError::Other(format!("the turn's story branch: {error}")))?;
    if settled.refused.is_empty() {
        Ok(())
    } else {
        Err(SeatError::Refs {
            program: program.to_owned(),
            refused: settled.refused,
        })
    }
}

/// Writes `prompt` to `prompt.md` in a temp directory of its own, outside the worktree (so the
/// file never shows up as a change of the story): for a preset that takes its prompt as a file.
/// The directory goes when the returned guard drops.
#[expect(
    clippy::disallowed_methods,
    reason = "the prompt file of a file-taking preset is the seat's own temp file, outside the \
              worktree and the state directory"
)]
async fn prompt_file(prompt: &str) -> std::io::Result<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = tempfile::Builder::new().prefix("epic-prompt-").tempdir()?;
    let path = dir.path().join("prompt.md");
    tokio::fs::write(&path, prompt).await?;
    Ok((dir, path))
}

/// Where a preset that logs its model's replies (`PromptVia::File`'s `replies`) logs them:
/// beside the prompt's file, outside the worktree.
fn reply_log(prompt_file: &std::path::Path) -> std::path::PathBuf {
    prompt_file.with_file_name("replies.log")
}

/// The model's last reply in the log beside `prompt_file` ([`reply_log`]), if the CLI wrote one
/// ([`agent_output::aider_reply`]).
#[expect(
    clippy::disallowed_methods,
    reason = "the reply log is the seat's own temp file, beside its prompt file, outside the \
              worktree and the state directory"
)]
async fn logged_reply(prompt_file: &std::path::Path) -> Option<String> {
    let bytes = tokio::fs::read(reply_log(prompt_file)).await.ok()?;
    agent_output::aider_reply(&String::from_utf8_lossy(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_seats_login_fix_names_its_own_variables_but_no_key() {
        use crate::preset::Preset;
        let plain = CommandSeat::preset(Preset::Claude);
        assert_eq!(plain.login_fix(), classify::login_fix("claude"));
        let work = CommandSeat::preset(Preset::Claude)
            .named("claude-work")
            .with_env("CLAUDE_CONFIG_DIR", "/home/ada/.claude-work")
            .with_env("ANTHROPIC_API_KEY", "sk-secret");
        let fix = work.login_fix();
        assert!(
            fix.starts_with(&classify::login_fix("claude"))
                && fix.contains("seat `claude-work`")
                && fix.contains("CLAUDE_CONFIG_DIR=/home/ada/.claude-work")
                && fix.contains("ANTHROPIC_API_KEY")
                && !fix.contains("sk-secret"),
            "{fix}"
        );
    }

    #[test]
    fn delays_double_up_to_the_cap_with_jitter() {
        let policy = RetryPolicy {
            attempts: 5,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        for _ in 0..50 {
            let first = policy.delay(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = policy.delay(2);
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            let capped = policy.delay(10);
            assert!(capped <= Duration::from_millis(300));
        }
    }
}
