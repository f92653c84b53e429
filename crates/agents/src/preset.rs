//! The preset agent CLIs: each one's documented non-interactive mode, per role: a coder's with
//! edits and commands approved, every other role's read-only, each with its structured output.

use std::fmt;
use std::str::FromStr;

use crate::role::Role;
use crate::shell::shell_quote;

/// What Gemini CLI's `--prompt` adds after the prompt on standard input (it needs one to run
/// headless).
const GEMINI_PROMPT: &str = "Carry out the request above.";

/// A known agent CLI, run by [`CommandSeat::preset`](crate::CommandSeat::preset).
///
/// Each role gets its own command line ([`args`](Self::args)): the coder may edit the worktree and run the project's own commands (its tests, its build)
/// unattended; the planner, the judge, reviewers and `epic plan`'s architect start in the CLI's
/// read-only mode where it has one. The sandbox of a run (`--sandbox`) is the fence around
/// both. Claude Code, Codex and Gemini CLI are asked for their structured output as a stream of
/// JSON lines, which epic reads as it arrives (what the agent is doing, a tool call it repeats)
/// and at the end (the reply, errors, and the tokens and cost they report).
///
/// | preset | role | command line | why these flags |
/// | --- | --- | --- | --- |
/// | `claude` | coder | `claude -p --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash < prompt` | `-p` (print) is Claude Code's headless mode, taking the prompt from standard input; `acceptEdits` approves file edits, and `--allowedTools Bash` lets it run commands (tests, builds), which `acceptEdits` alone refuses in `-p` mode; `bypassPermissions` would do both but Claude Code refuses it as root (`--dangerously-skip-permissions cannot be used with root/sudo privileges`), which is how containers run; `--output-format stream-json` prints its events as JSON lines as they happen (each tool call, then a result object with `result`, `is_error`, `usage` and `total_cost_usd`), and needs `--verbose` with `-p` |
/// | `claude` | planner, judge, reviewer, architect | `claude -p --output-format stream-json --verbose --permission-mode plan < prompt` | `plan` is Claude Code's read-only mode: it reads and answers, edits nothing and runs nothing that changes anything |
/// | `codex` | coder | `codex exec --json --sandbox workspace-write - < prompt` | `exec` is Codex's non-interactive mode and never asks for approvals; `-` reads the prompt from standard input; the `workspace-write` sandbox lets it edit the worktree and run commands in it; `--json` prints its events as JSON lines (the reply, `turn.completed` usage, errors) |
/// | `codex` | planner, judge, reviewer, architect | `codex exec --json --sandbox read-only - < prompt` | the `read-only` sandbox: it reads and runs read-only commands, writes nothing |
/// | `gemini` | coder | `gemini --skip-trust --approval-mode yolo --output-format stream-json --prompt 'Carry out the request above.' < prompt` | `--prompt` is Gemini CLI's headless mode and is appended to standard input, which carries the prompt; `yolo` approves every action (edits and commands); `--skip-trust` trusts the worktree for the session, since in an untrusted folder Gemini silently drops to the `default` approval mode and makes no tool call that needs approval; `--output-format stream-json` prints its events as JSON lines as they happen (messages, each `tool_use`, then a `result` with `status` and `stats`) |
/// | `gemini` | planner, judge, reviewer, architect | `gemini --skip-trust --approval-mode plan --output-format stream-json --prompt 'Carry out the request above.' < prompt` | `plan` is Gemini CLI's read-only approval mode |
/// | `aider` | coder | `aider --yes-always --no-auto-commits --no-gitignore --no-detect-urls --no-check-update --no-pretty --chat-history-file /dev/null --input-history-file /dev/null --message-file PROMPT_FILE --llm-history-file REPLY_LOG` | `--message-file` sends one message and exits; the file lives outside the worktree; `--yes-always` confirms everything; epic owns git, so no auto-commits and no `.gitignore` edit; no URL detection, since aider otherwise fetches every URL a prompt quotes (a story's link, the plan schema's `$schema`) into the chat, no update check at each turn's start; `--no-pretty` prints plainly (its rich rendering, its default without `NO_COLOR`, drops a fenced block's fences and pads every line); history files off so aider leaves no files in the worktree; the reply is read from the log of the model's replies (`--llm-history-file`, beside the prompt's file, outside the worktree), since aider prints its banner, the files it added and its token line around the reply on standard output |
/// | `aider` | planner, judge, reviewer, architect | the same with `--chat-mode ask` first | `ask` mode answers and never edits |
/// | `opencode` | coder | `opencode run < prompt` | `run` is opencode's non-interactive mode; it reads a piped standard input as the message and approves edits by default |
/// | `opencode` | planner, judge, reviewer, architect | `opencode run --agent plan < prompt` | opencode's `plan` agent denies edits |
///
/// The prompt goes on standard input wherever the CLI takes it there: an argument is limited in
/// size by the OS (128 KiB on Linux), a chat's rendered history is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Claude Code (`claude`).
    Claude,
    /// The Codex CLI (`codex`).
    Codex,
    /// The Gemini CLI (`gemini`).
    Gemini,
    /// Aider.
    Aider,
    /// opencode.
    Opencode,
}

/// How a preset takes its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptVia {
    /// On standard input.
    Stdin,
    /// In a file whose path follows `flag`.
    File {
        /// The flag before the file's path.
        flag: &'static str,
        /// The flag before a file the CLI logs its model's replies to, which the turn's reply
        /// is read from: the model's own words, with none of what the CLI prints around them.
        replies: Option<&'static str>,
    },
}

impl Preset {
    /// Every preset, in the order docs/seats.md lists them.
    pub const ALL: [Self; 5] = [
        Self::Claude,
        Self::Codex,
        Self::Gemini,
        Self::Aider,
        Self::Opencode,
    ];

    /// The preset's name, as `--coder NAME` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Aider => "aider",
            Self::Opencode => "opencode",
        }
    }

    /// The program, looked up on `PATH`.
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The arguments of a `role`'s turn before the prompt (a file-taking preset's flag and path
    /// come after them): the coder's may edit and run commands, every other role's start in the
    /// CLI's read-only mode (see the table on [`Preset`]).
    pub fn args(self, role: Role) -> &'static [&'static str] {
        let works = matches!(role, Role::Coder | Role::Lander);
        match (self, works) {
            (Self::Claude, true) => &[
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash",
            ],
            (Self::Claude, false) => &[
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "plan",
            ],
            (Self::Codex, true) => &["exec", "--json", "--sandbox", "workspace-write", "-"],
            (Self::Codex, false) => &["exec", "--json", "--sandbox", "read-only", "-"],
            (Self::Gemini, true) => &[
                "--skip-trust",
                "--approval-mode",
                "yolo",
                "--output-format",
                "stream-json",
                "--prompt",
                GEMINI_PROMPT,
            ],
            (Self::Gemini, false) => &[
                "--skip-trust",
                "--approval-mode",
                "plan",
                "--output-format",
                "stream-json",
                "--prompt",
                GEMINI_PROMPT,
            ],
            (Self::Aider, true) => &[
                "--yes-always",
                "--no-auto-commits",
                "--no-gitignore",
                "--no-detect-urls",
                "--no-check-update",
                "--no-pretty",
                "--chat-history-file",
                "/dev/null",
                "--input-history-file",
                "/dev/null",
            ],
            (Self::Aider, false) => &[
                "--chat-mode",
                "ask",
                "--yes-always",
                "--no-auto-commits",
                "--no-gitignore",
                "--no-detect-urls",
                "--no-check-update",
                "--no-pretty",
                "--chat-history-file",
                "/dev/null",
                "--input-history-file",
                "/dev/null",
            ],
            (Self::Opencode, true) => &["run"],
            (Self::Opencode, false) => &["run", "--agent", "plan"],
        }
    }

    /// How it takes the prompt.
    pub fn prompt_via(self) -> PromptVia {
        match self {
            Self::Aider => PromptVia::File {
                flag: "--message-file",
                replies: Some("--llm-history-file"),
            },
            _ => PromptVia::Stdin,
        }
    }

    /// The exact command line of a coder's turn, as docs/seats.md lists it: `< prompt` for
    /// standard input, `PROMPT_FILE` for the prompt's file, `REPLY_LOG` for the file the reply
    /// is read from.
    ///
    /// ```
    /// use epic_agents::Preset;
    ///
    /// assert_eq!(
    ///     Preset::Claude.command_line(),
    ///     "claude -p --output-format stream-json --verbose --permission-mode acceptEdits \
    ///      --allowedTools Bash < prompt"
    /// );
    /// assert_eq!(Preset::Opencode.command_line(), "opencode run < prompt");
    /// assert!(
    ///     Preset::Aider
    ///         .command_line()
    ///         .ends_with("--message-file PROMPT_FILE --llm-history-file REPLY_LOG")
    /// );
    /// ```
    pub fn command_line(self) -> String {
        self.role_command_line(Role::Coder)
    }

    /// The exact command line of a `role`'s turn, as docs/seats.md lists it.
    ///
    /// ```
    /// use epic_agents::{Preset, Role};
    ///
    /// assert_eq!(
    ///     Preset::Codex.role_command_line(Role::Judge),
    ///     "codex exec --json --sandbox read-only - < prompt"
    /// );
    /// ```
    pub fn role_command_line(self, role: Role) -> String {
        let mut words = vec![self.program().to_owned()];
        words.extend(self.args(role).iter().map(|arg| shell_quote(arg)));
        match self.prompt_via() {
            PromptVia::Stdin => words.push("< prompt".to_owned()),
            PromptVia::File { flag, replies } => {
                words.push(flag.to_owned());
                words.push("PROMPT_FILE".to_owned());
                if let Some(replies) = replies {
                    words.push(replies.to_owned());
                    words.push("REPLY_LOG".to_owned());
                }
            }
        }
        words.join(" ")
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Preset`] from a name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{name}` is not a preset (claude, codex, gemini, aider, opencode)")]
pub struct UnknownPreset {
    /// The name given.
    pub name: String,
}

impl FromStr for Preset {
    type Err = UnknownPreset;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|preset| preset.name() == name)
            .ok_or_else(|| UnknownPreset { name: name.into() })
    }
}
