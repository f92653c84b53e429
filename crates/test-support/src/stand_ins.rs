//! Stand-ins for the real agent CLIs: executables named `claude`, `codex` and `gemini` that a
//! test puts first on `PATH` (of `epic`, or of the executor's seats) to run the presets,
//! offline and deterministic.
//!
//! # What a stand-in does
//!
//! Each is a POSIX shell script that, like the real CLI (Claude Code 2.1, Codex 0.169, Gemini
//! CLI 0.61, run headless and offline):
//!
//! 1. **checks its arguments** against the real CLI's documented flags and their values, and
//!    rejects anything else with the real usage error: `claude` prints `error: unknown option
//!    '--x'` and exits 1, `codex` prints `error: unexpected argument '--x' found` and exits 2,
//!    `gemini` prints `Unknown arguments: x` and exits 1 (42 for a prompt it cannot read);
//!    `claude auth status` and `codex login status` answer as logged in, `gemini --version`
//!    with its version (and [`StandIns::apply`] sets `GEMINI_API_KEY`, which epic's seat check
//!    looks for);
//! 2. **reads the prompt from standard input** (with `claude -p` and no prompt argument, `codex
//!    exec -`, and `gemini --prompt X`, which appends X), and fails as the CLI does when there
//!    is none;
//! 3. **acts per the behaviour the test chose** ([`Behaviour`]) for this agent, role
//!    (`EPIC_ROLE`) and call: a shell script run first in the turn's working directory (edit a
//!    file, commit, sleep), then the reply text, or an error to report ([`AgentError`]: a usage
//!    limit, not logged in, a 5xx, any message), with an exit status;
//! 4. **answers in the real output format** when asked for it (`claude --output-format json`:
//!    the result object with `usage` and `total_cost_usd`; `claude --output-format stream-json
//!    --verbose` (refused without `--verbose`, as Claude Code refuses it): the `system` `init`
//!    event first, then the reply as an `assistant` message and the same result object; `codex
//!    exec --json`: JSON lines with `item.completed` and `turn.completed` usage; `gemini
//!    --output-format json`: the object with `response` and `stats`, errors as JSON on stderr;
//!    `gemini --output-format stream-json`: `init` first, the reply as assistant `message`
//!    deltas, then a `result` with `stats` (an error as a `result` whose `status` is `error`,
//!    or as JSON on stderr when not signed in, before any event)), in plain text otherwise, or
//!    badly where the behaviour says so (prose instead of JSON, `is_error: true` or
//!    `turn.failed` with exit 0);
//! 5. **works, stalls and loops as a streaming agent does**, where the behaviour says so: tool
//!    calls reported in its stream as it goes ([`Behaviour::loops`]: the same command five
//!    times, each failing, in the agent's own events), and silence ([`Behaviour::stalls`]: it
//!    starts a command that never ends, stops printing and waits until it is killed).
//!
//! # Choosing behaviours
//!
//! A behaviour is looked up per agent, from the most specific: `ROLE.N` (the Nth call of that
//! agent in that role, from 1), then `ROLE`, then `default`; without one the stand-in answers
//! as a cooperative agent would: a planner plans one task, a judge or reviewer clears, a coder
//! replies `done` (and changes nothing: give it a script). So "the first coder turn hits the
//! usage limit, the second works" is:
//!
//! ```
//! use epic_test_support::{AgentError, Behaviour, StandIns};
//!
//! let agents = StandIns::new();
//! agents.set("claude", "coder.1", &Behaviour::fails(AgentError::UsageLimit));
//! agents.set("claude", "coder", &Behaviour::reply("done").runs("echo hi > a.txt"));
//! // With `epic`: `agents.apply(&mut command)` puts them first on its `PATH`. Called directly:
//! let dir = tempfile::tempdir().unwrap();
//! let first = agents.call("claude", &["-p"], "the prompt", dir.path());
//! assert_eq!(first.status.code(), Some(1));
//! let second = agents.call("claude", &["-p"], "the prompt", dir.path());
//! assert_eq!(String::from_utf8_lossy(&second.stdout), "done");
//! assert!(dir.path().join("a.txt").exists());
//! assert_eq!(agents.calls("claude").len(), 2);
//! ```
//!
//! A behaviour's script may also choose the call's answer itself, for replies that depend on
//! the story (`EPIC_STORY`) or on counters of its own: text it writes to the file `$REPLY_TO`
//! is the reply, and text it writes to `$ERROR_TO` an error the agent reports (a 429, exit 1).
//!
//! [`StandIns::calls`] gives each call's role and arguments, and [`StandIns::prompts`] the
//! prompts, for assertions. The stand-ins keep their state (behaviours, counters, logs) in a
//! temporary directory of their own, outside the repository and its worktrees, so a sandboxed
//! run can write it.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// The preset agents the stand-ins play.
pub const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];

/// An error an agent reports, in its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentError {
    /// The provider's usage limit (each agent's own wording).
    UsageLimit,
    /// The CLI is not logged in.
    NotLoggedIn,
    /// The service answered 5xx (overloaded, unavailable).
    ServerError,
    /// Any message.
    Message(String),
}

impl AgentError {
    /// The message `agent` prints for this error.
    pub fn message(&self, agent: &str) -> String {
        match (self, agent) {
            (Self::UsageLimit, "claude") => "Claude AI usage limit reached|1767225600".into(),
            (Self::UsageLimit, "codex") => {
                "You've hit your usage limit. Upgrade to Pro or try again at 3:28 PM.".into()
            }
            (Self::UsageLimit, _) => "You have exhausted your daily quota on this model.".into(),
            (Self::NotLoggedIn, "claude") => "Not logged in · Please run /login".into(),
            (Self::NotLoggedIn, "codex") => {
                "unexpected status 401 Unauthorized: Missing bearer authentication".into()
            }
            (Self::NotLoggedIn, _) => "Please set an Auth method in your settings.json or specify \
                                       one of the following environment variables before \
                                       running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, \
                                       GOOGLE_GENAI_USE_GCA"
                .into(),
            (Self::ServerError, "claude") => "API Error: 529 {\"type\":\"error\",\"error\":\
                                              {\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
                .into(),
            (Self::ServerError, "codex") => {
                "unexpected status 503 Service Unavailable: upstream connect error".into()
            }
            (Self::ServerError, _) => "[API Error: 503 Service Unavailable]".into(),
            (Self::Message(message), _) => message.clone(),
        }
    }

    /// The HTTP status Claude Code's result object carries as `api_error_status` (`null` for
    /// none).
    fn api_status(&self) -> &'static str {
        match self {
            Self::UsageLimit => "429",
            Self::ServerError => "529",
            Self::NotLoggedIn | Self::Message(_) => "null",
        }
    }

    /// The exit status `agent` ends with after this error (Gemini's 41 when not logged in).
    fn exit(&self, agent: &str) -> i32 {
        match (self, agent) {
            (Self::NotLoggedIn, "gemini") => 41,
            _ => 1,
        }
    }
}

/// What a stand-in does on a call: see the module docs.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    script: String,
    reply: Option<String>,
    prose: bool,
    error: Option<AgentError>,
    exit: Option<i32>,
    usage: Option<(u64, u64, f64)>,
    loops: Option<String>,
    stalls: bool,
}

impl Behaviour {
    /// Replies `text` (in the output format asked for).
    pub fn reply(text: impl Into<String>) -> Self {
        Self {
            reply: Some(text.into()),
            ..Self::default()
        }
    }

    /// Reports `error` (in the output format asked for), exiting as the agent does.
    pub fn fails(error: AgentError) -> Self {
        Self {
            error: Some(error),
            ..Self::default()
        }
    }

    /// This behaviour with `script` (`sh`) run first, in the turn's working directory.
    #[must_use]
    pub fn runs(mut self, script: impl Into<String>) -> Self {
        self.script = script.into();
        self
    }

    /// This behaviour answering in prose: the reply as plain text whatever format was asked.
    #[must_use]
    pub fn in_prose(mut self) -> Self {
        self.prose = true;
        self
    }

    /// This behaviour ending with exit status `code` (say 0 after an error).
    #[must_use]
    pub fn exit(mut self, code: i32) -> Self {
        self.exit = Some(code);
        self
    }

    /// This behaviour, after its script, calling `command` five times in a row in its stream
    /// (each call failing), then waiting until it is killed: a looping agent. In a stream
    /// format only.
    #[must_use]
    pub fn loops(mut self, command: impl Into<String>) -> Self {
        self.loops = Some(command.into());
        self
    }

    /// This behaviour starting a command that hangs (`npm test`, reported as a tool call in a
    /// stream; nothing at all in the other formats), then printing nothing and waiting until it
    /// is killed: a stalled agent. A test that sees the call's `turn_activity` event knows epic
    /// has read all the turn printed, so the silence is measured from the clock's time then.
    #[must_use]
    pub fn stalls(mut self) -> Self {
        self.stalls = true;
        self
    }

    /// This behaviour reporting `input` and `output` tokens and, for Claude Code, `cost_usd`
    /// (default: 1000, 200 and $0.05).
    #[must_use]
    pub fn usage(mut self, input: u64, output: u64, cost_usd: f64) -> Self {
        self.usage = Some((input, output, cost_usd));
        self
    }
}

/// One call a stand-in got: its role (`EPIC_ROLE`) and its arguments joined by spaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The agent.
    pub agent: String,
    /// `EPIC_ROLE`.
    pub role: String,
    /// The arguments, joined by spaces.
    pub args: String,
}

/// The stand-in executables, their behaviours and their logs.
#[derive(Debug)]
pub struct StandIns {
    dir: TempDir,
}

impl Default for StandIns {
    fn default() -> Self {
        Self::new()
    }
}

impl StandIns {
    /// Writes `claude`, `codex` and `gemini` into a `bin` directory of their own.
    pub fn new() -> Self {
        let dir = TempDir::new().expect("a directory for the stand-ins");
        let stand_ins = Self { dir };
        for agent in AGENTS {
            for sub in ["behave", "count", "log"] {
                std::fs::create_dir_all(stand_ins.root().join(sub).join(agent))
                    .expect("a stand-in directory");
            }
        }
        std::fs::create_dir_all(stand_ins.bin()).expect("bin");
        for agent in AGENTS {
            let path = stand_ins.bin().join(agent);
            let script = format!(
                "#!/bin/sh\nAGENT={agent}\nSTATE='{}'\n{COMMON}\n{}\n{ANSWER}",
                stand_ins.root().display(),
                match agent {
                    "claude" => CLAUDE_ARGS,
                    "codex" => CODEX_ARGS,
                    _ => GEMINI_ARGS,
                }
            );
            std::fs::write(&path, script).expect("write a stand-in");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .expect("chmod a stand-in");
        }
        stand_ins
    }

    fn root(&self) -> PathBuf {
        self.dir
            .path()
            .canonicalize()
            .expect("the stand-ins' directory")
    }

    /// The directory holding the executables.
    pub fn bin(&self) -> PathBuf {
        self.root().join("bin")
    }

    /// `PATH` with the stand-ins first.
    pub fn path(&self) -> OsString {
        let mut path = OsString::from(self.bin());
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        path
    }

    /// Sets `agent`'s behaviour for `key`: `ROLE.N`, `ROLE` or `default` (see the module docs).
    pub fn set(&self, agent: &str, key: &str, behaviour: &Behaviour) {
        let dir = self.root().join("behave").join(agent).join(key);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).expect("remove the old behaviour");
        }
        std::fs::create_dir_all(&dir).expect("a behaviour directory");
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).expect("write a behaviour");
        };
        write("script", &behaviour.script);
        if let Some(reply) = &behaviour.reply {
            write("reply", reply);
        }
        if behaviour.prose {
            write("prose", "");
        }
        if let Some(error) = &behaviour.error {
            write("error", &error.message(agent));
            write("status", error.api_status());
            write("exit", &error.exit(agent).to_string());
        }
        if let Some(code) = behaviour.exit {
            write("exit", &code.to_string());
        }
        if let Some((input, output, cost)) = behaviour.usage {
            write("usage", &format!("{input} {output} {cost}"));
        }
        if let Some(command) = &behaviour.loops {
            write("loops", command);
        }
        if behaviour.stalls {
            write("stalls", "");
        }
    }

    /// Every call of `agent` so far, in order.
    pub fn calls(&self, agent: &str) -> Vec<Call> {
        let log = std::fs::read_to_string(self.root().join("log").join(agent).join("calls"))
            .unwrap_or_default();
        log.lines()
            .filter_map(|line| line.split_once('\t'))
            .map(|(role, args)| Call {
                agent: agent.to_owned(),
                role: role.to_owned(),
                args: args.to_owned(),
            })
            .collect()
    }

    /// The prompts `agent` read, in the order of its calls.
    pub fn prompts(&self, agent: &str) -> Vec<String> {
        (1..=self.calls(agent).len())
            .map(|n| {
                std::fs::read_to_string(
                    self.root()
                        .join("log")
                        .join(agent)
                        .join(format!("{n}.prompt")),
                )
                .unwrap_or_default()
            })
            .collect()
    }

    /// Sets up `command` (an `epic` run, a seat's process) to find the stand-ins: them first
    /// on `PATH`, and `GEMINI_API_KEY` set (Gemini CLI has no status command: epic's seat check
    /// looks for a way to sign in).
    pub fn apply<'a>(
        &self,
        command: &'a mut std::process::Command,
    ) -> &'a mut std::process::Command {
        command
            .env("PATH", self.path())
            .env("GEMINI_API_KEY", "stand-in")
    }

    /// Runs stand-in `agent` directly with `args` and `stdin`, in `dir`.
    pub fn call(
        &self,
        agent: &str,
        args: &[&str],
        stdin: &str,
        dir: &Path,
    ) -> std::process::Output {
        use std::io::Write as _;

        let mut child = std::process::Command::new(self.bin().join(agent))
            .args(args)
            .current_dir(dir)
            .env("EPIC_ROLE", "coder")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start a stand-in");
        // A stand-in that refuses its arguments exits before it reads the prompt.
        let written = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes());
        drop(written);
        child.wait_with_output().expect("the stand-in ends")
    }
}

/// What every stand-in starts with: helpers, the call's counters and log.
const COMMON: &str = r#"ROLE="${EPIC_ROLE:-coder}"
ARGS_LINE="$*"
usage_error() { printf '%s\n' "$1" >&2; exit "$2"; }
# The value of a flag must be one of the choices that follow.
one_of() { v="$1"; shift; for c in "$@"; do [ "$v" = "$c" ] && return 0; done; return 1; }
# A JSON string of a file's text.
json_file() { awk 'BEGIN { ORS = ""; print "\"" } { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); gsub(/\r/, "\\r"); if (NR > 1) print "\\n"; print } END { print "\"" }' "$1"; }
json_text() { printf '%s' "$1" > "$STATE/log/$AGENT/.tmp"; json_file "$STATE/log/$AGENT/.tmp"; }
"#;

/// Claude Code's arguments: `-p` print mode and the flags a headless seat uses.
const CLAUDE_ARGS: &str = r#"if [ "$1" = auth ] && [ "$2" = status ]; then
  echo '{"loggedIn": true, "authMethod": "claude.ai"}'; exit 0
fi
PRINT=0; FORMAT=text; PROMPT_ARG=""; VERBOSE=0
while [ $# -gt 0 ]; do
  a="$1"; shift
  case "$a" in
    -p|--print) PRINT=1 ;;
    --verbose) VERBOSE=1 ;;
    --dangerously-skip-permissions|--continue|-c) ;;
    --output-format) one_of "$1" text json stream-json || usage_error "error: option '--output-format <format>' argument '$1' is invalid. Allowed choices are text, json, stream-json." 1; FORMAT="$1"; shift ;;
    --permission-mode) one_of "$1" acceptEdits bypassPermissions default dontAsk plan auto || usage_error "error: option '--permission-mode <mode>' argument '$1' is invalid. Allowed choices are acceptEdits, bypassPermissions, default, dontAsk, plan, auto." 1
      [ "$1" = bypassPermissions ] && [ "$(id -u)" = 0 ] && usage_error "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons" 1
      shift ;;
    --allowedTools|--allowed-tools|--disallowedTools|--disallowed-tools|--add-dir)
      [ $# -gt 0 ] || usage_error "error: option '$a <tools...>' argument missing" 1
      while [ $# -gt 0 ] && case "$1" in -*) false ;; *) true ;; esac; do shift; done ;;
    --model|--max-budget-usd|--json-schema|--max-turns|--append-system-prompt|--system-prompt|--settings|--session-id|--fallback-model)
      [ $# -gt 0 ] || usage_error "error: option '$a <value>' argument missing" 1; shift ;;
    -*) usage_error "error: unknown option '$a'" 1 ;;
    *) PROMPT_ARG="$a" ;;
  esac
done
[ "$PRINT" = 1 ] || usage_error "error: the stand-in only plays print mode (-p)" 1
[ "$FORMAT" = stream-json ] && [ "$VERBOSE" = 0 ] && usage_error "Error: When using --print, --output-format=stream-json requires --verbose" 1
PROMPT=$(cat)
[ -n "$PROMPT$PROMPT_ARG" ] || usage_error "Error: Input must be provided either through stdin or as a prompt argument when using --print" 1
"#;

/// Codex's arguments: `exec` and its flags.
const CODEX_ARGS: &str = r#"if [ "$1" = login ] && [ "$2" = status ]; then
  echo "Logged in using ChatGPT" >&2; exit 0
fi
[ "$1" = exec ] || usage_error "error: the stand-in only plays \`codex exec\`" 2
shift
FORMAT=text; STDIN=0; PROMPT_ARG=""
while [ $# -gt 0 ]; do
  a="$1"; shift
  case "$a" in
    --json) FORMAT=json ;;
    --skip-git-repo-check|--ephemeral|--full-auto|--dangerously-bypass-approvals-and-sandbox) ;;
    -s|--sandbox) one_of "$1" read-only workspace-write danger-full-access || usage_error "error: invalid value '$1' for '--sandbox <SANDBOX_MODE>'
  [possible values: read-only, workspace-write, danger-full-access]" 2; shift ;;
    -m|--model|-o|--output-last-message|--output-schema|--add-dir|-C|--cd|-c|--config|-p|--profile)
      [ $# -gt 0 ] || usage_error "error: a value is required for '$a <VALUE>' but none was supplied" 2; shift ;;
    -) STDIN=1 ;;
    -*) usage_error "error: unexpected argument '$a' found

Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]" 2 ;;
    *) PROMPT_ARG="$a" ;;
  esac
done
if [ "$STDIN" = 1 ] || [ -z "$PROMPT_ARG" ]; then PROMPT=$(cat); else PROMPT="$PROMPT_ARG"; fi
[ -n "$PROMPT" ] || usage_error "No prompt provided via stdin." 1
git rev-parse --git-dir >/dev/null 2>&1 || usage_error "Not inside a trusted directory and --skip-git-repo-check was not specified." 1
"#;

/// Gemini CLI's arguments: `--prompt` headless mode and its flags.
const GEMINI_ARGS: &str = r#"case "$1" in -v|--version) echo 0.61.0; exit 0 ;; esac
FORMAT=text; HEADLESS=0
while [ $# -gt 0 ]; do
  a="$1"; shift
  case "$a" in
    -p|--prompt) [ $# -gt 0 ] || usage_error "Not enough arguments following: prompt" 1; HEADLESS=1; PROMPT_ARG="$1"; shift ;;
    -y|--yolo|--skip-trust|-d|--debug|-s|--sandbox) ;;
    --approval-mode) one_of "$1" default auto_edit yolo plan || usage_error "Invalid values:
  Argument: approval-mode, Given: \"$1\", Choices: \"default\", \"auto_edit\", \"yolo\", \"plan\"" 1; shift ;;
    -o|--output-format) one_of "$1" text json stream-json || usage_error "Invalid values:
  Argument: output-format, Given: \"$1\", Choices: \"text\", \"json\", \"stream-json\"" 1; FORMAT="$1"; shift ;;
    -m|--model|--include-directories) [ $# -gt 0 ] || usage_error "Not enough arguments following: ${a#--}" 1; shift ;;
    -*) usage_error "Unknown arguments: ${a#--}" 1 ;;
    *) usage_error "Unknown arguments: $a" 1 ;;
  esac
done
[ "$HEADLESS" = 1 ] || usage_error "the stand-in only plays headless mode (--prompt)" 1
PROMPT="$(cat)
$PROMPT_ARG"
[ -n "$PROMPT" ] || usage_error "No input provided via stdin." 42
"#;

/// Every stand-in ends here: count the call, log it, pick the behaviour, answer.
const ANSWER: &str = r#"
COUNT_FILE="$STATE/count/$AGENT/$ROLE"
N=$(( $(cat "$COUNT_FILE" 2>/dev/null || echo 0) + 1 ))
echo "$N" > "$COUNT_FILE"
CALLS=$(( $(cat "$STATE/log/$AGENT/calls" 2>/dev/null | wc -l) + 1 ))
printf '%s\n' "$PROMPT" > "$STATE/log/$AGENT/$CALLS.prompt"
printf '%s\t%s\n' "$ROLE" "$ARGS_LINE" >> "$STATE/log/$AGENT/calls"
B=""
for key in "$ROLE.$N" "$ROLE" default; do
  if [ -d "$STATE/behave/$AGENT/$key" ]; then B="$STATE/behave/$AGENT/$key"; break; fi
done
REPLY_TO="$STATE/log/$AGENT/$CALLS.scripted-reply"; ERROR_TO="$STATE/log/$AGENT/$CALLS.scripted-error"
export REPLY_TO ERROR_TO
# A stream opens with its init event as the agent starts (Gemini CLI not signed in stops before).
stream_init() {
  case "$AGENT.$FORMAT" in
    claude.stream-json) printf '{"type":"system","subtype":"init","cwd":%s,"session_id":"s","tools":["Task","Bash","Glob","Grep","Read","Edit","Write"],"model":"claude-opus-5-5","permissionMode":"default","apiKeySource":"none"}\n' "$(json_text "$PWD")" ;;
    gemini.stream-json) printf '{"type":"init","timestamp":"2026-12-06T10:00:00.000Z","session_id":"s","model":"gemini-3.1-pro-preview"}\n' ;;
  esac
}
INIT=0
if ! { [ -n "$B" ] && { [ -f "$B/error" ] || [ -f "$B/prose" ]; }; }; then stream_init; INIT=1; fi
if [ -n "$B" ] && [ -s "$B/script" ]; then
  sh "$B/script" || { echo "the behaviour's script failed" >&2; exit 1; }
fi
# The start of a call of `$1` as tool call number `$2`, in the agent's own events: one line,
# written whole (a test that sees its activity knows epic has read all the turn printed so far).
tool_started() {
  case "$AGENT.$FORMAT" in
    claude.stream-json)
      printf '{"type":"assistant","message":{"id":"msg_%s","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_%s","name":"Bash","input":{"command":%s,"description":"Run it"}}]},"session_id":"s"}\n' "$2" "$2" "$(json_text "$1")" ;;
    codex.json)
      printf '{"type":"item.started","item":{"id":"item_%s","type":"command_execution","command":%s,"aggregated_output":"","exit_code":null,"status":"in_progress"}}\n' "$2" "$(json_text "bash -lc '$1'")" ;;
    gemini.stream-json)
      printf '{"type":"tool_use","timestamp":"2026-12-06T10:00:01.000Z","tool_name":"run_shell_command","tool_id":"call_%s","parameters":{"command":%s}}\n' "$2" "$(json_text "$1")" ;;
  esac
}
# A call of `$1` as tool call number `$2`, and its failed result, in the agent's own events.
tool_call() {
  tool_started "$1" "$2"
  case "$AGENT.$FORMAT" in
    claude.stream-json)
      printf '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%s","type":"tool_result","content":"Error: exit code 1","is_error":true}]},"session_id":"s"}\n' "$2" ;;
    codex.json)
      printf '{"type":"item.completed","item":{"id":"item_%s","type":"command_execution","command":%s,"aggregated_output":"error\\n","exit_code":1,"status":"failed"}}\n' "$2" "$(json_text "bash -lc '$1'")" ;;
    gemini.stream-json)
      printf '{"type":"tool_result","timestamp":"2026-12-06T10:00:02.000Z","tool_id":"call_%s","status":"error","output":"exit code 1"}\n' "$2" ;;
  esac
}
if [ -n "$B" ] && [ -f "$B/loops" ]; then
  [ "$AGENT" = codex ] && echo '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}' && echo '{"type":"turn.started"}'
  for i in 1 2 3 4 5; do tool_call "$(cat "$B/loops")" "$CALLS$i"; done
  exec sleep 100000
fi
if [ -n "$B" ] && [ -f "$B/stalls" ]; then
  [ "$AGENT" = codex ] && echo '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}' && echo '{"type":"turn.started"}'
  tool_started "npm test" "${CALLS}1"
  exec sleep 100000
fi
REPLY_FILE="$STATE/log/$AGENT/$CALLS.reply"
if [ -s "$REPLY_TO" ]; then cp "$REPLY_TO" "$REPLY_FILE"
elif [ -n "$B" ] && [ -f "$B/reply" ]; then cp "$B/reply" "$REPLY_FILE"
else
  case "$ROLE" in
    planner) echo '{"tasks":[{"title":"do the story","description":"all of it"}]}' ;;
    judge|reviewer) echo '{"clean":true,"issues":[]}' ;;
    architect) echo '{"epic_id":"e","stories":[]}' ;;
    *) echo done ;;
  esac > "$REPLY_FILE"
fi
IN=1000; OUT=200; COST=0.05
if [ -n "$B" ] && [ -f "$B/usage" ]; then read -r IN OUT COST < "$B/usage"; fi
EXIT=0
[ -n "$B" ] && [ -f "$B/exit" ] && EXIT=$(cat "$B/exit")
ERROR=""; STATUS=null
[ -n "$B" ] && [ -f "$B/error" ] && ERROR=$(cat "$B/error") && STATUS=$(cat "$B/status")
if [ -s "$ERROR_TO" ]; then ERROR=$(cat "$ERROR_TO"); STATUS=429; EXIT=1; fi
if [ -n "$B" ] && [ -f "$B/prose" ]; then cat "$REPLY_FILE"; exit "$EXIT"; fi
if [ "$FORMAT" = text ]; then
  if [ -n "$ERROR" ]; then printf '%s\n' "$ERROR" >&2; else cat "$REPLY_FILE"; fi
  exit "$EXIT"
fi
case "$AGENT.$FORMAT" in
  gemini.stream-json) ;;
  *.stream-json) [ "$INIT" = 1 ] || stream_init ;;
esac
[ "$AGENT.$FORMAT" = claude.stream-json ] && [ -z "$ERROR" ] && printf '{"type":"assistant","message":{"id":"msg_r","type":"message","role":"assistant","content":[{"type":"text","text":%s}]},"session_id":"s"}\n' "$(json_file "$REPLY_FILE")"
case "$AGENT.$FORMAT" in
  gemini.stream-json)
    if [ -n "$ERROR" ] && [ "$EXIT" = 41 ]; then
      printf '{\n  "session_id": "s",\n  "error": {\n    "type": "Error",\n    "message": %s,\n    "code": 41\n  }\n}\n' "$(json_text "$ERROR")" >&2
    elif [ -n "$ERROR" ]; then
      [ "$INIT" = 1 ] || stream_init
      printf '{"type":"result","timestamp":"2026-12-06T10:00:05.000Z","status":"error","error":{"type":"Error","message":%s},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":300,"tool_calls":0}}\n' "$(json_text "$ERROR")"
    else
      printf '{"type":"message","timestamp":"2026-12-06T10:00:04.000Z","role":"assistant","content":%s,"delta":true}\n' "$(json_file "$REPLY_FILE")"
      printf '{"type":"result","timestamp":"2026-12-06T10:00:05.000Z","status":"success","stats":{"total_tokens":%s,"input_tokens":%s,"output_tokens":%s,"cached":0,"input":%s,"duration_ms":1200,"tool_calls":0}}\n' "$(( IN + OUT ))" "$IN" "$OUT" "$IN"
    fi
    exit "$EXIT" ;;
esac
case "$AGENT" in
  claude)
    if [ -n "$ERROR" ]; then
      printf '{"type":"result","subtype":"success","is_error":true,"api_error_status":%s,"duration_ms":120,"num_turns":1,"result":%s,"session_id":"s","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"terminal_reason":"api_error"}\n' "$STATUS" "$(json_text "$ERROR")"
    else
      CACHED=$(( IN / 2 ))
      printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":1200,"num_turns":3,"result":%s,"session_id":"s","total_cost_usd":%s,"usage":{"input_tokens":%s,"cache_creation_input_tokens":0,"cache_read_input_tokens":%s,"output_tokens":%s},"permission_denials":[],"stop_reason":"end_turn"}\n' "$(json_file "$REPLY_FILE")" "$COST" "$(( IN - CACHED ))" "$CACHED" "$OUT"
    fi ;;
  codex)
    echo '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}'
    echo '{"type":"turn.started"}'
    if [ -n "$ERROR" ]; then
      printf '{"type":"turn.failed","error":{"message":%s}}\n' "$(json_text "$ERROR")"
    else
      echo '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Working on it**"}}'
      printf '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":%s}}\n' "$(json_file "$REPLY_FILE")"
      printf '{"type":"turn.completed","usage":{"input_tokens":%s,"cached_input_tokens":%s,"output_tokens":%s}}\n' "$IN" "$(( IN / 2 ))" "$OUT"
    fi ;;
  gemini)
    if [ -n "$ERROR" ]; then
      printf '{\n  "session_id": "s",\n  "error": {\n    "type": "Error",\n    "message": %s,\n    "code": %s\n  }\n}\n' "$(json_text "$ERROR")" "$EXIT" >&2
    else
      printf '{\n  "session_id": "s",\n  "response": %s,\n  "stats": {"models": {"gemini-2.5-pro": {"api": {"totalRequests": 1, "totalErrors": 0}, "tokens": {"input": %s, "prompt": %s, "candidates": %s, "total": %s, "cached": 0, "thoughts": 0, "tool": 0}}}, "tools": {}, "files": {}}\n}\n' "$(json_file "$REPLY_FILE")" "$IN" "$IN" "$OUT" "$(( IN + OUT ))"
    fi ;;
esac
exit "$EXIT"
"#;
