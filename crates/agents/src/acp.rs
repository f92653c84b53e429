//! The `acp:` seat's turn: an agent that speaks the Agent Client Protocol, started in the
//! story's worktree in its sandbox and process group as any command seat's, and spoken to over
//! its stdio through `epic-acp` (one `session/prompt` per turn, permission requests answered by
//! the story's perimeter). The presets of the ACP agents epic knows ([`AcpPreset`]) are here,
//! their command lines in one place ([`AcpPreset::program`], [`AcpPreset::args`]).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use epic_acp::{Access, AcpError, Note};
use epic_process::bounded::{BoundedText, Utf8Decoder};
use epic_process::{self as process, Spec};
use epic_report::ReportedUsage;

use crate::preset::Preset;
use crate::readiness::NotReady;
use crate::role::Role;
use crate::seat::{Progress, ProgressFn, Reply, SeatError, TurnRequest};
use crate::stream::{LOOP_REPEATS, ToolCall};
use crate::tail::ERROR_TAIL;

/// How long an agent told to stop (`session/cancel`: a stall, a stop, a deadline, a loop) has
/// to end its prompt before its process group is killed.
pub(crate) const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// How long epic waits for an agent whose conversation failed to exit by itself, for its exit
/// status, before it kills the group.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// An agent epic speaks ACP to by name (`--coder gemini-acp`): the program and arguments that
/// start it in ACP mode, and the preset whose login it shares.
///
/// | preset | command line | the agent |
/// | --- | --- | --- |
/// | `gemini-acp` | `gemini --experimental-acp` | Gemini CLI, which speaks ACP itself |
/// | `claude-acp` | `claude-agent-acp` | Claude Code through Zed's adapter (npm `@zed-industries/claude-agent-acp`) |
/// | `codex-acp` | `codex-acp` | Codex through Zed's adapter (npm `@zed-industries/codex-acp`) |
///
/// Any other agent that speaks ACP on its stdio is `acp:COMMAND` (`--coder 'acp:copilot --acp
/// --stdio'`). Every role runs the same command line: what a role may do is answered at each
/// permission request (`epic-acp`'s policy), not chosen by a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AcpPreset {
    /// Gemini CLI (`gemini --experimental-acp`).
    Gemini,
    /// Claude Code through `claude-agent-acp`.
    Claude,
    /// Codex through `codex-acp`.
    Codex,
}

impl AcpPreset {
    /// Every ACP preset.
    pub const ALL: [Self; 3] = [Self::Gemini, Self::Claude, Self::Codex];

    /// The preset's name, as `--coder NAME` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gemini => "gemini-acp",
            Self::Claude => "claude-acp",
            Self::Codex => "codex-acp",
        }
    }

    /// The program, looked up on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Self::Gemini => "gemini",
            Self::Claude => "claude-agent-acp",
            Self::Codex => "codex-acp",
        }
    }

    /// Its arguments.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Self::Gemini => &["--experimental-acp"],
            Self::Claude | Self::Codex => &[],
        }
    }

    /// What installs it.
    pub fn install(self) -> &'static str {
        match self {
            Self::Gemini => "npm install -g @google/gemini-cli",
            Self::Claude => "npm install -g @zed-industries/claude-agent-acp",
            Self::Codex => "npm install -g @zed-industries/codex-acp",
        }
    }

    /// Whether epic offers to read files for the agent (`fs.readTextFile`): not to Gemini CLI,
    /// whose ACP mode reads a file through the client before writing it and takes the "not
    /// found" of a file it is about to make for a failed write (google-gemini/gemini-cli#9280);
    /// it reads from its own process, in the sandbox, instead. Writes are offered to every
    /// agent.
    pub fn offers_reads(self) -> bool {
        !matches!(self, Self::Gemini)
    }

    /// The session mode a turn of `role` sets (`session/set_mode`) where the agent's own
    /// cannot do the role's work: Codex's adapter starts `read-only`, in which its own sandbox
    /// fails every write, so a coder or a lander sets `auto` (edits and commands in the
    /// worktree; epic's sandbox and the perimeter check after the turn still hold). The other
    /// agents start in a mode that asks epic before each edit, which is what the policy answers.
    pub fn mode(self, role: Role) -> Option<&'static str> {
        match (self, access(role)) {
            (Self::Codex, Access::Edit) => Some("auto"),
            _ => None,
        }
    }

    /// The preset whose service, and so whose login, this agent uses.
    pub fn login_preset(self) -> Preset {
        match self {
            Self::Gemini => Preset::Gemini,
            Self::Claude => Preset::Claude,
            Self::Codex => Preset::Codex,
        }
    }

    /// The command line, as the README's table lists it.
    ///
    /// ```
    /// use epic_agents::AcpPreset;
    ///
    /// assert_eq!(AcpPreset::Gemini.command_line(), "gemini --experimental-acp");
    /// assert_eq!("claude-acp".parse::<AcpPreset>()?.command_line(), "claude-agent-acp");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn command_line(self) -> String {
        std::iter::once(self.program())
            .chain(self.args().iter().copied())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl fmt::Display for AcpPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AcpPreset {
    type Err = crate::UnknownPreset;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|preset| preset.name() == name)
            .ok_or_else(|| crate::UnknownPreset { name: name.into() })
    }
}

/// How an ACP seat starts its agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AcpCommand {
    /// `acp:COMMAND`: `sh -c COMMAND`.
    Shell(String),
    /// A preset's program and arguments.
    Preset(AcpPreset),
}

impl AcpCommand {
    /// The program and arguments.
    pub(crate) fn argv(&self) -> (std::ffi::OsString, Vec<std::ffi::OsString>) {
        match self {
            Self::Shell(command) => ("sh".into(), vec!["-c".into(), command.into()]),
            Self::Preset(preset) => (
                preset.program().into(),
                preset.args().iter().map(Into::into).collect(),
            ),
        }
    }
}

/// The seat check of an ACP preset's seat `seat`: its program is on `PATH` (the seat's own,
/// where `env` sets one). Its login shows at its first turn (`auth_required` stops the run with
/// the preset's fix), since an ACP agent has no status command to ask without starting a
/// session.
pub(crate) fn check(
    seat: &str,
    preset: AcpPreset,
    env: &[(std::ffi::OsString, Option<std::ffi::OsString>)],
) -> Result<(), NotReady> {
    let path = env
        .iter()
        .rev()
        .find(|(key, _)| key == "PATH")
        .map_or_else(|| std::env::var_os("PATH"), |(_, value)| value.clone())
        .unwrap_or_default();
    let found = std::env::split_paths(&path).any(|dir| dir.join(preset.program()).is_file());
    if found {
        Ok(())
    } else {
        Err(NotReady {
            seat: seat.to_owned(),
            problem: format!(
                "`{}` is not installed (not found on PATH)",
                preset.program()
            ),
            said: String::new(),
            fix: preset.install().to_owned(),
        })
    }
}

/// What a turn of `role` may do through its agent's requests.
pub(crate) fn access(role: Role) -> Access {
    match role {
        Role::Coder | Role::Lander => Access::Edit,
        Role::Planner | Role::Judge | Role::Reviewer | Role::Architect | Role::Verifier => {
            Access::ReadOnly
        }
    }
}

/// Why the turn was told to stop.
#[derive(Debug)]
enum Stop {
    TimedOut,
    Stalled,
    Cancelled,
    Looping(ToolCall),
}

/// The agent's standard error, kept (its tail) for a failure's words.
struct Stderr {
    pipe: tokio::process::ChildStderr,
    open: bool,
    text: BoundedText,
    decoder: Utf8Decoder,
    buffer: Vec<u8>,
}

impl Stderr {
    fn new(pipe: tokio::process::ChildStderr) -> Self {
        Self {
            pipe,
            open: true,
            text: BoundedText::new(0, ERROR_TAIL),
            decoder: Utf8Decoder::default(),
            buffer: vec![0_u8; 4 * 1024],
        }
    }

    /// Reads what comes next; `false` once the pipe is closed.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a read that did not complete took nothing.
    async fn read(&mut self) -> bool {
        match self.pipe.read(&mut self.buffer).await {
            Ok(0) | Err(_) => self.open = false,
            Ok(n) => {
                let text = self.decoder.decode(&self.buffer[..n]);
                self.text.push(&text);
            }
        }
        self.open
    }

    /// Reads what is left, giving up after [`EXIT_GRACE`] without output; the tail.
    async fn rest(&mut self) -> String {
        while self.open {
            if tokio::time::timeout(EXIT_GRACE, self.read()).await.is_err() {
                self.open = false;
            }
        }
        let tail = self.decoder.finish();
        self.text.push(&tail);
        self.text.last(ERROR_TAIL)
    }
}

/// How the conversation ended: the client's result, or told to stop and given up on.
enum Outcome {
    Ended(Result<epic_acp::Ended, AcpError>),
    Stopped(Stop),
}

/// Takes one turn with the ACP agent `spec` starts (already in the turn's sandbox), named
/// `name`, its reply kept within `limits` (head and tail bytes): see
/// [`CommandSeat::acp`](crate::CommandSeat::acp).
pub(crate) async fn turn(
    name: &str,
    preset: Option<AcpPreset>,
    spec: &Spec,
    request: &TurnRequest,
    limits: (usize, usize),
    progress: ProgressFn<'_>,
) -> Result<Reply, SeatError> {
    let context = &request.context;
    let started = Instant::now();
    // The silence starts before the agent does (a test that sees it start moves the clock).
    let first_silence = process::Watchdog::silent_at(context.watchdog.as_ref());
    let process::Interactive {
        mut child,
        stdin,
        stdout,
        stderr,
        mut group,
    } = process::spawn_interactive(spec).map_err(|source| SeatError::Spawn {
        program: spec.program.to_string_lossy().into_owned(),
        source,
    })?;
    let mut stderr = Stderr::new(stderr);
    let (notes, mut inbox) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let turn = epic_acp::Turn {
        worktree: context.worktree.clone(),
        story: context.story.clone(),
        access: access(request.role),
        prompt: request.render(),
        offer_reads: preset.is_none_or(AcpPreset::offers_reads),
        mode: preset
            .and_then(|preset| preset.mode(request.role))
            .map(str::to_owned),
    };
    let client = epic_acp::run_turn(stdout, stdin, turn, notes, stop.clone());
    let mut reply = BoundedText::new(limits.0, limits.1);
    let mut calls = Calls::default();
    let outcome = watch(
        client,
        first_silence,
        &mut inbox,
        &mut stderr,
        &stop,
        request,
        &mut |note| calls.take(note, &mut reply, progress),
    )
    .await;
    // Whatever the agent said before the end is the turn's.
    while let Ok(note) = inbox.try_recv() {
        calls.take(note, &mut reply, progress);
    }
    let ended = match outcome {
        Outcome::Stopped(why) => {
            group.kill();
            drop(child.wait().await);
            return Err(stopped(name, why, request, started));
        }
        Outcome::Ended(ended) => ended,
    };
    let failed = |status: String, what: String, errors: String| SeatError::Failed {
        program: name.to_owned(),
        status,
        attempts: 1,
        tail: join_tail(&what, &errors),
        usage: None,
    };
    match ended {
        Ok(ended) if ended.stop_reason == "end_turn" => {
            group.kill();
            Ok(Reply {
                chars: reply.total_chars(),
                text: reply.text(),
                attempts: 1,
                usage: ended.usage.map(|(input, output)| ReportedUsage {
                    input_tokens: input,
                    output_tokens: output,
                    cost_usd: ended.cost_usd,
                }),
            })
        }
        Ok(ended) => {
            group.kill();
            let said = reply.last(ERROR_TAIL);
            Err(failed(
                format!("stop reason `{}`", ended.stop_reason),
                format!(
                    "the agent ended its turn with stop reason `{}` rather than `end_turn`; it \
                     said:\n{said}",
                    ended.stop_reason
                ),
                stderr.rest().await,
            ))
        }
        Err(error) => {
            // The agent may be exiting: its status and last words tell why.
            let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
                Ok(Ok(status)) => process::describe_status(status),
                _ => "a broken conversation".to_owned(),
            };
            group.kill();
            drop(child.wait().await);
            let errors = stderr.rest().await;
            Err(failed(status, error.to_string(), errors))
        }
    }
}

/// Runs the conversation `client` until it ends (silent too long from `first_silence` on, or from
/// its last note or line on stderr), passing each note of `inbox` to `take` (which
/// returns the call a loop repeated) and keeping `stderr`; a stall, the deadline, a cancel or a
/// loop cancels `stop` (`session/cancel`) and gives the agent [`CANCEL_GRACE`] to end.
async fn watch(
    client: impl Future<Output = Result<epic_acp::Ended, AcpError>>,
    first_silence: jiff::Timestamp,
    inbox: &mut mpsc::UnboundedReceiver<Note>,
    stderr: &mut Stderr,
    stop: &CancellationToken,
    request: &TurnRequest,
    take: &mut (dyn FnMut(Note) -> Option<ToolCall> + Send),
) -> Outcome {
    let context = &request.context;
    let watchdog = context.watchdog.as_ref();
    let silent_at = || process::Watchdog::silent_at(watchdog);
    let quiet_clock =
        watchdog.map_or_else(process::Clock::system, |watchdog| watchdog.clock.clone());
    let mut client = std::pin::pin!(client);
    let mut silence = std::pin::pin!(quiet_clock.wait_until(first_silence));
    let mut deadline = std::pin::pin!(tokio::time::sleep_until(context.deadline));
    let mut grace = std::pin::pin!(tokio::time::sleep_until(context.deadline));
    let mut stopping: Option<Stop> = None;
    loop {
        let mut stop_for = None;
        tokio::select! {
            // An agent told to stop that ends its prompt (`cancelled`) ended as it was told.
            ended = &mut client => {
                return match stopping {
                    Some(why) => Outcome::Stopped(why),
                    None => Outcome::Ended(ended),
                };
            }
            Some(note) = inbox.recv() => {
                silence.set(quiet_clock.wait_until(silent_at()));
                stop_for = take(note).map(Stop::Looping);
            }
            _ = stderr.read(), if stderr.open => {
                silence.set(quiet_clock.wait_until(silent_at()));
            }
            () = &mut deadline, if stopping.is_none() => stop_for = Some(Stop::TimedOut),
            () = context.cancel.cancelled(), if stopping.is_none() => {
                stop_for = Some(Stop::Cancelled);
            }
            () = &mut silence, if stopping.is_none() && watchdog.is_some() => {
                stop_for = Some(Stop::Stalled);
            }
            () = &mut grace, if stopping.is_some() => {
                if let Some(why) = stopping {
                    return Outcome::Stopped(why);
                }
            }
        }
        if let Some(why) = stop_for
            && stopping.is_none()
        {
            stopping = Some(why);
            stop.cancel();
            grace.as_mut().reset(Instant::now() + CANCEL_GRACE);
        }
    }
}

/// The error of a turn told to stop for `why`, started at `started`.
fn stopped(name: &str, why: Stop, request: &TurnRequest, started: Instant) -> SeatError {
    let context = &request.context;
    match why {
        Stop::TimedOut => SeatError::TimedOut {
            program: name.to_owned(),
            after: context.deadline.saturating_duration_since(started),
        },
        Stop::Stalled => SeatError::Stalled {
            program: name.to_owned(),
            silent: context
                .watchdog
                .as_ref()
                .map_or(Duration::ZERO, |watchdog| watchdog.silence),
        },
        Stop::Cancelled => SeatError::Cancelled,
        Stop::Looping(call) => SeatError::Looping {
            program: name.to_owned(),
            call: Box::new(call),
            times: LOOP_REPEATS,
        },
    }
}

/// The turn's tool calls so far: the last one and how many times in a row it came.
#[derive(Default)]
struct Calls {
    last: Option<(ToolCall, u32)>,
}

impl Calls {
    /// One note of the turn: a chunk of the reply kept and shown, a tool call shown (and counted:
    /// the call it returns is the one repeated [`LOOP_REPEATS`] times in a row), a rejection told.
    fn take(
        &mut self,
        note: Note,
        reply: &mut BoundedText,
        progress: ProgressFn<'_>,
    ) -> Option<ToolCall> {
        let last_call = &mut self.last;
        match note {
            Note::Chunk(text) => {
                reply.push(&text);
                progress(Progress::Chunk(&text));
            }
            Note::Tool { tool, input, doing } => {
                let call = ToolCall { tool, input, doing };
                progress(Progress::Activity(&call));
                let times = match last_call {
                    Some((last, times)) if last.tool == call.tool && last.input == call.input => {
                        *times + 1
                    }
                    _ => 1,
                };
                *last_call = Some((call.clone(), times));
                if times >= LOOP_REPEATS {
                    return Some(call);
                }
            }
            Note::Rejected { subject, reason } => progress(Progress::PermissionRejected {
                subject: &subject,
                reason: &reason,
            }),
            _ => {}
        }
        None
    }
}

/// The protocol's words, then the agent's standard error.
fn join_tail(what: &str, errors: &str) -> String {
    let errors = errors.trim();
    if errors.is_empty() {
        what.trim().to_owned()
    } else {
        format!("{}\n{errors}", what.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[expect(
        clippy::disallowed_methods,
        reason = "the test writes a stand-in program"
    )]
    fn a_preset_whose_program_is_not_on_the_seats_path_is_not_ready() {
        let empty = tempfile::tempdir().expect("a directory");
        let env = vec![("PATH".into(), Some(empty.path().as_os_str().to_owned()))];
        let not_ready = check("claude-acp", AcpPreset::Claude, &env).expect_err("not on PATH");
        assert!(
            not_ready
                .problem
                .contains("`claude-agent-acp` is not installed")
                && not_ready.fix.contains("@zed-industries/claude-agent-acp"),
            "{not_ready:?}"
        );
        std::fs::write(empty.path().join("claude-agent-acp"), "").expect("a program");
        assert!(check("claude-acp", AcpPreset::Claude, &env).is_ok());
    }

    #[test]
    fn the_presets_are_named_and_read_back() {
        for preset in AcpPreset::ALL {
            assert_eq!(preset.name().parse::<AcpPreset>(), Ok(preset));
        }
        assert_eq!(AcpPreset::Codex.command_line(), "codex-acp");
        assert!("claude".parse::<AcpPreset>().is_err());
    }
}
